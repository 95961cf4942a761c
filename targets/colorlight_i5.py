#!/usr/bin/env python3
# This file is part of hostlink.
# Copyright (c) 2026 hostlink developers
# SPDX-License-Identifier: BSD-2-Clause

"""ColorLight i5 (ECP5 LFE5U-25F, two RGMII PHYs): hostlink's minimal UDP/IPv4 core at 125 MHz.

    ./targets/colorlight_i5.py --build     bitstream with the open flow (YoWASP Yosys/nextpnr/ecppack)
    ./targets/colorlight_i5.py --load      load it over the board's JTAG (ecpdap)

The SoC has no CPU: a host reaches the core's CSRs through UARTBone (litex_server --uart).
Two clocks from one PLL: the data plane (LiteEth's MAC and the UDP core, `eth`) at 125 MHz, one byte
per cycle as Gigabit line rate needs, and the control plane (UARTBone, CSR bus, counters, `sys`) at
50 MHz, where its wide read multiplexers meet timing with margin; UDPCore crosses between them.
`--ethernet-stack liteeth` builds the same board with LiteEth's ARP/IP/UDP stack (UDP echo) for
area comparison.
"""

import os
import sys

# Started as ./targets/<board>.py from a shell without the project's virtualenv: `hostlink` is found through
# the link targets/hostlink -> ../hostlink, and importing it re-runs this script with the virtualenv
# (hostlink/__init__.py).
import hostlink

from migen import *

from litex.gen import *

from litex_boards.platforms import colorlight_i5

from litex.soc.cores.clock import ECP5PLL
from litex.soc.integration.soc_core import SoCCore
from litex.soc.integration.builder import Builder

from liteeth.phy.ecp5rgmii import LiteEthPHYRGMII

from hostlink.cores.udp import UDPCore
from hostlink.cores.udp.common import UDP_DEFAULTS
from hostlink.cores.udp.integration import add_liteeth_udp_echo
from hostlink.cores.udp.core import check_plane_clocks
from hostlink.targets.common import add_udp_arguments, udp_soc_kwargs, target_argument_parser
from hostlink.toolchain import use_yowasp_toolchain

# Control plane (UARTBone, CSR bus, counters): 50 MHz, where its wide read multiplexers meet timing with
# margin. Data plane (MAC, UDP core): one byte per cycle is Gigabit line rate.
SYS_CLK_FREQ = 50e6
ETH_CLK_FREQ = 125e6

# CRG ----------------------------------------------------------------------------------------------

class _CRG(LiteXModule):
    def __init__(self, platform, sys_clk_freq, eth_clk_freq):
        self.rst    = Signal()
        self.cd_sys = ClockDomain()
        self.cd_eth = ClockDomain() # Ethernet data plane (not the PHY's eth_rx/eth_tx).

        # # #

        clk25 = platform.request("clk25")
        rst_n = platform.request("cpu_reset_n")

        self.pll = pll = ECP5PLL()
        self.comb += pll.reset.eq(~rst_n | self.rst)
        pll.register_clkin(clk25, 25e6)
        pll.create_clkout(self.cd_sys, sys_clk_freq)
        pll.create_clkout(self.cd_eth, eth_clk_freq)

# BaseSoC ------------------------------------------------------------------------------------------

ETHERNET_STACKS = ["hostlink", "liteeth"]

class BaseSoC(SoCCore):
    """`eth_clk_freq` (data plane) defaults to 125 MHz, Gigabit line rate; `sys_clk_freq` (control
    plane: UARTBone, CSRs) to 50 MHz. `addresses` (a UDPAddresses) are the FPGA's and the host's."""
    def __init__(self, board="i5", revision="7.0", toolchain="trellis", sys_clk_freq=SYS_CLK_FREQ,
        eth_clk_freq       = ETH_CLK_FREQ,
        eth_phy            = 0,
        ethernet_stack     = "hostlink",
        addresses          = UDP_DEFAULTS,
        udp_mode           = "generator",
        with_arp           = True,
        generator_defaults = None,
        **kwargs):
        if board != "i5":
            raise ValueError(f"board must be 'i5' (the i9's LFE5U-45F is not supported here), not {board!r}")
        if eth_phy not in (0, 1):
            raise ValueError(f"eth_phy must be 0 or 1 (the board has two RGMII PHYs), not {eth_phy!r}")
        if ethernet_stack not in ETHERNET_STACKS:
            raise ValueError(f"ethernet_stack must be one of {ETHERNET_STACKS}, not {ethernet_stack!r}")
        check_plane_clocks(sys_clk_freq, eth_clk_freq)
        platform = colorlight_i5.Platform(board=board, revision=revision, toolchain=toolchain)

        # CRG --------------------------------------------------------------------------------------
        self.crg = _CRG(platform, sys_clk_freq, eth_clk_freq)

        # SoCCore ----------------------------------------------------------------------------------
        kwargs.setdefault("cpu_type",             "None")
        kwargs.setdefault("integrated_sram_size", 0)
        kwargs.setdefault("uart_name",            "uartbone")
        if kwargs["cpu_type"] in ("None", None) and kwargs["uart_name"] == "serial":
            # No CPU to talk to: the UART pins carry UARTBone instead.
            kwargs["uart_name"] = "uartbone"
        SoCCore.__init__(self, platform, int(sys_clk_freq),
            ident = f"hostlink UDP/IPv4 on ColorLight {board.upper()} ({ethernet_stack})", **kwargs)

        # Ethernet ---------------------------------------------------------------------------------
        self.ethphy = LiteEthPHYRGMII(
            clock_pads = platform.request("eth_clocks", eth_phy),
            pads       = platform.request("eth", eth_phy),
            tx_delay   = 0, # The board's PHYs add the TX clock delay.
        )
        if ethernet_stack == "hostlink":
            self.udp = UDPCore(self.ethphy, eth_clk_freq, **addresses.as_kwargs(),
                clock_domain       = "eth",
                mode               = udp_mode,
                with_arp           = with_arp,
                generator_defaults = generator_defaults,
            )
        else:
            add_liteeth_udp_echo(self, self.ethphy, eth_clk_freq, addresses.fpga_mac, addresses.fpga_ip,
                addresses.fpga_port)

# Build --------------------------------------------------------------------------------------------

def main():
    parser = target_argument_parser(colorlight_i5.Platform, __doc__.strip().splitlines()[0])
    # No build date in the identifier: the same sources give the same bitstream. With the date, every build
    # is a different design, and the placement's timing margin (1-2 % on the eth clock) varies with it.
    parser.set_defaults(no_ident_version=True)
    parser.add_target_argument("--board",          default="i5",         help="Board type (i5).")
    parser.add_target_argument("--revision",       default="7.0",        help="Board revision (7.0).")
    parser.add_target_argument("--sys-clk-freq",   default=SYS_CLK_FREQ, type=float, help="Control plane (UARTBone, CSRs) clock frequency.")
    parser.add_target_argument("--eth-clk-freq",   default=ETH_CLK_FREQ, type=float, help="Ethernet data plane clock frequency.")
    parser.add_target_argument("--eth-phy",        default=0,            type=int,   help="Ethernet PHY (0 or 1).")
    parser.add_target_argument("--ethernet-stack", default="hostlink",   choices=ETHERNET_STACKS,
        help="hostlink's minimal UDP core, or LiteEth's ARP/IP/UDP stack (UDP echo) for comparison.")
    add_udp_arguments(parser)
    # A bitstream that misses timing is not fit for a board: nextpnr fails the build instead.
    parser.set_defaults(nextpnr_timingstrict=True)
    args = parser.parse_args()

    soc = BaseSoC(board=args.board, revision=args.revision,
        toolchain      = args.toolchain,
        sys_clk_freq   = args.sys_clk_freq,
        eth_clk_freq   = args.eth_clk_freq,
        eth_phy        = args.eth_phy,
        ethernet_stack = args.ethernet_stack,
        **udp_soc_kwargs(args),
        **parser.soc_argdict
    )
    builder = Builder(soc, **parser.builder_argdict)
    if args.build and args.toolchain == "trellis":
        try:
            use_yowasp_toolchain(os.path.join(builder.output_dir, "yowasp-bin"))
        except OSError as e:
            print(f"error: {e}", file=sys.stderr)
            return 1
    builder.build(**parser.toolchain_argdict, run=args.build)

    if args.load:
        prog = soc.platform.create_programmer()
        prog.load_bitstream(builder.get_bitstream_filename(mode="sram"))
    return 0

if __name__ == "__main__":
    sys.exit(main())
