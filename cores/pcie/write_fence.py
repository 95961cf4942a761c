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
  requests in order), which the block model (hostlink.sim.pcie.s7_device) does too.

Each held event costs at most the pipeline's depth in time (a few hundred ns), not throughput: writes go
on meanwhile. Events that come while one is held merge into a second slot, so the host always sees
progress under continuous traffic.

A write the block drops without taking it (a block that discards requests while the host has turned Bus
Master Enable off, say) would leave `taken` one short for good, and every later event would wait for one
more write. So once every writer is disabled and the block has taken nothing for `QUIET_CYCLES`, the fence
releases what it holds and starts again from what the block took (`issued` = `taken`).
"""

from functools import reduce
from operator import and_

from migen import *
from migen.fhdl.structure import _Assign, _Slice
from migen.genlib.cdc import MultiReg, GrayCounter, GrayDecoder

from litex.gen import *

# Counter width: write requests between the crossbar and the block stay far below half of 2**10.
COUNT_WIDTH  = 10
# Cycles with every writer disabled and no write taken before the fence starts again from `taken`.
QUIET_CYCLES = 1024

# Helpers ------------------------------------------------------------------------------------------

def reached(count, target):
    """True when the modular counter `count` has reached `target` (their difference, signed, is >= 0)."""
    width = len(target)
    return ~((count - target)[width - 1])


def take_csr_status(csr):
    """Free CSRStatus `csr` from the fields that drive it: returns the signal they now drive instead, so
    that another driver can give `csr.status` (LiteX drives a field CSR's status from its fields in the
    CSR's own comb statements, `status[a:b].eq(field)`)."""
    fragment = csr._fragment   # Not get_fragment(): that would finalize the CSR before the bus exists.
    raw      = Signal(len(csr.status), reset=csr.status.reset.value)
    moved    = []
    for statement in fragment.comb:
        if not (isinstance(statement, _Assign) and isinstance(statement.l, _Slice)
                and statement.l.value is csr.status):
            raise RuntimeError(f"CSR {csr.name!r} has a statement other than status[a:b].eq(field): "
                "LiteX's CSRStatus has changed")
        moved.append(raw[statement.l.start:statement.l.stop].eq(statement.r))
    if not moved:
        raise RuntimeError(f"CSR {csr.name!r} has no fields driving its status")
    fragment.comb[:] = moved
    return raw

# Held Events --------------------------------------------------------------------------------------

class HeldEvents(LiteXModule):
    """Events (a pulse and a value) released once `taken` reaches `issued` as it was at the event.

    Two slots: the oldest held event keeps its target, so it is released within the pipeline's depth;
    events after it merge into the second slot (newest value, newest target), which moves up when the first
    is released. Events are released in order and none is lost, only merged."""
    def __init__(self, issued, taken, value_width=1):
        assert len(issued) == len(taken)
        self.event          = Signal()             # i (issued already counts the writes it reports)
        self.value          = Signal(value_width)  # i
        self.flush          = Signal()             # i (release what is held: no write will be taken)
        self.release        = Signal()             # o (pulse)
        self.released_value = Signal(value_width)  # o (valid with release)

        # # #

        width = len(issued)
        a_valid, a_target, a_value = Signal(), Signal(width), Signal(value_width)
        b_valid, b_target, b_value = Signal(), Signal(width), Signal(value_width)

        self.comb += [
            self.release.eq(a_valid & (reached(taken, a_target) | self.flush)),
            self.released_value.eq(a_value),
        ]
        self.sync += [
            If(self.release,
                If(b_valid,
                    a_target.eq(b_target), a_value.eq(b_value),
                    b_valid.eq(self.event), b_target.eq(issued), b_value.eq(self.value),
                ).Else(
                    a_valid.eq(self.event), a_target.eq(issued), a_value.eq(self.value),
                )
            ).Elif(self.event,
                If(~a_valid,
                    a_valid.eq(1), a_target.eq(issued), a_value.eq(self.value),
                ).Else(
                    b_valid.eq(1), b_target.eq(issued), b_value.eq(self.value),
                )
            )
        ]

# Write Fence --------------------------------------------------------------------------------------

class WriteFence(LiteXModule):
    """Holds the DMA writers' interrupts and loop status until their writes are in `phy`'s hard block.

    The hand-off point is the PHY's `write_taken` pulse (V7Gen3PCIEPHY, in `write_taken_domain`) or, for
    LitePCIe's S7PCIEPHY, read off the block's `s_axis_tx` stream (`tx_datapath.source`, pcie domain): the
    last beat of a memory write (header DWORD 0 in tdata[31:0], big endian: Fmt bit 30 "with data",
    Type 0 "memory"). A count from another clock crosses to sys Gray-coded."""
    def __init__(self, phy):
        self.issued = Signal(COUNT_WIDTH)   # o (write requests issued by the writers, modular)
        self.taken  = Signal(COUNT_WIDTH)   # o (write TLPs taken by the block, modular, in sys)

        # # #

        self._issue_pulses = []
        self._enables      = []
        self.issued_next   = Signal(COUNT_WIDTH)
        self.restart       = Signal()   # Every writer off, the block quiet: start again from `taken`.

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

    def add_writer(self, request, irq, loop_status, enable):
        """Fence one LitePCIe DMA writer: `request` its port's request stream (a write request is issued at
        its last beat), `irq` its interrupt, `loop_status` its table's loop-status CSR, `enable` its enable.
        Returns the fenced interrupt; the CSR then shows the fenced loop status."""
        self._issue_pulses.append(request.valid & request.ready & request.last)
        self._enables.append(enable)

        held_irq = HeldEvents(self.issued_next, self.taken)
        self.submodules += held_irq
        self.comb += [held_irq.event.eq(irq), held_irq.flush.eq(self.restart)]

        raw       = take_csr_status(loop_status)
        published = Signal(len(raw), reset=raw.reset.value)
        last_raw  = Signal(len(raw), reset=raw.reset.value)
        held_status = HeldEvents(self.issued_next, self.taken, value_width=len(raw))
        self.submodules += held_status
        self.sync += last_raw.eq(raw)
        self.comb += [
            held_status.flush.eq(self.restart),
            held_status.event.eq(raw != last_raw),
            held_status.value.eq(raw),
            loop_status.status.eq(published),
        ]
        self.sync += If(held_status.release, published.eq(held_status.released_value))
        return held_irq.release

    def do_finalize(self):
        increment = Signal(bits_for(len(self._issue_pulses)))
        self.comb += increment.eq(sum(self._issue_pulses) if self._issue_pulses else 0)
        # Start again from `taken` once every writer is off and the block has been quiet (see above).
        all_off    = Signal()
        last_taken = Signal(COUNT_WIDTH)
        quiet      = Signal(max=QUIET_CYCLES + 1)
        self.comb += all_off.eq(reduce(and_, [~e for e in self._enables], 1))
        self.sync += [
            last_taken.eq(self.taken),
            If(~all_off | (self.taken != last_taken),
                quiet.eq(0),
            ).Elif(quiet != QUIET_CYCLES,
                quiet.eq(quiet + 1),
            ),
        ]
        self.comb += [
            self.restart.eq(quiet == QUIET_CYCLES),
            self.issued_next.eq(Mux(self.restart, self.taken, self.issued + increment)),
        ]
        self.sync += self.issued.eq(self.issued_next)
