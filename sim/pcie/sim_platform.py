# This file is part of hostlink.
# Copyright (c) 2026 hostlink developers
# SPDX-License-Identifier: BSD-2-Clause

"""A board's platform as the simulation builds it: the same IOs and toolchain hooks, generating plain,
vendor-neutral Verilog (LiteX's simulator lowerings instead of Xilinx primitives) that Verilator runs as the
design means it. For every simulated SoC (soc.py) and its Gen3 variant (v7gen3.py)."""

import os

from litex.build.generic_platform import GenericPlatform
from litex.build.sim.common import sim_special_overrides

__all__ = ["SimVerilog", "make_sim_platform", "comb_blocks_run_at_time_zero"]


def comb_blocks_run_at_time_zero(path):
    # Migen writes a combinational signal with a constant value as `always @(*) begin x <= 1; end`.
    # Such a block reads nothing, so by IEEE 1364 it never runs: x keeps its declared initial value
    # (Verilator does exactly that; a real synthesizer folds the constant). SystemVerilog's always_comb
    # runs once at time zero and then like always @(*), which is what the design means.
    with open(path) as f:
        text = f.read()
    with open(path, "w") as f:
        f.write(text.replace("always @(*) begin", "always_comb begin"))


class SimVerilog:
    """Put before a board's platform class (make_sim_platform()): its Verilog uses LiteX's simulator lowerings
    instead of Xilinx primitives (AsyncResetSynchronizer & co.), and build() only writes it, with
    combinational blocks that run at time zero."""
    def get_verilog(self, *args, special_overrides=dict(), **kwargs):
        so = dict(sim_special_overrides)
        so.update(special_overrides)
        return GenericPlatform.get_verilog(self, *args, special_overrides=so, **kwargs)

    def build(self, fragment, build_dir, build_name, run=False, **kwargs):
        os.makedirs(build_dir, exist_ok=True)
        cwd = os.getcwd()
        os.chdir(build_dir)   # LiteX writes memory initialisation files to the current directory.
        try:
            verilog = self.get_verilog(fragment, name=build_name)
            verilog.write(build_name + ".v")
            comb_blocks_run_at_time_zero(build_name + ".v")
        finally:
            os.chdir(cwd)
        return verilog


def make_sim_platform(board_platform_cls, *more):
    """The board's platform class (same IOs, same toolchain hooks) generating plain, vendor-neutral Verilog:
    `SimVerilog` before it, and the classes `more` before that (each build() may extend the one after it
    with super())."""
    return type(f"Sim{board_platform_cls.__name__}", (*more, SimVerilog, board_platform_cls), {})
