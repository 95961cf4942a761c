# This file is part of hostlink.
# Copyright (c) 2026 hostlink developers
# SPDX-License-Identifier: BSD-2-Clause

"""./sim.py's arguments and wall-clock limit, without building a model: NaN and infinite host-profile
values refused on one line, and a run past its limit stopped with the tail of its log."""

import os
import subprocess
import sys
import time

import importlib.util

import pytest

from hostlink.sim import dma, udp
from hostlink.sim.watchdog import run_with_limit

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# ./sim.py itself (the name `sim` is the sim/ package).
_spec = importlib.util.spec_from_file_location("sim_cli", os.path.join(REPO, "sim.py"))
sim   = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(sim)

# Non-finite values --------------------------------------------------------------------------------

@pytest.mark.parametrize("flag", ["--read-latency-ns", "--backpressure", "--rx-gaps", "--timeout"])
@pytest.mark.parametrize("value", ["nan", "NaN", "inf", "-inf", "1e999"])
def test_dma_refuses_non_finite_values_on_one_line(capsys, flag, value):
    with pytest.raises(SystemExit) as e:
        sim.main(["dma", f"{flag}={value}"])
    assert e.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert err.startswith(f"sim.py dma: error: argument {flag}: must be a finite number")


@pytest.mark.parametrize("args,message", [
    (["--read-latency-ns=-1"], "argument --read-latency-ns: must be >= 0, not '-1'"),
    (["--timeout", "0"],       "argument --timeout: must be positive, not '0'"),
    (["--backpressure", "1"],  "argument --backpressure: probability must be in [0, 1), not '1'"),
    (["--mps", "nan"],         "argument --mps: invalid int value: 'nan'"),
])
def test_dma_refuses_out_of_range_values_on_one_line(capsys, args, message):
    with pytest.raises(SystemExit) as e:
        sim.main(["dma", *args])
    assert e.value.code == 2
    err = capsys.readouterr().err
    assert err == f"sim.py dma: error: {message}\n"


@pytest.mark.parametrize("args,message", [
    (["--rx-gaps", "2"],          "argument --rx-gaps: probability must be in [0, 1), not '2'"),
    (["--read-latency-ns=nan"],   "argument --read-latency-ns: must be a finite number"),
    (["--no-extended-tag"],       "unrecognized arguments: --no-extended-tag"),   # Its kernel sets the bit.
])
def test_driver_checks_the_host_profile_as_dma_does(capsys, args, message):
    with pytest.raises(SystemExit) as e:
        sim.main(["driver", *args, "--", "true"])
    assert e.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith(f"sim.py driver: error: {message}"), err


@pytest.mark.parametrize("value", ["nan", "inf", "-inf", "0"])
def test_udp_refuses_non_finite_timeout_on_one_line(capsys, value):
    assert sim.main(["udp", f"--timeout={value}"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert err.startswith("sim.py udp: --timeout must be positive and finite")


def test_udp_argument_errors_are_one_line(capsys):
    with pytest.raises(SystemExit) as e:
        sim.main(["udp", "--count", "0"])
    assert e.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("./sim.py udp: error: argument --count")

# Limits -------------------------------------------------------------------------------------------

def test_dma_limit_scales_with_the_work_and_follows_timeout():
    small = dma.run_limit(dma.parse_args(["--sizes", "4K", "--directions", "h2c"]))
    large = dma.run_limit(dma.parse_args(["--sizes", "4M", "--directions", "h2c,c2h,bidir"]))
    assert small == pytest.approx(dma.RUN_BASE_SECONDS + dma.RUN_SECONDS_PER_MIB / 256)
    assert large == pytest.approx(dma.RUN_BASE_SECONDS + dma.RUN_SECONDS_PER_MIB * 12)
    assert dma.run_limit(dma.parse_args(["--timeout", "42.5"])) == 42.5


def test_udp_limit_follows_its_per_size_timeout():
    args = udp.parser().parse_args(["--payload", "18,512", "--timeout", "30"])
    assert udp.run_limit(args) == udp.RUN_BUILD_ALLOWANCE + 30 * 4

# Wall-clock limit ---------------------------------------------------------------------------------

def process_state(pid):
    """The state letter in /proc (Z: dead, waiting for a reaper), or None when the process is gone."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0]
    except OSError:
        return None


HANGING_RUN = """
import os, subprocess, sys, time
log = os.path.join(os.environ["TMPDIR"], "run", "sim.log")
os.makedirs(os.path.dirname(log))
with open(log, "w") as f:
    f.write("".join(f"cycle {i}\\n" for i in range(100)) + "last words of the simulator\\n")
child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
open(sys.argv[1], "w").write(str(child.pid))
time.sleep(600)
"""

def test_a_run_past_its_limit_is_stopped_with_the_tail_of_its_log(tmp_path, capsys):
    pid_file = tmp_path / "pid"
    start = time.monotonic()
    status = run_with_limit([sys.executable, "-c", HANGING_RUN, str(pid_file)], 3, "sim.py dma")
    assert status == 124
    assert time.monotonic() - start < 30
    err = capsys.readouterr().err
    assert "sim.py dma: stopped after 3 s of wall-clock time (--timeout)" in err
    assert "last words of the simulator" in err and "cycle 99" in err and "cycle 0\n" not in err
    # The whole process group went, the simulator's own children included.
    grandchild = int(pid_file.read_text())
    # Killed with its group; on a busy machine the kernel may take a moment to reap it: wait for that,
    # bounded, rather than a fixed sleep.
    deadline = time.monotonic() + 10
    while process_state(grandchild) not in (None, "Z") and time.monotonic() < deadline:
        time.sleep(0.05)
    assert process_state(grandchild) in (None, "Z"), "the simulator's child outlived the run"


def test_a_run_gets_sigterm_first_to_clean_up(tmp_path, capsys):
    marker = tmp_path / "cleaned"
    code = ("import signal, sys, time\n"
            "def bye(*_):\n"
            f"    open({str(marker)!r}, 'w').write('namespace deleted')\n"
            "    sys.exit(143)\n"
            "signal.signal(signal.SIGTERM, bye)\n"
            "time.sleep(600)\n")
    assert run_with_limit([sys.executable, "-c", code], 2, "sim.py udp") == 124
    assert marker.read_text() == "namespace deleted"
    assert "no simulator log was written yet" in capsys.readouterr().err


def test_a_run_within_its_limit_returns_its_own_status():
    assert run_with_limit([sys.executable, "-c", "raise SystemExit(3)"], 30, "sim.py dma") == 3


def test_sim_py_dma_stops_at_its_timeout(tmp_path):
    """The real command line: the limit covers the model build too (a 2 s limit stops it there)."""
    env = dict(os.environ, HOSTLINK_BUILD_DIR=str(tmp_path / "build"))
    start = time.monotonic()
    proc = subprocess.run([sys.executable, os.path.join(REPO, "sim.py"), "dma", "--sizes", "4K", "--timeout", "2"],
        capture_output=True, text=True, env=env, timeout=120)
    assert proc.returncode == 124, proc.stderr
    assert time.monotonic() - start < 60
    assert "sim.py dma: stopped after 2 s of wall-clock time (--timeout)" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_dma_no_extended_tag_makes_a_host_that_leaves_it_clear():
    from hostlink.sim.pcie.soc import get_board
    board = get_board("vc709")
    on  = dma.profile_from_args(dma.build_parser().parse_args([]), board)
    off = dma.profile_from_args(dma.build_parser().parse_args(["--no-extended-tag"]), board)
    assert (on.extended_tag, off.extended_tag) == (True, False)


# Output files ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("argv, message", [
    (["dma", "--json", "/nonexistent/r.json"], "sim.py dma: error: argument --json: the folder /nonexistent "
                                                "does not exist: create it first"),
    (["dma", "--plot", "/tmp"], "sim.py dma: error: argument --plot: '/tmp' is a folder: give a file name"),
    (["driver", "--json", "/nonexistent/r.json"], "sim.py driver: error: argument --json: the folder "
                                                   "/nonexistent does not exist: create it first"),
    (["zynq", "--plot", "/nonexistent/p.png"], "sim.py zynq: error: argument --plot: the folder /nonexistent "
                                                "does not exist: create it first"),
    (["udp", "--json", "/nonexistent/r.json"], "udp: error: argument --json: the folder /nonexistent does "
                                                "not exist: create it first"),
])
def test_an_output_file_in_a_missing_folder_is_refused_before_the_run(capsys, argv, message):
    """Refused while the arguments are read, on one line: never after a simulation, losing its results."""
    with pytest.raises(SystemExit) as e:
        sim.main(argv)
    assert e.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert err.rstrip("\n").endswith(message), err

