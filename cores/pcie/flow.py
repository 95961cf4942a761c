# This file is part of hostlink.
# Copyright (c) 2026 hostlink developers
# SPDX-License-Identifier: BSD-2-Clause

"""DMA flow control: a LitePCIe DMA engine that moves only the buffers the host has given it.

LitePCIe's descriptor table in loop mode hands its descriptors to the DMA again and again and never waits
for software: a reader (host-to-FPGA) fetches a buffer the host has not refilled yet, and a writer
(FPGA-to-host) overwrites a buffer the host has not read yet. `DMAFlow` puts a gate between the table and
the engine's descriptor splitter (splitter.py, `hold`):

- *loop* (mode 0, the reset state): no gate; LitePCIe's behaviour, which `litepcie_util dma_test` and
  LitePCIe's driver expect.
- *lossless* (mode 1): a descriptor (one buffer of the ring) begins only while the host has given more
  buffers than the engine has begun. The host counts the buffers it gives, free-running from the table's
  reset, and writes that count to `given` once per batch (one register write however many buffers):
  for a reader, buffers it has filled; for a writer, buffers it has read and gives back (at the start, the
  whole ring). The engine then waits, without losing or repeating anything, however slow the host is: a
  writer back-pressures the data that feeds it, a reader stops fetching.
- *real-time* (mode 2, writers with a user port only): as lossless for the engine; the user port in front
  of it (user_port.py) never back-pressures the core, drops data while no buffer is free and starts every
  buffer with a header that says what it dropped.
- *packets* (mode 3, with a user port): lossless, and every buffer has the same header. A writer's: a
  `last` from the core ends the buffer early; the header gives the data's length and that a `last` ended
  it, so the host gets the core's packets (frames, results) with their exact lengths. A reader's: the
  host heads each buffer so (its data's length, END on a packet's last buffer) and the user port's
  deframer (deframer.py) gives the core the data with `last` at each packet's final byte.

Real-time and packets are the *framed* modes: the header is written last, at the buffer's start
(splitter.py), so it is in the host's memory when the buffer counts as done.

Counts, all modular 32-bit, from the table's reset:

    given    (host writes)  buffers the host has given the engine
    started  (reads)        buffers the engine has begun
    done     (reads)        buffers finished: a writer's data in the hard block, a reader's data delivered
                            (fenced as the loop status is: write_fence.py, read_fence.py)
    waits    (reads)        cycles a buffer was ready in the table and the gate held it (the host was behind)

The host's ring level is `given - done`; a buffer `k` (counting from 0 at the table's reset) is the host's
again once `done > k`.
"""

from migen import *

from litex.gen import *

from litex.soc.interconnect.csr import *

# The flow modes (the `mode` CSR's values) are the host's too: defined in hostlink.protocol.
from hostlink.protocol import FLOW_LOOP, FLOW_PACKETS, FLOW_REALTIME

# DMA Flow -----------------------------------------------------------------------------------------

class DMAFlow(LiteXModule):
    """The flow gate of one LitePCIe DMA engine (reader or writer) built with hostlink's splitter.

    `splitter` is the engine's DescriptorSplitter (its `hold`, `begin`, `held`), `table` its
    LitePCIeDMAScatterGather, `table_reset` the table's reset pulse (counts restart with it), `writer` True
    for a writer (which also has the real-time mode and `buffer_bytes`).

    Signals (sys domain): `mode` (i, the CSR's), `gated` (o, the gate is on), `realtime`, `packets` and
    `framed` (o, writers: the framed modes; a reader's packets flow is its user port's to see, from `mode`,
    so that a SoC without user ports has no logic for it),
    `given`, `started`, `done_raw`, `waits` (o); `done` (i: `done_raw` fenced, see add_pcie), `buffer_bytes`
    (o, writers: the ring's buffer size for the framer of the framed modes).
    """
    def __init__(self, splitter, table, table_reset, writer, with_csr=True):
        self.writer       = writer
        self.mode         = Signal(2)    # i
        self.gated        = Signal()     # o
        self.realtime     = Signal()     # o
        self.packets      = Signal()     # o
        self.framed       = Signal()     # o
        self.given        = Signal(32)   # o
        self.started      = Signal(32)   # o
        self.done_raw     = Signal(32)   # o (to the fence)
        self.done         = Signal(32)   # i (from the fence)
        self.waits        = Signal(32)   # o
        self.buffer_bytes = Signal(24)   # o
        self.given_write  = Signal()     # i (a pulse: `given_value` is the host's new count)
        self.given_value  = Signal(32)   # i

        # # #

        available = Signal(32)
        self.comb += [
            self.gated.eq(self.mode != FLOW_LOOP),
            self.realtime.eq(self.mode == FLOW_REALTIME if writer else 0),
            self.packets.eq(self.mode == FLOW_PACKETS if writer else 0),
            self.framed.eq(self.realtime | self.packets),
            available.eq(self.given - self.started),
            # Nothing given (or a count behind what was begun: a host's mistake) holds the gate.
            splitter.hold.eq(self.gated & ((available == 0) | available[31])),
        ]
        self.sync += [
            If(table_reset,
                self.given.eq(0),
                self.started.eq(0),
                self.done_raw.eq(0),
                self.waits.eq(0),
            ).Else(
                If(self.given_write, self.given.eq(self.given_value)),
                If(splitter.begin, self.started.eq(self.started + 1)),
                If(table.source.valid & table.source.ready, self.done_raw.eq(self.done_raw + 1)),
                If(splitter.held & (self.waits != 2**32 - 1), self.waits.eq(self.waits + 1)),
            )
        ]
        if with_csr:
            self.add_csr()

    def add_csr(self):
        values = [("``0``", "loop: LitePCIe's loop mode, no gate (the reset state)."),
                  ("``1``", "lossless: a buffer begins only once the host has given it (`given`).")]
        if self.writer:
            values.append(("``2``", "real-time: as lossless; the user port drops data while no buffer is "
                                    "free and starts each buffer with a header (user_port.py)."))
            values.append(("``3``", "packets: as lossless, with the header; a `last` from the user's core "
                                    "ends a buffer early (its length in the header)."))
        else:
            values.append(("``3``", "packets: as lossless; each buffer the host writes has the header, and "
                                    "the user port gives the core its data with `last` at a packet's end."))
        self._mode = CSRStorage(fields=[CSRField("mode", size=2, values=values,
            description="Flow mode; change it only while the engine is disabled.")])
        self._given = CSRStorage(32, description="Buffers the host has given the engine since the table's "
            "reset, free-running: write the new count once per batch (reads back the last write).")
        self._started = CSRStatus(32, description="Buffers the engine has begun since the table's reset.")
        self._done    = CSRStatus(32, description="Buffers finished since the table's reset (written to the "
            "host, or read from it), fenced as the loop status is.")
        self._waits   = CSRStatus(32, description="Cycles a buffer waited in the table for the host to give it.")
        self.comb += [
            self.mode.eq(self._mode.fields.mode),
            self.given_write.eq(self._given.re),
            self.given_value.eq(self._given.storage),
            self._started.status.eq(self.started),
            self._done.status.eq(self.done),
            self._waits.status.eq(self.waits),
        ]
        if self.writer:
            self._buffer_bytes = CSRStorage(24, description="Bytes of each buffer of the ring (the "
                "descriptors' length), for the framed modes: a header and then data.")
            self.comb += self.buffer_bytes.eq(self._buffer_bytes.storage)


def hold_writer_input(writer):
    """Lossless and packets flows lose nothing that reaches a writer before it runs: its input waits.

    LitePCIe's DMA writer takes its input and drops it while it is not enabled, which loop flow (LitePCIe's
    own, what `dma_test` expects) keeps: a program that opens a channel and writes before it starts reading
    would lose what the loopback or its core returned meanwhile. With the gate on (and not real-time, whose
    user port drops and counts by itself), the writer's input is held instead. Releasing the channel puts
    the flow back to loop, so what a program left behind is dropped then, as before. `writer` is a
    LitePCIeDMAWriter with its `flow`; the hold goes after the writer's own statements, so it wins."""
    flow = writer.flow
    writer.comb += If(flow.gated & ~flow.realtime & ~writer.enable, writer.data_conv.source.ready.eq(0))
