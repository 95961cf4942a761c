# This file is part of hostlink.
# Copyright (c) 2026 hostlink developers
# SPDX-License-Identifier: BSD-2-Clause

"""One interrupt event per cycle into LitePCIe's MSI core.

`LitePCIeMSI` offers one MSI for every event of its sources, but merges the events of one cycle into one
MSI. A DMA reader's interrupt is raised at a crossbar request and a writer's (with the write fence) when
the block has taken its writes, so the two can now come in the same cycle, and the host would receive one
MSI for two events: harmless to a driver that reads the vector, but not one MSI per event, which the
host-profile matrix counts. `IRQSerializer` passes the lowest pending source each cycle and keeps the rest
for the next cycles (a few cycles at most: each source raises at most one event per descriptor).
"""

from migen import *

from litex.gen import *


class IRQSerializer(LiteXModule):
    """Passes at most one of `width` interrupt sources' pulses per cycle (the lowest pending) and keeps the
    others for the next cycles, so that LitePCIe's MSI core sends one MSI per event."""

    def __init__(self, width):
        self.irqs_in  = Signal(width)   # i (pulses, any number per cycle)
        self.irqs_out = Signal(width)   # o (pulses, at most one per cycle)

        # # #

        pending = Signal(width)
        events  = Signal(width)
        self.comb += [
            events.eq(pending | self.irqs_in),
            self.irqs_out.eq(events & (~events + 1)),   # Lowest set bit.
        ]
        self.sync += pending.eq(events & ~self.irqs_out)
