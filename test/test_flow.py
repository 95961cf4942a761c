# This file is part of hostlink.
# Copyright (c) 2026 hostlink developers
# SPDX-License-Identifier: BSD-2-Clause

"""Flow control in migen's simulator: the gate between a DMA engine's table and its splitter (flow.py), and
the real-time framer of a user port (user_port.py), which drops only between buffers and says in each
buffer's header exactly what it dropped before it."""

import random
import struct

import pytest

from migen import *

from litex.soc.interconnect import stream
from litepcie.frontend.dma import descriptor_layout

from hostlink.cores.pcie.flow import DMAFlow, FLOW_LOOP, FLOW_LOSSLESS, HEADER_BYTES, HEADER_MAGIC
from hostlink.cores.pcie.splitter import DescriptorSplitter
from hostlink.cores.pcie.user_port import RealTimeFramer
from hostlink.sim.pcie.stream_jobs import parse_realtime

MAX_CYCLES = 20000

# Flow gate ----------------------------------------------------------------------------------------

class Table:
    """Stands for LitePCIe's table in loop mode: a descriptor always ready, 256 bytes each."""
    def __init__(self):
        self.source = stream.Endpoint(descriptor_layout(address_width=64))


class GateBench(Module):
    def __init__(self):
        self.table = Table()
        self.submodules.splitter = DescriptorSplitter(max_size=128, address_width=64, word_bytes=16)
        self.table_reset = Signal()
        self.submodules.flow = DMAFlow(self.splitter, self.table, self.table_reset, writer=False, with_csr=False)
        self.mode = Signal(2, reset=FLOW_LOSSLESS)   # From the first cycle.
        self.comb += [
            self.flow.mode.eq(self.mode),
            self.table.source.connect(self.splitter.sink),
            self.table.source.valid.eq(1),
            self.table.source.length.eq(256),
            self.splitter.source.ready.eq(1),
        ]


def _requests(bench, cycles, out):
    for _ in range(cycles):
        yield
        if (yield bench.splitter.source.valid) and (yield bench.splitter.source.ready):
            out.append((yield bench.splitter.source.first))


def _give(bench, count):
    yield bench.flow.given_value.eq(count)
    yield bench.flow.given_write.eq(1)
    yield
    yield bench.flow.given_write.eq(0)


def test_lossless_begins_only_the_buffers_given():
    bench = GateBench()
    seen = {}

    def host():
        out = []
        yield from _requests(bench, 50, out)
        seen["nothing given"] = (len(out), (yield bench.flow.started), (yield bench.flow.waits) > 0)
        yield from _give(bench, 3)
        out = []
        yield from _requests(bench, 100, out)
        seen["3 given"] = (out.count(1), len(out), (yield bench.flow.started), (yield bench.flow.done_raw))
        yield from _give(bench, 5)
        out = []
        yield from _requests(bench, 100, out)
        seen["5 given"] = (out.count(1), (yield bench.flow.started))
        # A count behind what was begun (a host's mistake) holds the gate too.
        yield from _give(bench, 2)
        out = []
        yield from _requests(bench, 50, out)
        seen["behind"] = len(out)
        # The table's reset restarts every count.
        yield bench.table_reset.eq(1)
        yield
        yield bench.table_reset.eq(0)
        yield
        seen["reset"] = []
        for count in (bench.flow.given, bench.flow.started, bench.flow.done_raw, bench.flow.waits):
            seen["reset"].append((yield count))
        # Loop mode: no gate.
        yield bench.mode.eq(FLOW_LOOP)
        out = []
        yield from _requests(bench, 40, out)
        seen["loop"] = out.count(1)

    run_simulation(bench, host())
    assert seen["nothing given"] == (0, 0, True)
    assert seen["3 given"] == (3, 6, 3, 3)   # 3 descriptors, 2 requests each, all done.
    assert seen["5 given"] == (2, 5)
    assert seen["behind"] == 0
    assert seen["reset"] == [0, 0, 0, 0]
    assert seen["loop"] >= 15

# Real-time framer ---------------------------------------------------------------------------------

def _counts(index, lanes):
    return sum(((index*lanes + lane) & 0xffffffff) << (32*lane) for lane in range(lanes))


@pytest.mark.parametrize("data_width", [64, 128, 256])
@pytest.mark.parametrize("backpressure", [1.0, 0.6], ids=["ready", "backpressure"])
def test_real_time_drops_only_between_buffers_and_says_how_much(data_width, backpressure):
    """A source that offers a word most cycles and a host that gives a buffer now and then, more slowly than
    the source fills them: every buffer whole, each header's drop count exactly the counts skipped before
    its data, nothing skipped within a buffer, and nothing out beyond the buffers given."""
    word_bytes   = data_width // 8
    buffer_bytes = HEADER_BYTES + 6*word_bytes
    buffers      = 12
    framer = RealTimeFramer(data_width)
    rng = random.Random(data_width)
    lanes = data_width // 32
    words = [_counts(i, lanes) for i in range(600)]
    out = []
    dropped = []

    def source():
        yield framer.enable.eq(1)
        yield framer.buffer_bytes.eq(buffer_bytes)
        for i, word in enumerate(words):
            while rng.random() > 0.8:
                yield framer.sink.valid.eq(0)
                yield
            yield framer.sink.valid.eq(1)
            yield framer.sink.data.eq(word)
            yield
            for _ in range(MAX_CYCLES):
                if (yield framer.sink.ready):
                    break
                yield
        yield framer.sink.valid.eq(0)

    def host():
        # Two buffers free at the start, then one every 60 cycles: slower than the source.
        yield framer.running.eq(1)
        for given in range(2, buffers + 1):
            yield framer.given.eq(given)
            for _ in range(60):
                yield framer.time.eq((yield framer.time) + 1)
                yield

    def sink():
        take = random.Random(1)
        for _ in range(2000):
            ready = take.random() < backpressure
            yield framer.source.ready.eq(ready)
            yield
            if ready and (yield framer.source.valid):
                out.append((yield framer.source.data))
            if (yield framer.dropped):
                dropped.append(1)

    run_simulation(framer, [source(), host(), sink()])
    data = b"".join(w.to_bytes(word_bytes, "little") for w in out)
    assert len(data) == buffers * buffer_bytes   # Exactly the buffers given, whole.
    errors, header_dropped, events, times = parse_realtime(data, buffer_bytes)
    assert errors == 0
    assert events and header_dropped > 0
    assert times == sorted(times)
    assert struct.unpack_from("<I", data, 0)[0] == HEADER_MAGIC


def test_real_time_waits_for_the_writer_and_the_table_reset_restarts_the_ring():
    """No buffer begins while the writer is disabled (its data would be thrown away); after the table's
    reset, sequence numbers and drop counts start again."""
    framer = RealTimeFramer(64)
    out = []

    def source():
        yield framer.enable.eq(1)
        yield framer.buffer_bytes.eq(HEADER_BYTES + 16)
        yield framer.given.eq(1)
        yield framer.sink.valid.eq(1)
        i = 0
        while i < 80:
            yield framer.running.eq(i >= 20)   # Words 0..19 come while the writer is disabled: dropped.
            yield framer.reset.eq(i == 40)     # Then one buffer (words 20, 21), and the table's reset.
            yield framer.sink.data.eq(_counts(i, 2))
            yield
            if (yield framer.sink.ready):
                i += 1

    def sink():
        yield framer.source.ready.eq(1)
        for _ in range(90):
            yield
            if (yield framer.source.valid):
                out.append((yield framer.source.data))

    run_simulation(framer, [source(), sink()])
    data = b"".join(w.to_bytes(8, "little") for w in out)
    assert len(data) == 2 * (HEADER_BYTES + 16)
    first, second = data[:48], data[48:]
    assert struct.unpack_from("<IIQQ", first)[1::2] == (0, 20*8)    # Sequence 0, 20 words dropped.
    assert struct.unpack_from("<I", first, 32)[0] == 40
    magic, sequence, _, dropped = struct.unpack_from("<IIQQ", second)
    assert (magic, sequence) == (HEADER_MAGIC, 0)                   # The ring restarted.
    assert dropped < 20*8


def test_real_time_off_is_a_wire():
    framer = RealTimeFramer(128)
    out = []

    def run():
        yield framer.source.ready.eq(1)
        for i in range(10):
            yield framer.sink.valid.eq(1)
            yield framer.sink.data.eq(i)
            yield framer.sink.last.eq(i == 9)
            yield
            out.append(((yield framer.source.valid), (yield framer.source.data), (yield framer.source.last),
                        (yield framer.sink.ready)))

    run_simulation(framer, run())
    assert out == [(1, i, int(i == 9), 1) for i in range(10)]


def test_real_time_framing_needs_a_width_that_divides_the_header():
    with pytest.raises(ValueError, match="divides 256 bits"):
        RealTimeFramer(512)
