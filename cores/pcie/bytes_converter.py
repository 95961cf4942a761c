# This file is part of hostlink.
# Copyright (c) 2026 hostlink developers
# SPDX-License-Identifier: BSD-2-Clause

"""BytesConverter: a stream width converter that keeps a packet's exact length, for the user ports.

A packet's final word may be partial: its `bytes` field gives the bytes of a word with `last` that hold
data (0: the whole word). LiteX's `stream.Converter` keeps `first`/`last` but not that count: a
down-converter would send every sub-word of a partial final word (bytes that are not the packet's), an
up-converter a word whose unused part is stale. `BytesConverter` converts as LiteX's does (the least
significant part first) and carries `bytes`:

- down (wider to narrower): the sub-words past the final byte are dropped; `last` goes on the last
  sub-word that holds data, with its own count of bytes;
- up (narrower to wider): a `last` ends the wider word early (LiteX's converter), and its `bytes` counts
  the sub-words taken and the bytes of the last one;
- equal widths: a wire.

Words without `last` are whole whatever their `bytes` says.
"""

from migen import *

from litex.gen import *

from litex.soc.interconnect import stream

# Layout -------------------------------------------------------------------------------------------

def bytes_width(data_width):
    """Bits of the `bytes` field of a stream of `data_width` bits (at least 1: Endpoints have no empty
    fields)."""
    return max(1, log2_int(data_width//8))

def packet_layout(data_width):
    """A user port's stream: `data` and `bytes` (of a word with `last`: bytes that hold data, 0 = all)."""
    return [("data", data_width), ("bytes", bytes_width(data_width))]

# Bytes Converter ----------------------------------------------------------------------------------

class BytesConverter(LiteXModule):
    """Converts a packet stream from `from_width` to `to_width` bits, keeping each packet's exact length.

    Parameters
    ----------
    from_width, to_width : int
        Bits, whole bytes; one a power-of-two multiple of the other.

    Interface attributes
    --------------------
    sink : stream.Endpoint(packet_layout(from_width)), i
    source : stream.Endpoint(packet_layout(to_width)), o
    """
    def __init__(self, from_width, to_width):
        for width in (from_width, to_width):
            assert width % 8 == 0 and width >= 8, width
        ratio = max(from_width, to_width)//min(from_width, to_width)
        assert ratio*min(from_width, to_width) == max(from_width, to_width) and ratio & (ratio - 1) == 0
        self.sink   = sink   = stream.Endpoint(packet_layout(from_width))   # i
        self.source = source = stream.Endpoint(packet_layout(to_width))     # o

        # # #

        from_bytes = from_width//8
        to_bytes   = to_width//8
        if from_width == to_width:
            self.comb += sink.connect(source)
        elif from_width > to_width:
            self._down(from_bytes, to_bytes, ratio)
        else:
            self._up(from_width, to_width, from_bytes, to_bytes, ratio)

    def _down(self, from_bytes, to_bytes, ratio):
        sink, source = self.sink, self.source
        to_shift = log2_int(to_bytes)
        index    = Signal(max=ratio)
        rounded  = Signal(max=from_bytes + to_bytes)   # Wide enough for the sum: Verilog sizes it so.
        chunks   = Signal(max=ratio + 1)   # Sub-words of the current word that hold data.
        final    = Signal()                # `index` is its last.
        self.comb += [
            rounded.eq(sink.bytes + (to_bytes - 1)),
            If(sink.last & (sink.bytes != 0),
                chunks.eq(rounded >> to_shift),
            ).Else(
                chunks.eq(ratio),
            ),
            final.eq(index == (chunks - 1)),
            source.valid.eq(sink.valid),
            source.data.eq(Array([sink.data[i*to_bytes*8:(i + 1)*to_bytes*8] for i in range(ratio)])[index]),
            source.first.eq(sink.first & (index == 0)),
            source.last.eq(sink.last & final),
            # Bytes of a partial final sub-word: the word's count modulo the sub-word (0: it is whole).
            source.bytes.eq(Mux(source.last, sink.bytes[:to_shift] if to_shift else 0, 0)),
            sink.ready.eq(source.ready & final),
        ]
        self.sync += If(source.valid & source.ready,
            If(final, index.eq(0)).Else(index.eq(index + 1)),
        )

    def _up(self, from_width, to_width, from_bytes, to_bytes, ratio):
        sink, source = self.sink, self.source
        self.converter = converter = stream.Converter(from_width, to_width, report_valid_token_count=True)
        last_bytes = Signal(max=from_bytes + 1)   # Bytes of the final sub-word taken.
        out_bytes  = Signal(max=to_bytes + 1)
        self.comb += [
            sink.connect(converter.sink, omit={"bytes"}),
            converter.source.connect(source, omit={"valid_token_count", "bytes"}),
            out_bytes.eq((converter.source.valid_token_count - 1)*from_bytes + last_bytes),
            source.bytes.eq(Mux(source.last & (out_bytes != to_bytes), out_bytes, 0)),
        ]
        # LiteX's up-converter takes no word after a `last` until its wider word has gone, so the count of
        # the word taken with `last` stays until then.
        self.sync += If(sink.valid & sink.ready & sink.last,
            last_bytes.eq(Mux(sink.bytes != 0, sink.bytes, from_bytes)),
        )
