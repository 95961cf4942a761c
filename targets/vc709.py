#!/usr/bin/env python3
# This file is part of hostlink.
# Copyright (c) 2026 hostlink developers
# SPDX-License-Identifier: BSD-2-Clause

"""Xilinx VC709 (XC7VX690T): PCIe Gen3 x8 scatter-gather DMA SoC on the pcie3_7x block, no CPU.

    ./targets/vc709.py --build --load     gateware (needs Vivado)
    ./targets/vc709.py --driver           kernel driver and user tools for this SoC in <output-dir>/driver
"""

import sys

from migen import *

from litex.gen import *

from litex.soc.cores.clock import S7PLL
from litex.soc.integration.soc_core import SoCMini
from litex.soc.integration.builder import Builder
from litex.build.parser import LiteXArgumentParser

from hostlink.targets import vc709_platform
from hostlink.targets.common import add_pcie_dma, finish_target, log_to_stdout
from hostlink.cores.pcie.config import check_lanes, check_data_width, check_dma_channels
from hostlink.cores.pcie.v7gen3phy import V7Gen3PCIEPHY

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
    LANES       = [1, 2, 4, 8]
    DATA_WIDTHS = [256]   # One 256-bit beat per 250 MHz cycle keeps up with Gen3 x8 (7.88 GB/s raw).

    # `crg_cls` and `pcie_phy_cls` let the simulation (hostlink.sim.pcie) replace the board clocking and
    # the hard block while keeping everything else.
    def __init__(self, platform=None, sys_clk_freq=250e6, dma_channels=2, lanes=8, data_width=256,
        crg_cls=_CRG, pcie_phy_cls=V7Gen3PCIEPHY, **kwargs):
        check_lanes(lanes, self.LANES)
        check_data_width(data_width, self.DATA_WIDTHS)
        check_dma_channels(dma_channels)
        platform = platform if platform is not None else vc709_platform.Platform()

        # CRG --------------------------------------------------------------------------------------
        self.crg = crg_cls(platform, sys_clk_freq)

        # SoCMini ----------------------------------------------------------------------------------
        kwargs.setdefault("ident", f"hostlink VC709 PCIe Gen3 x{lanes} DMA SoC")
        # The host drives the SoC through BAR0: no CPU, no UART, no RAM or ROM for a CPU, whatever the
        # command line's SoC defaults say.
        kwargs.update(cpu_type="None", with_uart=False, integrated_rom_size=0, integrated_sram_size=0)
        SoCMini.__init__(self, platform, sys_clk_freq, **kwargs)

        # PCIe -------------------------------------------------------------------------------------
        self.pcie_phy = pcie_phy_cls(platform, platform.request(f"pcie_x{lanes}"),
            speed      = "gen3",
            data_width = data_width,
            bar0_size  = 0x100000,
        )
        # The Gen3 block next to the edge connector's GTH quads 114/115.
        self.pcie_phy.update_config({"pcie_blk_locn": "X0Y1"})
        # 1 us of read latency at 7.3 GB/s is ~7 KiB: 32 reads of 512 B in flight (5-bit tags, no extended tags).
        add_pcie_dma(self, self.pcie_phy, dma_channels=dma_channels, max_pending_requests=32,
            led_pads=platform.request_all("user_led"))

# Build --------------------------------------------------------------------------------------------

def main():
    parser = LiteXArgumentParser(platform=vc709_platform.Platform, description=__doc__.strip().splitlines()[0])
    parser.add_target_argument("--sys-clk-freq", default=250e6, type=float, help="System clock frequency.")
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
