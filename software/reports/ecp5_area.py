#!/usr/bin/env python3
# This file is part of hostlink.
# Copyright (c) 2026 hostlink developers
# SPDX-License-Identifier: BSD-2-Clause

"""Area and Fmax on ECP5 (LFE5U-25F-6, ColorLight i5) from the open flow (YoWASP Yosys/nextpnr).

    python -m hostlink.software.reports.ecp5_area [--json PATH] [--build-dir DIR] [--no-soc]

Rows:
- UDPTransmitter alone: cells from `synth_ecp5` (LUT4, CCU2C carry cells = 2 LUT4 each, FFs, EBR),
  Fmax from nextpnr with every port registered (so the paths measured are the core's own);
- the ColorLight i5 SoC with hostlink's UDPCore (generator, and echo), and the same board with
  LiteEth's own MAC/ARP/IP/ICMP/UDP stack answering UDP (echo), all placed and routed in the
  same run: TRELLIS_COMB (LUT4s incl. carry halves), TRELLIS_FF, DP16KD (EBR), sys Fmax.
Targets for the transmitter: <= 200 LUT4, <= 120 FF, 0 EBR, Fmax >= 125 MHz.
"""

import argparse
import json
import os
import subprocess
import sys

from migen import *
from migen.fhdl.verilog import convert

TX_TARGETS = {"lut4": 200, "ff": 120, "ebr": 0, "fmax_mhz": 125.0}
DEVICE     = dict(size="--25k", package="CABGA381", speed="6")

DEFAULT_ADDRESSES = dict(fpga_mac="10:e2:d5:00:00:01", fpga_ip="192.168.1.50", host_mac="10:e2:d5:00:00:02",
                         host_ip="192.168.1.100", fpga_port=1234, host_port=1234)

# Transmitter alone --------------------------------------------------------------------------------

class _RegisteredTransmitter(Module):
    """Every port of the transmitter behind a register: nextpnr then times the core's own paths."""
    def __init__(self):
        from hostlink.cores.udp import UDPTransmitter
        self.submodules.tx = tx = UDPTransmitter(**DEFAULT_ADDRESSES)
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
    tx = UDPTransmitter(**DEFAULT_ADDRESSES)
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

def soc_area(name, kwargs, build_dir):
    from litex.soc.integration.builder import Builder
    from hostlink.targets.colorlight_i5 import BaseSoC
    soc = BaseSoC(**kwargs)
    builder = Builder(soc, output_dir=build_dir, compile_software=False)
    builder.build(run=False)
    gateware = builder.gateware_dir
    script = os.path.join(gateware, "build_colorlight_i5.sh")
    lines = open(script).read().splitlines()
    # Ask nextpnr for its machine-readable report next to the usual outputs.
    lines = [l + " --report report.json" if l.startswith("nextpnr-ecp5") else l for l in lines]
    open(script, "w").write("\n".join(lines) + "\n")
    _run(["bash", "build_colorlight_i5.sh"], gateware, "build.log")
    report = json.load(open(os.path.join(gateware, "report.json")))
    used = {k: v["used"] for k, v in report["utilization"].items()}
    sys_fmax = [v["achieved"] for k, v in report["fmax"].items() if "crg" in k or "sys" in k]
    eth_fmax = [v["achieved"] for k, v in report["fmax"].items() if "eth" in k]
    return {
        "design"       : name,
        "lut4"         : used.get("TRELLIS_COMB", 0),
        "ff"           : used.get("TRELLIS_FF", 0),
        "ebr"          : used.get("DP16KD", 0),
        "fmax_mhz"     : round(min(sys_fmax), 1) if sys_fmax else None,
        "eth_rx_fmax_mhz": round(min(eth_fmax), 1) if eth_fmax else None,
    }

# Main ---------------------------------------------------------------------------------------------

def print_table(rows):
    print(f"{'design':48} {'LUT4':>6} {'FF':>6} {'EBR':>4} {'Fmax sys (MHz)':>15} {'Fmax eth_rx (MHz)':>18}")
    for r in rows:
        fmax = "-" if r.get("fmax_mhz") is None else f"{r['fmax_mhz']:.1f}"
        eth  = "-" if r.get("eth_rx_fmax_mhz") is None else f"{r['eth_rx_fmax_mhz']:.1f}"
        print(f"{r['design']:48} {r['lut4']:>6} {r['ff']:>6} {r['ebr']:>4} {fmax:>15} {eth:>18}")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.strip().splitlines()[0],
        formatter_class=argparse.RawDescriptionHelpFormatter, epilog="\n".join(__doc__.strip().splitlines()[2:]))
    parser.add_argument("--json",      metavar="PATH", help="Also write the figures as JSON.")
    parser.add_argument("--build-dir", default="build/ecp5_area", help="Where the builds go (default: %(default)s).")
    parser.add_argument("--no-soc",    action="store_true", help="Only the transmitter (seconds instead of minutes).")
    args = parser.parse_args(argv)

    from hostlink.targets.colorlight_i5 import find_yowasp, use_yowasp_toolchain
    build_dir = os.path.abspath(args.build_dir)
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
            rows.append(soc_area(name, kwargs, os.path.join(build_dir, f"soc{i}")))

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
            json.dump({"device": "LFE5U-25F-6BG381C", "targets": TX_TARGETS, "met": checks, "rows": rows}, f, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
