# This file is part of hostlink.
# Copyright (c) 2026 hostlink developers
# SPDX-License-Identifier: BSD-2-Clause

"""PCIe faults on every PCIe board's SoC, injected through the simulated host and hard block.

One simulator run per board carries every fault (sim/pcie/fault_jobs.py `run_fault_job`): the fault on channel
0's transfer (channel 1 for `ca`) while the other channel moves clean data, then the driver's disable and a
clean transfer on the same channel. Each test asserts the fault's counters in the `pcie_faults` CSR block,
the flagged transfer (its data stops at the fault: no word passed on as good that was not), the other
channel's transfer, the hard block's error reports, and the clean transfer after it.
"""

import pytest

from hostlink.sim.pcie.models.host import host_profile, FAULTS
from hostlink.sim.dma import board_profile_defaults
from hostlink.sim.pcie.soc import get_board
from hostlink.targets import boards as registry

pytestmark = pytest.mark.sim

BOARDS  = registry.PCIE_BOARDS
SIZE    = 16384              # Bytes per transfer: several reads in flight when the fault hits.
STOP_SIZE = 256 << 10        # The transfer stopped mid-way (test_a_channel_stopped_mid_transfer_harms_nothing).
FLAGGED = ["timeout", "ur", "ca", "poisoned", "long"]   # Faults that end a read: the transfer is flagged.
DROPPED = ["stray", "foreign"]                          # Faults dropped without harm: the transfer is whole.
CHANNEL = {"ca": 1}                                     # Faulty channel, when not 0.
# The counter each fault moves (by one) and the hard block's error report, per hard block family.
COUNTER = {"timeout": "timeouts", "ur": "error_completions", "ca": "error_completions",
           "poisoned": "error_completions", "long": "unexpected_completions",
           "stray": "unexpected_completions", "foreign": "foreign_completions",
           "descriptors": "refused_descriptors", "msi": "msi_failures"}
REPORT = {
    "s7": {"timeout": "cfg_err_cpl_timeout", "long": "cfg_err_cpl_unexpect", "stray": "cfg_err_cpl_unexpect",
           "foreign": "cfg_err_cpl_unexpect"},
    # pcie3_7x reports its own completion timeouts.
    "us": {"long": "cfg_err_uncor_in", "stray": "cfg_err_uncor_in"},
}


def _jobs():
    jobs = []
    for fault in list(FAULTS) + ["descriptors", "msi", "stop"]:
        ch = CHANNEL.get(fault, 0)
        # Long enough that the stop lands mid-transfer on a Gen3 x8 board too.
        size = STOP_SIZE if fault == "stop" else SIZE
        jobs.append({"kind": "fault", "fault": fault, "size": size, "channel": ch, "other": 1 - ch,
                     "fault_offset": 4096, "timeout_ns": 20_000})
    return jobs


@pytest.fixture(scope="module", params=BOARDS)
def fault_run(request):
    from hostlink.sim.pcie.run import run_jobs
    board = get_board(request.param)
    profile = host_profile("default", seed=5, **board_profile_defaults(board))
    run = run_jobs(board.name, _jobs(), profile, dma_channels=2)
    return board, {row["fault"]: row for row in run["results"]}


def _counter_changes(board, fault, row):
    """The counters that moved, as {name: change}."""
    return {name: change for name, change in row["counters"].items() if change}


@pytest.mark.parametrize("fault", FLAGGED + DROPPED)
def test_host_fault_is_counted_flagged_and_recovered(fault_run, fault):
    board, rows = fault_run
    row, words = rows[fault], SIZE//4
    ch = CHANNEL.get(fault, 0)
    assert [kind for kind, _ in row["faults_done"]].count(fault) == 1, row   # The host did misbehave.
    changes = _counter_changes(board, fault, row)
    if fault in FLAGGED:
        # The read ended, its channel reports it, and its data stops there: nothing stale passed as good.
        assert changes.pop(f"reader{ch}_errors") == 1, row
        assert row["errored"] == 1, row
        assert row["faulty"][1] == 0 and row["faulty"][0] < words, row
    else:
        assert row["faulty"] == [words, 0] and row["errored"] == 0, row   # No other read corrupted.
    if fault == "poisoned":
        assert changes.pop("error_completions") >= 1, row                # One per poisoned completion.
    elif fault == "foreign" and board.device == "us":
        pass   # pcie3_7x drops completions for another requester itself: they never reach the SoC.
    elif fault == "long" and board.device == "us":
        # pcie3_7x checks a completion against its request: the byte count does not match the read's
        # (error code 0101 in the descriptor), which the PHY turns into an error status; with data, the
        # controller takes it as poisoned (flagged, kept to its end), and the beats past the read's room
        # are dropped as well.
        assert changes.pop("error_completions") == 1, row
        assert changes.pop("unexpected_completions") == 1, row
    elif fault == "timeout" and board.device == "us":
        # pcie3_7x times the read out itself and ends it with an error descriptor, which the PHY turns
        # into an error completion; the SoC's own timer is a longer backstop.
        assert row["block_timeouts"] == 1, row
        assert changes.pop("error_completions") == 1, row
    else:
        assert changes.pop(COUNTER[fault]) == 1, row
    assert changes == {}, row                                           # Nothing else counted.
    report = REPORT[board.device].get(fault)
    assert row["reports"] == {name: int(name == report) for name in row["reports"]}, row
    # The other channel never noticed; the driver's disable clears the channel, whose next transfer is clean.
    assert row["other"] == [words, 0], row
    assert row["errored_after_disable"] == 0, row
    assert row["clean"] == [words, 0], row
    assert not any(row["clean_counters"].values()), row
    assert row["bad_reads"] == row["bad_writes"] == 0, row


def test_bad_descriptors_are_refused_and_no_request_crosses_4k(fault_run):
    board, rows = fault_run
    row, words = rows["descriptors"], SIZE//4
    assert _counter_changes(board, "descriptors", row) == {"refused_descriptors": 2}, row
    assert row["faulty"] == [words, 0], row             # The good descriptors' data, whole and in order.
    assert row["c2h_mismatches"] == 0 and row["c2h_landed"] == SIZE, row
    assert row["bad_reads"] == row["bad_writes"] == 0, row   # Unaligned: still no TLP across 4 KiB or MPS.
    assert row["clean"] == [words, 0], row


def test_refused_msi_is_sent_again_and_counted(fault_run):
    board, rows = fault_run
    row, words = rows["msi"], SIZE//4
    assert row["msis"] == 1, row                        # Not lost.
    assert row["faulty"] == [words, 0], row
    if board.device == "us":
        # pcie3_7x answers cfg_interrupt_msi_fail: the PHY sends it again, the SoC counts each refusal.
        assert row["msi_refused"] == 2, row
        assert _counter_changes(board, "msi", row) == {"msi_failures": 2}, row
    else:
        # pcie_7x cannot refuse an MSI: it holds cfg_interrupt_rdy until it can send it, and the request waits.
        assert row["msi_held"] == 1, row
        assert _counter_changes(board, "msi", row) == {}, row
    assert row["clean"] == [words, 0], row


def test_a_channel_stopped_mid_transfer_harms_nothing(fault_run):
    """The driver's release when dma_test is killed: reader (reads in flight) and writer disabled a quarter
    into their transfers. The completions of those reads are taken without an error or a word passed on
    after the stop, the SoC answers the host, and the channel's next transfer is clean."""
    board, rows = fault_run
    row, words = rows["stop"], STOP_SIZE//4
    assert words//4 <= row["stopped_at"] < words, row     # Stopped mid-transfer.
    assert row["faulty"] == [row["stopped_at"], 0], row    # Not one word after the stop, not one wrong.
    assert row["scratch"] == 0x5a5a0001, row
    assert _counter_changes(board, "stop", row) == {}, row
    assert not any(row["reports"].values()), row
    assert row["errored"] == row["errored_after_disable"] == 0, row
    assert row["clean"] == [words, 0] and not any(row["clean_counters"].values()), row
    assert row["bad_reads"] == row["bad_writes"] == 0, row
