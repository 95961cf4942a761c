# This file is part of hostlink.
# Copyright (c) 2026 hostlink developers
# SPDX-License-Identifier: BSD-2-Clause

"""The compiled fast path (sim/pcie/fast/, `./sim.py dma --fast`) against the reference path, which judges it.

Issue 48: every PCIe board (the ZC706 and KC705's pcie_7x, the VC709's pcie3_7x) runs on the fast path by default.
The same bench and jobs run on both paths; the fast path must move the same data with the same errors and MSIs, in cycles
within 1 % of the reference at 1 MiB and 3 % at 64 KiB (doc/pcie_sim.md explains each difference over
0.1 %).
"""

import pytest

from hostlink.sim.dma import board_profile_defaults, make_jobs
from hostlink.sim.pcie.models.host import host_profile
from hostlink.sim.pcie.soc import get_board

from hostlink.sim.pcie.fast.agreement import MATRIX, SKIPPED, differences, run_both
from hostlink.sim.pcie.fast.run import check_fast

FAST_BOARDS = ("zc706", "kc705", "vc709")


@pytest.mark.sim
@pytest.mark.parametrize("board, profile_name", [(b, p) for b in FAST_BOARDS for p in MATRIX
                                                 if (b, p) not in SKIPPED])
def test_the_fast_path_agrees_with_the_reference(board, profile_name):
    fast, reference = run_both(board, profile_name)
    assert differences(fast, reference) == []
    assert fast["enumeration"] == reference["enumeration"]
    assert len(fast["results"]) == len(reference["results"]) == 2 * 3
    for f, r in zip(fast["results"], reference["results"]):
        what = (board, profile_name, r["direction"], r["size"])
        assert (f["direction"], f["size"]) == (r["direction"], r["size"])
        assert f["errors"] == r["errors"] == 0, what
        assert f["msis"] == r["msis"] == r["msis_expected"], what
    assert fast["host_reads"]["served"] == reference["host_reads"]["served"]
    assert fast["host_reads"]["bad"] == reference["host_reads"]["bad"] == 0
    assert fast["completion_space"]["dropped"] == reference["completion_space"]["dropped"] == 0


@pytest.mark.sim
@pytest.mark.parametrize("board", FAST_BOARDS)
@pytest.mark.parametrize("profile_name", ["worst", "ideal"])
def test_the_fast_path_moves_every_byte_under_other_hosts(board, profile_name):
    """64-byte completions only, or no stalls and no reordering: every row whole, every MSI, no read or
    write beyond the host's limits."""
    from hostlink.sim.pcie.run import run_jobs
    profile = host_profile(profile_name, **board_profile_defaults(get_board(board)))
    jobs = make_jobs([65536], ["h2c", "c2h", "bidir"], 1, 16384, granularity=get_board(board).data_width // 8)
    run = run_jobs(board, jobs, profile, dma_channels=2, fast=True)
    for row in run["results"]:
        assert row["errors"] == 0 and not row["timed_out"], row
        assert row["msis"] == row["msis_expected"] == (8 if row["direction"] == "bidir" else 4), row
    assert run["host_reads"]["bad"] == 0 and run["host_writes"]["bad"] == 0


def _board_of_another_block():
    from dataclasses import replace
    return replace(get_board("vc709"), name="newboard", device="other")


@pytest.mark.parametrize("board, options, message", [
    ("other", {}, "--fast runs the pcie_7x (ZC706, KC705) and pcie3_7x (VC709) blocks, not the newboard's"),
    ("zc706", {"reference": True}, "--fast and --reference are two ways to run the same model: choose one"),
    ("kc705", {"profile_streams": ["pcie_s7_m_axis_rx_tvalid"]}, "--profile-streams reads the SoC's signals by "
        "name, which only the reference path shows: leave out --fast"),
])
def test_what_the_fast_path_cannot_run_is_refused_in_one_line(board, options, message):
    with pytest.raises(ValueError) as error:
        check_fast(_board_of_another_block() if board == "other" else get_board(board), **options)
    assert str(error.value) == message


def test_sim_py_refuses_fast_where_it_cannot_run(capsys):
    from hostlink.sim.dma import main
    with pytest.raises(SystemExit):
        main(["--board", "vc709", "--fast", "--profile-streams", "pcie3_7x_m_axis_rc_tvalid", "--sizes", "64K"])
    assert "--profile-streams reads the SoC's signals by name, which only the reference path shows" in \
        capsys.readouterr().err


@pytest.mark.parametrize("board, reference, expected", [
    ("zc706", False, True), ("kc705", False, True), ("vc709", False, True), ("vc709", True, False)])
def test_the_fast_path_is_the_default_where_it_runs(board, reference, expected):
    from hostlink.sim.pcie.fast.run import fast_path_runs
    assert fast_path_runs(get_board(board), reference=reference) == expected
    assert not fast_path_runs(get_board(board), profile_streams=["x"])


def _run(cycles, size=65536, **row):
    return {"enumeration": {"vendor_id": 0x10ee}, "results": [dict({"direction": "h2c", "size": size,
        "bytes": size, "cycles": cycles, "errors": 0, "msis": 4, "gbytes_per_s": 1.0}, **row)]}


@pytest.mark.parametrize("size, cycles, agree", [
    (65536, 10290, True), (65536, 9710, True), (65536, 10310, False), (65536, 9690, False),
    (1048576, 10090, True), (1048576, 10110, False), (1048576, 9890, False)])
def test_agreement_holds_cycles_to_the_rows_tolerance(size, cycles, agree):
    assert (differences(_run(cycles, size), _run(10000, size)) == []) == agree


@pytest.mark.parametrize("change", [{"errors": 1}, {"msis": 3}, {"msi_ahead_of_data_ns": 5.0}])
def test_agreement_requires_the_same_counts_and_no_msi_ahead_of_its_data(change):
    reference = _run(10000, msi_ahead_of_data_ns=-20.0)
    fast = _run(10000, **dict({"msi_ahead_of_data_ns": -35.0}, **change))
    assert differences(_run(10000, msi_ahead_of_data_ns=-35.0), reference) == []
    assert differences(fast, reference) != []


def test_agreement_requires_the_same_enumeration():
    fast = _run(10000)
    fast["enumeration"]["vendor_id"] = 0x1234
    assert differences(fast, _run(10000)) == [("run.enumeration.vendor_id", 0x1234, 0x10ee)]


def test_a_job_that_reads_signals_by_name_runs_on_the_reference():
    """The DRAM bring-up's DFI monitor reads the SoC's signals by name: such a run takes the reference path
    by default, and asking for the fast path is refused in one line."""
    from hostlink.sim.pcie.fast.run import fast_path_runs
    jobs = [{"target": "dram", "kind": "bringup"}]
    assert not fast_path_runs(get_board("zc706"), jobs=jobs)
    assert fast_path_runs(get_board("zc706"), jobs=[{"kind": "h2c"}])
    with pytest.raises(ValueError, match="a 'bringup' job reads the SoC's signals by name"):
        check_fast(get_board("zc706"), jobs=jobs)


def test_the_fast_path_knows_every_fault_the_host_model_injects():
    """A fault added to host.py's FAULTS must be modelled in s7_fast.cpp too; one it does not know is
    refused in one line, never run as another."""
    from hostlink.sim.pcie.fast.run import FAULT_KINDS, FastHost
    from hostlink.sim.pcie.models.host import FAULTS
    assert set(FAULT_KINDS) == set(FAULTS)
    with pytest.raises(ValueError, match="fault must be one of timeout, ur, ca, poisoned, long, stray, foreign, "
                                         "not 'nosuch'"):
        FastHost.arm_fault(FastHost.__new__(FastHost), "nosuch", 0, 64)


def test_byte_accesses_become_dword_accesses_with_their_byte_enables():
    """User-Mode Linux's bridge reads and writes BAR and configuration bytes; the fast path's host moves
    whole DWORDs with byte enables (a write), and takes the bytes asked for out of the DWORDs it read."""
    from hostlink.sim.pcie.fast.run import bytes_of_dwords, dword_pieces
    assert list(dword_pieces(6, b"\x01\x02\x03\x04\x05")) == [(4, 0x02010000, 0b1100), (8, 0x050403, 0b0111)]
    assert list(dword_pieces(8, (0x12345678).to_bytes(4, "little"))) == [(8, 0x12345678, 0xf)]
    assert bytes_of_dwords(6, 3, [0x44332211, 0x88776655]) == b"\x33\x44\x55"
    assert bytes_of_dwords(4, 4, [0x12345678]) == (0x12345678).to_bytes(4, "little")
