# This file is part of hostlink.
# Copyright (c) 2026 hostlink developers
# SPDX-License-Identifier: BSD-2-Clause

"""Flow control in migen's simulator: the gate between a DMA engine's table and its splitter (flow.py), and
the buffer framer of a user port (user_port.py): in real-time flow it drops only between buffers and says
in each buffer's header exactly what it dropped before it; in packets flow it waits, and a `last` ends a
buffer with its length in the header."""

import random
import struct

import pytest

from migen import *

from litex.soc.interconnect import stream
from litepcie.frontend.dma import descriptor_layout

from hostlink.cores.pcie.flow import DMAFlow
from hostlink.protocol import FLOW_LOOP, FLOW_LOSSLESS, HEADER_BYTES, HEADER_FLAG_END, HEADER_MAGIC
from hostlink.cores.pcie.splitter import DescriptorSplitter
from hostlink.cores.pcie.user_port import BufferFramer
from hostlink.sim.pcie.stream_jobs import parse_framed

from helpers import assemble_framed as assemble
from benches.migen_streams import wait_for

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

# Buffer framer ------------------------------------------------------------------------------------

def _counts(index, lanes):
    return sum(((index*lanes + lane) & 0xffffffff) << (32*lane) for lane in range(lanes))


def run_framer(data_width, buffer_bytes, buffers, drop, packet=0, backpressure=1.0, max_request=128,
               words_offered=600, give_every=60):
    """A source that offers a word most cycles (every `packet`-th with `last`), a host that gives a buffer
    every `give_every` cycles after two at the start, a writer that takes words with probability
    `backpressure`. Returns the buffers the writer makes, the words offered and the words dropped."""
    word_bytes = data_width // 8
    framer = BufferFramer(data_width)
    rng = random.Random(data_width + packet)
    lanes = data_width // 32
    words = [_counts(i, lanes) for i in range(words_offered)]
    out, dropped, taken = [], [], []

    def source():
        yield framer.enable.eq(1)
        yield framer.drop.eq(drop)
        yield framer.buffer_bytes.eq(buffer_bytes)
        yield framer.max_request.eq(max_request)
        for i, word in enumerate(words):
            while rng.random() > 0.8:
                yield framer.sink.valid.eq(0)
                yield
            yield framer.sink.valid.eq(1)
            yield framer.sink.data.eq(word)
            yield framer.sink.last.eq(packet != 0 and i % packet == packet - 1)
            yield
            for _ in range(MAX_CYCLES):
                if (yield framer.sink.ready):
                    break
                yield
            taken.append(i)
        yield framer.sink.valid.eq(0)

    def host():
        yield framer.running.eq(1)
        for given in range(2, buffers + 1):
            yield framer.given.eq(given)
            for _ in range(give_every):
                yield framer.time.eq((yield framer.time) + 1)
                yield

    def sink():
        take = random.Random(1)
        for _ in range(give_every * buffers + 2000):
            ready = take.random() < backpressure
            yield framer.source.ready.eq(ready)
            yield
            if ready and (yield framer.source.valid):
                out.append(((yield framer.source.data), (yield framer.source.last)))
            if (yield framer.dropped):
                dropped.append(1)

    run_simulation(framer, [source(), host(), sink()])
    return assemble(out, word_bytes), taken, dropped


@pytest.mark.parametrize("data_width", [64, 128, 256])
@pytest.mark.parametrize("backpressure", [1.0, 0.6], ids=["ready", "backpressure"])
def test_real_time_drops_only_between_buffers_and_says_how_much(data_width, backpressure):
    """A host that gives buffers more slowly than the source fills them: every buffer whole, each header's
    drop count exactly the counts skipped before its data, nothing skipped within a buffer, and nothing out
    beyond the buffers given."""
    buffer_bytes = HEADER_BYTES + 6*(data_width // 8)
    buffers, _, dropped = run_framer(data_width, buffer_bytes, 12, drop=True, backpressure=backpressure,
                                     max_request=4096)
    assert len(buffers) == 12 and all(len(b) == buffer_bytes for b in buffers)   # The buffers given, whole.
    parsed = parse_framed(buffers)
    assert parsed["errors"] == 0 and parsed["packets"] == []
    # Words dropped after the last buffer began are in no header.
    assert parsed["events"] and 0 < parsed["dropped"] <= len(dropped) * data_width // 8
    assert parsed["times"] == sorted(parsed["times"])
    assert struct.unpack_from("<I", buffers[0], 0)[0] == HEADER_MAGIC


@pytest.mark.parametrize("data_width", [64, 128, 256])
def test_packets_end_buffers_at_last_with_their_length_and_lose_nothing(data_width):
    """Packets flow with a slow host: the source waits (nothing dropped, every word in order); a `last`
    ends its buffer, padded to the end of a request, with the data's length and the end flag in the header;
    a packet longer than a buffer fills it and ends in the next."""
    word_bytes = data_width // 8
    buffer_bytes, max_request = 512, 128
    for packet in [5, (buffer_bytes - HEADER_BYTES) // word_bytes + 3]:
        buffers, taken, dropped = run_framer(data_width, buffer_bytes, 14, drop=False, packet=packet,
                                             words_offered=6*packet)
        assert dropped == []
        parsed = parse_framed(buffers)
        assert parsed["errors"] == 0 and parsed["dropped"] == 0
        # Every packet whole and of its length; the data is every word offered, in order.
        assert parsed["packets"] == [packet * word_bytes] * 6
        assert parsed["data_bytes"] == len(taken) * word_bytes == 6 * packet * word_bytes
        for b in buffers:
            length, flags = struct.unpack_from("<II", b, 24)
            assert len(b) == buffer_bytes or (flags & HEADER_FLAG_END and len(b) % max_request == 0)
            assert len(b) - HEADER_BYTES - length < max_request    # Padding up to one request at most,
            assert not any(b[HEADER_BYTES + length:])               # and zeros.


def test_a_short_last_word_counts_only_its_bytes():
    framer = BufferFramer(64)
    out = []

    def run():
        yield framer.enable.eq(1)
        yield framer.running.eq(1)
        yield framer.given.eq(1)
        yield framer.buffer_bytes.eq(256)
        yield framer.max_request.eq(128)
        yield framer.source.ready.eq(1)
        for i in range(3):
            yield framer.sink.valid.eq(1)
            yield framer.sink.data.eq(i + 1)
            yield framer.sink.last.eq(i == 2)
            yield framer.sink.bytes.eq(6 if i == 2 else 0)
            yield
            yield from wait_for(framer.sink.ready)
        yield framer.sink.valid.eq(0)

    def watch():
        for _ in range(60):
            if (yield framer.source.valid) and (yield framer.source.ready):
                out.append(((yield framer.source.data), (yield framer.source.last)))
            yield

    run_simulation(framer, [run(), watch()])
    [buffer] = assemble(out, 8)
    assert len(buffer) == 128    # Padded to the first request's end.
    assert struct.unpack_from("<II", buffer, 24) == (8 + 8 + 6, HEADER_FLAG_END)


def test_real_time_waits_for_the_writer_and_the_table_reset_restarts_the_ring():
    """No buffer begins while the writer is disabled (its data would be thrown away); after the table's
    reset, sequence numbers and drop counts start again."""
    framer = BufferFramer(64)
    out = []

    def source():
        yield framer.enable.eq(1)
        yield framer.drop.eq(1)
        yield framer.buffer_bytes.eq(HEADER_BYTES + 16)
        yield framer.max_request.eq(4096)
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
                out.append(((yield framer.source.data), (yield framer.source.last)))

    run_simulation(framer, [source(), sink()])
    first, second = assemble(out, 8)
    assert len(first) == len(second) == HEADER_BYTES + 16
    assert struct.unpack_from("<IIQQ", first)[1::2] == (0, 20*8)    # Sequence 0, 20 words dropped.
    assert struct.unpack_from("<I", first, 32)[0] == 40
    magic, sequence, _, dropped = struct.unpack_from("<IIQQ", second)
    assert (magic, sequence) == (HEADER_MAGIC, 0)                   # The ring restarted.
    assert dropped < 20*8


def test_framing_off_is_a_wire():
    framer = BufferFramer(128)
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


def test_framing_needs_a_width_that_divides_the_header():
    with pytest.raises(ValueError, match="divides 256 bits"):
        BufferFramer(512)
