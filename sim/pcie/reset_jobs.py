# This file is part of hostlink.
# Copyright (c) 2026 hostlink developers
# SPDX-License-Identifier: BSD-2-Clause

"""Bench jobs that soft-reset the SoC (`"kind": "soft_reset"`), run by bench.py like the other jobs: what
LitePCIe's Linux driver does at probe, a write of `ctrl_reset`, a wait, then the SoC's identifier read
word by word (test/test_pcie_soft_reset.py)."""

from hostlink.sim.pcie.triggers import Timer
from hostlink.sim.pcie.driver import MMIO_TIMEOUT_US

# A value that is not ctrl_scratch's reset value (0x12345678): read back after the reset, it would show that
# the reset did not happen.
SCRATCH_MARK = 0x5eed_0001
IDENTIFIER_WORDS = 256   # What the driver reads (litepcie/software/kernel/main.c).


async def _identifier(bench, lost):
    """The SoC's identifier as the driver reads it, one character per word until the first NUL; a read
    that gets no completion counts in `lost[0]` and reads as 0xffffffff, as on a host."""
    base = bench.driver.csrs.bases["identifier_mem"]
    chars = []
    for i in range(IDENTIFIER_WORDS):
        try:
            word = await bench.driver.bar.read_dword(base + 4*i, timeout=MMIO_TIMEOUT_US, timeout_unit="us")
        except Exception:   # No completion: the fast path's TimeoutError, cocotbext-pcie's Exception.
            lost[0] += 1
            word = 0xffffffff
        if word == 0:
            break
        chars.append(chr(word & 0xff))
    return "".join(chars)


async def run_soft_reset_job(bench, job):
    """Marks ctrl_scratch, reads the identifier (unless `identifier_before` is false) and ctrl_scratch, then
    ctrl_scratch `reads_before` times more (each read moves the PHY's clock-domain crossings on by a TLP),
    writes ctrl_reset, waits `wait_ns`, then reads ctrl_scratch and the identifier again. Reports both
    identifiers (None: not read), ctrl_scratch after the reset (its reset value if the reset happened; None:
    lost), the reads after the reset that got no completion, the completions the host dropped for no read of
    its own (unexpected), and the MSIs from the reset to the job's end."""
    drv = bench.driver
    unexpected = bench.rc.unexpected_completions
    await drv.write("ctrl_scratch", SCRATCH_MARK)
    before = await _identifier(bench, [0]) if job.get("identifier_before", True) else None
    scratch_before = await drv.read("ctrl_scratch")
    for _ in range(job.get("reads_before", 0)):
        await drv.read("ctrl_scratch")
    msis = bench.msis
    await drv.write("ctrl_reset", 1)
    await Timer(job["wait_ns"], "ns")
    lost = [0]
    try:
        scratch_after = await drv.read("ctrl_scratch")
    except Exception:   # No completion: the fast path's TimeoutError, cocotbext-pcie's Exception.
        lost[0] += 1
        scratch_after = None
    after = await _identifier(bench, lost)
    return [{"kind": "soft_reset", "board": bench.config["board"], "wait_ns": job["wait_ns"],
             "scratch_before": scratch_before, "scratch_after": scratch_after,
             "identifier_before": before, "identifier_after": after, "lost_reads": lost[0],
             "unexpected_completions": bench.rc.unexpected_completions - unexpected,
             "msis": bench.msis - msis}]
