# This file is part of hostlink.
# Copyright (c) 2026 hostlink developers
# SPDX-License-Identifier: BSD-2-Clause

"""LitePCIe endpoint with hostlink's receive path (`tlp.TLPDepacketizer` or `tlp.CompletionDepacketizer`,
`TLPController`).

Same ports as `LitePCIeEndpoint` (`crossbar`, `phy`, `max_pending_requests`), so LitePCIe's Wishbone master,
MSI and DMA frontends attach to it unchanged. LitePCIe's packetizers are reused, and its request depacketizer
where host requests have their own stream (the VC709's CQ); host -> FPGA completions go through hostlink's
cores, which accept one beat per cycle across TLPs.
"""

from migen import *

from litex.gen import *

from litepcie.core.common import LitePCIeMasterInternalPort
from litepcie.core.crossbar import LitePCIeCrossbar
from litepcie.tlp.depacketizer import LitePCIeTLPDepacketizer
from litepcie.tlp.packetizer import LitePCIeTLPPacketizer

from litex.soc.interconnect import stream

from litepcie.common import completion_layout
from litepcie.phy.s7pciephy import S7PCIEPHY

from hostlink.cores.pcie.controller import TLPController
from hostlink.cores.pcie.faults import ReadFaultGuard
from hostlink.cores.pcie.tlp import CompletionDepacketizer, TLPDepacketizer

# Completion space ---------------------------------------------------------------------------------

# Completion space of `pcie_7x`'s receive buffer as LitePCIe configures the core (Buf_Opt_BMA, performance
# level high; Max_Payload_Size 512 bytes below 8 lanes, 256 at 8): its generated `c_fc_cplh` / `c_fc_cpld`
# parameters, CPLD in 16-byte credits. 512 bytes: 72 headers, 850 credits (RX RAM limit 0x7FF); 256 bytes:
# 72 headers, 370 credits (0x3FF). The endpoint advertises infinite completion credits (`c_cpl_infinite`),
# so reads in flight must stay within this space (PG054, receive flow control).
S7_COMPLETION_SPACE = {
    512: dict(headers=72, bytes=850*16),
    256: dict(headers=72, bytes=370*16),
}


def completion_space(phy):
    """(bytes, headers) of completions the PHY's hard block holds for the user logic, or (None, None).

    A PHY that names its space (`completion_space_bytes` / `completion_space_headers`, as `V7Gen3PCIEPHY`)
    gives it; LitePCIe's `S7PCIEPHY` (`pcie_7x`) does not, so it is looked up from the core's configuration.
    """
    space_bytes   = getattr(phy, "completion_space_bytes",   None)
    space_headers = getattr(phy, "completion_space_headers", None)
    if space_bytes is None and isinstance(phy, S7PCIEPHY):
        mps   = 256 if phy.nlanes == 8 else 512   # LitePCIe's pcie_7x Max_Payload_Size capability.
        space = S7_COMPLETION_SPACE[mps]
        space_bytes, space_headers = space["bytes"], space["headers"]
    return space_bytes, space_headers

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
            # The read fault guard arbitrates and dispatches between the ports and the controller (both
            # built with the endpoint, so that the SoC's fault counters can reach them before the crossbar
            # is finalized).
            self.guard.connect(self, self.controller.master_in, readers)
            masters.append(self.controller.master_out)
        writers = self.filter_masters(True, False)
        if writers:
            writer = LitePCIeMasterInternalPort(self.data_width, self.address_width)
            self.master_arbitrate_dispatch(writers, writer)
            masters.append(writer)
        self.master_arbitrate_dispatch(masters, self.master, dispatch=False)

# Endpoint -----------------------------------------------------------------------------------------

class PCIeEndpoint(LiteXModule):
    """With `completion_checks` (hostlink's SoCs), reads that fail (completion timeout after
    `timeout_cycles`, error or poisoned completions, see TLPController) end with `err`, completions for a
    tag not outstanding or another requester are dropped, and `crossbar.guard` (ReadFaultGuard) keeps a
    failed read's channel from delivering stale data. `err_events`: the controller's timeout and
    unexpected-completion pulses (sys domain), for the hard block's error reporting."""
    def __init__(self, phy, max_pending_requests=8, address_width=32, endianness="big",
        completion_checks=False, timeout_cycles=2_500_000):
        self.phy                  = phy
        self.max_pending_requests = max_pending_requests

        # # #

        if hasattr(phy, "source") and phy.data_width in (128, 256):
            # One stream carries both host requests and completions (pcie_7x).
            self.depacketizer = depacketizer = TLPDepacketizer(phy.data_width, endianness,
                address_mask=phy.bar0_mask)
            self.comb += phy.source.connect(depacketizer.sink)
            req_source, cmp_source = depacketizer.req_source, depacketizer.cmp_source
        elif hasattr(phy, "source"):
            # At 64 bits, LitePCIe's depacketizer splits them (its extracter keeps its idle cycle per TLP).
            self.depacketizer = depacketizer = LitePCIeTLPDepacketizer(phy.data_width, endianness,
                address_mask=phy.bar0_mask, capabilities=["REQUEST", "COMPLETION"])
            self.comb += phy.source.connect(depacketizer.sink)
            # LitePCIe sets `err` from the completion status only: a poisoned completion (EP) is an error
            # too.
            req_source, cmp_source = depacketizer.req_source, stream.Endpoint(completion_layout(phy.data_width))
            self.comb += [
                depacketizer.cmp_source.connect(cmp_source, omit={"err"}),
                cmp_source.err.eq(depacketizer.cmp_source.err | depacketizer.tlp_cmp.ep),
            ]
        else:
            self.req_depacketizer = req_depacketizer = LitePCIeTLPDepacketizer(phy.data_width, endianness,
                address_mask=phy.bar0_mask, capabilities=["REQUEST"])
            self.comb += phy.req_source.connect(req_depacketizer.sink)
            req_source = req_depacketizer.req_source
            if getattr(phy, "completion_source", None) is not None:
                # The PHY depacketizes its completions itself (V7Gen3PCIEPHY with RC straddling).
                cmp_source = phy.completion_source
            else:
                self.cmp_depacketizer = cmp_depacketizer = CompletionDepacketizer(phy.data_width, endianness)
                self.comb += phy.cmp_source.connect(cmp_depacketizer.sink)
                cmp_source = cmp_depacketizer.source

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
        # Where the hard block's completion space is known (bytes and headers of completions the block can
        # hold for the user logic), the reads in flight are kept within it (TLPController's `in_flight_*`).
        crossbar.completion_space_bytes, crossbar.completion_space_headers = completion_space(phy)
        crossbar.completion_buffer_bytes = None
        ring_bytes = TLPController.default_buffer_bytes(phy.data_width, max_pending_requests,
            crossbar.max_request_bytes)
        if crossbar.completion_space_bytes is not None:
            # A ring smaller than the block's space bounds the reads in flight itself.
            crossbar.completion_space_bytes = min(crossbar.completion_space_bytes, ring_bytes)
        crossbar.controller = TLPController(
            data_width           = phy.data_width,
            address_width        = address_width,
            max_pending_requests = max_pending_requests,
            max_request_bytes    = crossbar.max_request_bytes,
            buffer_bytes         = crossbar.completion_buffer_bytes,
            in_flight_bytes      = crossbar.completion_space_bytes,
            in_flight_headers    = crossbar.completion_space_headers,
            completion_checks    = completion_checks,
            timeout_cycles       = timeout_cycles,
            # The VC709's block fills in the requester ID itself (its `id` stays 0) and drops completions
            # for other requesters before they reach the user logic.
            check_requester_id   = completion_checks and not getattr(phy, "fills_in_requester_id", False),
        )
        if completion_checks:
            self.comb += crossbar.controller.requester_id.eq(phy.id)
        if max_pending_requests > 32:
            # Tags over 31 need the host's Extended Tag Field Enable, which the PHY must report.
            if not getattr(phy, "extended_tags_supported", False):
                raise ValueError(f"{max_pending_requests} reads in flight need Extended Tag, which this PHY "
                    f"does not support: at most 32")
            self.comb += crossbar.controller.extended_tags.eq(phy.extended_tags)
        # Most bytes of reads in flight: the tags' largest reads, within the block's completion space (a
        # header per read completion boundary each read spans).
        headers = crossbar.completion_space_headers
        self.reads_in_flight_bytes = min(b for b in [
            max_pending_requests*crossbar.max_request_bytes,
            crossbar.completion_space_bytes,
            None if headers is None else headers*crossbar.controller.rcb_bytes,
        ] if b is not None)
        crossbar.guard = ReadFaultGuard(max_pending_requests)
        self.comb += [
            # Host -> FPGA requests (BAR0) and their completions.
            req_source.connect(crossbar.phy_slave.sink),
            crossbar.phy_slave.source.connect(cmp_sink),
            # FPGA -> host requests (DMA) and their completions.
            crossbar.phy_master.source.connect(req_sink),
            cmp_source.connect(crossbar.phy_master.sink),
        ]
