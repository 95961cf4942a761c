# This file is part of hostlink.
# Copyright (c) 2026 hostlink developers
# SPDX-License-Identifier: BSD-2-Clause

"""`pytest --busy N` (test/conftest.py, `make test-loaded`): N CPU-bound processes run beside the tests for
the whole run and are gone after it; a bad N is refused in one line."""

import os
import subprocess
import sys

import pytest

import conftest

HERE  = os.path.dirname(os.path.abspath(__file__))
PROBE = "HOSTLINK_TEST_BUSY_PROBE"


def burners(parent=None):
    """The pids of the burner processes running now (those of `parent` only, when given)."""
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                argv = f.read().split(b"\0")
        except OSError:
            continue
        if conftest.BURNER.encode() in argv and (parent is None or parent_of(pid) == parent):
            found.append(int(pid))
    return found


def parent_of(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            return int(f.read().rsplit(")", 1)[1].split()[1])
    except OSError:
        return None


def run_pytest(*args, expect_burners=0):
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *args],
                          cwd=os.path.dirname(HERE), capture_output=True, text=True, timeout=120,
                          env={**os.environ, PROBE: str(expect_burners)})


@pytest.mark.skipif(PROBE not in os.environ, reason="run by test_busy_runs_burners_for_the_whole_run only")
def test_probe_sees_the_burners():
    # This pytest's own (another run beside it, make test-loaded, has its own).
    assert len(burners(parent=os.getpid())) == int(os.environ[PROBE])


@pytest.mark.parametrize("n", [0, 2])
def test_busy_runs_burners_for_the_whole_run(n):
    before = set(burners())
    r = run_pytest("--busy", str(n), "test/test_busy_option.py::test_probe_sees_the_burners", expect_burners=n)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "1 passed" in r.stdout
    assert set(burners()) <= before   # None of the run's is left.


def test_busy_refuses_a_negative_count():
    r = run_pytest("--busy", "-1", "--collect-only", "test/test_busy_option.py")
    assert r.returncode == 4
    assert "--busy must be a number of processes (0 or more), not -1" in r.stderr
