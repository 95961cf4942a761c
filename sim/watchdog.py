# This file is part of hostlink.
# Copyright (c) 2026 hostlink developers
# SPDX-License-Identifier: BSD-2-Clause

"""Command-line helpers shared by `./sim.py`'s commands: argument errors on one line, finite numbers only,
output files whose folder exists, and a wall-clock limit on the whole run.

A run is executed in a child process of its own session: when the limit expires the child's whole
process group (the simulator included) gets SIGTERM (the UDP run deletes its namespace on it), then
SIGKILL, and the tail of the newest log the run wrote is printed, instead of a hang.
"""

import argparse
import glob
import math
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

__all__ = ["OneLineArgumentParser", "finite_float", "number_list", "output_file", "run_with_limit", "CHILD_ENV"]

CHILD_ENV  = "HOSTLINK_SIM_CHILD" # Set in the child: it runs the command itself.
TERM_GRACE = 20                   # Seconds between SIGTERM and SIGKILL.
LOG_TAIL   = 30                   # Lines of the log shown when a run is stopped.

# Arguments ----------------------------------------------------------------------------------------

class OneLineArgumentParser(argparse.ArgumentParser):
    """Errors as one line, `<prog>: error: <message>`, exit status 2 (no usage block, no traceback)."""
    def error(self, message):
        self.exit(2, f"{self.prog}: error: {message}\n")


def finite_float(minimum=None, positive=False):
    """An argparse type: a finite float (no NaN, no infinity), >= minimum, or > 0 when positive."""
    def parse(text):
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"must be a number, not {text!r}")
        if not math.isfinite(value):
            raise argparse.ArgumentTypeError(f"must be a finite number, not {text!r}")
        if positive and value <= 0:
            raise argparse.ArgumentTypeError(f"must be positive, not {text!r}")
        if minimum is not None and value < minimum:
            raise argparse.ArgumentTypeError(f"must be >= {minimum:g}, not {text!r}")
        return value
    return parse

def number_list(kind, not_numbers, valid, not_valid):
    """An argparse type: comma-separated numbers ('1,2,4') as a list of `kind` (int, float). Refused with
    `not_numbers` when one is not a number, with `not_valid` when there are none or `valid(value)` is false
    for one."""
    def parse(text):
        try:
            values = [kind(t) for t in str(text).split(",") if t.strip()]
        except ValueError:
            raise argparse.ArgumentTypeError(f"{not_numbers}, not {text!r}")
        if not values or not all(valid(v) for v in values):
            raise argparse.ArgumentTypeError(f"{not_valid}, not {text!r}")
        return values
    return parse


def output_file(text):
    """An argparse type: a file to write the results into (--json, --plot), checked before the run so that
    a simulation's results are never lost to a folder that does not exist or cannot be written."""
    folder = os.path.dirname(os.path.abspath(text))
    if os.path.isdir(text):
        raise argparse.ArgumentTypeError(f"{text!r} is a folder: give a file name")
    if not os.path.isdir(folder):
        raise argparse.ArgumentTypeError(f"the folder {folder} does not exist: create it first")
    if not os.access(folder, os.W_OK):
        raise argparse.ArgumentTypeError(f"the folder {folder} cannot be written")
    return text

# Wall-clock limit ---------------------------------------------------------------------------------

def _newest_log(roots, since):
    logs = []
    for root in roots:
        for path in glob.glob(os.path.join(root, "**", "*.log"), recursive=True):
            try:
                mtime = os.path.getmtime(path)
            except OSError:
                continue
            if mtime >= since:
                logs.append((mtime, path))
    return max(logs)[1] if logs else None


def _tail(path, lines):
    try:
        with open(path, errors="replace") as f:
            return f.read().splitlines()[-lines:]
    except OSError:
        return []


PR_SET_PDEATHSIG = 1


def _die_with(parent_pid):
    """In the child, before it runs: SIGTERM when the parent dies, even by SIGKILL (the child is in a
    session of its own, so no terminal or process-group signal reaches it), so it still cleans up."""
    def preexec():
        import ctypes
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGTERM)
        if os.getppid() != parent_pid:   # The parent died before the request took effect.
            os.kill(os.getpid(), signal.SIGTERM)
    return preexec


def run_with_limit(argv, limit, label, log_roots=(), stderr=None):
    """Run `argv` (a command that is a ./sim.py run) for at most `limit` seconds of wall-clock time.

    Returns its exit status, or 124 after stopping it, having printed on `stderr` one line saying so
    and the tail of the newest `*.log` written since the start under `log_roots` or the child's
    temporary directory (where the DMA simulator writes its log).
    """
    stderr = stderr or sys.stderr
    start  = time.time()
    tmp    = tempfile.mkdtemp(prefix="hostlink-run-")
    env    = dict(os.environ, **{CHILD_ENV: "1", "TMPDIR": tmp})
    proc   = subprocess.Popen(argv, env=env, start_new_session=True, preexec_fn=_die_with(os.getpid()))

    def pass_on(signum, frame):
        # SIGTERM to this process (kill, a CI runner, the test harness) ends the run as it would the
        # child: passed on to its process group, and the child's own exit status returned.
        os.killpg(proc.pid, signum)
    previous = signal.signal(signal.SIGTERM, pass_on)
    try:
        try:
            return proc.wait(timeout=limit)
        except subprocess.TimeoutExpired:
            pass
        for sig, grace in [(signal.SIGTERM, TERM_GRACE), (signal.SIGKILL, 5)]:
            try:
                os.killpg(proc.pid, sig)
            except ProcessLookupError:
                break
            try:
                proc.wait(timeout=grace)
                break
            except subprocess.TimeoutExpired:
                continue
        print(f"{label}: stopped after {limit:g} s of wall-clock time (--timeout); the run did not finish",
              file=stderr)
        log = _newest_log([tmp, *log_roots], start)
        if log:
            print(f"{label}: last lines of {log}:", file=stderr)
            for line in _tail(log, LOG_TAIL):
                print(f"    {line}", file=stderr)
        else:
            print(f"{label}: no simulator log was written yet (stopped while building the model?)", file=stderr)
        return 124
    except KeyboardInterrupt:
        # The child is in its own session: pass the interrupt on, and let it clean up.
        os.killpg(proc.pid, signal.SIGINT)
        return proc.wait()
    finally:
        signal.signal(signal.SIGTERM, previous)
        shutil.rmtree(tmp, ignore_errors=True)
