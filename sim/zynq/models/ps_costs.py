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

Each figure: ns per unit, the unit, where it comes from, and how it was converted. The ZC706 runs its Cortex-A9
at 666.67 MHz (its PS7 initialisation as Xilinx generates it, in U-Boot's board/xilinx/zynq/zynq-zc706/
ps7_init_gpl.c: ARM PLL 40 x the 33.33 MHz PS_CLK, divided by 2), as seed 003's board did (666 MHz). A figure
measured on a Zynq-7000 under Linux is kept in ns as published (those boards run their CPU at 667 MHz or do not
say); one measured on another Cortex-A9 at a stated clock is rescaled to 666.67 MHz when the work is the core's
own (a system call). "assumed" means no public measurement was found in the library consulted (the figure is
ours, and doc/zynq.md's sensitivity table shows which conclusions turn on it); "fitted" means taken from one of
the paper's own points (one only, copy_to_coherent); everything else the bench predicts.
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
        "tasklet and callback, and the wake-up of the task waiting for the completion (a context switch); for "
        "scale, the same TI guide's lat_sem (a semaphore handed between two processes) is 6.1 us at 1,000 MHz",
        "none"),
    "syscall": (570.0, "call",
        "cited: lmbench's lat_syscall null (getppid), 0.38 us on TI's AM437x GP EVM, a Cortex-A9 at 1,000 MHz, "
        "under Linux (TI Processor SDK Linux 09.03 performance guide: github.com/TexasInstruments/processor-sdk-doc, "
        "source/devices/AM437X/linux/Release_Specific_Performance_Guide.rst, commit 3948bf1; 0.40 us in 11.02)",
        "0.38 us x 1,000 / 666.67 MHz = 0.57 us: the entry and exit are the core's own work"),
    "copy_cached": (6.25, "byte",
        "cited: on a Zynq-7000 under Linux, read/write through the kernel 'highly limited by the memcpy "
        "operation. The maximal speeds are about 160 MB/s' (rsoc-framework.com/fast-dma-transfers-xilinx-zynq/)",
        "1 / 160 MB/s = 6.25 ns a byte; copy_from_user and copy_to_user between cached buffers"),
    "copy_to_coherent": (4.55, "byte",
        "fitted: the paper's Table I, user-level polling TX 0.0054 us/byte at ~100 KB (single buffer, Unique): "
        "553 us for 102,400 bytes, less the DMA's 85 us and the driver's register accesses (~3 us)",
        "(553 - 85 - 3) us / 102,400 bytes = 4.55 ns a byte (220 MB/s): memcpy into the coherent buffer "
        "(write-combined, not cached, on a Zynq)"),
    "copy_from_coherent": (15.6, "byte",
        "cited: memcpy out of a Zynq DMA driver's buffer, mapped uncached ('cache transparent'), into ordinary "
        "memory: ~64 MB/s on a ZedBoard (Zynq-7020) under Linux, against ~256 MB/s between two ordinary buffers "
        "(github.com/bmartini/zynq-xdma/issues/10, 2016-06-23); the same order on a ZYBO-Z7 (Zynq-7010) under Linux: "
        "16 MiB copied 32 times out of an uncached u-dma-buf in 7.63 s, 70 MB/s (github.com/ikwzm/udmabuf/issues/120)",
        "1 / 64 MB/s = 15.6 ns a byte"),
    "cache_clean": (30.0, "line",
        "assumed: one 32-byte line cleaned by address in L1 and in the PL310 (dma_map_single for MM2S)",
        "none; 0.94 ns a byte"),
    "cache_invalidate": (30.0, "line",
        "assumed: one 32-byte line invalidated by address in L1 and in the PL310 (dma_map_single and "
        "dma_unmap_single for S2MM, both on ARMv7)",
        "none; 0.94 ns a byte"),
    "sched_yield": (2000.0, "yield",
        "assumed: sched_yield's system call (0.57 us, above) and a pass through the scheduler with nothing else "
        "to run",
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
