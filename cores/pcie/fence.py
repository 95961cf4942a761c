# This file is part of hostlink.
# Copyright (c) 2026 hostlink developers
# SPDX-License-Identifier: BSD-2-Clause

"""DMA fences: a LitePCIe DMA channel tells the host of a buffer only once the buffer's transfer is done.

LitePCIe's DMA reader and writer raise their interrupt, and their table's loop status counts a buffer, when
the buffer's last request leaves the DMA: a write's data is then still on its way to the host
(write_fence.py), a read's not yet fetched from host memory (read_fence.py). `DMAFence` counts the requests
the channels issue (`issued`) and those that are done (`taken`, the subclass's hand-off point, in request
order), and holds each channel's interrupt and each change of its loop status until `taken` reaches what
`issued` was at the event: every request issued before the event is then done.

Each held event costs time, not throughput: requests go on meanwhile. Interrupts are held apart, each with
its own target (`HeldPulses`), so that each still makes its own MSI; changes of loop status that come while
one is held merge into a second slot (`HeldEvents`: the newest value), so the host always sees progress
under continuous traffic.
"""

from functools import reduce
from operator import and_

from migen import *
from migen.fhdl.structure import _Assign, _Slice

from litex.gen import *

from litex.soc.interconnect import stream

# Counter width: requests between a DMA and its hand-off point stay far below half of 2**10.
COUNT_WIDTH  = 10
# Cycles with every channel disabled and nothing taken before a fence with restart starts again from `taken`.
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
    is released. Events are released in order and none is lost, only merged, unless `drop` discards
    everything held."""
    def __init__(self, issued, taken, value_width=1):
        assert len(issued) == len(taken)
        self.event          = Signal()             # i (issued already counts the requests it reports)
        self.value          = Signal(value_width)  # i
        self.flush          = Signal()             # i (release what is held: nothing more will be taken)
        self.drop           = Signal()             # i (discard what is held, and an event now)
        self.release        = Signal()             # o (pulse)
        self.released_value = Signal(value_width)  # o (valid with release)

        # # #

        width = len(issued)
        a_valid, a_target, a_value = Signal(), Signal(width), Signal(value_width)
        b_valid, b_target, b_value = Signal(), Signal(width), Signal(value_width)

        self.comb += [
            self.release.eq(a_valid & (reached(taken, a_target) | self.flush) & ~self.drop),
            self.released_value.eq(a_value),
        ]
        self.sync += [
            If(self.drop,
                a_valid.eq(0),
                b_valid.eq(0),
            ).Elif(self.release,
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

# Held Pulses --------------------------------------------------------------------------------------

class HeldPulses(LiteXModule):
    """Pulses (interrupts), each released once `taken` reaches `issued` as it was at the pulse: in order, one
    for one while at most `depth` are held.

    Each held pulse keeps its own target, so they leave spaced about as they came: LitePCIe's MSI core
    sends one MSI for all the pulses that reach it before it has sent the last one, so pulses released
    together (HeldEvents' merging) would make one MSI for several descriptors. Past `depth`, further pulses
    merge into one with the newest target until there is room again: never released before their requests,
    but fewer."""
    def __init__(self, issued, taken, depth=8):
        assert len(issued) == len(taken)
        self.event   = Signal()   # i (issued already counts the requests it reports)
        self.flush   = Signal()   # i (release what is held, one a cycle: nothing more will be taken)
        self.release = Signal()   # o (pulse)

        # # #

        width = len(issued)
        self.queue = queue = stream.SyncFIFO([("target", width)], depth)
        over_valid  = Signal()        # Pulses merged past `depth`...
        over_target = Signal(width)   # ...with the newest target.
        self.comb += [
            self.release.eq(queue.source.valid & (reached(taken, queue.source.target) | self.flush)),
            queue.source.ready.eq(self.release),
            If(over_valid,
                queue.sink.valid.eq(1),
                queue.sink.target.eq(over_target),
            ).Else(
                queue.sink.valid.eq(self.event),
                queue.sink.target.eq(issued),
            ),
        ]
        self.sync += If(over_valid,
            If(queue.sink.ready,
                over_valid.eq(self.event),     # The merged pulse moved in; a new one waits in its place.
                over_target.eq(issued),
            ).Elif(self.event,
                over_target.eq(issued),        # Merged.
            )
        ).Elif(self.event & ~queue.sink.ready,
            over_valid.eq(1),
            over_target.eq(issued),
        )

# DMA Fence ----------------------------------------------------------------------------------------

class DMAFence(LiteXModule):
    """Counts the requests the fenced channels issue against `taken`, and holds their events.

    A subclass drives `taken` (sys domain, modular, counting in the order requests were issued) and fences
    each channel with `add_channel`. With `restart`, once every channel is disabled and nothing has been
    taken for `QUIET_CYCLES`, the fence releases what it holds and starts again from `taken` (`issued` =
    `taken`): for a hand-off point that may never see a request (a write the block drops). Without it, every
    request must reach the hand-off point (every read ends: answered, failed or timed out)."""
    def __init__(self, restart):
        self.issued = Signal(COUNT_WIDTH)   # o (requests issued by the channels, modular)
        self.taken  = Signal(COUNT_WIDTH)   # o (requests done, modular, in sys)

        # # #

        self._with_restart = restart
        self._issue_pulses = []
        self._enables      = []
        self.issued_next   = Signal(COUNT_WIDTH)
        self.restart       = Signal()   # Every channel off, nothing taken for a while: start again from `taken`.

    def add_channel(self, issue, irq, loop_status, enable, table_reset=None, counts=()):
        """Fence one LitePCIe DMA reader or writer: `issue` pulses for each request it issues, `irq` is its
        interrupt, `loop_status` its table's loop-status CSR, `enable` its enable. Returns the fenced
        interrupt; the CSR then shows the fenced loop status.

        `table_reset` (a pulse: the table's reset, which zeroes the loop status) drops the changes of loop
        status still held and shows the zeroed status at once: it reports no buffer of the new run, and a
        held status of the run before, released later, would report buffers the new run has not done (a
        polling driver restarting a channel would count them).

        `counts`, pairs (raw, fenced) of sys signals, are fenced with the loop status: each `fenced` shows
        its `raw` as it was at the loop-status change being released (zero after a table reset); a count
        that moves with each buffer (flow.py's buffers done) so reaches the host no earlier than the loop
        status does."""
        self._issue_pulses.append(issue)
        self._enables.append(enable)

        held_irq = HeldPulses(self.issued_next, self.taken)
        self.submodules += held_irq
        self.comb += [held_irq.event.eq(irq), held_irq.flush.eq(self.restart)]

        status    = take_csr_status(loop_status)
        raw       = Cat(status, *[r for r, _ in counts])
        published = Signal(len(raw), reset=status.reset.value)
        last_raw  = Signal(len(raw), reset=status.reset.value)
        held_status = HeldEvents(self.issued_next, self.taken, value_width=len(raw))
        self.submodules += held_status
        self.sync += last_raw.eq(raw)
        self.comb += [
            held_status.flush.eq(self.restart),
            held_status.event.eq(raw != last_raw),
            held_status.value.eq(raw),
            loop_status.status.eq(published[:len(status)]),
        ]
        offset = len(status)
        for r, fenced in counts:
            self.comb += fenced.eq(published[offset:offset + len(r)])
            offset += len(r)
        zeroing = Signal()   # The cycle after a table reset, when LitePCIe has zeroed the loop status.
        if table_reset is not None:
            self.sync += zeroing.eq(table_reset)
            self.comb += held_status.drop.eq(table_reset | zeroing)
        # Zeroed as LitePCIe zeroes it (index 0, count 0): a constant, which maps on the flip-flops' reset.
        self.sync += If(zeroing,
            published.eq(0),
        ).Elif(held_status.release,
            published.eq(held_status.released_value),
        )
        return held_irq.release

    def do_finalize(self):
        increment = Signal(bits_for(len(self._issue_pulses)))
        self.comb += increment.eq(sum(self._issue_pulses) if self._issue_pulses else 0)
        if self._with_restart:
            # Start again from `taken` once every channel is off and nothing has been taken for a while.
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
            self.comb += self.restart.eq(quiet == QUIET_CYCLES)
        self.comb += self.issued_next.eq(Mux(self.restart, self.taken, self.issued + increment))
        self.sync += self.issued.eq(self.issued_next)
