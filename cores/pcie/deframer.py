# This file is part of hostlink.
# Copyright (c) 2026 hostlink developers
# SPDX-License-Identifier: BSD-2-Clause

"""BufferDeframer: host-to-FPGA packets (a DMA reader in packets flow, flow.py) to a stream with `last`.

The DMA reader moves whole buffers of the host's ring (the ring's fast path). In packets flow every buffer
the host writes starts with the framed buffer's header (hostlink.protocol.HEADER_FIELDS, the same as the
FPGA-to-host one): `magic`, `length` (data bytes after the header) and `flags` (HEADER_FLAG_END: this
buffer's data ends a packet); then `length` bytes of data; then padding to the buffer's end. The other
fields are the host's to fill and are not read.

    buffer:  | header (32 B) | data (`length` B) | padding ... |
    source:                  └─ data words; `last` on the word of the final byte when END, with `bytes`

So the user's core sees each host packet as a stream packet that ends, with `last`, at its exact final
byte: `bytes` gives the bytes of that word that hold data (0: the whole word). The host may split a
packet over several buffers (only the last with END); a buffer without END must then hold a whole number
of words (the host library writes multiples of 32 bytes), so that the packet's bytes stay contiguous in
the core's stream.

A buffer whose header is wrong (bad magic, a length past the buffer's end, or a partial word without END)
is dropped whole, and counted in `malformed`: nothing the core has already taken is touched, and the next
buffer is read as usual. A header of length 0 gives nothing (a stream has no empty packet). The deframer
never waits for anything but the core: the padding is taken as it comes.

With `enable` low (every flow but packets) it is a wire. `reset` (the reader's table reset) restarts it at
a buffer's start, as the DMA restarts the ring.
"""

import struct

from migen import *

from litex.gen import *

from litex.soc.interconnect import stream

from hostlink.protocol import HEADER_BYTES, HEADER_FIELDS, HEADER_FLAG_END, HEADER_MAGIC
from hostlink.cores.pcie.bytes_converter import packet_layout

# Header fields ------------------------------------------------------------------------------------

def _field(header, name):
    """The header field `name`'s bits in `header` (a Signal of HEADER_BYTES*8 bits)."""
    for field, offset, code in HEADER_FIELDS:
        if field == name:
            return header[8*offset:8*(offset + struct.calcsize("<" + code))]
    raise KeyError(name)

# Buffer Deframer ----------------------------------------------------------------------------------

class BufferDeframer(LiteXModule):
    """Host-to-FPGA buffers in packets flow to packets: drops each buffer's header and padding, puts `last`
    on a packet's final byte.

    Parameters
    ----------
    data_width : int
        The DMA's width in bits; it must divide the header's 256 bits (64, 128, 256).

    Interface attributes
    --------------------
    sink : stream.Endpoint([("data", data_width)]), i
        The DMA reader's words, whole buffers of `buffer_bytes`.
    source : stream.Endpoint(packet_layout(data_width)), o
        Packets' data; `last` with `bytes` (0: the whole word) at each packet's final byte.
    enable : Signal, i
        Packets flow; low, the deframer is a wire.
    reset : Signal, i
        The reader's table reset: the next word begins a buffer.
    buffer_bytes : Signal(24), i
        Bytes of each buffer of the ring.
    malformed : Signal, o
        A pulse per buffer dropped for its header.
    """
    def __init__(self, data_width):
        if data_width > HEADER_BYTES*8 or (HEADER_BYTES*8) % data_width:
            raise ValueError(f"packets flow needs a DMA width that divides {HEADER_BYTES*8} bits, "
                             f"not {data_width}")
        word_bytes = data_width//8
        byte_shift = log2_int(word_bytes)
        self.sink         = sink   = stream.Endpoint([("data", data_width)])   # i
        self.source       = source = stream.Endpoint(packet_layout(data_width))  # o
        self.enable       = Signal()     # i
        self.reset        = Signal()     # i
        self.buffer_bytes = Signal(24)   # i
        self.malformed    = Signal()     # o

        # # #

        header_words = HEADER_BYTES//word_bytes
        header       = Signal(HEADER_BYTES*8)
        index        = Signal(max=max(header_words, 2))
        position     = Signal(24)   # Words of the buffer taken.
        remaining    = Signal(24)   # Data bytes of the buffer still to give.
        end          = Signal()     # The buffer's data ends a packet.
        buffer_words = Signal(24)
        at_end       = Signal()     # The word taken now is the buffer's last.
        length       = Signal(32)
        length_end   = Signal(33)   # The data's end in the buffer: 33 bits, so a huge length cannot wrap.
        flags        = Signal(32)
        self.comb += [
            buffer_words.eq(self.buffer_bytes[byte_shift:]),
            at_end.eq(position + 1 == buffer_words),
            length.eq(_field(header, "length")),
            length_end.eq(length + HEADER_BYTES),
            flags.eq(_field(header, "flags")),
        ]
        taken = Signal()
        self.comb += taken.eq(sink.valid & sink.ready)
        self.sync += If(self.reset | ~self.enable,
            position.eq(0),
        ).Elif(taken,
            position.eq(Mux(at_end, 0, position + 1)),
        )

        # Control-Path (FSM).
        self.fsm = fsm = ResetInserter()(FSM(reset_state="HEADER"))
        self.comb += fsm.reset.eq(self.reset | ~self.enable)
        fsm.act("HEADER",
            If(~self.enable,
                sink.connect(source),
            ).Else(
                sink.ready.eq(1),
                If(sink.valid,
                    NextValue(index, index + 1),
                    If(index == header_words - 1,
                        NextValue(index, 0),
                        If(at_end,
                            NextState("HEADER"),   # A buffer no bigger than its header: nothing to give.
                        ).Else(
                            NextState("CHECK"),
                        ),
                    ),
                ),
            ),
        )
        # Data-Path: the header's words, least significant first, as they are taken.
        header_next = Signal(HEADER_BYTES*8)
        self.sync += If(fsm.ongoing("HEADER") & sink.valid & self.enable, header.eq(header_next))
        self.comb += header_next.eq(header)
        if header_words > 1:
            self.comb += Case(index, {i: header_next[i*data_width:(i + 1)*data_width].eq(sink.data)
                                      for i in range(header_words)})
        else:
            self.comb += header_next.eq(sink.data)
        fsm.act("CHECK",
            If((_field(header, "magic") != HEADER_MAGIC) |
               (length_end > self.buffer_bytes) |
               (~flags[0] & (length[:byte_shift] != 0)),
                self.malformed.eq(1),
                NextState("DROP"),
            ).Elif(length == 0,
                NextState("DROP"),
            ).Else(
                NextValue(remaining, length),
                NextValue(end, (flags & HEADER_FLAG_END) != 0),
                NextState("DATA"),
            ),
        )
        final = Signal()   # The word offered holds the buffer's final data byte.
        self.comb += final.eq(remaining <= word_bytes)
        fsm.act("DATA",
            sink.connect(source, omit={"first", "last", "bytes"}),
            source.last.eq(final & end),
            source.bytes.eq(Mux(final & end, remaining[:byte_shift], 0)),
            If(taken,
                NextValue(remaining, remaining - word_bytes),
                If(final,
                    If(at_end, NextState("HEADER")).Else(NextState("DROP")),
                ),
            ),
        )
        fsm.act("DROP",
            sink.ready.eq(1),
            If(taken & at_end, NextState("HEADER")),
        )
