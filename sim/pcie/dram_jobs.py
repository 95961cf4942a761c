# This file is part of hostlink.
# Copyright (c) 2026 hostlink developers
# SPDX-License-Identifier: BSD-2-Clause

"""Bench jobs for SoCs built with a DRAM (`"target": "dram"`), run by bench.py like the other jobs.

- "dram":     host -> DRAM: random data from a host buffer written into a DRAM window through the
  DMA reader; then DRAM -> host: the same window read into a second host buffer through the DMA
  writer; both timed like the pattern rows (h2c: until the last completion is accepted from the hard
  block; c2h: until the last byte lands in host memory). The host buffer must come back equal, its
  64 guard bytes untouched, and each window's native word count exact.
- "refusal":  bad DRAM windows (unaligned, empty, past the end) on both engines: each must be
  refused, counted once, and leave the engines idle.
- "bringup":  the host's DDR3 bring-up (software/dram) run against the SoC: see dram_bringup.py.
- "memtest":  LiteDRAM's BIST writes a pattern over a DRAM range and checks it: 0 errors, then
  errors with a stuck data bit injected in the memory model (top-level port `sim_dram_stuck`).
"""

from hostlink.sim.pcie.triggers import Timer, First, get_sim_time

from hostlink.sim.pcie.driver import split_descriptors

POLL_NS = 500

# Helpers ------------------------------------------------------------------------------------------

async def _poll(drv, name, mask, timeout_ns):
    deadline = get_sim_time("ns") + timeout_ns
    while get_sim_time("ns") < deadline:
        value = await drv.read(name)
        if value & mask:
            return value
        await Timer(POLL_NS, "ns")
    return None


async def _window(drv, channel, engine, base, length, start=True):
    prefix = f"pcie_dma{channel}_dram_{engine}"
    await drv.write(f"{prefix}_base",   base)
    await drv.write(f"{prefix}_length", length)
    if start:
        await _window_start(drv, channel, engine)


async def _window_start(drv, channel, engine):
    await drv.write(f"pcie_dma{channel}_dram_{engine}_control", 1)

# Jobs ---------------------------------------------------------------------------------------------

async def run_dram_job(bench, job):
    from hostlink.sim.pcie.dram_bringup import run_bringup
    return await {"dram": _transfer, "refusal": _refusal, "memtest": _memtest,
                  "bringup": run_bringup}[job["kind"]](bench, job)


async def _transfer(bench, job):
    drv, rc  = bench.driver, bench.rc
    size     = job["size"]
    base     = job["dram_address"]
    ch       = job["channels"][0]
    width    = bench.config["data_width"] // 8
    native   = drv.csrs.constants["dram_native_bytes"]
    timeout  = 200_000 + size * 8
    rows     = []
    await drv.write(f"pcie_dma{ch}_dram_control", 1)   # DRAM mode.

    # Host -> DRAM.
    data = bench.rng.randbytes(size)
    src  = rc.mem_pool.alloc_region(size)
    src[0:size] = data
    descs = split_descriptors(src.get_absolute_address(0), size, job["descriptor_size"], 1, width)
    await drv.program(ch, "h2c", descs)
    await drv.enable_irqs(drv.irq_bit(ch, "h2c") | drv.irq_bit(ch, "c2h"))
    await _window(drv, ch, "write", base, size)
    await drv.flush()
    msis_before, cpl_before = bench.msis, bench.dev.rx_cpl_bytes
    t_start = get_sim_time("ns")
    await drv.start(ch, "h2c")
    deadline = t_start + timeout
    while bench.dev.rx_cpl_bytes - cpl_before < size and get_sim_time("ns") < deadline:
        await Timer(POLL_NS, "ns")
    t_end  = bench.dev.rx_cpl_last_ns if bench.dev.rx_cpl_bytes - cpl_before >= size else None
    status = await _poll(drv, f"pcie_dma{ch}_dram_write_status", 0b10, 100_000)
    words  = await drv.read(f"pcie_dma{ch}_dram_write_words")
    await bench.wait_msis(msis_before + len(descs))
    h2c_msis = bench.msis - msis_before
    errors = (0 if status is not None else 1) + abs(words - size // native)
    await drv.service_irq()
    await drv.stop(ch, "h2c")
    rows.append(_row(bench, job, "h2c", t_start, t_end, errors, h2c_msis, len(descs)))

    # DRAM -> host: the DMA writer first, so that the window's first words find it ready.
    dst = rc.mem_pool.alloc_region(size + 64)
    dst[0:size + 64] = b"\xa5" * (size + 64)
    watch = bench.landing.watch(dst.get_absolute_address(0), size)
    descs = split_descriptors(dst.get_absolute_address(0), size, job["descriptor_size"], 1, width)
    await drv.program(ch, "c2h", descs)
    await drv.start(ch, "c2h")   # Armed: it waits for the window's data.
    await _window(drv, ch, "read", base, size, start=False)
    await drv.flush()
    msis_before = bench.msis
    t_start = get_sim_time("ns")
    await _window_start(drv, ch, "read")
    deadline = t_start + timeout
    while watch["done"] is None and get_sim_time("ns") < deadline:
        await First(watch["event"].wait(), Timer(2000, "ns"))
    t_end  = watch["done"]
    await bench.wait_msis(msis_before + len(descs))
    c2h_msis = bench.msis - msis_before
    status = await _poll(drv, f"pcie_dma{ch}_dram_read_status", 0b10, 100_000)
    words  = await drv.read(f"pcie_dma{ch}_dram_read_words")
    got    = dst[0:size]
    errors = sum(1 for a, b in zip(got, data) if a != b)
    errors += sum(1 for b in dst[size:size + 64] if b != 0xa5)
    errors += (0 if status is not None else 1) + abs(words - size // native)
    await drv.service_irq()
    await drv.stop(ch, "c2h")
    await drv.write(f"pcie_dma{ch}_dram_control", 0)
    rows.append(_row(bench, job, "c2h", t_start, t_end, errors, c2h_msis, len(descs)))
    return rows


def _row(bench, job, direction, t_start, t_end, errors, msis, msis_expected):
    cycles = bench.cycles(t_end - t_start) if t_end is not None else None
    size   = job["size"]
    return {
        "target":        "dram",
        "size":          size,
        "direction":     direction,
        "channels":      1,
        "dram_address":  job["dram_address"],
        "bytes":         size,
        "cycles":        cycles,
        "gbytes_per_s":  (size / (cycles / bench.sys_clk_hz) / 1e9) if cycles else 0.0,
        "errors":        errors + (1 if cycles is None else 0),
        "timed_out":     cycles is None,
        "msis":          msis,
        "msis_expected": msis_expected,
    }


async def _refusal(bench, job):
    drv  = bench.driver
    ch   = job["channels"][0]
    size = drv.csrs.constants["dram_size"]
    native = drv.csrs.constants["dram_native_bytes"]
    bad = [(16, native), (0, native + 16), (0, 0), (size - native, 2 * native), (size, native)]
    before  = await drv.read(f"pcie_dma{ch}_dram_refusals")
    errors  = 0
    for base, length in bad:
        for engine in ("write", "read"):
            await _window(drv, ch, engine, base, length)
            errors += (await drv.read(f"pcie_dma{ch}_dram_{engine}_status")) & 1   # Must not be busy.
    refused = await drv.read(f"pcie_dma{ch}_dram_refusals") - before
    errors += abs(refused - 2 * len(bad))
    return [{"target": "dram", "kind": "refusal", "requests": 2 * len(bad), "refused": refused,
             "errors": errors}]


async def _memtest(bench, job):
    drv, dut = bench.driver, bench.dut
    base, length = job["dram_address"], job["size"]
    results = {}
    for stuck in (0, 1):
        dut.sim_dram_stuck.value = stuck
        for unit in ("generator", "checker"):
            await drv.write(f"sdram_{unit}_reset", 1)
            await drv.write(f"sdram_{unit}_base",   base)
            await drv.write(f"sdram_{unit}_end",    base + length)
            await drv.write(f"sdram_{unit}_length", length)
            await drv.write(f"sdram_{unit}_random", 0b01)   # Random data, linear addresses.
        await drv.write("sdram_generator_start", 1)
        generated = await _poll(drv, "sdram_generator_done", 1, 200_000 + length * 4)
        await drv.write("sdram_checker_start", 1)
        checked = await _poll(drv, "sdram_checker_done", 1, 200_000 + length * 4)
        results[stuck] = {
            "completed": generated is not None and checked is not None,
            "errors":    await drv.read("sdram_checker_errors"),
        }
    dut.sim_dram_stuck.value = 0
    errors = sum(0 if r["completed"] else 1 for r in results.values())
    errors += (results[0]["errors"] != 0) + (results[1]["errors"] == 0)
    return [{"target": "dram", "kind": "memtest", "size": length, "dram_address": base,
             "checker_errors": results[0]["errors"], "checker_errors_stuck_bit": results[1]["errors"],
             "errors": errors}]
