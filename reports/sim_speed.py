# This file is part of hostlink.
# Copyright (c) 2026 hostlink developers
# SPDX-License-Identifier: BSD-2-Clause

"""Simulation speed: `./sim.py dma` against its reference path, on one machine in one run (issues 34, 48).

    python -m reports.sim_speed [--boards vc709,zc706,kc705] [--size 4M] [--json PATH]

For each board and host profile (default, worst) it runs the same jobs (c2h, h2c and bidir of `--size`)
twice: as `./sim.py dma` runs them by default and with `--reference`. By default every board runs on the
compiled fast path (sim/pcie/fast/), which must agree with the reference (the same data, errors and MSIs,
cycles within 1 % at 1 MiB or more: sim/pcie/fast/agreement.py). It prints simulated cycles per wall-clock second
each way, their ratio, and whether they agree. Wall time is the whole run with the models already built:
start-up and enumeration included. Last, the cost per TLP of cocotbext-pcie's link, root complex and host
model alone (hostlink.sim.pcie.fabric_cost), which bounds the reference path's speed.
"""

import argparse
import json
import time

PROFILES  = ("default", "worst")
DIRECTIONS = ("c2h", "h2c", "bidir")


def timed_run(board, size, profile_name, reference):
    from hostlink.sim.dma import board_profile_defaults, run
    from hostlink.sim.pcie.models.host import host_profile
    from hostlink.sim.pcie.run import build_model
    from hostlink.sim.pcie.soc import get_board
    from hostlink.sim.pcie.fast.run import build_fast_model, fast_path_runs
    model = build_model(board)    # Built (or found) before the clock starts.
    if fast_path_runs(get_board(board), reference=reference):
        build_fast_model(model)
    profile = host_profile(profile_name, **board_profile_defaults(get_board(board)))
    start = time.perf_counter()
    results = run(board, [size], list(DIRECTIONS), profile=profile, reference=reference)
    wall = time.perf_counter() - start
    rows = [{k: r[k] for k in ("direction", "size", "bytes", "cycles", "errors", "msis")} for r in results["results"]]
    return {"wall_s": wall, "cycles": sum(r["cycles"] for r in rows), "rows": rows,
            "path": "reference" if reference else "fast" if fast_path_runs(get_board(board)) else "default"}


def measure(boards, size):
    from hostlink.sim.pcie.fabric_cost import measure as fabric
    from hostlink.sim.pcie.soc import get_board
    report = {"size": size, "runs": [], "fabric": {}}
    for board in boards:
        for name in PROFILES:
            fast      = timed_run(board, size, name, reference=False)
            reference = timed_run(board, size, name, reference=True)
            if fast["path"] == "fast":
                from hostlink.sim.pcie.fast.agreement import differences
                agree = differences(fast["rows"], reference["rows"]) == []
            else:
                agree = fast["rows"] == reference["rows"]
            report["runs"].append({"board": board, "profile": name, "fast": fast, "reference": reference,
                "same": agree, "path": fast["path"],
                "ratio": (fast["cycles"] / fast["wall_s"]) / (reference["cycles"] / reference["wall_s"])})
        cost = fabric(board, count=4096)
        # One c2h TLP of the host's MPS every `cycles_per_tlp` cycles: what the default run moved.
        c2h = next(r for r in report["runs"] if r["board"] == board and r["profile"] == "default")
        cycles = next(row["cycles"] for row in c2h["fast"]["rows"] if row["direction"] == "c2h")
        tlps = size // 256
        cost["cycles_per_c2h_tlp"] = cycles / tlps
        cost["bound_cycles_per_s"] = cost["cycles_per_c2h_tlp"] / (cost["wall_us_per_tlp"] * 1e-6)
        report["fabric"][board] = cost
    return report


def format_report(report):
    size = report["size"]
    lines = [f"c2h, h2c and bidir of {size // 2**20 if size % 2**20 == 0 else size} "
             f"{'MiB' if size % 2**20 == 0 else 'bytes'} each; cycles per wall-clock second (start-up included)",
             "",
             "| board | profile | default path | cycles | default k cycles/s | --reference k cycles/s | ratio | agree |",
             "|---|---|---|---|---|---|---|---|"]
    for r in report["runs"]:
        f, ref = r["fast"], r["reference"]
        lines.append(f"| {r['board']} | {r['profile']} | {r['path']} | {f['cycles']:,} | {f['cycles'] / f['wall_s'] / 1e3:.1f} | "
                     f"{ref['cycles'] / ref['wall_s'] / 1e3:.1f} | {r['ratio']:.2f} | {'yes' if r['same'] else 'NO'} |")
    lines += ["", "| board | link, root complex and host model alone, per TLP | cycles per c2h TLP | bound |",
              "|---|---|---|---|"]
    for board, cost in report["fabric"].items():
        lines.append(f"| {board} | {cost['wall_us_per_tlp']:.0f} us | {cost['cycles_per_c2h_tlp']:.1f} | "
                     f"{cost['bound_cycles_per_s'] / 1e3:.1f} k cycles/s |")
    return "\n".join(lines)


def main(argv=None):
    from hostlink.sim.dma import parse_size
    p = argparse.ArgumentParser(description=__doc__.strip().splitlines()[0])
    p.add_argument("--boards", default="vc709,zc706,kc705",
        help="Comma-separated PCIe boards (default vc709,zc706,kc705).")
    p.add_argument("--size", default="4M", type=parse_size, help="Bytes per direction (default 4M).")
    p.add_argument("--json", metavar="PATH", help="Write the figures as JSON to PATH.")
    args = p.parse_args(argv)
    report = measure(args.boards.split(","), args.size)
    print(format_report(report))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(report, f, indent=2)
        print(f"results written to {args.json}")
    return 0 if all(r["same"] for r in report["runs"]) else 1


if __name__ == "__main__":
    raise SystemExit(main())
