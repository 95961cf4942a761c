# This file is part of hostlink.
# Copyright (c) 2026 hostlink developers
# SPDX-License-Identifier: BSD-2-Clause

"""What every target does the same way: the PCIe DMA SoC, command-line options, main()'s end."""

import logging
import os
import shutil
import sys

from migen import *

from litex.gen import *

from litex.soc.integration.soc_core import SoCMini
from litex.soc.integration.builder import Builder
from litex.build.parser import LiteXArgumentParser

from hostlink.cores.pcie.config import check_lanes, check_data_width, check_dma_channels
from hostlink.cores.pcie.integration import add_pcie
from hostlink.cores.pcie.dma_pattern import DMAPatternGenerator, DMAPatternChecker
from hostlink.cores.pcie.cycle_counter import CycleCounter

# PCIe DMA SoC -------------------------------------------------------------------------------------

DEFAULT_DMA_CHANNELS = 2


def add_pcie_dma(soc, phy, dma_channels, max_pending_requests=8, led_pads=None, dram_channels=None):
    """LitePCIe endpoint, scatter-gather DMA channels with internal loopback, MSI, on `phy`.

    `max_pending_requests` reads of max-read-request size stay in flight: they must cover the link's
    bandwidth times the host's read latency (Gen2 x4: 8 x 512 B per ~1.3 us; Gen3 x8 needs 32).

    Each channel's user side has a pattern generator and checker (hostlink.cores.pcie.dma_pattern), used
    when its loopback is off, so each direction can be measured and checked alone.
    `led_pads`, when given, show link-up (LED 0) and DMA activity (LED 1).
    `dram_channels` (from add_dram), when given, put a switch between each channel and its patterns, so
    that the host can move that channel's data to and from the board's DRAM instead.
    """
    add_pcie(soc, phy,
        ndmas                = dma_channels,
        address_width        = 64,  # Host buffers may sit above 4 GiB.
        max_pending_requests = max_pending_requests,
        dma_buffering_depth  = 8192,
        with_dma_loopback    = True,
    )
    for i in range(dma_channels):
        dma       = getattr(soc, f"pcie_dma{i}")
        generator = DMAPatternGenerator(dma.data_width)
        checker   = DMAPatternChecker(dma.data_width)
        soc.add_module(name=f"pcie_dma{i}_generator", module=generator)
        soc.add_module(name=f"pcie_dma{i}_checker",   module=checker)
        if dram_channels is None:
            soc.comb += [
                generator.source.connect(dma.sink),
                dma.source.connect(checker.sink),
            ]
        else:
            dram = dram_channels[i]
            soc.comb += [
                dma.source.connect(dram.from_dma),
                dram.to_dma.connect(dma.sink),
                generator.source.connect(dram.from_pattern),
                dram.to_pattern.connect(checker.sink),
            ]
    # Host tools time DMA in device cycles (sys clock).
    soc.add_module(name="cycles", module=CycleCounter())
    if led_pads is not None:
        dma_active = Signal()
        soc.comb += dma_active.eq(Reduce("OR", [
            getattr(soc, f"pcie_dma{i}").reader.enable | getattr(soc, f"pcie_dma{i}").writer.enable
                for i in range(dma_channels)]))
        soc.comb += led_pads[0].eq(phy._link_status.fields.status)
        soc.comb += led_pads[1].eq(dma_active)

def check_pcie_parameters(lanes, data_width, dma_channels, allowed_lanes, allowed_data_widths):
    """Refuse, before anything is built, a PCIe configuration the board or LitePCIe cannot have."""
    check_lanes(lanes, allowed_lanes)
    check_data_width(data_width, allowed_data_widths)
    check_dma_channels(dma_channels)


def add_pcie_endpoint(soc, platform, pcie_phy_cls, lanes, data_width, dma_channels,
    max_pending_requests = 8,
    bar0_size            = 0x100000,
    pcie_phy_kwargs      = None,
    dram_channels        = None):
    """`pcie_phy_cls` on the board's `pcie_x<lanes>` pads as `soc.pcie_phy`, and add_pcie_dma().

    Shared by PCIeDMASoC and the SoCs that add PCIe to something else (KC705: next to the UDP core).
    """
    soc.pcie_phy = pcie_phy_cls(platform, platform.request(f"pcie_x{lanes}"),
        data_width = data_width,
        bar0_size  = bar0_size,
        **(pcie_phy_kwargs or {}),
    )
    add_pcie_dma(soc, soc.pcie_phy,
        dma_channels         = dma_channels,
        max_pending_requests = max_pending_requests,
        led_pads             = platform.request_all("user_led"),
        dram_channels        = dram_channels,
    )


class PCIeDMASoC(SoCMini):
    """A board's PCIe scatter-gather DMA SoC with no CPU: the host drives it through BAR0.

    The board's subclass gives its constants (platform, clocking, hard block, lanes, widths) and
    adds what only that board has after this constructor. This class composes what every board does
    the same way: CRG, a SoC without CPU/UART/ROM/RAM, the PCIe PHY on `pcie_x<lanes>`, the DMA
    channels and the LEDs.

    `crg_cls(platform, sys_clk_freq)` and `pcie_phy_cls` are parameters so that the simulation
    (hostlink.sim.pcie) can replace the board clocking and the hard block and keep everything else.
    `pcie_phy_kwargs` carries the settings of one PHY class only (VC709: `speed="gen3"`).

    `with_dram` adds the board's DDR3 SODIMM (add_dram) as described by `dram_platform`, the platform
    module's DDRAM_* constants; the CRG then gets `dram_clk_freq` and makes the `dram`/`dram4x` domains.
    `dram_phy(platform, clk_freq) -> (phy, module)` replaces the board's PHY (the simulation's model).
    """
    def __init__(self, platform, sys_clk_freq, crg_cls, pcie_phy_cls, lanes, data_width,
        allowed_lanes,
        allowed_data_widths,
        dma_channels         = DEFAULT_DMA_CHANNELS,
        max_pending_requests = 8,
        bar0_size            = 0x100000,
        ident                = "hostlink PCIe DMA SoC",
        pcie_phy_kwargs      = None,
        with_dram            = False,
        dram_platform        = None,
        dram_phy             = None,
        **kwargs):
        check_pcie_parameters(lanes, data_width, dma_channels, allowed_lanes, allowed_data_widths)
        if with_dram and dram_platform is None:
            raise ValueError("--with-dram needs the board's DDR3 settings; this board has none")

        # CRG --------------------------------------------------------------------------------------
        if with_dram:
            dram_clk_freq = board_dram_clk_freq(dram_platform)
            self.crg = crg_cls(platform, sys_clk_freq, dram_clk_freq=dram_clk_freq)
        else:
            self.crg = crg_cls(platform, sys_clk_freq)

        # SoCMini ----------------------------------------------------------------------------------
        # The command line's --ident, when given, wins over the board's.
        if kwargs.get("ident") is None:
            kwargs["ident"] = ident
        # The host drives the SoC through BAR0: no CPU, no UART, no RAM or ROM for a CPU, whatever
        # the command line's SoC defaults say.
        kwargs.update(cpu_type="None", with_uart=False,
            integrated_rom_size=0, integrated_sram_size=0)
        SoCMini.__init__(self, platform, sys_clk_freq, **kwargs)

        # DRAM -------------------------------------------------------------------------------------
        dram_channels = None
        if with_dram:
            phy, module = (dram_phy or board_dram_phy(dram_platform))(platform, dram_clk_freq)
            dram_channels = add_dram(self, phy, module, dram_clk_freq, dma_channels, data_width)

        # PCIe -------------------------------------------------------------------------------------
        add_pcie_endpoint(self, platform, pcie_phy_cls,
            lanes                = lanes,
            data_width           = data_width,
            dma_channels         = dma_channels,
            max_pending_requests = max_pending_requests,
            bar0_size            = bar0_size,
            pcie_phy_kwargs      = pcie_phy_kwargs,
            dram_channels        = dram_channels,
        )

# DRAM ---------------------------------------------------------------------------------------------

def board_dram_clk_freq(platform_module):
    """The DRAM controller clock of a board at 1:4: the SODIMM's transfer rate / 8."""
    return platform_module.DDRAM_RATE / 8


def board_dram_module(platform_module, clk_freq):
    """The LiteDRAM module instance of a board's SODIMM (the platform's DDRAM_* constants) at 1:4."""
    import litedram.modules
    module_cls = getattr(litedram.modules, platform_module.DDRAM_MODULE)
    return module_cls(clk_freq, "1:4", speedgrade=platform_module.DDRAM_SPEEDGRADE)


def board_dram_phy(platform_module):
    """`dram_phy(platform, clk_freq) -> (phy, module)` for a board's SODIMM on its "ddram" pads."""
    def dram_phy(platform, clk_freq):
        import litedram.phy.s7ddrphy
        phy_cls = getattr(litedram.phy.s7ddrphy, platform_module.DDRAM_PHY)
        phy = phy_cls(platform.request("ddram"),
            memtype          = "DDR3",
            nphases          = 4,
            sys_clk_freq     = clk_freq,
            iodelay_clk_freq = platform_module.DDRAM_IODELAY_CLK_FREQ,
        )
        return phy, board_dram_module(platform_module, clk_freq)
    return dram_phy


def add_dram(soc, phy, module, dram_clk_freq, dma_channels, data_width, outstanding_reads=64):
    """LiteDRAM controller on `phy` in the `dram` clock domain (the CRG provides `dram` and `dram4x`),
    a DRAMDMAChannel per DMA channel (returned, for add_pcie_dma) and a memory test (LiteDRAM's BIST
    generator and checker) for bring-up. Every port crosses to the DMA's `sys` domain at the native width.

    `phy` is a LiteDRAM PHY written for the `sys`/`sys4x` domains (K7DDRPHY, V7DDRPHY, or the simulation
    model); `module` a LiteDRAM module instance for the board's SODIMM at 1:4.
    """
    from litedram.core import LiteDRAMCore
    from litedram.core.controller import ControllerSettings
    from litedram.frontend.bist import LiteDRAMBISTGenerator, LiteDRAMBISTChecker
    from hostlink.cores.dram.common import dram_size, native_port_cdc
    from hostlink.cores.dram.channel import DRAMDMAChannel
    from hostlink.cores.dram.csr_crossing import CSRActionCrossing

    soc.ddrphy = ClockDomainsRenamer({"sys": "dram", "sys4x": "dram4x"})(phy)
    soc.sdram  = ClockDomainsRenamer("dram")(LiteDRAMCore(phy,
        geom_settings   = module.geom_settings,
        timing_settings = module.timing_settings,
        clk_freq        = dram_clk_freq,
        # LiteDRAMController's default is one object shared by every controller of the process:
        # the last SoC built would overwrite the settings that the driver generation reads.
        controller_settings = ControllerSettings(),
    ))
    # The DFI injector's and the PHY's action registers (one command, one delay tap per write) must
    # reach the `dram` domain exactly once: the host's DDR3 bring-up depends on it.
    soc.dram_csr_crossing = CSRActionCrossing([soc.ddrphy, soc.sdram.dfii], "sys", "dram")
    size = dram_size(module)
    soc.add_constant("DRAM_SIZE", size)
    soc.add_constant("DRAM_NATIVE_BYTES", soc.sdram.crossbar.controller.data_width // 8)

    def port(mode):
        user_port, cdc = native_port_cdc(soc.sdram.crossbar.get_port(mode=mode), "dram")
        soc.submodules += cdc
        return user_port

    channels = []
    for i in range(dma_channels):
        channel = DRAMDMAChannel(port("write"), port("read"), data_width, size, outstanding=outstanding_reads)
        soc.add_module(name=f"pcie_dma{i}_dram", module=channel)
        channels.append(channel)
    soc.add_module(name="sdram_generator", module=LiteDRAMBISTGenerator(port("write")))
    soc.add_module(name="sdram_checker",   module=LiteDRAMBISTChecker(port("read")))
    return channels

# PCIe targets -------------------------------------------------------------------------------------

def add_pcie_arguments(parser, sys_clk_freq=None):
    """The command-line options every PCIe target takes, with the same defaults.

    `--sys-clk-freq` is added, with the board's default, when `sys_clk_freq` is given: a target
    whose clock depends on its other options adds its own.
    """
    if sys_clk_freq is not None:
        parser.add_target_argument("--sys-clk-freq", default=sys_clk_freq, type=float,
            help="System clock frequency.")
    parser.add_target_argument("--dma-channels", default=DEFAULT_DMA_CHANNELS, type=int,
        help="DMA channels (1 to 8).")
    parser.add_target_argument("--driver", action="store_true",
        help="Generate the kernel driver and user tools.")
    parser.add_target_argument("--with-dram", action="store_true",
        help="The board's DDR3 SODIMM as a DMA source and sink (doc/dram.md).")


def target_argument_parser(platform_cls, description):
    """LiteX's target command line for `platform_cls`, with the script's name and `description` in its help.

    LiteXArgumentParser (LiteX 2024.12) hands its keyword arguments to argparse as the program name, so its
    usage line would print them as a dict and the description would be lost.
    """
    parser = LiteXArgumentParser(platform=platform_cls)
    parser.prog        = os.path.basename(sys.argv[0])
    parser.description = description
    return parser


def pcie_target_main(soc_cls, platform_cls, description, sys_clk_freq, argv=None):
    """main() of a PCIe DMA target: options, SoC, generation, then build/load when Vivado is here.

    A parameter the SoC refuses (ValueError) ends the run: usage, the message, exit code 2.
    """
    parser = target_argument_parser(platform_cls, description)
    add_pcie_arguments(parser, sys_clk_freq)
    args = parser.parse_args(argv)
    log_to_stdout()

    try:
        soc = soc_cls(
            sys_clk_freq = args.sys_clk_freq,
            dma_channels = args.dma_channels,
            with_dram    = args.with_dram,
            **parser.soc_argdict
        )
    except ValueError as error:
        parser.error(str(error))
    builder = Builder(soc, **parser.builder_argdict)
    return finish_target(soc, builder, parser, args)

# UDP targets ---------------------------------------------------------------------------------------

def add_udp_arguments(parser):
    """The command-line options every Ethernet (UDP) target takes, with the same defaults."""
    parser.add_target_argument("--fpga-mac",  default="10:e2:d5:00:00:01", help="FPGA MAC address.")
    parser.add_target_argument("--fpga-ip",   default="192.168.1.50",      help="FPGA IPv4 address.")
    parser.add_target_argument("--host-mac",  default="10:e2:d5:00:00:02", help="Host MAC address.")
    parser.add_target_argument("--host-ip",   default="192.168.1.100",     help="Host IPv4 address.")
    parser.add_target_argument("--fpga-port", default=1234, type=int,      help="FPGA UDP port.")
    parser.add_target_argument("--host-port", default=1234, type=int,      help="Host UDP port.")
    parser.add_target_argument("--udp-mode",  default="generator", choices=["generator", "echo"],
        help="Payload source: packet generator, or echo of every received payload.")
    parser.add_target_argument("--no-arp",    action="store_true", help="Leave out the ARP responder.")
    parser.set_defaults(cpu_type="None", uart_name="uartbone", integrated_sram_size=0)


def udp_soc_kwargs(args):
    """BaseSoC keyword arguments from the options of add_udp_arguments()."""
    return dict(
        fpga_mac  = args.fpga_mac,
        fpga_ip   = args.fpga_ip,
        host_mac  = args.host_mac,
        host_ip   = args.host_ip,
        fpga_port = args.fpga_port,
        host_port = args.host_port,
        udp_mode  = args.udp_mode,
        with_arp  = not args.no_arp,
    )

# Main ---------------------------------------------------------------------------------------------

def log_to_stdout():
    """Send LiteX's progress log (configured by LiteXArgumentParser.parse_args) to stdout, so that stderr
    only carries what a user has to act on."""
    for handler in logging.root.handlers:
        if isinstance(handler, logging.StreamHandler):
            handler.setStream(sys.stdout)

def finish_target(soc, builder, parser, args, vendor_tool="vivado"):
    """Generate the gateware (and the driver with --driver), then build/load if the vendor tool is here.

    Without the vendor tool, --build and --load stop with one line saying what is missing and where the
    generated sources are, and a non-zero exit code.
    """
    tool_found = shutil.which(vendor_tool) is not None
    builder.build(**parser.toolchain_argdict, run=args.build and tool_found)

    if getattr(args, "driver", False):
        from hostlink.software.driver import generate_driver
        driver_dir = os.path.join(builder.output_dir, "driver")
        generate_driver(soc, driver_dir)
        print(f"Driver and user tools for this SoC generated in {driver_dir}")

    if (args.build or args.load) and not tool_found:
        action = "--build" if args.build else "--load"
        print(f"error: {action} needs '{vendor_tool}' on PATH (not found); "
              f"the generated sources are in {builder.gateware_dir}", file=sys.stderr)
        return 1

    if args.load:
        prog = soc.platform.create_programmer()
        prog.load_bitstream(builder.get_bitstream_filename(mode="sram"))
    return 0
