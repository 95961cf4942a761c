# This file is part of hostlink.
# Copyright (c) 2026 hostlink developers
# SPDX-License-Identifier: BSD-2-Clause

"""The bench of ./sim.py driver: the simulated SoC on User-Mode Linux's PCI bus.

Runs on the SoC's fast path (sim/pcie/fast/, the default) or inside the simulator under cocotb (the reference
path, `--reference`); sim/uml/run.py starts either. The SoC, its device model and the root complex are set
up exactly as for ./sim.py dma (sim/pcie/bench.py: reset, enumeration, bus mastering, MRRS). Then the
virtio-pcidev bridge (pcidev.py) listens on a unix socket, and the User-Mode Linux kernel is started
with that socket as its PCI device; the simulation runs until the kernel exits or the wall-clock
limit is reached, when the kernel is ended. The summary goes to the file named by "results"; while the
kernel runs, its process id is in the file named by "pid_file".

With several boards (./sim.py driver --boards), each other board's simulator runs this bench with
"serve_only": it serves its own socket to the kernel the first one starts (which waits for the others'
sockets, "other_sockets"), until the first one writes "stop_file".
"""

import json
import os
import shutil
import signal
import socket
import struct
import subprocess
import time

from hostlink.sim.pcie.bench import Bench
from hostlink.sim.pcie.soc import SOFT_RESET_NS
from hostlink.sim.pcie.triggers import FAST, Timer, get_sim_time, start_soon
from hostlink.sim.uml.pcidev import PciDevBridge, HostActivity

MCONSOLE_MAGIC = 0xcafebabe


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


def mconsole(path, command, timeout_s=10):
    """The answer of the kernel's management console (User-Mode Linux's mconsole, a unix datagram socket
    at `path`) to `command`, e.g. "sysrq w" (its output comes back in the answer); a line saying why not
    when it does not answer. The console answers in the kernel's interrupt context: a kernel that spins
    with interrupts on still does, one that spins with them off does not."""
    request = command.encode()
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    try:
        sock.bind(f"\0hostlink-mconsole-{os.getpid()}")   # Abstract: where the console sends its answer.
        sock.settimeout(timeout_s)
        sock.sendto(struct.pack("<III512s", MCONSOLE_MAGIC, 2, len(request), request), path)
        parts = []
        while True:
            reply = sock.recv(12 + 512)
            _, more, length = struct.unpack_from("<III", reply)
            parts.append(reply[12:12 + length].decode(errors="replace"))
            if not more:
                return "".join(parts)
    except OSError as error:
        return f"(the kernel's console did not answer {command!r}: {error})"
    finally:
        sock.close()


def process_line(pid):
    """`pid`'s state and command line, from /proc: which of the kernel's processes was running."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            state = f.read().rsplit(")", 1)[1].split()[0]
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            cmdline = f.read().replace(b"\0", b" ").decode(errors="replace").strip()
    except (OSError, IndexError):
        return f"{pid} (gone)"
    return f"{pid} state {state}: {cmdline[:200]}"


def start_kernel(uml):
    """Start the User-Mode Linux kernel (uml["command"], its console into uml["console_log"], its memory file
    in uml["tmpdir"]) in a session of its own, and name its process group in uml["pid_file"], for the run
    (sim/uml/harness.py's end_kernel) to end if this simulator is ended first: the kernel would outlive it.
    The bench removes the file once the kernel has ended. Returns the kernel's process."""
    with open(uml["console_log"], "w") as console:
        kernel = subprocess.Popen(uml["command"], stdin=subprocess.DEVNULL, stdout=console,
            stderr=subprocess.STDOUT, start_new_session=True, env=dict(os.environ, TMPDIR=uml["tmpdir"]))
    with open(uml["pid_file"], "w") as f:
        f.write(f"{kernel.pid}\n")
    return kernel


def end_hung_kernel(kernel, host, uml, stuck, log):
    """End a kernel that computed for uml["stuck_s"] without a register access (`stuck`) or outlived the
    run's uml["timeout_s"], with its every process. Returns why it was ended and what it was doing: the
    stacks of its host threads, the last of its processes seen running (`host`, the bridge's HostActivity)
    and its blocked tasks (sysrq w), all of which go to `log` too, with every task's stack (sysrq t)."""
    why = (f"the machine computed for {uml['stuck_s']} s without a register access" if stuck else
           f"the run's --timeout ({uml['timeout_s']} s) is up")
    stacks = kernel_backtrace(kernel.pid)
    log.error("%s; its stacks when it was ended:\n%s", why, stacks)
    running = process_line(host.running_pid) if host.running_pid else "none seen"
    blocked = mconsole(uml["mconsole"], "sysrq w")
    log.error("last process seen running: %s\nblocked tasks (sysrq w):\n%s\nall tasks (sysrq t):\n%s",
              running, blocked, mconsole(uml["mconsole"], "sysrq t"))
    os.killpg(kernel.pid, signal.SIGKILL)
    kernel.wait()
    return why, f"{stacks}\nlast process seen running: {running}\nblocked tasks (sysrq w):\n{blocked}"


def wait_for_other_boards(sockets, timeout_s, ended=()):
    """Wait until the other boards' simulators (serve_another_board) listen on their sockets: the kernel
    finds its PCI devices when it starts. `ended`: for each, a file that appears when its simulator has
    ended (sim/uml/run.py): one that ended without listening is an error at once, not at the timeout."""
    started = time.monotonic()
    while not all(os.path.exists(path) for path in sockets):
        for number, (path, marker) in enumerate(zip(sockets, ended), start=1):
            if os.path.exists(marker) and not os.path.exists(path):
                raise RuntimeError(f"board {number}'s simulator ended before it listened on {path}: see "
                                   f"{os.path.join(os.path.dirname(marker), 'sim.log')}")
        if time.monotonic() - started > timeout_s:
            missing = [path for path in sockets if not os.path.exists(path)]
            raise RuntimeError(f"the other boards' simulators did not start listening ({', '.join(missing)})")
        time.sleep(0.1)


async def serve_another_board(bench, bridge, uml, config):
    """A second (third, ...) board on the machine's PCI bus: serve the kernel that the first board's
    simulator starts, until that simulator says it is done (the file `stop_file`), the kernel closes the
    connection, or the run's time is up. Simulated time is held while the kernel computes, as for the
    first board, once its process id is known (the first simulator's `pid_file`)."""
    started   = time.monotonic()
    sim_start = get_sim_time("ns")
    report    = started
    while not os.path.exists(uml["stop_file"]) and time.monotonic() - started < uml["timeout_s"]:
        if bridge.backend.connected and bridge.backend.closed:
            break
        if bridge.host is None:
            try:
                with open(uml["pid_file"]) as f:
                    bridge.host = HostActivity(int(f.read()))
            except (OSError, ValueError):
                pass
        now = time.monotonic()
        if now - report >= 10:
            report = now
            bench.log.warning("progress: %.0f s wall, %.3f ms simulated, %d BAR reads, %d BAR writes, %d MSIs, "
                "%d DMA reads served", now - started, (get_sim_time("ns") - sim_start) / 1e6, bridge.mmio_reads,
                bridge.mmio_writes, bridge.msis, bench.rc.reads_served)
        await Timer(20_000, "ns")
    bridge.close()
    write_results(config["results"], bridge, bench, started, sim_start, kernel_exit=None, timed_out=False,
                  stuck=False, why=None, stacks=None)


async def run_driver(bench, config):
    """Set the bench up, serve the kernel's PCI bus, start the kernel (or serve another board's), and write
    the summary."""
    uml   = config["uml"]
    await bench.setup()
    csrs   = bench.driver.csrs
    # The SoC's soft reset, and the time it takes: the simulated PLL's relock (ZC706, KC705), and a margin.
    soft_reset = (0, csrs.offset("ctrl_reset"), SOFT_RESET_NS + 2000) if csrs.has("ctrl_reset") else None
    bridge = PciDevBridge(bench.rc, bench.function, uml["socket"], soft_reset=soft_reset,
        msi_ack=(0, csrs.offset("pcie_msi_clear")), fault_at=uml.get("fault_at"))
    start_soon(bridge.run())
    if uml.get("serve_only"):
        await serve_another_board(bench, bridge, uml, config)
        return
    wait_for_other_boards(uml.get("other_sockets", ()), uml["timeout_s"], uml.get("other_ended", ()))

    kernel = start_kernel(uml)
    bridge.host = HostActivity(kernel.pid)
    started  = time.monotonic()
    sim_start = get_sim_time("ns")
    timed_out = False
    stuck     = False
    stacks    = None
    why       = None
    report = started
    # A kernel that computes for `stuck_s` of wall-clock time without a single register access is stuck
    # in a loop (CI once saw rmmod spin for an hour, out of reach of the command's own time limit): the
    # run is ended then, with the kernel's stacks, rather than at its --timeout. Counted from the last
    # access (when, the bridge's command count, the time it had held the simulation), so a loop is ended
    # `stuck_s` after it began, not at the end of a fixed window.
    last_access = (started, bridge.commands, bridge.held_s)
    step_started = started
    while kernel.poll() is None:
        now = time.monotonic()
        if bridge.commands != last_access[1]:
            last_access = (now, bridge.commands, bridge.held_s)
        quiet_s = now - last_access[0]
        stuck = quiet_s >= uml["stuck_s"] and bridge.held_s - last_access[2] > 0.8 * quiet_s
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
            why, stacks = end_hung_kernel(kernel, bridge.host, uml, stuck, bench.log)
            break
        # While the kernel computes, the bridge holds the simulation (50 ms of wall time per 50 ns poll):
        # 20 us simulated would then be 20 s of wall time between two of these checks, so the step shrinks
        # to keep them about a second apart.
        step_ns = 1_000 if time.monotonic() - step_started > 1 else 20_000
        step_started = time.monotonic()
        await Timer(step_ns, "ns")
    os.remove(uml["pid_file"])
    bridge.close()

    write_results(config["results"], bridge, bench, started, sim_start, kernel.returncode, timed_out, stuck, why,
                  stacks)


def write_results(path, bridge, bench, started, sim_start, kernel_exit, timed_out, stuck, why, stacks):
    if FAST:
        # The compiled host counts the DMA writes into the kernel's memory (and the fault it injects there).
        bridge.dma_bytes_written, bridge.faults_injected = bench.rc.dma_bytes_written, bench.rc.faults_injected
    results = {
        "kernel_exit":   kernel_exit,
        "timed_out":     timed_out,
        "kernel_stuck":  stuck,
        "ended_because": why,
        "kernel_stacks": stacks,
        "wall_s":        round(time.monotonic() - started, 1),
        "sim_ns":        get_sim_time("ns") - sim_start,
        "connected":     bridge.backend.connected,
        "commands":      bridge.commands,
        "mmio_reads":    bridge.mmio_reads,
        "mmio_writes":   bridge.mmio_writes,
        "mmio_read_errors": bridge.read_errors,
        "msis":          bridge.msis,
        "soft_resets":   bridge.soft_resets,
        "msis_merged":   bridge.msis_merged,
        "dma_bytes_written": bridge.dma_bytes_written,
        "faults_injected": bridge.faults_injected,
        "held_s":        round(bridge.held_s, 1),
        "msi_latency_ns": {"mean": bridge.msi_latency_total_ns / max(bridge.msis, 1),
                           "max": bridge.msi_latency_max_ns},
        "host_reads":    {"served": bench.rc.reads_served, "largest_bytes": bench.rc.largest_read,
                          "bad": bench.rc.bad_reads},
    }
    with open(path, "w") as f:
        json.dump(results, f, indent=2)


if not FAST:
    import cocotb

    @cocotb.test()
    async def driver_bench(dut):
        with open(os.environ["HOSTLINK_SIM_CONFIG"]) as f:
            config = json.load(f)
        await run_driver(Bench(dut, config), config)
