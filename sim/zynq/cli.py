# This file is part of hostlink.
# Copyright (c) 2026 hostlink developers
# SPDX-License-Identifier: BSD-2-Clause

"""./sim.py zynq: throughput and latency of the Zynq SoC's AXI DMA from 8 bytes to 6 MB, in simulated time.

    ./sim.py zynq                                  every size, MM2S, S2MM and loopback
    ./sim.py zynq --sizes 4K,1M --modes loopback   some
    ./sim.py zynq --read-latency-ns 400            a slower DDR
    ./sim.py zynq --ddr-mbytes 1600                a narrower DDR, where MM2S and S2MM compete in loopback
    ./sim.py zynq --plot zynq.png                  and a plot, beside the paper's Table I

MM2S reads the PS's DDR into the pattern checker, S2MM writes the pattern generator's packet into it, loopback
does both (the SoC's default wiring). Figures are at the logic's clock (the PS's FCLK0, 150 MHz): a transfer's cycles from the register
write that starts it to its interrupt, every byte checked.
"""

import argparse
import json
import os
import tempfile

from hostlink.sim import plots
from hostlink.sim.dma import parse_size
from hostlink.sim.watchdog import OneLineArgumentParser, output_file
from hostlink.sim.zynq.models.ps_model import DDR_KEYS, PS_MODEL

__all__ = ["main", "parse_args", "run", "run_limit", "plot", "LOG_ROOTS", "DEFAULT_SIZES", "PAPER_TABLE_I"]

DEFAULT_SIZES = [8, 64, 512, 4096, 32768, 262144, 1 << 20, 6 << 20]   # The paper's range: 8 B to 6 MB.
MODES = ["mm2s", "s2mm", "loopback"]
MAX_SIZE = (1 << 26) - 1
LOG_ROOTS = []
RUN_BASE_SECONDS = 300
RUN_SECONDS_PER_MIB = 120
# Seed 003's Table I: single buffer, about 100 KB, TX, software included (the ARM cores' time), MB/s.
PAPER_TABLE_I = {"user-level driver, polling": 185.0, "user-level driver, scheduled": 139.0,
                 "kernel driver (interrupts)": 91.0}
PAPER_TABLE_I_BYTES = 100_000


def parse_sizes(text):
    sizes = [parse_size(part) for part in text.split(",") if part]
    if not sizes or any(not 1 <= s <= MAX_SIZE for s in sizes):
        raise argparse.ArgumentTypeError(f"sizes are 1 byte to 64 MiB - 1 (the DMA's 26-bit length), not {text!r}")
    return sizes


def parse_modes(text):
    modes = [part for part in text.split(",") if part]
    if not modes or any(m not in MODES for m in modes):
        raise argparse.ArgumentTypeError(f"modes are among {', '.join(MODES)}, not {text!r}")
    return modes


def check_sizes(sizes, modes):
    if "s2mm" in modes and any(size % 8 for size in sizes):
        raise ValueError("s2mm's packets come from the pattern generator in whole 8-byte beats: sizes that are "
                         "multiples of 8 with --modes s2mm")


def build_parser():
    p = OneLineArgumentParser(prog="sim.py zynq", description=__doc__.strip().splitlines()[0])
    p.add_argument("--sizes", type=parse_sizes, default=DEFAULT_SIZES,
        help="Transfer sizes, e.g. 8,4K,6M (default 8 B to 6 MB).")
    p.add_argument("--modes", type=parse_modes, default=MODES, help="mm2s, s2mm, loopback (default all).")
    ps = PS_MODEL
    p.add_argument("--clock-mhz", type=float, default=ps["clock_hz"]/1e6,
        help=f"The logic's clock, FCLK0 (default {ps['clock_hz']/1e6:g}).")
    p.add_argument("--read-latency-ns", type=float, default=ps["read_latency_ns"],
        help=f"The DDR's read latency behind HP0, address to first beat (default {ps['read_latency_ns']:g} ns).")
    p.add_argument("--write-latency-ns", type=float, default=ps["write_latency_ns"],
        help=f"Last write beat to its response (default {ps['write_latency_ns']:g} ns).")
    p.add_argument("--max-reads", type=int, default=ps["max_reads"],
        help=f"Read bursts HP0 takes in flight (default {ps['max_reads']}).")
    p.add_argument("--max-writes", type=int, default=ps["max_writes"],
        help=f"Write bursts HP0 takes in flight (default {ps['max_writes']}).")
    p.add_argument("--rate-mbytes", type=float, default=ps["rate_bytes_per_s"]/1e6,
        help=f"The port's rate each way, MB/s (default {ps['rate_bytes_per_s']/1e6:g}, UG585's figure for one HP "
             "port).")
    p.add_argument("--ddr-mbytes", type=float, default=ps["ddr_bytes_per_s"]/1e6,
        help=f"The DDR's peak rate, reads and writes together, MB/s (default {ps['ddr_bytes_per_s']/1e6:,.0f}, the "
             "ZC706's 32-bit DDR3-1066; sim/zynq/models/ps_model.py has its efficiencies and turnarounds).")
    p.add_argument("--axi-dma-sg", action="store_true",
        help="The DMA in PG021's scatter-gather mode: each transfer one descriptor in the PS's DDR, started by "
             "TAILDESC; its time includes the descriptor's fetch and STATUS write-back.")
    p.add_argument("--json", metavar="PATH", type=output_file, help="Write the results as JSON to PATH.")
    p.add_argument("--plot", metavar="PNG", type=output_file, help="Plot MB/s against the transfer's size into PNG, with the port's "
                   "rate and the paper's Table I (software included) beside.")
    p.add_argument("--verbose", action="store_true", help="Show the simulator's output.")
    return p


def parse_args(argv, parser=None):
    parser = parser or build_parser()
    args = parser.parse_args(argv)
    if not 10 <= args.clock_mhz <= 250:
        parser.error(f"the logic's clock must be 10 to 250 MHz, not {args.clock_mhz}")
    for name in ("read_latency_ns", "write_latency_ns"):
        if not 0 <= getattr(args, name) <= 1e6:
            parser.error(f"--{name.replace('_', '-')} must be 0 to 1,000,000 ns")
    for name in ("max_reads", "max_writes"):
        if not 1 <= getattr(args, name) <= 64:
            parser.error(f"--{name.replace('_', '-')} must be 1 to 64")
    try:
        check_sizes(args.sizes, args.modes)
    except ValueError as error:
        parser.error(str(error))
    if not 1 <= args.rate_mbytes <= 100_000:
        parser.error(f"--rate-mbytes must be 1 to 100000, not {args.rate_mbytes}")
    if not 100 <= args.ddr_mbytes <= 100_000:
        parser.error(f"--ddr-mbytes must be 100 to 100000, not {args.ddr_mbytes}")
    return args


def run_limit(args):
    return RUN_BASE_SECONDS + RUN_SECONDS_PER_MIB * len(args.modes) * sum(args.sizes) / (1 << 20)


def run(sizes, modes, clock_hz=PS_MODEL["clock_hz"], read_latency_ns=PS_MODEL["read_latency_ns"],
        write_latency_ns=PS_MODEL["write_latency_ns"], max_reads=PS_MODEL["max_reads"],
        max_writes=PS_MODEL["max_writes"], rate_bytes_per_s=PS_MODEL["rate_bytes_per_s"],
        ddr_bytes_per_s=PS_MODEL["ddr_bytes_per_s"], verbose=False, sg=False):
    """Runs every (mode, size) job with the PS model's figures (sim/zynq/models/ps_model.py's unless given); returns the
    bench's results (sim/zynq/bench.py)."""
    check_sizes(sizes, modes)
    from hostlink.sim.pcie.run import BUILD_ROOT, run_bench
    from hostlink.sim.zynq.top import build_model
    from hostlink.toolchain import verilator_env
    model = build_model(BUILD_ROOT, sg=sg)
    os.environ.update(verilator_env())
    with tempfile.TemporaryDirectory(prefix="hostlink-zynq-") as tmp:
        config = {"jobs": [(mode, size) for mode in modes for size in sizes], "sizes": sizes, "clock_hz": clock_hz,
                  "read_latency_ns": read_latency_ns, "write_latency_ns": write_latency_ns,
                  "max_reads": max_reads, "max_writes": max_writes, "rate_bytes_per_s": rate_bytes_per_s,
                  "ddr_bytes_per_s": ddr_bytes_per_s, "sg": sg, "results": os.path.join(tmp, "results.json")}
        config_path = os.path.join(tmp, "config.json")
        with open(config_path, "w") as f:
            json.dump(config, f)
        log = os.path.join(tmp, "sim.log")
        run_bench("hostlink.sim.zynq.bench", model, tmp, config_path, log_file=None if verbose else log)
        if not os.path.exists(config["results"]):
            tail = open(log).read()[-3000:] if os.path.exists(log) else ""
            raise RuntimeError(f"the Zynq simulation ended without results:\n{tail}")
        with open(config["results"]) as f:
            results = json.load(f)
    results["clock_hz"] = clock_hz
    results["axi_dma_sg"] = sg
    results["ps_model"] = {k: config[k] for k in ("read_latency_ns", "write_latency_ns", "max_reads", "max_writes",
                                                 "rate_bytes_per_s")} | {k: PS_MODEL[k] for k in DDR_KEYS}
    results["ps_model"]["ddr_bytes_per_s"] = ddr_bytes_per_s
    return results


def format_table(results):
    lines = [f"figures in simulated time (cycles at {results['clock_hz']/1e6:.0f} MHz), every byte checked",
             f"{'mode':>9} {'size':>9} {'cycles':>9} {'MB/s':>8} {'latency us':>11} {'errors':>6}"]
    for row in results["results"]:
        cycles = row["cycles"] if row["cycles"] is not None else "-"
        lines.append(f"{row['mode']:>9} {row['size']:>9} {cycles:>9} {row.get('mbytes_per_s', 0):>8.1f} "
                     f"{row.get('latency_us', 0):>11.3f} {row['errors']:>6}" + (f"  {row['error']}" if row["error"] else ""))
    lines.append(f"bursts: {results['bursts']}, at most {results['most_reads_in_flight']} reads and "
                 f"{results['most_writes_in_flight']} writes in flight; the DDR ({results['ps_model']['ddr_bytes_per_s']/1e6:,.0f} "
                 f"MB/s peak) changed direction {results['ddr_switches']} times, {results['ddr_critical_switches']} of them "
                 f"for a direction kept waiting")
    return "\n".join(lines)


def plot(results, path):
    """MB/s against size per mode (simulated, the hardware alone), the port's rate, and the paper's Table I points
    (single buffer, about 100 KB, its software included) for comparison; written to `path` (PNG)."""
    rate = results["ps_model"]["rate_bytes_per_s"] / 1e6
    with plots.png(path, dpi=100) as axes:
        for mode in MODES:
            points = sorted((row["size"], row["mbytes_per_s"]) for row in results["results"]
                            if row["mode"] == mode and row.get("cycles"))
            if points:
                axes.plot([p[0] for p in points], [p[1] for p in points], marker="o",
                          label=f"hostlink {mode} (hardware, simulated)")
        axes.axhline(rate, color="grey", linestyle="--", label=f"the modelled HP port, {rate:,.0f} MB/s")
        for (name, value), marker in zip(PAPER_TABLE_I.items(), ["s", "^", "v"]):
            axes.plot([PAPER_TABLE_I_BYTES], [value], marker=marker, linestyle="none", color="black",
                      label=f"paper, Table I: {name}, {value:.0f} MB/s")
        axes.set_xscale("log", base=2)
        axes.set_xlabel("transfer size (bytes)")
        axes.set_ylabel("MB/s")
        axes.set_title(f"Zynq AXI DMA on HP0, {results['clock_hz'] / 1e6:.0f} MHz logic: ./sim.py zynq (the paper's "
                       f"figures include its software)", fontsize=9)
    return path


def main(argv=None):
    args = parse_args(argv)
    results = run(args.sizes, args.modes, args.clock_mhz * 1e6, args.read_latency_ns, args.write_latency_ns,
                  args.max_reads, args.max_writes, args.rate_mbytes * 1e6, args.ddr_mbytes * 1e6, args.verbose,
                  args.axi_dma_sg)
    print(format_table(results))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=2)
        print(f"results written to {args.json}")
    if args.plot:
        print(f"plot written to {plot(results, args.plot)}")
    return 0 if all(row["errors"] == 0 for row in results["results"]) else 1
