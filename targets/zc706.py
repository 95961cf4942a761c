#!/usr/bin/env python3
# This file is part of hostlink.
# Copyright (c) 2026 hostlink developers
# SPDX-License-Identifier: BSD-2-Clause

"""Xilinx ZC706 (XC7Z045): PCIe Gen2 x4 scatter-gather DMA SoC, no CPU; or, with --ps7, the Zynq's own ARM cores
moving data through an AXI DMA in the logic.

    ./targets/zc706.py --build --load     gateware (needs Vivado)
    ./targets/zc706.py --driver           kernel driver and user tools for this SoC in <output-dir>/driver
    ./targets/zc706.py --ps7 --driver     the Zynq SoC (doc/zynq.md), its device-tree node for Linux's xilinx_dma
                                          in <output-dir>/driver/hostlink_axi_dma.dtsi
"""

import os
import sys

# Started as ./targets/<board>.py from a shell without the project's virtualenv: `hostlink` is found through
# the link targets/hostlink -> ../hostlink, and importing it re-runs this script with the virtualenv
# (hostlink/__init__.py).
import hostlink

from migen import *

from litex.gen import *

from litex.soc.cores.clock import S7PLL

from hostlink.targets import zc706_platform
from hostlink.cores.pcie.s7phy import S7PCIEPHY
from hostlink.cores.dram.clocking import S7DRAMClocking
from hostlink.cores.dram.integration import board_dram_clk_freq
from hostlink.cores.pcie.integration import PCIeDMASoC
from hostlink.targets.boards import BOARDS
from hostlink.targets.common import finish_target, log_to_stdout, pcie_target_main, target_argument_parser

# The user clock of pcie_7x at Gen2 x4 / 128 bits is 125 MHz. LitePCIe's 128-bit TLP depacketizer spends
# about two idle cycles per TLP, so at 125 MHz a 256-byte completion (17 beats) takes ~19 cycles and host ->
# FPGA tops out near 1.68 GB/s. Running the DMA side at 150 MHz, behind the PHY's clock-domain crossing,
# absorbs those cycles and leaves the link as the limit.
SYS_CLK_FREQ = 150e6

# The PL SODIMM (DDR3-1600, 64 bits) at 1:4: the DRAM controller runs at 200 MHz.
DRAM_CLK_FREQ = board_dram_clk_freq(zc706_platform)

# CRG ----------------------------------------------------------------------------------------------

class _CRG(LiteXModule):
    def __init__(self, platform, sys_clk_freq, dram_clk_freq=None):
        self.rst    = Signal()
        self.cd_sys = ClockDomain()

        # # #

        self.pll = pll = S7PLL(speedgrade=-2)
        self.comb += pll.reset.eq(self.rst)
        pll.register_clkin(platform.request("clk200"), 200e6)
        pll.create_clkout(self.cd_sys, sys_clk_freq)
        platform.add_false_path_constraints(self.cd_sys.clk, pll.clkin)
        if dram_clk_freq is not None:
            self.dram = S7DRAMClocking(pll.clkin, 200e6, dram_clk_freq, speedgrade=-2)
            self.comb += self.dram.rst.eq(self.rst)
            platform.add_false_path_constraints(self.cd_sys.clk, self.dram.cd_dram.clk)

# BaseSoC ------------------------------------------------------------------------------------------

class BaseSoC(PCIeDMASoC):
    PLATFORM     = zc706_platform
    SYS_CLK_FREQ = SYS_CLK_FREQ
    LANES        = [4]   # The ZC706 edge connector wires 4 lanes to the XC7Z045's GTX transceivers.
    DATA_WIDTHS  = [64, 128]

    def __init__(self, crg_cls=_CRG, pcie_phy_cls=S7PCIEPHY, lanes=BOARDS["zc706"].pcie.lanes,
        data_width=BOARDS["zc706"].pcie.data_width, **kwargs):
        PCIeDMASoC.__init__(self, crg_cls, pcie_phy_cls, lanes, data_width,
            bar0_size            = 0x100000,  # LitePCIe's pcie_7x configuration: BAR0 of 1 MiB.
            # Tags for every read the block's 72 completion headers allow (hostlink.cores.pcie.endpoint): 18
            # of 256 bytes (4.5 KiB, the link at 2 us reads), 8 of 512. 16 tags fell 2.6 % short of it.
            max_pending_requests = 32,
            ident                = f"hostlink ZC706 PCIe Gen2 x{lanes} DMA SoC",
            **kwargs)

# Build --------------------------------------------------------------------------------------------

PS7_HELP = "The Zynq SoC instead: the PS's ARM cores, hostlink's AXI DMA on HP0 for Linux's xilinx_dma (doc/zynq.md)."
ZYNQ_SYS_CLK_FREQ = 150e6   # The PS's FCLK0: a 64-bit HP port then moves 1.2 GB/s.


def zynq_main(argv):
    """./targets/zc706.py --ps7: the Zynq SoC (hostlink.cores.zynq.integration)."""
    from hostlink.cores.zynq.integration import ZynqBuilder, ZynqDMASoC, device_tree
    parser = target_argument_parser(zc706_platform.Platform, __doc__.strip().splitlines()[0])
    parser.add_target_argument("--ps7", action="store_true", help=PS7_HELP)
    parser.add_target_argument("--sys-clk-freq", default=ZYNQ_SYS_CLK_FREQ, type=float,
        help="The logic's clock, the PS's FCLK0 (default 150 MHz).")
    parser.add_target_argument("--driver", action="store_true",
        help="Write the DMA's device-tree node for Linux's xilinx_dma.")
    parser.add_target_argument("--axi-dma-sg", action="store_true",
        help="The AXI DMA in PG021's scatter-gather mode (descriptors in memory) instead of direct register mode.")
    args = parser.parse_args(argv)
    log_to_stdout()
    try:
        soc = ZynqDMASoC(zc706_platform.Platform(toolchain=args.toolchain, with_ps7=True),
            preset=zc706_platform.PS7_PRESET, sys_clk_freq=args.sys_clk_freq, ident="hostlink ZC706 Zynq AXI DMA SoC",
            axi_dma_sg=args.axi_dma_sg)
    except ValueError as error:
        parser.error(str(error))
    builder = ZynqBuilder(soc, **parser.builder_argdict)
    write_tree, args.driver = args.driver, False
    code = finish_target(soc, builder, parser, args)
    if write_tree:
        driver_dir = os.path.join(builder.output_dir, "driver")
        os.makedirs(driver_dir, exist_ok=True)
        path = os.path.join(driver_dir, "hostlink_axi_dma.dtsi")
        with open(path, "w") as f:
            f.write(device_tree(soc))
        print(f"Device-tree node of the AXI DMA written to {path}")
    return code


def main(argv=None):
    argv = sys.argv[1:] if argv is None else list(argv)
    if "--ps7" in argv:
        return zynq_main(argv)
    description = __doc__.strip().splitlines()[0]
    return pcie_target_main(BaseSoC, zc706_platform.Platform, description, SYS_CLK_FREQ, argv,
        add_arguments=lambda parser: parser.add_target_argument("--ps7", action="store_true", help=PS7_HELP))

if __name__ == "__main__":
    sys.exit(main())
