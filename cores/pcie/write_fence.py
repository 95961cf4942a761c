# This file is part of hostlink.
# Copyright (c) 2026 hostlink developers
# SPDX-License-Identifier: BSD-2-Clause

"""Write fence: a DMA writer tells the host of a buffer only once the buffer's writes are in the hard block.

LitePCIe's DMA writer raises its interrupt, and its table's loop status counts a buffer as done, when the
buffer's last write request enters the crossbar. That request still has the crossbar, the TLP packetizer,
the PHY's clock crossing and the block's transmit queue before it reaches the link, while the MSI leaves
through the block's configuration interface and a loop-status read through its completion path. So the
host could read a buffer whose last bytes were still on their way (the simulation measured the last MSI
69-276 ns ahead of the last data on every board).

`WriteFence` counts the write requests the DMA writers issue (`issued`) and the write TLPs the hard block
has taken (`taken`, at the hand-off points below). It holds each writer's interrupt and each change of
its loop status until `taken` reaches what `issued` was when the event happened: every write before the
event is then in the block, which sends TLPs on in the order it took them, and an MSI or a completion
it makes afterwards follows them.

"Taken" is, per block:
- `pcie3_7x` (V7Gen3PCIEPHY, PG023): the write's sequence number on `pcie_rq_seq_num`, which the block
  gives once the TLP is far enough down its transmit pipeline that nothing it sends later can pass it
  (the product guide's own mechanism for ordering completions after requests).
- `pcie_7x` (LitePCIe's S7PCIEPHY, PG054): the write's last beat accepted on `s_axis_tx`. PG054 names no
  later point; the block is taken to send its MSI after the TLPs already in its transmit buffer (posted
  requests in order), which the block model (hostlink.sim.pcie.models.s7_device) does too.

The counting and holding are `DMAFence`'s (fence.py), as for the readers (read_fence.py). Each held event
costs at most the pipeline's depth in time (a few hundred ns), not throughput.

A write the block drops without taking it (a block that discards requests while the host has turned Bus
Master Enable off, say) would leave `taken` one short for good, and every later event would wait for one
more write. So once every writer is disabled and the block has taken nothing for `QUIET_CYCLES`, the fence
releases what it holds and starts again from what the block took (`issued` = `taken`).
"""

from migen import *
from migen.genlib.cdc import MultiReg, GrayCounter, GrayDecoder

from litex.gen import *

from hostlink.cores.pcie.fence import COUNT_WIDTH, DMAFence

# Write Fence --------------------------------------------------------------------------------------

class WriteFence(DMAFence):
    """Holds the DMA writers' interrupts and loop status until their writes are in `phy`'s hard block.

    The hand-off point is the PHY's `write_taken` pulse (V7Gen3PCIEPHY, in `write_taken_domain`) or, for
    LitePCIe's S7PCIEPHY, read off the block's `s_axis_tx` stream (`tx_datapath.source`, pcie domain): the
    last beat of a memory write (header DWORD 0 in tdata[31:0], big endian: Fmt bit 30 "with data",
    Type 0 "memory"). A count from another clock crosses to sys Gray-coded."""
    def __init__(self, phy):
        DMAFence.__init__(self, restart=True)

        # Hand-off point.
        taken = getattr(phy, "write_taken", None)
        if taken is not None:
            domain = phy.write_taken_domain
        else:
            tx = getattr(getattr(phy, "tx_datapath", None), "source", None)
            if tx is None:
                raise ValueError(f"{type(phy).__name__} gives no write hand-off point "
                    "(write_taken or tx_datapath)")
            domain   = "pcie"
            taken    = Signal()
            first    = Signal(reset=1)
            is_write = Signal()
            write    = Signal()
            self.comb += write.eq(tx.dat[30] & (tx.dat[24:29] == 0))
            self.sync.pcie += If(tx.valid & tx.ready,
                first.eq(tx.last),
                If(first, is_write.eq(write)),
            )
            self.comb += taken.eq(tx.valid & tx.ready & tx.last & Mux(first, write, is_write))

        # Count of taken writes, in sys.
        if domain == "sys":
            self.sync += If(taken, self.taken.eq(self.taken + 1))
        else:
            counter = ClockDomainsRenamer(domain)(GrayCounter(COUNT_WIDTH))
            decoder = GrayDecoder(COUNT_WIDTH)
            self.submodules += counter, decoder
            gray = Signal(COUNT_WIDTH)
            self.comb += counter.ce.eq(taken)
            self.specials += MultiReg(counter.q, gray)
            self.comb += decoder.i.eq(gray)
            self.comb += self.taken.eq(decoder.o)

    def add_writer(self, request, irq, loop_status, enable, table_reset=None, counts=()):
        """Fence one LitePCIe DMA writer: `request` its port's request stream (a write request is issued at
        its last beat), `irq` its interrupt, `loop_status` its table's loop-status CSR, `enable` its enable,
        `table_reset` its table's reset pulse, `counts` more counts to fence (DMAFence.add_channel). Returns
        the fenced interrupt; the CSR then shows the fenced loop status."""
        return self.add_channel(request.valid & request.ready & request.last, irq, loop_status, enable,
            table_reset, counts)
