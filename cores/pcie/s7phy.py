# This file is part of hostlink.
# Copyright (c) 2026 hostlink developers
# SPDX-License-Identifier: BSD-2-Clause

"""LitePCIe's `pcie_7x` PHY (S7PCIEPHY) with its transmit stream flushed across the SoC's reset.

LitePCIe crosses the TLPs to send from the system clock to the block's user clock (`pcie`) in an
asynchronous FIFO, reset on both sides by the system reset or the block's (`ClockDomainCrossing`,
`with_common_rst`). The pointer synchronizers of migen's AsyncFIFO have no reset. When the SoC resets itself
(`ctrl_reset`, which LitePCIe's driver writes at probe), the FIFO's `pcie` side enters reset at once while
its synchronizer still shows the write pointer of before the reset: for a few cycles the FIFO reads as not
empty and hands on entries it already sent, to the width converter and buffer behind it, which no reset
reaches. A stale entry that was a complete TLP reaches the host as an unexpected completion; one from within
a longer TLP (a DMA write's data) leaves the block in the middle of a TLP, and the next TLP, the completion
for the driver's first read of the SoC's identifier, is lost in a malformed one: the driver refuses the board.
"""

from migen import *
from migen.genlib.resetsync import AsyncResetSynchronizer

from litex.gen import *

from litepcie.phy.s7pciephy import S7PCIEPHY as LitePCIeS7PCIEPHY

# S7PCIEPHY ----------------------------------------------------------------------------------------

class S7PCIEPHY(LitePCIeS7PCIEPHY):
    """LitePCIe's S7PCIEPHY (same parameters and interface); while the reset of its system side (`cd`)
    crosses to the `pcie` side, and FLUSH_TAIL cycles after, the transmit stream is taken from LitePCIe's
    datapath and not given to the block: the stale entries are dropped. Nothing is sent then: the SoC's own
    logic is in reset, and a TLP written after the reset needs more cycles than that to cross the FIFO."""
    # Cycles of `pcie` after the reset during which stale entries may still be on their way to the block:
    # the buffer behind the FIFO (PipeReady) holds one, and the FIFO reads none once out of reset.
    FLUSH_TAIL = 4

    def __init__(self, platform, pads, data_width=64, cd="sys", **kwargs):
        LitePCIeS7PCIEPHY.__init__(self, platform, pads, data_width=data_width, cd=cd, **kwargs)
        self.tx_flush = Signal()   # o

        # # #

        if cd == "pcie":
            return   # No crossing.
        # The reset as the crossing's `pcie` side sees it (the same synchronizer), then its tail.
        self.cd_pcie_tx_flush = ClockDomain()
        self.comb += self.cd_pcie_tx_flush.clk.eq(ClockSignal("pcie"))
        self.specials += AsyncResetSynchronizer(self.cd_pcie_tx_flush, ResetSignal(cd) | ResetSignal("pcie"))
        tail = Signal(max=self.FLUSH_TAIL + 1, reset=self.FLUSH_TAIL)
        self.sync.pcie_tx_flush += If(tail != 0, tail.eq(tail - 1))
        self.comb += self.tx_flush.eq(ResetSignal("pcie_tx_flush") | (tail != 0))

        # Between LitePCIe's datapath and the block.
        tx           = self.tx_datapath.source
        tvalid       = Signal()
        tready       = Signal()
        self.comb += [
            tvalid.eq(tx.valid & ~self.tx_flush),
            tx.ready.eq(tready | self.tx_flush),
        ]
        self.pcie_phy_params.update(
            i_s_axis_tx_tvalid = tvalid,
            o_s_axis_tx_tready = tready,
        )
