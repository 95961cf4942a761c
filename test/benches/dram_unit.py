# This file is part of hostlink.
# Copyright (c) 2026 hostlink developers
# SPDX-License-Identifier: BSD-2-Clause

"""A DRAMDMAChannel on its own against LiteDRAM's controller and SDRAMPHYModel, in Verilator.

migen's Python simulator runs the LiteDRAM controller at a few dozen cycles per second: far too slow
for windows of useful size. This top (the channel, two crossbar ports with their clock crossings,
the controller and the model in a `dram` clock domain, the stuck-bit injector) is converted to
Verilog and run by cocotb (dram_unit_bench.py) in Verilator instead. The DMA side runs at the
ZC706's 150 MHz with 128-bit words, the controller at 200 MHz (DDR3-1600 at 1:4) with 512-bit native
words.
"""

import hashlib
import os

from migen import *
from migen.fhdl.verilog import convert

from litex.gen import *

from litedram.core import LiteDRAMCore
from litedram.modules import MT8JTF12864

from hostlink.cores.dram.common import native_port_cdc
from hostlink.cores.dram.channel import DRAMDMAChannel
from hostlink.cores.dram.common import dram_size
from hostlink.sim.pcie.dram import shrunk_module, StuckBitDFI, sdram_model

DATA_WIDTH    = 128
SYS_CLK_FREQ  = 150e6
DRAM_CLK_FREQ = 200e6
DRAM_ROWS     = 4   # 4 rows x 8 banks x 8 KiB = 256 KiB: rows and banks to cross, quick to build.

# Unit top -----------------------------------------------------------------------------------------

class DRAMChannelUnit(LiteXModule):
    def __init__(self):
        self.ios = set()
        self.cd_sys  = ClockDomain()
        self.cd_dram = ClockDomain()
        self.ios |= {self.cd_sys.clk, self.cd_sys.rst, self.cd_dram.clk, self.cd_dram.rst}

        # # #

        module    = shrunk_module(MT8JTF12864, DRAM_ROWS)(DRAM_CLK_FREQ, "1:4")
        self.size = dram_size(module)
        phy       = sdram_model(module, DRAM_CLK_FREQ)
        fault     = StuckBitDFI(phy)
        self.fault = ClockDomainsRenamer("dram")(fault)
        self.sdram = ClockDomainsRenamer("dram")(LiteDRAMCore(fault, module.geom_settings,
            module.timing_settings, clk_freq=DRAM_CLK_FREQ))
        write_port, self.write_cdc = native_port_cdc(self.sdram.crossbar.get_port(mode="write"), "dram")
        read_port,  self.read_cdc  = native_port_cdc(self.sdram.crossbar.get_port(mode="read"),  "dram")
        self.channel = ch = DRAMDMAChannel(write_port, read_port, DATA_WIDTH, self.size, with_csr=False)

        self.comb += [
            fault.stuck.eq(self._port("stuck")),
            ch.dram_mode.eq(self._port("dram_mode")),
            self._port("refusals", 32).eq(ch.refusals),
        ]
        for name, endpoint, direction in [
                ("from_dma",     ch.from_dma,     "in"),
                ("from_pattern", ch.from_pattern, "in"),
                ("to_dma",       ch.to_dma,       "out"),
                ("to_pattern",   ch.to_pattern,   "out")]:
            valid, ready, data = (self._port(f"{name}_{f}", w) for f, w in
                [("valid", 1), ("ready", 1), ("data", DATA_WIDTH)])
            if direction == "in":
                self.comb += endpoint.valid.eq(valid), endpoint.data.eq(data), ready.eq(endpoint.ready)
            else:
                self.comb += valid.eq(endpoint.valid), data.eq(endpoint.data), endpoint.ready.eq(ready)
        for name, engine in [("write", ch.writer), ("read", ch.reader)]:
            self.comb += [
                engine.base.eq(self._port(f"{name}_base", 32)),
                engine.length.eq(self._port(f"{name}_length", 32)),
                engine.start.eq(self._port(f"{name}_start")),
                engine.abort.eq(self._port(f"{name}_abort")),
                self._port(f"{name}_busy").eq(engine.busy),
                self._port(f"{name}_done").eq(engine.done),
                self._port(f"{name}_words", 32).eq(engine.words),
            ]

    def _port(self, name, width=1):
        signal = Signal(width, name_override=name)
        self.ios.add(signal)
        return signal


def build_unit_model(build_dir):
    """Verilog and Verilator model of the unit top in `build_dir`; returns the model directory."""
    from hostlink.sim.verilator import compile_model
    from hostlink.sim.pcie.sim_platform import comb_blocks_run_at_time_zero
    build_dir = os.path.abspath(build_dir)
    os.makedirs(build_dir, exist_ok=True)
    top = DRAMChannelUnit()
    verilog = os.path.join(build_dir, "dram_unit.v")
    cwd = os.getcwd()
    os.chdir(build_dir)   # Memory initialisation files land in the current directory.
    try:
        convert(top, ios=top.ios, name="dram_unit").write(verilog)
        comb_blocks_run_at_time_zero(verilog)
    finally:
        os.chdir(cwd)
    with open(verilog) as f:
        # LiteX stamps the generation date in comments: not a change of the design.
        digest = hashlib.sha256("".join(l for l in f if not l.startswith("//")).encode()).hexdigest()[:16]
    model_dir = os.path.join(build_dir, "verilator")
    stamp     = os.path.join(model_dir, "hostlink.digest")
    if not (os.path.exists(stamp) and open(stamp).read() == digest):
        compile_model(model_dir, "dram_unit", [verilog], log_file=os.path.join(build_dir, "verilator.log"))
        with open(stamp, "w") as f:
            f.write(digest)
    return model_dir, top.size
