# This file is part of hostlink.
# Copyright (c) 2026 hostlink developers
# SPDX-License-Identifier: BSD-2-Clause

"""Plots of hostlink_bench's JSON: throughput against transfer size and latency against transfer size.

    python -m reports.bench_plot bench.json [more.json ...] [--out DIR] [--wall]

One pair of PNGs per board (JSON file), direction and channel count, one line per mode and completion
method (zero-copy irq, copy poll, ...). Device-cycle figures by default; `--wall` plots host wall time
instead (meaningless from the simulated machine: the tool's JSON says which it came from).
"""

import argparse
import json
import os
import sys

__all__ = ["load_runs", "series", "plot", "main"]


def load_runs(path):
    """The JSON of one hostlink_bench run (its `runs` and whether it ran in the simulated machine)."""
    with open(path) as f:
        data = json.load(f)
    if data.get("tool") != "hostlink_bench" or "runs" not in data:
        raise ValueError(f"{path} is not hostlink_bench's JSON (no 'tool': 'hostlink_bench' with 'runs')")
    return data


def series(data, wall=False):
    """{(direction, channels, stream): {"mode completion": [(size, GB/s, median latency us, p99 us)]}}."""
    clock = "wall" if wall else "cycles"
    out = {}
    for run in data["runs"]:
        for stream in run["streams"]:
            key  = (run["direction"], run["channels"], stream["stream"])
            line = f"{run['mode']} {run['completion']}"
            lat  = stream[f"latency_ns_{clock}"]
            out.setdefault(key, {}).setdefault(line, []).append(
                (run["size"], stream[f"throughput_gbs_{clock}"], lat["median"] / 1e3, lat["p99"] / 1e3))
    for lines in out.values():
        for points in lines.values():
            points.sort()
    return out


def plot(data, out_dir, label, wall=False):
    """Write the PNGs for one JSON; returns their paths."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    clock = "host wall time" if wall else "device cycles"
    note  = " (simulated machine)" if data.get("simulated") else ""
    paths = []
    os.makedirs(out_dir, exist_ok=True)
    for (direction, channels, stream), lines in sorted(series(data, wall).items()):
        stem = f"{label}_{direction}_{stream}_{channels}ch".replace(" ", "_")
        for kind, index, ylabel in [("throughput", 1, "GB/s"),
                                    ("latency", 2, "latency (us): median, p99 dotted")]:
            fig, ax = plt.subplots(figsize=(7, 4.5))
            for name, points in sorted(lines.items()):
                sizes = [p[0] for p in points]
                line, = ax.plot(sizes, [p[index] for p in points], marker="o", label=name)
                if kind == "latency":
                    # Transfers seen done in the same MSI or poll have latency 0 after the first: the
                    # median can be 0 where the 99th percentile carries the wait (linear axis for that).
                    ax.plot(sizes, [p[3] for p in points], linestyle=":", color=line.get_color())
            ax.set_xscale("log", base=2)
            ax.set_xlabel("transfer size (bytes)")
            ax.set_ylabel(ylabel)
            ax.set_title(f"{label}: {stream}, {channels} channel(s), {clock}{note}")
            ax.grid(True, which="both", alpha=0.3)
            ax.legend()
            path = os.path.join(out_dir, f"{stem}_{kind}.png")
            fig.tight_layout()
            fig.savefig(path, dpi=100)
            plt.close(fig)
            paths.append(path)
    return paths


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m reports.bench_plot",
        description=__doc__.strip().splitlines()[0])
    parser.add_argument("json", nargs="+", help="hostlink_bench --json output(s); the file name labels the plots.")
    parser.add_argument("--out",  default="build/bench", help="Directory for the PNGs (default build/bench).")
    parser.add_argument("--wall", action="store_true", help="Plot host wall time instead of device cycles.")
    args = parser.parse_args(argv)
    for path in args.json:
        try:
            data = load_runs(path)
        except (OSError, ValueError) as error:
            print(f"bench_plot: {error}", file=sys.stderr)
            return 1
        label = os.path.splitext(os.path.basename(path))[0]
        for png in plot(data, args.out, label, args.wall):
            print(png)
    return 0


if __name__ == "__main__":
    sys.exit(main())
