# This file is part of hostlink.
# Copyright (c) 2026 hostlink developers
# SPDX-License-Identifier: BSD-2-Clause

"""Test-pattern source and sink for one DMA channel: measure each direction alone, check every word.

With the DMA's loopback on, host -> FPGA data returns to the host (both directions at once). To measure or
check one direction alone, the channel's user side needs a source and a sink that never stall:

- `DMAPatternGenerator` feeds the writer (FPGA -> host) with 32-bit little-endian words counting up from 0,
  exactly `length` words (0: without end). A generator that ran past the transfer would leave words in
  the DMA's buffering FIFO, and the next transfer would start with them;
- `DMAPatternChecker` takes the reader's stream (host -> FPGA), expects the same count, and counts
  words and mismatches among the first `length` words (0: every word). In loop mode the reader goes on
  through the ring after the transfer until software stops it, into buffers software has not written
  (yet, or ever): those words are counted, not judged.

The host writes and checks the same pattern: word i of a transfer is i (mod 2**32).
"""

from migen import *

from litex.gen import *

from litex.soc.interconnect import stream
from litex.soc.interconnect.csr import *

from litepcie.common import dma_layout

# Helpers ------------------------------------------------------------------------------------------

def _pattern_words(base, n):
    return Cat(*[(base + i)[:32] for i in range(n)])

# DMA Pattern Generator ----------------------------------------------------------------------------

class DMAPatternGenerator(LiteXModule):
    """Feeds a DMA writer (FPGA -> host) with 32-bit words counting up from 0, exactly `length` words (0:
    without end), never stalling; `with_csr` adds the `control` (enable) and `length` registers."""

    def __init__(self, data_width, with_csr=True):
        if data_width not in (64, 128, 256, 512):
            raise ValueError(f"DMA pattern data width must be 64, 128, 256 or 512 bits, not {data_width!r}")
        self.source = stream.Endpoint(dma_layout(data_width))
        self.enable = Signal()     # i: starts; clearing it restarts the count from 0.
        self.length = Signal(32)   # i: 32-bit words to send (a multiple of the beat), 0: without end.

        # # #

        words = data_width // 32
        count = Signal(32)
        done  = Signal()
        self.comb += [
            done.eq((self.length != 0) & (count >= self.length)),
            self.source.valid.eq(self.enable & ~done),
            self.source.data.eq(_pattern_words(count, words)),
        ]
        self.sync += [
            If(~self.enable,
                count.eq(0)
            ).Elif(self.source.valid & self.source.ready,
                count.eq(count + words)
            )
        ]
        if with_csr:
            self.add_csr()

    def add_csr(self):
        self._control = CSRStorage(fields=[
            CSRField("enable", size=1, values=[
                ("``0b0``", "Stopped; the count restarts from 0."),
                ("``0b1``", "Feeds the DMA writer (FPGA -> host) with the count."),
            ]),
        ], description="Pattern generator (used when the DMA loopback is off).")
        self._length = CSRStorage(32, description="32-bit words to send once enabled (0: without end).")
        self.comb += [
            self.enable.eq(self._control.fields.enable),
            self.length.eq(self._length.storage),
        ]

# DMA Pattern Checker ------------------------------------------------------------------------------

class DMAPatternChecker(LiteXModule):
    """Takes a DMA reader's stream (host -> FPGA), never stalling, and counts the words received and those
    among the first `length` (0: all) that differ from the count-up pattern; `with_csr` adds the clear, the
    length and the counters' registers."""

    def __init__(self, data_width, with_csr=True):
        if data_width not in (64, 128, 256, 512):
            raise ValueError(f"DMA pattern data width must be 64, 128, 256 or 512 bits, not {data_width!r}")
        self.sink   = stream.Endpoint(dma_layout(data_width))
        self.clear  = Signal()     # i: restarts the count from 0 and clears the counters.
        self.length = Signal(32)   # i: words to compare (0: every word, else whole beats up to it); the words
                                   #    after are only counted.
        self.words  = Signal(32)   # o: words received.
        self.errors = Signal(32)   # o: words compared that differed from the count.

        # # #

        words    = data_width // 32
        expected = Signal(32)
        mismatches = Signal(max=words + 1)
        # A beat is judged whole until the beat that reaches the length (a length inside a beat judges that
        # whole beat; DMA transfers are whole beats); `past`, once set, stays until the clear, so a count that
        # wraps at 2**32 judges nothing again.
        judged = Signal()
        past   = Signal()
        self.comb += [
            self.sink.ready.eq(1),
            judged.eq((self.length == 0) | ~past),
            mismatches.eq(Mux(judged, Reduce("ADD", [
                self.sink.data[32*i:32*(i+1)] != (expected + i)[:32] for i in range(words)]), 0)),
        ]
        self.sync += [
            If(self.clear,
                expected.eq(0),
                past.eq(0),
                self.words.eq(0),
                self.errors.eq(0),
            ).Elif(self.sink.valid,
                expected.eq(expected + words),
                If(expected + words >= self.length, past.eq(1)),
                self.words.eq(self.words + words),
                self.errors.eq(self.errors + mismatches),
            )
        ]
        if with_csr:
            self.add_csr()

    def add_csr(self):
        self._clear  = CSR()
        self._words  = CSRStatus(32, description="32-bit words received from the DMA reader (host -> FPGA).")
        self._errors = CSRStatus(32, description="Words among the first `length` that differed from the expected "
            "count.")
        # Last: the registers before it keep their addresses.
        self._length = CSRStorage(32, description="32-bit words to compare from the clear on (0: every word); "
            "the words after are counted in `words`, not compared.")
        self.comb += [
            self.clear.eq(self._clear.re),
            self.length.eq(self._length.storage),
            self._words.status.eq(self.words),
            self._errors.status.eq(self.errors),
        ]
