# This file is part of hostlink.
# Copyright (c) 2026 hostlink developers
# SPDX-License-Identifier: BSD-2-Clause

"""An example packet core for a DMA channel's user port: every packet from the host goes back as it came.

Copy it to start a core that works on messages (commands, frames, records) rather than on a stream. It
keeps the user core contract of examples/accelerator.py (`PacketEcho(dma_data_width, sys_clk_freq)`,
`data_width`, `clock_domain`, `clk_freq`, `sink`, `source`) and is meant for *packets* flow both ways
(doc/user_cores.md): the host writes packets of any length (`Channel(flow="packets").write(data)`), the
core gets each with `last` on the word of its final byte and `bytes` = that word's bytes of data (0: the
whole word), and whatever the core sends with `last` and `bytes` ends a packet the host reads whole
(`read_packets()`), with its exact length.

The echo is one register stage (`stream.PipeValid`): data, `last` and `bytes` go through together. It runs
at a quarter of the DMA's width (32 bits on the ZC706 and KC705, 64 on the VC709) on the SoC's clock, so
that both of the port's width conversions cut and rebuild the packets' final words.
"""

from migen import *

from litex.gen import *

from litex.soc.interconnect import stream

from hostlink.cores.pcie.bytes_converter import packet_layout


class PacketEcho(LiteXModule):
    def __init__(self, dma_data_width, sys_clk_freq):
        self.data_width   = dma_data_width//4
        self.clock_domain = "sys"
        self.clk_freq     = sys_clk_freq
        self.sink   = stream.Endpoint(packet_layout(self.data_width))   # i: the host's packets
        self.source = stream.Endpoint(packet_layout(self.data_width))   # o: the same, to the host

        # # #

        self.pipe = pipe = stream.PipeValid(packet_layout(self.data_width))
        self.comb += [
            self.sink.connect(pipe.sink),
            pipe.source.connect(self.source),
        ]

    @staticmethod
    def model(data, settings):
        """The bytes the core returns for `data`: the same."""
        return bytes(data)
