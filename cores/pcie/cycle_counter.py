# This file is part of hostlink.
# Copyright (c) 2026 hostlink developers
# SPDX-License-Identifier: BSD-2-Clause

"""Free-running 64-bit cycle counter of the system clock, so that host tools can time DMA in device
cycles.

The count is latched by a write to `latch`, then read from `value` (two 32-bit CSR words read one after
the other would otherwise tear when the low word wraps between them).
"""

from migen import *

from litex.gen import *

from litex.soc.interconnect.csr import *

# Cycle Counter ------------------------------------------------------------------------------------

class CycleCounter(LiteXModule):
    """A free-running 64-bit count of system-clock cycles, latched by a write to `latch` and read whole from
    `value`; `with_csr` adds both as registers."""

    def __init__(self, with_csr=True):
        self.latch = Signal()     # i: copies the count into `value`.
        self.count = Signal(64)   # o: cycles since reset (wraps after 2**64).
        self.value = Signal(64)   # o: the count at the last latch.

        # # #

        self.sync += [
            self.count.eq(self.count + 1),
            If(self.latch, self.value.eq(self.count)),
        ]
        if with_csr:
            self.add_csr()

    def add_csr(self):
        self._latch = CSRStorage(fields=[
            CSRField("latch", size=1, pulse=True,
                description="Write 1 to copy the cycle count into `value`."),
        ])
        self._value = CSRStatus(64, description="System-clock cycles since reset, at the last latch.")
        self.comb += [
            self.latch.eq(self._latch.fields.latch),
            self._value.status.eq(self.value),
        ]
