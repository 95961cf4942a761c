#!/usr/bin/env python3
# This file is part of hostlink.
# Copyright (c) 2026 hostlink developers
# SPDX-License-Identifier: BSD-2-Clause

"""KC705 (Kintex-7 XC7K325T, Marvell 88E1111 GMII PHY): hostlink's minimal UDP/IPv4 core at 125 MHz,
and with --with-pcie the PCIe Gen2 x8 scatter-gather DMA of the ZC706/VC709 targets.

    ./targets/kc705.py                  generate the Verilog and Vivado Tcl (no Vivado needed)
    ./targets/kc705.py --build          run Vivado on them (fails with one line when Vivado is missing)
    ./targets/kc705.py --with-pcie      UDP core and PCIe DMA, both at 250 MHz
    ./targets/kc705.py --with-pcie --no-ethernet
                                        PCIe DMA alone (what ./sim.py dma --board kc705 runs)
    ./targets/kc705.py --with-pcie --driver
                                        kernel driver and user tools in <output-dir>/driver
    ./targets/kc705.py --with-pcie --with-dram
                                        the DDR3 SODIMM as a DMA source and sink (doc/dram.md)

The SoC has no CPU: a host reaches the CSRs through UARTBone (litex_server --uart) when the UDP core
is in, and through PCIe BAR0 when PCIe is in.
"""

import sys

# Started as ./targets/<board>.py from a shell without the project's virtualenv: `hostlink` is found through
# the link targets/hostlink -> ../hostlink, and importing it re-runs this script with the virtualenv
# (hostlink/__init__.py).
import hostlink

from migen import *

from litex.gen import *

from litex.soc.cores.clock import S7MMCM
from litex.soc.integration.soc_core import SoCCore
from litex.soc.integration.builder import Builder

from liteeth.phy import LiteEthPHY

from hostlink.cores.pcie.s7phy import S7PCIEPHY
from hostlink.cores.udp import UDPCore
from hostlink.cores.udp.common import UDP_DEFAULTS
from hostlink.cores.dram.clocking import S7DRAMClocking
from hostlink.targets import kc705_platform
from hostlink.cores.dram.integration import board_dram_clk_freq, board_dram_phy, add_dram
from hostlink.cores.pcie.integration import DEFAULT_DMA_CHANNELS, check_pcie_parameters, add_pcie_endpoint
from hostlink.cores.pcie.user_core import prepare_user_core, finish_user_core
from hostlink.targets.common import add_udp_arguments, udp_soc_kwargs, finish_target, log_to_stdout
from hostlink.targets.boards import BOARDS
from hostlink.targets.common import target_argument_parser, add_pcie_arguments, pcie_soc_kwargs

# One byte per cycle is Gigabit line rate.
SYS_CLK_FREQ = 125e6

# With PCIe the whole SoC runs at the PCIe side's clock. pcie_7x at Gen2 x8 has a 128-bit interface
# at 250 MHz: 4 GB/s, above the link's ~3.65 GB/s, and hostlink's completion path takes a beat every
# cycle (hostlink.cores.pcie), so a faster DMA side would gain nothing. The fabric next to the block
# must meet 250 MHz anyway (the block's user clock); more is not credible on a -2 Kintex-7. Timing is
# not verified: no Vivado here.
PCIE_SYS_CLK_FREQ = 250e6

# The SODIMM (DDR3-1600, 64 bits) at 1:4: the DRAM controller runs at 200 MHz.
DRAM_CLK_FREQ = board_dram_clk_freq(kc705_platform)

# CRG ----------------------------------------------------------------------------------------------

class _CRG(LiteXModule):
    def __init__(self, platform, sys_clk_freq, dram_clk_freq=None):
        self.rst    = Signal()
        self.cd_sys = ClockDomain()

        # # #

        reset = platform.request("cpu_reset") | self.rst
        self.pll = pll = S7MMCM(speedgrade=-2)
        self.comb += pll.reset.eq(reset)
        pll.register_clkin(platform.request("clk200"), 200e6)
        pll.create_clkout(self.cd_sys, sys_clk_freq)
        # The SoC's reset reaches the MMCM input: not a timing path.
        platform.add_false_path_constraints(self.cd_sys.clk, pll.clkin)
        if dram_clk_freq is not None:
            self.dram = S7DRAMClocking(pll.clkin, 200e6, dram_clk_freq, speedgrade=-2)
            self.comb += self.dram.rst.eq(reset)
            platform.add_false_path_constraints(self.cd_sys.clk, self.dram.cd_dram.clk)

# BaseSoC ------------------------------------------------------------------------------------------

class BaseSoC(SoCCore):
    """The UDP core (`with_ethernet`), the PCIe DMA (`with_pcie`), or both in one SoC clocked at
    `sys_clk_freq`.

    `sys_clk_freq` defaults to SYS_CLK_FREQ, the UDP core's; with PCIe give PCIE_SYS_CLK_FREQ
    (main() does): at 125 MHz the DMA would top out near 1.7 GB/s. `addresses` (a UDPAddresses) are
    the UDP core's and its host's. `platform`, `crg_cls` and
    `pcie_phy_cls` let the simulation (hostlink.sim.pcie) replace the board clocking and hard block.

    `with_dram` (PCIe only) adds the DDR3 SODIMM as each DMA channel's alternative source and sink,
    as on the ZC706/VC709 (hostlink.cores.dram.integration.add_dram); `dram_phy(platform, clk_freq) ->
    (phy, module)` replaces the board's DDR3 PHY (the simulation's model).
    """
    LANES       = [4, 8]   # 8 on the edge connector; pcie_7x at Gen2 x4 or x8 takes 128 bits.
    DATA_WIDTHS = [128]    # Gen2 x8: 128 bits at 250 MHz (x4: at 125 MHz).

    def __init__(self, sys_clk_freq=SYS_CLK_FREQ,
        with_ethernet      = True,
        addresses          = UDP_DEFAULTS,
        udp_mode           = "generator",
        with_arp           = True,
        generator_defaults = None,
        with_pcie          = False,
        dma_channels       = DEFAULT_DMA_CHANNELS,
        pcie_lanes         = BOARDS["kc705"].pcie.lanes,
        pcie_data_width    = BOARDS["kc705"].pcie.data_width,
        platform           = None,
        crg_cls            = _CRG,
        pcie_phy_cls       = S7PCIEPHY,
        with_dram          = False,
        dram_phy           = None,
        user_ports         = None,
        user_core          = None,
        user_core_clock    = None,
        **kwargs):
        if not (with_ethernet or with_pcie):
            raise ValueError("the KC705 SoC needs the UDP core, PCIe or both, not neither")
        if with_dram and not with_pcie:
            raise ValueError("--with-dram needs --with-pcie: the DRAM is a source and sink of the PCIe DMA")
        if (user_ports or user_core) and not with_pcie:
            raise ValueError("user ports need --with-pcie: they are the PCIe DMA channels' user side")
        core, core_ports = prepare_user_core(user_core, pcie_data_width, sys_clk_freq)
        if core_ports:
            user_ports = {**(user_ports or {}), **core_ports}
        if with_pcie:
            check_pcie_parameters(pcie_lanes, pcie_data_width, dma_channels,
                self.LANES, self.DATA_WIDTHS)
        platform = platform if platform is not None else kc705_platform.Platform()

        # CRG --------------------------------------------------------------------------------------
        if with_dram:
            self.crg = crg_cls(platform, sys_clk_freq, dram_clk_freq=DRAM_CLK_FREQ)
        else:
            self.crg = crg_cls(platform, sys_clk_freq)

        # SoCCore ----------------------------------------------------------------------------------
        kwargs.setdefault("cpu_type",             "None")
        kwargs.setdefault("integrated_sram_size", 0)
        if with_ethernet:
            kwargs.setdefault("uart_name",            "uartbone")
            if kwargs["cpu_type"] in ("None", None) and kwargs["uart_name"] == "serial":
                # No CPU to talk to: the UART pins carry UARTBone instead.
                kwargs["uart_name"] = "uartbone"
        else:
            # The host drives the SoC through BAR0: no CPU, no UART, no RAM or ROM for a CPU, as on
            # the other PCIe targets.
            kwargs.update(cpu_type="None", with_uart=False,
                integrated_rom_size=0, integrated_sram_size=0)
        if kwargs.get("ident") is None:
            kwargs["ident"] = {
                (True,  False): "hostlink UDP/IPv4 on KC705",
                (False, True):  f"hostlink KC705 PCIe Gen2 x{pcie_lanes} DMA SoC",
                (True,  True):  f"hostlink KC705 PCIe Gen2 x{pcie_lanes} DMA and UDP/IPv4 SoC",
            }[(with_ethernet, with_pcie)]
        SoCCore.__init__(self, platform, int(sys_clk_freq), **kwargs)

        # Ethernet ---------------------------------------------------------------------------------
        if with_ethernet:
            self.ethphy = LiteEthPHY(
                clock_pads = platform.request("eth_clocks"),
                pads       = platform.request("eth"),
                clk_freq   = sys_clk_freq,
            )
            self.udp = UDPCore(self.ethphy, sys_clk_freq, **addresses.as_kwargs(),
                mode               = udp_mode,
                with_arp           = with_arp,
                generator_defaults = generator_defaults,
            )

        # DRAM -------------------------------------------------------------------------------------
        dram_channels = None
        if with_dram:
            phy, module = (dram_phy or board_dram_phy(kc705_platform))(platform, DRAM_CLK_FREQ)
            dram_channels = add_dram(self, phy, module, DRAM_CLK_FREQ, dma_channels, pcie_data_width)

        # PCIe -------------------------------------------------------------------------------------
        if with_pcie:
            add_pcie_endpoint(self, platform, pcie_phy_cls,
                lanes                = pcie_lanes,
                data_width           = pcie_data_width,
                dma_channels         = dma_channels,
                # Tags for every read the block's 72 completion headers allow (hostlink.cores.pcie.endpoint):
                # 18 of 256 bytes (2 us reads at MRRS 256), 8 of 512; 16 tags held 256-byte reads to 16.
                max_pending_requests = 32,
                bar0_size            = 0x100000,  # LitePCIe's pcie_7x configuration: 1 MiB.
                dram_channels        = dram_channels,
                user_ports           = user_ports,
            )
            finish_user_core(self, core, user_core, user_core_clock)

# Build --------------------------------------------------------------------------------------------

def main(argv=None):
    parser = target_argument_parser(kc705_platform.Platform, __doc__.strip().splitlines()[0])
    parser.add_target_argument("--sys-clk-freq", default=None, type=float,
        help=f"System clock frequency (default {SYS_CLK_FREQ/1e6:.0f} MHz, "
             f"{PCIE_SYS_CLK_FREQ/1e6:.0f} MHz with PCIe).")
    add_udp_arguments(parser)
    parser.add_target_argument("--with-pcie",   action="store_true",
        help="Add the PCIe Gen2 x8 DMA.")
    parser.add_target_argument("--no-ethernet", action="store_true",
        help="Leave out the UDP core (with --with-pcie).")
    add_pcie_arguments(parser)
    args = parser.parse_args(argv)
    if args.no_ethernet and not args.with_pcie:
        parser.error("--no-ethernet leaves nothing without --with-pcie")
    if (args.driver or args.driver_name) and not args.with_pcie:
        parser.error("--driver generates the PCIe driver: it needs --with-pcie")
    log_to_stdout()

    sys_clk_freq = args.sys_clk_freq
    if sys_clk_freq is None:
        sys_clk_freq = PCIE_SYS_CLK_FREQ if args.with_pcie else SYS_CLK_FREQ
    try:
        soc = BaseSoC(
            sys_clk_freq  = sys_clk_freq,
            with_ethernet = not args.no_ethernet,
            with_pcie     = args.with_pcie,
            **pcie_soc_kwargs(args),
            **udp_soc_kwargs(args),
            **parser.soc_argdict
        )
    except ValueError as error:
        parser.error(str(error))
    builder = Builder(soc, **parser.builder_argdict)
    return finish_target(soc, builder, parser, args)

if __name__ == "__main__":
    sys.exit(main())
