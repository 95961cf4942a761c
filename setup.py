#!/usr/bin/env python3
# This file is part of hostlink.
# Copyright (c) 2026 hostlink developers
# SPDX-License-Identifier: BSD-2-Clause

# The repository keeps the brief's top-level layout (cores/, targets/, sim/, software/, examples/), while the
# installed import names stay namespaced: hostlink.cores, hostlink.targets, hostlink.sim, ...

from setuptools import setup, find_packages

TOP_LEVEL = ["cores", "targets", "sim", "software", "examples"]

packages    = ["hostlink"]
package_dir = {"hostlink": "hostlink"}
for top in TOP_LEVEL:
    for sub in [top] + [f"{top}.{p}" for p in find_packages(where=top)]:
        packages.append(f"hostlink.{sub}")
    package_dir[f"hostlink.{top}"] = top

setup(
    name             = "hostlink",
    version          = "0.1.0",
    description      = "Host <-> FPGA data movers: LitePCIe DMA SoCs and a minimal UDP/IPv4 core, with simulation",
    license          = "BSD-2-Clause",
    python_requires  = ">=3.9",
    packages         = packages,
    package_dir      = package_dir,
    include_package_data = True,
    package_data     = {"": ["*.v", "*.sv", "*.c", "*.h", "Makefile"]},
)
