# This file is part of hostlink.
# Copyright (c) 2026 hostlink developers
# SPDX-License-Identifier: BSD-2-Clause

"""What every target's command line does the same way: options, main()'s end.

The SoC integration the targets share lives in the cores: `hostlink.cores.pcie.integration` (the PCIe DMA
SoC, add_pcie_dma) and `hostlink.cores.dram.integration` (add_dram, the board DRAM helpers).
"""

import argparse
import dataclasses
import logging
import os
import shutil
import sys

from litex.soc.integration.builder import Builder
from litex.build.parser import LiteXArgumentParser

from hostlink.cores.pcie.integration import DEFAULT_DMA_CHANNELS

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
    parser.add_target_argument("--driver-name", type=driver_name_argument, metavar="NAME",
        help="Generate the driver (as --driver) named NAME: module NAME.ko, device nodes /dev/NAME0, ...; "
             "a name per SoC lets the drivers of several SoCs serve one host (default litepcie, doc/driver.md).")
    parser.add_target_argument("--with-dram", action="store_true",
        help="The board's DDR3 SODIMM as a DMA source and sink (doc/dram.md).")
    parser.add_target_argument("--user-core", metavar="MODULE:CLASS",
        help="Your core (MODULE:CLASS, FILE.py:CLASS or FILE.v:MODULE) on a DMA channel's user port, in its own clock from an "
             "MMCM (doc/user_cores.md; e.g. examples.accelerator:Accelerator).")
    parser.add_target_argument("--user-channel", default=0, type=int, metavar="N",
        help="The DMA channel the user core takes (default 0).")


def driver_name_argument(text):
    """--driver-name's value, checked as hostlink.software.driver.naming does (one line if refused)."""
    from hostlink.software.driver.naming import check_driver_name
    try:
        return check_driver_name(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error))


def user_core_argument(args):
    """The SoCs' `user_core` from the command line: None without --user-core."""
    return {"spec": args.user_core, "channel": args.user_channel} if args.user_core else None


def pcie_soc_kwargs(args):
    """BaseSoC keyword arguments from the options of add_pcie_arguments() but --sys-clk-freq, whose default
    is the target's."""
    return dict(
        dma_channels = args.dma_channels,
        with_dram    = args.with_dram,
        user_core    = user_core_argument(args),
    )


def target_argument_parser(platform_cls, description):
    """LiteX's target command line for `platform_cls`, with the script's name and `description` in its help.

    LiteXArgumentParser (LiteX 2024.12) hands its keyword arguments to argparse as the program name, so its
    usage line would print them as a dict and the description would be lost.
    """
    parser = LiteXArgumentParser(platform=platform_cls)
    parser.prog        = os.path.basename(sys.argv[0])
    parser.description = description
    return parser


def pcie_target_main(soc_cls, platform_cls, description, sys_clk_freq, argv=None, add_arguments=None):
    """main() of a PCIe DMA target: options, SoC, generation, then build/load when Vivado is here.

    A parameter the SoC refuses (ValueError) ends the run: usage, the message, exit code 2. `add_arguments`
    (parser) adds a board's own options.
    """
    parser = target_argument_parser(platform_cls, description)
    add_pcie_arguments(parser, sys_clk_freq)
    if add_arguments is not None:
        add_arguments(parser)
    args = parser.parse_args(argv)
    log_to_stdout()

    # The SoC is made here, not in a helper shared with the KC705's main(): migen names the signals it
    # cannot name otherwise after the function that makes the SoC (`pcie_target_main_clkin`), in the
    # Verilog and the constraints.
    try:
        soc = soc_cls(
            sys_clk_freq = args.sys_clk_freq,
            **pcie_soc_kwargs(args),
            **parser.soc_argdict
        )
    except ValueError as error:
        parser.error(str(error))
    builder = Builder(soc, **parser.builder_argdict)
    return finish_target(soc, builder, parser, args)

# UDP targets ---------------------------------------------------------------------------------------

_UDP_SIDES         = {"fpga": "FPGA", "host": "Host"}
_UDP_ADDRESS_KINDS = {"mac": "MAC address", "ip": "IPv4 address", "port": "UDP port"}

def add_udp_arguments(parser):
    """The command-line options every Ethernet (UDP) target takes, with the same defaults."""
    # Imported here: LiteEth, imported with the UDP cores, creates a migen object at import (a number of
    # migen's global count), which would rename signals in the Verilog of the PCIe targets that import
    # this module.
    from hostlink.cores.udp.common import UDPAddresses
    # One option per UDPAddresses field (--fpga-mac ... --host-port), its default from there.
    for field in dataclasses.fields(UDPAddresses):
        side, kind = field.name.split("_")
        parser.add_target_argument(f"--{side}-{kind}", default=field.default, type=field.type,
            help=f"{_UDP_SIDES[side]} {_UDP_ADDRESS_KINDS[kind]}.")
    parser.add_target_argument("--udp-mode",  default="generator", choices=["generator", "echo"],
        help="Payload source: packet generator, or echo of every received payload.")
    parser.add_target_argument("--no-arp",    action="store_true", help="Leave out the ARP responder.")
    parser.set_defaults(cpu_type="None", uart_name="uartbone", integrated_sram_size=0)


def udp_soc_kwargs(args):
    """BaseSoC keyword arguments from the options of add_udp_arguments()."""
    from hostlink.cores.udp.common import UDPAddresses   # Imported here: see add_udp_arguments().
    return dict(
        addresses = UDPAddresses(**{field.name: getattr(args, field.name)
                                    for field in dataclasses.fields(UDPAddresses)}),
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

    if getattr(args, "driver", False) or getattr(args, "driver_name", None):
        from hostlink.software.driver import DEFAULT_DRIVER_NAME, generate_driver
        driver_dir = os.path.join(builder.output_dir, "driver")
        name = args.driver_name or DEFAULT_DRIVER_NAME
        generate_driver(soc, driver_dir, name=name)
        print(f"Driver {name} and user tools for this SoC generated in {driver_dir}")

    if (args.build or args.load) and not tool_found:
        action = "--build" if args.build else "--load"
        print(f"error: {action} needs '{vendor_tool}' on PATH (not found); "
              f"the generated sources are in {builder.gateware_dir}", file=sys.stderr)
        return 1

    if args.load:
        prog = soc.platform.create_programmer()
        prog.load_bitstream(builder.get_bitstream_filename(mode="sram"))
    return 0
