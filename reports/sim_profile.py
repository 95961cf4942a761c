# This file is part of hostlink.
# Copyright (c) 2026 hostlink developers
# SPDX-License-Identifier: BSD-2-Clause

"""Where a simulation's wall time goes: a py-spy profile of the simulator process, by part of the model.

    pip install py-spy     # a sampling profiler (PyPI); not one of the project's dependencies
    ./sim.py dma --board vc709 --sizes 4M --directions c2h &
    py-spy record --pid $(pgrep -f verilator/sim_top) --duration 30 --rate 200 --native \\
        --format raw --output prof.raw
    python -m reports.sim_profile prof.raw

Each sample goes to the coroutine that was running (the frame under cocotb's Task._resume), grouped by
the model it belongs to; samples without a Python frame are the Verilated model, VPI callbacks and libc.
Prints a Markdown table (doc/pcie_sim.md, "Where the wall time goes").
"""

import argparse
import collections

GROUPS = [   # (part of the frame's file, group), first match wins.
    ("sim/pcie/models/v7gen3", "hostlink's Gen3 hard-block adapter (sim/pcie/models/v7gen3_device.py)"),
    ("sim/",               "hostlink's host model, bench and jobs (sim/)"),
    ("us/interface.py",    "cocotbext-pcie's RQ/RC/CQ/CC stream sinks and sources (us/interface.py)"),
    ("us/us_model.py",     "cocotbext-pcie's UltraScale device model, per-cycle logic (us/us_model.py)"),
    ("s7_device.py",       "hostlink's 7-series hard-block model (sim/pcie/models/s7_device.py)"),
    ("core/",              "cocotbext-pcie's root complex and fabric (ports, switch: core/)"),
    ("cocotb/",            "cocotb's trigger dispatch, not attributable to one coroutine"),
]
NO_PYTHON = "no Python frame: the Verilated model's eval, VPI callbacks, libc"


def owner(frames):
    """The group of one sample's stack (root first, as py-spy's raw format gives it)."""
    python = [f for f in frames if ".py:" in f]
    if not python:
        return NO_PYTHON
    resumed = [i for i, f in enumerate(frames) if "Task._resume" in f]
    frame = frames[resumed[0] + 1] if resumed and resumed[0] + 1 < len(frames) else python[0]
    return next((group for part, group in GROUPS if part in frame), "other")


def profile(lines):
    """{group: samples} and the total, from py-spy's raw lines ("frame;frame;... count")."""
    counts, total = collections.Counter(), 0
    for line in lines:
        stack, _, n = line.strip().rpartition(" ")
        if not stack or not n.isdigit():
            continue
        counts[owner(stack.split(";"))] += int(n)
        total += int(n)
    return counts, total


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.strip().splitlines()[0])
    p.add_argument("raw", help="py-spy's output with --format raw")
    args = p.parse_args(argv)
    with open(args.raw) as f:
        counts, total = profile(f)
    if not total:
        raise SystemExit(f"sim_profile: no samples in {args.raw}")
    print("| part | share of samples |\n|---|---|")
    for group, n in counts.most_common():
        print(f"| {group} | {100*n/total:.1f} % |")
    print(f"\n{total} samples")


if __name__ == "__main__":
    main()
