# This file is part of hostlink.
# Copyright (c) 2026 hostlink developers
# SPDX-License-Identifier: BSD-2-Clause

"""Minimal UDP/IPv4 receiver: fixed 42-byte header checked byte by byte as it arrives, payload
stored until the end of the frame proves it whole, then forwarded with its length."""

from types import SimpleNamespace

from migen import *

from litex.gen import *

from litex.soc.interconnect import stream

from hostlink.cores.udp.common import *

# UDP Receiver -------------------------------------------------------------------------------------

# Payload bytes read ahead of `source`, counted from their fetch to their departure: more than the
# fetch-to-`source` latency (two cycles in the block RAM, two in the FIFO), so a byte leaves every cycle.
PREFETCH_DEPTH = 8

# A drop reason as held in the receiver's registers: 0 while no check has failed, else the reason's
# place in RX_DROP_REASONS plus one.
REASON_CODE = {name: i + 1 for i, (name, _) in enumerate(RX_DROP_REASONS)}

class UDPReceiver(LiteXModule):
    """Checks destination MAC, EtherType IPv4, version/IHL 4/5, no fragment, protocol UDP,
    destination IP and port, the IPv4 header checksum, the two lengths, the frame's length and the
    MAC's error flag.

    A frame that fails any check is dropped and counted once, under its first failing check
    (`drop` has one bit per entry of `RX_DROP_REASONS`). A frame is only known good at its last
    byte (truncation, bad FCS), so payloads go to a buffer and are forwarded once committed:
    nothing of a dropped frame ever reaches `source`. The default buffer holds two maximum
    payloads, so one can arrive while the previous drains (echo at wire rate). The sink never
    back-pressures the MAC except for one cycle at the end of each header and of each good frame.

    Parameters:
        fpga_mac, fpga_ip, fpga_port  the destination MAC, IPv4 address and UDP port accepted.
        max_payload                   largest payload accepted (0 to 1472 bytes); a longer one is
                                      dropped as `oversize`.
        buffer_depth                  the payload buffer, in bytes: a power of 2, at least
                                      `max_payload`; a payload it has no room for is dropped
                                      as `overflow`.
        max_packets                   committed payloads that can wait for `source` (2 or more);
                                      one more is dropped as `overflow`.

    Interface:
        sink      frames from LiteEth's MAC (`eth_raw_layout()`), one byte per beat.
        source    payloads (`udp_payload_layout`), one byte per beat, `length` on every beat.
        received  (o) one cycle per payload committed.
        drop      (o) one-hot, one cycle per frame dropped, one bit per entry of `RX_DROP_REASONS`.
        fsm, lengths, prefetch  the control FSM, the committed payloads' lengths and the bytes read
                                ahead of `source` (submodules).

    Inside, one method each, in the order the constructor builds them:

        header checks    header bytes against their expected values; the lengths; the IPv4 checksum
        buffer           the payload ring (block RAM) and the FIFO of committed lengths (`lengths`)
        drop accounting  `drop` and `received`
        header states    FSM: HEADER takes the header, RUNT drops a frame that ends inside it
        verdict          the frame's first failing check, registered for CHECK
        payload states   FSM: CHECK acts on the verdict, PAYLOAD writes the ring, TRAILER takes
                         the padding, COMMIT queues the length, DRAIN takes a dropped frame's rest
        read side        committed bytes read ahead from the ring (`prefetch`) to `source`

        sink ──> HEADER ──> CHECK ──> PAYLOAD ──> TRAILER ──> COMMIT ──> lengths ───┐
                   │          │          │                                          v
                   v          v          └─────────> ring ──> prefetch ──────> source
                  RUNT      DRAIN        (every path leads back to HEADER)
    """
    def __init__(self, fpga_mac, fpga_ip, fpga_port, max_payload=1472, buffer_depth=4096, max_packets=16):
        fpga_mac  = mac_to_int(fpga_mac, "fpga_mac")
        fpga_ip   = ip_to_int(fpga_ip, "fpga_ip")
        fpga_port = check_port(fpga_port, "fpga_port")
        check_max_payload(max_payload)
        if not isinstance(buffer_depth, int) or buffer_depth < max(max_payload, 1) or \
           buffer_depth & (buffer_depth - 1):
            raise ValueError(f"buffer_depth must be a power of 2 >= max_payload ({max_payload}), "
                             f"not {buffer_depth!r}")
        if not isinstance(max_packets, int) or max_packets < 2:
            raise ValueError(f"max_packets must be an integer >= 2, not {max_packets!r}")

        self._add_interface()

        # # #

        # The parts share their signals through `w`, each adding what later parts take. Their order
        # is the order in which signals and statements are created, which the generated Verilog
        # follows (resets, memories, numbered names): moving a part changes the Verilog.
        w = SimpleNamespace()
        self._add_header_checks(w, fpga_mac, fpga_ip, fpga_port)
        self._add_buffer(w, max_payload, buffer_depth, max_packets)
        self._add_drop_accounting(w)
        self._add_header_states(w)
        self._add_verdict(w, max_payload, buffer_depth)
        self._add_payload_states(w)
        self._add_read_side(w)

    # Parts of the constructor, in the order it calls them -----------------------------------------

    def _add_interface(self):
        """The ports the class docstring lists, built one call deep as the logic is. Migen names a
        signal from the calls that created it: created at the depth of the FIFOs' own `sink` and
        `source`, these keep their Verilog names (`sink_sink_*`, `source_source_*`)."""
        self.sink     = stream.Endpoint(eth_raw_layout())
        self.source   = stream.Endpoint(udp_payload_layout)
        self.received = Signal()                     # o: one cycle per payload committed.
        self.drop     = Signal(len(RX_DROP_REASONS)) # o: one-hot, one cycle per frame dropped.

    def _add_header_checks(self, w, fpga_mac, fpga_ip, fpga_port):
        """Each header byte against its expected value, the two lengths captured, the IPv4 header
        checksum summed, and the payload length derived."""
        sink = self.sink

        count      = Signal(max=HEADER_LEN)
        fsm_header = Signal() # The FSM is in HEADER.
        reason     = Signal(max=len(RX_DROP_REASONS) + 1) # 0: no check failed so far.
        byte_fail  = Signal(max=len(RX_DROP_REASONS) + 1) # Reason the current byte fails, or 0.
        ip_length  = Signal(16)
        udp_length = Signal(16)
        ended      = Signal()

        def expect(offset, values, name):
            return {offset + i: If(sink.data != v, byte_fail.eq(REASON_CODE[name])) for i, v in enumerate(values)}

        checks = {}
        checks.update(expect(0,  list(fpga_mac.to_bytes(6, "big")), "mac"))
        checks.update(expect(ETH_TYPE_OFFSET, list(ETHERTYPE_IPV4.to_bytes(2, "big")), "ethertype"))
        checks.update(expect(14, [IPV4_VERSION_IHL], "ihl"))
        # Don't Fragment may be set; reserved, More Fragments and the offset must be clear.
        checks[20] = If(sink.data & 0xbf, byte_fail.eq(REASON_CODE["fragment"]))
        checks[21] = If(sink.data != 0,   byte_fail.eq(REASON_CODE["fragment"]))
        checks.update(expect(23, [IP_PROTO_UDP], "protocol"))
        checks.update(expect(30, list(fpga_ip.to_bytes(4, "big")), "ip"))
        checks.update(expect(36, list(fpga_port.to_bytes(2, "big")), "port"))
        self.comb += Case(count, checks)

        captures = {
            IPV4_TOTAL_LENGTH_OFFSET + 0 : ip_length[8:16].eq(sink.data),
            IPV4_TOTAL_LENGTH_OFFSET + 1 : ip_length[0:8].eq(sink.data),
            UDP_LENGTH_OFFSET        + 0 : udp_length[8:16].eq(sink.data),
            UDP_LENGTH_OFFSET        + 1 : udp_length[0:8].eq(sink.data),
        }
        self.sync += If(sink.valid & sink.ready, Case(count, captures))

        # IPv4 header checksum, one byte per cycle on one 16-bit adder: rotating the sum by a byte
        # multiplies it by 256 modulo 0xffff, and 256 * 256 = 1 modulo 0xffff, so `sum * 256 + byte`
        # over the bytes leaves each even header byte weighted 256 and each odd one 1: the one's
        # complement sum of the header's 16-bit words. The carry out of bit 15 (weight 65536 = 1)
        # is added after the next rotation, at bit 8. The sum starts at the EtherType (checked to be
        # 0x0800 first, so it adds 0x0800): with a right checksum the sum of bytes 12..33 is 0x0800
        # modulo 0xffff, and the 17-bit register can then only hold 0x00800 (the header is never all
        # zero). It keeps running over the bytes after; the verdict is taken at byte 34.
        csum     = Signal(17)
        csum_bad = Signal()
        self.sync += If(sink.valid & sink.ready & fsm_header,
            If(count == ETH_TYPE_OFFSET - 1,
                csum.eq(0)
            ).Else(
                csum.eq(Cat(csum[8:16], csum[0:8]) + Cat(sink.data, csum[16]))
            ),
            If(count == ETH_HEADER_LEN + IPV4_HEADER_LEN,
                csum_bad.eq(csum != ETHERTYPE_IPV4)
            )
        )

        payload_length = Signal(17)
        # `at_last` says the next payload byte is the frame's last. It is registered a byte ahead
        # from the count and the registered length, so no compare sits between the counter and the
        # FSM's next-state logic.
        payload_penultimate = Signal(17) # Registered: only used from the payload's first byte on.
        at_last             = Signal()
        self.comb += payload_length.eq(udp_length - UDP_HEADER_LEN)
        self.sync += payload_penultimate.eq(udp_length - UDP_HEADER_LEN - 2)

        vars(w).update(count=count, fsm_header=fsm_header, reason=reason, byte_fail=byte_fail,
            ip_length=ip_length, udp_length=udp_length, ended=ended, checks=checks,
            csum_bad=csum_bad, payload_length=payload_length,
            payload_penultimate=payload_penultimate, at_last=at_last)

    def _add_buffer(self, w, max_payload, buffer_depth, max_packets):
        """The payload ring in block RAM, its write, commit and read pointers, and the FIFO of the
        committed payloads' lengths."""
        aw        = log2_int(buffer_depth)
        wr        = Signal(aw + 1) # Next byte to write.
        wr_commit = Signal(aw + 1) # End of the last committed payload.
        rd        = Signal(aw + 1) # Next byte to read.
        pcount    = Signal(max=max_payload + 1)
        mem       = Memory(8, buffer_depth)
        wport     = mem.get_port(write_capable=True)
        # Read-first: the reader never reads a byte in the cycle it is written (it only reads
        # committed bytes, and COMMIT is a cycle after the last write), so the port needs none of
        # the write-to-read bypass a transparent port puts after the block RAM's output.
        rport     = mem.get_port(async_read=False, mode=READ_FIRST)
        self.specials += mem, wport, rport

        self.lengths = lengths = stream.SyncFIFO([("length", 16)], max_packets)

        vars(w).update(aw=aw, wr=wr, wr_commit=wr_commit, rd=rd, pcount=pcount, wport=wport,
            rport=rport, lengths=lengths)

    def _add_drop_accounting(self, w):
        """One `drop` pulse per frame, on the reason latched first, and the `received` pulse."""
        reason = w.reason

        # The reason is registered before it is decoded, and the outputs after: the header checks
        # that choose the reason and the counters downstream stay on separate timing paths.
        drop_now      = Signal()
        drop_reason   = Signal.like(reason)
        drop_now_r    = Signal()
        drop_reason_r = Signal.like(reason)
        received      = Signal()
        drop          = Signal(len(RX_DROP_REASONS))
        self.comb += If(drop_now_r,
            Case(drop_reason_r, {i + 1: drop[i].eq(1) for i in range(len(RX_DROP_REASONS))})
        )
        self.sync += [
            drop_now_r.eq(drop_now),
            drop_reason_r.eq(drop_reason),
            self.drop.eq(drop),
            self.received.eq(received),
        ]

        vars(w).update(drop_now=drop_now, drop_reason=drop_reason, received=received)

    def _add_header_states(self, w):
        """The FSM and its header states: HEADER takes the header bytes and folds their checks into
        `reason`, RUNT drops a frame that ends inside the header."""
        sink, count, fsm_header, reason, byte_fail, ended = (
            self.sink, w.count, w.fsm_header, w.reason, w.byte_fail, w.ended)
        drop_now, drop_reason = w.drop_now, w.drop_reason

        frame_error = Signal()
        self.comb += frame_error.eq(sink.valid & sink.last & (sink.error != 0))

        # Control-Path (FSM).
        # -------------------
        # Each byte's check result is registered (`byte_fail_r`) and folded into `reason` a cycle
        # later, so the comparison of the data with its expected value ends at a register. A frame
        # that ends inside the header is judged in RUNT, the cycle after its last byte.
        byte_fail_r = Signal.like(byte_fail)
        self.fsm = fsm = FSM(reset_state="HEADER")
        self.comb += fsm_header.eq(fsm.ongoing("HEADER"))
        self.sync += byte_fail_r.eq(Mux(fsm.ongoing("HEADER") & sink.valid, byte_fail, 0))
        fsm.act("HEADER",
            sink.ready.eq(1),
            If((reason == 0) & (byte_fail_r != 0),
                NextValue(reason, byte_fail_r)
            ),
            If(sink.valid,
                NextValue(count, count + 1),
                If(count == HEADER_LEN - 1,
                    NextValue(ended, sink.last),
                    If(frame_error & (reason == 0) & (byte_fail_r == 0),
                        NextValue(reason, REASON_CODE["error"])
                    ),
                    NextState("CHECK")
                ).Elif(sink.last,
                    NextState("RUNT")
                )
            )
        )
        fsm.act("RUNT",
            drop_now.eq(1),
            If(reason != 0,
                drop_reason.eq(reason)
            ).Elif(byte_fail_r != 0,
                drop_reason.eq(byte_fail_r)
            ).Else(
                drop_reason.eq(REASON_CODE["truncated"])
            ),
            NextValue(count, 0),
            NextValue(reason, 0),
            NextState("HEADER")
        )

        vars(w).update(frame_error=frame_error, fsm=fsm)

    def _add_verdict(self, w, max_payload, buffer_depth):
        """The frame's verdict (`check_reason`), registered before CHECK acts on it: the first
        failing check, or 0 to take the payload."""
        sink, checks, reason, frame_error, csum_bad = (
            self.sink, w.checks, w.reason, w.frame_error, w.csum_bad)
        ip_length, udp_length, payload_length = w.ip_length, w.udp_length, w.payload_length
        aw, wr_commit, rd, lengths = w.aw, w.wr_commit, w.rd, w.lengths

        # The length and room checks are registered from the captured fields, so the CHECK cycle
        # only selects among flags (this keeps the receiver at 125 MHz on ECP5). Byte 39 is the
        # last field they use: the flags are settled by the CHECK cycle, two cycles later.
        free       = Signal(aw + 1)
        length_bad = Signal()
        oversize   = Signal()
        no_room    = Signal()
        empty      = Signal()
        self.sync += [
            free.eq(buffer_depth - (wr_commit - rd)),
            empty.eq(udp_length == UDP_HEADER_LEN),
            length_bad.eq((udp_length < UDP_HEADER_LEN) | (ip_length != (udp_length + IPV4_HEADER_LEN))),
            oversize.eq(payload_length > max_payload),
            no_room.eq((payload_length > free) | ~lengths.sink.ready),
        ]
        # The verdict itself is registered during the last header byte, from the values `reason`
        # and `ended` take with that byte: CHECK only acts on it. No byte check is past offset 37,
        # so `reason` is final by then but for a bad FCS flagged on that byte.
        assert max(checks) < HEADER_LEN - 1
        header_reason = Signal.like(reason)
        check_reason  = Signal.like(reason)
        self.comb += [
            If(reason != 0,
                header_reason.eq(reason)
            ).Elif(frame_error,
                header_reason.eq(REASON_CODE["error"])
            )
        ]
        self.sync += [
            If(header_reason != 0,
                check_reason.eq(header_reason)
            ).Elif(csum_bad,
                check_reason.eq(REASON_CODE["checksum"])
            ).Elif(length_bad,
                check_reason.eq(REASON_CODE["length"])
            ).Elif(oversize,
                check_reason.eq(REASON_CODE["oversize"])
            ).Elif(sink.last & ~empty,
                check_reason.eq(REASON_CODE["truncated"])
            ).Elif(no_room,
                check_reason.eq(REASON_CODE["overflow"])
            ).Else(
                check_reason.eq(0)
            )
        ]

        vars(w).update(payload_empty=empty, check_reason=check_reason)

    def _add_payload_states(self, w):
        """The FSM's states after the header: CHECK acts on the verdict, PAYLOAD writes the payload
        to the ring, TRAILER skips the padding, COMMIT hands the payload to the read side, DRAIN
        skips the rest of a dropped frame."""
        sink, fsm, count, reason, ended, check_reason = (
            self.sink, w.fsm, w.count, w.reason, w.ended, w.check_reason)
        udp_length, payload_length, payload_penultimate, at_last, empty = (
            w.udp_length, w.payload_length, w.payload_penultimate, w.at_last, w.payload_empty)
        aw, wport, wr, wr_commit, pcount, lengths = w.aw, w.wport, w.wr, w.wr_commit, w.pcount, w.lengths
        drop_now, drop_reason, received = w.drop_now, w.drop_reason, w.received

        fsm.act("CHECK",
            NextValue(count, 0),
            NextValue(pcount, 0),
            NextValue(at_last, udp_length == UDP_HEADER_LEN + 1),
            If(check_reason != 0,
                If(ended,
                    drop_now.eq(1),
                    drop_reason.eq(check_reason),
                    NextValue(reason, 0),
                    NextState("HEADER")
                ).Else(
                    NextValue(reason, check_reason),
                    NextState("DRAIN")
                )
            ).Elif(empty,
                If(ended,
                    NextState("COMMIT")
                ).Else(
                    NextState("TRAILER")
                )
            ).Else(
                NextState("PAYLOAD")
            )
        )
        fsm.act("PAYLOAD",
            sink.ready.eq(1),
            wport.adr.eq(wr[:aw]),
            wport.dat_w.eq(sink.data),
            If(sink.valid,
                wport.we.eq(1),
                NextValue(wr, wr + 1),
                NextValue(pcount, pcount + 1),
                NextValue(at_last, pcount == payload_penultimate),
                If(sink.last & (sink.error != 0),
                    drop_now.eq(1),
                    drop_reason.eq(REASON_CODE["error"]),
                    NextValue(wr, wr_commit),
                    NextState("HEADER")
                ).Elif(at_last,
                    If(sink.last,
                        NextState("COMMIT")
                    ).Else(
                        NextState("TRAILER")
                    )
                ).Elif(sink.last,
                    drop_now.eq(1),
                    drop_reason.eq(REASON_CODE["truncated"]),
                    NextValue(wr, wr_commit),
                    NextState("HEADER")
                )
            )
        )
        # Ethernet padding (and anything the IPv4 length does not cover) up to the end of the frame.
        fsm.act("TRAILER",
            sink.ready.eq(1),
            If(sink.valid & sink.last,
                If(sink.error != 0,
                    drop_now.eq(1),
                    drop_reason.eq(REASON_CODE["error"]),
                    NextValue(wr, wr_commit),
                    NextState("HEADER")
                ).Else(
                    NextState("COMMIT")
                )
            )
        )
        # A separate cycle so the last payload byte is in memory before its packet can be read.
        fsm.act("COMMIT",
            NextValue(wr_commit, wr),
            lengths.sink.valid.eq(1),
            lengths.sink.length.eq(payload_length),
            received.eq(1),
            NextState("HEADER")
        )
        fsm.act("DRAIN",
            sink.ready.eq(1),
            If(sink.valid & sink.last,
                drop_now.eq(1),
                drop_reason.eq(reason),
                NextValue(reason, 0),
                NextState("HEADER")
            )
        )

    def _add_read_side(self, w):
        """Committed payloads from the ring to `source`, one byte per cycle, with their length and
        `last`."""
        source, lengths, rport, aw = self.source, w.lengths, w.rport, w.aw
        wr_commit, rd = w.wr_commit, w.rd

        # Committed bytes are prefetched, in ring order, into a few registers ahead of `source`: the
        # block RAM is read through its output register (two cycles from address to data, nothing
        # between the RAM and the register) and `source.data` comes from a register, so neither the
        # RAM's clock-to-out nor `ready` lies on a path into or out of the RAM. `rd` still moves only
        # when a byte leaves on `source`, so the writer's free space counts prefetched bytes as used.
        # Committed payloads are contiguous in the ring, so the prefetch runs on across packets.
        fp        = Signal(aw + 1) # Next byte to fetch.
        fetch     = Signal()
        fetched   = Signal()       # The RAM is reading the byte fetched last cycle.
        fetched_q = Signal()       # Its output register holds that byte.
        data_q    = Signal(8)
        prefetch  = stream.SyncFIFO([("data", 8)], PREFETCH_DEPTH, buffered=True)
        self.prefetch = prefetch
        self.comb += [
            fetch.eq((fp != wr_commit) & (prefetch.level + fetched + fetched_q < PREFETCH_DEPTH)),
            rport.adr.eq(fp[:aw]),
            prefetch.sink.valid.eq(fetched_q),
            prefetch.sink.data.eq(data_q),
        ]
        self.sync += [
            If(fetch, fp.eq(fp + 1)),
            fetched.eq(fetch),
            fetched_q.eq(fetched),
            data_q.eq(rport.dat_r),
        ]

        # The head packet's length is taken into registers one cycle before its first byte
        # (`loaded`), so `last` is a register too: the length FIFO's asynchronous read stays off
        # the path through `ready` back into the FIFO.
        loaded    = Signal()   # `remaining`, `last` and `empty` describe the head packet.
        remaining = Signal(16) # Bytes of the head packet after the current one.
        last      = Signal()
        empty     = Signal()
        advance   = Signal()
        self.comb += [
            source.valid.eq(lengths.source.valid & loaded & (empty | prefetch.source.valid)),
            source.length.eq(lengths.source.length),
            source.data.eq(prefetch.source.data),
            source.last.eq(last),
            advance.eq(source.valid & source.ready & ~empty),
            prefetch.source.ready.eq(advance),
            lengths.source.ready.eq(source.valid & source.ready & last),
        ]
        self.sync += [
            If(advance, rd.eq(rd + 1)),
            If(~loaded,
                If(lengths.source.valid,
                    loaded.eq(1),
                    remaining.eq(lengths.source.length - 1),
                    last.eq(lengths.source.length <= 1),
                    empty.eq(lengths.source.length == 0),
                )
            ).Elif(source.valid & source.ready,
                If(last,
                    loaded.eq(0)
                ).Else(
                    remaining.eq(remaining - 1),
                    last.eq(remaining == 1),
                )
            )
        ]
