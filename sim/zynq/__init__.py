# This file is part of hostlink.
# Copyright (c) 2026 hostlink developers
# SPDX-License-Identifier: BSD-2-Clause

"""./sim.py zynq: the Zynq SoC's AXI DMA with the PS replaced by models (doc/zynq.md).

The package, by job: `top` (the logic with the PS's ports brought out, and its Verilator build), `memory` (the
PS's DDR behind HP0), `ps_model` (its default figures, for every run), `bench` (the cocotb bench: GP0's
register writes, the transfers, the checks), `cli` (`./sim.py zynq`'s arguments, run and table).
"""

from hostlink.sim.zynq.cli import main, parse_args, run, run_limit, LOG_ROOTS
