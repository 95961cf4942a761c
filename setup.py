#!/usr/bin/env python3
# This file is part of hostlink.
# Copyright (c) 2026 hostlink developers
# SPDX-License-Identifier: BSD-2-Clause

# The repository keeps the brief's top-level layout (cores/, targets/, sim/, software/, examples/), while the
# installed import names stay namespaced: hostlink.cores, hostlink.targets, hostlink.sim, ... through the
# committed links hostlink/cores -> ../cores and alike, which editors and static analysers follow as they do
# any folder. targets/hostlink -> ../hostlink lets ./targets/<board>.py import hostlink from a Python without
# the project installed (hostlink/__init__.py then re-runs it with the project's .venv); it is not a package
# of its own.

from setuptools import setup, find_packages

packages = find_packages(include=["hostlink", "hostlink.*"],
                         exclude=["hostlink.targets.hostlink", "hostlink.targets.hostlink.*"])

setup(
    name             = "hostlink",
    version          = "0.1.0",
    description      = "Host <-> FPGA data movers: LitePCIe DMA SoCs and a minimal UDP/IPv4 core, with simulation",
    license          = "BSD-2-Clause",
    python_requires  = ">=3.9",
    packages         = packages,
    include_package_data = True,
    # The C tools and the library sit in folders of hostlink.software that are not packages, the programs run
    # inside the simulated machines and the User-Mode Linux kernel's patches in folders of hostlink.sim, and the
    # driver's change sets' C beside their modules: named here, so that a regular install has them too.
    package_data     = {"": ["*.v", "*.sv", "*.c", "*.cpp", "*.h", "Makefile"],
                        "hostlink.software": ["lib/*", "bench/*", "status/*", "dram/*",
                                              "dram/include/**/*", "udp/*", "zynq/*"],
                        "hostlink.sim.uml": ["guest/*", "linux/*"],
                        "hostlink.sim.zynq": ["guest/*"],
                        "hostlink.software.driver": ["*.patch"]},
)
