# This file is part of hostlink.
# Copyright (c) 2026 hostlink developers
# SPDX-License-Identifier: BSD-2-Clause

"""Build what ./sim.py driver needs (the SoC's model, its driver for User-Mode Linux) and run it.

- The Verilator model is ./sim.py dma's (sim/pcie/run.py, cached the same way).
- The User-Mode Linux kernel is built by `make uml-kernel` into build/uml (Makefile), on first use, and
  booted once on each host before a run (sim/uml/kernel.py).
- The driver is LitePCIe's, generated from the simulated SoC (software/driver/), with a smaller DMA
  ring (SIM_DMA_RING) so that `litepcie_util dma_test` reaches its data-checked phase (after 128 loops
  of the ring) in minutes; the module is built against the User-Mode Linux tree (ARCH=um), the user
  tools for the host (User-Mode Linux runs the host's x86-64 programs). The board's driver
  (`./targets/<board>.py --driver`) keeps LitePCIe's ring.
"""

import contextlib
import hashlib
import json
import logging
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import threading

from hostlink.sim.build_lock import held
from hostlink.sim.pcie.run import REPO, BUILD_ROOT, bench_config, build_model, copy_memory_inits, run_bench, \
    run_fast_bench
from hostlink.sim.pcie.soc import get_board
from hostlink.sim.uml.kernel import UML_DIR, UML_KERNEL, UML_TREE, BUILD_TIME, POWER_OFF, KernelError, ensure_kernel, \
    preflight
from hostlink.software.driver.mmap import use_remapped_buffers
from hostlink.targets import boards as registry
from hostlink.toolchain import verilator_env

# A run is ended, with the kernel's stacks in the simulation log, once the machine (the kernel or one of its
# processes) has computed for this many seconds of wall-clock time without one register access: it is
# spinning (sim/uml/bench.py).
KERNEL_STUCK_S = 300

# The simulated SoC's ring: 64 buffers of 4 KiB (a page, for zero-copy mmap), an MSI every 8 (8 MSIs a
# loop, as LitePCIe's defaults; the board's driver keeps LitePCIe's 256 x 8 KiB). The driver lets the
# software run at most half a ring ahead of the DMA or behind it: 128 KiB here, 75 us of the ZC706's
# loopback in simulated time, well over the kernel's answer to an MSI (three BAR reads: about 0.6 us
# simulated on average, 3 us at most on the VC709, 2.4 and 12 us on the ZC706). A 16 x 4 KiB ring (8 and
# 2 us) lost buffers.
SIM_DMA_RING = {"DMA_BUFFER_COUNT": 64, "DMA_BUFFER_SIZE": 4096, "DMA_BUFFER_PER_IRQ": 8}
# A Gen3 x8 board streams at 7 GB/s each way. LitePCIe's ring does not wait for software, and the simulated
# machine (several threads on one virtual CPU) sometimes fell more than half a ring of 64 x 8 KiB (256 KiB,
# 36 us) behind: buffers lost, wrong words in interrupt-driven 2-channel runs, "Writing too late" in the
# suite. Its ring has 128 buffers of 8 KiB (LitePCIe's size; a board's driver keeps 256): 73 us of slack.
SIM_DMA_RING_GEN3 = dict(SIM_DMA_RING, DMA_BUFFER_COUNT=128, DMA_BUFFER_SIZE=8192)


def sim_dma_ring(board):
    """The DMA ring of the board's simulated SoC (its driver's and tools' config.h)."""
    board = board if isinstance(board, str) else board.name
    return SIM_DMA_RING_GEN3 if registry.BOARDS[board].pcie.gen >= 3 else SIM_DMA_RING

# The boards whose simulated driver uses its DMA buffers through vmalloc-area aliases, as behind an IOMMU
# (software/driver/mmap.py): their zero-copy runs (litepcie_util -z, hostlink_bench -m zero-copy) check
# that the mmap maps the right pages. The others keep the kernel's linear addresses: both paths run.
SIM_REMAPPED_BUFFERS = ("vc709",)

# litepcie_util dma_test checks data only after 128 loops of the ring (32 or 64 MiB here, 256 MiB with
# LitePCIe's defaults: hours of simulation). The simulated SoC's copy skips this many loops instead.
SIM_DMA_TEST_SKIP_LOOPS = 4


class DriverSimError(RuntimeError):
    """Something ./sim.py driver needs is missing or did not build; the message says what to do."""

# Driver -------------------------------------------------------------------------------------------

def set_dma_ring(config_h, ring):
    """Rewrite the DMA ring constants of LitePCIe's kernel/config.h (software constants of the driver
    and of the user tools, which include it)."""
    with open(config_h) as f:
        text = f.read()
    for name, value in ring.items():
        text, count = re.subn(rf"(#define\s+{name}\s+)\S+", rf"\g<1>{value}", text)
        if count != 1:
            raise DriverSimError(f"{config_h}: expected one '#define {name}'; LitePCIe's driver has changed")
    with open(config_h, "w") as f:
        f.write(text)


DMA_TEST_SKIP = "128*DMA_BUFFER_COUNT"

def set_dma_test_skip(util_c, loops):
    """Make litepcie_util's dma_test check data after `loops` loops of the ring instead of 128."""
    with open(util_c) as f:
        text = f.read()
    if text.count(DMA_TEST_SKIP) != 1:
        raise DriverSimError(f"{util_c}: expected one '{DMA_TEST_SKIP}' (dma_test's unchecked loops); "
                             f"LitePCIe's tool has changed")
    with open(util_c, "w") as f:
        f.write(text.replace(DMA_TEST_SKIP, f"{loops}*DMA_BUFFER_COUNT"))


def soc_name(board, dma_channels, with_dram, user_core=None):
    """Name of the simulated SoC's build, as ./sim.py dma names its model."""
    from hostlink.sim.pcie.run import user_core_tag
    return f"{board.name}_dma{dma_channels}" + ("_dram" if with_dram else "") + \
        (user_core_tag(user_core) if user_core else "")


def _make(what, args, log):
    proc = subprocess.run(["make", *args], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    log.write(proc.stdout)
    if proc.returncode != 0:
        raise DriverSimError(f"building the {what} failed (make {' '.join(args)}): {proc.stdout[-2000:]}")


def build_uml_driver(board, dma_channels, soc_dir, build_root=BUILD_ROOT, ring=None, with_dram=False,
        user_core=None):
    """The simulated SoC's driver built for User-Mode Linux, cached; returns its directory. `ring`: the
    board's sim_dma_ring() unless given; `user_core` as build_model's."""
    ring = sim_dma_ring(board) if ring is None else ring
    if not (os.path.isfile(UML_KERNEL) and os.path.isfile(os.path.join(UML_TREE, "Module.symvers"))):
        raise DriverSimError(f"no User-Mode Linux kernel in {UML_DIR}: build it with `make uml-kernel` "
                             f"({BUILD_TIME})")
    from importlib.metadata import version
    digest = hashlib.sha256()
    with open(os.path.join(soc_dir, "sources.digest")) as f:
        digest.update(f.read().encode())
    digest.update(json.dumps([ring, SIM_DMA_TEST_SKIP_LOOPS], sort_keys=True).encode())
    digest.update(f"litepcie=={version('litepcie')}".encode())
    digest.update(str(os.path.getmtime(os.path.join(UML_TREE, "Module.symvers"))).encode())
    # This file and what generates the driver and its tools (the driver package: its modules, the change sets
    # and their C; hostlink_bench, libhostlink and its C examples).
    software = os.path.join(REPO, "software")
    from hostlink.software.driver import LIBRARY_EXAMPLES, LIBRARY_SOURCES
    from hostlink.software.driver.patches import PATCH_DIR
    for path in [os.path.abspath(__file__),
                 *[os.path.join(PATCH_DIR, n) for n in sorted(os.listdir(PATCH_DIR)) if n.endswith((".py", ".patch"))],
                 os.path.join(software, "bench", "hostlink_bench.c"),
                 *[os.path.join(LIBRARY_SOURCES, n) for n in sorted(os.listdir(LIBRARY_SOURCES))],
                 *LIBRARY_EXAMPLES]:
        with open(path, "rb") as f:
            digest.update(f.read())
    digest = digest.hexdigest()[:16]
    driver_dir = os.path.join(build_root, "uml", "driver", soc_name(board, dma_channels, with_dram, user_core))
    stamp = os.path.join(driver_dir, "hostlink.digest")
    if os.path.exists(stamp) and open(stamp).read() == digest:
        return driver_dir
    shutil.rmtree(driver_dir, ignore_errors=True)
    os.makedirs(driver_dir)
    from hostlink.software.driver import generate_driver
    log_path = os.path.join(driver_dir, "build.log")
    with open(log_path, "w") as log:
        root = logging.getLogger()
        saved = root.handlers[:]
        root.handlers[:] = [logging.StreamHandler(log)]
        try:
            with contextlib.redirect_stdout(log):
                generate_driver(board.soc_factory(dma_channels, with_dram=with_dram, user_core=user_core),
                                driver_dir)
        finally:
            root.handlers[:] = saved
        set_dma_ring(os.path.join(driver_dir, "kernel", "config.h"), ring)
        set_dma_test_skip(os.path.join(driver_dir, "user", "litepcie_util.c"), SIM_DMA_TEST_SKIP_LOOPS)
        if board.name in SIM_REMAPPED_BUFFERS:
            use_remapped_buffers(os.path.join(driver_dir, "kernel"))
        # litepcie.ko alone: liteuart.ko needs the serial core, which the User-Mode Linux kernel lacks.
        # Kbuild reads a Kbuild file before the Makefile.
        kernel_dir = os.path.join(driver_dir, "kernel")
        with open(os.path.join(kernel_dir, "Kbuild"), "w") as f:
            f.write("obj-m := litepcie.o\nlitepcie-objs := main.o\n")
        _make("kernel module for User-Mode Linux",
            ["-C", UML_TREE, "ARCH=um", f"M={kernel_dir}", "modules"], log)
        _make("user tools", ["-C", os.path.join(driver_dir, "user")], log)
        _make("libhostlink", ["-C", os.path.join(driver_dir, "user", "libhostlink")], log)
        _make("fault counters tool", ["-C", os.path.join(driver_dir, "status")], log)
        # The DDR3 bring-up tool (software/dram), for SoCs with a DRAM.
        if with_dram:
            _make("DDR3 bring-up tool", ["-C", os.path.join(driver_dir, "dram")], log)
    with open(stamp, "w") as f:
        f.write(digest)
    return driver_dir

# Init script --------------------------------------------------------------------------------------

def mounts_and_steps(shared, command_timeout_s):
    """The lines every init here starts with: /proc, /sys, /dev, a tmpfs on /run, the host's folder `shared`
    (hostfs) as the current directory, and `step NAME CMD...`, which runs a command with a time limit, its
    output in NAME.out and its exit status in NAME.rc there (written once it has ended)."""
    return [
        "mount -t proc proc /proc",
        "mount -t sysfs sysfs /sys",
        "mountpoint -q /dev || mount -t devtmpfs devtmpfs /dev",
        "mount -t tmpfs tmpfs /run",
        f"mount -t hostfs -o {shlex.quote(shared)} hostfs {shlex.quote(shared)}",
        f"cd {shlex.quote(shared)}",
        "step() { name=$1; shift; echo \"=== $name: $*\" > /dev/console;"
        f" timeout -s KILL {int(command_timeout_s)} \"$@\" > \"$name.out\" 2>&1; echo $? > \"$name.rc\"; }}",
    ]


def read_steps(shared, names, labels):
    """Each step's output and exit status (mounts_and_steps' NAME.out and NAME.rc in `shared`), as dicts of
    name, command (its label), exit_status and output (None where the step never ran) and timed_out."""
    steps = []
    for name, label in zip(names, labels):
        output = status = None
        out_path, rc_path = os.path.join(shared, name + ".out"), os.path.join(shared, name + ".rc")
        if os.path.exists(out_path):
            with open(out_path, errors="replace") as f:
                output = f.read()
        if os.path.exists(rc_path):
            with open(rc_path) as f:
                status = int(f.read().strip() or -1)
        steps.append({"name": name, "command": label, "exit_status": status, "output": output,
                      "timed_out": status == 137})
    return steps


def init_script(shared, driver_dir, commands, command_timeout_s):
    """The kernel's init: mount what the tools need, load the module, run each command with a time
    limit (output, exit status in `shared`), unload and load the module again, save the kernel log,
    power off."""
    module = os.path.join(driver_dir, "kernel", "litepcie.ko")
    lines = [
        "#!/bin/sh",
        "# Generated by hostlink (sim/uml/run.py): init of the User-Mode Linux kernel of ./sim.py driver.",
        "export PATH=" + shlex.quote(":".join(os.path.join(driver_dir, d) for d in
                                              ("user", "user/libhostlink", "status", "dram")) +
                                     ":/usr/sbin:/usr/bin:/sbin:/bin"),
        # Scratch space on a tmpfs over /run: one over /tmp would hide the repository, the driver and the
        # shared folder whenever they live under the host's /tmp (a clone in /tmp, pytest's tmp_path).
        "export HOME=/run TMPDIR=/run",
        "export HOSTLINK_LITEPCIE_KO=" + shlex.quote(module),   # For rmmod_busy.py.
        *mounts_and_steps(shared, command_timeout_s),
        f"step insmod insmod {shlex.quote(module)}",
        "step devices sh -c 'ls -l /dev/litepcie*'",
    ]
    for i, command in enumerate(commands):
        lines.append(f"step cmd{i} {' '.join(shlex.quote(c) for c in command)}")
    lines += [
        "step rmmod rmmod litepcie",
        f"step reload insmod {shlex.quote(module)}",
        "step rmmod2 rmmod litepcie",
        "dmesg > dmesg.txt",
        "sync",
        # Power off: reboot(LINUX_REBOOT_CMD_POWER_OFF); the host's own poweroff wants systemd.
        POWER_OFF,
    ]
    return "\n".join(lines) + "\n"

# Run ----------------------------------------------------------------------------------------------

# User-Mode Linux's virt-pci has 8 slots; past 4, two cores run the simulators too slowly to be of use.
MAX_BOARDS = 4
ENDED_FILE = "ended"   # In another board's folder once its simulator has ended (start_other_board).


def run_uml_bench(model, directory, config, config_path, log_file, fast):
    """The bench of sim/uml/bench.py on the SoC's fast path (`fast`) or in the simulator under cocotb."""
    if fast:
        run_fast_bench(model, directory, config, config_path, log_file, entry="hostlink.sim.uml.bench:run_driver")
    else:
        run_bench("hostlink.sim.uml.bench", model, directory, config_path, log_file=log_file)


def start_other_board(model, directory, config, verbose, fast):
    """Run the simulator of another copy of the SoC in `directory` (a thread; it serves the kernel that
    the first board's simulator starts, sim/uml/bench.py's serve_another_board); returns the thread."""
    os.makedirs(directory)
    config_path = os.path.join(directory, "config.json")
    with open(config_path, "w") as f:
        json.dump(config, f, indent=2)
    copy_memory_inits(model, directory)
    def serve():
        try:
            run_uml_bench(model, directory, config, config_path,
                          None if verbose else os.path.join(directory, "sim.log"), fast)
        finally:
            # For the first board's simulator: one that ends before it listens is an error at once.
            with open(os.path.join(directory, ENDED_FILE), "w"):
                pass
    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    return thread


def end_kernel(pid_file):
    """Kill the User-Mode Linux kernel named by `pid_file` and every process of its group (its
    helpers, the processes of the machine), if the bench left it running; returns the process id or
    None. The bench removes the file once the kernel has ended, so a stale id is never signalled."""
    try:
        with open(pid_file) as f:
            pid = int(f.read())
    except (OSError, ValueError):
        return None
    try:
        os.killpg(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    os.remove(pid_file)
    return pid


def run_driver_sim(board_name, commands, command_timeout_s, profile, dma_channels=2, timeout_s=1800,
        build_root=BUILD_ROOT, verbose=False, mem="256M", fault_at=None, with_dram=False, user_core=None,
        boards=1, reference=False):
    """Build everything, boot the kernel on the simulated SoC, run `commands` inside. Returns a dict:
    the bench's summary, each step's output and exit status, the kernel log, where the logs are.
    `user_core` ({"spec", "channel"}) puts a user's core on a channel, as ./sim.py dma does. `boards`:
    how many copies of the SoC are on the machine's PCI bus (up to MAX_BOARDS), each simulated by a
    simulator of its own; their summaries are in "boards" (the first's also in "bench"). The SoC runs on
    its fast path (sim/pcie/fast/), or with `reference` under cocotb and cocotbext-pcie."""
    if not 1 <= boards <= MAX_BOARDS:
        raise ValueError(f"boards must be 1 to {MAX_BOARDS} (User-Mode Linux's PCI bus has {MAX_BOARDS} slots), "
                         f"not {boards!r}")
    board = get_board(board_name)
    try:
        preflight(ensure_kernel())
    except KernelError as error:
        raise DriverSimError(str(error)) from None
    run_dir = os.path.join(build_root, "uml", "runs", soc_name(board, dma_channels, with_dram, user_core))
    # One run at a time per SoC: the run folder (and the SoC's driver build) is cleared and rebuilt.
    with held(run_dir, lambda message: print(f"sim.py driver: {message}", file=sys.stderr, flush=True)):
        return _run_driver_sim(board, run_dir, commands, command_timeout_s, profile, dma_channels,
            timeout_s, build_root, verbose, mem, fault_at, with_dram, user_core, boards, reference)


def _run_driver_sim(board, run_dir, commands, command_timeout_s, profile, dma_channels, timeout_s,
        build_root, verbose, mem, fault_at, with_dram, user_core=None, boards=1, reference=False):
    from hostlink.sim.pcie.fast.run import build_fast_model, fast_path_runs
    fast = fast_path_runs(board, reference=reference)
    model = build_model(board.name, dma_channels, build_root, verbose, with_dram=with_dram, user_core=user_core,
                        reference=not fast)
    if fast:
        build_fast_model(model, lambda message: print(f"sim.py driver: {message}", file=sys.stderr, flush=True))
    driver_dir = build_uml_driver(board, dma_channels, model["soc_dir"], build_root, with_dram=with_dram,
                                  user_core=user_core)
    shutil.rmtree(run_dir, ignore_errors=True)
    shared = os.path.join(run_dir, "shared")
    os.makedirs(shared)
    # The SoC's register map, for programs that reach hostlink's own CSRs (pattern_record.py).
    shutil.copy(model["csr_json"], os.path.join(shared, "csr.json"))
    init = os.path.join(run_dir, "init.sh")
    with open(init, "w") as f:
        f.write(init_script(shared, driver_dir, commands, command_timeout_s))
    os.chmod(init, 0o755)
    socket_path = os.path.join(run_dir, "pcidev.sock")
    # The other boards: a simulator each, in a folder of its own, serving a socket of its own.
    others = [os.path.join(run_dir, f"board{i}") for i in range(1, boards)]
    other_sockets = [os.path.join(d, "pcidev.sock") for d in others]
    stop_file = os.path.join(run_dir, "stop")
    os.environ.update(verilator_env())
    config = bench_config(board, model, profile, with_dram=with_dram)
    config.update({
        "results": os.path.join(run_dir, "bench.json"),
        "uml": {
            "socket":      socket_path,
            "console_log": os.path.join(run_dir, "console.log"),
            # The kernel's physical memory is a file there, which the bridge maps: memory, not disk.
            "tmpdir":      "/dev/shm" if os.path.isdir("/dev/shm") else run_dir,
            "timeout_s":   timeout_s,
            "stuck_s":     KERNEL_STUCK_S,
            # The kernel's management console (umid and uml_dir below), for its tasks' stacks on a hang.
            "mconsole":    os.path.join(run_dir, "uml", "mconsole"),
            "fault_at":    fault_at,
            "pid_file":    os.path.join(run_dir, "uml.pid"),
            "other_sockets": other_sockets,
            "other_ended":   [os.path.join(d, ENDED_FILE) for d in others],
            "command":     [UML_KERNEL, f"mem={mem}", "rootfstype=hostfs", "rootflags=/", "ro",
                            f"init={init}",
                            *[f"virtio_uml.device={path}:1234" for path in [socket_path, *other_sockets]],
                            # A register read waits as long as the command that made it may run: a slow
                            # simulation on a loaded machine is not a dead device (the command's own
                            # timeout ends a hung one, with the logs).
                            f"virt_pci.max_delay_us={min(int(command_timeout_s*1e6), 2**32 - 1)}",
                            "con0=null,fd:1", "con=null", "loglevel=7", f"uml_dir={run_dir}", "umid=uml"],
        },
    })
    config_path = os.path.join(run_dir, "config.json")
    with open(config_path, "w") as f:
        json.dump(config, f, indent=2)
    copy_memory_inits(model, run_dir)
    sim_log = os.path.join(run_dir, "sim.log")
    threads = [start_other_board(model, directory, dict(config, results=os.path.join(directory, "bench.json"),
        uml=dict(config["uml"], serve_only=True, socket=path, stop_file=stop_file)), verbose, fast)
        for directory, path in zip(others, other_sockets)]
    try:
        run_uml_bench(model, run_dir, config, config_path, None if verbose else sim_log, fast)
    finally:
        # Interrupted (SIGTERM, SIGINT: the runner kills the simulator), the simulator could not end
        # the kernel it started: end it here.
        end_kernel(config["uml"]["pid_file"])
        # The other boards' simulators end when they see this file.
        with open(stop_file, "w"):
            pass
        for thread in threads:
            thread.join()
    result = {"run_dir": run_dir, "console_log": config["uml"]["console_log"], "sim_log": sim_log,
              "driver_dir": driver_dir}
    bench_json = config["results"]
    if not os.path.exists(bench_json):
        raise DriverSimError(f"the simulation ended without a summary: see {sim_log}")
    with open(bench_json) as f:
        result["bench"] = json.load(f)
    result["boards"] = [result["bench"]]
    for directory in others:
        path = os.path.join(directory, "bench.json")
        if not os.path.exists(path):
            raise DriverSimError(f"board {len(result['boards'])}'s simulation ended without a summary: see "
                                 f"{os.path.join(directory, 'sim.log')}")
        with open(path) as f:
            result["boards"].append(json.load(f))
    names = ["insmod", "devices"] + [f"cmd{i}" for i in range(len(commands))] + ["rmmod", "reload", "rmmod2"]
    labels = ["insmod litepcie.ko", "ls -l /dev/litepcie*"] + [" ".join(c) for c in commands] + \
             ["rmmod litepcie", "insmod litepcie.ko (again)", "rmmod litepcie (again)"]
    result["steps"] = read_steps(shared, names, labels)
    dmesg_path = os.path.join(shared, "dmesg.txt")
    result["dmesg"] = open(dmesg_path, errors="replace").read() if os.path.exists(dmesg_path) else None
    return result
