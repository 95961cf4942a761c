# This file is part of hostlink.
# Copyright (c) 2026 hostlink developers
# SPDX-License-Identifier: BSD-2-Clause

"""The ZC706 DMA SoC in cycle-level simulation against the host model (see sim/pcie/).

One simulator run per host profile carries many transfers (building the Verilator model and enumerating
take most of the time); each test then asserts on its own rows.
"""

import json

import pytest

from hostlink.sim.dma import make_jobs, parse_size, plot_throughput, main as dma_main
from hostlink.sim.pcie.models.host import host_profile
from hostlink.sim.pcie.driver import split_descriptors
from hostlink.sim.pcie.soc import get_board
from hostlink.cores.pcie.config import DMA_DESCRIPTOR_MAX_BYTES

from helpers import check_enumeration, sim_py_refusal


# One bus word (16 bytes on the 128-bit datapath) to 1 MiB, with sizes that are not powers of two.
# LitePCIe's DMA moves whole bus words: other lengths are refused (test_length_not_whole_bus_words).
LOOPBACK_SIZES = [16, 48, 4096 + 16, 12304, 65536 + 4096 + 16, 1 << 20]
SINGLE_SIZES   = [16, 4096 + 16, 65536 + 48]


def _jobs():
    jobs = []
    for size in LOOPBACK_SIZES:
        jobs.append({"kind": "bidir", "size": size, "channels": [0], "descriptor_size": 65536})
    for size in SINGLE_SIZES:
        for kind in ("h2c", "c2h"):
            jobs.append({"kind": kind, "size": size, "channels": [0], "descriptor_size": 65536})
    # Two FPGA -> host transfers in a row: the second must not see words left over from the first.
    jobs.append({"kind": "c2h", "size": 8192 + 16, "channels": [0], "descriptor_size": 65536})
    jobs.append({"kind": "c2h", "size": 8192 + 32, "channels": [0], "descriptor_size": 65536})
    # Many descriptors, an MSI asked for every third one (and the last).
    jobs.append({"kind": "bidir", "size": 40960, "channels": [0], "descriptor_size": 4096, "irq_every": 3})
    # Both channels at once, each with its own data.
    jobs.append({"kind": "bidir", "size": 32768 + 64, "channels": [0, 1], "descriptor_size": 8192})
    return jobs


@pytest.fixture(scope="module")
def default_run():
    from hostlink.sim.pcie.run import run_jobs
    profile = host_profile("default", seed=7)
    return run_jobs("zc706", _jobs(), profile, dma_channels=2)


@pytest.fixture(scope="module")
def worst_run():
    from hostlink.sim.pcie.run import run_jobs
    profile = host_profile("worst", seed=11)
    jobs = [{"kind": k, "size": 20000, "channels": [0], "descriptor_size": 8192} for k in ("h2c", "c2h", "bidir")]
    return run_jobs("zc706", jobs, profile, dma_channels=2)


def _rows(run, direction, size, channels=1):
    rows = [r for r in run["results"] if r["direction"] == direction and r["size"] == size and r["channels"] == channels]
    assert rows, f"no {direction} row for {size} bytes on {channels} channel(s)"
    return rows

# Enumeration and CSR access -----------------------------------------------------------------------

@pytest.mark.sim
def test_enumeration_and_csr_access(default_run):
    check_enumeration(default_run["enumeration"], "s7", gen=2, lanes=4)

# Data integrity -----------------------------------------------------------------------------------

@pytest.mark.sim
@pytest.mark.parametrize("size", LOOPBACK_SIZES)
def test_loopback_every_byte(default_run, size):
    (row,) = _rows(default_run, "bidir", size)
    assert not row["timed_out"]
    assert row["errors"] == 0
    # An MSI per 64 KiB descriptor, in each direction.
    assert row["msis"] == row["msis_expected"] == 2 * -(-size // 65536)


@pytest.mark.sim
@pytest.mark.parametrize("size", SINGLE_SIZES)
@pytest.mark.parametrize("direction", ["h2c", "c2h"])
def test_single_direction(default_run, size, direction):
    (row,) = _rows(default_run, direction, size)
    assert not row["timed_out"]
    assert row["errors"] == 0
    assert row["msis"] == row["msis_expected"] == -(-size // 65536)
    assert row["cycles"] > 0


@pytest.mark.sim
@pytest.mark.parametrize("size", [8192 + 16, 8192 + 32])
def test_back_to_back_c2h_transfers(default_run, size):
    (row,) = _rows(default_run, "c2h", size)
    assert row["errors"] == 0


@pytest.mark.sim
def test_msi_per_descriptor_that_asks(default_run):
    (row,) = _rows(default_run, "bidir", 40960)
    assert row["errors"] == 0
    # 10 descriptors per direction, MSI on the 3rd, 6th, 9th and the last: 4 per direction.
    assert row["msis_expected"] == 8
    assert row["msis"] == 8


@pytest.mark.sim
def test_two_channels_at_once(default_run):
    (row,) = _rows(default_run, "bidir", 32768 + 64, channels=2)
    assert row["errors"] == 0
    assert row["bytes"] == 2 * (32768 + 64)


@pytest.mark.sim
@pytest.mark.parametrize("direction", ["h2c", "c2h", "bidir"])
def test_worst_case_host_64_byte_completions(worst_run, direction):
    (row,) = _rows(worst_run, direction, 20000)
    assert worst_run["host"]["completion_size"] == "64"
    assert row["errors"] == 0
    assert not row["timed_out"]

# Bad input ----------------------------------------------------------------------------------------

@pytest.mark.parametrize("length", [0, DMA_DESCRIPTOR_MAX_BYTES + 1])
def test_dma_length_out_of_range(length):
    with pytest.raises(ValueError, match=f"DMA descriptor length must be from 1 to {DMA_DESCRIPTOR_MAX_BYTES} bytes, not {length}"):
        split_descriptors(0x1000, length, descriptor_size=length)


@pytest.mark.parametrize("length", [4100, 1, 24])
def test_length_not_whole_bus_words(length):
    with pytest.raises(ValueError, match=f"must be a multiple of 16 bytes \\(the 128-bit datapath\\), not {length}"):
        split_descriptors(0x1000, length, descriptor_size=65536, granularity=16)
    with pytest.raises(ValueError, match="multiple of 16 bytes"):
        make_jobs([length], ["bidir"], 1, 65536, granularity=16)


def test_size_parsing():
    assert parse_size("4K") == 4096
    assert parse_size("1M") == 1 << 20
    assert parse_size("100") == 100
    for bad in ["0", "-4K", "1.5", "four"]:
        with pytest.raises(Exception, match=repr(bad)):
            parse_size(bad)


def test_transfer_needing_oversize_descriptors_is_refused():
    with pytest.raises(ValueError, match="over the 16777215-byte limit"):
        make_jobs([256 * DMA_DESCRIPTOR_MAX_BYTES + 256], ["h2c"], 1, 65536)


def test_unknown_board_is_refused():
    with pytest.raises(ValueError, match="board must be one of .*, not 'zc999'"):
        get_board("zc999")


@pytest.mark.parametrize("args, message", [
    (["--board", "zc999"],                     "board must be one of"),
    (["--sizes", "0"],                         "must be a whole number of bytes >= 1"),
    (["--sizes", "4100"],                      "must be a multiple of 16 bytes"),
    (["--channels", "3"],                      "channels running at once must be from 1 to 2, not 3"),
    (["--dma-channels", "9"],                  "DMA channel count must be an integer from 1 to 8, not 9"),
    (["--mps", "300"],                         "max payload size must be a power of two"),
    (["--directions", "sideways"],             "direction must be among h2c, c2h, bidir"),
    (["--channels", "1,x"],                    "channel counts must be integers"),
    (["--sweep", "--channels", "3", "--sizes", "4K"], "does not split evenly across 3 channels"),
    (["--sweep", "--sweep-latency"],           "--sweep and --sweep-latency are two different runs"),
    (["--latencies", "500"],                   "--latencies and --mrrs-list go with --sweep-latency"),
    (["--sweep-latency", "--latencies", "-5"], "read latencies must be from 0 to 100000 ns"),
    (["--sweep-latency", "--latencies", "x"],  "read latencies are numbers of ns"),
    (["--sweep-latency", "--mrrs-list", "100"], "each MRRS must be a power of two from 128 to 4096"),
    (["--sweep-latency", "--mrrs", "256"],     "use --mrrs-list and --latencies"),
    (["--sweep-latency", "--sizes", "4K,8K"],  "runs one size on one channel"),
])
def test_cli_rejects_bad_arguments(args, message):
    assert message in sim_py_refusal("dma", *args)


def test_sweep_jobs_split_each_total_across_the_channels():
    jobs = make_jobs([4096, 65536], ["h2c", "c2h"], [1, 2, 4], 65536, granularity=16, split=True)
    assert [(j["size"], len(j["channels"]), j["kind"]) for j in jobs[:6]] == [
        (4096, 1, "h2c"), (4096, 1, "c2h"), (2048, 2, "h2c"), (2048, 2, "c2h"), (1024, 4, "h2c"), (1024, 4, "c2h")]
    assert {j["size"] * len(j["channels"]) for j in jobs} == {4096, 65536}


def test_plot_is_written(tmp_path):
    results = {"board": "vc709", "sys_clk_hz": 250e6, "host": host_profile("default").as_dict(), "results": [
        {"direction": d, "channels": c, "bytes": b, "cycles": 1000, "gbytes_per_s": 1.0 + c + b / 2**20}
        for d in ("h2c", "c2h") for c in (1, 2) for b in (4096, 2**20)]}
    path = tmp_path / "sweep.png"
    plot_throughput(results, str(path))
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_latency_sweep_table_and_plot(tmp_path):
    from hostlink.sim.pcie import latency_sweep
    calls = []

    def run_one(profile):
        calls.append((profile.max_read_request, profile.read_latency_ns))
        rate = min(1.8, profile.max_read_request*16 / profile.read_latency_ns)
        return {"sys_clk_hz": 150e6, "host": profile.as_dict(), "results": [
            {"direction": "h2c", "bytes": 262144, "cycles": 1000, "gbytes_per_s": rate, "errors": 0}]}

    rows = latency_sweep.sweep(run_one, lambda m, l: host_profile("default", max_read_request=m,
        read_latency_ns=l), [500.0, 2000.0], [128, 256])
    assert calls == [(128, 500.0), (128, 2000.0), (256, 500.0), (256, 2000.0)]
    table = latency_sweep.format_table("zc706", rows)
    assert table.splitlines()[1].split() == ["latency", "ns", "MRRS", "128", "MRRS", "256"]
    assert table.splitlines()[3].split() == ["2000", "1.024", "1.800"] and table.endswith("errors: 0")
    path = tmp_path / "latency.png"
    latency_sweep.plot("zc706", rows, str(path))
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.mark.sim
def test_latency_sweep_runs_each_profile(tmp_path):
    """Two latencies at MRRS 256 on the ZC706: one h2c row each, whole, 0 errors; the longer round trip
    moves the same bytes in more cycles once the reads in flight stop covering it."""
    path = tmp_path / "sweep.json"
    assert dma_main(["--board", "zc706", "--sweep-latency", "--latencies", "500,3000", "--mrrs-list", "256",
        "--sizes", "32K", "--json", str(path)]) == 0
    rows = json.loads(path.read_text())["rows"]
    assert [(r["max_read_request"], r["read_latency_ns"], r["direction"], r["bytes"]) for r in rows] == [
        (256, 500.0, "h2c", 32768), (256, 3000.0, "h2c", 32768)]
    assert all(r["errors"] == 0 and r["host"]["max_read_request"] == 256 for r in rows)
    assert rows[1]["cycles"] > rows[0]["cycles"]


@pytest.mark.parametrize("address, length, limit, bad", [
    (0x0000, 256, 256, False), (0x0f00, 256, 256, False),   # Ends exactly on the 4 KiB boundary.
    (0x0f20, 256, 256, True),                                # Crosses it.
    (0x1000, 512, 256, True),                                # Over the limit (MPS or MRRS).
    (0x1ffc, 4, 128, False), (0x1ffc, 8, 128, True), (0x3000, 4096, 4096, False),
])
def test_host_flags_requests_over_the_limit_or_across_4k(address, length, limit, bad):
    """The host model's check of every read (MRRS) and every write (MPS) the device makes."""
    from hostlink.sim.pcie.models.host import breaks_limits
    assert breaks_limits(address, length, limit) is bad
