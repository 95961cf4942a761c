# This file is part of hostlink.
# Copyright (c) 2026 hostlink developers
# SPDX-License-Identifier: BSD-2-Clause

"""cocotb bench of ./sim.py driver: the simulated SoC on User-Mode Linux's PCI bus.

Runs inside the simulator (see sim/uml/run.py). The SoC, its device model and the root complex are set
up exactly as for ./sim.py dma (sim/pcie/bench.py: reset, enumeration, bus mastering, MRRS). Then the
virtio-pcidev bridge (pcidev.py) listens on a unix socket, and the User-Mode Linux kernel is started
with that socket as its PCI device; the simulation runs until the kernel exits or the wall-clock
limit is reached, when the kernel is ended. The summary goes to the file named by "results"; while the
kernel runs, its process id is in the file named by "pid_file".
"""

import json
import os
import shutil
import signal
import subprocess
import time

import cocotb
from cocotb.triggers import Timer
from cocotb.utils import get_sim_time

from hostlink.sim.pcie.bench import Bench
from hostlink.sim.uml.pcidev import PciDevBridge, HostActivity


def kernel_backtrace(pid):
    """The host stack of each thread of the User-Mode Linux kernel's process (`pid`), by gdb: in this
    process the kernel runs its code, so a kernel that spins shows where. A line saying why not when gdb
    is missing or fails."""
    gdb = shutil.which("gdb")
    if gdb is None:
        return "(no gdb on this machine: no stacks)"
    try:
        r = subprocess.run([gdb, "-nx", "-batch", "-p", str(pid), "-ex", "thread apply all bt 30"],
            capture_output=True, text=True, timeout=120)
    except (OSError, subprocess.TimeoutExpired) as error:
        return f"(gdb failed: {error})"
    return "\n".join(line for line in r.stdout.splitlines() if line.startswith(("#", "Thread")))


@cocotb.test()
async def driver_bench(dut):
    with open(os.environ["HOSTLINK_SIM_CONFIG"]) as f:
        config = json.load(f)
    uml   = config["uml"]
    bench = Bench(dut, config)
    await bench.setup()
    csrs   = bench.driver.csrs
    withheld = [(0, csrs.offset("ctrl_reset"))] if csrs.has("ctrl_reset") else []
    bridge = PciDevBridge(bench.rc, bench.function, uml["socket"], withheld_writes=withheld,
        msi_ack=(0, csrs.offset("pcie_msi_clear")), fault_at=uml.get("fault_at"))
    cocotb.start_soon(bridge.run())

    with open(uml["console_log"], "w") as console:
        kernel = subprocess.Popen(uml["command"], stdin=subprocess.DEVNULL, stdout=console,
            stderr=subprocess.STDOUT, start_new_session=True, env=dict(os.environ, TMPDIR=uml["tmpdir"]))
    # The kernel's process group, for ./sim.py driver to end if this simulator is ended first (SIGTERM):
    # the kernel has a session of its own and would outlive it. Removed once the kernel has ended.
    pid_file = uml.get("pid_file")
    if pid_file:
        with open(pid_file, "w") as f:
            f.write(f"{kernel.pid}\n")
    bridge.host = HostActivity(kernel.pid)
    started  = time.monotonic()
    sim_start = get_sim_time("ns")
    timed_out = False
    stuck     = False
    stacks    = None
    report = started
    # A kernel that computes for `stuck_s` of wall-clock time without a single register access is stuck
    # in a loop (CI once saw rmmod spin for an hour, out of reach of the command's own time limit): the
    # run is ended then, with the kernel's stacks, rather than at its --timeout.
    watch = (started, bridge.commands, bridge.held_s)
    while kernel.poll() is None:
        now = time.monotonic()
        if now - watch[0] >= uml["stuck_s"]:
            stuck = bridge.commands == watch[1] and bridge.held_s - watch[2] > 0.8 * (now - watch[0])
            watch = (now, bridge.commands, bridge.held_s)
        if now - report >= 10:
            # Progress in the simulation log, to tell a slow run from a stuck one.
            report = now
            bench.log.warning("progress: %.0f s wall, %.3f ms simulated, %d BAR reads, %d BAR writes, "
                "%d MSIs (kernel's acknowledgement after %.0f ns simulated on average, %.0f at most), "
                "%d DMA reads served, simulation held %.0f s", now - started,
                (get_sim_time("ns") - sim_start) / 1e6, bridge.mmio_reads, bridge.mmio_writes, bridge.msis,
                bridge.msi_latency_total_ns / max(bridge.msis, 1), bridge.msi_latency_max_ns,
                bench.rc.reads_served, bridge.held_s)
            serving = bridge.serving_for()
            if serving is not None and serving[1] >= 10:
                bench.log.warning("the bridge has been serving the kernel's %s for %.0f s; the block model "
                    "holds %s TLPs for the SoC and %s from it", *serving,
                    len(getattr(bench.dev, "rx_queue", ())) if hasattr(bench.dev, "rx_queue") else "?",
                    bench.dev.tx_queue.qsize() if hasattr(bench.dev, "tx_queue") else "?")
        if stuck or now - started > uml["timeout_s"]:
            timed_out = True
            why = (f"the machine computed for {uml['stuck_s']} s without a register access" if stuck else
                   f"the run's --timeout ({uml['timeout_s']} s) is up")
            stacks = kernel_backtrace(kernel.pid)
            bench.log.error("%s; its stacks when it was ended:\n%s", why, stacks)
            os.killpg(kernel.pid, signal.SIGKILL)
            kernel.wait()
            break
        await Timer(20_000, "ns")
    if pid_file:
        os.remove(pid_file)
    bridge.close()

    results = {
        "kernel_exit":   kernel.returncode,
        "timed_out":     timed_out,
        "kernel_stuck":  stuck,
        "kernel_stacks": stacks,
        "wall_s":        round(time.monotonic() - started, 1),
        "sim_ns":        get_sim_time("ns") - sim_start,
        "connected":     bridge.backend.connected,
        "commands":      bridge.commands,
        "mmio_reads":    bridge.mmio_reads,
        "mmio_writes":   bridge.mmio_writes,
        "mmio_read_errors": bridge.read_errors,
        "msis":          bridge.msis,
        "withheld_writes": bridge.withheld,
        "msis_merged":   bridge.msis_merged,
        "dma_bytes_written": bridge.dma_bytes_written,
        "faults_injected": bridge.faults_injected,
        "held_s":        round(bridge.held_s, 1),
        "msi_latency_ns": {"mean": bridge.msi_latency_total_ns / max(bridge.msis, 1),
                           "max": bridge.msi_latency_max_ns},
        "host_reads":    {"served": bench.rc.reads_served, "largest_bytes": bench.rc.largest_read,
                          "bad": bench.rc.bad_reads},
    }
    with open(config["results"], "w") as f:
        json.dump(results, f, indent=2)
