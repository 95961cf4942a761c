# This file is part of hostlink.
# Copyright (c) 2026 hostlink developers
# SPDX-License-Identifier: BSD-2-Clause

"""An example accelerator for a DMA channel's user port: y = a*x + b on 16-bit samples.

Copy it to start your own core. It shows what a user core gives hostlink (the contract that
`./sim.py dma --user-core examples.accelerator:Accelerator` and the SoCs rely on):

- `Accelerator(dma_data_width, sys_clk_freq)`: built for the channel's DMA width and the SoC's clock;
- `data_width`, `clock_domain`, `clk_freq`: its streams' width in bits (whole bytes, dividing the DMA's
  or a multiple of it), the name of its clock domain and that clock's frequency (the SoC, or the
  simulation, makes the domain; `"sys"` runs it on the SoC's own clock);
- `sink`: host-to-FPGA data (the user port's `source`), `source`: FPGA-to-host data (into the user
  port's `sink`), both `stream.Endpoint([("data", data_width)])` in `clock_domain`;
- CSRs of its own (LiteX's usual `CSRStorage`, in the SoC's clock; crossed into the core's here);
- for the simulation, `model(data, settings)`: the bytes the core returns for `data`, and `SIM_SETTINGS`:
  CSR values (by name, without the core's prefix) the simulation writes before the transfer.

The computation: each 16-bit little-endian signed sample x becomes (a*x + b) mod 2**16, with a and b
programmable by CSR. One pipeline stage; the core back-pressures the host only when the port behind it
does, or when `throttle` asks it to (a test of back-pressure: it then takes no sample 1 cycle in
`throttle` + 1).

It runs at twice the DMA's width on a clock of its own at 0.6 times the SoC's: 1.2 times the bandwidth
of the DMA, so that it never limits the link, through the user port's width converter and clock crossing.
"""

import numpy as np

from migen import *
from migen.genlib.cdc import MultiReg

from litex.gen import *

from litex.soc.interconnect import stream
from litex.soc.interconnect.csr import *

SAMPLE_BITS = 16


class Accelerator(LiteXModule):
    SIM_SETTINGS = {"a": 3, "b": 0x1234, "throttle": 0}

    def __init__(self, dma_data_width, sys_clk_freq, clock_domain="accel"):
        self.data_width   = 2 * dma_data_width
        self.clock_domain = clock_domain
        self.clk_freq     = 0.6 * sys_clk_freq
        self.sink   = stream.Endpoint([("data", self.data_width)])   # i: host-to-FPGA samples
        self.source = stream.Endpoint([("data", self.data_width)])   # o: results, to the host

        # # #

        self._a        = CSRStorage(SAMPLE_BITS, reset=1, name="a",
            description="Multiplier a of y = a*x + b (signed).")
        self._b        = CSRStorage(SAMPLE_BITS, reset=0, name="b", description="Addend b of y = a*x + b.")
        self._throttle = CSRStorage(8, reset=0, name="throttle",
            description="Take no sample 1 cycle in throttle + 1 (0: never back-pressure).")

        # The CSRs are written in the SoC's clock; they hold still while data flows.
        a, b, throttle = Signal((SAMPLE_BITS, True)), Signal(SAMPLE_BITS), Signal(8)
        self.specials += [
            MultiReg(self._a.storage,        a,        odomain=clock_domain),
            MultiReg(self._b.storage,        b,        odomain=clock_domain),
            MultiReg(self._throttle.storage, throttle, odomain=clock_domain),
        ]

        sync = getattr(self.sync, clock_domain)

        # Back-pressure on request: one idle cycle in throttle + 1.
        phase = Signal(8)
        stall = Signal()
        sync += If(phase >= throttle, phase.eq(0)).Else(phase.eq(phase + 1))
        self.comb += stall.eq((throttle != 0) & (phase == throttle))

        # One pipeline stage, loaded when it is empty or its result leaves; a sample is taken then unless
        # the core stalls.
        lanes = self.data_width // SAMPLE_BITS
        load  = Signal()
        self.comb += [
            load.eq(~self.source.valid | self.source.ready),
            self.sink.ready.eq(load & ~stall),
        ]
        results = []
        for lane in range(lanes):
            x = Signal((SAMPLE_BITS, True))
            y = Signal(2 * SAMPLE_BITS + 1)
            self.comb += [
                x.eq(self.sink.data[lane*SAMPLE_BITS:(lane + 1)*SAMPLE_BITS]),
                y.eq(a * x + b),
            ]
            results.append(y[:SAMPLE_BITS])
        sync += [
            If(load,
                self.source.valid.eq(self.sink.valid & ~stall),
                self.source.first.eq(self.sink.first),
                self.source.last.eq(self.sink.last),
                self.source.data.eq(Cat(*results)),
            ),
        ]

    @staticmethod
    def model(data, settings):
        """The bytes the core returns for `data` (a whole number of samples) with these CSR values."""
        x = np.frombuffer(bytes(data), dtype="<i2").astype(np.int64)
        y = (settings["a"] * x + settings["b"]) & 0xffff
        return y.astype("<u2").tobytes()
