# This file is part of hostlink.
# Copyright (c) 2026 hostlink developers
# SPDX-License-Identifier: BSD-2-Clause

"""./sim.py zynq (sim/zynq/): the Zynq SoC's AXI DMA and its streams in Verilator against models of the PS.
Every byte of MM2S, S2MM and the loopback checked from 1 byte to several pages; with the PS's DDR at its default rate the
DMA moves a 64 KiB transfer at the port's 1.2 GB/s; a slow DDR taking one burst at a time slows it as it must;
bad arguments are refused in one line; the plot (--plot) draws every mode, the port's rate and the paper's
Table I."""

import pytest

from helpers import sim_py_refusal

from hostlink.sim.zynq.cli import run


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


@pytest.mark.parametrize("argv, message", [
    (["--sizes", "0"],          "size '0' must be a whole number of bytes >= 1"),
    (["--sizes", "64M"],        "sizes are 1 byte to 64 MiB - 1"),
    (["--modes", "c2h"],        "modes are among mm2s, s2mm, loopback"),
    (["--clock-mhz", "400"],    "the logic's clock must be 10 to 250 MHz"),
    (["--max-reads", "0"],      "--max-reads must be 1 to 64"),
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
