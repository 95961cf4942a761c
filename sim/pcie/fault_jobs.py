# This file is part of hostlink.
# Copyright (c) 2026 hostlink developers
# SPDX-License-Identifier: BSD-2-Clause

"""Bench jobs that inject a fault (`"kind": "fault"`), run by bench.py like the other jobs: one fault on
a channel while another moves clean data, then the channel's recovery (test/test_pcie_faults.py)."""

from hostlink.sim.pcie.triggers import Timer

from hostlink.sim.pcie.patterns import count_pattern, mismatched_bytes
from hostlink.sim.pcie.driver import split_descriptors

# The pcie_faults registers that are not counters.
NOT_COUNTERS = ("completion_timeout", "reader_errored")


async def run_fault_job(bench, job):
    """A fault on `channel` while `other` moves clean data, then a disable and a clean transfer on
    `channel`. `fault`: a host fault (host.FAULTS) on the read `fault_offset` bytes into the channel's
    buffer; "descriptors" (refused and unaligned descriptors); "msi" (the hard block refuses, or holds,
    the next MSI). Reports the fault counters' changes, the hard block's error reports and each
    transfer's words and mismatches (checker, 32-bit words)."""
    from hostlink.sim.pcie.models.host import FAULTS
    drv, fault, size = bench.driver, job["fault"], job["size"]
    ch, other = job["channel"], job["other"]
    words, wbytes = size//4, bench.config["data_width"]//8
    # A hard block that times reads out itself (pcie3_7x) does so first: the SoC's timer is its backstop.
    own_timer = hasattr(bench.dev, "completion_timeout_ns")
    if own_timer:
        bench.dev.completion_timeout_ns = job["timeout_ns"]
    await drv.write("pcie_faults_completion_timeout", bench.cycles(job["timeout_ns"]*(2 if own_timer else 1)))
    block_timeouts = getattr(bench.dev, "completion_timeouts", 0)
    await drv.enable_irqs(drv.irq_bit(ch, "h2c") | drv.irq_bit(other, "h2c") | drv.irq_bit(ch, "c2h"))
    counters = await drv.fault_counters()
    reports  = dict(bench.dev.error_reports)
    bad      = (bench.rc.bad_reads, bench.rc.bad_writes)
    msis     = bench.msis
    row      = {"fault": fault, "board": bench.config["board"]}

    async def errored():
        return (await drv.read("pcie_faults_reader_errored") >> ch) & 1
    async def words_of(channel):
        return await drv.checker_counts(channel)

    if fault in FAULTS:
        base = await bench.start_h2c(ch, size)
        bench.rc.arm_fault(fault, base + job["fault_offset"], base + size)
        await bench.start_h2c(other, size)
        await drv.flush()
        await drv.start(ch, "h2c")
        await drv.start(other, "h2c")
        async def settled():
            mine, theirs = await words_of(ch), await words_of(other)
            return (mine[0] >= words or await errored()) and theirs[0] >= words
        await bench.wait_for(settled, 400_000)
        # Reads in flight when the fault hit end (or time out) before the counters are read.
        await Timer(3*job["timeout_ns"], "ns")
    elif fault == "descriptors":
        # Between two good descriptors: one of length 0 and one not a whole bus word (refused, no TLP);
        # the second good one starts 64 bytes below a 4 KiB boundary (no request may cross it).
        junk = bench.rc.mem_pool.alloc_region(4096).get_absolute_address(0)
        head = 4096 - 64
        await bench.start_h2c(ch, size, check=False, descriptors=lambda base: [
            (base, head, False), (junk, 0, False), (junk, wbytes + 4, False), (base + head, size - head, True)])
        await drv.start(ch, "h2c")
        await bench.wait_for(lambda: _ge(words_of(ch), words), 400_000)
        # FPGA -> host into a buffer 96 bytes below a 4 KiB boundary: no write may cross it.
        dst = bench.rc.mem_pool.alloc_region(size + 8192)
        start = dst.get_absolute_address(0) + 4096 - 96
        watch = bench.landing.watch(start, size)
        await drv.set_loopback(ch, False)
        await drv.program(ch, "c2h", split_descriptors(start, size, 65536, 1, wbytes))
        await drv.start(ch, "c2h")
        await drv.set_generator(ch, True, size)
        await bench.wait_for(lambda: _done(watch), 400_000)
        await drv.set_generator(ch, False)
        got = dst[4096 - 96:4096 - 96 + size]
        row["c2h_mismatches"] = mismatched_bytes(got, count_pattern(size))
        row["c2h_landed"] = watch["landed"]
        await drv.stop(ch, "c2h")
    elif fault == "msi":
        # One MSI asked for, at the end of the transfer: refused twice (VC709), or held (pcie_7x).
        if hasattr(bench.dev, "refuse_msis"):
            bench.dev.refuse_msis(2)
        else:
            bench.dev.hold_msis(1, 2000)
        await bench.start_h2c(ch, size, irq_every=1 << 20)
        await drv.start(ch, "h2c")
        await bench.wait_for(lambda: _ge(words_of(ch), words), 400_000)
        await bench.wait_msis(msis + 1, timeout_ns=100_000)
        row["msis"] = bench.msis - msis
        row["msi_refused"] = getattr(bench.dev, "msi_refused", 0)
        row["msi_held"]    = getattr(bench.dev, "msi_held", 0)
    elif fault == "stop":
        # The driver's release when its user is killed (rmmod_busy.py does it in ./sim.py driver): the
        # channel's reader, with reads in flight, and its writer, mid-buffer, are disabled a quarter into
        # their transfers. The SoC must take the completions of those reads without harm and go on
        # answering the host.
        await bench.start_h2c(ch, size)
        dst = bench.rc.mem_pool.alloc_region(size + 8192)
        await drv.program(ch, "c2h", split_descriptors(dst.get_absolute_address(0), size, 65536, 1, wbytes))
        await drv.start(ch, "h2c")
        await drv.start(ch, "c2h")
        await drv.set_generator(ch, True, size)
        await bench.wait_for(lambda: _ge(words_of(ch), words//4), 400_000)
        await drv.stop(ch, "h2c")
        await drv.stop(ch, "c2h")
        await drv.set_generator(ch, False)
        row["stopped_at"] = (await words_of(ch))[0]
        await Timer(3*job["timeout_ns"], "ns")
        await drv.write("ctrl_scratch", 0x5a5a0001)
        row["scratch"] = await drv.read("ctrl_scratch")
    else:
        raise ValueError(f"unknown fault {fault!r}")

    row["faulty"]   = await words_of(ch)
    row["other"]    = await words_of(other)
    row["errored"]  = await errored()
    row["faults_done"] = list(bench.rc.faults_done)
    after = await drv.fault_counters()
    row["counters"] = {k: after[k] - counters[k] for k in after if k not in NOT_COUNTERS}
    row["reports"]  = {k: v - reports.get(k, 0) for k, v in bench.dev.error_reports.items()}
    row["block_timeouts"] = getattr(bench.dev, "completion_timeouts", 0) - block_timeouts

    # Recovery: the driver disables the channel, waits for it to be idle, and runs a clean transfer.
    await drv.stop(ch, "h2c")
    await drv.stop(other, "h2c")
    await bench.wait_for(lambda: _not(errored()), 200_000)
    row["errored_after_disable"] = await errored()
    await drv.service_irq()
    counters = await drv.fault_counters()
    await bench.start_h2c(ch, size)
    await drv.start(ch, "h2c")
    await bench.wait_for(lambda: _ge(words_of(ch), words), 400_000)
    await Timer(2000, "ns")
    row["clean"] = await words_of(ch)
    after = await drv.fault_counters()
    row["clean_counters"] = {k: after[k] - counters[k] for k in after if k not in NOT_COUNTERS}
    await drv.stop(ch, "h2c")
    await drv.service_irq()
    row["bad_reads"], row["bad_writes"] = bench.rc.bad_reads - bad[0], bench.rc.bad_writes - bad[1]
    row["words"] = words
    return [row]


async def _ge(counts, words):
    return (await counts)[0] >= words

async def _not(value):
    return not await value

async def _done(watch):
    return watch["done"] is not None
