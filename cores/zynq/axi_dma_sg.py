# This file is part of hostlink.
# Copyright (c) 2026 hostlink developers
# SPDX-License-Identifier: BSD-2-Clause

"""The AXI DMA's scatter-gather engine (Xilinx PG021, C_INCLUDE_SG = 1), one per channel, and the port it
shares with the data engines (cores/zynq/axi_dma.py builds them with `AXIDMA(bus, sg=True)`).

    SGEngine(channel, bus, s2mm, ...)   # fetches descriptors, starts the channel's data engine, writes back
    AXIBusShare(bus, n)                 # n AXI masters on one AXI port, responses routed back in order

The descriptor (hostlink.protocol.AXI_DMA_DESCRIPTOR; PG021's "Scatter Gather Descriptor"): NXTDESC, the
buffer's address, CONTROL (25:0 length; MM2S: 27 TXSOF, 26 TXEOF) and STATUS (25:0 bytes transferred;
S2MM: 27 RXSOF, 26 RXEOF; 28 DMAIntErr, 29 DMASlvErr, 30 DMADecErr, 31 Cmplt). The engine reads its first
32 bytes in one burst (the APP words are not read) and writes STATUS back alone (one beat, its lanes' strobes).

PG021's, as built: a TAILDESC written to a running channel starts the engine at CURDESC (or, once a chain has
run, at the last descriptor's NXTDESC, as Linux's ring of descriptors expects) and it runs until the descriptor
at TAILDESC completes: Idle then reads 1. A TAILDESC written while halted has no effect but reads back; CURDESC
is taken only while RS is 0. Each completed descriptor's STATUS gets Cmplt and its bytes. A descriptor already
Cmplt when fetched sets SGIntErr; a length of 0 sets DMAIntErr (PG021's DMASR: "the buffer length specified in
the fetched descriptor is set to 0"); SLVERR or DECERR on a descriptor's fetch or write-back sets SGSlvErr or
SGDecErr; SLVERR or DECERR on the data sets DMASlvErr or DMADecErr and the descriptor's STATUS gets the error
(written back, Cmplt set). Each error raises Err_Irq and halts the channel (RS cleared) until a reset.
IOC_Irq: a completed descriptor with EOF (MM2S: TXEOF; S2MM: RXEOF, the packet's `last` in its buffer)
counts IRQThresholdSts down; at 0 IOC_Irq rises and the counter reloads (from IRQThreshold, as on a write of
DMACR's IRQThreshold or a delay interrupt). Dly_Irq: with IRQDelay not 0, a timer starts when a packet ends
without raising IOC_Irq; it counts IRQDelaySts up every `delay_resolution` cycles (PG021's
C_DLYTMR_RESOLUTION, 125 by default: "in units of the SG clock", here the logic's clock) and at IRQDelay
raises Dly_Irq; a new packet's first descriptor stops it.

Ours, where PG021 leaves it open or where this engine is simpler than Xilinx's:
- no prefetch: one descriptor at a time, fetched once the previous one's STATUS is written back (Xilinx's
  engine queues several); the descriptor's MSB words are ignored (a 32-bit bus);
- a buffer address not aligned to the bus sets DMAIntErr (no Data Realignment Engine);
- S2MM: a packet longer than its buffer goes on into the next descriptor's buffer (RXSOF off there);
  a buffer that a packet leaves full must be a whole number of beats (8 bytes on an HP port) long, else the
  packet's next beat's bytes past the buffer's length are written there too (the bytes-transferred field
  counts them);
- MM2S: a packet spans its descriptors from TXSOF to TXEOF and only TXEOF's last beat has `last`; a
  descriptor whose length ends inside a beat gives that beat partial `keep` mid-packet;
- a chain whose TAILDESC descriptor has no EOF is no error (PG021 names none): the engine goes idle with the
  packet open (MM2S: no `last` yet; S2MM: the stream waits), no IOC_Irq; the next TAILDESC continues it;
- RS cleared while a descriptor runs: it completes (written back), the next is not fetched, then Halted.
"""

from functools import reduce
from operator import and_

from migen import *
from migen.genlib.fsm import FSM, NextState, NextValue
from migen.genlib.roundrobin import RoundRobin, SP_CE

from litex.gen import *

from litex.soc.interconnect import stream
from litex.soc.interconnect.axi import AXIInterface

from hostlink.protocol import AXI_DMA_DESCRIPTOR as DESC, AXI_DMA_DESCRIPTOR_ALIGN, AXI_DMA_LENGTH_BITS as LENGTH_BITS, \
    DESC_CONTROL_TXEOF, DESC_STATUS_CMPLT, DESC_STATUS_RXEOF, DESC_STATUS_RXSOF

__all__ = ["SGEngine", "AXIBusShare"]

RESP_SLVERR, RESP_DECERR = 0b10, 0b11
DESCRIPTOR_READ_BYTES = 32   # NXTDESC .. STATUS: what the engine fetches of each descriptor.


def _bit(mask):
    return mask.bit_length() - 1


def _aligned(value):
    """A descriptor pointer: its low 6 bits read 0 (PG021: descriptors are 16-word aligned)."""
    return Cat(C(0, _bit(AXI_DMA_DESCRIPTOR_ALIGN)), value[_bit(AXI_DMA_DESCRIPTOR_ALIGN):32])


# Bus share ----------------------------------------------------------------------------------------------

class AXIBusShare(LiteXModule):
    """`n` AXI masters (`masters`, each like `bus`) on the AXI port `bus`, as the AXI interconnect between
    PG021's M_AXI_SG, M_AXI_MM2S and M_AXI_S2MM and a Zynq HP port does. Requests are granted round-robin,
    a master keeping the grant while its request waits; every request goes out with ID 0, so responses come
    back in request order, and each is routed to the master that asked (an order FIFO per response channel,
    `depth` requests deep each way; a full FIFO holds requests back). Write data follows the write
    addresses' order, a burst at a time."""

    def __init__(self, bus, n, depth=16):
        data_width = len(bus.w.data)
        self.masters = masters = [AXIInterface(data_width=data_width, address_width=len(bus.ar.addr),
            id_width=len(bus.ar.id), version=bus.version) for _ in range(n)]

        # # #

        self._share_requests(bus.ar, [m.ar for m in masters], [(bus.r, [m.r for m in masters], "last")], depth)
        self._share_requests(bus.aw, [m.aw for m in masters],
                             [(bus.w, [m.w for m in masters], "last"), (bus.b, [m.b for m in masters], None)], depth)
        if hasattr(bus.w, "id"):
            self.comb += bus.w.id.eq(0)

    def _share_requests(self, target, requests, followers, depth):
        """Arbitrates the address channels `requests` onto `target` and routes each follower channel
        (forward: write data to the target; backward: responses to the masters) by the order of the
        granted requests, popping an entry on each follower's `last` beat (None: every beat)."""
        n     = len(requests)
        fifos = [stream.SyncFIFO([("master", bits_for(max(n - 1, 1)))], depth, buffered=False) for _ in followers]
        self.submodules += fifos
        room = Signal()   # Each order FIFO takes the request's entry.
        self.comb += room.eq(reduce(and_, [f.sink.ready for f in fifos]))

        # Control-Path: the grant moves on (round-robin) once its master's request is taken or gone.
        rr = RoundRobin(n, SP_CE)
        self.submodules += rr
        grant  = rr.grant
        valids = Array([r.valid for r in requests])
        taken  = Signal()
        self.comb += [
            taken.eq(target.valid & target.ready),
            rr.request.eq(Cat(*[r.valid for r in requests])),
            rr.ce.eq(~valids[grant] | taken),
        ]
        # Data-Path: the granted request out; each follower by its order FIFO's head.
        fields = [name for name, _ in target.description.payload_layout] + ["id"]
        self.comb += [
            target.valid.eq(valids[grant] & room),
            *[getattr(target, f).eq(Array([getattr(r, f) for r in requests])[grant]) for f in fields if f != "id"],
            target.id.eq(0),
        ]
        for i, r in enumerate(requests):
            self.comb += r.ready.eq((grant == i) & target.ready & room)
        for (channel, channels, last), fifo in zip(followers, fifos):
            self.comb += [fifo.sink.valid.eq(taken), fifo.sink.master.eq(grant)]
            head = fifo.source.master
            payload = [name for name, _ in channel.description.payload_layout]
            if hasattr(channel, "strb"):   # Write data: from the masters to the target.
                self.comb += [
                    channel.valid.eq(fifo.source.valid & Array([c.valid for c in channels])[head]),
                    *[getattr(channel, f).eq(Array([getattr(c, f) for c in channels])[head]) for f in payload],
                    channel.last.eq(Array([c.last for c in channels])[head]),
                ]
                for i, c in enumerate(channels):
                    self.comb += c.ready.eq(fifo.source.valid & (head == i) & channel.ready)
                self.comb += fifo.source.ready.eq(channel.valid & channel.ready & channel.last)
            else:
                for i, c in enumerate(channels):
                    self.comb += [
                        c.valid.eq(fifo.source.valid & (head == i) & channel.valid),
                        *[getattr(c, f).eq(getattr(channel, f)) for f in payload],
                        c.id.eq(0),
                    ]
                    if last:
                        self.comb += c.last.eq(channel.last)
                self.comb += [
                    channel.ready.eq(fifo.source.valid & Array([c.ready for c in channels])[head]),
                    fifo.source.ready.eq(channel.valid & channel.ready & (channel.last if last else 1)),
                ]


# Descriptor engine --------------------------------------------------------------------------------------

class SGEngine(LiteXModule):
    """One channel's scatter-gather engine (the module docstring says what it does, as PG021 and ours).

    Parameters:
        channel           the channel's registers and state (axi_dma._Channel): RS, the interrupts, the
                          error bits, IRQThreshold / IRQDelay, Idle.
        bus               an AXI master (AXIBusShare's) for the descriptors' fetches and write-backs.
        s2mm              the S2MM channel's engine (RXSOF/RXEOF and bytes from the stream) or MM2S's.
        resetting         the soft reset is under way: no new bus request; the engine is `quiet` in IDLE.
        delay_resolution  cycles per count of IRQDelay (PG021's C_DLYTMR_RESOLUTION).

    Interface:
        cur_write, tail_write, control_write, wdata (i)  a CURDESC, TAILDESC or DMACR write and its data.
        curdesc, taildesc, curdesc_msb, taildesc_msb      the registers (the MSBs are kept, ours).
        sg_int_err, sg_slv_err, sg_dec_err                DMASR's SG error bits; threshold_sts, delay_sts its counters.
        start, address, length, eof (o)                   the data engine's next transfer (eof: MM2S's TXEOF).
        done, bytes, rx_eof (i)                           its end: S2MM's bytes and whether `last` ended it.
        active (o)                                        not IDLE (DMASR.Halted waits for it).
    """

    def __init__(self, channel, bus, s2mm, resetting, delay_resolution=125):
        if not (isinstance(delay_resolution, int) and 1 <= delay_resolution <= 2**16):
            raise ValueError(f"delay_resolution (cycles per IRQDelay count) must be 1 to 65536, not {delay_resolution!r}")
        data_width = len(bus.w.data)
        beat_bytes = data_width//8
        shift      = log2_int(beat_bytes)
        if data_width not in (32, 64):
            raise ValueError(f"the scatter-gather engine takes a 32- or 64-bit bus, not {data_width!r} bits")
        self.cur_write     = Signal()     # i
        self.tail_write    = Signal()     # i
        self.control_write = Signal()     # i
        self.wdata         = Signal(32)   # i
        self.curdesc       = Signal(32)
        self.curdesc_msb   = Signal(32)
        self.taildesc      = Signal(32)
        self.taildesc_msb  = Signal(32)
        self.sg_int_err    = Signal()
        self.sg_slv_err    = Signal()
        self.sg_dec_err    = Signal()
        self.threshold_sts = Signal(8, reset=1)
        self.delay_sts     = Signal(8)
        self.start         = Signal()              # o
        self.address       = Signal(32)            # o
        self.length        = Signal(LENGTH_BITS)   # o
        self.eof           = Signal()              # o
        self.done          = Signal()              # i
        self.bytes         = Signal(LENGTH_BITS)   # i
        self.rx_eof        = Signal()              # i
        self.active        = Signal()              # o

        # # #

        # State the concerns share: the next descriptor's address (CURDESC's, then each one's NXTDESC); a
        # TAILDESC written while running and not reached yet; the last descriptor ended without EOF (the
        # packet goes on); the one just done ended its packet; a descriptor done and written back without
        # error; a transfer starting a packet.
        self._fetch_at   = Signal(32)
        self._pending    = Signal()
        self._in_packet  = Signal()
        self._eof        = Signal()
        self._completed  = Signal()
        self._new_packet = Signal()

        # Registers (CURDESC, TAILDESC) ----------------------------------------------------------------
        self._add_pointers(channel, resetting)

        # Descriptors: fetch, check, the data engine's transfer, STATUS write-back (FSM) -------------------
        self._add_descriptors(channel, bus, s2mm, resetting, beat_bytes, shift)

        # Interrupt coalescing (IRQThreshold, IRQDelay) ----------------------------------------------------
        self._add_coalescing(channel, delay_resolution)

    def _add_pointers(self, channel, resetting):
        """CURDESC only while RS is 0 (PG021: read-only while running); TAILDESC always reads back, and starts
        the engine only on a running channel."""
        fetch_at, pending = self._fetch_at, self._pending
        self.sync += [
            If(self.cur_write & ~channel.rs,
                self.curdesc.eq(_aligned(self.wdata)),
                fetch_at.eq(_aligned(self.wdata)),
            ),
            If(self.tail_write,
                self.taildesc.eq(_aligned(self.wdata)),
                If(channel.rs & ~resetting, pending.eq(1), channel.idle.eq(0)),
            ),
        ]

    def _add_descriptors(self, channel, bus, s2mm, resetting, beat_bytes, shift):
        """The descriptor engine: IDLE until a TAILDESC, FETCH its 32 bytes, CHECK them (errors halt), RUN the
        data engine's transfer, WRITE its STATUS back, then on to NXTDESC or IDLE at the tail."""
        fetch_at, pending, in_packet, eof = self._fetch_at, self._pending, self._in_packet, self._eof
        completed, new_packet = self._completed, self._new_packet
        nxtdesc   = Signal(32)
        control   = Signal(32)
        status    = Signal(32)     # As fetched (Cmplt: already done), then as written back.
        fetch_err = Signal(2)      # The fetch's worst response (SLVERR 2, DECERR 3).
        beat      = Signal(max=DESCRIPTOR_READ_BYTES//beat_bytes)
        aw_done   = Signal()
        w_done    = Signal()

        # Data-Path: the descriptor's words off the read beats; STATUS's write-back beat.
        words = {DESC["NXTDESC"]: nxtdesc, DESC["BUFFER_ADDRESS"]: self.address, DESC["CONTROL"]: control,
                 DESC["STATUS"]: status}
        self.comb += [
            bus.ar.addr.eq(fetch_at),
            bus.ar.len.eq(DESCRIPTOR_READ_BYTES//beat_bytes - 1),
            bus.ar.size.eq(shift),
            bus.ar.burst.eq(0b01),
            bus.ar.cache.eq(0b0011),
            bus.aw.addr.eq(self.curdesc + (DESC["STATUS"] & ~(beat_bytes - 1))),
            bus.aw.len.eq(0),
            bus.aw.size.eq(shift),
            bus.aw.burst.eq(0b01),
            bus.aw.cache.eq(0b0011),
            bus.w.data.eq(status << (8*(DESC["STATUS"] % beat_bytes))),
            bus.w.strb.eq(0xf << (DESC["STATUS"] % beat_bytes)),
            bus.w.last.eq(1),
            self.length.eq(control[:LENGTH_BITS]),
            self.eof.eq(control[_bit(DESC_CONTROL_TXEOF)]),
        ]

        # Control-Path (FSM).
        self.fsm = fsm = FSM(reset_state="IDLE")

        def halt(*bits):
            """An error: its DMASR bit, Err_Irq, RS cleared (Halted once back in IDLE), nothing pending."""
            return [NextValue(b, 1) for b in bits] + [NextValue(channel.rs, 0), NextValue(channel.err_irq, 1),
                                                      NextValue(pending, 0)]

        fsm.act("IDLE",
            If(pending & channel.rs & ~resetting, NextState("FETCH")),
        )
        fsm.act("FETCH",
            bus.ar.valid.eq(1),
            If(bus.ar.ready,
                NextValue(self.curdesc, fetch_at),
                NextValue(beat, 0),
                NextValue(fetch_err, 0),
                NextState("FETCH_DATA"),
            ),
        )
        fsm.act("FETCH_DATA",
            bus.r.ready.eq(1),
            If(bus.r.valid,
                NextValue(beat, beat + 1),
                *[If(beat == offset//beat_bytes, NextValue(word, bus.r.data[8*(offset % beat_bytes):][:32]))
                  for offset, word in words.items()],
                If(bus.r.resp > fetch_err, NextValue(fetch_err, bus.r.resp)),
                If(bus.r.last, NextState("CHECK")),
            ),
        )
        fsm.act("CHECK",
            If(resetting,
                NextState("IDLE"),
            ).Elif(fetch_err == RESP_SLVERR,
                *halt(self.sg_slv_err),
                NextState("IDLE"),
            ).Elif(fetch_err == RESP_DECERR,
                *halt(self.sg_dec_err),
                NextState("IDLE"),
            ).Elif(status[_bit(DESC_STATUS_CMPLT)],
                *halt(self.sg_int_err),
                NextState("IDLE"),
            ).Elif((self.length == 0) | (self.address[:shift] != 0),
                *halt(channel.int_err),
                NextState("IDLE"),
            ).Else(
                self.start.eq(1),
                new_packet.eq(~in_packet),
                NextState("RUN"),
            ),
        )
        fsm.act("RUN",
            If(resetting,
                NextState("IDLE"),
            ).Elif(self.done,
                NextValue(eof, self.rx_eof if s2mm else self.eof),
                NextValue(status, Cat(
                    self.bytes if s2mm else self.length,
                    (self.rx_eof if s2mm else 0), (~in_packet if s2mm else 0),
                    channel.int_err, channel.slv_err, channel.dec_err, C(1, 1))),
                NextValue(aw_done, 0),
                NextValue(w_done, 0),
                NextState("WRITE"),
            ),
        )
        fsm.act("WRITE",
            bus.aw.valid.eq(~aw_done),
            bus.w.valid.eq(~w_done),
            If(bus.aw.valid & bus.aw.ready, NextValue(aw_done, 1)),
            If(bus.w.valid & bus.w.ready, NextValue(w_done, 1)),
            If((aw_done | bus.aw.ready) & (w_done | bus.w.ready), NextState("WRITE_RESPONSE")),
        )
        fsm.act("WRITE_RESPONSE",
            bus.b.ready.eq(1),
            If(bus.b.valid,
                NextValue(fetch_at, _aligned(nxtdesc)),
                NextValue(in_packet, ~eof),
                NextState("IDLE"),
                If(resetting,
                ).Elif(bus.b.resp == RESP_SLVERR,
                    *halt(self.sg_slv_err),
                ).Elif(bus.b.resp == RESP_DECERR,
                    *halt(self.sg_dec_err),
                ).Elif(channel.int_err | channel.slv_err | channel.dec_err,
                    *halt(),
                ).Else(
                    completed.eq(1),
                    # The tail reached: Idle (unless a new TAILDESC arrives now); else on, while running.
                    If(self.curdesc == self.taildesc,
                        If(~self.tail_write, NextValue(pending, 0), NextValue(channel.idle, 1)),
                    ).Elif(channel.rs,
                        NextState("FETCH"),
                    ),
                ),
            ),
        )
        self.comb += self.active.eq(~fsm.ongoing("IDLE"))

    def _add_coalescing(self, channel, delay_resolution):
        """IRQThresholdSts counts EOF completions down to IOC_Irq; the delay timer runs after a packet that did
        not raise it, IRQDelaySts counting every `delay_resolution` cycles, up to Dly_Irq."""
        completed, eof, new_packet = self._completed, self._eof, self._new_packet
        delay_running = Signal()
        prescaler     = Signal(max=delay_resolution)
        reload        = [self.threshold_sts.eq(channel.irq_threshold), delay_running.eq(0), self.delay_sts.eq(0)]
        self.sync += [
            If(completed & eof,
                If(self.threshold_sts <= 1,
                    channel.ioc_irq.eq(1), *reload,
                ).Else(
                    self.threshold_sts.eq(self.threshold_sts - 1),
                    delay_running.eq(channel.irq_delay != 0),
                    self.delay_sts.eq(0),
                    prescaler.eq(0),
                ),
            ).Elif(delay_running,
                If(prescaler == delay_resolution - 1,
                    prescaler.eq(0),
                    If(self.delay_sts + 1 >= channel.irq_delay,
                        channel.dly_irq.eq(1), *reload,
                    ).Else(
                        self.delay_sts.eq(self.delay_sts + 1),
                    ),
                ).Else(
                    prescaler.eq(prescaler + 1),
                ),
            ),
            If(new_packet, delay_running.eq(0), self.delay_sts.eq(0)),
            If(self.control_write & (self.wdata[16:24] != 0), self.threshold_sts.eq(self.wdata[16:24])),
        ]
