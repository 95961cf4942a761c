# This file is part of hostlink.
# Copyright (c) 2026 hostlink developers
# SPDX-License-Identifier: BSD-2-Clause

"""What every PCIe DMA target does the same way: the DMA SoC composition and the end of main()."""

import logging
import os
import shutil
import sys

from migen import *

from litex.gen import *

from hostlink.cores.pcie.integration import add_pcie
from hostlink.cores.pcie.dma_pattern import DMAPatternGenerator, DMAPatternChecker

# PCIe DMA SoC -------------------------------------------------------------------------------------

def add_pcie_dma(soc, phy, dma_channels, max_pending_requests=8, led_pads=None):
    """LitePCIe endpoint, scatter-gather DMA channels with internal loopback, MSI, on `phy`.

    `max_pending_requests` reads of max-read-request size stay in flight: they must cover the link's
    bandwidth times the host's read latency (Gen2 x4: 8 x 512 B per ~1.3 us; Gen3 x8 needs 32).

    Each channel's user side has a pattern generator and checker (hostlink.cores.pcie.dma_pattern), used
    when its loopback is off, so each direction can be measured and checked alone.
    `led_pads`, when given, show link-up (LED 0) and DMA activity (LED 1).
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
        soc.comb += [
            generator.source.connect(dma.sink),
            dma.source.connect(checker.sink),
        ]
    if led_pads is not None:
        dma_active = Signal()
        soc.comb += dma_active.eq(Reduce("OR", [
            getattr(soc, f"pcie_dma{i}").reader.enable | getattr(soc, f"pcie_dma{i}").writer.enable
                for i in range(dma_channels)]))
        soc.comb += led_pads[0].eq(phy._link_status.fields.status)
        soc.comb += led_pads[1].eq(dma_active)

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
