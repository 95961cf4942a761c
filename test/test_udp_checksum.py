# This file is part of hostlink.
# Copyright (c) 2026 hostlink developers
# SPDX-License-Identifier: BSD-2-Clause

"""The transmitter's IPv4 checksum: one subtraction with end-around borrow from a base computed
at elaboration. Proven for all 65,536 bases x every legal Total Length against RFC 1071, and
checked on the gateware itself for a sample of bases."""

import random

import pytest

from migen import run_simulation

from scapy.all import IP, raw

from hostlink.cores.udp import UDPTransmitter
from hostlink.cores.udp.common import *
from benches.udp_models import StreamSource, StreamSink

MAX_PAYLOAD   = max_payload_for_mtu(DEFAULT_MTU)
TOTAL_LENGTHS = range(IPV4_HEADER_LEN + UDP_HEADER_LEN, IPV4_HEADER_LEN + UDP_HEADER_LEN + MAX_PAYLOAD + 1)

# Exhaustive proof ---------------------------------------------------------------------------------

# All 65,536 bases are evaluated at once as lanes of one big integer (18 bits per lane, so no
# carry or borrow crosses into a neighbour): pure integer arithmetic, one pass per Total Length.
LANE  = 18
N     = 1 << 16
ONES  = sum(1 << (LANE*i) for i in range(N))          # 1 in every lane.
BASES = sum(b << (LANE*b) for b in range(N))          # Lane b holds base b.
M16   = ONES * 0xffff


def gateware_formula_lanes(total_length):
    """checksum = (base - TL) - borrow, mod 2^16, in every lane (`checksum_subtract`)."""
    d     = BASES + ONES * (0x10000 - total_length)    # Bit 16 of a lane set <=> no borrow.
    carry = (d >> 16) & ONES
    return (d & M16) - (ONES ^ carry)


def rfc1071_lanes(total_length):
    """RFC 1071: ~(fold(static_sum + TL)) where the static words sum to ~base."""
    s = (M16 - BASES) + ONES * total_length
    s = (s & M16) + ((s >> 16) & ONES)                 # End-around carry (fold).
    s = (s & M16) + ((s >> 16) & ONES)
    return M16 - s


def test_lane_arithmetic_matches_scalar_models():
    """The lane encodings above compute exactly the scalar functions, on a sample."""
    rng = random.Random(7)
    for total_length in (28, 29, 1500, rng.choice(TOTAL_LENGTHS)):
        got = gateware_formula_lanes(total_length)
        ref = rfc1071_lanes(total_length)
        for base in [0, 1, total_length - 1, total_length, total_length + 1, 0xfffe, 0xffff] + \
                    [rng.randrange(N) for _ in range(50)]:
            lane = lambda v: (v >> (LANE*base)) & ((1 << LANE) - 1)
            assert lane(got) == checksum_subtract(base, total_length)
            static_sum = ~base & 0xffff
            assert lane(ref) == ~ones_complement_sum([static_sum, total_length]) & 0xffff


def test_checksum_formula_exhaustive():
    """Every base 0..65535 x every Total Length 28..1500: formula == RFC 1071."""
    for total_length in TOTAL_LENGTHS:
        assert gateware_formula_lanes(total_length) == rfc1071_lanes(total_length), \
            f"Total Length {total_length}: the subtraction differs from RFC 1071 for some base"


def test_without_end_around_borrow_it_would_be_wrong():
    """The borrow matters: a plain two's-complement subtraction fails for bases below TL."""
    assert checksum_subtract(10, 28) != (10 - 28) & 0xffff
    plain = lambda base, tl: (base - tl) & 0xffff
    reference = lambda base, tl: ~ones_complement_sum([~base & 0xffff, tl]) & 0xffff
    assert plain(10, 28) != reference(10, 28) == checksum_subtract(10, 28)

# Real headers -------------------------------------------------------------------------------------

def test_header_checksum_matches_scapy_for_many_configurations():
    rng = random.Random(21)
    for _ in range(300):
        src, dst = rng.getrandbits(32) | 1 << 24, rng.getrandbits(32) | 1 << 24
        header = static_header(0x020000000001, src, 0x020000000002, dst, 1, 2)
        base = ipv4_checksum_base(header)
        total_length = rng.choice(TOTAL_LENGTHS)
        p = IP(src=".".join(str(b) for b in src.to_bytes(4, "big")),
               dst=".".join(str(b) for b in dst.to_bytes(4, "big")),
               id=0, flags="DF", ttl=64, proto=17, len=total_length)
        assert IP(raw(p)).chksum == checksum_subtract(base, total_length)


HOST_IP = 0x0a000001

def source_ip_for_base(target_base):
    """A source IP (11.0.x.y) whose static header has checksum base `target_base`: its low word
    is the one's-complement difference between the wanted and the actual static sums."""
    header = static_header(0x020000000001, 0x0b000000, 0x020000000002, HOST_IP, 1, 2)
    s0 = ~ipv4_checksum_base(header) & 0xffff
    low = ones_complement_sum([~target_base & 0xffff, ~s0 & 0xffff])
    return 0x0b000000 | low


# Around 0 and 0xffff, and around the borrow boundary (base == Total Length) at both ends of the
# legal range. A real header's static sum is never 0, so base 0xffff cannot occur; 0xfffe is the top.
SAMPLED_BASES = [0x0000, 0x0001, 0x001b, 0x001c, 0x001d, 0x05db, 0x05dc, 0x05dd, 0x7fff, 0x8000, 0xfffe]

# The borrow boundary of the shortest datagram (base == Total Length 28) in the quick tier, every other base
# in the slow one (pytest.ini).
@pytest.mark.parametrize("target_base", [pytest.param(base, marks=() if base == 0x001c else pytest.mark.slow)
                                         for base in SAMPLED_BASES])
def test_gateware_checksum_on_sampled_bases(target_base):
    src_ip = source_ip_for_base(target_base)
    header = static_header(0x020000000001, src_ip, 0x020000000002, HOST_IP, 1, 2)
    assert ipv4_checksum_base(header) == target_base
    tx = UDPTransmitter(fpga_mac=0x020000000001, fpga_ip=src_ip, host_mac=0x020000000002,
                        host_ip=HOST_IP, fpga_port=1, host_port=2)
    # Payload lengths whose Total Length is just below, at and above the base, plus the ends.
    lengths = sorted({0, 1, MAX_PAYLOAD} |
                     {n for n in (target_base - 29, target_base - 28, target_base - 27) if 0 <= n <= MAX_PAYLOAD})
    src = StreamSource(tx.sink, idle=0.2, seed=1)
    snk = StreamSink(tx.source, backpressure=0.2, seed=2)
    for n in lengths:
        src.send([{"data": i & 0xff, "length": n} for i in range(max(n, 1))])

    def wait():
        while len(snk.packets) < len(lengths):
            yield
    run_simulation(tx, [src.generator(), snk.generator(), wait()])
    for n, packet in zip(lengths, snk.packets):
        header = bytes(b["data"] for b in packet[:HEADER_LEN])
        checksum = (header[IPV4_CHECKSUM_OFFSET] << 8) | header[IPV4_CHECKSUM_OFFSET + 1]
        total_length = IPV4_HEADER_LEN + UDP_HEADER_LEN + n
        assert checksum == ipv4_checksum_rfc1071(header[ETH_HEADER_LEN:ETH_HEADER_LEN + IPV4_HEADER_LEN]), n
        assert checksum == checksum_subtract(target_base, total_length)
        recomputed = IP(header[ETH_HEADER_LEN:] + bytes(n))
        del recomputed.chksum
        assert IP(raw(recomputed)).chksum == checksum
