#!/usr/bin/env python3
# This file is part of hostlink.
# Copyright (c) 2026 hostlink developers
# SPDX-License-Identifier: BSD-2-Clause

"""Xilinx VC709 (XC7VX690T): PCIe Gen3 x8 scatter-gather DMA SoC on the pcie3_7x block, no CPU.

    ./targets/vc709.py --build --load     gateware (needs Vivado)
    ./targets/vc709.py --driver           kernel driver and user tools for this SoC in <output-dir>/driver
"""

import sys

# Started as ./targets/<board>.py from a shell without the project's virtualenv: `hostlink` is found through
# the link targets/hostlink -> ../hostlink, and importing it re-runs this script with the virtualenv
# (hostlink/__init__.py).
import hostlink

from migen import *

from litex.gen import *

from litex.build.io import DifferentialInput
from migen.genlib.resetsync import AsyncResetSynchronizer

from hostlink.targets import vc709_platform
from hostlink.cores.dram.clocking import S7DRAMClocking
from hostlink.cores.dram.integration import board_dram_clk_freq
from hostlink.cores.pcie.integration import PCIeDMASoC
from hostlink.targets.boards import BOARDS
from hostlink.targets.common import pcie_target_main
from hostlink.cores.pcie.v7gen3phy import V7Gen3PCIEPHY

# The SoC runs on the block's 250 MHz user clock: one 256-bit beat per cycle, and no clock-domain
# crossing between the block's four streams and the DMA.
SYS_CLK_FREQ = 250e6

# How long the system domain stays in reset after the SoC's soft reset (`ctrl_reset`, which LitePCIe's
# driver writes at probe, so at every module load): ~1 us of the block's clock. `ctrl_reset` itself is a
# one-cycle pulse, and the system clock here is the block's, so no PLL relocks to stretch it (as on the
# ZC706 and KC705): a user core's clock (an MMCM reset with the system domain, which wants a 5 ns pulse at
# least) and its crossings (whose pointer synchronizers see the other side's reset by sampling it) would
# miss a reset that short, and the crossings hand on entries of before it (cores/pcie/user_port.py).
SOFT_RESET_CYCLES = 256

# The SODIMM in J1 (DDR3-1866, 64 bits) at 1:4: the DRAM controller runs at 233.25 MHz.
DRAM_CLK_FREQ = board_dram_clk_freq(vc709_platform)

# CRG ----------------------------------------------------------------------------------------------

def soft_reset_held(crg, rst, cycles=SOFT_RESET_CYCLES):
    """`rst` (the soft reset's pulse) held for `cycles` of the block's clock, counted in a domain of the
    block's clock that no reset reaches (`crg.cd_soft_reset`)."""
    crg.cd_soft_reset = ClockDomain(reset_less=True)
    crg.comb += crg.cd_soft_reset.clk.eq(ClockSignal("pcie"))
    left = Signal(max=cycles + 1, reset_less=True)
    crg.sync.soft_reset += If(rst, left.eq(cycles)).Elif(left != 0, left.eq(left - 1))
    return rst | (left != 0)


class _CRG(LiteXModule):
    """The system clock is pcie3_7x's user clock (the PHY's `pcie` domain, 250 MHz from the PIPE clocking's
    MMCM), held in reset while the block's user_reset is. Each of the four streams between the block and
    the DMA then needs no asynchronous FIFO: about 4 cycles less latency each, and their LUTs and FFs.
    The board's 200 MHz oscillator (SYSCLK) only clocks the DRAM side, when there is one.
    """
    def __init__(self, platform, sys_clk_freq, dram_clk_freq=None):
        if sys_clk_freq != SYS_CLK_FREQ:
            raise ValueError(f"the VC709 SoC runs on pcie3_7x's {SYS_CLK_FREQ/1e6:g} MHz user clock: "
                             f"the system clock cannot be {sys_clk_freq/1e6:g} MHz")
        self.rst    = Signal()
        self.cd_sys = ClockDomain()

        # # #

        self.comb += self.cd_sys.clk.eq(ClockSignal("pcie"))
        self.specials += AsyncResetSynchronizer(self.cd_sys, ResetSignal("pcie") | soft_reset_held(self, self.rst))
        if dram_clk_freq is not None:
            clk200 = platform.request("clk200")
            clk200_se = Signal()
            self.specials += DifferentialInput(clk200.p, clk200.n, clk200_se)
            self.dram = S7DRAMClocking(clk200_se, 200e6, dram_clk_freq, speedgrade=-2)
            self.comb += self.dram.rst.eq(self.rst)
            platform.add_false_path_constraints(self.cd_sys.clk, self.dram.cd_dram.clk)

# BaseSoC ------------------------------------------------------------------------------------------

# RC straddling (AXISTEN_IF_RC_STRADDLE): two completions may share a 256-bit beat, so that completions drain
# from the block at least as fast as the link delivers them (cores/pcie/rc_straddle.py).
RC_STRADDLE = True

class BaseSoC(PCIeDMASoC):
    PLATFORM     = vc709_platform
    SYS_CLK_FREQ = SYS_CLK_FREQ
    LANES        = [1, 2, 4, 8]
    DATA_WIDTHS  = [256]   # One 256-bit beat per 250 MHz cycle keeps up with Gen3 x8 (7.88 GB/s raw).

    def __init__(self, crg_cls=_CRG, pcie_phy_cls=V7Gen3PCIEPHY, lanes=BOARDS["vc709"].pcie.lanes,
        data_width=BOARDS["vc709"].pcie.data_width, rc_straddle=RC_STRADDLE, **kwargs):
        PCIeDMASoC.__init__(self, crg_cls, pcie_phy_cls, lanes, data_width,
            # 2 us of read latency at 7.3 GB/s is ~15 KiB: 64 reads of 256 B in flight (Extended Tag, used
            # only once the host enables it; 32 before).
            max_pending_requests = 64,
            bar0_size            = 0x100000,
            ident                = f"hostlink VC709 PCIe Gen3 x{lanes} DMA SoC",
            # The DMA side of the PHY's streams is the block's own clock domain (see _CRG).
            pcie_phy_kwargs      = dict(speed="gen3", cd="pcie", rc_straddle=rc_straddle, extended_tags=True),
            **kwargs)
        # The Gen3 block next to the edge connector's GTH quads 114/115 (read at finalization).
        self.pcie_phy.update_config({"pcie_blk_locn": "X0Y1"})

# Build --------------------------------------------------------------------------------------------

def main(argv=None):
    description = __doc__.strip().splitlines()[0]
    return pcie_target_main(BaseSoC, vc709_platform.Platform, description, SYS_CLK_FREQ, argv)

if __name__ == "__main__":
    sys.exit(main())
