# This file is part of hostlink.
# Copyright (c) 2026 hostlink developers
# SPDX-License-Identifier: BSD-2-Clause

"""The free-running cycle counter of every PCIe SoC (cores/pcie/cycle_counter.py)."""

from migen import *

from hostlink.cores.pcie.cycle_counter import CycleCounter

from benches.migen_streams import pulse


def test_counts_every_cycle_and_latches_on_request():
    dut = CycleCounter(with_csr=False)
    seen = {}
    def bench():
        yield from pulse(dut.latch, after=10)
        yield
        first = yield dut.value
        for _ in range(37):
            yield
        assert (yield dut.value) == first   # Holds until the next latch.
        yield from pulse(dut.latch)
        yield
        seen["first"], seen["second"] = first, (yield dut.value)
    run_simulation(dut, bench())
    assert seen["first"] > 0
    assert seen["second"] - seen["first"] == 39   # 37 cycles waited, plus the two latch cycles.


def test_csr_latch_and_value():
    dut = CycleCounter()
    seen = []
    def bench():
        for _ in range(5):
            yield
        for _ in range(2):
            yield from dut._latch.write(1)
            yield
            seen.append((yield from dut._value.read()))
            for _ in range(20):
                yield
    run_simulation(dut, bench())
    assert seen[0] > 0 and seen[1] > seen[0]


def test_wraps_at_64_bits():
    dut = CycleCounter(with_csr=False)
    def bench():
        yield dut.count.eq(2**64 - 1)
        yield
        yield
        assert (yield dut.count) == 0
    run_simulation(dut, bench())


def test_every_pcie_soc_has_the_counter(tmp_path):
    from helpers import elaborate
    from hostlink.targets import zc706
    _, csr = elaborate(zc706.BaseSoC, tmp_path)
    registers = csr["csr_registers"]
    assert registers["cycles_value"]["size"] == 2   # 64 bits in 32-bit CSR words.
    assert "cycles_latch" in registers
