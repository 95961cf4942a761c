# This file is part of hostlink.
# Copyright (c) 2026 hostlink developers
# SPDX-License-Identifier: BSD-2-Clause

"""`make bench`: re-measure every figure README.md and doc/ publish, with the commands they name.

    python -m reports.bench                    # everything, into build/bench/
    python -m reports.bench --only zc706,udp   # some groups
    python -m reports.bench --list             # the commands and their estimated cost

Each command writes its JSON (and the sweep its PNG) into the output folder, its output into
`<name>.log` next to it; `summary.txt` lists every command, its status and its wall-clock time. A
command that fails does not stop the others; the exit status is 1 if any failed. Benchmarks print
figures and never assert on them: the tests (`make check`, `make test`) check behaviour.
"""

import argparse
import os
import subprocess
import sys
import time

from hostlink import REPO


# Benchmarks ---------------------------------------------------------------------------------------

# (group, name, command with {out} for the output folder and {repo} for the repository, minutes on this
# project's 2-core machine, where the figures are published). The minutes are each command's time in the whole
# `make bench` of 2026-12-06 (build/bench/summary.txt: 44 minutes for the 54, every PCIe simulation on the
# compiled fast path, the models already built; 0.1 for those under 6 seconds); the round trips' and
# zynq_ddr_1600's were timed alone, on the same day. A loaded machine, or models to build, take longer.
BENCHES = [
    ("zc706", "zc706",          "./sim.py dma --board zc706 --sizes 1M,4M --json {out}/zc706.json", 0.1,
        "README.md, doc/zc706.md"),
    ("zc706", "zc706_worst",    "./sim.py dma --board zc706 --sizes 1M --profile worst --json {out}/zc706_worst.json", 0.1,
        "doc/zc706.md"),
    ("vc709", "vc709",          "./sim.py dma --board vc709 --sizes 1M,4M --json {out}/vc709.json", 0.1,
        "README.md, doc/vc709.md"),
    ("vc709", "vc709_worst",    "./sim.py dma --board vc709 --sizes 1M,4M --profile worst --json {out}/vc709_worst.json", 0.1,
        "doc/vc709.md"),
    ("vc709", "vc709_mrrs256",  "./sim.py dma --board vc709 --sizes 1M --directions h2c --mrrs 256 --json {out}/vc709_mrrs256.json", 0.1,
        "doc/vc709.md"),
    ("vc709", "vc709_sweep",    "./sim.py dma --board vc709 --sweep --directions c2h --json {out}/vc709_sweep.json --plot {out}/vc709_sweep.png", 0.9,
        "doc/vc709.md"),
    ("vc709", "vc709_sweep_h2c", "./sim.py dma --board vc709 --sweep --directions h2c --json {out}/vc709_sweep_h2c.json --plot {out}/vc709_sweep_h2c.png", 0.5,
        "doc/vc709.md"),
    ("kc705", "kc705",          "./sim.py dma --board kc705 --sizes 1M,4M --json {out}/kc705.json", 0.3,
        "README.md, doc/kc705.md"),
    ("kc705", "kc705_worst",    "./sim.py dma --board kc705 --sizes 1M --profile worst --json {out}/kc705_worst.json", 0.1,
        "README.md, doc/kc705.md"),
    ("latency", "mrrs256_2us_zc706", "./sim.py dma --board zc706 --sizes 1M --directions h2c --mrrs 256 --read-latency-ns 2000 --json {out}/mrrs256_2us_zc706.json", 0.1,
        "README.md, doc/read_latency.md, doc/zc706.md"),
    ("latency", "mrrs256_2us_kc705", "./sim.py dma --board kc705 --sizes 1M --directions h2c --mrrs 256 --read-latency-ns 2000 --json {out}/mrrs256_2us_kc705.json", 0.1,
        "README.md, doc/read_latency.md"),
    ("latency", "mrrs256_2us_vc709", "./sim.py dma --board vc709 --sizes 1M --directions h2c --mrrs 256 --read-latency-ns 2000 --json {out}/mrrs256_2us_vc709.json", 0.1,
        "README.md, doc/read_latency.md"),
    ("latency", "latency_sweep_zc706", "./sim.py dma --board zc706 --sweep-latency --json {out}/latency_sweep_zc706.json --plot {out}/latency_sweep_zc706.png", 0.2,
        "doc/read_latency.md"),
    ("latency", "latency_sweep_kc705", "./sim.py dma --board kc705 --sweep-latency --json {out}/latency_sweep_kc705.json --plot {out}/latency_sweep_kc705.png", 0.2,
        "doc/read_latency.md"),
    ("latency", "latency_sweep_vc709", "./sim.py dma --board vc709 --sweep-latency --json {out}/latency_sweep_vc709.json --plot {out}/latency_sweep_vc709.png", 0.1,
        "doc/read_latency.md"),
    ("vc709", "vc709_mps512",   "./sim.py dma --board vc709 --sizes 1M,4M --mps 512 --json {out}/vc709_mps512.json", 0.1,
        "README.md, doc/vc709.md"),
    ("vc709", "vc709_mrrs256_no_ext_tag", "./sim.py dma --board vc709 --sizes 1M --directions h2c --mrrs 256 --no-extended-tag --json {out}/vc709_mrrs256_no_ext_tag.json", 0.1,
        "doc/vc709.md, doc/read_latency.md"),
    ("latency", "mrrs256_2us_vc709_no_ext_tag", "./sim.py dma --board vc709 --sizes 1M --directions h2c --mrrs 256 --read-latency-ns 2000 --no-extended-tag --json {out}/mrrs256_2us_vc709_no_ext_tag.json", 0.1,
        "doc/vc709.md"),
    ("latency", "mrrs512_2us_vc709", "./sim.py dma --board vc709 --sizes 1M --directions h2c --read-latency-ns 2000 --json {out}/mrrs512_2us_vc709.json", 0.1,
        "README.md, doc/vc709.md, doc/read_latency.md"),
    ("kc705", "kc705_h2c_no_rx_gaps", "./sim.py dma --board kc705 --sizes 4M --directions h2c --rx-gaps 0 --json {out}/kc705_h2c_no_rx_gaps.json", 0.1,
        "doc/kc705.md"),
    ("dram",  "zc706_dram",     "./sim.py dma --board zc706 --with-dram --sizes 1M,4M --directions h2c,c2h --json {out}/zc706_dram.json", 0.8,
        "doc/dram.md"),
    ("dram",  "vc709_dram",     "./sim.py dma --board vc709 --with-dram --sizes 1M,4M --directions h2c,c2h --json {out}/vc709_dram.json", 0.6,
        "doc/dram.md"),
    ("dram",  "kc705_dram",     "./sim.py dma --board kc705 --with-dram --sizes 1M,4M --directions h2c,c2h --json {out}/kc705_dram.json", 0.7,
        "doc/dram.md, doc/kc705.md"),
    ("udp",   "udp_generator",  "./sim.py udp --board colorlight_i5 --payload 18,512,1472 --count 1000 --json {out}/udp_generator.json", 0.1,
        "README.md, doc/udp_sim.md"),
    ("udp",   "udp_echo",       "./sim.py udp --board colorlight_i5 --mode echo --payload 18,512,1472 --count 1000 --json {out}/udp_echo.json", 0.5,
        "doc/udp_sim.md"),
    ("udp",   "udp_generator_200", "./sim.py udp --payload 18,512,1472 --count 200 --json {out}/udp_generator_200.json", 0.1,
        "doc/udp.md"),
    ("zynq",  "zynq",           "./sim.py zynq --json {out}/zynq.json --plot {out}/zynq.png", 3.2,
        "README.md, doc/zynq.md"),
    ("zynq",  "zynq_ddr_1600",  "./sim.py zynq --ddr-mbytes 1600 --sizes 64K,1M --json {out}/zynq_ddr_1600.json", 0.7,
        "doc/zynq.md"),
    ("area",  "zynq_dma_area",  "python -m reports.zynq_dma_area --json {out}/zynq_dma_area.json", 0.1,
        "doc/zynq.md"),
    ("zynq",  "zynq_sg",        "./sim.py zynq --axi-dma-sg --sizes 8,4K,64K,1M --json {out}/zynq_sg.json", 1.0,
        "doc/zynq.md"),
    ("area",  "zynq_dma_area_sg", "python -m reports.zynq_dma_area --sg --json {out}/zynq_dma_area_sg.json", 0.1,
        "doc/zynq.md"),
    ("area",  "ecp5_area",      "python -m reports.ecp5_area --seeds 1,2,3 --json {out}/ecp5_area.json", 6.3,
        "README.md, doc/udp.md"),
    ("area",  "xilinx_area_vc709",      "python -m reports.xilinx_area --board vc709 --json {out}/xilinx_area_vc709.json", 0.8,
        "doc/vc709.md, doc/dram.md"),
    ("area",  "xilinx_area_vc709_dram", "python -m reports.xilinx_area --board vc709 --with-dram --json {out}/xilinx_area_vc709_dram.json", 2.3,
        "doc/dram.md"),
    ("area",  "xilinx_area_kc705",      "python -m reports.xilinx_area --board kc705 --json {out}/xilinx_area_kc705.json", 0.7,
        "doc/dram.md"),
    ("area",  "xilinx_area_kc705_dram", "python -m reports.xilinx_area --board kc705 --with-dram --json {out}/xilinx_area_kc705_dram.json", 1.9,
        "doc/dram.md"),
    ("area",  "xilinx_area_zc706",      "python -m reports.xilinx_area --board zc706 --json {out}/xilinx_area_zc706.json", 0.6,
        "doc/dram.md"),
    ("area",  "xilinx_area_zc706_dram", "python -m reports.xilinx_area --board zc706 --with-dram --json {out}/xilinx_area_zc706_dram.json", 1.9,
        "doc/dram.md"),
    ("speed", "sim_speed",      "python -m reports.sim_speed --json {out}/sim_speed.json", 11.8,
        "doc/pcie_sim.md"),
    ("speed", "fast_agreement", "python -m reports.fast_agreement --json {out}/fast_agreement.json", 5.4,
        "doc/pcie_sim.md"),
    ("user",  "user_zc706",     "./sim.py dma --board zc706 --user-core examples.accelerator:Accelerator --sizes 1M,4M --json {out}/user_zc706.json", 0.1,
        "doc/user_cores.md"),
    ("user",  "user_vc709",     "./sim.py dma --board vc709 --user-core examples.accelerator:Accelerator --sizes 1M,4M --json {out}/user_vc709.json", 0.1,
        "doc/user_cores.md"),
    ("user",  "user_kc705",     "./sim.py dma --board kc705 --user-core examples.accelerator:Accelerator --sizes 1M,4M --json {out}/user_kc705.json", 0.3,
        "doc/user_cores.md"),
    ("user",  "bidir_zc706",    "./sim.py dma --board zc706 --sizes 1M,4M --directions bidir --json {out}/bidir_zc706.json", 0.1,
        "doc/user_cores.md"),
    ("user",  "bidir_vc709",    "./sim.py dma --board vc709 --sizes 1M,4M --directions bidir --json {out}/bidir_vc709.json", 0.1,
        "doc/user_cores.md"),
    ("user",  "bidir_kc705",    "./sim.py dma --board kc705 --sizes 1M,4M --directions bidir --json {out}/bidir_kc705.json", 0.1,
        "doc/user_cores.md"),
    ("flow",  "flow_lossless_zc706", "./sim.py dma --board zc706 --flow lossless --sizes 1M --ring 8 --buffer-size 64K --json {out}/flow_lossless_zc706.json", 0.1,
        "doc/user_cores.md"),
    ("flow",  "flow_lossless_vc709", "./sim.py dma --board vc709 --flow lossless --sizes 1M --ring 8 --buffer-size 64K --json {out}/flow_lossless_vc709.json", 0.1,
        "doc/user_cores.md"),
    ("flow",  "flow_lossless_kc705", "./sim.py dma --board kc705 --flow lossless --sizes 1M --ring 8 --buffer-size 64K --json {out}/flow_lossless_kc705.json", 0.1,
        "doc/user_cores.md"),
    ("flow",  "flow_stalls_lossless_zc706", "./sim.py dma --board zc706 --flow lossless --directions h2c,c2h,bidir --sizes 64K --ring 4 --buffer-size 4K --stall-ns 20000 --stall-every 4 --json {out}/flow_stalls_lossless_zc706.json", 0.1,
        "doc/user_cores.md"),
    ("flow",  "flow_stalls_loop_zc706", "./sim.py dma --board zc706 --flow loop --directions h2c,c2h,bidir --sizes 64K --ring 4 --buffer-size 4K --stall-ns 20000 --stall-every 4 --json {out}/flow_stalls_loop_zc706.json", 0.1,
        "doc/user_cores.md"),
    ("flow",  "flow_realtime_over_zc706", "./sim.py dma --board zc706 --flow realtime --user-core examples.stream_source:CountingSource --user-setting rate=4506 --sizes 256K --ring 2 --buffer-size 4K --stall-ns 41000 --stall-every 2 --json {out}/flow_realtime_over_zc706.json", 0.2,
        "doc/user_cores.md"),
    ("flow",  "flow_realtime_under_zc706", "./sim.py dma --board zc706 --flow realtime --user-core examples.stream_source:CountingSource --user-setting rate=37546 --sizes 512K --ring 8 --buffer-size 16K --json {out}/flow_realtime_under_zc706.json", 0.1,
        "doc/user_cores.md"),
    ("flow",  "flow_packets_zc706", "./sim.py dma --board zc706 --flow packets --user-core examples.stream_source:CountingSource --user-setting packet=766 --sizes 256K --ring 8 --buffer-size 16K --json {out}/flow_packets_zc706.json", 0.1,
        "doc/user_cores.md"),
    ("driver", "driver_zc706",  "./sim.py driver --board zc706 --json {out}/driver_zc706.json", 0.4,
        "doc/driver_sim.md"),
    ("driver", "driver_vc709",  "./sim.py driver --board vc709 --json {out}/driver_vc709.json", 0.4,
        "doc/driver_sim.md"),
    # One buffer's round trip through the real driver (hostlink.host, poll and interrupt, loopback and accelerator).
    ("latency", "round_trip_zc706", "./sim.py driver --board zc706 --user-core examples.accelerator:Accelerator --json {out}/round_trip_zc706.json -- python3 {repo}/sim/uml/guest/round_trip.py csr.json loopback,accelerator 100", 0.2,
        "doc/host_api.md"),
    ("latency", "round_trip_vc709", "./sim.py driver --board vc709 --user-core examples.accelerator:Accelerator --json {out}/round_trip_vc709.json -- python3 {repo}/sim/uml/guest/round_trip.py csr.json loopback,accelerator 100", 0.2,
        "doc/host_api.md"),
    ("latency", "round_trip_kc705", "./sim.py driver --board kc705 --user-core examples.accelerator:Accelerator --json {out}/round_trip_kc705.json -- python3 {repo}/sim/uml/guest/round_trip.py csr.json loopback,accelerator 100", 0.3,
        "doc/host_api.md"),
    # The libraries' throughput beside hostlink_bench's on the same SoC (C and Python, copy and zero-copy).
    ("driver", "throughput_zc706", "./sim.py driver --board zc706 --user-core examples.accelerator:Accelerator --command-timeout 1800 --json {out}/throughput_zc706.json -- sh {repo}/sim/uml/guest/throughput_vs_bench.sh 4194304", 0.1,
        "doc/host_api.md"),
    ("driver", "throughput_vc709", "./sim.py driver --board vc709 --user-core examples.accelerator:Accelerator --command-timeout 1800 --json {out}/throughput_vc709.json -- sh {repo}/sim/uml/guest/throughput_vs_bench.sh 4194304", 0.1,
        "doc/host_api.md"),
    ("zynq",  "zynq_linux",     "./sim.py driver --board zc706 --ps7 --json {out}/zynq_linux.json", 2.1,
        "README.md, doc/zynq.md"),
    ("zynq",  "zynq_linux_sg",  "./sim.py driver --board zc706 --ps7 --axi-dma-sg --json {out}/zynq_linux_sg.json", 3.5,
        "doc/zynq.md"),
    # Seed 003's three drivers swept 8 B to 6 MiB with the ARM's software in simulated time (Figs 4/5, Table I).
    ("zynq",  "zynq_drivers",   "python -m hostlink.sim.zynq.drivers --json {out}/zynq_drivers.json --plot {out}/zynq_drivers.png", 11.5,
        "doc/zynq.md"),
]
GROUPS = sorted({group for group, *_ in BENCHES})

# Commands whose purpose is to show losses: LitePCIe's loop mode under a stalling host reports the bytes it got
# wrong, and exits 1 as every run with errors does. That exit is their result, not a failure of the bench.
EXPECTED_EXIT = {"flow_stalls_loop_zc706": 1}


def selected(only):
    if not only:
        return list(BENCHES)
    groups = [g.strip() for g in only.split(",") if g.strip()]
    unknown = [g for g in groups if g not in GROUPS]
    if unknown:
        raise ValueError(f"unknown group {unknown[0]!r}; groups: {', '.join(GROUPS)}")
    return [b for b in BENCHES if b[0] in groups]


def command_argv(command, out):
    """The command as a list, run from the repository with the Python running this script."""
    argv = command.format(out=out, repo=REPO).split()
    if argv[0] == "python":
        argv[0] = sys.executable
    elif argv[0] == "./sim.py":
        argv = [sys.executable, os.path.join(REPO, "sim.py"), *argv[1:]]
    return argv


def format_minutes(minutes):
    if minutes >= 60:
        return f"{int(minutes // 60)} h {round(minutes % 60):02d} min"
    return f"{minutes:.0f} min" if minutes >= 1 else "<1 min"

# Main ---------------------------------------------------------------------------------------------

def main(argv=None):
    parser = argparse.ArgumentParser(prog="bench", description=__doc__.strip().splitlines()[0])
    parser.add_argument("--out",  default=os.path.join(REPO, "build", "bench"),
        help="Output folder (default build/bench).")
    parser.add_argument("--only", default="", help=f"Comma-separated groups: {', '.join(GROUPS)}.")
    parser.add_argument("--list", action="store_true", help="List the commands and their estimated cost; run nothing.")
    args = parser.parse_args(argv)
    try:
        benches = selected(args.only)
    except ValueError as error:
        parser.error(str(error))
    out = os.path.abspath(args.out)
    total = sum(b[3] for b in benches)
    if args.list:
        for group, name, command, minutes, where in benches:
            print(f"{group:7} {name:24} ~{format_minutes(minutes):>11}  {command.format(out=out, repo=REPO)}   [{where}]")
        print(f"{len(benches)} commands, about {format_minutes(total)} on this 2-core machine (estimated)")
        return 0

    os.makedirs(out, exist_ok=True)
    print(f"bench: {len(benches)} commands into {out}, about {format_minutes(total)} (estimated)", flush=True)
    lines, failed = [], 0
    for index, (group, name, command, minutes, where) in enumerate(benches, start=1):
        print(f"bench: [{index}/{len(benches)}] {name}: {command.format(out=out, repo=REPO)} (~{format_minutes(minutes)})",
            flush=True)
        start = time.monotonic()
        with open(os.path.join(out, f"{name}.log"), "w") as log:
            status = subprocess.run(command_argv(command, out), cwd=REPO, stdin=subprocess.DEVNULL,
                stdout=log, stderr=subprocess.STDOUT).returncode
        elapsed = time.monotonic() - start
        expected = EXPECTED_EXIT.get(name, 0)
        failed += status != expected
        verdict = ("ok" if status == 0 else f"ok (exit {status}: the losses it shows)") if status == expected \
            else f"FAILED (exit {status}, see {name}.log)"
        print(f"bench: [{index}/{len(benches)}] {name}: {verdict} in {elapsed / 60:.1f} min", flush=True)
        lines.append(f"{name:24} {verdict:40} {elapsed / 60:6.1f} min  {command.format(out=out, repo=REPO)}  [{where}]")
    with open(os.path.join(out, "summary.txt"), "w") as f:
        f.write("\n".join(lines) + "\n")
    print(f"bench: {len(benches) - failed} of {len(benches)} commands ok; summary in {os.path.join(out, 'summary.txt')}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
