# This file is part of hostlink.
# Copyright (c) 2026 hostlink developers
# SPDX-License-Identifier: BSD-2-Clause

"""cocotb bench: a simulated PCIe DMA SoC against the host model, driven like the Linux driver drives it.

Runs inside the simulator (see run.py). Reads its job list from the JSON file named by the environment
variable HOSTLINK_SIM_CONFIG and writes results to the file named there. With "profile_streams" in the
configuration, each result row also holds the named streams' occupancy during its job (stream_profile.py). Each job is one transfer:

- "h2c":    loopback off; the reader fetches a host buffer holding the count pattern; the FPGA's checker
            counts words and mismatches. Done when the hard block has delivered every completion byte.
- "c2h":    loopback off; the FPGA's generator feeds the writer; done when every byte has landed in host
            memory, which then must hold the count pattern.
- "bidir":  loopback on; the reader fetches random data, the writer returns it to a second buffer; done when
            every byte has landed; the two buffers must be equal.

Throughput is measured in simulated time, from the MMIO write that sets data moving (the readers' enables,
or the generators') to completion. The set-up before it, including arming the writers, which then wait for
data, has reached the SoC by then.
"""

import json
import os
import random
import logging

from hostlink.sim.pcie.triggers import FAST, RisingEdge, Timer, Event, First, get_sim_time, start_soon
from hostlink.sim.pcie.models.host import HostProfile
from hostlink.sim.pcie.driver import CSRMap, DMADriver, split_descriptors
from hostlink.sim.pcie.patterns import count_pattern, mismatched_bytes

# Helpers ------------------------------------------------------------------------------------------

def mps_code(size):
    return (size // 128 - 1).bit_length()

# Watchers -----------------------------------------------------------------------------------------

class LandingWatch:
    """Counts bytes the device writes into host buffers; records when a buffer is complete."""
    def __init__(self, rc):
        self.buffers = []
        original = rc.handle_mem_write_tlp
        async def handle(tlp):
            await original(tlp)
            now = get_sim_time("ns")
            addr, length = tlp.address, len(tlp.get_data())
            for b in self.buffers:
                lo, hi = max(addr, b["base"]), min(addr + length, b["base"] + b["size"])
                if lo < hi:
                    b["landed"] += hi - lo
                    if b["landed"] >= b["size"] and b["done"] is None:
                        b["done"] = now
                        b["event"].set()
        rc.handle_mem_write_tlp = handle
        from cocotbext.pcie.core.tlp import TlpType
        rc.register_rx_tlp_handler(TlpType.MEM_WRITE,    handle)
        rc.register_rx_tlp_handler(TlpType.MEM_WRITE_64, handle)

    def watch(self, base, size):
        b = {"base": base, "size": size, "landed": 0, "done": None, "event": Event()}
        self.buffers.append(b)
        return b

# Bench --------------------------------------------------------------------------------------------

class Bench:
    def __init__(self, dut, config):
        self.dut     = dut
        self.config  = config
        self.profile = HostProfile(**config["host"]).check()
        self.sys_clk_hz = config["sys_clk_hz"]
        self.log     = logging.getLogger("hostlink.bench")
        self.msis    = 0
        self.msi_event = Event()
        self.job_index = -1      # For the status line (report_progress): the job running,
        self.job_bytes = None    # and a function returning the bytes it has moved so far.

    async def setup(self):
        from cocotb.clock import Clock
        from cocotbext.pcie.core.caps import PciCapId
        from hostlink.sim.pcie.models.host import HostRootComplex
        cfg, profile = self.config, self.profile
        for name in ("cocotb.pcie", "cocotb"):
            logging.getLogger(name).setLevel(logging.WARNING)

        # The SoC's clock: the bench's own, or the hard block's user clock that the device model drives.
        sys_clock = cfg.get("sys_clock", "sim_sys_clk")
        self.sys_clk = getattr(self.dut, sys_clock)
        if sys_clock == "sim_sys_clk":
            period_ps = 2 * round(0.5e12 / self.sys_clk_hz)   # Whole picoseconds, even for a 50% duty cycle.
            start_soon(Clock(self.dut.sim_sys_clk, period_ps, unit="ps").start())
        self.dut.sim_sys_rst.value = 1
        if cfg.get("dram_clk_hz"):
            dram_period_ps = 2 * round(0.5e12 / cfg["dram_clk_hz"])
            start_soon(Clock(self.dut.sim_dram_clk, dram_period_ps, unit="ps").start())
            self.dut.sim_dram_rst.value   = 1
            self.dut.sim_dram_stuck.value = 0
        # A user core's own clock (sim/pcie/soc.py).
        user_core = cfg.get("user_core")
        if user_core and user_core["clock_port"]:
            user_period_ps = 2 * round(0.5e12 / user_core["clk_hz"])
            start_soon(Clock(getattr(self.dut, user_core["clock_port"]), user_period_ps, unit="ps").start())

        self.rc = HostRootComplex(profile)
        self.rc.max_payload_size      = mps_code(profile.max_payload_size)
        self.rc.max_read_request_size = mps_code(profile.max_read_request)
        self.landing = LandingWatch(self.rc)

        # What both hard blocks' models take.
        link = dict(link_speed=profile.link_speed, link_width=profile.link_width, data_width=cfg["data_width"],
                    user_clk_freq=cfg["user_clk_hz"], seed=profile.seed)
        if cfg["device"] == "s7":
            from hostlink.sim.pcie.models.s7_device import S7PcieDevice
            self.dev = S7PcieDevice(self.dut, cfg["hard_block_prefix"], **link,
                tx_backpressure_probability = profile.backpressure,
                rx_gap_probability          = profile.rx_gaps,
                completion_headers          = cfg.get("block_completion_headers"),
            )
        elif cfg["device"] == "us":
            from hostlink.sim.pcie.v7gen3 import make_v7gen3_device
            self.dev = make_v7gen3_device(self.dut, cfg["hard_block_prefix"], **link,
                backpressure = profile.backpressure,
                rc_straddle  = cfg.get("rc_straddle", False),
                reference    = cfg.get("reference", False),
            )
            if cfg.get("block_completion_headers") is not None:
                self.dev.rx_buf_cplh_fc_limit = self.dev.cplh_limit = cfg["block_completion_headers"]
        else:
            raise ValueError(f"unknown device model {cfg['device']!r}")
        self.rc.make_port().connect(self.dev)

        for _ in range(20):
            await RisingEdge(self.sys_clk)
        self.dut.sim_sys_rst.value = 0
        if cfg.get("dram_clk_hz"):
            self.dut.sim_dram_rst.value = 0
        for _ in range(50):
            await RisingEdge(self.sys_clk)

        await self.rc.enumerate()
        self.function = self.rc.find_device(self.dev.functions[0].pcie_id)
        await self.function.enable_device()
        await self.function.set_master()
        # The OS (or the driver, as Linux's pcie_set_readrq()) programs the device's Max Read Request Size;
        # cocotbext's enumeration leaves it at its reset value.
        await self.function.set_readrq(mps_code(self.profile.max_read_request))
        # cocotbext's enumeration sets Extended Tag Field Enable where the device supports it, as Linux does.
        if not self.profile.extended_tag:
            devctl = await self.function.capability_read_dword(PciCapId.EXP, 0x8)
            await self.function.capability_write_dword(PciCapId.EXP, 0x8, devctl & ~(1 << 8))
        await self.function.alloc_irq_vectors(1, 1)
        self.msi_times = []      # When each MSI reached the host (ns).
        async def on_msi():
            self.msi_times.append(get_sim_time("ns"))
            self.msis += 1
            self.msi_event.set()
        self.function.request_irq(0, on_msi)
        self.driver = DMADriver(self.function.bar_window[0], CSRMap(cfg["csr_json"]))
        self.rng = random.Random(profile.seed)

    def cycles(self, ns):
        return round(ns * 1e-9 * self.sys_clk_hz)

    async def wait_msis(self, expected, timeout_ns=50_000):
        deadline = get_sim_time("ns") + timeout_ns
        while self.msis < expected and get_sim_time("ns") < deadline:
            self.msi_event.clear()
            await First(self.msi_event.wait(), Timer(1000, "ns"))
        return self.msis

    # Faults -------------------------------------------------------------------------------------

    async def start_h2c(self, channel, size, descriptors=None, check=True, irq_every=1):
        """The channel's reader fetches a fresh count-pattern buffer of `size` bytes (cut by
        `descriptors(base)` if given), its checker cleared first. Returns the buffer's bus address."""
        drv = self.driver
        src = self.rc.mem_pool.alloc_region(size + 8192)
        src[0:size] = count_pattern(size)
        base = src.get_absolute_address(0)
        descs = descriptors(base) if descriptors else \
            split_descriptors(base, size, 65536, irq_every, self.config["data_width"]//8)
        await drv.set_loopback(channel, False)
        await drv.program(channel, "h2c", descs, check=check)
        await drv.clear_checker(channel)
        return base

    async def wait_for(self, done, timeout_ns, poll_ns=2000):
        """Polls `done()` (async) until true or `timeout_ns` have passed; returns its last value."""
        deadline = get_sim_time("ns") + timeout_ns
        while True:
            value = await done()
            if value or get_sim_time("ns") >= deadline:
                return value
            await Timer(poll_ns, "ns")

    async def run_job(self, job):
        """One job of the configuration (the module's docstring): its result rows."""
        if job.get("kind") == "fault":
            from hostlink.sim.pcie.fault_jobs import run_fault_job
            return await run_fault_job(self, job)
        if job.get("kind") == "soft_reset":
            from hostlink.sim.pcie.reset_jobs import run_soft_reset_job
            return await run_soft_reset_job(self, job)
        if job.get("kind") == "stream":
            from hostlink.sim.pcie.stream_jobs import run_stream_job
            return await run_stream_job(self, job)
        if job.get("target") == "dram":
            from hostlink.sim.pcie.dram_jobs import run_dram_job
            return await run_dram_job(self, job)
        return await self.run_transfer(job)

    # Transfers ----------------------------------------------------------------------------------

    async def run_transfer(self, job):
        """An h2c, c2h, bidir or user job: one transfer per channel, all at once."""
        kind, size, channels = job["kind"], job["size"], job["channels"]
        # "user": both directions at once through the channel's user core, its results checked against the
        # core's model.
        directions = {"h2c": ["h2c"], "c2h": ["c2h"], "bidir": ["h2c", "c2h"], "user": ["h2c", "c2h"]}[kind]
        user_core, model = (await self._select_user_core(job)) if kind == "user" else (None, None)
        plan, expected_msis = await self._program_transfer(job, directions)
        t_start, before = await self._start_transfer(plan, kind, size)
        t_end = await self._wait_transfer(plan, kind, size * len(channels), before["cpl_bytes"])
        msi_fields = await self._msi_fields(kind, t_end, before["msis"], expected_msis)
        errors = await self._check_and_stop(plan, kind, size, directions, model, user_core)
        user_counters = (await self._release_user_core(user_core)) if kind == "user" else None
        self.job_bytes = None
        errors += self._host_errors_since(before)
        timed_out = t_end is None
        cycles = self.cycles(t_end - t_start) if not timed_out else None
        bytes_per_direction = size * len(channels)
        rows = []
        for d in directions:
            rows.append({
                "size":          size,
                "direction":     d if kind != "bidir" else "bidir",
                "channels":      len(channels),
                "bytes":         bytes_per_direction,
                "cycles":        cycles,
                "gbytes_per_s":  (bytes_per_direction / (cycles / self.sys_clk_hz) / 1e9) if cycles else 0.0,
                "errors":        errors + (1 if timed_out else 0),
                "timed_out":     timed_out,
                **msi_fields,
            })
            if user_counters is not None:
                rows[-1]["user_core"]     = user_core["spec"]
                rows[-1]["user_counters"] = user_counters
            if kind in ("bidir", "user"):
                rows[-1]["direction"] = kind
                break
        return rows

    async def _select_user_core(self, job):
        """The channel's user port on, the core's settings (the job's over the SoC's) written. Returns the
        core's configuration with those settings, and its model."""
        user_core = self.config.get("user_core")
        if not user_core or job["channels"] != [user_core["channel"]]:
            raise ValueError("a user job runs on the channel of the SoC's user core alone")
        from hostlink.cores.pcie.user_core import load_user_core
        model = load_user_core(user_core["spec"]).model
        user_core = dict(user_core, settings=dict(user_core["settings"], **job.get("settings", {})))
        for name, value in user_core["settings"].items():
            await self.driver.write(f"{user_core['csr_prefix']}_{name}", value)
        await self.driver.write(f"pcie_dma{user_core['channel']}_user_select", 1)
        return user_core, model

    async def _program_transfer(self, job, directions):
        """Per channel, the host buffers with their descriptors, the loopback and the checker set for the
        job; then the engines' interrupts enabled. Returns the plan (per channel: "channel", and "src" with
        the "data" it holds, "dst" with its landing "watch") and the MSIs the descriptors ask for."""
        drv, kind, size = self.driver, job["kind"], job["size"]
        irq_mask = 0
        expected_msis = 0
        plan = []
        for ch in job["channels"]:
            entry = {"channel": ch}
            if "h2c" in directions:
                src = self.rc.mem_pool.alloc_region(max(size, 4))
                data = count_pattern(size) if kind == "h2c" else self.rng.randbytes(size)
                src[0:size] = data
                entry["src"], entry["data"] = src, data
                descs = self._transfer_descriptors(job, src.get_absolute_address(0))
                await drv.program(ch, "h2c", descs)
                irq_mask |= drv.irq_bit(ch, "h2c")
                expected_msis += sum(1 for d in descs if d[2])
            if "c2h" in directions:
                dst = self.rc.mem_pool.alloc_region(max(size, 4) + 64)
                dst[0:size + 64] = b"\xa5" * (size + 64)   # Guard bytes past the end must survive.
                entry["dst"] = dst
                entry["watch"] = self.landing.watch(dst.get_absolute_address(0), size)
                descs = self._transfer_descriptors(job, dst.get_absolute_address(0))
                await drv.program(ch, "c2h", descs)
                irq_mask |= drv.irq_bit(ch, "c2h")
                expected_msis += sum(1 for d in descs if d[2])
            await drv.set_loopback(ch, kind == "bidir")
            if kind == "h2c":
                await drv.clear_checker(ch)
            plan.append(entry)
        await drv.enable_irqs(irq_mask)
        return plan, expected_msis

    def _transfer_descriptors(self, job, base):
        return split_descriptors(base, job["size"], job["descriptor_size"], job.get("irq_every", 1),
                                 self.config["data_width"] // 8)

    async def _start_transfer(self, plan, kind, size):
        """Sets the transfer going. Returns the start time, and the counts then (MSIs, completion bytes,
        bad reads and writes, lost completions) from which the job's own share is taken."""
        drv = self.driver
        # Writers are armed first: they wait for data (the loopback's or the generator's), so arming them is
        # set-up, like posting receive buffers. The clock starts once the set-up has reached the SoC
        # (hundreds of posted writes for a large transfer's descriptors, which would otherwise still be
        # queued ahead of the start), at the write that sets data moving: the readers' enables, or the
        # generators'.
        for entry in plan:
            if "dst" in entry:
                await drv.start(entry["channel"], "c2h")
        if kind == "c2h":
            for entry in plan:
                await drv.set_generator_length(entry["channel"], size)
        await drv.flush()
        before = {"msis": self.msis, "cpl_bytes": self.dev.rx_cpl_bytes, "bad_reads": self.rc.bad_reads,
                  "bad_writes": self.rc.bad_writes, "cpl_drops": getattr(self.dev, "rx_cpl_drops", 0)}
        t_start = get_sim_time("ns")
        for entry in plan:
            if "src" in entry:
                await drv.start(entry["channel"], "h2c")
        if kind == "c2h":
            for entry in plan:
                await drv.set_generator(entry["channel"], True)
        if kind == "h2c":
            self.job_bytes = lambda: self.dev.rx_cpl_bytes - before["cpl_bytes"]
        else:
            self.job_bytes = lambda: sum(entry["watch"]["landed"] for entry in plan)
        return t_start, before

    async def _wait_transfer(self, plan, kind, total, cpl_before):
        """Waits until the `total` bytes have moved: host to FPGA, the hard block has delivered every
        completion byte; else every byte has landed in host memory. Returns when (None: timed out)."""
        timeout_ns = 200_000 + total * 8
        deadline = get_sim_time("ns") + timeout_ns
        if kind == "h2c":
            while self.dev.rx_cpl_bytes - cpl_before < total and get_sim_time("ns") < deadline:
                await Timer(500, "ns")
            return self.dev.rx_cpl_last_ns if self.dev.rx_cpl_bytes - cpl_before >= total else None
        for entry in plan:
            w = entry["watch"]
            while w["done"] is None and get_sim_time("ns") < deadline:
                await First(w["event"].wait(), Timer(2000, "ns"))
        dones = [e["watch"]["done"] for e in plan]
        return max(dones) if all(d is not None for d in dones) else None

    async def _msi_fields(self, kind, t_end, msis_before, expected_msis):
        """The job's MSIs, as the driver's handler sees them (then serviced): the result row's fields."""
        await self.wait_msis(msis_before + expected_msis)
        msis = self.msis - msis_before
        # FPGA to host: how long before the last data landed the last MSI reached the host (> 0: the MSI
        # overtook the writes it reports; an interrupt-driven host may then read a buffer not yet whole).
        msi_ahead_ns = None
        if kind != "h2c" and msis and t_end is not None:
            msi_ahead_ns = round(t_end - self.msi_times[-1], 3)
        # Host to FPGA: how long before the host last read memory for the job's reads the last MSI reached
        # it (> 0: the MSI overtook reads the host had not served; a host that refills a buffer as soon as it
        # is reported would change what those reads return).
        msi_ahead_of_reads_ns = None
        if kind == "h2c" and msis and t_end is not None and self.rc.last_read_data_ns is not None:
            msi_ahead_of_reads_ns = round(self.rc.last_read_data_ns - self.msi_times[-1], 3)
        await self.driver.service_irq()
        return {"msis": msis, "msis_expected": expected_msis,
                "msi_ahead_of_data_ns": msi_ahead_ns, "msi_ahead_of_reads_ns": msi_ahead_of_reads_ns}

    async def _check_and_stop(self, plan, kind, size, directions, model, user_core):
        """Errors in what each channel moved (the checker's counts, or the host buffer against what it
        must hold, and its guard bytes); each channel's engines stopped, its loopback off."""
        drv = self.driver
        errors = 0
        for entry in plan:
            ch = entry["channel"]
            if kind == "h2c":
                # Let the last words drain through the PHY's FIFOs into the checker.
                await Timer(2000, "ns")
                words, mismatches = await drv.checker_counts(ch)
                errors += mismatches + abs(words - (size + 3) // 4)
            if kind == "c2h":
                await drv.set_generator(ch, False)
                got = entry["dst"][0:size]
                errors += mismatched_bytes(got, count_pattern(size))
            if kind == "bidir":
                got = entry["dst"][0:size]
                errors += mismatched_bytes(got, entry["data"])
            if kind == "user":
                got = entry["dst"][0:size]
                errors += mismatched_bytes(got, model(entry["data"], user_core["settings"]))
            if "dst" in entry:
                guard = entry["dst"][size:size + 64]
                errors += sum(1 for b in guard if b != 0xa5)
            for d in directions:
                await drv.stop(ch, d)
            await drv.set_loopback(ch, False)
        return errors

    async def _release_user_core(self, user_core):
        """The user port's counters; then the channel back to its own patterns."""
        prefix = f"pcie_dma{user_core['channel']}_user"
        counters = {name: await self.driver.read(f"{prefix}_{name}")
                    for name in ("h2c_words", "h2c_waits", "c2h_words", "c2h_waits")}
        await self.driver.write(f"{prefix}_select", 0)
        return counters

    def _host_errors_since(self, before):
        """Bad reads and writes the host has seen since `before`, and completions the hard block's model
        lost for want of completion space (s7 model)."""
        return (self.rc.bad_reads - before["bad_reads"] + self.rc.bad_writes - before["bad_writes"]
                + getattr(self.dev, "rx_cpl_drops", 0) - before["cpl_drops"])

# Progress -----------------------------------------------------------------------------------------

async def report_progress(bench, path, interval_s=0.5):
    """For the status line of ./sim.py on a terminal (run.py): about every `interval_s` of wall-clock
    time, the job running, the simulated time and the bytes the job has moved, written to `path` (replaced
    whole, so the reader never sees half a record). Started only then: it reads the bench's state and
    drives nothing, and a run without it is the run that measures."""
    import time
    last = 0.0
    while True:
        await Timer(10, "us")
        now = time.monotonic()
        if now - last < interval_s:
            continue
        last = now
        record = {"job": bench.job_index, "sim_ns": get_sim_time("ns"),
                  "job_bytes": bench.job_bytes() if bench.job_bytes else 0}
        with open(path + ".new", "w") as f:
            json.dump(record, f)
        os.replace(path + ".new", path)

# Entry --------------------------------------------------------------------------------------------

async def run_all(bench, config):
    """The bench's whole run on either path: set-up and enumeration, the jobs, the results file."""
    if config.get("progress"):
        start_soon(report_progress(bench, config["progress"]))
    await bench.setup()
    results = {"enumeration": {
        "vendor_id":  bench.function.vendor_id,
        "device_id":  bench.function.device_id,
        "bar0_size":  bench.function.bar_window[0].size if hasattr(bench.function.bar_window[0], "size") else None,
        "msi_enabled": int(await bench.driver.read("pcie_phy_phy_msi_enable")),
        "bus_master":  int(await bench.driver.read("pcie_phy_phy_bus_master_enable")),
        "link_status": int(await bench.driver.read("pcie_phy_phy_link_status")),
        "max_payload_size": int(await bench.driver.read("pcie_phy_phy_max_payload_size")),
        "max_request_size": int(await bench.driver.read("pcie_phy_phy_max_request_size")),
    }, "results": []}
    scratch_reset = await bench.driver.read("ctrl_scratch")
    await bench.driver.write("ctrl_scratch", 0xdeadbeef)
    results["enumeration"]["scratch"] = [scratch_reset, await bench.driver.read("ctrl_scratch")]
    bench.log.warning("enumerated: %s", results["enumeration"])
    profiler = None
    if config.get("profile_streams"):
        from hostlink.sim.pcie.stream_profile import StreamProfiler
        profiler = StreamProfiler(bench.dut, bench.sys_clk, config["profile_streams"])
    for index, job in enumerate(config["jobs"]):
        bench.job_index = index
        bench.log.warning("job %s", job)
        if profiler:
            profiler.start()
        rows = await bench.run_job(job)
        if profiler:
            profile = profiler.stop()
            for row in rows:
                row["stream_profile"] = profile
        results["results"].extend(rows)
        bench.log.warning("result %s", results["results"][-1])
    results["host_reads"] = {"served": bench.rc.reads_served, "largest_bytes": bench.rc.largest_read,
        "bad": bench.rc.bad_reads, "most_blocks_owed": bench.rc.most_blocks_owed}
    if hasattr(bench.dev, "rx_cpl_drops"):
        results["completion_space"] = {"headers": bench.dev.cplh_limit, "most_headers_held": bench.dev.most_cplh_used,
            "dropped": bench.dev.rx_cpl_drops,
            # Straddled RC (VC709): no headers reserved; the user logic takes a beat every cycle but where
            # one beat ends two completions (`rc_wait_cycles`: cycles a beat waited on the user logic).
            "rc_straddle": bool(config.get("rc_straddle")),
            "rc_wait_cycles": getattr(bench.dev, "rc_wait_cycles", None)}
    results["host_writes"] = {"bad": bench.rc.bad_writes}
    with open(config["results"], "w") as f:
        json.dump(results, f, indent=2)


if not FAST:
    import cocotb

    @cocotb.test()
    async def dma_bench(dut):
        with open(os.environ["HOSTLINK_SIM_CONFIG"]) as f:
            config = json.load(f)
        await run_all(Bench(dut, config), config)
