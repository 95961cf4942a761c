# This file is part of hostlink.
# Copyright (c) 2026 hostlink developers
# SPDX-License-Identifier: BSD-2-Clause

"""Host-to-FPGA throughput against the host's read latency, one line per Max Read Request Size.

`./sim.py dma --sweep-latency` runs the board's SoC once per (MRRS, latency) pair of the host profile, each
a host-to-FPGA transfer (h2c) of the same size, and gathers the rows into one table, one JSON document
and one PNG. Reads in flight divided by the round trip bound h2c: the table shows where the reads the
SoC keeps in flight stop covering the latency.
"""

from hostlink.sim import plots
from hostlink.sim.watchdog import number_list

DEFAULT_LATENCIES_NS = (500, 1000, 1500, 2000, 2500, 3000)
DEFAULT_MRRS         = (128, 256, 512, 4096)


# '500,1000,2000' (ns) -> [500.0, 1000.0, 2000.0].
parse_latencies = number_list(float, "read latencies are numbers of ns like 500,1000,2000",
                              lambda ns: 0 <= ns <= 100_000, "read latencies must be from 0 to 100000 ns")

# '128,256,512' -> [128, 256, 512]; each a PCIe Max Read Request Size.
parse_mrrs_list = number_list(int, "MRRS values are byte counts like 128,256,512",
                              lambda mrrs: mrrs in (128, 256, 512, 1024, 2048, 4096),
                              "each MRRS must be a power of two from 128 to 4096")


def sweep(run_one, profile_for, latencies_ns, mrrs_list, progress=None):
    """Run `run_one(profile)` for every (MRRS, latency); returns the rows and the runs' host profiles.

    `profile_for(mrrs, latency_ns)` makes the host profile; `run_one` returns `./sim.py dma`'s results
    (one h2c row expected).
    """
    rows  = []
    total = len(latencies_ns)*len(mrrs_list)
    for mrrs in mrrs_list:
        for latency in latencies_ns:
            if progress:
                progress(f"MRRS {mrrs}, {latency:.0f} ns reads ({len(rows) + 1}/{total})")
            results = run_one(profile_for(mrrs, latency))
            for r in results["results"]:
                rows.append(dict(r, max_read_request=mrrs, read_latency_ns=latency,
                    sys_clk_hz=results["sys_clk_hz"], host=results["host"]))
    return rows


def format_table(board, rows):
    """One line per latency, one column per MRRS: h2c GB/s (simulated time)."""
    latencies = sorted({r["read_latency_ns"] for r in rows})
    mrrs_list = sorted({r["max_read_request"] for r in rows})
    cell = {(r["read_latency_ns"], r["max_read_request"]): r for r in rows}
    lines = [f"board {board}: h2c GB/s against read latency (simulated time)",
             f"{'latency ns':>10} " + " ".join(f"{'MRRS ' + str(m):>10}" for m in mrrs_list)]
    for latency in latencies:
        values = []
        for m in mrrs_list:
            r = cell.get((latency, m))
            if r is None or r["cycles"] is None:
                values.append(f"{'-':>10}")
            else:
                values.append(f"{r['gbytes_per_s']:>10.3f}" + ("!" if r["errors"] else ""))
        lines.append(f"{latency:>10.0f} " + " ".join(values))
    errors = sum(r["errors"] for r in rows)
    lines.append(f"errors: {errors}")
    return "\n".join(lines)


def plot(board, rows, path, limit_gbytes_per_s=None):
    """h2c GB/s against read latency, one line per MRRS."""
    with plots.png(path) as axes:
        for mrrs in sorted({r["max_read_request"] for r in rows}):
            points = sorted((r["read_latency_ns"]/1000, r["gbytes_per_s"]) for r in rows
                if r["max_read_request"] == mrrs and r["cycles"] is not None)
            axes.plot([p[0] for p in points], [p[1] for p in points], "-o", label=f"MRRS {mrrs}")
        if limit_gbytes_per_s:
            axes.axhline(limit_gbytes_per_s, color="grey", linestyle="--", label="link limit")
        axes.set_xlabel("host read latency (us)")
        axes.set_ylabel("host to FPGA GB/s (simulated time)")
        host = rows[0]["host"] if rows else {}
        axes.set_title(f"{board}: Gen{host.get('link_speed')} x{host.get('link_width')}, MPS "
            f"{host.get('max_payload_size')}, {rows[0]['bytes'] if rows else 0} bytes per run", fontsize=9)
        axes.set_ylim(bottom=0)
