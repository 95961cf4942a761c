# This file is part of hostlink.
# Copyright (c) 2026 hostlink developers
# SPDX-License-Identifier: BSD-2-Clause

"""Build what ./sim.py driver needs (the SoC's model, its driver for User-Mode Linux) and run it: the PCIe
SoCs' plug-in (PciBusPlugin) of the User-Mode Linux harness (sim/uml/harness.py), which boots the kernel, runs
the commands and reads the result.

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
import subprocess
import threading

from hostlink.sim.pcie.run import REPO, BUILD_ROOT, bench_config, build_model, copy_memory_inits, run_bench, \
    run_fast_bench
from hostlink.sim.pcie.soc import get_board
from hostlink.sim.uml import harness
from hostlink.sim.uml.harness import DEVICE_ID, SCRATCH, SYSTEM_PATH, DriverSimError, Plugin, Step
from hostlink.sim.uml.kernel import UML_DIR, UML_KERNEL, UML_TREE, BUILD_TIME
from hostlink.software.driver.mmap import use_remapped_buffers
from hostlink.software.driver.naming import DEFAULT_DRIVER_NAME
from hostlink.targets import boards as registry

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
        user_core=None, name=DEFAULT_DRIVER_NAME):
    """The simulated SoC's driver built for User-Mode Linux, cached; returns its directory. `ring`: the
    board's sim_dma_ring() unless given; `user_core` as build_model's; `name` the driver's (naming.py)."""
    ring = sim_dma_ring(board) if ring is None else ring
    if not (os.path.isfile(UML_KERNEL) and os.path.isfile(os.path.join(UML_TREE, "Module.symvers"))):
        raise DriverSimError(f"no User-Mode Linux kernel in {UML_DIR}: build it with `make uml-kernel` "
                             f"({BUILD_TIME})")
    from importlib.metadata import version
    digest = hashlib.sha256()
    with open(os.path.join(soc_dir, "sources.digest")) as f:
        digest.update(f.read().encode())
    digest.update(json.dumps([ring, SIM_DMA_TEST_SKIP_LOOPS, name], sort_keys=True).encode())
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
    driver_dir = os.path.join(build_root, "uml", "driver", soc_name(board, dma_channels, with_dram, user_core) +
                              ("" if name == DEFAULT_DRIVER_NAME else f"_{name}"))
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
                                driver_dir, name=name)
        finally:
            root.handlers[:] = saved
        set_dma_ring(os.path.join(driver_dir, "kernel", "config.h"), ring)
        set_dma_test_skip(os.path.join(driver_dir, "user", "litepcie_util.c"), SIM_DMA_TEST_SKIP_LOOPS)
        if board.name in SIM_REMAPPED_BUFFERS:
            use_remapped_buffers(os.path.join(driver_dir, "kernel"))
        # litepcie.ko (NAME.ko) alone: liteuart.ko needs the serial core, which the User-Mode Linux kernel lacks.
        # Kbuild reads a Kbuild file before the Makefile.
        kernel_dir = os.path.join(driver_dir, "kernel")
        with open(os.path.join(kernel_dir, "Kbuild"), "w") as f:
            f.write(f"obj-m := {name}.o\n{name}-objs := main.o\n")
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

# Run ----------------------------------------------------------------------------------------------

# User-Mode Linux's virt-pci has 8 slots; past 4, two cores run the simulators too slowly to be of use.
MAX_BOARDS = 4


def sim_driver_name(board, several_socs):
    """The name of the board's simulated driver: LitePCIe's, unless the machine has boards of several SoCs,
    whose drivers then need names of their own (zc706_litepcie: /dev/zc706_litepcie0, ...)."""
    return f"{board.name}_litepcie" if several_socs else DEFAULT_DRIVER_NAME


def driver_variable(board):
    """The environment variable that holds the board's driver folder inside the machine (HOSTLINK_ZC706_DRIVER)."""
    return f"HOSTLINK_{board.name.upper()}_DRIVER"
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


class SimulatedSoC:
    """One SoC of the machine: its board, host profile, model (built by PciBusPlugin.build) and driver."""

    def __init__(self, board, profile, driver_name):
        self.board, self.profile, self.driver_name = board, profile, driver_name

    @property
    def module(self):
        return os.path.join(self.driver_dir, "kernel", f"{self.driver_name}.ko")


class PciBusPlugin(Plugin):
    """The PCIe SoCs' plug-in of the User-Mode Linux harness (sim/uml/harness.py): boards on virt-pci's PCI bus,
    `boards` copies of the SoC, or one board of each SoC of `socs`, each a virtio-pci device on a socket of its
    own, served by a simulator of its own (sim/uml/bench.py, pcidev.py); each SoC's driver loaded before the
    commands, then unloaded, loaded and unloaded again. Boards of several SoCs get a driver each, named after
    its board (sim_driver_name). The SoCs run on their fast path (sim/pcie/fast/), or with `reference` under
    cocotb."""

    source  = "sim/uml/run.py"
    machine = "of ./sim.py driver"
    socket  = "pcidev.sock"

    def __init__(self, socs, dma_channels, with_dram, user_core, boards, reference, fault_at):
        """`socs`: [(board, profile)], one board each; or one, of which `boards` copies."""
        several = len(socs) > 1
        self.socs = [SimulatedSoC(board, profile, sim_driver_name(board, several)) for board, profile in socs]
        self.slots = self.socs if several else self.socs * boards    # The SoC on each PCI slot.
        self.board, self.profile = self.socs[0].board, self.socs[0].profile
        self.dma_channels, self.with_dram, self.user_core = dma_channels, with_dram, user_core
        self.reference, self.fault_at = reference, fault_at
        self.name = "+".join(soc_name(soc.board, dma_channels, with_dram, user_core) for soc in self.socs)

    @property
    def module(self):
        return self.socs[0].module

    @property
    def driver_dir(self):
        return self.socs[0].driver_dir

    def build(self, build_root, verbose, commands):
        from hostlink.sim.pcie.fast.run import build_fast_model, fast_path_runs
        for soc in self.socs:
            soc.fast = fast_path_runs(soc.board, reference=self.reference)
            soc.model = build_model(soc.board.name, self.dma_channels, build_root, verbose, with_dram=self.with_dram,
                                    user_core=self.user_core, reference=not soc.fast)
            if soc.fast:
                build_fast_model(soc.model, harness.say)
            soc.driver_dir = build_uml_driver(soc.board, self.dma_channels, soc.model["soc_dir"], build_root,
                                              with_dram=self.with_dram, user_core=self.user_core, name=soc.driver_name)
        self.model, self.fast = self.socs[0].model, self.socs[0].fast
        return commands

    def prepare(self, run_dir, shared, socket_path):
        # The SoC's register map, for programs that reach hostlink's own CSRs (pattern_record.py); with several
        # SoCs, each's as <board>.csr.json too.
        shutil.copy(self.model["csr_json"], os.path.join(shared, "csr.json"))
        if len(self.socs) > 1:
            for soc in self.socs:
                shutil.copy(soc.model["csr_json"], os.path.join(shared, f"{soc.board.name}.csr.json"))
        copy_memory_inits(self.model, run_dir)
        # The other boards: a simulator each, in a folder of its own, serving a socket of its own.
        self.others = [os.path.join(run_dir, f"board{i}") for i in range(1, len(self.slots))]
        self.other_sockets = [os.path.join(directory, self.socket) for directory in self.others]

    def environment(self):
        tools = [os.path.join(self.driver_dir, d) for d in ("user", "user/libhostlink", "status", "dram")]
        return ["export PATH=" + shlex.quote(":".join([*tools, SYSTEM_PATH])),
                f"export {SCRATCH}",
                "export HOSTLINK_LITEPCIE_KO=" + shlex.quote(self.module),   # For rmmod_busy.py.
                *[f"export {driver_variable(soc.board)}=" + shlex.quote(soc.driver_dir) for soc in self.socs
                  if len(self.socs) > 1]]

    def before(self):
        steps = [Step(f"insmod{'_' + soc.board.name if len(self.socs) > 1 else ''}", f"insmod {shlex.quote(soc.module)}",
                      f"insmod {soc.driver_name}.ko") for soc in self.socs]
        nodes = " ".join(f"/dev/{soc.driver_name}*" for soc in self.socs)
        return steps + [Step("devices", f"sh -c 'ls -l {nodes}'", f"ls -l {nodes}")]

    def after(self):
        names = " ".join(soc.driver_name for soc in self.socs)
        modules = " && insmod ".join(shlex.quote(soc.module) for soc in self.socs)
        if len(self.socs) == 1:
            return [Step("rmmod", f"rmmod {names}", f"rmmod {names}"),
                    Step("reload", f"insmod {modules}", f"insmod {names}.ko (again)"),
                    Step("rmmod2", f"rmmod {names}", f"rmmod {names} (again)")]
        return [Step("rmmod", f"rmmod {names}", f"rmmod {names}"),
                Step("reload", f"sh -c 'insmod {modules}'", "insmod of each driver (again)"),
                Step("rmmod2", f"rmmod {names}", f"rmmod {names} (again)")]

    def kernel_arguments(self, run_dir, socket_path):
        return [f"virtio_uml.device={path}:{DEVICE_ID}" for path in [socket_path, *self.other_sockets]]

    def config(self):
        return bench_config(self.board, self.model, self.profile, with_dram=self.with_dram)

    def uml_config(self, run_dir, shared):
        return {"fault_at":      self.fault_at,
                "other_sockets": self.other_sockets,
                "other_ended":   [os.path.join(directory, ENDED_FILE) for directory in self.others]}

    def run_bench(self, run_dir, config, config_path, log_file):
        run_uml_bench(self.model, run_dir, config, config_path, log_file, self.fast)

    @contextlib.contextmanager
    def beside(self, run_dir, config, verbose):
        stop_file = os.path.join(run_dir, "stop")
        threads = [start_other_board(soc.model, directory, dict(config,
            **bench_config(soc.board, soc.model, soc.profile, with_dram=self.with_dram),
            results=os.path.join(directory, "bench.json"),
            uml=dict(config["uml"], serve_only=True, socket=path, stop_file=stop_file)), verbose, soc.fast)
            for soc, directory, path in zip(self.slots[1:], self.others, self.other_sockets)]
        try:
            yield
        finally:
            # The other boards' simulators end when they see this file.
            with open(stop_file, "w"):
                pass
            for thread in threads:
                thread.join()

    def add_results(self, result, run_dir):
        result["driver_dir"] = self.driver_dir
        result["driver_dirs"] = {soc.driver_name: soc.driver_dir for soc in self.socs}
        result["boards"] = [result["bench"]]
        for directory in self.others:
            path = os.path.join(directory, "bench.json")
            if not os.path.exists(path):
                raise DriverSimError(f"board {len(result['boards'])}'s simulation ended without a summary: see "
                                     f"{os.path.join(directory, 'sim.log')}")
            with open(path) as f:
                result["boards"].append(json.load(f))


def run_driver_sim(board_name, commands, command_timeout_s, profile, dma_channels=2, timeout_s=1800,
        build_root=BUILD_ROOT, verbose=False, mem="256M", fault_at=None, with_dram=False, user_core=None,
        boards=1, reference=False):
    """Build everything, boot the kernel on the simulated SoC, run `commands` inside. Returns the harness's
    result (sim/uml/harness.py's run: the bench's summary, each step's output and exit status, the kernel log,
    where the logs are) with the driver's folder ("driver_dir"). `user_core` ({"spec", "channel"}) puts a
    user's core on a channel, as ./sim.py dma does. `boards`: how many copies of the SoC are on the machine's
    PCI bus (up to MAX_BOARDS), each simulated by a simulator of its own; their summaries are in "boards"
    (the first's also in "bench"). The SoC runs on its fast path (sim/pcie/fast/), or with `reference` under
    cocotb and cocotbext-pcie. `board_name` may be a list of boards of different SoCs, one board each on the
    bus (with a profile each in `profile`), each served by a driver of its own name (sim_driver_name); their
    driver folders are in "driver_dirs"."""
    names = [board_name] if isinstance(board_name, str) else list(board_name)
    profiles = list(profile) if isinstance(profile, (list, tuple)) else [profile] * len(names)
    if len(set(names)) != len(names) or len(profiles) != len(names):
        raise ValueError(f"boards of several SoCs are each named once, with a host profile each, not {names!r}")
    if len(names) > 1 and boards != 1:
        raise ValueError(f"boards copies one SoC; boards of several SoCs ({', '.join(names)}) are one each")
    if not 1 <= max(boards, len(names)) <= MAX_BOARDS:
        raise ValueError(f"boards must be 1 to {MAX_BOARDS} (User-Mode Linux's PCI bus has {MAX_BOARDS} slots), "
                         f"not {max(boards, len(names))!r}")
    plugin = PciBusPlugin([(get_board(name), each) for name, each in zip(names, profiles)], dma_channels, with_dram,
                          user_core, boards, reference, fault_at)
    return harness.run(plugin, commands, command_timeout_s, timeout_s, build_root, verbose, mem)
