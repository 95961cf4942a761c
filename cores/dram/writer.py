# This file is part of hostlink.
# Copyright (c) 2026 hostlink developers
# SPDX-License-Identifier: BSD-2-Clause

"""DRAMStreamWriter: a DMA stream (host -> FPGA) written into DRAM, in one requested window.

The host asks for a window (byte address and length, whole native words, inside the DRAM) and starts
it. The writer then takes exactly that many bytes from its sink, packs the DMA words into native
words (the first DMA word in the low bits) and writes them from the window's first word on. A
request outside the DRAM, not aligned to the native word, empty, or made while a window is open is
refused (`refused` pulses) and changes nothing. Outside an open window the sink is held (ready low):
data that arrives early waits in the DMA instead of being dropped or written anywhere.

`abort` closes an open window: what has not arrived is no longer awaited, and a native word that was
only partly received is dropped rather than written with stale bytes.
"""

from migen import *

from litex.gen import *

from litex.soc.interconnect import stream

from litedram.frontend.dma import LiteDRAMDMAWriter

from hostlink.cores.dram.common import (REQUEST_BITS, WINDOW_CONTROL, RequestWindow, check_stream_width,
    check_dram_size, window_start)

# DRAM Stream Writer -------------------------------------------------------------------------------

class DRAMStreamWriter(LiteXModule):
    """Writes exactly a requested window's bytes of a DMA stream (host -> FPGA) into DRAM, packing DMA words
    into native words; a bad request, or one while a window is open, is refused and changes nothing."""

    def __init__(self, port, data_width, dram_size, fifo_depth=16):
        check_stream_width(data_width, port.data_width)
        check_dram_size(dram_size, port.data_width)
        self.sink    = stream.Endpoint([("data", data_width)])
        # Window control (WINDOW_CONTROL: base, length, start, abort, busy, done, refused, words). Named
        # here, not in a helper: migen names a signal after the functions it is made in.
        for name, width, _ in WINDOW_CONTROL:
            setattr(self, name, Signal(width, name=name))

        # # #

        ratio = port.data_width // data_width

        # Request check.
        self.window = window = RequestWindow(dram_size, port.data_width)
        self.comb += [window.base.eq(self.base), window.length.eq(self.length)]

        # Data-Path.
        incoming  = Signal(REQUEST_BITS + 2)   # DMA words still expected in the window.
        address   = Signal(REQUEST_BITS)
        remaining = Signal(REQUEST_BITS)       # Native words still to write.
        requested = Signal(REQUEST_BITS)
        flush     = Signal()
        self.converter = converter = ResetInserter()(stream.Converter(data_width, port.data_width))
        self.dma       = dma       = LiteDRAMDMAWriter(port, fifo_depth=fifo_depth)
        self.comb += [
            converter.reset.eq(flush),
            converter.sink.valid.eq(self.sink.valid & (incoming != 0)),
            converter.sink.data.eq(self.sink.data),
            self.sink.ready.eq(converter.sink.ready & (incoming != 0)),
            dma.sink.valid.eq(converter.source.valid & (remaining != 0)),
            dma.sink.address.eq(address),
            dma.sink.data.eq(converter.source.data),
            converter.source.ready.eq(dma.sink.ready & (remaining != 0)),
        ]

        # Control-Path (FSM).
        self.fsm = fsm = FSM(reset_state="IDLE")
        fsm.act("IDLE",
            window_start(self, window,
                NextValue(incoming,   window.words * ratio),
                NextValue(address,    window.first),
                NextValue(remaining,  window.words),
                NextValue(requested,  window.words),
            )
        )
        fsm.act("RUN",
            self.busy.eq(1),
            self.refused.eq(self.start),
            If(self.sink.valid & self.sink.ready,
                NextValue(incoming, incoming - 1),
            ),
            If(dma.sink.valid & dma.sink.ready,
                NextValue(address,    address + 1),
                NextValue(remaining,  remaining - 1),
                NextValue(self.words, self.words + 1),
            ),
            If(self.abort,
                flush.eq(1),
                NextValue(incoming,  0),
                NextValue(remaining, 0),
                NextState("DRAIN"),
            ).Elif((remaining == 1) & dma.sink.valid & dma.sink.ready,
                NextState("DRAIN"),
            )
        )
        # The DMA frontend's FIFO still holds write data the port has not taken.
        fsm.act("DRAIN",
            self.busy.eq(1),
            self.refused.eq(self.start),
            If(~dma.fifo.source.valid,
                NextValue(self.done, self.words == requested),
                NextState("IDLE"),
            )
        )
