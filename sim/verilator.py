# This file is part of hostlink.
# Copyright (c) 2026 hostlink developers
# SPDX-License-Identifier: BSD-2-Clause

"""Verilator builds, for every simulated design (the PCIe SoCs' models and their fast path, the Zynq's logic,
the benches of test/): how many compile jobs, a model with cocotb's VPI main, and a design's text without
the stamps that differ from one elaboration to the next."""

import os
import re
import subprocess

from hostlink.toolchain import verilator_env

__all__ = ["compile_jobs", "compile_model", "verilog_design_text"]


def compile_jobs():
    """C++ compile jobs for a model: every core, shared out among pytest-xdist's workers when there are
    several (each may be compiling a model at the same time), two at least (a worker that compiles while
    the others simulate can use more than its share)."""
    cores   = os.cpu_count() or 1
    workers = max(1, int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1") or 1))
    return min(cores, max(2, cores // workers))


def compile_model(model_dir, top, sources, log_file, verbose=False, public_signals=False):
    """Verilator model with cocotb's VPI main, like cocotb's runner builds it, with our own flags.

    cocotb's runner adds --public-flat-rw, which makes every signal of the SoC writable from VPI: that
    stops Verilator from optimising, and the bench only needs the top-level ports (--public-depth 1).
    """
    import cocotb_tools.config
    libs = cocotb_tools.config.libs_dir
    main = os.path.join(cocotb_tools.config.share_dir, "lib", "verilator", "verilator.cpp")
    env  = dict(os.environ, **verilator_env())
    os.makedirs(model_dir, exist_ok=True)
    commands = [
        ["verilator", "-cc", "--exe", "-Mdir", model_dir, "--top-module", top, "--prefix", "Vtop",
         "-o", top, "--vpi", *(["--public-flat-rw"] if public_signals else ["--public-depth", "1"]),
         "-LDFLAGS", f"-Wl,-rpath,{libs} -L{libs} -lcocotbvpi_verilator",
         "-Wno-fatal", "-Wno-lint", "-Wno-style", "-O3", "--x-assign", "fast", "--x-initial", "fast",
         "--timescale", "1ps/1ps", main, *sources],
        ["make", "-j", str(compile_jobs()), "-C", model_dir, "-f", "Vtop.mk"],
    ]
    with open(log_file, "w") as log:
        for cmd in commands:
            result = subprocess.run(cmd, env=env, stdout=None if verbose else log,
                stderr=subprocess.STDOUT, text=True)
            if result.returncode != 0:
                raise RuntimeError(f"Verilator build failed ({' '.join(cmd[:2])} ...): see {log_file}")


def verilog_design_text(text):
    """Verilog without its comments' LiteX stamps: the generation date and git hash (`//` lines) and the
    module tree (a `/* */` block, whose branches come out in a different order from one elaboration to
    the next). Equal for two elaborations of the same design, so the model is not compiled again."""
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    return "".join(line for line in text.splitlines(keepends=True) if not line.startswith("//"))
