# This file is part of hostlink.
# Copyright (c) 2026 hostlink developers
# SPDX-License-Identifier: BSD-2-Clause

"""Read-request tags and completion reordering for LitePCIe's crossbar, one completion beat per cycle.

Same job and ports as LitePCIe's `LitePCIeTLPController`: hand out a free tag to each read request, remember
the order the requests left in, buffer each tag's completions, and deliver them in request order to the
crossbar's read ports. Completions flow straight into the buffer their tag selects (LitePCIe waits one cycle on
the first beat of each completion). A tag returns to the free list when its data has been delivered, so each
buffer holds exactly one maximum read request.
"""

from migen import *

from litex.gen import *

from litex.soc.interconnect import stream

from litepcie.common import completion_layout
from litepcie.core.common import LitePCIeMasterInternalPort
from litepcie.tlp.common import max_request_size

# TLP Controller -----------------------------------------------------------------------------------

class TLPController(LiteXModule):
    def __init__(self, data_width, address_width, max_pending_requests):
        if max_pending_requests not in [1, 2, 4, 8, 16, 32, 64, 128]:
            raise ValueError(f"reads in flight must be a power of two from 1 to 128, not {max_pending_requests!r}")
        self.master_in  = LitePCIeMasterInternalPort(data_width, address_width)  # Towards the user ports.
        self.master_out = LitePCIeMasterInternalPort(data_width, address_width)  # Towards the PHY.

        # # #

        req_in,  req_out = self.master_in.sink,    self.master_out.sink
        cmp_in,  cmp_out = self.master_out.source, self.master_in.source
        tag_bits = max(1, log2_int(max_pending_requests))

        # Free tags, filled with every tag after reset; a tag returns when its request is complete.
        self.free_tags = free_tags = stream.SyncFIFO([("tag", tag_bits)], max_pending_requests, buffered=True)
        # Tags in the order their requests left: completions are delivered in this order.
        self.issued = issued = stream.SyncFIFO([("tag", tag_bits), ("channel", 8), ("user_id", 8)],
            max_pending_requests, buffered=True)

        fill_count = Signal(tag_bits + 1)
        filling    = Signal()
        self.comb += filling.eq(fill_count != max_pending_requests)
        self.sync += If(filling, fill_count.eq(fill_count + 1))

        # Requests ---------------------------------------------------------------------------------
        # Writes pass; a read leaves only with a free tag and room to remember it.
        can_read = Signal()
        pass_req = Signal()
        self.comb += [
            can_read.eq(free_tags.source.valid & issued.sink.ready & ~filling),
            pass_req.eq(req_in.we | can_read),
            req_in.connect(req_out, omit={"valid", "ready", "tag"}),
            req_out.valid.eq(req_in.valid & pass_req),
            req_in.ready.eq(req_out.ready & pass_req),
            req_out.tag.eq(Mux(req_in.we, req_in.tag, free_tags.source.tag)),
            issued.sink.tag.eq(free_tags.source.tag),
            issued.sink.channel.eq(req_in.channel),
            issued.sink.user_id.eq(req_in.user_id),
            If(req_out.valid & req_out.ready & req_out.last & ~req_in.we,
                free_tags.source.ready.eq(1),
                issued.sink.valid.eq(1),
            ),
        ]

        # Completions into per-tag buffers ---------------------------------------------------------
        words  = max(2, max_request_size//(data_width//8))
        buffers = [stream.SyncFIFO(completion_layout(data_width), words, buffered=True)
            for _ in range(max_pending_requests)]
        self.submodules += buffers
        ours = Signal()
        self.comb += ours.eq(cmp_in.tag[tag_bits:] == 0)
        self.comb += If(ours,
            Case(cmp_in.tag[:tag_bits], {i: cmp_in.connect(b.sink) for i, b in enumerate(buffers)}),
        ).Else(
            cmp_in.ready.eq(1),   # Not one of our tags: dropped.
        )
        # Completions out, in request order --------------------------------------------------------
        delivered = Signal()
        self.comb += delivered.eq(cmp_out.valid & cmp_out.ready & cmp_out.last & cmp_out.end)
        self.comb += [
            If(issued.source.valid,
                Case(issued.source.tag, {i: b.source.connect(cmp_out, omit={"channel", "user_id"}) for i, b in enumerate(buffers)}),
            ),
            cmp_out.channel.eq(issued.source.channel),
            cmp_out.user_id.eq(issued.source.user_id),
            issued.source.ready.eq(delivered),
            # A tag is free again once its data has left its buffer, so a buffer never holds more than
            # one request (freeing it on arrival, as LitePCIe does, needs 4x deeper buffers).
            If(filling,
                free_tags.sink.valid.eq(1),
                free_tags.sink.tag.eq(fill_count),
            ).Elif(delivered,
                free_tags.sink.valid.eq(1),
                free_tags.sink.tag.eq(issued.source.tag),
            ),
        ]
