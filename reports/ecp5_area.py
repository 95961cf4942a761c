#!/usr/bin/env python3
# This file is part of hostlink.
# Copyright (c) 2026 hostlink developers
# SPDX-License-Identifier: BSD-2-Clause

"""Area and Fmax on ECP5 (LFE5U-25F-6, ColorLight i5) from the open flow (YoWASP Yosys/nextpnr).

    python -m reports.ecp5_area [--json PATH] [--build-dir DIR] [--no-soc] [--seeds 1,2,3]

Rows:
- UDPTransmitter alone: cells from `synth_ecp5` (LUT4, CCU2C carry cells = 2 LUT4 each, FFs, EBR),
  Fmax from nextpnr with every port registered (so the paths measured are the core's own);
- the ColorLight i5 SoC with hostlink's UDPCore (generator, and echo), and the same board with
  LiteEth's own MAC/ARP/IP/ICMP/UDP stack answering UDP (echo), all placed and routed in the
  same run: TRELLIS_COMB (LUT4s incl. carry halves), TRELLIS_FF, DP16KD (EBR), and the Fmax of
  each clock against its constraint: `sys` (control plane, 50 MHz), `eth` (data plane, 125 MHz),
  `phy` (the RGMII PHY's receive clock, which also clocks its transmitter, 125 MHz). With several
  seeds, each SoC is placed and routed once per seed and the worst Fmax of each clock is kept.
Targets for the transmitter: <= 200 LUT4, <= 120 FF, 0 EBR, Fmax >= 125 MHz.
"""

import argparse
import json
import os
import subprocess
import sys

from migen import *
from migen.fhdl.verilog import convert

from hostlink import BUILD_ROOT
from hostlink.cores.udp.common import UDP_DEFAULTS

TX_TARGETS = {"lut4": 200, "ff": 120, "ebr": 0, "fmax_mhz": 125.0}
DEVICE     = dict(size="--25k", package="CABGA381", speed="6")

# Transmitter alone --------------------------------------------------------------------------------

class _RegisteredTransmitter(Module):
    """Every port of the transmitter behind a register: nextpnr then times the core's own paths."""
    def __init__(self):
        from hostlink.cores.udp import UDPTransmitter
        self.submodules.tx = tx = UDPTransmitter(**UDP_DEFAULTS.as_kwargs())
        self.ios = set()
        for sig in [tx.sink.valid, tx.sink.last, tx.sink.data, tx.sink.length, tx.source.ready]:
            pad = Signal(len(sig))
            self.sync += sig.eq(pad)
            self.ios.add(pad)
        for sig in [tx.sink.ready, tx.source.valid, tx.source.last, tx.source.data, tx.source.last_be,
                    tx.sent, tx.refused, tx.mismatch]:
            pad = Signal(len(sig))
            self.sync += pad.eq(sig)
            self.ios.add(pad)


def _run(cmd, cwd, log):
    with open(os.path.join(cwd, log), "w") as f:
        result = subprocess.run(cmd, cwd=cwd, stdout=f, stderr=subprocess.STDOUT)
    if result.returncode != 0:
        raise RuntimeError(f"{cmd[0]} failed; see {os.path.join(cwd, log)}")


def transmitter_area(build_dir, tools):
    from hostlink.cores.udp import UDPTransmitter
    os.makedirs(build_dir, exist_ok=True)
    tx = UDPTransmitter(**UDP_DEFAULTS.as_kwargs())
    ios = {tx.sink.valid, tx.sink.ready, tx.sink.last, tx.sink.data, tx.sink.length,
           tx.source.valid, tx.source.ready, tx.source.last, tx.source.data, tx.source.last_be,
           tx.sent, tx.refused, tx.mismatch}
    convert(tx, ios=ios, name="udp_tx").write(os.path.join(build_dir, "udp_tx.v"))
    top = _RegisteredTransmitter()
    convert(top, ios=top.ios, name="udp_tx_top").write(os.path.join(build_dir, "udp_tx_top.v"))

    # Relative paths only: the YoWASP tools cannot open absolute paths under /tmp.
    _run([tools["yosys"], "-q", "-p", "read_verilog udp_tx.v; synth_ecp5 -top udp_tx; tee -q -o udp_tx_stat.json stat -json"],
         build_dir, "yosys_tx.log")
    _run([tools["yosys"], "-q", "-p", "read_verilog udp_tx_top.v; synth_ecp5 -top udp_tx_top -json udp_tx_top.json"],
         build_dir, "yosys_tx_top.log")
    with open(os.path.join(build_dir, "udp_tx_top.lpf"), "w") as f:
        f.write('FREQUENCY PORT "sys_clk" 125 MHz;\n')
    _run([tools["nextpnr-ecp5"], DEVICE["size"], "--package", DEVICE["package"], "--speed", DEVICE["speed"],
          "--json", "udp_tx_top.json", "--lpf", "udp_tx_top.lpf", "--lpf-allow-unconstrained",
          "--seed", "1", "--report", "udp_tx_top_report.json"], build_dir, "nextpnr_tx_top.log")

    stat  = json.load(open(os.path.join(build_dir, "udp_tx_stat.json")))
    cells = stat["modules"]["\\udp_tx"]["num_cells_by_type"] if "modules" in stat else stat["design"]["num_cells_by_type"]
    report = json.load(open(os.path.join(build_dir, "udp_tx_top_report.json")))
    fmax   = min(v["achieved"] for v in report["fmax"].values())
    return {
        "design"   : "UDPTransmitter alone",
        "lut4"     : cells.get("LUT4", 0) + 2*cells.get("CCU2C", 0),
        "lut4_cells": cells.get("LUT4", 0),
        "ccu2c"    : cells.get("CCU2C", 0),
        "pfumx"    : cells.get("PFUMX", 0),
        "l6mux21"  : cells.get("L6MUX21", 0),
        "ff"       : cells.get("TRELLIS_FF", 0),
        "ebr"      : cells.get("DP16KD", 0),
        "fmax_mhz" : round(fmax, 1),
    }

# SoCs ---------------------------------------------------------------------------------------------

SOCS = [
    ("ColorLight i5 + hostlink UDPCore (generator)", dict(ethernet_stack="hostlink", udp_mode="generator")),
    ("ColorLight i5 + hostlink UDPCore (echo)",      dict(ethernet_stack="hostlink", udp_mode="echo")),
    ("ColorLight i5 + LiteEth UDP/IP stack (echo)",  dict(ethernet_stack="liteeth")),
]

def clock_role(net):
    """nextpnr's name of a clock net to its role in the ColorLight SoC: the PLL's outputs in the
    order the CRG creates them (sys, then eth), and the PHY's receive clock pin."""
    if "crg_clkout0" in net or net.endswith("crg_clkout"):
        return "sys"
    if "crg_clkout1" in net:
        return "eth"
    if "eth_clocks" in net:
        return "phy"
    return net


def clock_fmax(report):
    """{role: {"achieved": MHz, "constraint": MHz}} from a nextpnr JSON report."""
    return {clock_role(net): {"achieved": v["achieved"], "constraint": v["constraint"]}
            for net, v in report["fmax"].items()}


def soc_area(name, kwargs, build_dir, seeds=(1,)):
    from litex.soc.integration.builder import Builder
    from hostlink.targets.colorlight_i5 import BaseSoC
    soc = BaseSoC(**kwargs)
    builder = Builder(soc, output_dir=build_dir, compile_software=False)
    builder.build(run=False)
    gateware = builder.gateware_dir
    script = os.path.join(gateware, "build_colorlight_i5.sh")
    lines = open(script).read().splitlines()
    nextpnr = [l for l in lines if l.startswith("nextpnr-ecp5")]
    assert len(nextpnr) == 1 and "--seed 1" in nextpnr[0], f"unexpected build script {script}"
    # Synthesis once; place and route once per seed, each with nextpnr's machine-readable report.
    lines = [l for l in lines if not l.startswith(("nextpnr-ecp5", "ecppack"))]
    for seed in seeds:
        lines.append(nextpnr[0].replace("--seed 1", f"--seed {seed}") + f" --report report_{seed}.json")
    open(script, "w").write("\n".join(lines) + "\n")
    print(f"ecp5_area: {name}: synthesis, then place and route with nextpnr seed(s) "
          f"{','.join(map(str, seeds))} (minutes each; log: {os.path.join(gateware, 'build.log')})",
          file=sys.stderr, flush=True)
    _run(["bash", "build_colorlight_i5.sh"], gateware, "build.log")
    clocks, used = {}, None
    for seed in seeds:
        report = json.load(open(os.path.join(gateware, f"report_{seed}.json")))
        used = used or {k: v["used"] for k, v in report["utilization"].items()}
        for role, f in clock_fmax(report).items():
            if role not in clocks or f["achieved"] < clocks[role]["achieved"]:
                clocks[role] = dict(f, seed=seed)
    return {
        "design"   : name,
        "lut4"     : used.get("TRELLIS_COMB", 0),
        "ff"       : used.get("TRELLIS_FF", 0),
        "ebr"      : used.get("DP16KD", 0),
        "seeds"    : list(seeds),
        "clocks"   : {role: dict(achieved=round(f["achieved"], 1), constraint=round(f["constraint"], 1), seed=f["seed"])
                      for role, f in clocks.items()},
        "timing_met": all(f["achieved"] >= f["constraint"] for f in clocks.values()),
    }

# Main ---------------------------------------------------------------------------------------------

ROLES = ["sys", "eth", "phy"]

def print_table(rows):
    print("Fmax in MHz, achieved / constraint (worst over the seeds for the SoCs)")
    print(f"{'design':48} {'LUT4':>6} {'FF':>6} {'EBR':>4} " + " ".join(f"{r:>13}" for r in ROLES) + "  timing")
    for r in rows:
        if "clocks" in r:
            fmax = [f"{r['clocks'][role]['achieved']:.1f} / {r['clocks'][role]['constraint']:.0f}"
                    if role in r["clocks"] else "-" for role in ROLES]
            met = "met" if r["timing_met"] else "FAILED"
        else:
            fmax = [f"{r['fmax_mhz']:.1f} / 125", "-", "-"]
            met = "met" if r["fmax_mhz"] >= TX_TARGETS["fmax_mhz"] else "FAILED"
        print(f"{r['design']:48} {r['lut4']:>6} {r['ff']:>6} {r['ebr']:>4} " + " ".join(f"{f:>13}" for f in fmax)
              + f"  {met}")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.strip().splitlines()[0],
        formatter_class=argparse.RawDescriptionHelpFormatter, epilog="\n".join(__doc__.strip().splitlines()[2:]))
    parser.add_argument("--json",      metavar="PATH", help="Also write the figures as JSON.")
    parser.add_argument("--build-dir", default=None, help="Where the builds go (default: build/reports/ecp5_area in "
        "the repository, or under $HOSTLINK_BUILD_DIR), whatever the current folder.")
    parser.add_argument("--no-soc",    action="store_true", help="Only the transmitter (seconds instead of minutes).")
    parser.add_argument("--seeds",     default="1", help="nextpnr seeds for the SoCs, comma-separated (default: %(default)s).")
    args = parser.parse_args(argv)
    try:
        seeds = [int(s) for s in args.seeds.split(",")]
    except ValueError:
        parser.error(f"--seeds must be comma-separated integers, not {args.seeds!r}")

    from hostlink.toolchain import find_yowasp, use_yowasp_toolchain
    build_dir = os.path.abspath(args.build_dir or os.path.join(BUILD_ROOT, "reports", "ecp5_area"))
    try:
        tools = find_yowasp()
        if not args.no_soc:
            # LiteX's flow calls the tools by their plain names.
            use_yowasp_toolchain(os.path.join(build_dir, "yowasp-bin"))
    except OSError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1

    rows = [transmitter_area(os.path.join(build_dir, "udp_tx"), tools)]
    if not args.no_soc:
        for i, (name, kwargs) in enumerate(SOCS):
            rows.append(soc_area(name, kwargs, os.path.join(build_dir, f"soc{i}"), seeds))

    print_table(rows)
    tx = rows[0]
    checks = {
        "lut4"     : tx["lut4"] <= TX_TARGETS["lut4"],
        "ff"       : tx["ff"] <= TX_TARGETS["ff"],
        "ebr"      : tx["ebr"] <= TX_TARGETS["ebr"],
        "fmax_mhz" : tx["fmax_mhz"] >= TX_TARGETS["fmax_mhz"],
    }
    print(f"\nUDPTransmitter: {tx['lut4_cells']} LUT4 + {tx['ccu2c']} CCU2C (2 LUT4 each) = {tx['lut4']} LUT4, "
          f"{tx['ff']} FF, {tx['ebr']} EBR, Fmax {tx['fmax_mhz']} MHz")
    print("targets (<= 200 LUT4, <= 120 FF, 0 EBR, >= 125 MHz): " +
          ", ".join(f"{k} {'met' if ok else 'MISSED'}" for k, ok in checks.items()))
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"device": "LFE5U-25F-6BG381C", "targets": TX_TARGETS, "met": checks, "seeds": seeds,
                       "rows": rows}, f, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
