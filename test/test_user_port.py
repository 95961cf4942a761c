# This file is part of hostlink.
# Copyright (c) 2026 hostlink developers
# SPDX-License-Identifier: BSD-2-Clause

"""UserPort (cores/pcie/user_port.py) in migen's simulator: a DMA channel's streams in the user's clock and
width, byte for byte, with idle cycles on the input and back-pressure on the output, each alone and both,
in the SoC's clock and in a clock of the user's; widths narrower than, equal to and wider than the DMA's;
`first`/`last` at buffer bounds; the counters; the parameter checks. Every wait is bounded in cycles, and
each run ends by checking that nothing more comes out."""

import random
import struct

import pytest

from migen import *

from hostlink.protocol import HEADER_FLAG_END, HEADER_MAGIC
from hostlink.cores.pcie.user_port import ResetSafeCrossing, UserPort
from helpers import assemble_framed as assemble
from benches.migen_streams import drive

DMA_WIDTH = 128
# (valid probability at the input, ready probability at the output): idle alone, back-pressure alone, both.
# The hardest (both) in the quick tier, the others in `slow`.
FLOWS = [pytest.param(flow, marks=pytest.mark.slow) for flow in [(1.0, 1.0), (0.4, 1.0), (1.0, 0.3)]] + [(0.5, 0.5)]
MAX_CYCLES = 20000


def to_words(data, width):
    n = width // 8
    return [int.from_bytes(data[i:i + n], "little") for i in range(0, len(data), n)]


def from_words(words, width):
    return b"".join(w.to_bytes(width // 8, "little") for w in words)




def collect(endpoint, count, rng, ready_p, out, tail=200):
    """Take `count` words (data, first, last) into `out`, ready with probability ready_p; then `tail` cycles
    with ready high in which nothing more may come."""
    cycles = 0
    while len(out) < count:
        ready = rng.random() < ready_p
        yield endpoint.ready.eq(ready)
        yield
        if ready and (yield endpoint.valid):
            out.append(((yield endpoint.data), (yield endpoint.first), (yield endpoint.last)))
        cycles += 1
        assert cycles < MAX_CYCLES, f"output stuck after {len(out)} of {count} words"
    yield endpoint.ready.eq(1)
    for _ in range(tail):
        yield
        assert not (yield endpoint.valid), "a word more than was sent"


def buffers(rng, unit, count):
    """Byte buffers whose lengths are whole numbers of `unit` bytes."""
    return [bytes(rng.randrange(256) for _ in range(unit * rng.choice([1, 2, 3, 5]))) for _ in range(count)]


def marks_of(sizes, word_bytes):
    marks = []
    for size in sizes:
        n = size // word_bytes
        marks += [(i == 0, i == n - 1) for i in range(n)]
    return marks


def run(port, generators):
    domains = {"sys": 10} if port.clock_domain == "sys" else {"sys": 10, "user": 13}
    by_domain = {}
    for domain, generator in generators:
        by_domain.setdefault(domain, []).append(generator)
    run_simulation(port, by_domain, clocks=domains)


def check_stream_through(port, into, into_domain, into_width, out_of, out_domain, out_width, buffer_count,
                         flow, seed, rng_seeds, marks=True):
    """Buffers of whole words at both widths, sent into `into` (idle per flow[0]) and taken from `out_of`
    (back-pressure per flow[1]): the same bytes come out, with `first`/`last` at the buffers' bounds (with
    `marks`; else with no `last`)."""
    unit = max(into_width, out_width) // 8
    data = buffers(random.Random(seed), unit, buffer_count)
    sizes = [len(b) for b in data]
    stream_bytes = b"".join(data)
    out = []
    run(port, [
        (into_domain, drive(into, to_words(stream_bytes, into_width), random.Random(rng_seeds[0]), flow[0],
                            marks_of(sizes, into_width // 8))),
        (out_domain,  collect(out_of, len(stream_bytes) * 8 // out_width, random.Random(rng_seeds[1]), flow[1],
                              out)),
    ])
    assert from_words([w for w, _, _ in out], out_width) == stream_bytes
    if marks:
        assert [(f, l) for _, f, l in out] == marks_of(sizes, out_width // 8)
    else:
        assert not any(l for _, _, l in out)


@pytest.mark.parametrize("flow", FLOWS, ids=["plain", "idle", "backpressure", "both"])
@pytest.mark.parametrize("width", [32, 128, 256])
@pytest.mark.parametrize("domain", ["sys", "user"])
def test_host_to_fpga_bytes_and_buffer_marks(domain, width, flow):
    port = UserPort(DMA_WIDTH, width, clock_domain=domain, fifo_depth=8, with_csr=False)
    check_stream_through(port, port.dma_sink, "sys", DMA_WIDTH, port.source, domain, width, 6, flow,
                         seed=width * 7 + len(domain), rng_seeds=(1, 2))


@pytest.mark.parametrize("flow", FLOWS, ids=["plain", "idle", "backpressure", "both"])
@pytest.mark.parametrize("width", [8, 64, 128, 512])
@pytest.mark.parametrize("domain", ["sys", "user"])
def test_fpga_to_host_bytes(domain, width, flow):
    """Outside the framed flows a core's `last` does not reach the DMA: buffers are whole."""
    port = UserPort(DMA_WIDTH, width, clock_domain=domain, fifo_depth=16, with_csr=False)
    check_stream_through(port, port.sink, domain, width, port.dma_source, "sys", DMA_WIDTH, 5, flow,
                         seed=width * 11 + len(domain), rng_seeds=(3, 4), marks=False)


def test_last_ends_a_buffer_in_packets_flow_with_its_exact_length():
    """Packets flow: a core's packet of 5 words of 32 bits ends its buffer. The DMA gets two data words
    (the second ended by `last` after its first 32 bits), zeros to the end of the first 128-byte request,
    and the header: 20 data bytes, the end flag."""
    port = UserPort(DMA_WIDTH, 32, clock_domain="user", fifo_depth=8, with_csr=False)
    words = [0x11111111, 0x22222222, 0x33333333, 0x44444444, 0x55555555]
    out = []

    def flow():
        for signal, value in [(port.c2h_packets, 1), (port.c2h_running, 1), (port.c2h_given, 1),
                              (port.c2h_buffer_bytes, 4096), (port.c2h_max_request, 128)]:
            yield signal.eq(value)
        yield

    run(port, [
        ("sys",  flow()),
        ("user", drive(port.sink, words, random.Random(5), 1.0, [(i == 0, i == 4) for i in range(5)])),
        ("sys",  collect(port.dma_source, 128 // 16, random.Random(6), 1.0, out)),
    ])
    [buffer] = assemble([(w, l) for w, _, l in out], 16)
    assert len(buffer) == 128
    assert buffer[32:52] == b"".join(w.to_bytes(4, "little") for w in words)
    assert struct.unpack_from("<II", buffer) == (HEADER_MAGIC, 0)
    assert struct.unpack_from("<II", buffer, 24) == (20, HEADER_FLAG_END)


@pytest.mark.parametrize("domain", ["sys", "user"])
def test_counters_count_words_and_waits_and_clear(domain):
    port = UserPort(DMA_WIDTH, 64, clock_domain=domain, fifo_depth=4, with_csr=False)
    words = list(range(1, 41))
    counts = {}
    ready_cycles = []   # Cycles of the core's clock it was ready and got nothing.

    def host_to_fpga():
        yield from drive(port.dma_sink, words, random.Random(7), 0.5, [(0, 0)] * len(words))
        for _ in range(400):
            yield
        counts["h2c"] = ((yield port.h2c_words), (yield port.h2c_waits), (yield port.h2c_core_waits))
        counts["high_water"] = yield port.h2c_fifo_max
        yield port.h2c_clear.eq(1)
        yield
        yield port.h2c_clear.eq(0)
        for _ in range(20):   # Through the synchronizers.
            yield
        counts["cleared"] = ((yield port.h2c_words), (yield port.h2c_waits), (yield port.h2c_core_waits),
                             (yield port.h2c_fifo_max))

    def core(out, rng=random.Random(8)):
        while len(out) < 2 * len(words):
            ready = rng.random() < 0.3
            yield port.source.ready.eq(ready)
            yield
            if ready and (yield port.source.valid):
                out.append((yield port.source.data))
            elif ready:
                ready_cycles.append(1)
        yield port.source.ready.eq(0)

    out = []
    run(port, [("sys", host_to_fpga()), (domain, core(out))])
    assert counts["h2c"][0] == len(words)
    assert counts["h2c"][1] > 0             # A 4-word FIFO and a core taking about one word in three.
    assert counts["h2c"][2] == len(ready_cycles) > 0
    assert 4 <= counts["high_water"] <= 5   # Full: 4 words (and the output register of the synchronous one).
    assert counts["cleared"] == (0, 0, 0, 0)
    assert from_words(out, 64) == from_words(words, DMA_WIDTH)


@pytest.mark.parametrize("domain", ["sys", "user"])
@pytest.mark.parametrize("dma_ready, expected", [(0.0, (16, 17)), (1.0, (0, 3))], ids=["stalled", "keeping-up"])
def test_the_fpga_to_host_high_water_mark(domain, dma_ready, expected):
    """A core sending every cycle into a 16-word FIFO: full when the DMA takes nothing, a word or two when it
    takes a word every cycle (twice the core's rate here)."""
    port = UserPort(DMA_WIDTH, 64, clock_domain=domain, fifo_depth=16, with_csr=False)
    result = {}

    def core():
        yield port.sink.valid.eq(1)
        for i in range(60):
            yield port.sink.data.eq(i)
            yield

    def dma():
        yield port.dma_source.ready.eq(int(dma_ready))
        for _ in range(120):
            yield
        result["max"] = yield port.c2h_fifo_max

    run(port, [(domain, core()), ("sys", dma())])
    assert expected[0] <= result["max"] <= expected[1]


@pytest.mark.parametrize("kwargs, message", [
    ({"data_width": 12},  r"whole number of bytes in bits .* not 12"),
    ({"data_width": 0},   r"whole number of bytes in bits .* not 0"),
    ({"data_width": "64"}, r"whole number of bytes in bits .* not '64'"),
    ({"data_width": 96},  r"divide the DMA's 128 bits or be a multiple of them .* not 96"),
    ({"fifo_depth": 100}, r"power of 2 of at least 4 words, not 100"),
    ({"fifo_depth": 2},   r"power of 2 of at least 4 words, not 2"),
])
def test_bad_parameters_say_what_was_given(kwargs, message):
    with pytest.raises(ValueError, match=message):
        UserPort(DMA_WIDTH, **kwargs)


# The crossings across a reset --------------------------------------------------------------------------

class _Crossing(Module):
    """A crossing from domain `a` to domain `b` whose resets the test drives."""
    def __init__(self, safe):
        from litex.soc.interconnect import stream
        self.clock_domains.cd_a = ClockDomain("a")
        self.clock_domains.cd_b = ClockDomain("b")
        layout = [("data", 16)]
        self.submodules.crossing = ResetSafeCrossing(layout, "a", "b", 8) if safe else \
            stream.ClockDomainCrossing(layout, cd_from="a", cd_to="b", depth=8)


def _words_after_a_reset(safe, side):
    """Five words through, all taken; then `side`'s domain reset for 3 cycles of the slower clock; then, 60
    cycles of `a` later, three new words, `b` taking whatever comes. Returns what `b` received after the reset."""
    dut = _Crossing(safe)
    sink, source = dut.crossing.sink, dut.crossing.source
    state = {"reset_done": False}
    received = []

    def send(words):
        for word in words:
            yield sink.valid.eq(1)
            yield sink.data.eq(word)
            yield
            while not (yield sink.ready):
                yield
        yield sink.valid.eq(0)

    def writer():
        yield from send(range(1, 6))
        while not state["reset_done"]:
            yield
        for _ in range(60):
            yield
        yield from send((0x100, 0x101, 0x102))

    def reader():
        yield source.ready.eq(1)
        for _ in range(40):       # The first five words come and go.
            yield
        cd = dut.cd_a if side == "write" else dut.cd_b
        yield cd.rst.eq(1)
        for _ in range(4):        # 52 ns: 3 cycles of b (13 ns), 5 of a (10 ns).
            yield
        yield cd.rst.eq(0)
        state["reset_done"] = True
        for _ in range(200):
            if (yield source.valid):
                received.append((yield source.data))
            yield

    run_simulation(dut, {"a": writer(), "b": reader()}, clocks={"a": 10, "b": 13})
    return received


@pytest.mark.parametrize("side", ["write", "read"])
def test_the_crossing_hands_on_nothing_of_before_a_reset_of_either_side(side):
    """cores/pcie/user_port.py's ResetSafeCrossing: after a reset of either domain (here 3 cycles of the
    slower clock), the other side holds too and the FIFO starts empty: only the words written after the reset
    come out. LiteX's plain crossing, whose pointer synchronizers have no reset, hands on stale entries (what
    made the first transfer after the VC709's soft reset come back shifted)."""
    assert _words_after_a_reset(True, side) == [0x100, 0x101, 0x102]
    assert _words_after_a_reset(False, side) != [0x100, 0x101, 0x102]
