# This file is part of hostlink.
# Copyright (c) 2026 hostlink developers
# SPDX-License-Identifier: BSD-2-Clause

"""UserPort: a DMA channel's data, to and from the user's own logic, in the user's clock and width.

LitePCIe's DMA channel ends, on the FPGA side, in two streams of the PHY's width in the SoC's clock: what
its reader fetched from the host and what its writer sends to the host. A UserPort turns them into the
two streams a user's core connects to, in the core's clock domain and data width:

    Host-to-FPGA (h2c):  DMA reader ─► dma_sink ─► width converter ─► async FIFO ─► source  (user clock)
    FPGA-to-host (c2h):  sink (user clock) ─► async FIFO ─► width converter ─► framer ─► dma_source
                         └───────── user domain ─────────┘ └──────────────── sys domain ────────────────┘

The framer (BufferFramer) is a wire unless the DMA writer's flow is framed (real-time or packets, flow.py).

Bytes keep their order: the first byte from the host is the least significant byte of the first word
(width conversion takes and gives the least significant part first). `first` and `last` pass through:
on h2c they mark the DMA's buffers (when a buffer is a whole number of the user's words); on c2h `last`
ends a buffer early in the framed flows (its length in the buffer's header) and is ignored otherwise.

In the SoC (`hostlink.cores.pcie.integration.add_pcie_dma(user_ports=...)`) each channel with a UserPort
keeps its test patterns (or DRAM) and internal loopback: the `select` CSR gives the channel's data to the
user port (1) or to them (0, the reset state, so that LitePCIe's `dma_test` works unchanged). A port
not selected receives nothing and back-pressures its core.
"""

import struct

from migen import *
from migen.genlib.cdc import MultiReg, PulseSynchronizer, GrayDecoder

from litex.gen import *

from litex.soc.interconnect import stream
from litex.soc.interconnect.csr import *

from hostlink.protocol import HEADER_BYTES, HEADER_FIELDS, HEADER_MAGIC
from hostlink.cores.pcie.bytes_converter import BytesConverter, packet_layout
from hostlink.cores.pcie.deframer import BufferDeframer

# Parameters ---------------------------------------------------------------------------------------

def check_user_port(dma_data_width, data_width, fifo_depth):
    """Refuse, with a message a user can act on, a port that cannot be built."""
    if not isinstance(data_width, int) or isinstance(data_width, bool) or data_width <= 0 or data_width % 8:
        raise ValueError(f"user port data width must be a positive whole number of bytes in bits "
                         f"(8, 16, 32, ...), not {data_width!r}")
    if data_width % dma_data_width and dma_data_width % data_width:
        raise ValueError(f"user port data width must divide the DMA's {dma_data_width} bits or be a multiple "
                         f"of them (e.g. {dma_data_width//4}, {dma_data_width}, {dma_data_width*2}), not "
                         f"{data_width}")
    if not isinstance(fifo_depth, int) or isinstance(fifo_depth, bool) or fifo_depth < 4 or \
            fifo_depth & (fifo_depth - 1):
        raise ValueError(f"user port FIFO depth must be a power of 2 of at least 4 words, not {fifo_depth!r}")

def _fifo(layout, cd_from, cd_to, depth):
    """A FIFO of `depth` words from `cd_from` to `cd_to`: asynchronous across clocks, synchronous within one."""
    if cd_from == cd_to:
        return ClockDomainsRenamer(cd_from)(stream.SyncFIFO(layout, depth, buffered=True))
    return ResetSafeCrossing(layout, cd_from, cd_to, depth)


class ResetSafeCrossing(LiteXModule):
    """A stream from `cd_from` to `cd_to` through an asynchronous FIFO of `depth` words whose two sides start
    empty after a reset of either domain, however short, and hand on nothing while they reset.

    The pointer synchronizers of migen's AsyncFIFO have no reset. Reset one side for a cycle (the VC709's
    soft reset: its system clock is the PCIe block's, and `ctrl_reset` resets it for about a cycle) and the
    other side's copy of its pointer still shows where it was: the FIFO reads as holding entries it already
    handed on, and hands them on again, to a user core (host to FPGA) or to the DMA (FPGA to host), where
    they begin the next transfer, which then comes back shifted. So here each side is held in reset while
    either domain is (the other's reset crossed by a synchronizer), and `HOLD` cycles of its own clock after,
    long enough for both synchronizers to show the reset pointers; and while a side is in reset the stream on
    that side is held (`valid` and `ready` low). LiteX's `with_common_rst` does the first with clock domains of
    its own, which migen's simulator cannot clock; a reset inserted into the FIFO's own domains can be."""
    HOLD = 4

    def __init__(self, layout, cd_from, cd_to, depth):
        self.sink   = stream.Endpoint(layout)
        self.source = stream.Endpoint(layout)

        # # #

        resets = {}
        for side, own, other in (("write", cd_from, cd_to), ("read", cd_to, cd_from)):
            other_reset = Signal(reset=1)   # Held from power-up until the other side is seen out of reset.
            self.specials += MultiReg(ResetSignal(other, allow_reset_less=True), other_reset, odomain=own, reset=1)
            either = Signal()
            hold   = Signal(max=self.HOLD + 1, reset=self.HOLD)
            resets[side] = reset = Signal()
            self.comb += [
                either.eq(ResetSignal(own, allow_reset_less=True) | other_reset),
                reset.eq(either | (hold != 0)),
            ]
            sync = getattr(self.sync, own)
            sync += If(either, hold.eq(self.HOLD)).Elif(hold != 0, hold.eq(hold - 1))
        fifo = ResetInserter(["write", "read"])(stream.AsyncFIFO(layout, depth))
        self.fifo = fifo = ClockDomainsRenamer({"write": cd_from, "read": cd_to})(fifo)
        self.comb += [
            fifo.reset_write.eq(resets["write"]),
            fifo.reset_read.eq(resets["read"]),
            self.sink.connect(fifo.sink, omit={"valid", "ready"}),
            fifo.sink.valid.eq(self.sink.valid & ~resets["write"]),
            self.sink.ready.eq(fifo.sink.ready & ~resets["write"]),
            fifo.source.connect(self.source, omit={"valid", "ready"}),
            self.source.valid.eq(fifo.source.valid & ~resets["read"]),
            fifo.source.ready.eq(self.source.ready & ~resets["read"]),
        ]

# Event counter ------------------------------------------------------------------------------------

class EventCounter(LiteXModule):
    """Counts cycles where `event` is high; saturates (or wraps, without `saturate`); `clear` (a pulse)
    restarts it at 0."""
    def __init__(self, event, clear, width=32, saturate=True):
        self.value = Signal(width)   # o

        # # #

        self.sync += If(clear,
            self.value.eq(0),
        ).Elif(event & ((self.value != (2**width - 1)) if saturate else 1),
            self.value.eq(self.value + 1),
        )


class FIFOHighWater(LiteXModule):
    """The most words a FIFO from `write_domain` to `read_domain` held since `clear` (a sys pulse), in sys.

    It counts the words in (`write`, a handshake of `write_domain`) and out (`read`, of `read_domain`), each
    readable in sys (CrossedEventCounter), and keeps the largest difference: the level as sys sees it, a
    few cycles late on the side that crosses, which is what a high-water mark needs (a FIFO that fills up
    shows a full FIFO)."""
    def __init__(self, write, read, write_domain, read_domain, depth, clear):
        width = log2_int(depth) + 2
        self.value = Signal(width)   # o (sys)

        # # #

        self.written = CrossedEventCounter(write, clear, write_domain, width, saturate=False)
        self.read    = CrossedEventCounter(read,  clear, read_domain,  width, saturate=False)
        level = Signal(width)
        self.comb += level.eq(self.written.value - self.read.value)
        self.sync += If(clear,
            self.value.eq(0),
        ).Elif(~level[-1] & (level > self.value),   # (A negative level: a count not yet crossed.)
            self.value.eq(level),
        )

class CrossedEventCounter(LiteXModule):
    """Counts cycles of `domain` where `event` (of `domain`) is high; saturates (or wraps, without
    `saturate`); readable in sys as `value` (a Gray-coded count through MultiRegs: every value read is one
    the count had). `clear`, a sys pulse, restarts it at 0."""
    def __init__(self, event, clear, domain, width=32, saturate=True):
        self.value = Signal(width)   # o (sys)

        # # #

        if domain == "sys":
            self.counter = EventCounter(event, clear, width, saturate)
            self.comb += self.value.eq(self.counter.value)
            return
        self.clear_sync = clear_sync = PulseSynchronizer("sys", domain)
        binary = Signal(width)
        gray   = Signal(width)
        step   = Signal(width)
        self.comb += [
            clear_sync.i.eq(clear),
            step.eq(binary + 1),
        ]
        sync = getattr(self.sync, domain)
        sync += If(clear_sync.o,
            binary.eq(0),
            gray.eq(0),
        ).Elif(event & ((binary != (2**width - 1)) if saturate else 1),
            binary.eq(step),
            gray.eq(step ^ step[1:]),
        )
        gray_sys = Signal(width)
        self.specials += MultiReg(gray, gray_sys, odomain="sys")
        self.decoder = decoder = GrayDecoder(width)
        self.comb += [
            decoder.i.eq(gray_sys),
            self.value.eq(decoder.o),
        ]

# Buffer framer ------------------------------------------------------------------------------------

def header_fields(**fields):
    """The framed buffer's header as one Cat's parts, in hostlink.protocol's field order: each field given
    as the signals that make it (LSB first), checked to fill the field's width exactly."""
    if set(fields) != {name for name, _, _ in HEADER_FIELDS}:
        raise ValueError(f"the header's fields are {[name for name, _, _ in HEADER_FIELDS]}, not {sorted(fields)}")
    parts = []
    for name, _, code in HEADER_FIELDS:
        width = sum(len(part) for part in fields[name])
        if width != 8*struct.calcsize("<" + code):
            raise ValueError(f"header field {name} is {8*struct.calcsize('<' + code)} bits, given {width}")
        parts += fields[name]
    return parts


class BufferFramer(LiteXModule):
    """FPGA-to-host data in the framed flows (flow.py): a header in every buffer; `last` ends a buffer.

    In *real-time* flow (`enable` and `drop`) it never waits for the host; in *packets* flow (`enable`
    without `drop`) it waits, as lossless flow does, and loses nothing.

    Between buffers, the framer begins a buffer only while the host has a buffer free (`given` more than it
    has begun since `reset`) and the DMA writer is enabled (`running`). Otherwise, in real-time flow, it
    drops the words that come, counting their bytes; in packets flow it holds them back. Once begun, a
    buffer's data goes to the writer with the writer's back-pressure (the port's FIFO takes it up; the
    writer has the host's buffer for it, so it only waits on the link). Data is therefore only ever dropped
    between buffers, and the header of each buffer says how many bytes were dropped just before its data:
    the host knows exactly where data was lost and how much.

    A buffer's data ends at the buffer's end, or early at a word with `last` (the core's packet, frame or
    result ends there). The DMA writer can only end a buffer at the end of a request (LitePCIe's writer ends
    the descriptor at the request whose data holds a `last`: splitter.py's `terminate`), so after an early
    `last` the framer pads with zero words to the end of the request: the next multiple of `max_request`
    bytes from the buffer's start (buffers are aligned to it), at most `max_request` - 1 bytes. The header
    says how many of the buffer's bytes are data.

    Output, per buffer: its data words (from the buffer's byte 32), the padding, and then the header's
    words; the `last` of the data (or padding) and of the header mark the requests that end them. The DMA
    writer's splitter in framed mode (splitter.py) writes the data from byte 32 and then the header at byte
    0, so that a buffer the host sees done has its header.

    Header (HEADER_BYTES = 32 bytes, little-endian, at the buffer's start; hostlink.protocol.HEADER_FIELDS):

        offset  size  field
             0     4  magic, HEADER_MAGIC ("HLK1")
             4     4  sequence: buffers begun since the table's reset, from 0
             8     8  time: the SoC's cycle counter (CycleCounter) when the buffer began
            16     8  dropped: bytes dropped between the previous buffer's data and this one's (for the
                      first buffer: since the table's reset); always 0 in packets flow
            24     4  data bytes after the header: buffer_bytes - 32, or fewer when a `last` ended it
            28     4  flags: bit 0 (HEADER_FLAG_END), a `last` ended the data (the packet's end)

    `sink.bytes` gives the bytes of a word with `last` that hold data (the rest of the word is not counted;
    0 means the whole word). With `enable` low the framer is a wire. `data_width` (bits) must divide 256.
    """
    def __init__(self, data_width):
        if data_width > HEADER_BYTES*8 or (HEADER_BYTES*8) % data_width:
            raise ValueError(f"framed flows need a DMA width that divides {HEADER_BYTES*8} bits, "
                             f"not {data_width}")
        word_bytes   = data_width//8
        byte_shift   = log2_int(word_bytes)
        self.sink         = sink   = stream.Endpoint([("data", data_width), ("bytes", byte_shift)])  # i
        self.source       = source = stream.Endpoint([("data", data_width)])   # o
        self.enable       = Signal()     # i: a framed flow
        self.drop         = Signal()     # i: real-time (drop between buffers) rather than packets (wait)
        self.running      = Signal()     # i: the DMA writer is enabled
        self.reset        = Signal()     # i: the writer's table reset (restart sequence and counts)
        self.given        = Signal(32)   # i: buffers the host has given (flow.py)
        self.buffer_bytes = Signal(24)   # i
        self.max_request  = Signal(16, reset=128)   # i: the writer's largest request (the link's MPS), bytes
        self.time         = Signal(64)   # i: the cycle counter
        self.dropped      = Signal()     # o: a word dropped this cycle
        self.begun        = Signal(32)   # o: buffers begun since `reset`

        # # #

        header_words = HEADER_BYTES//word_bytes
        sequence      = Signal(32)
        dropped_bytes = Signal(64)   # Since the last buffer's data.
        header        = Signal(HEADER_BYTES*8)
        index         = Signal(max=max(header_words, 2))
        position      = Signal(24)   # Words of the buffer written (the header's included).
        data_bytes    = Signal(24)
        ended         = Signal()     # A `last` ended the data.
        begun_time    = Signal(64)
        begun_dropped = Signal(64)
        buffer_words  = Signal(24)
        request_mask  = Signal(16)   # Words per request - 1.
        available     = Signal(32)
        next_position = Signal(24)
        at_end        = Signal()     # `next_position` ends a request (or the buffer).
        self.comb += [
            buffer_words.eq(self.buffer_bytes[byte_shift:]),
            request_mask.eq((self.max_request >> byte_shift) - 1),
            available.eq(self.given - self.begun),
            next_position.eq(position + 1),
            at_end.eq(((next_position & request_mask) == 0) | (next_position == buffer_words)),
        ]

        # The table's reset restarts the ring (buffer 0, nothing dropped yet): it resets the FSM and every
        # value it keeps.
        self.fsm = fsm = ResetInserter()(FSM(reset_state="BETWEEN"))
        self.comb += fsm.reset.eq(self.reset)
        fsm.act("BETWEEN",
            If(~self.enable,
                sink.connect(source, omit={"bytes"}),
            ).Elif(sink.valid,
                If(self.running & (available != 0) & ~available[31],
                    NextValue(begun_time, self.time),
                    NextValue(begun_dropped, dropped_bytes),
                    NextValue(self.begun, self.begun + 1),
                    NextValue(dropped_bytes, 0),
                    NextValue(position, header_words),
                    NextValue(data_bytes, 0),
                    NextValue(ended, 0),
                    NextState("DATA"),
                ).Elif(self.drop,
                    sink.ready.eq(1),
                    self.dropped.eq(1),
                    NextValue(dropped_bytes, dropped_bytes + word_bytes),
                ),
            ),
        )
        last_bytes = Signal(byte_shift + 1)
        self.comb += last_bytes.eq(Mux(sink.last & (sink.bytes != 0), sink.bytes, word_bytes))
        fsm.act("DATA",
            sink.connect(source, omit={"bytes", "first", "last"}),
            source.last.eq((next_position == buffer_words) | (sink.last & at_end)),
            If(sink.valid & source.ready,
                NextValue(position, next_position),
                NextValue(data_bytes, data_bytes + last_bytes),
                If((next_position == buffer_words) | sink.last,
                    NextValue(ended, sink.last),
                    If(at_end,
                        NextState("HEADER_LOAD"),
                    ).Else(
                        NextState("PAD"),
                    ),
                ),
            ),
        )
        fsm.act("PAD",
            source.valid.eq(1),
            source.data.eq(0),
            source.last.eq(at_end),
            If(source.ready,
                NextValue(position, next_position),
                If(at_end, NextState("HEADER_LOAD")),
            ),
        )
        fsm.act("HEADER_LOAD",
            NextValue(header, Cat(*header_fields(
                magic=[Constant(HEADER_MAGIC, 32)], sequence=[sequence], time=[begun_time],
                dropped=[begun_dropped], length=[data_bytes, Constant(0, 8)], flags=[ended, Constant(0, 31)]))),
            NextValue(sequence, sequence + 1),
            NextValue(index, 0),
            NextState("HEADER"),
        )
        words = [header[i*data_width:(i + 1)*data_width] for i in range(header_words)]
        fsm.act("HEADER",
            source.valid.eq(1),
            source.data.eq(Array(words)[index]),
            source.last.eq(index == header_words - 1),
            If(source.ready,
                NextValue(index, index + 1),
                If(index == header_words - 1, NextState("BETWEEN")),
            ),
        )

# User Port ----------------------------------------------------------------------------------------

class UserPort(LiteXModule):
    """One DMA channel's user side: stream ports in the user's clock and width.

    Parameters
    ----------
    dma_data_width : int
        The DMA's data width in bits (the PHY's: 64, 128 or 256).
    data_width : int
        The user's data width in bits, a whole number of bytes that divides `dma_data_width` or is a
        multiple of it. Default: `dma_data_width`.
    clock_domain : str
        The user's clock domain; "sys" (the DMA's own) means no clock crossing.
    fifo_depth : int
        Words (of `data_width`) of each direction's FIFO, a power of 2.
    with_csr : bool
        Add the `select` CSR and the counters as CSRs (`add_csr()`).

    Interface attributes
    --------------------
    source : stream.Endpoint([("data", data_width)]), user domain, o
        Host-to-FPGA data, `first`/`last` at the DMA's buffer bounds.
    sink : stream.Endpoint([("data", data_width)]), user domain, i
        FPGA-to-host data; `last` ends a buffer in the framed flows (real-time, packets).
    dma_sink : stream.Endpoint([("data", dma_data_width)]), sys domain, i
        The DMA reader's stream.
    dma_source : stream.Endpoint([("data", dma_data_width)]), sys domain, o
        Into the DMA writer.
    select : Signal, sys domain, i
        1: the SoC gives the channel's data to this port (driven by the `select` CSR with `with_csr`).
    h2c_clear, c2h_clear : Signal, sys domain, i
        Restart a direction's counters (the SoC pulses them when the channel's reader or writer is enabled).
    h2c_words, c2h_words : Signal(32), sys domain, o
        DMA words moved through the port in each direction.
    h2c_waits : Signal(32), sys domain, o
        Cycles the DMA reader had a word and the port was full: the core was slower than the host.
    c2h_waits : Signal(32), sys domain, o
        Cycles the port had a word for the DMA writer and the writer did not take it: the host (or the
        link) was slower than the core.
    h2c_fifo_max, c2h_fifo_max : sys domain, o
        The most words each direction's FIFO held since that direction's clear (FIFOHighWater).
    c2h_dropped : Signal(64), sys domain, o
        Bytes the real-time flow dropped between buffers (BufferFramer), since the writer's table reset.
    c2h_realtime, c2h_packets, c2h_running, c2h_table_reset, c2h_given, c2h_buffer_bytes, c2h_max_request,
    time : sys domain, i
        Framed flows: real-time on, packets on, the DMA writer's enable, its table's reset, the buffers the
        host has given it and their size (flow.py's DMAFlow), the writer's largest request (the link's
        MPS), the cycle counter (for the headers).
    h2c_core_waits, c2h_core_waits : Signal(32), sys domain, o
        Cycles of the core's clock the core was ready for a word the port did not have (h2c), or had a
        word the port could not take (c2h); counted in the core's clock, read through a Gray code.
    """
    def __init__(self, dma_data_width, data_width=None, clock_domain="sys", fifo_depth=512, with_csr=True):
        data_width = dma_data_width if data_width is None else data_width
        check_user_port(dma_data_width, data_width, fifo_depth)
        self.dma_data_width = dma_data_width
        self.data_width     = data_width
        self.clock_domain   = clock_domain
        self.fifo_depth     = fifo_depth

        self.source     = stream.Endpoint(packet_layout(data_width))    # o (user domain)
        self.sink       = stream.Endpoint(packet_layout(data_width))    # i (user domain)
        self.dma_sink   = stream.Endpoint([("data", dma_data_width)])   # i (sys)
        self.dma_source = stream.Endpoint([("data", dma_data_width)])   # o (sys)
        self.select     = Signal()                                      # i (sys): the `select` CSR with_csr
        self.h2c_clear  = Signal()                                      # i (sys)
        self.c2h_clear  = Signal()                                      # i (sys)
        # Framed flows (BufferFramer), from the DMA writer's flow gate (flow.py) and the cycle counter.
        self.c2h_realtime     = Signal()                                # i (sys)
        self.c2h_packets      = Signal()                                # i (sys)
        self.c2h_max_request  = Signal(16, reset=128)                   # i (sys)
        self.c2h_running      = Signal()                                # i (sys)
        self.c2h_table_reset  = Signal()                                # i (sys)
        self.c2h_given        = Signal(32)                              # i (sys)
        self.c2h_buffer_bytes = Signal(24)                              # i (sys)
        self.time             = Signal(64)                              # i (sys)
        # Packets flow host-to-FPGA (BufferDeframer), from the DMA reader's flow gate and the ring's size.
        self.h2c_packets      = Signal()                                # i (sys)
        self.h2c_table_reset  = Signal()                                # i (sys)
        self.h2c_buffer_bytes = Signal(24)                              # i (sys)

        # # #

        layout = packet_layout(data_width)

        # Host-to-FPGA: deframe (packets flow only) and convert in the DMA's domain, then the FIFO (of the
        # user's words) into the user's.
        self.h2c_deframer  = h2c_deframer  = BufferDeframer(dma_data_width)
        self.h2c_converter = h2c_converter = BytesConverter(dma_data_width, data_width)
        self.h2c_fifo      = h2c_fifo      = _fifo(layout, "sys", clock_domain, fifo_depth)
        self.comb += [
            self.dma_sink.connect(h2c_deframer.sink),
            h2c_deframer.enable.eq(self.h2c_packets),
            h2c_deframer.reset.eq(self.h2c_table_reset),
            h2c_deframer.buffer_bytes.eq(self.h2c_buffer_bytes),
            h2c_deframer.source.connect(h2c_converter.sink),
            h2c_converter.source.connect(h2c_fifo.sink),
            h2c_fifo.source.connect(self.source),
        ]

        # FPGA-to-host: the FIFO into the DMA's domain, then convert, then frame (framed flows only). A
        # `last` goes on only in framed flows (the framer ends a buffer there); otherwise buffers are whole.
        self.c2h_fifo      = c2h_fifo      = _fifo(layout, clock_domain, "sys", fifo_depth)
        self.comb += self.sink.connect(c2h_fifo.sink)
        self.c2h_converter = c2h_converter = BytesConverter(data_width, dma_data_width)
        self.c2h_framer    = c2h_framer    = BufferFramer(dma_data_width)
        framed = Signal()
        self.comb += [
            framed.eq(self.c2h_realtime | self.c2h_packets),
            c2h_fifo.source.connect(c2h_converter.sink, omit={"last"}),
            c2h_converter.sink.last.eq(c2h_fifo.source.last & framed),
            c2h_converter.source.connect(c2h_framer.sink),
            c2h_framer.source.connect(self.dma_source),
            c2h_framer.enable.eq(framed),
            c2h_framer.drop.eq(self.c2h_realtime),
            c2h_framer.running.eq(self.c2h_running),
            c2h_framer.reset.eq(self.c2h_table_reset),
            c2h_framer.given.eq(self.c2h_given),
            c2h_framer.buffer_bytes.eq(self.c2h_buffer_bytes),
            c2h_framer.max_request.eq(self.c2h_max_request),
            c2h_framer.time.eq(self.time),
        ]

        # Counters (sys domain).
        self.h2c_words_counter = EventCounter(self.dma_sink.valid & self.dma_sink.ready,   self.h2c_clear)
        self.h2c_waits_counter = EventCounter(self.dma_sink.valid & ~self.dma_sink.ready,  self.h2c_clear)
        self.c2h_words_counter = EventCounter(self.dma_source.valid & self.dma_source.ready,  self.c2h_clear)
        self.c2h_waits_counter = EventCounter(self.dma_source.valid & ~self.dma_source.ready, self.c2h_clear)
        self.c2h_dropped_counter = EventCounter(c2h_framer.dropped, self.c2h_table_reset, width=48)
        self.h2c_malformed_counter = EventCounter(h2c_deframer.malformed, self.h2c_table_reset)
        self.h2c_malformed = self.h2c_malformed_counter.value   # o (buffers)
        self.h2c_words = self.h2c_words_counter.value   # o
        self.h2c_waits = self.h2c_waits_counter.value   # o
        self.c2h_words = self.c2h_words_counter.value   # o
        self.c2h_waits = self.c2h_waits_counter.value   # o
        self.c2h_dropped = Signal(64)                   # o (bytes)
        self.comb += self.c2h_dropped.eq(self.c2h_dropped_counter.value*(dma_data_width//8))
        # In the core's clock, read in sys.
        self.h2c_core_waits_counter = CrossedEventCounter(self.source.ready & ~self.source.valid, self.h2c_clear,
                                                      clock_domain)
        self.c2h_core_waits_counter = CrossedEventCounter(self.sink.valid & ~self.sink.ready, self.c2h_clear,
                                                      clock_domain)
        self.h2c_core_waits = self.h2c_core_waits_counter.value   # o
        self.c2h_core_waits = self.c2h_core_waits_counter.value   # o
        # The FIFOs' high-water marks, in the user's words.
        self.h2c_fifo_high_water = FIFOHighWater(h2c_fifo.sink.valid & h2c_fifo.sink.ready,
            h2c_fifo.source.valid & h2c_fifo.source.ready, "sys", clock_domain, fifo_depth, self.h2c_clear)
        self.c2h_fifo_high_water = FIFOHighWater(c2h_fifo.sink.valid & c2h_fifo.sink.ready,
            c2h_fifo.source.valid & c2h_fifo.source.ready, clock_domain, "sys", fifo_depth, self.c2h_clear)
        self.h2c_fifo_max = self.h2c_fifo_high_water.value   # o
        self.c2h_fifo_max = self.c2h_fifo_high_water.value   # o

        if with_csr:
            self.add_csr()

    def add_csr(self):
        self._select = CSRStorage(fields=[
            CSRField("user", size=1, offset=0, values=[
                ("``0b0``", "The channel's data goes to its test patterns (or DRAM): the reset state."),
                ("``0b1``", "The channel's data goes to the user port."),
            ], description="Where the channel's data goes; change it only while the channel is disabled."),
        ])
        self.comb += self.select.eq(self._select.fields.user)
        self._h2c_words = CSRStatus(32, description="DMA words moved host-to-FPGA through the user port "
                                                    "(cleared when the reader is enabled).")
        self._h2c_waits = CSRStatus(32, description="Cycles the DMA reader had a word and the user port was full.")
        self._c2h_words = CSRStatus(32, description="DMA words moved FPGA-to-host through the user port "
                                                    "(cleared when the writer is enabled).")
        self._c2h_waits = CSRStatus(32, description="Cycles the user port had a word and the DMA writer did not "
                                                    "take it.")
        self._h2c_core_waits = CSRStatus(32, description="Cycles of the core's clock the core was ready and the "
                                                         "port had no word for it (the host was slower).")
        self._h2c_fifo_max = CSRStatus(32, description="The most words the host-to-FPGA FIFO held (cleared when "
                                                       "the reader is enabled).")
        self._c2h_fifo_max = CSRStatus(32, description="The most words the FPGA-to-host FIFO held (cleared when "
                                                       "the writer is enabled).")
        self._c2h_dropped = CSRStatus(64, description="Bytes the real-time flow dropped for want of a free "
                                                      "buffer (cleared with the writer's table).")
        self._c2h_core_waits = CSRStatus(32, description="Cycles of the core's clock the core had a word and the "
                                                         "port was full (the DMA was slower).")
        self._h2c_malformed = CSRStatus(32, description="Host-to-FPGA buffers of the packets flow dropped for a "
                                                        "bad header (cleared with the reader's table).")
        self.comb += [
            self._h2c_malformed.status.eq(self.h2c_malformed),
            self._h2c_core_waits.status.eq(self.h2c_core_waits),
            self._c2h_core_waits.status.eq(self.c2h_core_waits),
            self._h2c_words.status.eq(self.h2c_words),
            self._h2c_waits.status.eq(self.h2c_waits),
            self._c2h_words.status.eq(self.c2h_words),
            self._c2h_waits.status.eq(self.c2h_waits),
            self._c2h_dropped.status.eq(self.c2h_dropped),
            self._h2c_fifo_max.status.eq(self.h2c_fifo_max),
            self._c2h_fifo_max.status.eq(self.c2h_fifo_max),
        ]
