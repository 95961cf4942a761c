# This file is part of hostlink.
# Copyright (c) 2026 hostlink developers
# SPDX-License-Identifier: BSD-2-Clause

"""DRAMStreamReader: a requested DRAM window read out as a DMA stream (FPGA -> host).

The host asks for a window (byte address and length, whole native words, inside the DRAM) and starts
it. The reader keeps up to `outstanding` native reads in flight (enough to cover the controller's
and the clock crossing's latency, so the stream has no bubbles) and unpacks each native word into
DMA words, low bits first: exactly the window's bytes leave on the source, nothing more. Bad
requests, or a request while a window is open, are refused (`refused` pulses) and change nothing.

`abort` stops issuing reads; the answers to reads already in flight are drained and dropped, so the
next window starts clean.
"""

from migen import *

from litex.gen import *

from litex.soc.interconnect import stream

from litedram.frontend.dma import LiteDRAMDMAReader

from hostlink.cores.dram.common import (REQUEST_BITS, WINDOW_CONTROL, RequestWindow, check_stream_width,
    check_dram_size, window_start)

# DRAM Stream Reader -------------------------------------------------------------------------------

class DRAMStreamReader(LiteXModule):
    """Reads a requested DRAM window out as a DMA stream (FPGA -> host), up to `outstanding` native reads in
    flight; a bad request, or one while a window is open, is refused and changes nothing."""

    def __init__(self, port, data_width, dram_size, outstanding=64):
        check_stream_width(data_width, port.data_width)
        check_dram_size(dram_size, port.data_width)
        if not isinstance(outstanding, int) or outstanding < 2:
            raise ValueError(f"reads in flight must be an integer >= 2, not {outstanding!r}")
        self.source  = stream.Endpoint([("data", data_width)])
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
        address   = Signal(REQUEST_BITS)
        to_issue  = Signal(REQUEST_BITS)       # Native reads not yet issued.
        to_send   = Signal(REQUEST_BITS + 2)   # DMA words not yet sent.
        in_flight = Signal(max=outstanding + 2)
        discard   = Signal()
        flush     = Signal()
        self.dma       = dma       = LiteDRAMDMAReader(port, fifo_depth=outstanding)
        self.converter = converter = ResetInserter()(stream.Converter(port.data_width, data_width))
        issue    = Signal()
        returned = Signal()
        self.comb += [
            dma.sink.valid.eq(to_issue != 0),
            dma.sink.address.eq(address),
            issue.eq(dma.sink.valid & dma.sink.ready),
            dma.source.connect(converter.sink, omit={"last"}),
            returned.eq(dma.source.valid & dma.source.ready),
            converter.reset.eq(flush),
            If(discard,
                converter.source.ready.eq(1),
            ).Else(
                self.source.valid.eq(converter.source.valid & (to_send != 0)),
                self.source.data.eq(converter.source.data),
                converter.source.ready.eq(self.source.ready & (to_send != 0)),
            ),
        ]
        self.sync += [
            If(issue & ~returned,
                in_flight.eq(in_flight + 1),
            ).Elif(returned & ~issue,
                in_flight.eq(in_flight - 1),
            ),
            If(returned,
                self.words.eq(self.words + 1),
            ),
        ]

        # Control-Path (FSM).
        self.fsm = fsm = FSM(reset_state="IDLE")
        fsm.act("IDLE",
            window_start(self, window,
                NextValue(address,    window.first),
                NextValue(to_issue,   window.words),
                NextValue(to_send,    window.words * ratio),
            )
        )
        fsm.act("RUN",
            self.busy.eq(1),
            self.refused.eq(self.start),
            If(issue,
                NextValue(address,  address + 1),
                NextValue(to_issue, to_issue - 1),
            ),
            If(self.source.valid & self.source.ready,
                NextValue(to_send, to_send - 1),
                If(to_send == 1,
                    NextValue(self.done, 1),
                    NextState("IDLE"),
                )
            ),
            If(self.abort,
                NextValue(to_issue, 0),
                NextValue(to_send,  0),
                NextState("DISCARD"),
            )
        )
        # Answers to reads issued before the abort still arrive: take them, send nothing.
        fsm.act("DISCARD",
            self.busy.eq(1),
            self.refused.eq(self.start),
            discard.eq(1),
            If((in_flight == 0) & ~dma.source.valid,
                flush.eq(1),
                NextState("IDLE"),
            )
        )
