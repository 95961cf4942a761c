# This file is part of hostlink.
# Copyright (c) 2026 hostlink developers
# SPDX-License-Identifier: BSD-2-Clause

"""Minimal UDP/IPv4 transmitter: static headers in LUTs, lengths from adders, checksum by one
subtraction (Alachiotis et al., "Efficient PC-FPGA communication over Gigabit Ethernet")."""

from migen import *

from litex.gen import *

from litex.soc.interconnect import stream

from hostlink.cores.udp.common import *

# UDP Transmitter ----------------------------------------------------------------------------------

class UDPTransmitter(LiteXModule):
    """Turns payload requests into complete Ethernet/IPv4/UDP frames for LiteEth's MAC core.

    A request is accepted in the cycle the core is idle and `sink.valid` is high: `sink.length` is
    latched then and the first header byte is on `source` the next cycle. The 42 header bytes need
    no payload, so the payload beats are only consumed after them, one per cycle, without bubble.
    The frame ends after exactly `length` payload bytes; the sink's `last` must be on that beat.

    A request longer than `max_payload` is refused: its beats are consumed up to `last`, nothing
    is sent, `refused` pulses, and the core takes the next request.
    """
    def __init__(self, fpga_mac, fpga_ip, host_mac, host_ip, fpga_port, host_port, max_payload=1472):
        fpga_mac  = mac_to_int(fpga_mac, "fpga_mac")
        host_mac  = mac_to_int(host_mac, "host_mac")
        fpga_ip   = ip_to_int(fpga_ip,   "fpga_ip")
        host_ip   = ip_to_int(host_ip,   "host_ip")
        fpga_port = check_port(fpga_port, "fpga_port")
        host_port = check_port(host_port, "host_port")
        if isinstance(max_payload, bool) or not isinstance(max_payload, int) or \
           not 0 <= max_payload <= max_payload_for_mtu(MAX_MTU):
            raise ValueError(f"max_payload must be an integer in 0..{max_payload_for_mtu(MAX_MTU)}, "
                             f"not {max_payload!r}")
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
        length       = Signal(max=max(max_payload + 1, 2))
        count        = Signal(max=HEADER_LEN + max_payload + 1)
        total_length = Signal(16)
        udp_length   = Signal(16)
        difference   = Signal(17)
        checksum     = Signal(16)
        header_byte  = Signal(8)
        last_byte    = Signal()
        self.comb += [
            total_length.eq(length + IPV4_HEADER_LEN + UDP_HEADER_LEN),
            udp_length.eq(length + UDP_HEADER_LEN),
            # One's-complement subtraction: the two's-complement difference, minus the borrow.
            difference.eq(checksum_base - total_length),
            checksum.eq(difference[:16] - difference[16]),
            last_byte.eq(count == (length + HEADER_LEN - 1)),
        ]

        # The static bytes become a LUT indexed by the low bits of the byte counter; the three
        # length-dependent fields override it at their offsets.
        dynamic = {
            IPV4_TOTAL_LENGTH_OFFSET + 0 : total_length[8:16],
            IPV4_TOTAL_LENGTH_OFFSET + 1 : total_length[0:8],
            IPV4_CHECKSUM_OFFSET     + 0 : checksum[8:16],
            IPV4_CHECKSUM_OFFSET     + 1 : checksum[0:8],
            UDP_LENGTH_OFFSET        + 0 : udp_length[8:16],
            UDP_LENGTH_OFFSET        + 1 : udp_length[0:8],
        }
        cases = {}
        for i, value in enumerate(header):
            cases[i] = header_byte.eq(dynamic.get(i, value))
        cases["default"] = header_byte.eq(0)
        self.comb += Case(count[:bits_for(HEADER_LEN - 1)], cases)

        # LiteEth's FCS inserter finds the end of the frame from last_be (one byte per beat here).
        self.comb += source.last_be.eq(source.last)

        # Control-Path (FSM).
        # -------------------
        self.fsm = fsm = FSM(reset_state="IDLE")
        fsm.act("IDLE",
            NextValue(count, 0),
            If(sink.valid,
                NextValue(length, sink.length),
                If(sink.length > max_payload,
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
            source.last.eq((count == HEADER_LEN - 1) & (length == 0)),
            # A zero-length request's single beat (still valid since its acceptance) carries no
            # payload: it is consumed with the last header byte.
            sink.ready.eq(source.ready & source.last),
            If(source.ready,
                NextValue(count, count + 1),
                If(count == HEADER_LEN - 1,
                    If(length == 0,
                        self.sent.eq(1),
                        If(sink.last,
                            NextState("IDLE")
                        ).Else(
                            self.mismatch.eq(1),
                            NextState("DISCARD")
                        )
                    ).Else(
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
