# This file is part of hostlink.
# Copyright (c) 2026 hostlink developers
# SPDX-License-Identifier: BSD-2-Clause

"""Seed 003's three drivers swept in simulated time: its Figs 4 and 5 and Table I beside ours.

    python -m hostlink.sim.zynq.drivers                          # the default sweep, 8 B to 6 MiB
    python -m hostlink.sim.zynq.drivers --sizes 8,100K --json d.json --plot d.png
    python -m hostlink.sim.zynq.drivers --sensitivity            # the closed form with each assumed cost /2, x2

One boot of Linux on the simulated Zynq (sim/zynq/linux.py), with the ARM's software charged in simulated time
(sim/zynq/models/ps_costs.py), runs the paper's three drivers in loop-back, each over the same calls (one per
size and mode: single buffer Unique; for sizes over the 64 KiB block up to 16 blocks, Blocks single and double
buffered):

- kernel: Linux's xilinx_dma through hostlink's dmaengine client, by interrupt (sim/zynq/guest/kernel_sweep.py);
- user_polling: the user-level driver polling the DMA's status (software/zynq/dma_user_test.c --sweep);
- user_scheduled: the same, yielding to the scheduler between two polls (--sched --sweep).

Each call is timed by the marks its driver writes to the simulation's cost device: it begins when the program
calls the driver (the client's ioctl, the user-level driver's loop after the DMA's set-up). TX ends when MM2S
has sent the call's last byte (the status bit of the call's last MM2S transfer), RX when the last byte is in
the program's buffer (the call's end mark, after the last copy out). The paper plots both against the size
(Figs 4, 5) without defining them further; these are our reading. Per byte: the time over the size.
"""

import argparse
import json
import os
import sys

from hostlink.protocol import SIM_COST_CATEGORIES, SIM_COST_MARK_BEGIN, SIM_COST_MARK_END
from hostlink.sim.zynq.models.ps_costs import PS_COSTS, cost_table, costs_ns

__all__ = ["DRIVERS", "TABLE_I", "SIZES", "sweep_commands", "calls", "predict", "predicted_rows", "crossover",
           "ranking", "sensitivity", "report", "main"]

DRIVERS = ("user_polling", "user_scheduled", "kernel")
# Seed 003's Table I: (TX, RX) in us a byte, NullHop's RoShamBo, ~100 KB transfers, single buffer, Unique. Its RX
# includes NullHop's computing the layer's results; ours is the loop-back's.
TABLE_I = {"user_polling": (0.0054, 0.197), "user_scheduled": (0.0072, 0.335), "kernel": (0.011, 0.294)}
ROSHAMBO = 102400          # "in the order of 100Kbytes"
SIZES = (8, 64, 512, 4096, 32768, ROSHAMBO, 262144, 1 << 20, 6 << 20)
BLOCK = 64 << 10           # Blocks mode's transfer (the paper gives none).
CLIENT_BUFFER = (4 << 20) - 4096   # The client's buffers: kmalloc's largest less devm's header.


def sweep_commands(software, block=BLOCK, sizes=SIZES):
    """The boot's steps: the client loaded with buffers of CLIENT_BUFFER bytes, the kernel driver's sweep, the DMA
    handed to the user-level driver, its polling sweep, its scheduled sweep."""
    from hostlink.sim.zynq.linux import GUEST, SOFTWARE
    sizes = [str(size) for size in sizes]
    user = os.path.join(software, "dma_user_test")
    return [["insmod", os.path.join(software, "hostlink_dma_client.ko"), f"buffer_size={CLIENT_BUFFER}"],
            ["python3", os.path.join(GUEST, "kernel_sweep.py"), str(block), *sizes],
            ["sh", os.path.join(SOFTWARE, "use_user_driver.sh"), os.path.join(software, "hostlink_dma_user.ko")],
            [user, "--sweep", str(block), *sizes],
            [user, "--sched", "--sweep", str(block), *sizes]]


def _call_lines(output):
    lines = []
    for line in (output or "").splitlines():
        if line.startswith("call: "):
            fields = dict(field.split("=", 1) for field in line[6:].split() if "=" in field)
            fields["ok"] = line.rstrip().endswith(" ok")
            lines.append(fields)
    return lines


def _mark_pairs(marks):
    """Each BEGIN with the END after it (a call that failed half-way leaves a BEGIN alone: dropped)."""
    pairs, begin = [], None
    for mark in marks:
        if mark[0] == SIM_COST_MARK_BEGIN:
            begin = mark
        elif mark[0] == SIM_COST_MARK_END and begin is not None:
            pairs.append((begin, mark))
            begin = None
    return pairs


def calls(steps, bench):
    """The calls the steps printed ("call:" lines), in order: driver, size, mode, chunk, buffers, ok, tx_ns, rx_ns,
    and what the CPU was charged during the call by category (ns and counts). A step's calls are paired with
    the marks written during that step (the bench notes how many there were when each step ended). Raises
    ValueError when a step's calls and marks do not pair up."""
    mm2s = sorted((t["start_ns"], t["done_ns"]) for t in bench["transfers"] if t["channel"] == "mm2s")
    rows, before = [], 0
    for i, step in enumerate(steps):
        after = bench["steps"][i]["marks"] if i < len(bench["steps"]) else len(bench["marks"])
        lines, pairs = _call_lines(step.get("output")), _mark_pairs(bench["marks"][before:after])
        before = after
        if not lines:
            continue
        if len(lines) != len(pairs):
            raise ValueError(f"step {i} ({str(step['command'])[:80]}) printed {len(lines)} calls, but the cost "
                             f"device timed {len(pairs)}")
        for line, (begin, end) in zip(lines, pairs):
            ends = [done for start, done in mm2s if begin[1] <= start <= end[1] and done is not None]
            rows.append({
                "driver": line["driver"], "size": int(line["size"]), "mode": line["mode"],
                "chunk": int(line["chunk"]), "buffers": int(line["buffers"]), "ok": line["ok"],
                "tx_ns": (max(ends) - begin[1]) if ends else None, "rx_ns": end[1] - begin[1],
                "charged_ns": {k: round(end[2][k] - begin[2][k], 1) for k in SIM_COST_CATEGORIES},
                "counts": {k: end[3][k] - begin[3][k] for k in SIM_COST_CATEGORIES},
            })
    return rows


def predict(driver, size, costs):
    """(TX, RX) in ns of a single buffer Unique call of `size` bytes (one transfer), from the cost table alone
    (`costs`: ns a unit by category) and the DMA's loop-back time as ./sim.py zynq measures it (about 0.4 us and
    the port's 1,200 MB/s): the closed form of what the simulation charges, to check its ranking against.
    Register accesses are counted as the drivers make them (xilinx_dma's, about 12 a call, approximately)."""
    access = costs["gp0_read"]
    dma = 400 + size / 1.2
    lines = -(-size // 32)
    if driver in ("user_polling", "user_scheduled"):
        poll = access + (costs["sched_yield"] if driver == "user_scheduled" else 0)
        tx = size * costs["copy_to_coherent"] + 3 * access + dma
        # Four writes start the transfer; polls until MM2S's end; clear, one S2MM poll, clear, its LENGTH.
        rx = size * costs["copy_to_coherent"] + 4 * access + -(-(dma - access) // poll) * poll + 4 * access \
            + size * costs["copy_from_coherent"]
        return tx, rx
    if driver != "kernel":
        raise ValueError(f"driver must be one of {DRIVERS}, not {driver!r}")
    start = costs["syscall"] + size * costs["copy_cached"] + lines * (costs["cache_clean"] + costs["cache_invalidate"])
    tx = start + 12 * access + dma
    rx = tx + 2 * costs["interrupt"] + 4 * access + lines * costs["cache_invalidate"] + size * costs["copy_cached"]
    return tx, rx


def unique_single(rows, driver):
    """{size: row} of a driver's single buffer Unique calls: the configuration of Table I and our Figs 4/5."""
    return {r["size"]: r for r in rows if r["driver"] == driver and r["mode"] == "unique" and r["buffers"] == 1}


def crossover(rows, direction="rx"):
    """The smallest size from which the kernel driver is faster than both user-level drivers at every larger
    size of the sweep (single buffer, Unique), or None."""
    kernel = unique_single(rows, "kernel")
    users = [unique_single(rows, d) for d in ("user_polling", "user_scheduled")]
    sizes = sorted(kernel)
    faster = [all(kernel[s][f"{direction}_ns"] < u[s][f"{direction}_ns"] for u in users if s in u) for s in sizes]
    for i, size in enumerate(sizes):
        if all(faster[i:]):
            return size
    return None


# The closed form's sizes for a crossover: powers of two from 8 bytes to 8 MiB, and the paper's ~100 KB.
CLOSED_FORM_SIZES = tuple(sorted({8 << k for k in range(21)} | {ROSHAMBO}))


def predicted_rows(costs, sizes=CLOSED_FORM_SIZES):
    """predict() as calls()'s rows (single buffer, Unique), for crossover() and ranking()."""
    rows = []
    for driver in DRIVERS:
        for size in sizes:
            tx, rx = predict(driver, size, costs)
            rows.append({"driver": driver, "size": size, "mode": "unique", "buffers": 1, "tx_ns": tx, "rx_ns": rx})
    return rows


def ranking(rows, size=ROSHAMBO, direction="tx", tie=0.01):
    """The drivers from fastest to slowest at `size` (single buffer, Unique), as text: "a < b = c", two drivers
    within `tie` (relative) of each other being equal."""
    times = sorted((unique_single(rows, d)[size][f"{direction}_ns"] or 0, d) for d in DRIVERS)
    text = times[0][1]
    for (before, _), (t, driver) in zip(times, times[1:]):
        text += (" = " if t <= before * (1 + tie) else " < ") + driver
    return text


def sensitivity(factors=(0.5, 2.0)):
    """What the closed form concludes with each assumed cost (ps_costs.py's "assumed:" rows) times each factor, the
    others as the table has them: rows of (cost, factor, TX ranking at ~100 KB, RX ranking, TX crossover, RX
    crossover); the first row is the table itself (cost None)."""
    def row(cost, factor, costs):
        rows = predicted_rows(costs)
        return (cost, factor, ranking(rows, direction="tx"), ranking(rows, direction="rx"),
                crossover(rows, "tx"), crossover(rows, "rx"))
    out = [row(None, 1.0, costs_ns())]
    for cost in SIM_COST_CATEGORIES:
        if PS_COSTS[cost][2].startswith("assumed"):
            for factor in factors:
                costs = costs_ns()
                costs[cost] *= factor
                out.append(row(cost, factor, costs))
    return out


def sensitivity_report(rows):
    out = ["The cost table's closed form (drivers.predict), each assumed cost times a factor, the others as they are:",
           f"{'cost':>18} {'factor':>6}  {'TX at ~100 KB':<38} {'RX at ~100 KB':<38} {'TX crossover':>12} "
           f"{'RX crossover':>12}"]
    for cost, factor, tx, rx, tx_from, rx_from in rows:
        out.append(f"{cost or '(the table)':>18} {factor:>6g}  {tx:<38} {rx:<38} {str(tx_from or 'none'):>12} "
                   f"{str(rx_from or 'none'):>12}")
    return "\n".join(out)


def report(rows):
    """The printed tables: every call, then Table I beside ours at ~100 KB, then the crossover."""
    out = ["call (simulated time)                           TX us     RX us   TX us/B   RX us/B  "
           "largest charges"]
    for r in rows:
        top = sorted(r["charged_ns"].items(), key=lambda kv: -kv[1])[:3]
        tx = r["tx_ns"] or 0
        out.append(f"{r['driver']:>14} {r['mode']:>6} x{r['buffers']} {r['size']:>8} B  {tx / 1e3:9.1f} "
                   f"{r['rx_ns'] / 1e3:9.1f} {tx / 1e3 / r['size']:9.4f} {r['rx_ns'] / 1e3 / r['size']:9.4f}  "
                   + ", ".join(f"{k} {v / 1e3:.1f} us" for k, v in top if v) + ("" if r["ok"] else "  FAIL"))
    out.append(f"\nTable I (us/byte, single buffer, Unique): the paper at ~100 KB (NullHop), ours at {ROSHAMBO} B "
               "(loop-back, simulated)")
    out.append(f"{'driver':>16} {'TX paper':>9} {'TX ours':>9} {'RX paper':>9} {'RX ours':>9}")
    for driver in DRIVERS:
        row = unique_single(rows, driver).get(ROSHAMBO)
        if row:
            out.append(f"{driver:>16} {TABLE_I[driver][0]:9.4f} {(row['tx_ns'] or 0) / 1e3 / ROSHAMBO:9.4f} "
                       f"{TABLE_I[driver][1]:9.3f} {row['rx_ns'] / 1e3 / ROSHAMBO:9.4f}")
    for direction in ("tx", "rx"):
        size = crossover(rows, direction)
        out.append(f"kernel driver faster than both user-level drivers ({direction.upper()}, single buffer, Unique): "
                   + (f"from {size} bytes on" if size else "at no size of the sweep"))
    return "\n".join(out)


def plot(rows, path):
    """Figs 4 and 5 as the paper draws them (ms a transfer; us a byte), TX and RX, single buffer Unique."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    figure, axes = plt.subplots(1, 2, figsize=(12, 4.5))
    colours = {"user_polling": "tab:blue", "user_scheduled": "tab:orange", "kernel": "tab:green"}
    for driver in DRIVERS:
        points = sorted(unique_single(rows, driver).items())
        sizes = [s for s, _ in points]
        for direction, style in (("tx", "--"), ("rx", "-")):
            times = [(r[f"{direction}_ns"] or 0) for _, r in points]
            axes[0].plot(sizes, [t / 1e6 for t in times], style, marker="o", color=colours[driver],
                         label=f"{driver} {direction.upper()}")
            axes[1].plot(sizes, [t / 1e3 / s for t, s in zip(times, sizes)], style, marker="o",
                         color=colours[driver], label=f"{driver} {direction.upper()}")
        axes[1].plot([ROSHAMBO], [TABLE_I[driver][0]], "x", color=colours[driver], markersize=10)
    axes[1].plot([], [], "x", color="grey", label="paper's Table I TX (~100 KB)")
    for ax, title, unit in ((axes[0], "Fig. 4: ms a transfer", "ms"), (axes[1], "Fig. 5: us a byte", "us/byte")):
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("bytes (loop-back, single buffer, Unique)")
        ax.set_ylabel(f"{unit} (simulated)")
        ax.set_title(title)
        ax.grid(True, which="both", alpha=0.3)
    axes[1].legend(fontsize=7)
    figure.tight_layout()
    figure.savefig(path, dpi=110)


def parse_sizes(text):
    from hostlink.sim.dma import parse_size
    sizes = [parse_size(part) for part in text.split(",") if part.strip()]
    if not sizes or any(size <= 0 or size % 8 for size in sizes):
        raise argparse.ArgumentTypeError(f"sizes must be positive multiples of 8 bytes, not {text!r}")
    return sizes


def main(argv=None):
    p = argparse.ArgumentParser(prog="python -m hostlink.sim.zynq.drivers", description=__doc__.splitlines()[0])
    p.add_argument("--sizes", type=parse_sizes, default=list(SIZES), help="bytes, comma-separated (K, M suffixes)")
    p.add_argument("--block", type=int, default=BLOCK, help=f"Blocks mode's transfer in bytes (default {BLOCK})")
    p.add_argument("--cost-scale", type=float, default=1.0, help="the cost table times this (0: software is free)")
    p.add_argument("--timeout", type=int, default=7200, help="seconds for the whole run")
    p.add_argument("--json", metavar="PATH")
    p.add_argument("--plot", metavar="PATH")
    p.add_argument("--sensitivity", action="store_true",
                   help="print what the closed form concludes with each assumed cost halved and doubled, and stop "
                        "(no simulation)")
    args = p.parse_args(argv)
    if args.sensitivity:
        print(sensitivity_report(sensitivity()))
        return 0
    from hostlink.sim.uml.harness import DriverSimError
    from hostlink.sim.zynq.linux import build_software, evaluate, run_zynq_linux
    try:
        commands = sweep_commands(build_software(), args.block, args.sizes)
        result = run_zynq_linux(commands, command_timeout_s=args.timeout, timeout_s=args.timeout,
                                cost_scale=args.cost_scale)
    except DriverSimError as error:
        print(f"drivers: {error}", file=sys.stderr)
        return 1
    steps, ok, problems = evaluate(result)
    for step in steps:
        if not step["passed"]:
            print(f"FAIL  {step['command']}: exit {step['exit_status']}\n{(step['output'] or '')[-3000:]}")
    rows = calls(steps, result["bench"])
    ok = ok and all(r["ok"] for r in rows)
    print(report(rows))
    bench = result["bench"]
    print(f"simulated {bench['sim_ns'] / 1e6:.1f} ms in {bench['wall_s']} s of wall time")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"sizes": args.sizes, "block": args.block, "cost_scale": args.cost_scale,
                       "costs": cost_table(), "table_i": TABLE_I, "calls": rows,
                       "crossover": {d: crossover(rows, d) for d in ("tx", "rx")}, "wall_s": bench["wall_s"],
                       "kernel_warnings": problems, "passed": ok}, f, indent=2)
        print(f"results written to {args.json}")
    if args.plot:
        plot(rows, args.plot)
        print(f"plot written to {args.plot}")
    print("PASSED" if ok else "FAILED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
