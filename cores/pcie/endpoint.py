# This file is part of hostlink.
# Copyright (c) 2026 hostlink developers
# SPDX-License-Identifier: BSD-2-Clause

"""LitePCIe endpoint with hostlink's completion path (`tlp.CompletionDepacketizer`, `TLPController`).

Same ports as `LitePCIeEndpoint` (`crossbar`, `phy`, `max_pending_requests`), so LitePCIe's Wishbone master,
MSI and DMA frontends attach to it unchanged. LitePCIe's packetizers and request depacketizer are reused;
host -> FPGA completions go through hostlink's cores, which accept one beat per cycle across TLPs.
"""

from migen import *

from litex.gen import *

from litepcie.core.common import LitePCIeMasterInternalPort
from litepcie.core.crossbar import LitePCIeCrossbar
from litepcie.tlp.depacketizer import LitePCIeTLPDepacketizer
from litepcie.tlp.packetizer import LitePCIeTLPPacketizer

from hostlink.cores.pcie.controller import TLPController
from hostlink.cores.pcie.tlp import CompletionDepacketizer

# Crossbar -----------------------------------------------------------------------------------------

class PCIeCrossbar(LitePCIeCrossbar):
    """LitePCIe's crossbar (ports, arbitration, dispatch) with `TLPController` on the read path."""
    def do_finalize(self):
        if self.user_slaves:
            self.slave_dispatch_arbitrate(self.user_slaves, self.slave)
        if not self.user_masters:
            return
        masters = []
        # Ports that read share the tag controller; write-only ports bypass it, so writes never wait for
        # a free tag.
        readers = self.filter_masters(False, True) + self.filter_masters(False, False)
        if readers:
            self.controller = TLPController(
                data_width           = self.data_width,
                address_width        = self.address_width,
                max_pending_requests = self.max_pending_requests,
                max_request_bytes    = self.max_request_bytes,
                buffer_bytes         = self.completion_buffer_bytes,
                in_flight_bytes      = self.completion_space_bytes,
                in_flight_headers    = self.completion_space_headers,
            )
            self.master_arbitrate_dispatch(readers, self.controller.master_in)
            masters.append(self.controller.master_out)
        writers = self.filter_masters(True, False)
        if writers:
            writer = LitePCIeMasterInternalPort(self.data_width, self.address_width)
            self.master_arbitrate_dispatch(writers, writer)
            masters.append(writer)
        self.master_arbitrate_dispatch(masters, self.master, dispatch=False)

# Endpoint -----------------------------------------------------------------------------------------

class PCIeEndpoint(LiteXModule):
    def __init__(self, phy, max_pending_requests=8, address_width=32, endianness="big"):
        self.phy                  = phy
        self.max_pending_requests = max_pending_requests

        # # #

        if hasattr(phy, "source"):
            # One stream carries both host requests and completions: LitePCIe's depacketizer splits
            # them (its extracter keeps its idle cycle per TLP).
            self.depacketizer = depacketizer = LitePCIeTLPDepacketizer(phy.data_width, endianness,
                address_mask=phy.bar0_mask, capabilities=["REQUEST", "COMPLETION"])
            self.comb += phy.source.connect(depacketizer.sink)
            req_source, cmp_source = depacketizer.req_source, depacketizer.cmp_source
        else:
            self.req_depacketizer = req_depacketizer = LitePCIeTLPDepacketizer(phy.data_width, endianness,
                address_mask=phy.bar0_mask, capabilities=["REQUEST"])
            self.cmp_depacketizer = cmp_depacketizer = CompletionDepacketizer(phy.data_width, endianness)
            self.comb += [
                phy.req_source.connect(req_depacketizer.sink),
                phy.cmp_source.connect(cmp_depacketizer.sink),
            ]
            req_source, cmp_source = req_depacketizer.req_source, cmp_depacketizer.source

        if hasattr(phy, "sink"):
            self.packetizer = packetizer = LitePCIeTLPPacketizer(phy.data_width, endianness, address_width,
                capabilities=["REQUEST", "COMPLETION"])
            self.comb += packetizer.source.connect(phy.sink)
            req_sink, cmp_sink = packetizer.req_sink, packetizer.cmp_sink
        else:
            self.req_packetizer = req_packetizer = LitePCIeTLPPacketizer(phy.data_width, endianness,
                address_width, capabilities=["REQUEST"])
            self.cmp_packetizer = cmp_packetizer = LitePCIeTLPPacketizer(phy.data_width, endianness,
                address_width, capabilities=["COMPLETION"])
            self.comb += [
                req_packetizer.source.connect(phy.req_sink),
                cmp_packetizer.source.connect(phy.cmp_sink),
            ]
            req_sink, cmp_sink = req_packetizer.req_sink, cmp_packetizer.cmp_sink

        self.crossbar = crossbar = PCIeCrossbar(phy.data_width, address_width, max_pending_requests)
        # Largest read the PHY lets the DMA issue (LitePCIe's PHYs stop at 512 bytes): the TLP controller's
        # completion buffer must take one.
        crossbar.max_request_bytes = getattr(phy, "max_request_limit", 512)
        # A PHY that names its hard block's completion space (bytes of completions the block can hold for
        # the user logic) gets the reads in flight kept within it (TLPController's `in_flight_bytes`).
        crossbar.completion_space_bytes   = getattr(phy, "completion_space_bytes", None)
        crossbar.completion_space_headers = getattr(phy, "completion_space_headers", None)
        crossbar.completion_buffer_bytes = None
        self.comb += [
            # Host -> FPGA requests (BAR0) and their completions.
            req_source.connect(crossbar.phy_slave.sink),
            crossbar.phy_slave.source.connect(cmp_sink),
            # FPGA -> host requests (DMA) and their completions.
            crossbar.phy_master.source.connect(req_sink),
            cmp_source.connect(crossbar.phy_master.sink),
        ]
