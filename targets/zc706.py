#!/usr/bin/env python3
# This file is part of hostlink.
# Copyright (c) 2026 hostlink developers
# SPDX-License-Identifier: BSD-2-Clause

"""Xilinx ZC706 (XC7Z045): PCIe Gen2 x4 scatter-gather DMA SoC, no CPU.

    ./targets/zc706.py --build --load     gateware (needs Vivado)
    ./targets/zc706.py --driver           kernel driver and user tools for this SoC in <output-dir>/driver
"""

import os
import sys

from migen import *

from litex.gen import *

from litex.soc.cores.clock import S7PLL
from litex.soc.integration.soc_core import SoCMini
from litex.soc.integration.builder import Builder
from litex.build.parser import LiteXArgumentParser

from litepcie.phy.s7pciephy import S7PCIEPHY

from hostlink.targets import zc706_platform
from hostlink.targets.common import add_pcie_dma, finish_target, log_to_stdout
from hostlink.cores.pcie.config import check_lanes, check_data_width, check_dma_channels

# The user clock of pcie_7x at Gen2 x4 / 128 bits is 125 MHz. LitePCIe's 128-bit TLP depacketizer spends
# about two idle cycles per TLP, so at 125 MHz a 256-byte completion (17 beats) takes ~19 cycles and host ->
# FPGA tops out near 1.68 GB/s. Running the DMA side at 150 MHz, behind the PHY's clock-domain crossing,
# absorbs those cycles and leaves the link as the limit.
SYS_CLK_FREQ = 150e6

# CRG ----------------------------------------------------------------------------------------------

class _CRG(LiteXModule):
    def __init__(self, platform, sys_clk_freq):
        self.rst    = Signal()
        self.cd_sys = ClockDomain()

        # # #

        self.pll = pll = S7PLL(speedgrade=-2)
        self.comb += pll.reset.eq(self.rst)
        pll.register_clkin(platform.request("clk200"), 200e6)
        pll.create_clkout(self.cd_sys, sys_clk_freq)
        platform.add_false_path_constraints(self.cd_sys.clk, pll.clkin)

# BaseSoC ------------------------------------------------------------------------------------------

class BaseSoC(SoCMini):
    LANES       = [4]   # The ZC706 edge connector wires 4 lanes to the XC7Z045's GTX transceivers.
    DATA_WIDTHS = [64, 128]

    # `crg_cls` and `pcie_phy_cls` let the simulation (hostlink.sim.pcie) replace the board clocking and
    # the hard block while keeping everything else.
    def __init__(self, platform=None, sys_clk_freq=SYS_CLK_FREQ, dma_channels=2, lanes=4, data_width=128,
        crg_cls=_CRG, pcie_phy_cls=S7PCIEPHY, **kwargs):
        check_lanes(lanes, self.LANES)
        check_data_width(data_width, self.DATA_WIDTHS)
        check_dma_channels(dma_channels)
        platform = platform if platform is not None else zc706_platform.Platform()

        # CRG --------------------------------------------------------------------------------------
        self.crg = crg_cls(platform, sys_clk_freq)

        # SoCMini ----------------------------------------------------------------------------------
        kwargs.setdefault("ident", f"hostlink ZC706 PCIe Gen2 x{lanes} DMA SoC")
        # The host drives the SoC through BAR0: no CPU, no UART (the ZC706's USB-UART is on the PS), no
        # RAM or ROM for a CPU, whatever the command line's SoC defaults say.
        kwargs.update(cpu_type="None", with_uart=False, integrated_rom_size=0, integrated_sram_size=0)
        SoCMini.__init__(self, platform, sys_clk_freq, **kwargs)

        # PCIe -------------------------------------------------------------------------------------
        self.pcie_phy = pcie_phy_cls(platform, platform.request(f"pcie_x{lanes}"),
            data_width = data_width,
            bar0_size  = 0x100000,  # The pcie_7x configuration (LitePCIe) fixes BAR0 at 1 MiB.
        )
        add_pcie_dma(self, self.pcie_phy, dma_channels=dma_channels, led_pads=platform.request_all("user_led"))

# Build --------------------------------------------------------------------------------------------

def main():
    parser = LiteXArgumentParser(platform=zc706_platform.Platform, description=__doc__.strip().splitlines()[0])
    parser.add_target_argument("--sys-clk-freq", default=SYS_CLK_FREQ, type=float, help="System clock frequency.")
    parser.add_target_argument("--dma-channels", default=2,     type=int,   help="DMA channels (1 to 8).")
    parser.add_target_argument("--driver",       action="store_true",       help="Generate the kernel driver and user tools.")
    args = parser.parse_args()
    log_to_stdout()

    try:
        soc = BaseSoC(sys_clk_freq=args.sys_clk_freq, dma_channels=args.dma_channels, **parser.soc_argdict)
    except ValueError as error:
        parser.error(str(error))
    builder = Builder(soc, **parser.builder_argdict)
    return finish_target(soc, builder, parser, args)

if __name__ == "__main__":
    sys.exit(main())
