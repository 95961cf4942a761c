# This file is part of hostlink.
# Copyright (c) 2026 hostlink developers
# SPDX-License-Identifier: BSD-2-Clause

"""./sim.py zynq (sim/zynq/): the Zynq SoC's AXI DMA and its streams in Verilator against models of the PS.
Every byte of MM2S, S2MM and the loopback checked from 1 byte to several pages; with the PS's DDR at its default rate the
DMA moves a 64 KiB transfer at the port's 1.2 GB/s; a slow DDR taking one burst at a time slows it as it must;
a DDR narrower than both ways of the port makes MM2S and S2MM share it in loopback; the DDR's arbiter (one budget
for reads and writes, turnarounds, UG585's policy) on its own; bad arguments are refused in one line; the plot
(--plot) draws every mode, the port's rate and the paper's Table I."""

import pytest

from helpers import sim_py_refusal

from hostlink.sim.zynq.cli import run
from hostlink.sim.zynq.models.ddr import DDRArbiter
from hostlink.sim.zynq.models.ps_model import DDR_KEYS, PS_MODEL

BURST = 128      # Bytes: 16 beats of the HP port's 8.


def arbiter(**changes):
    figures = {key.removeprefix("ddr_"): PS_MODEL[key] for key in DDR_KEYS} | changes
    return DDRArbiter(**figures)


def serve(ddr, limit=100_000):
    """Grants every burst waiting, each once the last has ended (as PSMemory asks); returns the grants."""
    grants = []
    while (grant := ddr.grant(max(ddr.free_ns, 0.0))) is not None:
        grants.append(grant)
        assert len(grants) < limit
    return grants


def check_one_at_a_time_in_order(ddr, grants):
    """One burst at a time, each for its bytes at its direction's rate, a turnaround's idle time before each switch
    that waited, and each direction's bursts in the order they came."""
    ns = {"read": BURST * 1e9 / (PS_MODEL["ddr_bytes_per_s"] * PS_MODEL["ddr_read_efficiency"]),
          "write": BURST * 1e9 / (PS_MODEL["ddr_bytes_per_s"] * PS_MODEL["ddr_write_efficiency"])}
    turnaround = {"write": PS_MODEL["ddr_read_to_write_ns"], "read": PS_MODEL["ddr_write_to_read_ns"]}
    previous = None
    for grant in grants:
        assert grant.end_ns - grant.start_ns == pytest.approx(ns[grant.direction])
        if previous is not None:
            assert grant.switched == (grant.direction != previous.direction)
            assert grant.start_ns == pytest.approx(previous.end_ns + (turnaround[grant.direction] if grant.switched else 0))
        previous = grant
    for direction in ("read", "write"):
        tags = [grant.tag for grant in grants if grant.direction == direction]
        assert tags == sorted(tags)


def test_each_direction_alone_has_the_ddr_at_its_efficiency():
    for direction, efficiency in (("read", "ddr_read_efficiency"), ("write", "ddr_write_efficiency")):
        ddr = arbiter()
        for n in range(100):
            ddr.push(direction, BURST, 0.0, n)
        grants = serve(ddr)
        check_one_at_a_time_in_order(ddr, grants)
        assert [grant.tag for grant in grants] == list(range(100))
        mbytes_per_s = 100 * BURST / grants[-1].end_ns * 1e3
        assert mbytes_per_s == pytest.approx(PS_MODEL["ddr_bytes_per_s"] / 1e6 * PS_MODEL[efficiency])
        assert ddr.switches == (direction == "write") and ddr.critical_switches == 0


def test_reads_and_writes_share_one_budget_and_take_turns_as_ug585s_ddrc():
    ddr = arbiter()
    for n in range(400):
        ddr.push("read", BURST, 0.0, n)
        ddr.push("write", BURST, 0.0, n)
    grants = serve(ddr)
    check_one_at_a_time_in_order(ddr, grants)
    assert len(grants) == 800 and ddr.bytes == {"read": 400 * BURST, "write": 400 * BURST}
    # Reads first (the DDRC's default state), until the writes have waited the starvation time; then turns of
    # `run_bursts` each way, each direction taking the DDR back once the other's run is over.
    first_write = next(i for i, grant in enumerate(grants) if grant.direction == "write")
    assert grants[first_write].start_ns >= PS_MODEL["ddr_starve_ns"] > grants[first_write - 1].start_ns
    runs = [1]
    for previous, grant in zip(grants[first_write:], grants[first_write + 1:]):
        runs[-1:] = [runs[-1] + 1] if grant.direction == previous.direction else [runs[-1], 1]
    assert set(runs[:-2]) == {PS_MODEL["ddr_run_bursts"]}
    # Over any window of whole turns, reads and writes together never pass the DDR's peak; with 8 bursts a turn
    # they reach 89 % of it, beside UG585's 87 % for sequential reads and writes together.
    peak = PS_MODEL["ddr_bytes_per_s"] / 1e9
    for start in range(len(grants)):
        for end in range(start + 1, min(len(grants), start + 40)):
            window_ns = grants[end].end_ns - grants[start].start_ns
            assert (end - start + 1) * BURST <= peak * window_ns
    turns = grants[first_write:first_write + 160]
    share = len(turns) * BURST / (turns[-1].end_ns - turns[0].start_ns) / peak
    assert 0.85 <= share <= 0.90, share


def test_a_switch_costs_the_turnaround_unless_the_ddr_was_idle_that_long():
    turnaround = {"write": PS_MODEL["ddr_read_to_write_ns"], "read": PS_MODEL["ddr_write_to_read_ns"]}
    for first, second in (("read", "write"), ("write", "read")):
        ddr = arbiter()
        ddr.push(first, BURST, 0.0)
        one = ddr.grant(0.0)
        ddr.push(second, BURST, one.end_ns)        # Comes as the first ends: the bus turns around.
        two = ddr.grant(one.end_ns)
        assert two.switched and two.start_ns == pytest.approx(one.end_ns + turnaround[second])
        ddr.push(first, BURST, two.end_ns + 100)   # Comes 100 ns after: the turnaround is behind it.
        three = ddr.grant(two.end_ns + 100)
        assert three.switched and three.start_ns == pytest.approx(two.end_ns + 100)
        assert ddr.grant(three.end_ns) is None and ddr.switches == 2 + (first == "write")


@pytest.mark.parametrize("change, message", [
    ({"bytes_per_s": 0},             "the DDR's rate must be a positive number of bytes per second, not 0"),
    ({"read_efficiency": 1.5},       "read_efficiency must be above 0 and at most 1, not 1.5"),
    ({"write_efficiency": 0},        "write_efficiency must be above 0 and at most 1, not 0"),
    ({"write_to_read_ns": -1},       "write_to_read_ns must be 0 or more, not -1"),
    ({"starve_ns": 0},               "starve_ns must be positive, not 0"),
    ({"run_bursts": 2.5},            "run_bursts must be a positive integer, not 2.5"),
])
def test_the_ddrs_bad_parameters_are_refused(change, message):
    with pytest.raises(ValueError) as error:
        arbiter(**change)
    assert str(error.value) == message


@pytest.mark.sim
def test_every_byte_in_every_mode_and_the_ports_rate():
    results = run([8, 104, 4104, 65536], ["mm2s", "s2mm", "loopback"])
    rows = {(row["mode"], row["size"]): row for row in results["results"]}
    assert len(rows) == 12 and all(row["errors"] == 0 for row in rows.values()), results
    for mode in ("mm2s", "s2mm", "loopback"):
        # 8 bytes a cycle at 150 MHz once the bursts cover the DDR's latency: within 1 % of 1,200 MB/s.
        assert rows[(mode, 65536)]["mbytes_per_s"] >= 1188, rows[(mode, 65536)]
        assert rows[(mode, 8)]["cycles"] < rows[(mode, 4104)]["cycles"] < rows[(mode, 65536)]["cycles"]
    assert results["most_reads_in_flight"] > 1
    # From memory, transfers that end inside a beat (S2MM's generator gives whole beats).
    results = run([1, 100], ["mm2s", "loopback"])
    assert len(results["results"]) == 4 and all(row["errors"] == 0 for row in results["results"]), results


@pytest.mark.sim
def test_a_ddr_taking_one_slow_burst_at_a_time_limits_the_dma():
    # One read burst in flight, 1 us to its first beat: 128 bytes per 1.1 us at best.
    results = run([16384], ["mm2s"], read_latency_ns=1000, max_reads=1)
    row = results["results"][0]
    assert row["errors"] == 0 and row["mbytes_per_s"] < 128 / 1.0e-6 / 1e6
    assert results["most_reads_in_flight"] == 1


@pytest.mark.sim
def test_a_ddr_narrower_than_both_ways_makes_them_compete_in_loopback():
    # 1,600 MB/s: MM2S alone is still the port's (1,552 MB/s of reads), the loopback's reads and writes share it.
    results = run([65536], ["mm2s", "loopback"], ddr_bytes_per_s=1600e6)
    rows = {row["mode"]: row for row in results["results"]}
    assert all(row["errors"] == 0 for row in rows.values()), results
    assert rows["mm2s"]["mbytes_per_s"] >= 1188, rows
    # Each byte crosses the DDR twice in loopback: never more than its peak, and not far below what UG585's mixed
    # efficiency (87 %) and the turnarounds leave.
    both = 2 * rows["loopback"]["mbytes_per_s"]
    assert 0.75 * 1600 <= both <= 1600, rows
    assert results["ddr_switches"] > 100, results


@pytest.mark.parametrize("argv, message", [
    (["--sizes", "0"],          "size '0' must be a whole number of bytes >= 1"),
    (["--sizes", "64M"],        "sizes are 1 byte to 64 MiB - 1"),
    (["--modes", "c2h"],        "modes are among mm2s, s2mm, loopback"),
    (["--clock-mhz", "400"],    "the logic's clock must be 10 to 250 MHz"),
    (["--max-reads", "0"],      "--max-reads must be 1 to 64"),
    (["--ddr-mbytes", "50"],    "--ddr-mbytes must be 100 to 100000"),
    (["--sizes", "100"],        "sizes that are multiples of 8 with --modes s2mm"),
])
def test_bad_arguments_are_refused_in_one_line(argv, message):
    stderr = sim_py_refusal("zynq", *argv)
    assert message in stderr.strip().splitlines()[-1], stderr


def test_the_plot_has_every_mode_the_port_and_the_papers_table(tmp_path):
    from hostlink.sim.zynq.cli import plot
    rows = [{"mode": mode, "size": size, "cycles": size // 8 + 30, "mbytes_per_s": 1200.0 * size / (size + 240),
             "errors": 0} for mode in ("mm2s", "s2mm", "loopback") for size in (8, 4096, 1 << 20)]
    path = plot({"results": rows, "clock_hz": 150e6, "ps_model": {"rate_bytes_per_s": 1200e6}}, str(tmp_path / "z.png"))
    assert open(path, "rb").read(8) == b"\x89PNG\r\n\x1a\n"
