# This file is part of hostlink.
# Copyright (c) 2026 hostlink developers
# SPDX-License-Identifier: BSD-2-Clause

"""Build a simulated PCIe DMA SoC with Verilator (cached) and run the cocotb bench on it."""

import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile

from hostlink.sim.pcie.soc import get_board, generate_sim_soc, STUBS
from hostlink.sim.pcie.host import HostProfile
from hostlink.sim.pcie.stream_profile import check_stream_names
from hostlink.sim.toolchain import verilator_env

REPO       = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BUILD_ROOT = os.environ.get("HOSTLINK_BUILD_DIR", os.path.join(REPO, "build"))


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
        ["make", "-j", str(os.cpu_count() or 1), "-C", model_dir, "-f", "Vtop.mk"],
    ]
    with open(log_file, "w") as log:
        for cmd in commands:
            result = subprocess.run(cmd, env=env, stdout=None if verbose else log,
                stderr=subprocess.STDOUT, text=True)
            if result.returncode != 0:
                raise RuntimeError(f"Verilator build failed ({' '.join(cmd[:2])} ...): see {log_file}")


def _gateware_sources_digest(board, dma_channels, with_dram=False):
    """What the simulated SoC is elaborated from: our gateware and targets, and the pinned libraries."""
    from importlib.metadata import version
    digest = hashlib.sha256(f"{board.name}/{dma_channels}/{with_dram}".encode())
    for package in ("litex", "litepcie", "litedram", "migen"):
        digest.update(f"{package}=={version(package)}".encode())
    for top in ("cores", "targets", os.path.join("sim", "pcie")):
        for folder, _, files in sorted(os.walk(os.path.join(REPO, top))):
            for name in sorted(files):
                if name.endswith((".py", ".v")):
                    with open(os.path.join(folder, name), "rb") as f:
                        digest.update(name.encode() + f.read())
    return digest.hexdigest()[:16]


def build_model(board_name, dma_channels=2, build_root=BUILD_ROOT, verbose=False, with_dram=False,
        profile_streams=None):
    """Generate the SoC and compile its Verilator model; reuse both when nothing they depend on changed.
    With `profile_streams` (names checked against the SoC first) the model is a separate one in which
    every signal is visible."""
    public_signals = bool(profile_streams)
    board    = get_board(board_name)
    name     = f"{board.name}_dma{dma_channels}" + ("_dram" if with_dram else "")
    soc_dir  = os.path.join(build_root, "sim", name)
    sources  = _gateware_sources_digest(board, dma_channels, with_dram)
    sources_stamp = os.path.join(soc_dir, "sources.digest")
    verilog  = os.path.join(soc_dir, "gateware", "sim_top.v")
    csr_json = os.path.join(soc_dir, "csr.json")
    if not (os.path.exists(sources_stamp) and open(sources_stamp).read() == sources
            and os.path.exists(verilog) and os.path.exists(csr_json)):
        verilog, csr_json = generate_sim_soc(board, dma_channels, soc_dir, with_dram=with_dram)
        with open(sources_stamp, "w") as f:
            f.write(sources)
    if profile_streams:
        check_stream_names(verilog, profile_streams)
    digest = hashlib.sha256()
    for path in (verilog, STUBS):
        with open(path) as f:
            # LiteX stamps the generation date in comments: not a change of the design.
            digest.update("".join(l for l in f if not l.startswith("//")).encode())
    digest = digest.hexdigest()[:16]
    model_dir = os.path.join(soc_dir, "verilator_public" if public_signals else "verilator")
    stamp     = os.path.join(model_dir, "hostlink.digest")
    if not (os.path.exists(stamp) and open(stamp).read() == digest):
        compile_model(model_dir, "sim_top", [verilog, STUBS],
            log_file=os.path.join(soc_dir, "verilator_build.log"), verbose=verbose,
            public_signals=public_signals)
        with open(stamp, "w") as f:
            f.write(digest)
    return {"board": board, "model_dir": model_dir, "csr_json": csr_json, "soc_dir": soc_dir, "verilog": verilog}


def bench_config(board, model, profile, with_dram=False):
    """What every bench on the board's model reads from its configuration file: the board, its clocks, the
    SoC's CSR map and the host profile."""
    return {
        "board":             board.name,
        "device":            board.device,
        "hard_block_prefix": board.hard_block_prefix,
        "data_width":        board.data_width,
        "user_clk_hz":       board.user_clk_freq,
        "sys_clk_hz":        board.sys_clk_hz(),
        "sys_clock":         board.sys_clock,
        "dram_clk_hz":       board.dram_clk_hz() if with_dram else None,
        "csr_json":          model["csr_json"],
        "host":              profile.as_dict(),
    }


def copy_memory_inits(model, directory):
    """The model's memory contents into `directory`: $readmemh() paths are relative to the simulator's
    working directory."""
    gateware_dir = os.path.dirname(model["verilog"])
    for name in os.listdir(gateware_dir):
        if name.endswith(".init"):
            shutil.copy(os.path.join(gateware_dir, name), directory)


def run_jobs(board_name, jobs, profile, dma_channels=2, build_root=BUILD_ROOT, verbose=False,
        with_dram=False, profile_streams=None):
    """Run `jobs` (see bench.py) on the board's model against `profile`. Returns the bench's results.
    `profile_streams` (stream names, see stream_profile.py) adds each job's stream occupancy."""
    from cocotb_tools.runner import get_runner
    model = build_model(board_name, dma_channels, build_root, verbose, with_dram=with_dram,
        profile_streams=profile_streams)
    board = model["board"]
    os.environ.update(verilator_env())
    with tempfile.TemporaryDirectory(prefix="hostlink-sim-") as tmp:
        config_path  = os.path.join(tmp, "config.json")
        results_path = os.path.join(tmp, "results.json")
        config = bench_config(board, model, profile, with_dram=with_dram)
        config.update({
            "jobs":            jobs,
            "profile_streams": list(profile_streams or []),
            "results":         results_path,
        })
        with open(config_path, "w") as f:
            json.dump(config, f)
        copy_memory_inits(model, tmp)
        runner = get_runner("verilator")
        runner.test(
            test_module  = "hostlink.sim.pcie.bench",
            hdl_toplevel = "sim_top",
            hdl_toplevel_lang = "verilog",
            build_dir    = model["model_dir"],
            test_dir     = tmp,
            extra_env    = {"HOSTLINK_SIM_CONFIG": config_path, "COCOTB_LOG_LEVEL": "WARNING"},
            log_file     = None if verbose else os.path.join(tmp, "sim.log"),
            results_xml  = os.path.join(tmp, "results.xml"),
        )
        if not os.path.exists(results_path):
            log = open(os.path.join(tmp, "sim.log")).read()[-4000:] if not verbose else ""
            raise RuntimeError(f"the {board.name} simulation ended without results:\n{log}")
        with open(results_path) as f:
            results = json.load(f)
    results["board"]      = board.name
    results["sys_clk_hz"] = int(board.sys_clk_hz())
    results["host"]       = profile.as_dict()
    return results
