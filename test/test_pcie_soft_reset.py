# This file is part of hostlink.
# Copyright (c) 2026 hostlink developers
# SPDX-License-Identifier: BSD-2-Clause

"""The SoC's soft reset as LitePCIe's Linux driver makes it at probe (`ctrl_reset`, a wait, the identifier
read word by word), on every PCIe board's SoC (sim/pcie/reset_jobs.py): four resets after a few reads, four
right after a c2h transfer.

Every read after the reset must complete: the driver compares the identifier with its SoC's and refuses a
board whose identifier differs, so a read lost after the reset refuses the board. Two causes lost one
(doc/driver_sim.md, "The SoC's soft reset"):
- the simulation's CRG reset the system domain for one cycle where the board's PLL holds it in reset until
  it relocks (sim/pcie/soc.py, SimCRG): the PHY's crossings kept their old pointers on one side and
  replayed old requests (24 to 82 unexpected completions per reset on the ZC706);
- on the board as in the simulation, the FPGA -> host crossing hands on stale entries as its `pcie` side
  enters reset (cores/pcie/s7phy.py): after a DMA, the next TLP, the first read's completion, was lost in
  the malformed TLP they began (10 of 16 resets after a c2h transfer on the ZC706).
"""

import pytest

from hostlink.sim.pcie.models.host import host_profile
from hostlink.sim.pcie.reset_jobs import SCRATCH_MARK
from hostlink.sim.pcie.soc import get_board, SOFT_RESET_NS
from hostlink.sim.dma import board_profile_defaults
from hostlink.targets import boards as registry

pytestmark = pytest.mark.sim

SCRATCH_RESET = 0x12345678          # ctrl_scratch's reset value (LiteX's SoCController).
WAIT_NS       = SOFT_RESET_NS + 2000  # After the simulated PLL has relocked; the driver waits 10 ms.
# Reads before each reset beyond the job's own (reset_jobs.py): each moves the pointers of the PHY's
# clock-domain crossings, whose state at the reset decides what a crossing hands on stale.
READS_BEFORE  = [0, 1, 2, 3]
RUNS = [(name, True) for name in registry.PCIE_BOARDS] + [("zc706", False)]   # (board, fast path)


@pytest.fixture(scope="module", params=RUNS, ids=[f"{b}-{'fast' if f else 'reference'}" for b, f in RUNS])
def reset_rows(request):
    from hostlink.sim.pcie.run import run_jobs
    name, fast = request.param
    board = get_board(name)
    profile = host_profile("default", seed=5, **board_profile_defaults(board))
    # Each reset after a few reads, then each right after a c2h transfer, as a driver reloaded after a DMA
    # would reset it: the FPGA -> host crossing then holds a DMA write's beats.
    jobs = [{"kind": "soft_reset", "wait_ns": WAIT_NS, "reads_before": n} for n in READS_BEFORE]
    for n in READS_BEFORE:
        jobs += [{"kind": "c2h", "size": 65536, "channels": [0], "descriptor_size": 4096},
                 {"kind": "soft_reset", "wait_ns": WAIT_NS, "reads_before": n, "identifier_before": False}]
    run = run_jobs(board.name, jobs, profile, dma_channels=2, fast=fast)
    return [row for job, row in zip(jobs, run["results"]) if job["kind"] == "soft_reset"]


def test_every_read_after_the_soft_reset_completes(reset_rows):
    assert len(reset_rows) == 2*len(READS_BEFORE)
    for row in reset_rows:
        assert row["lost_reads"] == 0, row


def test_the_soft_reset_sends_nothing_stale(reset_rows):
    """No completion the host did not ask for: neither a replayed request's nor an entry of the FPGA -> host
    crossing sent again (cores/pcie/s7phy.py); no MSI (the PHY's MSI crossing is built the same way)."""
    for row in reset_rows:
        assert row["unexpected_completions"] == 0, row
        assert row["msis"] == 0, row


def test_the_soft_reset_resets_the_soc(reset_rows):
    for row in reset_rows:
        assert row["scratch_before"] == SCRATCH_MARK, row
        assert row["scratch_after"]  == SCRATCH_RESET, row


def test_the_identifier_reads_the_same_after_the_soft_reset(reset_rows):
    identifier = reset_rows[0]["identifier_before"]
    assert identifier.startswith("hostlink "), reset_rows[0]
    for row in reset_rows:
        assert row["identifier_before"] in (identifier, None), row
        assert row["identifier_after"] == identifier, row


# A user core on its own clock: the user port's clock-domain crossings across the soft reset -------------

ACCELERATOR = "hostlink.examples.accelerator:Accelerator"
# Sizes that leave the crossings' pointers at different places: whole words of the accelerator (twice the
# DMA's width: 64 bytes on the VC709), in whole DMA requests of 128 bytes.
USER_SIZES = [8192, 4224, 12416, 2176]


@pytest.mark.parametrize("board", registry.PCIE_BOARDS)
def test_a_user_core_streams_right_after_each_soft_reset(board):
    """The example accelerator (0.6 times the SoC's clock, twice the DMA's width) on channel 0: a transfer
    through it, the soft reset, another, and so on. Each side of the user port's crossings (asynchronous FIFOs
    whose pointer synchronizers have no reset) must start empty after the reset: a crossing that hands on
    entries of before the reset puts stale samples or results at the head of the next transfer, which then
    comes back shifted. On the VC709, whose soft reset lasted a cycle of its clock, the accelerator's clock
    domain missed it and the crossings' other side did not: the first transfer after the reset returned 497
    words for 130 (a module reload in User-Mode Linux once gave 261,106 of 262,144 bytes wrong)."""
    from hostlink.sim.dma import make_jobs
    from hostlink.sim.pcie.run import run_jobs
    spec = registry.BOARDS[board]
    profile = host_profile("default", seed=7, **board_profile_defaults(get_board(board)))
    settings = {"a": 3, "b": 0x1234, "throttle": 0}
    jobs = []
    for i, size in enumerate(USER_SIZES):
        if i:
            jobs.append({"kind": "soft_reset", "wait_ns": WAIT_NS, "reads_before": i, "identifier_before": False})
        jobs += [dict(job, channels=[0], settings=settings) for job in
                 make_jobs([size], ["user"], 1, 4096, granularity=spec.pcie.data_width // 8)]
    run = run_jobs(board, jobs, profile, dma_channels=2, user_core={"spec": ACCELERATOR, "channel": 0})
    rows = [row for job, row in zip(jobs, run["results"]) if job["kind"] == "user"]
    assert [(r["size"], r["errors"], r["timed_out"]) for r in rows] == [(s, 0, False) for s in USER_SIZES], rows
    resets = [row for job, row in zip(jobs, run["results"]) if job["kind"] == "soft_reset"]
    assert all(r["lost_reads"] == 0 and r["unexpected_completions"] == 0 for r in resets), resets
