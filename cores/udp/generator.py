# This file is part of hostlink.
# Copyright (c) 2026 hostlink developers
# SPDX-License-Identifier: BSD-2-Clause

"""Packet generator for FPGA-to-host rate tests: numbered payloads with a checkable pattern."""

from migen import *

from litex.gen import *

from litex.soc.interconnect import stream

from hostlink.cores.udp.common import *

# Packet Generator ---------------------------------------------------------------------------------

class PacketGenerator(LiteXModule):
    """Emits `count` payloads of `length` bytes (0: until `stop`), `gap` idle cycles apart
    (0: back-to-back), in the format of `generator_payload`: the 32-bit big-endian sequence
    number (0 at each `start`) then (seq + i) & 0xff at byte i.

    `count`, `length` and `gap` are sampled at `start`; `stop` ends the run after the packet
    in flight, so a packet is never cut.
    """
    def __init__(self):
        self.source = source = stream.Endpoint(udp_payload_layout)
        self.start  = Signal()   # i: pulse, starts a run (ignored while busy).
        self.stop   = Signal()   # i: pulse, ends the run after the current packet.
        self.count  = Signal(32) # i: packets in a run, 0 = until stop.
        self.length = Signal(16) # i: payload bytes.
        self.gap    = Signal(32) # i: idle cycles between packets.
        self.busy   = Signal()   # o
        self.seq    = Signal(32) # o: packets completed in the current/last run.

        # # #

        # Data-Path.
        # ----------
        count    = Signal(32)
        length   = Signal(16)
        gap      = Signal(32)
        # The end of a packet is known a cycle ahead: `last` is a register, loaded from `first_last`
        # at each packet's start and from `remaining` (bytes after the current one) on each byte,
        # so no subtraction or length comparison sits between the byte counter and the FSM.
        first_remaining = Signal(16)
        first_last      = Signal()
        remaining       = Signal(16)
        last            = Signal()
        index    = Signal(16)
        wait     = Signal(32)
        stopping = Signal()
        data     = Signal(8)
        seq      = self.seq
        self.comb += Case(index, {
            0 : data.eq(seq[24:32]),
            1 : data.eq(seq[16:24]),
            2 : data.eq(seq[ 8:16]),
            3 : data.eq(seq[ 0: 8]),
            "default" : data.eq(seq[:8] + index[:8]),
        })

        # Control-Path (FSM).
        # -------------------
        # `reached` (the packet being sent is the run's last) is a register: the 32-bit comparison
        # stays off the FSM's paths. NEXT, one cycle after each packet, reads it; the cycle is
        # hidden by the skid buffer in front of the transmitter, or counts as the gap's first one.
        done    = Signal()
        endless = Signal()
        reached = Signal()
        self.sync += reached.eq(seq == count)
        self.comb += done.eq(stopping | (~endless & reached))
        self.fsm = fsm = FSM(reset_state="IDLE")
        fsm.act("IDLE",
            If(self.start,
                # The last sequence number of the run, so the end test is a plain comparison.
                NextValue(count,    self.count - 1),
                NextValue(endless,  self.count == 0),
                NextValue(length,   self.length),
                NextValue(first_remaining, self.length - 1),
                NextValue(first_last,      self.length <= 1),
                NextValue(remaining,       self.length - 1),
                NextValue(last,            self.length <= 1),
                NextValue(gap,      self.gap),
                NextValue(seq,      0),
                NextValue(index,    0),
                NextValue(stopping, 0),
                NextState("SEND")
            )
        )
        fsm.act("SEND",
            self.busy.eq(1),
            If(self.stop, NextValue(stopping, 1)),
            source.valid.eq(1),
            source.length.eq(length),
            source.data.eq(data),
            source.last.eq(last),
            If(source.ready,
                NextValue(index, index + 1),
                NextValue(remaining, remaining - 1),
                NextValue(last, remaining == 1),
                If(source.last,
                    NextValue(index, 0),
                    NextValue(remaining, first_remaining),
                    NextValue(last,      first_last),
                    NextValue(seq, seq + 1),
                    NextState("NEXT")
                )
            )
        )
        fsm.act("NEXT",
            self.busy.eq(1),
            NextValue(wait, 2),
            If(done | self.stop,
                NextState("IDLE")
            ).Elif(gap > 1,
                NextState("GAP")
            ).Else(
                NextState("SEND")
            )
        )
        fsm.act("GAP",
            self.busy.eq(1),
            NextValue(wait, wait + 1),
            If(self.stop,
                NextState("IDLE")
            ).Elif(wait == gap,
                NextState("SEND")
            )
        )
