# This file is part of hostlink.
# Copyright (c) 2026 hostlink developers
# SPDX-License-Identifier: BSD-2-Clause

"""Read-request tags and completion reordering for LitePCIe's crossbar, one completion beat per cycle.

Same job and ports as LitePCIe's `LitePCIeTLPController`: hand out a free tag to each read request, remember
the order the requests left in, buffer each tag's completions, and deliver them in request order to the
crossbar's read ports. Completions are written straight into the tag's region of one block RAM (LitePCIe
waits one cycle on the first beat of each completion). A tag returns to the free list when its data has been
delivered, so each region holds exactly one maximum read request.

Requests are assumed aligned to the data width, as LitePCIe's DMA needs: a request of max_request_size then
never returns more than max_request_size/(data_width/8) beats.
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

        # Completions into one buffer -------------------------------------------------------------
        # One block RAM holds a maximum read request per tag, at `tag * words`: completions are written
        # where their tag's next beat goes (a request's completions arrive in address order, those of
        # different tags interleave), and read out in request order. Per-tag buffers as FIFOs cost
        # LUT RAM, an output register and a 2**tag_bits-way multiplexer for every bit of the
        # completion layout: more than half of the whole SoC's LUTs and flip-flops at 32 tags.
        words      = max(2, max_request_size//(data_width//8))
        word_bits  = log2_int(words)
        tags       = 2**tag_bits
        fields     = [(name, len(getattr(cmp_in, name))) for name, _ in completion_layout(data_width).payload_layout
                      if name not in ("channel", "user_id")]
        layout     = fields + [("first", 1), ("last", 1)]
        stored     = Record(layout)
        mem        = Memory(len(stored), tags*words)
        wport      = mem.get_port(write_capable=True)
        # Read-first: a beat is only read once its tag's write count has passed it, never in the cycle
        # it is written, so the port needs no write-to-read bypass.
        rport      = mem.get_port(async_read=False, mode=READ_FIRST)
        self.specials += mem, wport, rport

        written  = Array(Signal(word_bits + 1, name=f"written{i}")  for i in range(tags)) # Beats in.
        complete = Array(Signal(name=f"complete{i}") for i in range(tags))                 # Last beat in.
        cmp_tag  = Signal(tag_bits)
        ours     = Signal()
        self.comb += [
            cmp_tag.eq(cmp_in.tag[:tag_bits]),
            ours.eq(cmp_in.tag[tag_bits:] == 0),
            cmp_in.ready.eq(1),   # Room is guaranteed: a tag is only issued with its buffer empty.
            wport.adr.eq(Cat(written[cmp_tag][:word_bits], cmp_tag)),
            wport.dat_w.eq(Cat(*[getattr(cmp_in, name) for name, _ in layout])),
            wport.we.eq(cmp_in.valid & ours),   # Not one of our tags: dropped.
        ]
        self.sync += If(cmp_in.valid & ours,
            written[cmp_tag].eq(written[cmp_tag] + 1),
            If(cmp_in.last & cmp_in.end,
                complete[cmp_tag].eq(1)
            )
        )

        # Completions out, in request order --------------------------------------------------------
        # The head request's beats are read as soon as they are written. The beat read with its tag
        # complete and no beat left is the request's last: the head moves on in the same cycle, so
        # consecutive requests stream without a bubble. Reads land one cycle later in a small FIFO;
        # a read is only issued with room for it there.
        out_depth = 4
        head      = issued.source
        read_ptr  = Signal(word_bits + 1)
        head_written  = Signal(word_bits + 1)
        head_complete = Signal()
        readable  = Signal()
        final     = Signal()
        do_read   = Signal()
        meta_layout = [("channel", 8), ("user_id", 8), ("free_tag", tag_bits), ("final", 1)]
        self.out_fifo = out_fifo = stream.SyncFIFO(fields + meta_layout, out_depth)
        read_valid = Signal()
        read_meta  = Record(meta_layout)
        self.comb += [
            head_written.eq(written[head.tag]),
            head_complete.eq(complete[head.tag]),
            readable.eq(head.valid & (read_ptr != head_written)),
            final.eq(head_complete & (read_ptr + 1 == head_written)),
            do_read.eq(readable & (out_fifo.level + read_valid < out_depth)),
            rport.adr.eq(Cat(read_ptr[:word_bits], head.tag)),
            head.ready.eq(do_read & final),
        ]
        self.sync += [
            If(do_read,
                read_ptr.eq(Mux(final, 0, read_ptr + 1))
            ),
            read_valid.eq(do_read),
            read_meta.channel.eq(head.channel),
            read_meta.user_id.eq(head.user_id),
            read_meta.free_tag.eq(head.tag),
            read_meta.final.eq(final),
        ]
        read_data = Record(layout)
        self.comb += [
            read_data.raw_bits().eq(rport.dat_r),
            out_fifo.sink.valid.eq(read_valid),
            *[getattr(out_fifo.sink, name).eq(getattr(read_data, name)) for name, _ in layout],  # With first/last.
            *[getattr(out_fifo.sink, name).eq(getattr(read_meta, name)) for name, _ in meta_layout],
            out_fifo.source.connect(cmp_out, omit={"free_tag", "final"}),
        ]

        # A tag is free again once its last beat has been delivered, and its buffer is then empty.
        delivered = Signal()
        self.comb += delivered.eq(out_fifo.source.valid & out_fifo.source.ready & out_fifo.source.final)
        self.comb += [
            If(filling,
                free_tags.sink.valid.eq(1),
                free_tags.sink.tag.eq(fill_count),
            ).Elif(delivered,
                free_tags.sink.valid.eq(1),
                free_tags.sink.tag.eq(out_fifo.source.free_tag),
            ),
        ]
        self.sync += If(delivered,
            written[out_fifo.source.free_tag].eq(0),
            complete[out_fifo.source.free_tag].eq(0),
        )
