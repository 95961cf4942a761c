# This file is part of hostlink.
# Copyright (c) 2026 hostlink developers
# SPDX-License-Identifier: BSD-2-Clause

"""The ARM's software in simulated time (sim/zynq/models/ps_costs.py) and seed 003's driver sweep
(sim/zynq/drivers.py), quick: the cost device's numbers agree between Python and C, the device tree holds the
device, the table is whole, and the sweep's calls are timed from the marks and transfers as documented. The
charges arriving from a running kernel are checked by test_zynq_linux.py's run."""

import os
import re

import pytest

from hostlink import protocol
from hostlink.sim.zynq.drivers import calls, crossover, predict, predicted_rows, ranking, sensitivity, DRIVERS
from hostlink.sim.zynq.linux import device_tree_source
from hostlink.sim.zynq.models.ps_costs import PS_COSTS, cost_table, costs_ns

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
HEADER = os.path.join(REPO, "software", "zynq", "hostlink_sim_cost.h")


def header_defines():
    text = open(HEADER).read()
    return {name: int(value, 0) for name, value in
            re.findall(r"^#define HOSTLINK_SIM_COST_(\w+)\s+(0x[0-9a-f]+|\d+)\b", text, re.M)}


def test_the_c_header_agrees_with_the_protocol():
    defines = header_defines()
    expected = {name.upper(): i for i, name in enumerate(protocol.SIM_COST_CATEGORIES)}
    expected.update(CATEGORIES=len(protocol.SIM_COST_CATEGORIES), SIZE=protocol.SIM_COST_SIZE,
                    LINE_BYTES=protocol.SIM_COST_LINE_BYTES, MARK_BEGIN=protocol.SIM_COST_MARK_BEGIN,
                    MARK_END=protocol.SIM_COST_MARK_END, **protocol.SIM_COST_REGISTERS)
    assert {name: defines.get(name) for name in expected} == expected
    assert f'"{protocol.SIM_COST_COMPATIBLE}"' in open(HEADER).read()


def test_the_device_tree_has_the_cost_device_beside_the_dma():
    tree = device_tree_source("/run/x/platform.sock")
    bus = tree[tree.index("platform: bus {"):tree.index("dma-client {")]
    assert 'compatible = "hostlink,sim-cost";' in bus and "reg = <0x10500000 0x100>;" in bus


def test_every_cost_has_a_figure_a_unit_and_a_source():
    assert [row[0] for row in cost_table()] == list(protocol.SIM_COST_CATEGORIES)
    for name, ns, unit, source, conversion in cost_table():
        assert ns > 0 and unit and conversion, name
        assert source.split(":")[0] in ("cited", "assumed", "fitted"), name
    # At most two of the paper's points are fitted.
    assert sum(PS_COSTS[name][2].startswith("fitted") for name in PS_COSTS) <= 2
    assert costs_ns(0) == {name: 0 for name in PS_COSTS}
    with pytest.raises(ValueError, match="must be a number >= 0, not -1"):
        costs_ns(-1)


def charges(**ns):
    return {name: float(ns.get(name, 0)) for name in protocol.SIM_COST_CATEGORIES}


def counts(**n):
    return {name: n.get(name, 0) for name in protocol.SIM_COST_CATEGORIES}


def bench_of(marks, transfers, steps_marks):
    return {"marks": marks, "transfers": transfers, "steps": [{"marks": m} for m in steps_marks]}


def test_a_call_is_timed_from_its_marks_and_its_last_mm2s_transfer():
    """TX: from the call's begin mark to the end of its last MM2S transfer; RX: to its end mark; the charges
    between the two marks are the call's. Marks of steps that print no call are not the sweep's."""
    begin, end = protocol.SIM_COST_MARK_BEGIN, protocol.SIM_COST_MARK_END
    marks = [[begin, 10, charges(), counts()], [end, 20, charges(), counts()],          # step 0: no call line
             [begin, 1000, charges(syscall=1000), counts(syscall=1)],
             [end, 9000, charges(syscall=1000, copy_cached=5000), counts(syscall=1, copy_cached=800)]]
    transfers = [{"channel": "mm2s", "start_ns": 15, "done_ns": 18},
                 {"channel": "s2mm", "start_ns": 1900, "done_ns": 3500},
                 {"channel": "mm2s", "start_ns": 2000, "done_ns": 3000},
                 {"channel": "mm2s", "start_ns": 4000, "done_ns": 5000}]
    steps = [{"command": "a", "output": "ok: something\n"},
             {"command": "b", "output": "call: driver=kernel size=800 mode=unique chunk=800 buffers=1 ok\n"}]
    [row] = calls(steps, bench_of(marks, transfers, [2, 4]))
    assert (row["driver"], row["size"], row["mode"], row["buffers"], row["ok"]) == ("kernel", 800, "unique", 1, True)
    assert (row["tx_ns"], row["rx_ns"]) == (4000, 8000)
    assert row["charged_ns"]["copy_cached"] == 5000 and row["charged_ns"]["syscall"] == 0
    assert row["counts"]["copy_cached"] == 800


def test_calls_that_the_marks_do_not_time_are_refused():
    steps = [{"command": "dma_user_test --sweep", "output": "call: driver=user_polling size=8 mode=unique chunk=8 "
              "buffers=1 ok\n"}]
    with pytest.raises(ValueError, match="printed 1 calls, but the cost device timed 0"):
        calls(steps, bench_of([], [], [0]))


def test_the_crossover_is_the_size_from_which_the_kernel_stays_faster():
    def row(driver, size, rx):
        return {"driver": driver, "size": size, "mode": "unique", "buffers": 1, "rx_ns": rx, "tx_ns": rx}
    rows = [row("kernel", 8, 50), row("user_polling", 8, 10), row("user_scheduled", 8, 20),
            row("kernel", 64, 15), row("user_polling", 64, 20), row("user_scheduled", 64, 30),
            row("kernel", 512, 40), row("user_polling", 512, 30), row("user_scheduled", 512, 50),
            row("kernel", 4096, 60), row("user_polling", 4096, 70), row("user_scheduled", 4096, 80)]
    assert crossover(rows) == 4096
    assert crossover([r for r in rows if r["size"] != 4096]) is None


def test_the_closed_form_ranks_the_drivers_at_roshambos_size():
    """The cost table's prediction at ~100 KB, which test_zynq_linux's run checks the simulation against: TX
    polling = scheduled (TX ends with MM2S, before any poll matters) < kernel; RX polling < scheduled."""
    costs = costs_ns()
    tx = {d: predict(d, 102400, costs)[0] for d in DRIVERS}
    rx = {d: predict(d, 102400, costs)[1] for d in DRIVERS}
    assert tx["user_polling"] == tx["user_scheduled"] < tx["kernel"]
    assert rx["user_polling"] < rx["user_scheduled"]
    with pytest.raises(ValueError, match="driver must be one of"):
        predict("dma_engine", 8, costs)


def test_the_ranking_reads_ties_within_one_per_cent():
    def row(driver, rx):
        return {"driver": driver, "size": 100, "mode": "unique", "buffers": 1, "rx_ns": rx, "tx_ns": rx}
    rows = [row("kernel", 1000), row("user_polling", 1005), row("user_scheduled", 2000)]
    assert ranking(rows, size=100, direction="rx") == "kernel = user_polling < user_scheduled"
    rows[1]["rx_ns"] = 1020
    assert ranking(rows, size=100, direction="rx") == "kernel < user_polling < user_scheduled"


def test_the_sensitivity_varies_each_assumed_cost_alone():
    """One row for the table, then two for each assumed cost (halved, doubled); the cited and fitted ones stay."""
    rows = sensitivity()
    assumed = [name for name in PS_COSTS if PS_COSTS[name][2].startswith("assumed")]
    assert rows[0][:2] == (None, 1.0)
    assert [(r[0], r[1]) for r in rows[1:]] == [(name, f) for name in assumed for f in (0.5, 2.0)]
    base = predicted_rows(costs_ns())
    assert rows[0][2:] == (ranking(base, direction="tx"), ranking(base, direction="rx"), crossover(base, "tx"),
                           crossover(base, "rx"))
    # Doubling the interrupt's cost cannot bring the kernel driver's crossover to a smaller size.
    interrupt = {r[1]: r[5] for r in rows if r[0] == "interrupt"}
    if rows[0][5] and interrupt[2.0]:
        assert interrupt[2.0] >= rows[0][5] >= interrupt[0.5]
