# This file is part of hostlink.
# Copyright (c) 2026 hostlink developers
# SPDX-License-Identifier: BSD-2-Clause

"""One harness for the User-Mode Linux runs: the kernel boots on a simulated SoC, runs commands and powers
off; the run then reads what they left.

The harness owns what every run does: the kernel (brought up to date and preflighted, sim/uml/kernel.py), the
run folder build/uml/runs/<name> (one run at a time per SoC, cleared first), the kernel's init (mounts, the
shared folder, `step`, the commands, the kernel log, power off), its command line and the configuration of the
simulator's bench, the supervision (the bench runs; the kernel is ended if the bench left it running) and the
result. A plug-in (Plugin) supplies what its bridge between the kernel and the simulated SoC needs:

- PciBusPlugin (sim/uml/run.py, ./sim.py driver): the PCIe SoCs on virt-pci's PCI bus, one virtio-pci socket
  per board (sim/uml/bench.py, pcidev.py), LitePCIe's driver loaded before the commands, unloaded and
  loaded again after them;
- PlatformBusPlugin (sim/zynq/linux.py, ./sim.py driver --ps7): the Zynq SoC's logic on virt-pci's platform
  bus, described by a device tree (sim/zynq/uml_bench.py), the interrupt counts saved after the commands.
"""

import contextlib
import json
import os
import shlex
import shutil
import signal
import sys
from collections import namedtuple

from hostlink.sim.build_lock import held
from hostlink.sim.uml.kernel import UML_KERNEL, POWER_OFF, KernelError, ensure_kernel, preflight
from hostlink.toolchain import verilator_env

__all__ = ["DriverSimError", "Plugin", "Step", "run", "init_script", "mounts_and_steps", "read_steps", "end_kernel"]

# A run is ended, with the kernel's stacks in the simulation log, once the machine (the kernel or one of its
# processes) has computed for this many seconds of wall-clock time without one register access: it is
# spinning (the benches: sim/uml/bench.py, sim/zynq/uml_bench.py).
KERNEL_STUCK_S = 300

# virt-pci's device (CONFIG_UML_PCI_OVER_VIRTIO_DEVICE_ID, sim/uml/linux/uml.config): each bridge's socket.
DEVICE_ID = 1234

# What the init's commands find on their PATH after the plug-in's folders, and where they keep scratch files:
# a tmpfs over /run (mounts_and_steps). One over /tmp would hide the repository, the driver and the shared
# folder whenever they live under the host's /tmp (a clone in /tmp, pytest's tmp_path).
SYSTEM_PATH = "/usr/sbin:/usr/bin:/sbin:/bin"
SCRATCH     = "HOME=/run TMPDIR=/run"

# The kernel log, saved by every init after the plug-in's files (Plugin.saved), read into the result's "dmesg".
KERNEL_LOG = ("dmesg", "dmesg", "dmesg.txt")


class DriverSimError(RuntimeError):
    """Something ./sim.py driver needs is missing or did not build; the message says what to do."""


def say(message):
    """What a run is waiting for (another run's lock, a build), on stderr."""
    print(f"sim.py driver: {message}", file=sys.stderr, flush=True)

# Plug-ins -----------------------------------------------------------------------------------------

# One step of the init: `step NAME COMMAND` (COMMAND a shell line), reported as `label`.
Step = namedtuple("Step", "name command label")


class Plugin:
    """What one kind of run gives the harness: the run's name, what it builds, its part of the init and of the
    kernel's command line, its bench and what it adds to the result. The harness calls build(), prepare(),
    the init's parts, kernel_arguments(), config(), uml_config(), then run_bench() inside beside(), then
    add_results()."""

    name    = None   # The run folder: build/uml/runs/<name>.
    source  = None   # The module that writes the init (its header line).
    machine = None   # The init's header line: "init of the User-Mode Linux kernel <machine>".
    socket  = None   # The bridge's socket, in the run folder.
    saved   = ()     # (result key, command, file in the shared folder): run after the commands, read at the end.

    def build(self, build_root, verbose, commands):
        """Build what the run needs (the SoC's model, its software); returns the commands to run (the
        plug-in's defaults when `commands` is None)."""
        raise NotImplementedError

    def prepare(self, run_dir, shared, socket_path):
        """Put what the bench and the kernel need in the new run folder (besides the init and the config)."""

    def environment(self):
        """The init's lines before its mounts: PATH, HOME and TMPDIR (SYSTEM_PATH, SCRATCH), the plug-in's own."""
        return [f"export PATH={SYSTEM_PATH} {SCRATCH}"]

    def before(self):
        """Steps before the commands."""
        return []

    def after(self):
        """Steps after the commands."""
        return []

    def kernel_arguments(self, run_dir, socket_path):
        """The kernel's arguments that attach the bridge (after init=)."""
        raise NotImplementedError

    def config(self):
        """The bench's configuration, without "results" and "uml" (the harness adds them)."""
        raise NotImplementedError

    def uml_config(self, run_dir, shared):
        """The plug-in's own entries of the bench's "uml" configuration."""
        return {}

    def run_bench(self, run_dir, config, config_path, log_file):
        """Run the simulator's bench (it starts the kernel); its output into `log_file` (None: the terminal)."""
        raise NotImplementedError

    def beside(self, run_dir, config, verbose):
        """A context for run_bench(): what runs beside the bench (other boards' simulators), ended on leaving
        it, after the kernel."""
        return contextlib.nullcontext()

    def add_results(self, result, run_dir):
        """The plug-in's own entries of the result."""

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


def steps(plugin, commands):
    """The init's steps: the plug-in's before, each command (cmd0, cmd1, ...), the plug-in's after."""
    return [*plugin.before(),
            *[Step(f"cmd{i}", " ".join(shlex.quote(c) for c in command), " ".join(command))
              for i, command in enumerate(commands)],
            *plugin.after()]


def init_script(plugin, shared, commands, command_timeout_s):
    """The kernel's init: the plug-in's environment, the mounts, each step with a time limit (output and exit
    status in `shared`), the plug-in's files and the kernel log saved there, power off."""
    lines = [
        "#!/bin/sh",
        f"# Generated by hostlink ({plugin.source}): init of the User-Mode Linux kernel {plugin.machine}.",
        *plugin.environment(),
        *mounts_and_steps(shared, command_timeout_s),
        *[f"step {step.name} {step.command}" for step in steps(plugin, commands)],
        *[f"{command} > {name}" for _, command, name in [*plugin.saved, KERNEL_LOG]],
        "sync",
        # Power off: reboot(LINUX_REBOOT_CMD_POWER_OFF); the host's own poweroff wants systemd.
        POWER_OFF,
    ]
    return "\n".join(lines) + "\n"


def read_steps(shared, names, labels):
    """Each step's output and exit status (mounts_and_steps' NAME.out and NAME.rc in `shared`), as dicts of
    name, command (its label), exit_status and output (None where the step never ran) and timed_out."""
    result = []
    for name, label in zip(names, labels):
        output = status = None
        out_path, rc_path = os.path.join(shared, name + ".out"), os.path.join(shared, name + ".rc")
        if os.path.exists(out_path):
            with open(out_path, errors="replace") as f:
                output = f.read()
        if os.path.exists(rc_path):
            with open(rc_path) as f:
                status = int(f.read().strip() or -1)
        result.append({"name": name, "command": label, "exit_status": status, "output": output,
                       "timed_out": status == 137})
    return result

# Run ----------------------------------------------------------------------------------------------

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


def run(plugin, commands, command_timeout_s, timeout_s, build_root, verbose, mem):
    """Build what the plug-in's run needs, boot the kernel on its simulated SoC, run `commands` inside (the
    plug-in's defaults when None). Returns a dict: where the run is ("run_dir") and its logs are
    ("console_log", "sim_log"), the bench's summary ("bench"), each step's output and exit status ("steps"),
    the kernel log ("dmesg"), the plug-in's files (Plugin.saved) and entries (Plugin.add_results)."""
    try:
        preflight(ensure_kernel())
    except KernelError as error:
        raise DriverSimError(str(error)) from None
    run_dir = os.path.join(build_root, "uml", "runs", plugin.name)
    # One run at a time per SoC: the run folder (and the SoC's software build) is cleared and rebuilt.
    with held(run_dir, say):
        return _run(plugin, run_dir, commands, command_timeout_s, timeout_s, build_root, verbose, mem)


def _run(plugin, run_dir, commands, command_timeout_s, timeout_s, build_root, verbose, mem):
    commands = plugin.build(build_root, verbose, commands)
    shutil.rmtree(run_dir, ignore_errors=True)
    shared = os.path.join(run_dir, "shared")
    os.makedirs(shared)
    socket_path = os.path.join(run_dir, plugin.socket)
    plugin.prepare(run_dir, shared, socket_path)
    init = os.path.join(run_dir, "init.sh")
    with open(init, "w") as f:
        f.write(init_script(plugin, shared, commands, command_timeout_s))
    os.chmod(init, 0o755)
    os.environ.update(verilator_env())
    config = plugin.config()
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
            # The kernel's process group while it runs, for end_kernel.
            "pid_file":    os.path.join(run_dir, "uml.pid"),
            **plugin.uml_config(run_dir, shared),
            "command":     [UML_KERNEL, f"mem={mem}", "rootfstype=hostfs", "rootflags=/", "ro", f"init={init}",
                            *plugin.kernel_arguments(run_dir, socket_path),
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
    sim_log = os.path.join(run_dir, "sim.log")
    with plugin.beside(run_dir, config, verbose):
        try:
            plugin.run_bench(run_dir, config, config_path, None if verbose else sim_log)
        finally:
            # Interrupted (SIGTERM, SIGINT: the runner kills the simulator), the simulator could not end
            # the kernel it started: end it here.
            end_kernel(config["uml"]["pid_file"])
    result = {"run_dir": run_dir, "console_log": config["uml"]["console_log"], "sim_log": sim_log}
    if not os.path.exists(config["results"]):
        raise DriverSimError(f"the simulation ended without a summary: see {sim_log}")
    with open(config["results"]) as f:
        result["bench"] = json.load(f)
    plugin.add_results(result, run_dir)
    done = steps(plugin, commands)
    result["steps"] = read_steps(shared, [step.name for step in done], [step.label for step in done])
    for key, _, name in [KERNEL_LOG, *plugin.saved]:
        path = os.path.join(shared, name)
        result[key] = open(path, errors="replace").read() if os.path.exists(path) else None
    return result
