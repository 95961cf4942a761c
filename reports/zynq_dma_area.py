#!/usr/bin/env python3
# This file is part of hostlink.
# Copyright (c) 2026 hostlink developers
# SPDX-License-Identifier: BSD-2-Clause

"""Area of the Zynq SoC's AXI DMA (cores/zynq/axi_dma.py) from Yosys `synth_xilinx` (YoWASP), no Vivado.

    python -m reports.zynq_dma_area [--sg] [--json PATH] [--build-dir DIR]

The DMA alone, as ZynqDMASoC has it (64-bit AXI3 master, 16-beat bursts, 4 in flight each way, 64-beat
FIFOs), its ports the design's: Yosys maps it to 7-series cells, an estimate of what Vivado would place.
PG021's own figures for Xilinx's AXI DMA are in AMD's resource-utilization tables for the core, which this
machine cannot reach: compare there with the same configuration (direct register mode, no Data Realignment
Engine, 64-bit data, 16-beat bursts). `--sg`: the scatter-gather build (AXIDMA(bus, sg=True): its descriptor
engines and the port they share with the data engines).
"""

import argparse
import json
import os
import sys

from migen import *
from migen.fhdl.verilog import convert

from litex.soc.interconnect.axi import AXIInterface

from hostlink import BUILD_ROOT
from hostlink.cores.zynq.axi_dma import AXIDMA
from reports.xilinx_area import XC7Z045, synthesize

__all__ = ["area", "main"]


def area(build_dir, sg=False):
    """{lut, ff, bram36, ...} of the DMA (`sg`: in scatter-gather mode), synthesized in `build_dir`."""
    os.makedirs(build_dir, exist_ok=True)
    bus = AXIInterface(data_width=64, address_width=32, id_width=6, version="axi3")
    dma = AXIDMA(bus, sg=sg)
    ios = {dma.mm2s_irq, dma.s2mm_irq}
    for interface in (bus, dma.ctrl):
        for channel in ("aw", "w", "b", "ar", "r"):
            ios |= set(getattr(interface, channel).flatten())
    ios |= set(dma.mm2s.flatten()) | set(dma.s2mm.flatten())
    verilog = os.path.join(build_dir, "axi_dma.v")
    convert(dma, ios=ios, name="axi_dma").write(verilog)
    return synthesize(os.path.join(build_dir, "yosys"), "axi_dma", [verilog], "", build_dir)


def main(argv=None):
    parser = argparse.ArgumentParser(description="The Zynq SoC's AXI DMA's area (Yosys synth_xilinx).")
    parser.add_argument("--sg", action="store_true", help="The DMA in PG021's scatter-gather mode.")
    parser.add_argument("--json", metavar="PATH", help="Write the figures as JSON to PATH.")
    parser.add_argument("--build-dir", default=None,
        help="Work files (default build/zynq_dma_area, build/zynq_dma_area_sg with --sg).")
    args = parser.parse_args(argv)
    build_dir = args.build_dir or os.path.join(BUILD_ROOT, "zynq_dma_area_sg" if args.sg else "zynq_dma_area")
    figures = area(build_dir, sg=args.sg)
    mode = "scatter-gather" if args.sg else "direct register mode"
    print(f"AXI DMA (cores/zynq/axi_dma.py, {mode}), Yosys synth_xilinx: {figures['lut']} LUTs "
          f"({figures['lut_memory']} as memory), {figures['ff']} flip-flops, {figures['bram36']:g} BRAM36, "
          f"{figures['carry4']} CARRY4: {100*figures['lut']/XC7Z045['lut']:.2f} % of the XC7Z045's LUTs, "
          f"{100*figures['ff']/XC7Z045['ff']:.2f} % of its flip-flops")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({k: v for k, v in figures.items() if k != "cells"} | {"cells": figures["cells"]}, f, indent=2)
        print(f"results written to {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
