#!/usr/bin/env python3
# This file is part of hostlink.
# Copyright (c) 2026 hostlink developers
# SPDX-License-Identifier: BSD-2-Clause

"""KC705 (Kintex-7 XC7K325T, Marvell 88E1111 GMII PHY): hostlink's minimal UDP/IPv4 core at 125 MHz.

    ./targets/kc705.py             generate the Verilog and Vivado Tcl (no Vivado needed)
    ./targets/kc705.py --build     run Vivado on them (fails with one line when Vivado is missing)

The SoC has no CPU: a host reaches the core's CSRs through UARTBone (litex_server --uart).
"""

import sys

from migen import *

from litex.gen import *

from litex_boards.platforms import xilinx_kc705

from litex.soc.cores.clock import S7MMCM
from litex.soc.integration.soc_core import SoCCore
from litex.soc.integration.builder import Builder

from liteeth.phy import LiteEthPHY

from hostlink.cores.udp import UDPCore
from hostlink.targets.common import add_udp_arguments, udp_soc_kwargs, finish_target

# CRG ----------------------------------------------------------------------------------------------

class _CRG(LiteXModule):
    def __init__(self, platform, sys_clk_freq):
        self.rst    = Signal()
        self.cd_sys = ClockDomain()

        # # #

        self.pll = pll = S7MMCM(speedgrade=-2)
        self.comb += pll.reset.eq(platform.request("cpu_reset") | self.rst)
        pll.register_clkin(platform.request("clk200"), 200e6)
        pll.create_clkout(self.cd_sys, sys_clk_freq)
        # The SoC's reset reaches the MMCM input: not a timing path.
        platform.add_false_path_constraints(self.cd_sys.clk, pll.clkin)

# BaseSoC ------------------------------------------------------------------------------------------

class BaseSoC(SoCCore):
    """`sys_clk_freq` defaults to 125 MHz: one byte per cycle is Gigabit line rate."""
    def __init__(self, sys_clk_freq=125e6,
        fpga_mac           = "10:e2:d5:00:00:01",
        fpga_ip            = "192.168.1.50",
        host_mac           = "10:e2:d5:00:00:02",
        host_ip            = "192.168.1.100",
        fpga_port          = 1234,
        host_port          = 1234,
        udp_mode           = "generator",
        with_arp           = True,
        generator_defaults = None,
        **kwargs):
        platform = xilinx_kc705.Platform()

        # CRG --------------------------------------------------------------------------------------
        self.crg = _CRG(platform, sys_clk_freq)

        # SoCCore ----------------------------------------------------------------------------------
        kwargs.setdefault("cpu_type",             "None")
        kwargs.setdefault("integrated_sram_size", 0)
        kwargs.setdefault("uart_name",            "uartbone")
        if kwargs["cpu_type"] in ("None", None) and kwargs["uart_name"] == "serial":
            # No CPU to talk to: the UART pins carry UARTBone instead.
            kwargs["uart_name"] = "uartbone"
        SoCCore.__init__(self, platform, int(sys_clk_freq), ident="hostlink UDP/IPv4 on KC705", **kwargs)

        # Ethernet ---------------------------------------------------------------------------------
        self.ethphy = LiteEthPHY(
            clock_pads = platform.request("eth_clocks"),
            pads       = platform.request("eth"),
            clk_freq   = sys_clk_freq,
        )
        self.udp = UDPCore(self.ethphy, sys_clk_freq,
            fpga_mac           = fpga_mac,
            fpga_ip            = fpga_ip,
            host_mac           = host_mac,
            host_ip            = host_ip,
            fpga_port          = fpga_port,
            host_port          = host_port,
            mode               = udp_mode,
            with_arp           = with_arp,
            generator_defaults = generator_defaults,
        )

# Build --------------------------------------------------------------------------------------------

def main(argv=None):
    from litex.build.parser import LiteXArgumentParser
    parser = LiteXArgumentParser(platform=xilinx_kc705.Platform, description=__doc__.strip().splitlines()[0])
    parser.add_target_argument("--sys-clk-freq", default=125e6, type=float, help="System clock frequency.")
    add_udp_arguments(parser)
    args = parser.parse_args(argv)

    soc = BaseSoC(
        sys_clk_freq = args.sys_clk_freq,
        **udp_soc_kwargs(args),
        **parser.soc_argdict
    )
    builder = Builder(soc, **parser.builder_argdict)
    return finish_target(soc, builder, parser, args)

if __name__ == "__main__":
    sys.exit(main())
