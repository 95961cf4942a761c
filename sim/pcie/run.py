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
import threading
import time

from hostlink import REPO, BUILD_ROOT
from hostlink.sim.pcie.soc import get_board, generate_sim_soc, STUBS, HARD_BLOCK_JSON, USER_CORE_JSON
from hostlink.sim.pcie.models.host import HostProfile
from hostlink.sim.pcie.stream_profile import check_stream_names
from hostlink.sim.build_lock import held
from hostlink.sim.progress import Progress, RateEstimate
from hostlink.sim.verilator import compile_model, verilog_design_text
from hostlink.toolchain import verilator_env


def say(message):
    """What a step that takes minutes is doing, on stderr (stdout carries the results)."""
    print(f"sim.py dma: {message}", file=sys.stderr, flush=True)


def _gateware_sources_digest(board, dma_channels, with_dram=False, user_core=None):
    """What the simulated SoC is elaborated from: our gateware and targets, the pinned libraries, and the
    user core's source file."""
    from importlib.metadata import version
    digest = hashlib.sha256(f"{board.name}/{dma_channels}/{with_dram}/{json.dumps(user_core)}".encode())
    for package in ("litex", "litepcie", "litedram", "migen"):
        digest.update(f"{package}=={version(package)}".encode())
    if user_core is not None:
        import inspect
        from hostlink.cores.pcie.user_core import load_user_core
        cls = load_user_core(user_core["spec"])
        for path in [inspect.getsourcefile(cls), *getattr(cls, "VERILOG_SOURCES", [])]:
            with open(path, "rb") as f:
                digest.update(f.read())
    for top in ("cores", "targets", os.path.join("sim", "pcie"), "examples"):
        for folder, _, files in sorted(os.walk(os.path.join(REPO, top))):
            for name in sorted(files):
                if name.endswith((".py", ".v")):
                    with open(os.path.join(folder, name), "rb") as f:
                        digest.update(name.encode() + f.read())
    return digest.hexdigest()[:16]


def user_core_tag(user_core):
    """The part of a model's name that says which user core it carries, on which channel."""
    module, _, cls = user_core["spec"].rpartition(":")
    module = os.path.splitext(os.path.basename(module))[0] if module.endswith((".py", ".v", ".sv")) \
        else module.rpartition(".")[2]
    return f"_{module}-{cls}-ch{user_core['channel']}"


def build_model(board_name, dma_channels=2, build_root=BUILD_ROOT, verbose=False, with_dram=False,
        profile_streams=None, user_core=None, reference=True):
    """Generate the SoC and compile its Verilator model for the reference path (cocotb's simulator); reuse
    both when nothing they depend on changed. With `reference=False` only the SoC is generated: a run on
    the fast path compiles its own library from it (fast/run.py build_fast_model), and the reference's
    model (several minutes of CPU) waits until a reference run asks for it. With `profile_streams` (names
    checked against the SoC first) the model is a separate one in which every signal is visible.
    `user_core` ({"spec": "module:Class", "channel": n}) puts a user's core on a channel (a model of its
    own)."""
    board    = get_board(board_name)
    name     = f"{board.name}_dma{dma_channels}" + ("_dram" if with_dram else "") + \
               (user_core_tag(user_core) if user_core else "")
    soc_dir  = os.path.join(build_root, "sim", name)
    # Another run (a second shell, a parallel test worker) may be building the same SoC.
    with held(soc_dir, say):
        return _build_model(board, name, soc_dir, dma_channels, verbose, with_dram, profile_streams, user_core,
                            reference)

def _build_model(board, name, soc_dir, dma_channels, verbose, with_dram, profile_streams, user_core=None,
                 reference=True):
    public_signals = bool(profile_streams)
    sources  = _gateware_sources_digest(board, dma_channels, with_dram, user_core)
    sources_stamp = os.path.join(soc_dir, "sources.digest")
    verilog  = os.path.join(soc_dir, "gateware", "sim_top.v")
    csr_json = os.path.join(soc_dir, "csr.json")
    hard_block_json = os.path.join(soc_dir, HARD_BLOCK_JSON)
    user_core_json  = os.path.join(soc_dir, USER_CORE_JSON)
    if not (os.path.exists(sources_stamp) and open(sources_stamp).read() == sources
            and os.path.exists(verilog) and os.path.exists(csr_json) and os.path.exists(hard_block_json)
            and os.path.exists(user_core_json)):
        say(f"generating the {name} SoC's Verilog and CSR map in {soc_dir} (under a minute)")
        verilog, csr_json = generate_sim_soc(board, dma_channels, soc_dir, with_dram=with_dram,
                                             user_core=user_core)
        with open(sources_stamp, "w") as f:
            f.write(sources)
    if profile_streams:
        check_stream_names(verilog, profile_streams)
    with open(user_core_json) as f:
        user_core_info = json.load(f)
    # A Verilog user core's own files (verilog_core.py) are compiled with the SoC.
    sources = [verilog, STUBS, *((user_core_info or {}).get("verilog_sources", []))]
    digest = hashlib.sha256()
    for path in sources:
        with open(path) as f:
            digest.update(verilog_design_text(f.read()).encode())
    digest = digest.hexdigest()[:16]
    model_dir = os.path.join(soc_dir, "verilator_public" if public_signals else "verilator")
    stamp     = os.path.join(model_dir, "hostlink.digest")
    if reference and not (os.path.exists(stamp) and open(stamp).read() == digest):
        say(f"compiling the Verilator model of {name} in {model_dir} (several minutes on 2 cores, once "
            f"per design; log: {os.path.join(soc_dir, 'verilator_build.log')})")
        compile_model(model_dir, "sim_top", sources,
            log_file=os.path.join(soc_dir, "verilator_build.log"), verbose=verbose,
            public_signals=public_signals)
        with open(stamp, "w") as f:
            f.write(digest)
    with open(hard_block_json) as f:
        hard_block = json.load(f)
    return {"board": board, "model_dir": model_dir, "csr_json": csr_json, "soc_dir": soc_dir, "verilog": verilog,
        "hard_block": hard_block, "user_core": user_core_info}


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
        "rc_straddle":       model["hard_block"]["rc_straddle"],
        "host":              profile.as_dict(),
        "user_core":         model.get("user_core"),
    }


def copy_memory_inits(model, directory):
    """The model's memory contents into `directory`: $readmemh() paths are relative to the simulator's
    working directory."""
    gateware_dir = os.path.dirname(model["verilog"])
    for name in os.listdir(gateware_dir):
        if name.endswith(".init"):
            shutil.copy(os.path.join(gateware_dir, name), directory)


def run_bench(test_module, model, test_dir, config_path, log_file, top="sim_top"):
    """The cocotb bench `test_module` on the model (built by build_model()), in `test_dir`, reading its
    configuration from `config_path`; the simulator's output into `log_file` (None: the terminal)."""
    from cocotb_tools.runner import get_runner
    get_runner("verilator").test(
        test_module       = test_module,
        hdl_toplevel      = top,
        hdl_toplevel_lang = "verilog",
        build_dir         = model["model_dir"],
        test_dir          = test_dir,
        extra_env         = {"HOSTLINK_SIM_CONFIG": config_path, "COCOTB_LOG_LEVEL": "WARNING"},
        log_file          = log_file,
        results_xml       = os.path.join(test_dir, "results.xml"),
    )


def run_fast_bench(model, test_dir, config, config_path, log_file, entry="hostlink.sim.pcie.bench:run_all"):
    """The bench on the model's fast path (sim/pcie/fast/run.py), in a child process as the reference's
    simulator is: its output into `log_file` (None: the terminal). `entry` (module:function) is what runs
    on the bench: the dma jobs, or sim/uml/bench.py's run_driver."""
    from hostlink.sim.pcie.fast.run import build_fast_model
    config["fast_library"] = build_fast_model(model, say)
    with open(config_path, "w") as f:
        json.dump(config, f)
    # The parent's module path, as cocotb's runner gives its simulator: a user core named by module
    # ("examples.stream_source:StreamSource") is found from the directory the user ran ./sim.py in.
    env = dict(os.environ, HOSTLINK_SIM_PATH="fast", PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    command = [sys.executable, "-m", "hostlink.sim.pcie.fast.run", config_path, entry]
    with open(log_file or os.devnull, "w") as log:
        subprocess.run(command, cwd=test_dir, env=env, stdout=None if log_file is None else log,
            stderr=subprocess.STDOUT if log_file else None)


def run_jobs(board_name, jobs, profile, dma_channels=2, build_root=BUILD_ROOT, verbose=False,
        with_dram=False, profile_streams=None, block_completion_headers=None, user_core=None, reference=False,
        fast=None):
    """Run `jobs` (see bench.py) on the board's model against `profile`. Returns the bench's results.
    `profile_streams` (stream names, see stream_profile.py) adds each job's stream occupancy.
    `block_completion_headers` gives the hard block's model fewer completion headers than the block has
    (tests: a buffer the SoC overfills, whose losses must show as errors). `reference` runs the hard
    block's model with its per-cycle coroutines as written (see v7gen3.make_v7gen3_device). `fast` runs the
    jobs on the compiled fast path (sim/pcie/fast/) instead of cocotb and cocotbext-pcie."""
    from hostlink.sim.pcie.fast.run import check_fast, fast_path_runs
    if fast is None:
        fast = fast_path_runs(get_board(board_name), reference=reference, profile_streams=profile_streams,
                              jobs=jobs)
    elif fast:
        check_fast(get_board(board_name), reference=reference, profile_streams=profile_streams, jobs=jobs)
    model = build_model(board_name, dma_channels, build_root, verbose, with_dram=with_dram,
        profile_streams=profile_streams, user_core=user_core, reference=not fast)
    board = model["board"]
    os.environ.update(verilator_env())
    with tempfile.TemporaryDirectory(prefix="hostlink-sim-") as tmp:
        config_path  = os.path.join(tmp, "config.json")
        results_path = os.path.join(tmp, "results.json")
        config = bench_config(board, model, profile, with_dram=with_dram)
        config.update({
            "jobs":            jobs,
            "profile_streams": list(profile_streams or []),
            "block_completion_headers": block_completion_headers,
            "reference":       bool(reference),
            "results":         results_path,
        })
        progress = Progress("sim.py dma", enabled=None if not verbose else False)
        if progress.enabled:
            config["progress"] = os.path.join(tmp, "progress.json")
        with open(config_path, "w") as f:
            json.dump(config, f)
        copy_memory_inits(model, tmp)
        stop = threading.Event()
        if progress.enabled:
            threading.Thread(target=show_progress, daemon=True,
                args=(progress, config["progress"], jobs, board.sys_clk_hz(), stop)).start()
        try:
            if fast:
                run_fast_bench(model, tmp, config, config_path,
                    log_file=None if verbose else os.path.join(tmp, "sim.log"))
            else:
                run_bench("hostlink.sim.pcie.bench", model, tmp, config_path,
                    log_file=None if verbose else os.path.join(tmp, "sim.log"))
        finally:
            stop.set()
            progress.clear()
        if not os.path.exists(results_path):
            log = open(os.path.join(tmp, "sim.log")).read()[-4000:] if not verbose else ""
            raise RuntimeError(f"the {board.name} simulation ended without results:\n{log}")
        with open(results_path) as f:
            results = json.load(f)
    results["board"]      = board.name
    results["sys_clk_hz"] = int(board.sys_clk_hz())
    results["host"]       = profile.as_dict()
    return results


def job_label(job):
    size = job["size"]
    text = f"{size // 2**20} MiB" if size % 2**20 == 0 else f"{size // 2**10} KiB" if size % 2**10 == 0 else f"{size} B"
    what = "host -> DRAM -> host" if job.get("target") == "dram" else job["kind"]
    channels = len(job["channels"])
    return f"{what} {text}" + (f" x {channels} channels" if channels > 1 else "")


def show_progress(progress, path, jobs, sys_clk_hz, stop):
    """The status line of a run on a terminal, from what the bench writes into `path` (report_progress):
    the row running, simulated cycles per wall-clock second, and the time left at the bytes-per-second
    rate of the run so far (set-up and enumeration excluded)."""
    job_bytes = [job["size"] * len(job["channels"]) * (2 if job.get("target") == "dram" else 1) for job in jobs]
    total     = sum(job_bytes)
    estimate  = RateEstimate()
    previous  = None
    started   = time.monotonic()
    while not stop.wait(0.25):
        try:
            with open(path) as f:
                record = json.load(f)
        except (OSError, ValueError):
            progress.show(f"starting the simulator ({time.monotonic() - started:.0f} s)")
            continue
        now, index = time.monotonic(), record["job"]
        rate = None
        if previous is not None and record["sim_ns"] > previous[1] and now > previous[0]:
            rate = (record["sim_ns"] - previous[1]) * 1e-9 * sys_clk_hz / (now - previous[0])
        if previous is None or now - previous[0] >= 2:
            previous = (now, record["sim_ns"])
        if index < 0:
            progress.show("enumerating the device", rate)
            continue
        done = sum(job_bytes[:index]) + min(record["job_bytes"], job_bytes[index])
        left = estimate.update(done, total)
        progress.show(f"row {index + 1}/{len(jobs)} ({job_label(jobs[index])})", rate, left)
