# This file is part of hostlink.
# Copyright (c) 2026 hostlink developers
# SPDX-License-Identifier: BSD-2-Clause

"""The status line of long simulations (sim/progress.py): shown on a terminal only, with the row, the
simulated cycles per second and the time left; nothing at all when the output is a file or a pipe."""

import fcntl
import io
import os
import pty
import select
import struct
import subprocess
import sys
import termios
import time

import pytest

from helpers import REPO
from hostlink.sim.progress import Progress, RateEstimate, format_seconds
from hostlink.sim.pcie.run import job_label


class FakeTerminal(io.StringIO):
    def isatty(self):
        return True


def test_format_seconds():
    assert format_seconds(7) == "7 s"
    assert format_seconds(95) == "1 min 35 s"
    assert format_seconds(3725) == "1 h 02 min"
    assert format_seconds(-3) == "0 s"


def test_status_line_names_the_row_the_speed_and_the_time_left():
    out = FakeTerminal()
    progress = Progress("sim.py dma", stream=out, enabled=True)
    progress.show("row 2/6 (h2c 1 MiB)", cycles_per_s=123_400, seconds_left=95)
    assert out.getvalue() == "\r\x1b[Ksim.py dma: row 2/6 (h2c 1 MiB), 123 k simulated cycles/s, about 1 min 35 s left"
    progress.clear()
    assert out.getvalue().endswith("\r\x1b[K")


def test_status_line_is_rate_limited():
    out = FakeTerminal()
    progress = Progress("x", stream=out, enabled=True, interval=60)
    progress.show("first")
    progress.show("second")
    assert "first" in out.getvalue() and "second" not in out.getvalue()


def test_nothing_when_not_a_terminal():
    out = io.StringIO()   # isatty() is False: a file or a pipe.
    progress = Progress("sim.py dma", stream=out)
    assert not progress.enabled
    progress.show("row 1/1", 1e5, 10)
    progress.clear()
    assert out.getvalue() == ""


def test_rate_estimate():
    estimate = RateEstimate()
    assert estimate.update(0, 100) is None       # First sample: no rate yet.
    estimate.start = (estimate.start[0] - 10, 0)  # 10 s ago.
    left = estimate.update(25, 100)
    assert left == pytest.approx(30, rel=0.01)   # 25 units in 10 s: 75 more take 30 s.


def test_job_labels():
    assert job_label({"kind": "h2c", "size": 2**20, "channels": [0]}) == "h2c 1 MiB"
    assert job_label({"kind": "c2h", "size": 4096, "channels": [0, 1]}) == "c2h 4 KiB x 2 channels"
    assert job_label({"kind": "dram", "target": "dram", "size": 100, "channels": [0]}) == "host -> DRAM -> host 100 B"


def run_on_terminal(argv, timeout):
    """Run `argv` with stdout and stderr on a pseudo-terminal; returns (exit status, everything shown)."""
    leader, follower = pty.openpty()
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 200, 0, 0))   # 40 rows, 200 columns.
    proc = subprocess.Popen(argv, cwd=REPO, stdin=subprocess.DEVNULL, stdout=follower, stderr=follower)
    os.close(follower)
    shown, deadline = b"", time.monotonic() + timeout
    while time.monotonic() < deadline:
        ready, _, _ = select.select([leader], [], [], 1)
        if ready:
            try:
                chunk = os.read(leader, 65536)
            except OSError:   # The terminal's other side closed: the run is over.
                break
            if not chunk:
                break
            shown += chunk
        elif proc.poll() is not None:
            break
    os.close(leader)
    return proc.wait(timeout=60), shown.decode(errors="replace")


@pytest.mark.sim
def test_dma_run_on_a_terminal_shows_the_row_speed_and_time_left():
    # 32 MiB: on the compiled fast path (the ZC706's default) about 2.7 million cycles, several seconds of
    # wall time, so the line is shown more than once (every 0.25 s).
    status, shown = run_on_terminal([sys.executable, "sim.py", "dma", "--board", "zc706", "--sizes", "32M",
        "--directions", "c2h"], timeout=1800)
    assert status == 0, shown[-3000:]
    assert "sim.py dma: row 1/1 (c2h 32 MiB)" in shown, shown[-3000:]
    assert "simulated cycles/s" in shown and " left" in shown, shown[-3000:]
    table = shown.split("figures in simulated time")[1]
    assert "\x1b[K" not in table.split("\n", 1)[1]   # The line is cleared before the table.


@pytest.mark.sim
def test_dma_run_into_a_pipe_shows_no_status_line():
    result = subprocess.run([sys.executable, "sim.py", "dma", "--board", "zc706", "--sizes", "64K",
        "--directions", "c2h"], cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=1800)
    assert result.returncode == 0, result.stdout + result.stderr
    for text in (result.stdout, result.stderr):
        assert "\r" not in text and "simulated cycles/s" not in text


@pytest.mark.sim
def test_udp_run_on_a_terminal_shows_the_row_speed_and_time_left():
    from hostlink.sim.netns import unavailable_reason
    reason = unavailable_reason()
    if reason is not None:
        pytest.skip(f"./sim.py udp cannot run here: {reason}")
    # Enough packets for a few status lines at the simulator's speed (about 2 million cycles per second).
    status, shown = run_on_terminal([sys.executable, "sim.py", "udp", "--payload", "1472", "--count", "20000"],
        timeout=1800)
    assert status == 0, shown[-3000:]
    assert "sim.py udp: row 1/1 (1472-byte payload, frame " in shown, shown[-3000:]
    assert "simulated cycles/s" in shown and " left" in shown, shown[-3000:]
    summary = shown.split("hostlink UDP simulation:")[1]
    assert "\x1b[K" not in summary   # The line is cleared before the results.
