# This file is part of hostlink.
# Copyright (c) 2026 hostlink developers
# SPDX-License-Identifier: BSD-2-Clause

"""Every PCIe board against the same matrix of host profiles, as real root complexes behave.

Each transfer is long enough to keep the most reads in flight for many round trips (64 KiB and more: at
least 14 times what any board keeps in flight, 4.5 KiB), in every direction, and must end with 0 errors, no
timeout, every MSI asked for, and no read over the MRRS the host set. The VC709 under the worst profile is
the regression for its 64-byte-completion hang: there, 15,872 bytes of reads in flight came back as 248
completions for the hard block's 64 completion headers, and it dropped some, when its RC interface took one
completion per beat. With RC straddling it keeps those 15,872 bytes in flight again, and the block must never
hold a queue of completions.
"""

import pytest

from hostlink.sim.dma import board_profile_defaults
from hostlink.sim.pcie.models.host import host_profile
from hostlink.sim.pcie.soc import get_board
from hostlink.sim.pcie.fast.run import fast_path_runs
from hostlink.targets import boards as registry

pytestmark = pytest.mark.sim

BOARDS   = registry.PCIE_BOARDS
PROFILES = {
    "default":  ("default", {}),
    "worst":    ("worst",   {}),                                              # 64-byte completions.
    "ideal":    ("ideal",   {}),
    "small":    ("default", {"max_payload_size": 128, "max_read_request": 128}),
    "slow":     ("default", {"read_latency_ns": 2000.0, "max_read_request": 256}),   # 2 us reads, MRRS 256.
    "mps512":   ("default", {"max_payload_size": 512}),   # VC709 and ZC706 (the KC705's block stops at 256).
    "stalls":   ("default", {"backpressure": 0.25, "rx_gaps": 0.25}),
    # 2 us reads of 256 bytes on a host that leaves Extended Tag off: the VC709 must keep to 32 tags (its
    # block model stops the run on a tag over 31).
    "no_ext_tag": ("default", {"read_latency_ns": 2000.0, "max_read_request": 256, "extended_tag": False}),
}
# Completion headers of each hard block (pcie3_7x: PG156's table; pcie_7x: LitePCIe's configuration,
# hostlink.cores.pcie.endpoint).
COMPLETION_HEADERS = {"vc709": 64, "zc706": 72, "kc705": 72}
COMPLETION_BYTES   = {"vc709": 15872, "zc706": 13600, "kc705": 5920}
SIZES = {"h2c": 128*1024 + 96, "c2h": 64*1024 + 32, "bidir": 96*1024 + 64}   # Whole 32-byte words.


# The SoC the other simulated tests and ./sim.py run (two DMA channels; the jobs here use channel 0), so that
# a cold `make test` builds its models (the fast path's and the reference's) once per board, not once more for
# a one-channel SoC only this file used: about 5 minutes of builds under load, for the same runs (the matrix
# on the one-channel SoC took as long and passed alike).
DMA_CHANNELS = 2

# A host gives the KC705 MPS 256 whatever it allows (LitePCIe configures its block for 256): the same run
# as "default".
SKIPPED = {("kc705", "mps512")}


@pytest.fixture(scope="module", params=[(b, p) for b in BOARDS for p in PROFILES if (b, p) not in SKIPPED],
    ids=lambda bp: f"{bp[0]}-{bp[1]}")
def profile_run(request):
    from hostlink.sim.pcie.run import run_jobs
    board, name = request.param
    base, overrides = PROFILES[name]
    settings = board_profile_defaults(get_board(board))
    settings.update(overrides)
    profile = host_profile(base, seed=len(name), **settings)
    return board, name, profile, run_jobs(board, profile_jobs(board), profile, dma_channels=DMA_CHANNELS)


def profile_jobs(board):
    """Each direction on its own, then the lossless stream."""
    jobs = [{"kind": kind, "size": size, "channels": [0], "descriptor_size": 16384} for kind, size in SIZES.items()]
    return jobs + [lossless_stream_job(get_board(board))]


def lossless_stream_job(board):
    """Both directions at once through the loopback, in lossless flow, by a host that runs a ring of 2 buffers
    of 4 KiB and stalls for over 10 times the ring's drain time every 2 buffers (test_flow_sim.stall_ns)."""
    from test_flow_sim import STALL_RING, STALL_EVERY, stall_ns
    return {"kind": "stream", "flow": "lossless", "target": "loopback", "directions": ["h2c", "c2h"],
            "channels": [0], "size": 8 * STALL_RING[1], "buffers": STALL_RING[0], "buffer_bytes": STALL_RING[1],
            "stall_ns": stall_ns(board), "stall_every": STALL_EVERY}


def transfers(run):
    return [r for r in run["results"] if r.get("kind") != "stream"]


def test_every_transfer_is_whole_with_every_msi(profile_run):
    board, name, profile, run = profile_run
    rows = transfers(run)
    assert [r["direction"] for r in rows] == list(SIZES)
    for row in rows:
        assert not row["timed_out"], (board, name, row)
        assert row["errors"] == 0, (board, name, row)
        assert row["msis"] == row["msis_expected"], (board, name, row)
        assert row["gbytes_per_s"] > 0


def test_a_stalling_host_loses_nothing_in_lossless_flow(profile_run):
    """Nothing lost and nothing stale through the loopback (every byte back as sent), both engines held for
    the host at its stalls."""
    board, name, profile, run = profile_run
    [row] = [r for r in run["results"] if r.get("kind") == "stream"]
    assert (row["errors"], row["timed_out"]) == (0, False), (board, name, row)
    assert row["stalls"] >= 3 and row["h2c_waits"] > 0 and row["c2h_waits"] > 0, (board, name, row)


def test_no_read_breaks_the_hosts_limits(profile_run):
    board, name, profile, run = profile_run
    reads = run["host_reads"]
    assert reads["bad"] == 0
    assert 0 < reads["largest_bytes"] <= profile.max_read_request


def test_reads_in_flight_fit_the_hard_blocks_completion_space(profile_run):
    """Without RC straddling, the completions the host owes, one per 64-byte block, never exceed the block's
    headers: the cause of the VC709's 64-byte-completion hang, when it counted bytes only with one completion
    per RC beat (it owed about 250, and failed here even where the block happened not to drop any).

    With RC straddling (VC709) the SoC reserves no headers: the reads in flight fill the block's bytes
    (15,872: 248 blocks), and what must hold is that the block never keeps a queue of completions, under
    every profile, 64-byte completions included: at most the one arriving while one leaves."""
    board, name, profile, run = profile_run
    space = run["completion_space"]
    owed = run["host_reads"]["most_blocks_owed"]
    if space["rc_straddle"]:
        assert 0 < owed <= COMPLETION_BYTES[board] // 64
        assert space["most_headers_held"] <= 2, (board, name, space)
        if profile.max_read_request == 256 and profile.read_latency_ns >= 2000:
            # 32 reads of 256 bytes are 128 blocks: more in flight takes tags over 31, which the SoC may
            # use only where the host enabled Extended Tag.
            assert (owed > 128) == profile.extended_tag, (board, name, owed)
    else:
        assert 0 < run["host_reads"]["most_blocks_owed"] <= COMPLETION_HEADERS[board]
        assert space["most_headers_held"] <= COMPLETION_HEADERS[board]
    # Every block model holds completions in its receive buffer and counts what it loses.
    assert space["dropped"] == 0


def test_the_last_msi_reaches_the_host_after_the_data_it_reports(profile_run):
    """An interrupt-driven host reads the buffers an MSI reports at once: the MSI must not overtake them
    (hostlink.cores.pcie.write_fence; before it, the last MSI came 69-276 ns ahead of the data on every
    board)."""
    board, name, profile, run = profile_run
    ahead = [r["msi_ahead_of_data_ns"] for r in transfers(run) if r["direction"] in ("c2h", "bidir")]
    assert ahead and all(a is not None and a <= 0 for a in ahead), (board, name, ahead)


def test_the_last_msi_of_a_read_comes_after_the_host_has_read_the_data(profile_run):
    """A host that refills a buffer as soon as the reader reports it must not change what the buffer's reads
    return: the host (which reads memory at the end of its read latency in these profiles) must have read the
    data of every read before the MSI reporting it arrives (hostlink.cores.pcie.read_fence; before it, the
    last MSI came a whole read latency, 1-2 us, ahead on every board)."""
    board, name, profile, run = profile_run
    assert profile.read_data_at == "completion"
    ahead = [r["msi_ahead_of_reads_ns"] for r in transfers(run) if r["direction"] == "h2c"]
    assert ahead and all(a is not None and a <= 0 for a in ahead), (board, name, ahead)


@pytest.mark.parametrize("board", BOARDS)
def test_completions_the_block_loses_are_errors(board):
    """A hard block with fewer completion headers than the completions it must hold loses some. Every board's
    block model counts each loss, and the transfer reports it as an error, never as whole.

    Where the SoC reserves headers, a block with 2 of them loses 64-byte completions that arrive faster than
    the user logic takes them. A straddled VC709 takes every completion as it arrives and its block never
    holds a queue: only a block with no room at all (0 headers) loses completions there."""
    from hostlink.sim.pcie.run import build_model, run_jobs
    headers = 0 if build_model(board, dma_channels=DMA_CHANNELS, reference=False)["hard_block"]["rc_straddle"] else 2
    profile = host_profile("worst", seed=1, **board_profile_defaults(get_board(board)))
    jobs = [{"kind": "h2c", "size": 65536, "channels": [0], "descriptor_size": 16384}]
    run = run_jobs(board, jobs, profile, dma_channels=DMA_CHANNELS, block_completion_headers=headers)
    assert run["completion_space"]["headers"] == headers
    assert run["completion_space"]["dropped"] > 0
    assert run["results"][0]["errors"] > 0



# The hard block models' event-driven coroutines (issue 34) against the same coroutines as cocotbext-pcie
# writes them, each waking on every clock edge: on every board, under the profiles that exercise the paths
# they change (completions of every size, transmit stalls and receive gaps), the whole run is the same.
REFERENCE_PROFILES = ("default", "worst", "stalls")


def test_the_reference_model_gives_the_same_run(profile_run):
    """Every figure and count of the run (cycles, errors, MSIs, the host's reads and writes, the block's
    completion space, the enumeration) equal to the same run with `reference=True`: the compiled fast path
    (the default) within test_fast_path's tolerances where timing counts. On the VC709, the cocotb path's
    event-driven block model (which runs what the fast path does not: --profile-streams, the DRAM bring-up)
    gives exactly the reference's run, cocotbext-pcie's model as written."""
    from hostlink.sim.pcie.run import run_jobs
    from hostlink.sim.pcie.fast.agreement import differences
    board, name, profile, run = profile_run
    if name not in REFERENCE_PROFILES:
        pytest.skip(f"the reference model runs under the profiles {', '.join(REFERENCE_PROFILES)}")
    assert fast_path_runs(get_board(board))
    reference = run_jobs(board, profile_jobs(board), profile, dma_channels=DMA_CHANNELS, reference=True)
    assert differences(run, reference) == [], (board, name)
    if get_board(board).device == "us":
        event_driven = run_jobs(board, profile_jobs(board), profile, dma_channels=DMA_CHANNELS, fast=False)
        assert [r["cycles"] for r in event_driven["results"]] == [r["cycles"] for r in reference["results"]], \
            (board, name)
        assert event_driven == reference, (board, name)
