# This file is part of hostlink.
# Copyright (c) 2026 hostlink developers
# SPDX-License-Identifier: BSD-2-Clause

"""DMA pattern generator and checker (cores/pcie/dma_pattern.py), cycle by cycle in migen's simulator."""

import random

import pytest

from migen import *

from hostlink.cores.pcie.dma_pattern import DMAPatternGenerator, DMAPatternChecker

from benches.migen_streams import sample


def _run_generator(data_width, length, ready_probability, cycles=200, seed=1):
    dut = DMAPatternGenerator(data_width, with_csr=False)
    rng = random.Random(seed)
    beats = []
    def bench():
        yield dut.length.eq(length)
        yield dut.enable.eq(1)
        yield from sample(dut.source, cycles, rng, ready_probability, beats)
    run_simulation(dut, bench())
    words = data_width // 32
    return [(b >> (32*i)) & 0xffffffff for b in beats for i in range(words)]


@pytest.mark.parametrize("data_width", [64, 128, 256])
@pytest.mark.parametrize("ready_probability", [1.0, 0.5])
def test_generator_sends_exactly_length_words_counting_from_zero(data_width, ready_probability):
    words = _run_generator(data_width, length=8 * (data_width // 32), ready_probability=ready_probability)
    assert words == list(range(8 * (data_width // 32)))


def test_generator_without_length_runs_on():
    words = _run_generator(128, length=0, ready_probability=1.0, cycles=50)
    assert len(words) >= 4 * 45
    assert words == list(range(len(words)))


def test_checker_counts_words_and_mismatches():
    dut = DMAPatternChecker(128, with_csr=False)
    beats = [[0, 1, 2, 3], [4, 5, 6, 7], [8, 99, 10, 11], [12, 13, 14, 15]]
    def bench():
        yield dut.clear.eq(1)
        yield
        yield dut.clear.eq(0)
        for i, beat in enumerate(beats):
            yield dut.sink.valid.eq(1)
            yield dut.sink.data.eq(sum(w << (32*k) for k, w in enumerate(beat)))
            yield
            yield dut.sink.valid.eq(0)   # Idle cycles between beats change nothing.
            yield
        yield
        assert (yield dut.words) == 16
        assert (yield dut.errors) == 1
    run_simulation(dut, bench())


@pytest.mark.parametrize("length", [0, 8, 10, 12])
def test_checker_judges_only_the_first_length_words(length):
    # Loop mode: the reader goes on into buffers software has not written; only the transfer is judged.
    dut = DMAPatternChecker(128, with_csr=False)
    good  = [[0, 1, 2, 3], [4, 5, 6, 7], [8, 99, 10, 11]]
    stale = [[7, 7, 7, 7], [0, 0, 0, 0]]
    def bench():
        yield dut.length.eq(length)
        yield dut.clear.eq(1)
        yield
        yield dut.clear.eq(0)
        for beat in good + stale + [[2**32 - 1] * 4] * 3:
            yield dut.sink.valid.eq(1)
            yield dut.sink.data.eq(sum(w << (32*k) for k, w in enumerate(beat)))
            yield
        yield dut.sink.valid.eq(0)
        yield
        assert (yield dut.words) == 32
        # 8 words: the first two beats, clean; 10 and 12: the third beat whole, with its one wrong word.
        assert (yield dut.errors) == {0: 1 + 4 + 4 + 12, 8: 0, 10: 1, 12: 1}[length]
    run_simulation(dut, bench())


@pytest.mark.parametrize("cls", [DMAPatternGenerator, DMAPatternChecker])
def test_bad_width_is_refused(cls):
    with pytest.raises(ValueError, match="must be 64, 128, 256 or 512 bits, not 96"):
        cls(96)
