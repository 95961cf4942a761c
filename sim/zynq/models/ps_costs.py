# This file is part of hostlink.
# Copyright (c) 2026 hostlink developers
# SPDX-License-Identifier: BSD-2-Clause

"""What the ARM's software costs in simulated time, for Linux on the simulated Zynq (sim/zynq/uml_bench.py).

User-Mode Linux runs on the host's x86 at the host's speed, and the bench holds simulated time while it computes,
so without this table software costs nothing. With it, each thing the software does is charged: the bridge
charges what it sees (each GP0 register read and write, each interrupt), the drivers report the rest through the
simulation-only "hostlink,sim-cost" device (hostlink.protocol.SIM_COST_*, software/zynq/hostlink_sim_cost.h):
system calls, bytes copied, cache lines cleaned or invalidated, scheduler yields. Simulated time then advances by
the charges before the CPU's next access to a device is answered; the DMA runs on meanwhile, as on the board.

Each figure: ns per unit, the unit, where it comes from, and how it was converted. Seed 003's board ran its
Cortex-A9 at 666 MHz; the ZC706's XC7Z045-2 allows up to 800 MHz (DS190's -2 grade; the CPU clock of the
board's PS7 preset is not checked here). The figures are kept in ns as published, not rescaled to a clock: the
sources give their clocks too loosely for a rescaling to mean anything (they are Zynq-7000 boards, 667 MHz or
unstated). "assumed" means no public measurement was found in the library consulted; "fitted" means taken from
one of the paper's own points (one only, copy_to_coherent); everything else the bench predicts.
"""

from hostlink.protocol import SIM_COST_CATEGORIES

PS_COSTS = {
    "gp0_read": (470.0, "access",
        "cited: a Zynq-7000 under Linux, readl/writel loop of a write, a write and a read of a PS GPIO register: "
        "1,400 ns a period (cnblogs.com/embedded-linux/p/6659828.html, 'Linux外设寄存器'; its prose: 0.7 us an "
        "access on average)",
        "1,400 ns / 3 accesses; read and write alike (the loop does not tell them apart); the simulated AXI-Lite "
        "access runs within these 470 ns"),
    "gp0_write": (470.0, "access", "cited: the same loop", "as gp0_read"),
    "interrupt": (5000.0, "interrupt",
        "assumed: GIC entry, the handler's own work beside its register accesses (charged as gp0_*), xilinx_dma's "
        "tasklet and callback, and the wake-up of the task waiting for the completion (a context switch)",
        "none"),
    "syscall": (1000.0, "call",
        "assumed: a system call's entry and exit on a Cortex-A9 under Linux (lmbench's null call's order of "
        "magnitude on cores of this class; no public Zynq figure found)",
        "none"),
    "copy_cached": (6.25, "byte",
        "cited: on a Zynq-7000 under Linux, read/write through the kernel 'highly limited by the memcpy "
        "operation. The maximal speeds are about 160 MB/s' (rsoc-framework.com/fast-dma-transfers-xilinx-zynq/)",
        "1 / 160 MB/s = 6.25 ns a byte; copy_from_user and copy_to_user between cached buffers"),
    "copy_to_coherent": (4.55, "byte",
        "fitted: the paper's Table I, user-level polling TX 0.0054 us/byte at ~100 KB (single buffer, Unique): "
        "553 us for 102,400 bytes, less the DMA's 85 us and the driver's register accesses (~3 us)",
        "(553 - 85 - 3) us / 102,400 bytes = 4.55 ns a byte (220 MB/s): memcpy into the coherent buffer "
        "(write-combined, not cached, on a Zynq)"),
    "copy_from_coherent": (10.0, "byte",
        "assumed: memcpy out of the coherent buffer, which a non-coherent Zynq maps uncached: each load a round "
        "trip to the DDR ('the access speed is terrible', LKML 2016-01-19, T. N. Miller, Zynq 7000, no figure)",
        "100 MB/s, half the write-combined copy's rate"),
    "cache_clean": (30.0, "line",
        "assumed: one 32-byte line cleaned by address in L1 and in the PL310 (dma_map_single for MM2S)",
        "none; 0.94 ns a byte"),
    "cache_invalidate": (30.0, "line",
        "assumed: one 32-byte line invalidated by address in L1 and in the PL310 (dma_map_single and "
        "dma_unmap_single for S2MM, both on ARMv7)",
        "none; 0.94 ns a byte"),
    "sched_yield": (2000.0, "yield",
        "assumed: sched_yield's system call and a pass through the scheduler with nothing else to run",
        "none"),
}
assert tuple(PS_COSTS) == SIM_COST_CATEGORIES, "one cost per hostlink.protocol.SIM_COST_CATEGORIES, in order"


def cost_table():
    """The table as rows (category, ns per unit, unit, source, conversion), in the categories' order."""
    return [(name, *PS_COSTS[name]) for name in SIM_COST_CATEGORIES]


def costs_ns(scale=1.0):
    """ns per unit by category (all scaled by `scale`: 0 turns the model off)."""
    if not scale >= 0:
        raise ValueError(f"the cost scale must be a number >= 0, not {scale!r}")
    return {name: PS_COSTS[name][0] * scale for name in SIM_COST_CATEGORIES}
