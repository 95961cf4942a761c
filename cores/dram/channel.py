# This file is part of hostlink.
# Copyright (c) 2026 hostlink developers
# SPDX-License-Identifier: BSD-2-Clause

"""DRAMDMAChannel: the user side of one DMA channel, switched between the test patterns and DRAM.

LitePCIe's DMA channel ends, on the FPGA side, in two streams: what the reader fetched from the host
(`from_dma`) and what the writer sends to the host (`to_dma`). In pattern mode (the reset state)
they go to the channel's pattern checker (`to_pattern`) and come from its generator
(`from_pattern`), exactly as without DRAM. In DRAM mode they go to a DRAMStreamWriter (host -> DRAM)
and come from a DRAMStreamReader (DRAM -> host), each driven by a window the host programs before
starting the DMA.

The DMA's own loopback sits before this switch (inside LitePCIe), so it keeps working in both modes.
"""

from migen import *

from litex.gen import *

from litex.soc.interconnect import stream
from litex.soc.interconnect.csr import *

from hostlink.cores.dram.common import REQUEST_BITS
from hostlink.cores.dram.writer import DRAMStreamWriter
from hostlink.cores.dram.reader import DRAMStreamReader

# DRAM DMA Channel ---------------------------------------------------------------------------------

class DRAMDMAChannel(LiteXModule):
    """The user side of one DMA channel, switched by `dram_mode` between the test patterns and DRAM windows
    (a DRAMStreamWriter for host -> DRAM, a DRAMStreamReader for DRAM -> host)."""

    def __init__(self, write_port, read_port, data_width, dram_size, outstanding=64, with_csr=True):
        layout = [("data", data_width)]
        self.from_dma     = stream.Endpoint(layout)   # Host -> FPGA (the DMA reader's stream).
        self.to_dma       = stream.Endpoint(layout)   # FPGA -> host (into the DMA writer).
        self.to_pattern   = stream.Endpoint(layout)
        self.from_pattern = stream.Endpoint(layout)
        self.dram_mode    = Signal()                  # i: 0: patterns, 1: DRAM.
        self.refusals     = Signal(32)                # o: requests refused (writer and reader).

        # # #

        self.writer = writer = DRAMStreamWriter(write_port, data_width, dram_size)
        self.reader = reader = DRAMStreamReader(read_port,  data_width, dram_size, outstanding=outstanding)

        # Switch.
        self.comb += [
            If(self.dram_mode,
                self.from_dma.connect(writer.sink),
                reader.source.connect(self.to_dma),
            ).Else(
                self.from_dma.connect(self.to_pattern),
                self.from_pattern.connect(self.to_dma),
            )
        ]

        # Refused requests.
        self.sync += self.refusals.eq(self.refusals + writer.refused + reader.refused)

        if with_csr:
            self.add_csr()

    def add_csr(self):
        self._control = CSRStorage(fields=[
            CSRField("mode", size=1, values=[
                ("``0b0``", "Patterns: the DMA reader feeds the checker, the generator feeds the DMA writer."),
                ("``0b1``", "DRAM: the DMA reader writes the DRAM window, the DRAM window feeds the DMA writer."),
            ]),
        ], description="User side of the DMA channel.")
        self._refusals = CSRStatus(32, description="DRAM windows refused (outside the DRAM, not whole "
            "native words, empty, or requested while a window was open), writer and reader together.")
        self.comb += [
            self.dram_mode.eq(self._control.fields.mode),
            self._refusals.status.eq(self.refusals),
        ]
        for name, engine, what in [
                ("write", self.writer, "Host -> DRAM"),
                ("read",  self.reader, "DRAM -> host")]:
            base    = CSRStorage(REQUEST_BITS, name=f"{name}_base",
                description=f"{what} window: byte address (a multiple of the native word).")
            length  = CSRStorage(REQUEST_BITS, name=f"{name}_length",
                description=f"{what} window: bytes (a multiple of the native word, not 0).")
            control = CSRStorage(fields=[
                CSRField("start", size=1, pulse=True, description="Opens the window (refused if bad or busy)."),
                CSRField("abort", size=1, pulse=True, description="Closes an open window."),
            ], name=f"{name}_control", description=f"{what} window control.")
            status  = CSRStatus(fields=[
                CSRField("busy", size=1, description="A window is open or its last accesses are in flight."),
                CSRField("done", size=1, description="The last window completed (not aborted)."),
            ], name=f"{name}_status", description=f"{what} window status.")
            words   = CSRStatus(REQUEST_BITS, name=f"{name}_words",
                description=f"{what}: native words transferred in the last window.")
            setattr(self, f"_{name}_base",    base)
            setattr(self, f"_{name}_length",  length)
            setattr(self, f"_{name}_control", control)
            setattr(self, f"_{name}_status",  status)
            setattr(self, f"_{name}_words",   words)
            self.comb += [
                engine.base.eq(base.storage),
                engine.length.eq(length.storage),
                engine.start.eq(control.fields.start),
                engine.abort.eq(control.fields.abort),
                status.fields.busy.eq(engine.busy),
                status.fields.done.eq(engine.done),
                words.status.eq(engine.words),
            ]
