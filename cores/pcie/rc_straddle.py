# This file is part of hostlink.
# Copyright (c) 2026 hostlink developers
# SPDX-License-Identifier: BSD-2-Clause

"""Completions from the Gen3 block's straddled Requester Completion (RC) interface, header out of band.

With RC straddling (`AXISTEN_IF_RC_STRADDLE`, 256 bits), `pcie3_7x` may start a completion in the upper half of
a beat (DW4) when the previous one ended in the lower half (DW0-3). A completion then takes its descriptor (3
DWs) plus its payload, rounded up to half beats: a 64-byte completion 2.5 beats on average instead of 3, a
256-byte one 8.5 instead of 9. LitePCIe's RC adapter (`m_axis_rc_adapt`) takes one completion per beat, so this
core replaces it and `CompletionDepacketizer` on that path: it reads the RC descriptor itself and emits LitePCIe's
`completion_layout` (header fields beside the data), a 64-byte completion as 2 beats.

Each beat holds the end of the completion in progress (C), a completion starting at DW0 (X), and one starting at
DW4 (Y), in that order, each optional. The payload of a completion starting at DW0 begins at DW3, one starting at
DW4 at DW7, so each output beat is the previous input beat from that DW on followed by the current beat's first 3
or 7 DWs. A beat needs up to four output beats:

- C's next output beat (previous beat + this one), whenever C is in progress;
- C's flush: C ends with payload at or past its shift (DW3 or DW7), which needs one more output beat;
- X alone: X starts and ends in this beat;
- Y alone: Y starts and ends in this beat (a header-only or 1-DW completion).

The beat is taken (`tready`) with its last output beat, so a beat with more than one waits a cycle for each
extra. A completion of 16 n DWs (whole 64-byte blocks) never needs a flush, wherever it starts, and no beat
holding one waits: what a host sends, which splits reads on 64-byte boundaries, but for the first and last piece
of an unaligned read. A beat waits where a completion of 8 n + 1 to 8 n + 5 DWs ends (its flush), or where it ends
two completions (a short one and one of 0 or 1 DW).

RC descriptor (PG023, the same on UltraScale, PG156): DW0 lower address [11:0], error code [15:12], byte count
[28:16]; DW1 dword count [10:0], completion status [13:11], poisoned [14], requester ID [31:16]; DW2 tag [7:0],
completer ID [23:8]. RC tuser: byte enables [31:0], is_sof_0 [32], is_sof_1 [33], is_eof_0 [37:34] and
is_eof_1 [41:38] (valid bit, then the end DW), discontinue [42].
"""

from migen import *

from litex.gen import *

from litex.soc.interconnect import stream

from litepcie.common import completion_layout

DATA_WIDTH = 256
DWS        = DATA_WIDTH//32
HALF       = DWS//2           # A straddled completion starts at DW0 or at DW4.
DESC_DWS   = 3                # RC descriptor.


def descriptor_fields(desc):
    """LitePCIe completion fields from a 96-bit RC descriptor (`desc`: DW0 in bits 31:0)."""
    dw0, dw1, dw2 = desc[0:32], desc[32:64], desc[64:96]
    dword_count = dw1[0:11]
    byte_count  = dw0[16:29]
    return dict(
        req_id = dw1[16:32],
        cmp_id = dw2[8:24],
        adr    = dw0[0:7],       # LitePCIe's completion header carries 7 bits of lower address.
        len    = dword_count[0:10],
        # Last completion of its read: its dwords are what the read still owed (DW-aligned reads).
        end    = dword_count == byte_count[2:],
        # Completion status, poisoned (EP), or an error code from the block (poisoned, or 1001: its own
        # completion timeout, whose descriptor has no status).
        err    = (dw1[11:14] != 0) | dw1[14] | (dw0[12:16] != 0),
        tag    = dw2[0:8],
    )


class RCStraddleDepacketizer(LiteXModule):
    """`pcie3_7x` RC (256 bits, straddled or not) -> LitePCIe's `completion_layout`, little-endian data.

    `tdata`, `tkeep` (per DW), `tuser` (75 bits), `tvalid` are the block's `m_axis_rc_*` outputs, `tready` its
    input. Without straddling the block starts every completion at DW0 and sets is_sof_0 / is_eof_0 the same.
    """
    def __init__(self):
        self.tdata  = tdata  = Signal(DATA_WIDTH)   # i
        self.tkeep  = tkeep  = Signal(DWS)          # i
        self.tuser  = tuser  = Signal(75)           # i
        self.tvalid = tvalid = Signal()             # i
        self.tready = tready = Signal()             # o
        self.source = source = stream.Endpoint(completion_layout(DATA_WIDTH))  # o

        # # #

        sof0, sof1     = tuser[32], tuser[33]
        eof0, eof0_ptr = tuser[34], tuser[35:38]
        eof1, eof1_ptr = tuser[38], tuser[39:42]

        def dws(sig, start, stop):
            return sig[32*start:32*stop]

        # State: the completion in progress (C).
        active   = Signal()
        c_shift7 = Signal()             # C started at DW4: its payload starts at DW7 (else DW3).
        c_desc   = Signal(32*DESC_DWS)
        c_first  = Signal()             # C's next output beat is its first.
        prev     = Signal(DATA_WIDTH)   # Previous input beat.

        # What this beat holds.
        x, y           = Signal(), Signal()
        c_ends, x_ends = Signal(), Signal()
        y_ends         = Signal()
        c_shift        = Signal(4)
        c_flush_needed = Signal()
        self.comb += [
            # A completion starting while none is in progress starts at DW0 unless the lower half is empty.
            x.eq(tvalid & sof0 & ~active & tkeep[0]),
            y.eq(tvalid & ((sof0 & (active | ~tkeep[0])) | sof1)),
            c_ends.eq(tvalid & active & eof0),
            x_ends.eq(x & eof0),
            # Y ends first in the beat unless C or X ended before it.
            y_ends.eq(y & Mux(active | x, eof1, eof0)),
            c_shift.eq(Mux(c_shift7, HALF + DESC_DWS, DESC_DWS)),
            c_flush_needed.eq(c_ends & (eof0_ptr >= c_shift)),
        ]

        # Output beats this input beat needs, in order, and those already sent.
        C_OUT, C_FLUSH, X_OUT, Y_OUT = range(4)
        pending = Signal(4)
        sent    = Signal(4)
        self.comb += [
            pending[C_OUT].eq(tvalid & active),
            pending[C_FLUSH].eq(c_flush_needed),
            pending[X_OUT].eq(x_ends),
            pending[Y_OUT].eq(y_ends),
        ]
        todo = Signal(4)
        self.comb += todo.eq(pending & ~sent)
        # The first output beat still to send, one-hot.
        current = Signal(4)
        self.comb += [
            If(todo[C_OUT],     current.eq(1 << C_OUT)
            ).Elif(todo[C_FLUSH], current.eq(1 << C_FLUSH)
            ).Elif(todo[X_OUT],   current.eq(1 << X_OUT)
            ).Elif(todo[Y_OUT],   current.eq(1 << Y_OUT)),
        ]
        last_to_send = Signal()
        self.comb += last_to_send.eq((todo & ~current) == 0)

        # Output beat.
        out_desc = Signal(32*DESC_DWS)
        self.comb += [
            source.valid.eq(todo != 0),
            If(current[C_OUT],
                out_desc.eq(c_desc),
                source.first.eq(c_first),
                source.last.eq(c_ends & ~c_flush_needed),
                If(c_shift7,
                    source.dat.eq(Cat(dws(prev, HALF + DESC_DWS, DWS), dws(tdata, 0, HALF + DESC_DWS))),
                ).Else(
                    source.dat.eq(Cat(dws(prev, DESC_DWS, DWS), dws(tdata, 0, DESC_DWS))),
                ),
            ).Elif(current[C_FLUSH],
                out_desc.eq(c_desc),
                source.last.eq(1),
                If(c_shift7,
                    source.dat.eq(dws(tdata, HALF + DESC_DWS, DWS)),
                ).Else(
                    source.dat.eq(dws(tdata, DESC_DWS, DWS)),
                ),
            ).Elif(current[X_OUT],
                out_desc.eq(dws(tdata, 0, DESC_DWS)),
                source.first.eq(1),
                source.last.eq(1),
                source.dat.eq(dws(tdata, DESC_DWS, DWS)),
            ).Else(
                out_desc.eq(dws(tdata, HALF, HALF + DESC_DWS)),
                source.first.eq(1),
                source.last.eq(1),
                source.dat.eq(dws(tdata, HALF + DESC_DWS, DWS)),
            ),
        ]
        for name, value in descriptor_fields(out_desc).items():
            self.comb += getattr(source, name).eq(value)

        # Input beat: taken with its last output beat, or at once if it needs none.
        self.comb += tready.eq((todo == 0) | (source.ready & last_to_send))
        self.sync += [
            If(tvalid & tready,
                sent.eq(0),
                prev.eq(tdata),
                If(y & ~y_ends,
                    active.eq(1),
                    c_shift7.eq(1),
                    c_desc.eq(dws(tdata, HALF, HALF + DESC_DWS)),
                    c_first.eq(1),
                ).Elif(x & ~x_ends,
                    active.eq(1),
                    c_shift7.eq(0),
                    c_desc.eq(dws(tdata, 0, DESC_DWS)),
                    c_first.eq(1),
                ).Elif(active & ~c_ends,
                    c_first.eq(0),
                ).Else(
                    active.eq(0),
                ),
            ).Elif(source.valid & source.ready,
                sent.eq(sent | current),
                If(current[C_OUT], c_first.eq(0)),
            )
        ]
