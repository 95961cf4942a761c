# This file is part of hostlink.
# Copyright (c) 2026 hostlink developers
# SPDX-License-Identifier: BSD-2-Clause

"""An example streaming source for a DMA channel's user port: an ADC or camera stand-in that cannot wait.

Copy it to start a core that produces data at its own pace. It keeps the user core contract that
examples/accelerator.py describes (`CountingSource(dma_data_width, sys_clk_freq)`, `data_width`,
`clock_domain`, `clk_freq`, `sink`, `source`), and is meant for the writer's *real-time* flow
(doc/user_cores.md): the port then never holds it back, and where the host falls behind the port drops
data between buffers and says how much in each buffer's header.

What it sends: 32-bit little-endian counts, one per 32-bit lane, counting up across lanes and words from 0
when `enable` is set: the host sees 0, 1, 2, ... and any gap in the counts is data lost. A sample (one
`data_width` word) becomes due on the core's clock cycles where a phase accumulator of `rate` / 65536
overflows: `rate` = 65536 makes a word every cycle, 32768 every other cycle. A sample that becomes due
while the previous one still waits for the port is not held back: the waiting one is replaced (its counts
are lost) and `overruns` counts it, as an ADC overwrites its output register. With a port that carries the
link's rate and the real-time flow, `overruns` stays 0 and all loss is in the headers.

With `packet` set to N, every N-th sample carries `last`: in the writer's *packets* flow (doc/user_cores.md)
each packet of N samples ends its buffer (a packet longer than a buffer fills buffers and ends in the
next), and each buffer's header gives the bytes it holds and whether a packet ended there. `packet` 0 (the
reset value) sends no `last`.

Host-to-FPGA data is taken and discarded.

It runs at twice the DMA's width on a clock of its own at 0.6 times the SoC's, as the accelerator does:
at `rate` 65536 it makes 1.2 times what the DMA can carry.
"""

from migen import *
from migen.genlib.cdc import MultiReg

from litex.gen import *

from litex.soc.interconnect import stream
from litex.soc.interconnect.csr import *

from hostlink.cores.pcie.user_port import CrossedEventCounter

RATE_ONE = 1 << 16   # `rate` for a sample every cycle.


class CountingSource(LiteXModule):
    SIM_SETTINGS = {"rate": RATE_ONE // 2}   # CSR values the simulation writes before the DMA starts,
    SIM_START    = {"enable": 1}             # and once it runs (zeroed at the end).

    def __init__(self, dma_data_width, sys_clk_freq, clock_domain="adc"):
        self.data_width   = 2 * dma_data_width
        self.clock_domain = clock_domain
        self.clk_freq     = 0.6 * sys_clk_freq
        self.sink   = stream.Endpoint([("data", self.data_width)])   # i: host-to-FPGA, discarded
        self.source = stream.Endpoint([("data", self.data_width)])   # o: the counts, to the host

        # # #

        self._enable = CSRStorage(1, name="enable", description="1: make samples (the count restarts at 0 "
            "each time this goes from 0 to 1).")
        self._rate   = CSRStorage(17, reset=RATE_ONE, name="rate",
            description="Samples per 65536 cycles of the core's clock (65536: one every cycle).")
        self._packet = CSRStorage(16, name="packet",
            description="Samples per packet: every `packet`-th sample carries `last` (0: none do).")
        self._overruns = CSRStatus(32, name="overruns",
            description="Samples replaced before the port took them (counted since `enable` was set).")

        enable, rate, packet = Signal(), Signal(17), Signal(16)
        self.specials += [
            MultiReg(self._enable.storage, enable, odomain=clock_domain),
            MultiReg(self._rate.storage,   rate,   odomain=clock_domain),
            MultiReg(self._packet.storage, packet, odomain=clock_domain),
        ]
        sync = getattr(self.sync, clock_domain)

        # Host-to-FPGA: taken and dropped.
        self.comb += self.sink.ready.eq(1)

        # When a sample is due.
        phase = Signal(17)
        due   = Signal()
        self.comb += due.eq(enable & phase[16])
        sync += If(enable, phase.eq(phase[:16] + rate)).Else(phase.eq(0))

        # The counts of the next sample: lanes of 32 bits, counting up from `count`.
        lanes   = self.data_width // 32
        count   = Signal(32)
        in_packet = Signal(16)   # Samples of the packet sent before this one.
        ends      = Signal()
        self.comb += ends.eq((packet != 0) & (in_packet == packet - 1))
        started = Signal()
        sync += started.eq(enable)
        overrun = Signal()
        self.comb += overrun.eq(due & self.source.valid & ~self.source.ready)
        sync += [
            If(self.source.ready, self.source.valid.eq(0)),
            If(due,
                self.source.valid.eq(1),
                self.source.data.eq(Cat(*[(count + lane)[:32] for lane in range(lanes)])),
                self.source.last.eq(ends),
                count.eq(count + lanes),
                in_packet.eq(Mux(ends, 0, in_packet + 1)),
            ),
            If(enable & ~started,   # Restart at 0.
                count.eq(0),
                in_packet.eq(0),
                self.source.valid.eq(0),
            ),
        ]

        # Overruns, in the core's clock, read in the SoC's; cleared when `enable` is set.
        clear = Signal()
        self.comb += clear.eq(self._enable.re & self._enable.storage)
        self.overruns_counter = CrossedEventCounter(overrun, clear, clock_domain)
        self.comb += self._overruns.status.eq(self.overruns_counter.value)
