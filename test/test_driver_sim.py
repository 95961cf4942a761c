# This file is part of hostlink.
# Copyright (c) 2026 hostlink developers
# SPDX-License-Identifier: BSD-2-Clause

"""./sim.py driver: LitePCIe's real driver and tools on the simulated SoC, in User-Mode Linux (sim/uml/).

The quick tests check the pieces (the dma_test output parser, the vhost-user memory and virtqueue code,
the ring rewrite, the kernel-log check, the message when the kernel is missing). The `uml` tests boot
the kernel on the ZC706 and VC709 SoCs and run LitePCIe's tools, a few MiB of data checked (minutes
each); they need `make uml-kernel` and are skipped without it.
"""

import contextlib
import json
import re
import os
import signal
import struct
import subprocess
import sys
import time

import pytest

from hostlink.sim.driver import parse_dma_test, parse_status, evaluate, main as driver_main
from hostlink.sim.uml.report import kernel_problems
from hostlink.sim.uml.run import SIM_DMA_RING, SIM_DMA_TEST_SKIP_LOOPS, SIM_REMAPPED_BUFFERS, UML_KERNEL, \
    set_dma_ring, sim_dma_ring, set_dma_test_skip, DriverSimError
from hostlink.sim.uml.vhost_user import GuestMemory, VirtQueue, VRING_DESC_F_NEXT, VRING_DESC_F_WRITE

# dma_test output ----------------------------------------------------------------------------------

RING = {"DMA_BUFFER_COUNT": 8, "DMA_BUFFER_SIZE": 4096, "DMA_BUFFER_PER_IRQ": 2}
SKIP = 128   # LitePCIe's dma_test: 128 unchecked loops, 1024 buffers of RING.

def _dma_test_output(rows):
    lines = ["\x1b[1m[> DMA loopback test:\x1b[0m", "---------------------",
             "\x1b[1mDMA_SPEED(Gbps)\tTX_BUFFERS\tRX_BUFFERS\tDIFF\tERRORS\x1b[0m"]
    for tx, rx, errors in rows:
        lines.append(f"{0.0:14.2f}\t{tx:10d}\t{rx:10d}\t{abs(tx - rx):4d}\t{errors:6d}")
    return "\n".join(lines) + "\n"


def test_parse_dma_test_counts_checked_bytes_and_errors():
    out = _dma_test_output([(500, 490, 0), (1100, 1090, 0), (1300, 1290, 2)])
    assert parse_dma_test(out, RING, SKIP) == {"rx_buffers": 1290, "bytes_checked": (1290 - 1024) * 4096,
        "errors": 2}


def test_parse_dma_test_before_the_checked_phase_checks_nothing():
    out = _dma_test_output([(100, 90, 0), (1000, 1000, 0)])
    assert parse_dma_test(out, RING, SKIP)["bytes_checked"] == 0
    assert parse_dma_test("", RING, SKIP) == {"rx_buffers": 0, "bytes_checked": 0, "errors": 0}


def test_dma_test_that_checked_nothing_fails():
    step = {"name": "cmd0", "command": "litepcie_util dma_test", "exit_status": 0, "timed_out": False,
            "output": _dma_test_output([(1000, 1000, 0)])}
    rows, ok = evaluate({"bench": {"timed_out": False}, "steps": [step]}, [], RING, SKIP)
    assert not ok and not rows[0]["passed"]
    step["output"] = _dma_test_output([(1200, 1200, 0)])
    rows, ok = evaluate({"bench": {"timed_out": False}, "steps": [step]}, [], RING, SKIP)
    assert ok and rows[0]["bytes_checked"] == 176 * 4096


def test_a_request_the_soc_never_answered_fails_the_run():
    step = {"name": "cmd0", "command": "litepcie_util info", "exit_status": 0, "timed_out": False, "output": ""}
    _, ok = evaluate({"bench": {"timed_out": False, "mmio_read_errors": 0}, "steps": [step]}, [], RING, SKIP)
    assert ok
    _, ok = evaluate({"bench": {"timed_out": False, "mmio_read_errors": 1}, "steps": [step]}, [], RING, SKIP)
    assert not ok


def test_default_commands_bring_the_dram_up_only_with_a_dram():
    from hostlink.sim.driver import default_commands
    plain = default_commands(1 << 20, SIM_DMA_RING, SIM_DMA_TEST_SKIP_LOOPS)
    dram  = default_commands(1 << 20, SIM_DMA_RING, SIM_DMA_TEST_SKIP_LOOPS, with_dram=True)
    assert not any("hostlink_dram" in c for c in plain)
    assert dram[:-1] == plain and dram[-1][:2] == ["hostlink_dram", "bringup"]


def test_parse_status_reads_name_value_lines():
    output = "completion_timeout       1500000\ntimeouts                 0\nreader0_errors           7\nnoise\n"
    assert parse_status(output) == {"completion_timeout": 1500000, "timeouts": 0, "reader0_errors": 7}
    assert parse_status(None) == {}


def test_kernel_problems():
    log = "[1.0] litepcie 0000:00:00.0: Creating /dev/litepcie0\n[2.0] WARNING: CPU: 0 PID: 1 at x.c:1\n" \
          "[3.0] BUG: scheduling while atomic\n"
    assert kernel_problems(log) == log.splitlines()[1:]
    assert kernel_problems("[1.0] litepcie 0000:00:00.0: 1 MSI IRQs allocated.\n") == []

# Ring ---------------------------------------------------------------------------------------------

def test_set_dma_ring(tmp_path):
    config = tmp_path / "config.h"
    config.write_text("#define DMA_BUFFER_PER_IRQ     32\n#define DMA_BUFFER_COUNT       256\n"
                      "#define DMA_BUFFER_SIZE        8192\n")
    set_dma_ring(str(config), SIM_DMA_RING)
    text = config.read_text()
    for name, value in SIM_DMA_RING.items():
        assert f"#define {name}" in text and text.split(f"#define {name}")[1].split()[0] == str(value)
    config.write_text("#define DMA_BUFFER_COUNT 256\n")
    with pytest.raises(DriverSimError, match="expected one '#define DMA_BUFFER_SIZE'"):
        set_dma_ring(str(config), SIM_DMA_RING)

def test_a_gen3_boards_ring_covers_its_faster_stream():
    # Half a ring ahead of the DMA: 128 KiB on the Gen2 boards, 512 KiB on the VC709 (7 GB/s each way).
    for board, count, size in [("zc706", 64, 4096), ("kc705", 64, 4096), ("vc709", 128, 8192)]:
        ring = sim_dma_ring(board)
        assert ring["DMA_BUFFER_SIZE"] == size and ring["DMA_BUFFER_COUNT"] == count, board

def test_set_dma_test_skip(tmp_path):
    util = tmp_path / "litepcie_util.c"
    util.write_text("            if (dma.writer_hw_count < 128*DMA_BUFFER_COUNT)\n")
    set_dma_test_skip(str(util), 4)
    assert util.read_text() == "            if (dma.writer_hw_count < 4*DMA_BUFFER_COUNT)\n"
    with pytest.raises(DriverSimError, match="expected one '128\\*DMA_BUFFER_COUNT'"):
        set_dma_test_skip(str(util), 4)

# vhost-user pieces --------------------------------------------------------------------------------

def test_split_virtqueue_pop_and_push(tmp_path):
    """A two-descriptor chain (request, reply buffer) in a memory file, as the kernel lays it out."""
    size, base = 1 << 16, 0x100000
    path = tmp_path / "physmem"
    path.write_bytes(bytes(size))
    memory = GuestMemory()
    memory.set_table([(base, size, base, 0)], [os.open(path, os.O_RDWR)])
    q = VirtQueue(memory, 0)
    q.num, q.desc, q.avail, q.used = 4, base, base + 0x100, base + 0x200
    memory.write(base + 0x1000, b"request!")
    memory.write(base, struct.pack("<QIHH", base + 0x1000, 8, VRING_DESC_F_NEXT, 1) +
                       struct.pack("<QIHH", base + 0x2000, 16, VRING_DESC_F_WRITE, 0))
    assert q.pop() is None
    memory.write(q.avail, struct.pack("<HHH", 0, 1, 0))   # flags, idx = 1, ring[0] = head 0
    head, chain = q.pop()
    assert head == 0 and chain == [(base + 0x1000, 8, False), (base + 0x2000, 16, True)]
    assert q.pop() is None
    q.push(head, 12)
    assert struct.unpack("<HHII", memory.read(q.used, 12)) == (0, 1, 0, 12)
    with pytest.raises(ValueError, match="outside the front-end's memory"):
        memory.read(base + size - 2, 4)
    memory.close()

# Runs in User-Mode Linux --------------------------------------------------------------------------

needs_kernel = pytest.mark.skipif(not os.path.isfile(UML_KERNEL),
    reason="no User-Mode Linux kernel: `make uml-kernel`")


def test_the_probes_soft_reset_ends_an_msi_left_in_service():
    """A board removed while its MSI was in service never acknowledged it (pcie_msi_clear): the bridge held
    every later MSI for good, and after a PCI rescan the new driver's waits ended only by their timeouts
    (issue 52: 3 of 10 loaded runs stalled 120 s). The probe's soft reset (its ctrl_reset write, forwarded)
    ends the service and drops the held MSIs, as a reset would; other writes leave them."""
    import asyncio
    from hostlink.sim.uml.pcidev import MSG, OP_MMIO_WRITE, PciDevBridge

    class Window:
        def __init__(self):
            self.writes = []

        async def write(self, address, data):
            self.writes.append((address, bytes(data)))

    class Function:
        bar_window = {0: Window()}

    bridge = PciDevBridge.__new__(PciDevBridge)   # Without its vhost-user socket: only the write path.
    bridge.function, bridge.mmio_writes, bridge.soft_resets = Function(), 0, 0
    bridge.soft_reset, bridge.msi_ack = (0, 0x1000, 0), (0, 0x2000)   # No time to let pass: no simulator.
    bridge.msi_in_service, bridge.pending_msis = True, [b"\x01\0\0\0", b"\x02\0\0\0"]

    def write(address):
        request = MSG.pack(OP_MMIO_WRITE, 0, 0, 4, address) + b"\x01\0\0\0"
        asyncio.run(bridge._serve_request(OP_MMIO_WRITE, 0, 4, address, request[MSG.size:], []))

    write(0x3000)                                  # Another register: the MSI stays in service.
    assert bridge.msi_in_service and len(bridge.pending_msis) == 2
    write(0x1000)                                  # ctrl_reset: forwarded, and the service ends.
    assert not bridge.msi_in_service and bridge.pending_msis == [] and bridge.soft_resets == 1
    assert Function.bar_window[0].writes == [(0x3000, b"\x01\0\0\0"), (0x1000, b"\x01\0\0\0")]


def test_another_boards_simulator_that_ends_before_listening_fails_at_once(tmp_path):
    from hostlink.sim.uml.bench import wait_for_other_boards
    from hostlink.sim.uml.run import ENDED_FILE
    listening, dead = tmp_path / "board1", tmp_path / "board2"
    for board in (listening, dead):
        board.mkdir()
    (listening / "pcidev.sock").touch()
    (dead / ENDED_FILE).touch()
    sockets = [str(listening / "pcidev.sock"), str(dead / "pcidev.sock")]
    ended   = [str(listening / ENDED_FILE), str(dead / ENDED_FILE)]
    started = time.monotonic()
    with pytest.raises(RuntimeError, match=r"board 2's simulator ended before it listened .*board2/sim.log"):
        wait_for_other_boards(sockets, 600, ended)
    assert time.monotonic() - started < 5
    # Both listening: no wait, whatever ended later.
    (dead / "pcidev.sock").touch()
    wait_for_other_boards(sockets, 600, ended)


def test_a_kernel_that_does_not_build_says_where_its_log_is(monkeypatch, capsys, tmp_path):
    monkeypatch.setattr("hostlink.sim.uml.kernel.MAKE_KERNEL", ["false"])
    monkeypatch.setattr("hostlink.sim.uml.kernel.UML_DIR", str(tmp_path))
    assert driver_main(["--board", "zc706", "--", "true"]) == 1
    err = capsys.readouterr().err
    assert "bringing the User-Mode Linux kernel up to date" in err
    assert re.search(r"`make uml-kernel` failed \(exit 1\): see .*build\.log", err)


def _run(tmp_path, board, *extra):
    path = tmp_path / f"{board}.json"
    # A run takes minutes; a kernel that spins is ended after KERNEL_STUCK_S, anything else by this limit.
    code = driver_main(["--board", board, "--dma-check", "1M", "--timeout", "1800", "--json", str(path), *extra])
    with open(path) as f:
        return code, json.load(f)


@pytest.mark.uml
@needs_kernel
@pytest.mark.parametrize("board", ["zc706", "vc709"])
def test_litepcie_tools_on_the_simulated_soc(tmp_path, board):
    code, result = _run(tmp_path, board)
    steps = {s["command"]: s for s in result["steps"]}
    info = steps["litepcie_util info"]
    assert info["exit_status"] == 0 and f"hostlink {board.upper()}" in info["output"]
    assert "Read: 0x12345678" in steps["litepcie_util scratch_test"]["output"]
    dma = [s for s in result["steps"] if "dma_test" in s["command"]]
    assert len(dma) == 3   # Copy and zero-copy as root, copy as a member of the device's group.
    for step in dma:
        assert step["errors"] == 0 and step["bytes_checked"] >= 1 << 20, step["output"][-2000:]
    record = next(s for s in result["steps"] if "pattern_record" in s["command"])
    assert record["exit_status"] == 0 and record["bytes_checked"] == 1 << 20 and record["errors"] == 0
    # The hardened driver as a local user in the device's group sees it (software/driver/hardening.py).
    access = next(s for s in result["steps"] if "driver_access" in s["command"])
    for line in ["ok: outside the group: open /dev/litepcie0: EACCES",
                 "ok: group member: read at the end of BAR0: EINVAL",
                 "ok: group member: read 4 GiB - 4 past the CSR base: EINVAL",
                 "ok: group member: unaligned read: EINVAL",
                 "ok: group member: register write: EPERM",
                 "ok: group member: dma_test exited with 0"]:
        assert line in access["output"], access["output"]
    assert access["errors"] == 0 and access["bytes_checked"] >= 1 << 20
    busy = next(s for s in result["steps"] if "rmmod_busy" in s["command"])
    for line in ["ok: rmmod refused while the DMA runs", "ok: the DMA went on", "ok: rmmod\n",
                 "disabled, device answers"]:
        assert line in busy["output"], busy["output"]
    assert busy["exit_status"] == 0
    # hostlink_status, through the driver's register ioctl: every fault counter of the SoC, all 0.
    status = steps["hostlink_status"]
    counters = parse_status(status["output"])
    assert status["exit_status"] == 0 and "timeouts" in counters and "reader1_errors" in counters, status
    assert counters["completion_timeout"] > 0
    assert not any(v for k, v in counters.items() if k != "completion_timeout"), counters
    for name in ("rmmod", "reload", "rmmod2"):
        assert next(s for s in result["steps"] if s["name"] == name)["exit_status"] == 0
    # The VC709's driver uses its buffers through vmalloc-area aliases, as behind an IOMMU (software/driver/mmap.py):
    # there the zero-copy dma_test above checked that mmap maps the buffers' own pages (LitePCIe's __pa() did not).
    main_c = open(os.path.join(REPO, "build", "uml", "driver", f"{board}_dma2", "kernel", "main.c")).read()
    assert ("hostlink_test_remap_buffer(s, dmachan->reader_addr[j])" in main_c) == (board in SIM_REMAPPED_BUFFERS)
    assert result["kernel_warnings"] == []
    assert code == 0 and result["passed"]


@pytest.mark.uml
@needs_kernel
@pytest.mark.parametrize("board", ["zc706", "vc709"])
def test_the_reference_path_still_runs_the_driver(tmp_path, board):
    """`--reference`: the SoC under cocotb against cocotbext-pcie's root complex and the reference block model
    (the fast path, which the runs above take, is judged against it by test_fast_path.py). The driver probes
    the SoC through it and reads its identifier."""
    code, result = _run(tmp_path, board, "--reference", "--", "litepcie_util", "info")
    info = next(s for s in result["steps"] if s["command"] == "litepcie_util info")
    assert info["exit_status"] == 0 and f"hostlink {board.upper()}" in info["output"]
    assert result["bench"]["mmio_read_errors"] == 0
    assert code == 0 and result["passed"]


UML_TOOLS = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "sim", "uml", "guest")


@pytest.mark.uml
@needs_kernel
def test_one_corrupted_word_fails_dma_test(tmp_path):
    # Past the unchecked loops of the ring: in dma_test's checked phase.
    ring = sim_dma_ring("zc706")
    skipped = SIM_DMA_TEST_SKIP_LOOPS * ring["DMA_BUFFER_COUNT"] * ring["DMA_BUFFER_SIZE"]
    code, result = _run(tmp_path, "zc706", "--inject-fault", str(skipped + (256 << 10)),
        "--", "python3", os.path.join(UML_TOOLS, "dma_test_until.py"), str(1 << 20),
        str(skipped // ring["DMA_BUFFER_SIZE"]), str(ring["DMA_BUFFER_SIZE"]),
        "--", "litepcie_util", "dma_test")
    assert result["bench"]["faults_injected"] == 1
    step = next(s for s in result["steps"] if "dma_test" in s["command"])
    assert step["errors"] >= 1 and not step["passed"]
    assert code == 1 and not result["passed"]

@pytest.mark.uml
@needs_kernel
def test_a_machine_that_computes_without_the_device_is_ended_with_its_stacks(tmp_path, monkeypatch, capsys):
    """CI once saw rmmod spin in the kernel for an hour, beyond the reach of the command's own time limit.
    A machine that computes without one register access for KERNEL_STUCK_S is ended then, with the
    kernel's stacks, not at --timeout: here a shell loop, with the limit at 30 s."""
    monkeypatch.setattr("hostlink.sim.uml.harness.KERNEL_STUCK_S", 30)
    code, result = _run(tmp_path, "zc706", "--", "sh", "-c", "while :; do :; done")
    bench = result["bench"]
    assert bench["kernel_stuck"] and bench["timed_out"]
    assert bench["wall_s"] < 300, bench["wall_s"]
    assert "Thread 1" in bench["kernel_stacks"], bench["kernel_stacks"]
    # The kernel's console answered with its blocked tasks (none here: the loop runs), and the process seen
    # running is the shell's.
    assert "Show Blocked State" in bench["kernel_stacks"], bench["kernel_stacks"]
    assert "last process seen running: " in bench["kernel_stacks"], bench["kernel_stacks"]
    assert code == 1 and not result["passed"]
    assert "ended because the machine computed for 30 s without a register access" in capsys.readouterr().out

# Interrupted ---------------------------------------------------------------------------------------

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _processes():
    """(pid, state, session, command line) of every process."""
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                cmdline = f.read().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        yield int(entry), fields[0], int(fields[3]), cmdline


def _alive_in_sessions(sessions):
    """Processes (not zombies) of those sessions."""
    return [pid for pid, state, session, _ in _processes() if session in sessions and state != "Z"]


@pytest.mark.uml
@needs_kernel
@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_a_signal_ends_the_simulation_and_the_kernel(signum):
    """SIGTERM or SIGINT to ./sim.py driver while a command runs in the machine: it exits with
    128 + the signal's number, and leaves no process: neither the simulator (in its session) nor the
    kernel and the machine's processes (in the kernel's own session)."""
    run_dir = os.path.join(REPO, "build", "uml", "runs", "zc706_dma2")
    console = os.path.join(run_dir, "console.log")
    init = f"init={os.path.join(run_dir, 'init.sh')} "
    started = time.time()
    proc = subprocess.Popen([sys.executable, os.path.join(REPO, "sim.py"), "driver", "--board", "zc706",
        "--", "sleep", "600"], cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        start_new_session=True)
    try:
        deadline = time.monotonic() + 900   # A cold build of the model and the driver included.
        while time.monotonic() < deadline and proc.poll() is None:
            # This run's console (the run folder is replaced when the simulation starts).
            if os.path.exists(console) and os.path.getmtime(console) >= started and \
                    "=== cmd0" in open(console).read():
                break
            time.sleep(1)
        assert proc.poll() is None, proc.communicate()[0][-3000:]
        kernels = {session for _, _, session, cmdline in _processes() if init in cmdline}
        assert len(kernels) == 1 and _alive_in_sessions(kernels)
        proc.send_signal(signum)
        output = proc.communicate(timeout=120)[0]
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    deadline = time.monotonic() + 10
    while _alive_in_sessions(kernels | {proc.pid}) and time.monotonic() < deadline:
        time.sleep(0.2)
    left = _alive_in_sessions(kernels | {proc.pid})
    for session in kernels | {proc.pid}:   # Nothing outlives the test, whatever it asserts.
        with contextlib.suppress(ProcessLookupError):
            os.killpg(session, signal.SIGKILL)
    assert left == [], f"left running: {left}"
    assert proc.returncode == 128 + signum, output[-3000:]
    assert f"{signal.Signals(signum).name}: the simulation and the User-Mode Linux kernel were ended" in output
    assert not os.path.exists(os.path.join(run_dir, "uml.pid"))
