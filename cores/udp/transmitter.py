# This file is part of hostlink.
# Copyright (c) 2026 hostlink developers
# SPDX-License-Identifier: BSD-2-Clause

"""Minimal UDP/IPv4 transmitter: static headers in LUTs, lengths from adders, checksum by one
subtraction (Alachiotis et al., "Efficient PC-FPGA communication over Gigabit Ethernet")."""

from functools import reduce
from operator import or_

from migen import *

from litex.gen import *

from litex.soc.interconnect import stream

from hostlink.cores.udp.common import *

DYNAMIC_OFFSETS = {IPV4_TOTAL_LENGTH_OFFSET, IPV4_TOTAL_LENGTH_OFFSET + 1, IPV4_CHECKSUM_OFFSET,
                   IPV4_CHECKSUM_OFFSET + 1, UDP_LENGTH_OFFSET, UDP_LENGTH_OFFSET + 1}

# Helpers ------------------------------------------------------------------------------------------

def greater_than(signal, constant):
    """`signal > constant` as plain logic built bit by bit from the LSB: a comparison with a
    constant needs no carry chain, and Yosys maps it to a few LUT4s instead of a CCU2C chain."""
    result = Constant(0)
    for i in range(len(signal)):
        bit = (constant >> i) & 1
        if bit:
            result = signal[i] & result
        else:
            result = signal[i] | result
    if constant >= 2**len(signal):
        return Constant(0)
    return result

# UDP Transmitter ----------------------------------------------------------------------------------

class UDPTransmitter(LiteXModule):
    """Turns payload requests into complete Ethernet/IPv4/UDP frames for LiteEth's MAC core.

    A request is accepted in the cycle the core is idle and `sink.valid` is high: `sink.length` is
    latched then and the first header byte is on `source` the next cycle. The 42 header bytes need
    no payload, so the payload beats are only consumed after them, one per cycle, without bubble.
    The frame ends after exactly `length` payload bytes; the sink's `last` must be on that beat.

    A request longer than `max_payload` is refused: its beats are consumed up to `last`, nothing
    is sent, `refused` pulses, and the core takes the next request.

    The header comes from a LUT of its static bytes (`_add_static_bytes`) and one adder for its
    three length-dependent fields (`_add_dynamic_fields`); an FSM (`_add_fsm`) sequences the
    header and the payload.
    """
    def __init__(self, fpga_mac, fpga_ip, host_mac, host_ip, fpga_port, host_port, max_payload=1472):
        fpga_mac  = mac_to_int(fpga_mac, "fpga_mac")
        host_mac  = mac_to_int(host_mac, "host_mac")
        fpga_ip   = ip_to_int(fpga_ip,   "fpga_ip")
        host_ip   = ip_to_int(host_ip,   "host_ip")
        fpga_port = check_port(fpga_port, "fpga_port")
        host_port = check_port(host_port, "host_port")
        check_max_payload(max_payload)
        self.max_payload = max_payload

        self.sink     = sink   = stream.Endpoint(udp_payload_layout)
        self.source   = source = stream.Endpoint(eth_raw_layout())
        self.sent     = Signal() # o: one cycle per frame completed.
        self.refused  = Signal() # o: one cycle per request refused (length > max_payload).
        self.mismatch = Signal() # o: one cycle per request whose `last` did not match its length.

        # # #

        header = static_header(
            src_mac  = fpga_mac,  src_ip   = fpga_ip,
            dst_mac  = host_mac,  dst_ip   = host_ip,
            src_port = fpga_port, dst_port = host_port,
        )
        checksum_base = ipv4_checksum_base(header)

        # Data-Path.
        # ----------
        # Signals shared by the builders below (the FSM latches length, empty and no_borrow).
        length      = Signal(max=max(max_payload + 1, 2))
        count       = Signal(max=max(HEADER_LEN, max_payload + 1))
        index       = Signal(bits_for(HEADER_LEN - 1))
        static_byte = Signal(8)
        field       = Signal(16)
        header_byte = Signal(8)
        last_byte   = Signal()
        empty       = Signal()
        no_borrow   = Signal() # Latched with the length: Total Length <= base.
        self.comb += index.eq(count)

        self._add_static_bytes(header, index, static_byte)
        self._add_dynamic_fields(checksum_base, length, no_borrow, index, static_byte, field,
                                 header_byte)
        # In the payload the counter restarts at 1, so the last byte is where it equals length.
        self.comb += last_byte.eq(count == length)

        # LiteEth's FCS inserter finds the end of the frame from last_be (one byte per beat here).
        self.comb += source.last_be.eq(source.last)

        # Control-Path (FSM).
        # -------------------
        self._add_fsm(checksum_base, length, empty, no_borrow, count, index, header_byte, last_byte)

    def _add_static_bytes(self, header, index, static_byte):
        """The static bytes, a LUT of constants indexed by the counter (0 at the dynamic fields)."""
        cases = {i: static_byte.eq(0 if i in DYNAMIC_OFFSETS else v) for i, v in enumerate(header)}
        cases["default"] = static_byte.eq(0)
        self.comb += Case(index, cases)

    def _add_dynamic_fields(self, checksum_base, length, no_borrow, index, static_byte, field,
                            header_byte):
        """Total Length, checksum and UDP Length from one adder; the header byte that carries them.

        The three dynamic fields are each a constant plus or minus the length: small adders whose
        constant is picked by the field the counter is in:
          Total Length = length + 28,  UDP Length = length + 8,
          checksum     = base - Total Length - borrow (one's-complement subtraction)
                       = K + ~length + (1 - borrow), K = base - 28, borrow = Total Length > base,
        the borrow being a comparison of the length against a constant (latched in `no_borrow`).
        Lengths stay below 2**w, so only the low w bits need an adder: above them the lengths are 0
        and the checksum is K's high bits, minus 1 unless the low part carried.
        One adder serves the three fields: its operand is the length, inverted for the checksum
        (an XOR per bit), its constant and carry-in are picked by the field.
        """
        w          = bits_for(self.max_payload + IPV4_HEADER_LEN + UDP_HEADER_LEN)
        k          = (checksum_base - IPV4_HEADER_LEN - UDP_HEADER_LEN) & 0xffff
        k_low      = k & (2**w - 1)
        k_high     = k >> w
        in_tl      = Signal()
        in_cs      = Signal()
        in_dynamic = Signal()
        operand    = Signal(w)
        constant   = Signal(w)
        total      = Signal(w + 1)
        field_next = Signal(16)
        # The field is registered, so that the adder's carry chain ends in a flip-flop instead of
        # running on through the byte multiplexer into the MAC. The register loads the field of the
        # window the counter is in. When a field's first byte is on the output, the counter was on
        # it or on the byte before one cycle earlier (the source may have stalled), so each window
        # holds its field and the byte before it; windows cut at 20 and 32 decode from few bits.
        windows = {"total_length": (0, 19), "checksum": (20, 31), "udp_length": (32, HEADER_LEN - 1)}
        for name, offset in [("total_length", IPV4_TOTAL_LENGTH_OFFSET),
                             ("checksum",     IPV4_CHECKSUM_OFFSET),
                             ("udp_length",   UDP_LENGTH_OFFSET)]:
            first, last = windows[name]
            assert first <= offset - 1 and offset + 1 <= last, name
        def in_window(name):
            first, last = windows[name]
            above_first = greater_than(index, first - 1) if first > 0 else Constant(1)
            return above_first & ~greater_than(index, last)
        self.sync += field.eq(field_next)
        self.comb += [
            in_tl.eq(in_window("total_length")),
            in_cs.eq(in_window("checksum")),
            in_dynamic.eq(reduce(or_, [index[1:] == offset // 2 for offset in
                (IPV4_TOTAL_LENGTH_OFFSET, IPV4_CHECKSUM_OFFSET, UDP_LENGTH_OFFSET)])),
            operand.eq(length ^ Replicate(in_cs, w)),
            constant.eq(Mux(in_cs, k_low, Mux(in_tl, IPV4_HEADER_LEN + UDP_HEADER_LEN, UDP_HEADER_LEN))),
            total.eq(operand + constant + (in_cs & no_borrow)),
            If(in_cs,
                field_next.eq(Cat(total[:w], Mux(total[w], k_high, (k_high - 1) % 2**(16 - w))))
            ).Else(
                field_next.eq(total[:w])
            ),
            # Every field starts at an even offset: big-endian, high byte first.
            If(in_dynamic,
                header_byte.eq(Mux(index[0], field[:8], field[8:]))
            ).Else(
                header_byte.eq(static_byte)
            ),
        ]

    def _add_fsm(self, checksum_base, length, empty, no_borrow, count, index, header_byte,
                 last_byte):
        """Accepts a request, sends the header then the payload, or discards a refused request."""
        sink, source = self.sink, self.source
        self.fsm = fsm = FSM(reset_state="IDLE")
        fsm.act("IDLE",
            NextValue(count, 0),
            If(sink.valid,
                NextValue(length, sink.length),
                NextValue(empty,  sink.length == 0),
                NextValue(no_borrow, ~greater_than(sink.length[:len(length)], checksum_base - IPV4_HEADER_LEN - UDP_HEADER_LEN)
                    if checksum_base >= IPV4_HEADER_LEN + UDP_HEADER_LEN else 0),
                If(greater_than(sink.length, self.max_payload),
                    self.refused.eq(1),
                    NextState("DISCARD")
                ).Else(
                    NextState("HEADER")
                )
            )
        )
        fsm.act("HEADER",
            source.valid.eq(1),
            source.data.eq(header_byte),
            source.last.eq((index == HEADER_LEN - 1) & empty),
            # A zero-length request's single beat (still valid since its acceptance) carries no
            # payload: it is consumed with the last header byte.
            sink.ready.eq(source.ready & source.last),
            If(source.ready,
                NextValue(count, count + 1),
                If(index == HEADER_LEN - 1,
                    If(empty,
                        self.sent.eq(1),
                        If(sink.last,
                            NextState("IDLE")
                        ).Else(
                            self.mismatch.eq(1),
                            NextState("DISCARD")
                        )
                    ).Else(
                        NextValue(count, 1),
                        NextState("PAYLOAD")
                    )
                )
            )
        )
        fsm.act("PAYLOAD",
            source.valid.eq(sink.valid),
            source.data.eq(sink.data),
            source.last.eq(last_byte | sink.last),
            sink.ready.eq(source.ready),
            If(sink.valid & source.ready,
                NextValue(count, count + 1),
                If(last_byte & sink.last,
                    self.sent.eq(1),
                    NextState("IDLE")
                ).Elif(last_byte,
                    # More beats than announced: the frame is complete, the extra beats are dropped.
                    self.mismatch.eq(1),
                    NextState("DISCARD")
                ).Elif(sink.last,
                    # Fewer beats than announced: the frame ends short and the receiving stack
                    # drops it (its IPv4 Total Length is larger than the frame).
                    self.mismatch.eq(1),
                    NextState("IDLE")
                )
            )
        )
        fsm.act("DISCARD",
            sink.ready.eq(1),
            If(sink.valid & sink.last,
                NextState("IDLE")
            )
        )
