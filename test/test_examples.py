# This file is part of hostlink.
# Copyright (c) 2026 hostlink developers
# SPDX-License-Identifier: BSD-2-Clause

"""The example user cores (examples/) alone, in migen's simulator, against their own Python models: every
word, with idle cycles on the input and back-pressure on the output, each alone and both, with their own
back-pressure (throttle) on; nothing more comes out than went in."""

import random

import pytest

from migen import *

from hostlink.examples.accelerator import Accelerator

from benches.migen_streams import sample
from test_user_port import collect, drive, from_words, to_words

FLOWS = [pytest.param(flow, marks=pytest.mark.slow) for flow in [(1.0, 1.0), (0.4, 1.0), (1.0, 0.3)]] + [(0.5, 0.5)]


@pytest.mark.parametrize("throttle", [0, 3])
@pytest.mark.parametrize("flow", FLOWS, ids=["plain", "idle", "backpressure", "both"])
def test_accelerator_matches_its_model(flow, throttle):
    core = Accelerator(dma_data_width=64, sys_clk_freq=100e6, clock_domain="sys")
    settings = {"a": -7, "b": 0xbeef, "throttle": throttle}
    rng = random.Random(throttle)
    data = bytes(rng.randrange(256) for _ in range(core.data_width // 8 * 40))
    words = to_words(data, core.data_width)
    out = []

    def program():
        for name, value in settings.items():
            yield getattr(core, f"_{name}").storage.eq(value & 0xffff if name != "throttle" else value)
        for _ in range(4):   # Through the MultiRegs.
            yield

    def feed():
        yield from program()
        yield from drive(core.sink, words, random.Random(10), flow[0], [(i == 0, i == len(words) - 1)
                                                                       for i in range(len(words))])

    run_simulation(core, [feed(), collect(core.source, len(words), random.Random(11), flow[1], out)])
    assert from_words([w for w, _, _ in out], core.data_width) == Accelerator.model(data, settings)
    assert [(f, l) for _, f, l in out] == [(i == 0, i == len(words) - 1) for i in range(len(words))]


def test_accelerator_contract():
    core = Accelerator(dma_data_width=128, sys_clk_freq=150e6)
    assert (core.data_width, core.clock_domain, core.clk_freq) == (256, "accel", 90e6)
    assert set(Accelerator.SIM_SETTINGS) == {"a", "b", "throttle"}


# Streaming source ---------------------------------------------------------------------------------

from hostlink.examples.stream_source import CountingSource, RATE_ONE


@pytest.mark.parametrize("rate, ready_p", [(RATE_ONE, 1.0), (RATE_ONE // 4, 1.0), (RATE_ONE, 0.5)],
                         ids=["every-cycle", "quarter", "backpressure"])
def test_counting_source_counts_at_its_rate_and_counts_its_overruns(rate, ready_p):
    """Counts 0, 1, 2, ... across lanes and words at `rate` / 65536 words per cycle; where the port holds it
    back, the counts it replaced are missing and `overruns` says how many words."""
    core = CountingSource(dma_data_width=64, sys_clk_freq=100e6, clock_domain="sys")
    lanes = core.data_width // 32
    out, tail, cycles = [], [], 400
    result = {}

    def run():
        yield core.source.ready.eq(ready_p == 1.0)
        yield core._rate.storage.eq(rate)
        yield core._enable.storage.eq(1)
        yield core._enable.re.eq(1)
        yield
        yield core._enable.re.eq(0)
        yield from sample(core.source, cycles, random.Random(3), ready_p, out)
        # Stop (through the MultiReg), taking what comes meanwhile: no overrun after the last word seen.
        yield core._enable.storage.eq(0)
        yield core.source.ready.eq(1)
        for _ in range(6):
            yield
            if (yield core.source.valid):
                tail.append((yield core.source.data))
        result["overruns"] = yield core._overruns.status

    run_simulation(core, run())
    out_words = len(out)
    out += tail
    counts = [(word >> (32*lane)) & 0xffffffff for word in out for lane in range(lanes)]
    assert counts[0] % lanes == 0                      # From 0, or from where the first overruns end.
    assert all(b > a for a, b in zip(counts, counts[1:]))
    missing = (counts[-1] + 1 - len(counts)) // lanes
    if ready_p == 1.0:
        assert missing == 0 and result["overruns"] == 0
        assert abs(out_words - cycles * rate / RATE_ONE) <= 4
    else:
        assert missing > 0 and result["overruns"] == missing
    assert core.sink.ready.reset == 0   # (driven high: host data is taken and dropped)
