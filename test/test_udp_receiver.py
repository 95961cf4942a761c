# This file is part of hostlink.
# Copyright (c) 2026 hostlink developers
# SPDX-License-Identifier: BSD-2-Clause

"""UDPReceiver against valid and malformed frames built by scapy: payloads forwarded exactly,
everything else dropped, never forwarded, and counted under its reason."""

import random

import pytest

from migen import run_simulation

from scapy.all import Ether, IP, UDP, TCP, Raw, raw

from hostlink.cores.udp import UDPReceiver
from hostlink.cores.udp.common import *
from benches.udp_models import StreamSource, StreamSink

FPGA_MAC, FPGA_IP, FPGA_PORT = "10:e2:d5:00:00:01", "192.168.1.50", 1234
HOST_MAC, HOST_IP            = "10:e2:d5:00:00:02", "192.168.1.100"
MAX_PAYLOAD = max_payload_for_mtu(DEFAULT_MTU)
REASONS     = [name for name, _ in RX_DROP_REASONS]

# Helpers ------------------------------------------------------------------------------------------

def udp(payload, dst_mac=FPGA_MAC, dst_ip=FPGA_IP, dport=FPGA_PORT, **ip_fields):
    ip_fields.setdefault("flags", "DF")
    return raw(Ether(dst=dst_mac, src=HOST_MAC) / IP(src=HOST_IP, dst=dst_ip, **ip_fields) /
               UDP(sport=5555, dport=dport) / Raw(load=bytes(payload)))


def on_wire(frame):
    """What LiteEth's MAC hands over: the frame padded to 60 bytes (FCS stripped)."""
    return bytes(frame) + bytes(max(0, 60 - len(frame)))


def run_rx(frames, idle=0.0, backpressure=0.0, ready_after=None, **kwargs):
    """Feeds (bytes, error) frames; returns forwarded payloads and per-reason drop counts."""
    rx  = UDPReceiver(FPGA_MAC, FPGA_IP, FPGA_PORT, **kwargs)
    src = StreamSource(rx.sink, idle=idle, seed=5)
    snk = StreamSink(rx.source, fields=("data", "length"), backpressure=backpressure, seed=6)
    for frame, error in frames:
        beats = [{"data": b, "last_be": 0, "error": 0} for b in frame]
        beats[-1].update(last_be=1, error=0xff if error else 0)
        src.send(beats)
    counts = {"received": 0, **{r: 0 for r in REASONS}}
    snk_gen = snk.generator()

    def monitor():
        quiet = 0
        while quiet < 100:
            # Done once the input is over and the output has been empty for a while.
            quiet = quiet + 1 if src.done and not (yield rx.source.valid) else 0
            counts["received"] += (yield rx.received)
            drop = (yield rx.drop)
            assert bin(drop).count("1") <= 1, "a frame was counted under two reasons"
            for i, r in enumerate(REASONS):
                counts[r] += (drop >> i) & 1
            yield

    def gated_sink():
        # Optionally hold the output back until every frame is in, to fill the buffer.
        if ready_after is not None:
            yield rx.source.ready.eq(0)
            while not src.done:
                yield
        yield from snk_gen
    run_simulation(rx, [src.generator(), monitor(), gated_sink()])
    payloads = []
    for p in snk.packets:
        lengths = {b["length"] for b in p}
        assert len(lengths) == 1, "length changed inside a packet"
        length = lengths.pop()
        if length == 0:
            assert len(p) == 1, "a zero-length payload is one beat"
            payloads.append(b"")
        else:
            assert len(p) == length
            payloads.append(bytes(b["data"] for b in p))
    assert snk.current == [], "a payload was left unfinished"
    return payloads, counts

# Idle cycles on the input, back-pressure on the output: both at once in the quick tier, each alone and
# neither in the slow one (pytest.ini).
IDLE_AND_BACKPRESSURE = [(0.3, 0.5)] + [pytest.param(*case, marks=pytest.mark.slow)
                                        for case in [(0.0, 0.0), (0.3, 0.0), (0.0, 0.5)]]

# Valid frames -------------------------------------------------------------------------------------

@pytest.mark.parametrize("idle,backpressure", IDLE_AND_BACKPRESSURE)
def test_valid_sizes_forwarded_exactly(idle, backpressure):
    rng = random.Random(11)
    sizes = [0, 1, 2, 17, 18, 19, 63, 255, 256, MAX_PAYLOAD]
    payloads = [bytes(rng.getrandbits(8) for _ in range(n)) for n in sizes]
    frames = [(on_wire(udp(p)), False) for p in payloads]
    got, counts = run_rx(frames, idle=idle, backpressure=backpressure)
    assert got == payloads
    assert counts["received"] == len(sizes)
    assert all(counts[r] == 0 for r in REASONS)


def test_frame_without_padding_and_dont_fragment_clear():
    # A frame ending right after a zero-length payload (no padding) and one without DF.
    frames = [(udp(b""), False), (on_wire(udp(b"abc", flags=0)), False)]
    got, counts = run_rx(frames)
    assert got == [b"", b"abc"] and counts["received"] == 2

# Malformed frames ---------------------------------------------------------------------------------

def malformed_frames():
    good = udp(bytes(range(100)))
    cases = []
    cases.append(("mac",       udp(b"x" * 20, dst_mac="10:e2:d5:00:00:09")))
    cases.append(("mac",       udp(b"x" * 20, dst_mac="ff:ff:ff:ff:ff:ff")))
    cases.append(("ethertype", raw(Ether(dst=FPGA_MAC, src=HOST_MAC, type=0x86dd) / Raw(load=good[14:]))))
    cases.append(("ihl",       raw(Ether(dst=FPGA_MAC, src=HOST_MAC) /
                                   IP(src=HOST_IP, dst=FPGA_IP, options=[b"\x01\x01\x01\x00"]) /
                                   UDP(sport=1, dport=FPGA_PORT) / Raw(load=b"y" * 20))))
    cases.append(("ihl",       good[:14] + bytes([0x65]) + good[15:]))          # IPv6 version nibble.
    cases.append(("fragment",  udp(b"z" * 30, flags="MF")))
    cases.append(("fragment",  udp(b"z" * 30, flags=0, frag=8)))
    cases.append(("fragment",  udp(b"z" * 30, flags="evil")))                   # Reserved bit.
    cases.append(("protocol",  raw(Ether(dst=FPGA_MAC, src=HOST_MAC) / IP(src=HOST_IP, dst=FPGA_IP) /
                                   TCP(sport=1, dport=FPGA_PORT))))
    cases.append(("ip",        udp(b"w" * 30, dst_ip="192.168.1.51")))
    cases.append(("port",      udp(b"v" * 30, dport=FPGA_PORT + 1)))
    cases.append(("checksum",  udp(b"c" * 30, chksum=0x1234)))
    cases.append(("length",    raw(Ether(dst=FPGA_MAC, src=HOST_MAC) / IP(src=HOST_IP, dst=FPGA_IP, len=200) /
                                   UDP(sport=1, dport=FPGA_PORT) / Raw(load=b"u" * 30))))
    cases.append(("length",    raw(Ether(dst=FPGA_MAC, src=HOST_MAC) / IP(src=HOST_IP, dst=FPGA_IP, len=24) /
                                   UDP(sport=1, dport=FPGA_PORT, len=4))))
    cases.append(("oversize",  udp(bytes(MAX_PAYLOAD + 1))))
    cases.append(("truncated", good[:30]))                                      # Inside the header.
    cases.append(("truncated", good[:HEADER_LEN + 60]))                         # Inside the payload.
    cases.append(("truncated", good[:HEADER_LEN]))                              # Header only.
    return cases


def test_malformed_frames_are_dropped_and_counted_by_reason():
    cases = malformed_frames()
    payload = bytes(range(40))
    frames = []
    for _, frame in cases:
        frames.append((on_wire(frame) if len(frame) >= 60 else frame, False))
        frames.append((on_wire(udp(payload)), False)) # The receiver stays usable after each.
    frames.append((on_wire(udp(payload)), True))       # Bad FCS.
    got, counts = run_rx(frames, idle=0.2, backpressure=0.2)
    assert got == [payload] * len(cases)
    expected = {r: 0 for r in REASONS}
    for reason, _ in cases:
        expected[reason] += 1
    expected["error"] += 1
    assert {r: counts[r] for r in REASONS} == expected
    assert counts["received"] == len(cases)


def corrupt(frame, offset, xor):
    return frame[:offset] + bytes([frame[offset] ^ xor]) + frame[offset + 1:]


@pytest.mark.parametrize("idle,backpressure", IDLE_AND_BACKPRESSURE)
def test_bad_ipv4_header_checksum_dropped_and_counted(idle, backpressure):
    """A flipped bit in any header byte that no other check looks at (TOS, Total Length,
    Identification, DF, TTL, the checksum itself, source IP) is caught by the checksum; right
    checksums whose sums carry many times (random addresses, TTLs, identifications) are accepted."""
    rng = random.Random(17)
    payload = bytes(range(33))
    bad = [udp(payload, chksum=0), udp(payload, chksum=0xffff)]
    for offset in [1, 2, 3, 4, 5, 8, 10, 11, 12, 13, 14, 15]:
        bad.append(corrupt(udp(payload), ETH_HEADER_LEN + offset, 1 << rng.randrange(8)))
    bad.append(corrupt(udp(payload), ETH_HEADER_LEN + 6, 0x40)) # DF, allowed either way.
    good = []
    for _ in range(8):
        ip = dict(src=".".join(str(rng.randrange(1, 255)) for _ in range(4)), ttl=rng.randrange(1, 256),
                  id=rng.randrange(1 << 16), tos=rng.randrange(256))
        good.append(raw(Ether(dst=FPGA_MAC, src=HOST_MAC) / IP(dst=FPGA_IP, flags="DF", **ip) /
                        UDP(sport=rng.randrange(1, 1 << 16), dport=FPGA_PORT) / Raw(load=payload)))
    frames = []
    for b, g in zip(bad, good * 3):
        frames += [(on_wire(b), False), (on_wire(g), False)]
    got, counts = run_rx(frames, idle=idle, backpressure=backpressure)
    assert got == [payload] * len(bad)
    assert counts["checksum"] == len(bad)
    assert counts["received"] == len(bad)
    assert all(counts[r] == 0 for r in REASONS if r != "checksum")


def test_checksum_is_counted_after_the_header_checks_and_before_the_lengths():
    """A frame is counted once, under its first failing check: a wrong destination port wins over a
    wrong checksum, a wrong checksum over a wrong length."""
    port_and_csum = udp(b"p" * 30, dport=FPGA_PORT + 1, chksum=0x1111)
    csum_and_len  = raw(Ether(dst=FPGA_MAC, src=HOST_MAC) / IP(src=HOST_IP, dst=FPGA_IP, len=200, chksum=0x2222) /
                        UDP(sport=1, dport=FPGA_PORT) / Raw(load=b"u" * 30))
    got, counts = run_rx([(on_wire(port_and_csum), False), (on_wire(csum_and_len), False)])
    assert got == [] and counts["port"] == 1 and counts["checksum"] == 1 and counts["length"] == 0


def test_bad_fcs_on_header_only_frame_and_in_padding():
    frames = [(udp(b""), True), (on_wire(udp(b"ab")), True), (on_wire(udp(b"ok")), False)]
    got, counts = run_rx(frames)
    assert got == [b"ok"] and counts["error"] == 2 and counts["received"] == 1


def test_full_buffer_drops_as_overflow_without_corrupting_queued_payloads():
    payloads = [bytes([i]) * 60 for i in range(4)]
    frames = [(on_wire(udp(p)), False) for p in payloads]
    # 128 bytes hold two 60-byte payloads; the output is held back until all frames are in.
    got, counts = run_rx(frames, max_payload=100, buffer_depth=128, ready_after=True)
    assert got == payloads[:2]
    assert counts["overflow"] == 2 and counts["received"] == 2


@pytest.mark.slow
def test_back_to_back_maximum_payloads_all_forwarded():
    """The default buffer takes a maximum payload while the previous one drains (echo at wire rate)."""
    payloads = [bytes([i]) * MAX_PAYLOAD for i in range(3)]
    got, counts = run_rx([(udp(p), False) for p in payloads])
    assert got == payloads and counts["overflow"] == 0


def test_queued_payloads_leave_one_byte_per_cycle_back_to_back():
    """With `ready` high, a queued payload leaves without a gap, and the next one a cycle after it (the
    length of the next packet is loaded in between): the block RAM's two-cycle read (output register)
    is hidden by the prefetch."""
    payloads = [bytes(range(n)) for n in (1, 5, 64, 3)]
    rx  = UDPReceiver(FPGA_MAC, FPGA_IP, FPGA_PORT)
    src = StreamSource(rx.sink, seed=5)
    for p in payloads:
        frame = on_wire(udp(p))
        src.send([{"data": b, "last_be": int(i == len(frame) - 1), "error": 0} for i, b in enumerate(frame)])
    beats = []

    def sink():
        yield rx.source.ready.eq(0)
        while not src.done:
            yield
        for _ in range(50):   # The last frame's commit.
            yield
        yield rx.source.ready.eq(1)
        for cycle in range(200):
            yield
            if (yield rx.source.valid):
                beats.append((cycle, (yield rx.source.data), (yield rx.source.last)))
    run_simulation(rx, [src.generator(), sink()])
    assert [b[1] for b in beats] == [b for p in payloads for b in p]
    starts = [0]
    for p in payloads[:-1]:
        starts.append(starts[-1] + len(p))
    cycles = [b[0] for b in beats]
    for p, start in zip(payloads, starts):
        packet = cycles[start:start + len(p)]
        assert packet == list(range(packet[0], packet[0] + len(p)))      # No gap inside a packet.
        assert [b[2] for b in beats[start:start + len(p)]] == [0]*(len(p) - 1) + [1]
    assert [cycles[s] - cycles[s - 1] for s in starts[1:]] == [2]*(len(payloads) - 1)


def test_packet_queue_limit_drops_as_overflow():
    payloads = [bytes([i]) * 3 for i in range(5)]
    frames = [(on_wire(udp(p)), False) for p in payloads]
    got, counts = run_rx(frames, max_packets=3, ready_after=True)
    assert got == payloads[:3] and counts["overflow"] == 2

# Constructor checks -------------------------------------------------------------------------------

@pytest.mark.parametrize("kwargs,message", [
    (dict(buffer_depth=1000),  "buffer_depth must be a power of 2 >= max_payload"),
    (dict(buffer_depth=1024),  "buffer_depth must be a power of 2 >= max_payload \\(1472\\), not 1024"),
    (dict(max_packets=1),      "max_packets must be an integer >= 2, not 1"),
    (dict(max_payload=-1),     "max_payload must be an integer in 0..1472, not -1"),
])
def test_constructor_rejects_bad_parameters(kwargs, message):
    with pytest.raises(ValueError, match=message):
        UDPReceiver(FPGA_MAC, FPGA_IP, FPGA_PORT, **kwargs)
