# This file is part of hostlink.
# Copyright (c) 2026 hostlink developers
# SPDX-License-Identifier: BSD-2-Clause

"""hostlink's DMA descriptor splitter (cores/pcie/splitter.py) in migen's simulator.

Request for request the same as LitePCIe's splitter (run side by side on the same descriptors, idle input
cycles, back-pressure and early terminations), the descriptor accepted only with its last request, and no
idle output cycle between descriptors, where LitePCIe's has one.
"""

import random

import pytest

from migen import *

from litepcie.frontend.dma import LitePCIeDMADescriptorSplitter
import litepcie.frontend.dma as litepcie_dma

from hostlink.cores.pcie.splitter import DescriptorSplitter, litepcie_with_descriptor_splitter

from benches.migen_streams import DRAIN_CYCLES, MAX_CYCLES, wait_for

FIELDS = ["address", "length", "first", "last", "user_id", "irq_disable", "last_disable"]


def random_descriptors(rng, count, max_size, address_step=None):
    """Descriptors at addresses aligned to `address_step` (default `max_size`: cut as LitePCIe cuts them)."""
    descriptors = []
    for _ in range(count):
        length = rng.choice([32, max_size - 32, max_size, max_size + 32, 3*max_size, 5*max_size + 96,
                             rng.randrange(32, 8*max_size, 32)])
        descriptors.append({"address": rng.randrange(0, 1 << 32, address_step or max_size), "length": length,
                            "irq_disable": rng.random() < 0.3, "last_disable": rng.random() < 0.3})
    return descriptors


def run_splitter(splitter_cls, descriptors, seed, valid_probability, ready_probability,
                 terminate_every=0, max_size=512, word_bytes=4, framed=False):
    """Requests (dicts of FIELDS, plus "terminate") accepted at the output, descriptors accepted at the
    input, and the cycles the output was not valid between the first and the last request. The input's
    gaps and the output's back-pressure come from separate random streams, so two splitters see the same
    pattern whatever their timing; every `terminate_every`-th request (counted from 1) ends its
    descriptor early."""
    source_rng, sink_rng = random.Random(seed), random.Random(seed + 1000)
    extra = {} if splitter_cls is LitePCIeDMADescriptorSplitter else {"word_bytes": word_bytes}
    dut = splitter_cls(max_size=max_size, address_width=32, **extra)
    requests, accepted, idle = [], [], []

    def source():
        if framed:
            yield dut.framed.eq(1)
        for d in descriptors:
            while source_rng.random() > valid_probability:
                yield dut.sink.valid.eq(0)
                yield
            yield dut.sink.valid.eq(1)
            for key in ["address", "length", "irq_disable", "last_disable"]:
                yield getattr(dut.sink, key).eq(d[key])
            yield
            yield from wait_for(dut.sink.ready)   # Values of this cycle; the edge that follows takes it.
            accepted.append(d)
        yield dut.sink.valid.eq(0)

    def sink():
        cycle, drained = 0, 0
        while len(accepted) < len(descriptors) or drained < DRAIN_CYCLES:
            assert cycle < MAX_CYCLES, "the splitter stopped"
            if len(accepted) == len(descriptors):   # Then ready a while longer: nothing more may come.
                drained += 1
            ready     = sink_rng.random() < ready_probability or len(accepted) == len(descriptors)
            terminate = terminate_every and (len(requests) + 1) % terminate_every == 0
            yield dut.source.ready.eq(ready)
            yield dut.terminate.eq(terminate)
            yield
            cycle += 1
            if (yield dut.source.valid):
                if ready:
                    request = {}
                    for f in FIELDS:
                        request[f] = (yield getattr(dut.source, f))
                    requests.append(dict(request, terminate=bool(terminate), cycle=cycle))
            else:
                idle.append(cycle)

    run_simulation(dut, [source(), sink()])
    if requests:
        idle = [c for c in idle if requests[0]["cycle"] < c < requests[-1]["cycle"]]
    for r in requests:
        del r["cycle"]
    return requests, accepted, idle


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("valid_probability,ready_probability", [(1.0, 1.0), (0.7, 0.6), (1.0, 0.3)])
def test_same_requests_as_litepcie(seed, valid_probability, ready_probability):
    descriptors = random_descriptors(random.Random(seed), 24, 512)
    kwargs = dict(seed=seed, valid_probability=valid_probability, ready_probability=ready_probability)
    ours,   ours_accepted,   _ = run_splitter(DescriptorSplitter, descriptors, **kwargs)
    theirs, theirs_accepted, _ = run_splitter(LitePCIeDMADescriptorSplitter, descriptors, **kwargs)
    strip = lambda rs: [{f: r[f] for f in FIELDS} for r in rs]
    assert strip(ours) == strip(theirs)
    assert ours_accepted == theirs_accepted == descriptors
    # And both are right: each descriptor cut into max_size requests, the last one shorter.
    expected = []
    for n, d in enumerate(descriptors):
        offset = 0
        while True:
            length = min(512, d["length"] - offset)
            last = d["length"] - offset <= 512
            expected.append({"address": d["address"] + offset, "length": length, "first": int(offset == 0),
                             "last": int(last), "user_id": n & 0xff, "irq_disable": int(d["irq_disable"]),
                             "last_disable": int(d["last_disable"])})
            offset += 512
            if last:
                break
    assert strip(ours) == expected


@pytest.mark.parametrize("seed", range(3))
def test_early_termination_as_litepcie(seed):
    descriptors = random_descriptors(random.Random(seed), 24, 512)
    kwargs = dict(seed=seed, valid_probability=0.8, ready_probability=0.7, terminate_every=5)
    ours,   ours_accepted,   _ = run_splitter(DescriptorSplitter, descriptors, **kwargs)
    theirs, theirs_accepted, _ = run_splitter(LitePCIeDMADescriptorSplitter, descriptors, **kwargs)
    assert ours == theirs
    assert ours_accepted == theirs_accepted == descriptors
    assert any(r["terminate"] and not r["last"] for r in ours)   # Some descriptors did end early.


def test_no_idle_cycle_between_descriptors():
    # Descriptors always waiting, requests always taken: LitePCIe's splitter idles once per descriptor.
    descriptors = [{"address": 0x1000*n, "length": 4*512, "irq_disable": 0, "last_disable": 0} for n in range(8)]
    kwargs = dict(seed=0, valid_probability=1.0, ready_probability=1.0)
    ours,   _, ours_idle   = run_splitter(DescriptorSplitter, descriptors, **kwargs)
    theirs, _, theirs_idle = run_splitter(LitePCIeDMADescriptorSplitter, descriptors, **kwargs)
    assert len(ours) == len(theirs) == 32
    assert ours_idle == []
    assert len(theirs_idle) == 7


def test_descriptor_leaves_the_table_with_its_last_request():
    # The table's loop status (read by the driver) must not count a descriptor whose requests are pending.
    dut = DescriptorSplitter(max_size=512, address_width=32)
    log = []
    def bench():
        yield dut.sink.valid.eq(1)
        yield dut.sink.length.eq(3*512)
        yield dut.source.ready.eq(1)
        for _ in range(3):
            yield
            log.append(((yield dut.source.last), (yield dut.sink.ready)))
    run_simulation(dut, bench())
    assert [ready for last, ready in log] == [last for last, ready in log]


def test_max_size_from_a_signal():
    # The reader's max_size is the PHY's negotiated MRRS, a signal.
    max_size = Signal(16, reset=4096)
    dut = DescriptorSplitter(max_size=max_size, address_width=32)
    lengths = []
    def bench():
        yield dut.sink.valid.eq(1)
        yield dut.sink.length.eq(3*4096 + 256)
        yield dut.source.ready.eq(1)
        yield
        for _ in range(4):
            lengths.append((yield dut.source.length))
            yield
    run_simulation(dut, bench())
    assert lengths == [4096, 4096, 4096, 256]


def test_litepcie_dma_is_built_with_it():
    assert litepcie_dma.LitePCIeDMADescriptorSplitter is LitePCIeDMADescriptorSplitter
    with litepcie_with_descriptor_splitter():
        assert issubclass(litepcie_dma.LitePCIeDMADescriptorSplitter, DescriptorSplitter)
    assert litepcie_dma.LitePCIeDMADescriptorSplitter is LitePCIeDMADescriptorSplitter


# Framed buffers (a writer's real-time and packets flows) -------------------------------------------

@pytest.mark.parametrize("seed, terminate_every", [(0, 0), (1, 3), (2, 2)])
def test_framed_data_from_byte_32_then_the_header_at_the_start(seed, terminate_every):
    """Each buffer's data from its byte 32, cut on max_size boundaries, up to its end or to the request that
    a `last` terminates; then one request of the header at the buffer's start, the descriptor's only last
    request (the writer's interrupt and end of buffer); `last_disable` ignored (the framer's `last` ends
    the buffer whatever the driver's descriptors say). Misaligned or header-only descriptors are refused."""
    rng = random.Random(seed)
    descriptors = random_descriptors(rng, 20, 512, address_step=4096)
    descriptors = [d for d in descriptors if d["length"] > 32]
    descriptors += [{"address": 0x1000 + 256, "length": 2048, "irq_disable": 0, "last_disable": 1},  # Misaligned.
                    {"address": 0x8000, "length": 32, "irq_disable": 0, "last_disable": 0}]          # Header only.
    refused = descriptors[-2:]
    requests, accepted, _ = run_splitter(DescriptorSplitter, descriptors, seed, 0.8, 0.7,
                                         terminate_every=terminate_every, framed=True)
    assert accepted == descriptors
    position = 0
    for d in descriptors:
        if d in refused:
            continue
        offset = 32
        while True:
            r = requests[position]
            position += 1
            assert (r["address"], r["first"], r["last"], r["last_disable"]) == \
                (d["address"] + offset, int(offset == 32), 0, 0), (r, d)
            offset += r["length"]
            assert (r["address"] + r["length"]) % 512 == 0 or offset == d["length"]
            if offset == d["length"] or r["terminate"]:
                break
        header = requests[position]
        position += 1
        assert (header["address"], header["length"], header["first"], header["last"]) == (d["address"], 32, 0, 1)
    assert position == len(requests)
    if terminate_every:
        assert any(r["terminate"] for r in requests)


# Descriptor checks --------------------------------------------------------------------------------

@pytest.mark.parametrize("max_size", [128, 512, 4096])
@pytest.mark.parametrize("seed, valid_probability, ready_probability", [(0, 1.0, 1.0), (1, 0.7, 0.6), (2, 1.0, 0.3)])
def test_no_request_crosses_4k_or_max_size_whatever_the_alignment(max_size, seed, valid_probability, ready_probability):
    rng = random.Random(seed)
    descriptors = random_descriptors(rng, 24, max_size, address_step=32)
    # Descriptors that start just below a 4 KiB boundary, and one that ends exactly on one.
    descriptors += [{"address": 0x1000*n - 32*(n + 1), "length": 4096 + 64*n, "irq_disable": 0, "last_disable": 0}
                    for n in range(1, 5)]
    descriptors.append({"address": 0x3000 - 512, "length": 512, "irq_disable": 0, "last_disable": 0})
    requests, accepted, idle = run_splitter(DescriptorSplitter, descriptors, seed, valid_probability,
        ready_probability, max_size=max_size)
    assert accepted == descriptors
    for r in requests:
        assert 0 < r["length"] <= max_size, r
        assert (r["address"] & 0xfff) + r["length"] <= 0x1000, r     # Never across 4 KiB.
        assert r["address"]//max_size == (r["address"] + r["length"] - 1)//max_size, r
    # Every byte of every descriptor once, in order, and nothing else.
    position = 0
    for d in descriptors:
        offset = 0
        while offset < d["length"]:
            r = requests[position]
            assert r["address"] == d["address"] + offset and r["first"] == int(offset == 0), (r, d)
            offset += r["length"]
            assert r["last"] == int(offset == d["length"]), (r, d)
            position += 1
    assert position == len(requests)
    if valid_probability == ready_probability == 1.0:
        assert idle == []   # Cutting on boundaries adds no bubble.


@pytest.mark.parametrize("word_bytes", [16, 32])
@pytest.mark.parametrize("ready_probability", [1.0, 0.5])
def test_zero_and_partial_word_lengths_are_refused(word_bytes, ready_probability):
    good = lambda n, length: {"address": 0x10000*n, "length": length, "irq_disable": 0, "last_disable": 0}
    descriptors = [good(0, 1024), good(1, 0), good(2, word_bytes + 4), good(3, 4), good(4, 3*word_bytes),
                   good(5, 1), good(6, 600*word_bytes - word_bytes//2), good(7, 2048)]
    refused = [d for d in descriptors if d["length"] == 0 or d["length"] % word_bytes]
    requests, accepted, _ = run_splitter(DescriptorSplitter, descriptors, 3, 0.8, ready_probability,
        word_bytes=word_bytes)
    assert accepted == descriptors                                    # Refused ones leave the table too...
    assert {r["address"] & ~0xffff for r in requests} == {d["address"] for d in descriptors if d not in refused}
    assert all(r["length"] % word_bytes == 0 for r in requests)      # ...and no request leaves for them.
    assert sum(r["length"] for r in requests) == sum(d["length"] for d in descriptors if d not in refused)


def test_refusals_are_signalled_once_per_descriptor():
    dut = DescriptorSplitter(max_size=512, address_width=32, word_bytes=16)
    log = []
    def bench():
        yield dut.source.ready.eq(1)
        for length in [0, 8, 16, 0]:
            yield dut.sink.valid.eq(1)
            yield dut.sink.length.eq(length)
            yield
            yield from wait_for(dut.sink.ready)
            log.append((length, (yield dut.refused), (yield dut.source.valid)))
        yield dut.sink.valid.eq(0)
    run_simulation(dut, bench())
    assert log == [(0, 1, 0), (8, 1, 0), (16, 0, 1), (0, 1, 0)]


@pytest.mark.parametrize("kwargs, message", [
    (dict(max_size=512, address_width=32, word_bytes=12), "DMA word must be 4 to 64 bytes, a power of two, not 12"),
    (dict(max_size=100, address_width=32), "largest request must be a power of two from 128 to 4096 bytes, not 100"),
])
def test_splitter_refuses_bad_parameters(kwargs, message):
    with pytest.raises(ValueError, match=message):
        DescriptorSplitter(**kwargs)
