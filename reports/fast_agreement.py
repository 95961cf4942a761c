# This file is part of hostlink.
# Copyright (c) 2026 hostlink developers
# SPDX-License-Identifier: BSD-2-Clause

"""The fast path's agreement with the reference path, row by row (issue 48).

    python -m reports.fast_agreement [--boards vc709,zc706,kc705] [--profiles default,worst]
                                                        [--json PATH]

Runs test/test_fast_path.py's matrix (sim/pcie/fast/agreement.py: the host profiles default, worst,
stalls and mps512; h2c, c2h and bidir of 64 KiB and 1 MiB) on both paths and prints each row's cycles on
each and their difference, in simulated cycles at the SoC's clock, and the differences agreement.py finds
beyond its tolerances (none, when the paths agree). Exit status 1 when they do not.
"""

import argparse
import json


def measure(boards, profiles):
    from hostlink.sim.pcie.fast.agreement import SKIPPED, differences, run_both
    report = []
    for board in boards:
        for name in profiles:
            if (board, name) in SKIPPED:
                continue
            fast, reference = run_both(board, name)
            rows = [{"direction": r["direction"], "size": r["size"], "reference": r["cycles"], "fast": f["cycles"],
                     "errors": [f["errors"], r["errors"]], "msis": [f["msis"], r["msis"]]}
                    for f, r in zip(fast["results"], reference["results"])]
            report.append({"board": board, "profile": name, "rows": rows,
                           "differences": [list(d) for d in differences(fast, reference)]})
    return report


def format_report(report):
    lines = ["| board | profile | row | reference | fast | difference |", "|---|---|---|---|---|---|"]
    for entry in report:
        for row in entry["rows"]:
            size = row["size"]
            label = f"{size // 2**20} MiB" if size % 2**20 == 0 else f"{size // 2**10} KiB"
            cells = [f"{c:,}" if c is not None else "timed out" for c in (row["reference"], row["fast"])]
            change = (f"{(row['fast'] - row['reference']) / row['reference'] * 100:+.1f} %"
                      if None not in (row["fast"], row["reference"]) else "")
            lines.append(f"| {entry['board'].upper()} | {entry['profile']} | {row['direction']} {label} | "
                         f"{cells[0]} | {cells[1]} | {change} |")
    lines.append("")
    for entry in report:
        found = entry["differences"]
        lines.append(f"{entry['board']} {entry['profile']}: " + ("agree" if not found else
                     "DIFFER: " + "; ".join(f"{where} fast {a} reference {b}" for where, a, b in found)))
    return "\n".join(lines)


def main(argv=None):
    from hostlink.sim.pcie.fast.agreement import MATRIX
    p = argparse.ArgumentParser(description=__doc__.strip().splitlines()[0])
    p.add_argument("--boards", default="vc709,zc706,kc705", help="Comma-separated boards (default all three).")
    p.add_argument("--profiles", default=",".join(MATRIX),
        help=f"Comma-separated entries of the matrix (default {','.join(MATRIX)}).")
    p.add_argument("--json", metavar="PATH", help="Write the figures as JSON to PATH.")
    args = p.parse_args(argv)
    for name in args.profiles.split(","):
        if name not in MATRIX:
            p.error(f"--profiles: {name!r} is not in the matrix ({', '.join(MATRIX)})")
    report = measure(args.boards.split(","), args.profiles.split(","))
    print(format_report(report))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(report, f, indent=2)
        print(f"results written to {args.json}")
    return 0 if all(not entry["differences"] for entry in report) else 1


if __name__ == "__main__":
    raise SystemExit(main())
