# This file is part of hostlink.
# Copyright (c) 2026 hostlink developers
# SPDX-License-Identifier: BSD-2-Clause

"""The Zynq SoC's logic for ./sim.py zynq: hostlink's AXI DMA as ZynqDMASoC has it, with the PS7 taken out and
its ports brought to the top for the PS's models (sim/zynq/bench.py).

    sim_top
      ctrl_*    AXI-Lite slave: the DMA's registers, as GP0 reaches them (cocotbext-axi's AxiLiteMaster)
      hp0_*     AXI master: HP0 (64-bit AXI3; len and size given in AXI4's widths, as cocotbext-axi's
                channels take them; bursts stay at most 16 beats)
      mm2s_irq, s2mm_irq
      mode      0: MM2S looped back into S2MM (as the SoC has it); 1: MM2S into a checker; 2: a generator into S2MM
      pattern_seed, generate_bytes, generate_start (a pulse), check_errors, check_beats

The pattern is what the bench writes into, and reads back from, the PS's DDR: 64-bit words, word i of a
transfer being seed + i in its low half and its complement in the high half, so every byte is checked
(MM2S by the checker, S2MM by the bench) without Python on the streams.
"""

import hashlib
import json
import os

from migen import *
from migen.fhdl.verilog import convert

from litex.gen import *

from litex.soc.interconnect.axi import AXIInterface

from hostlink.cores.zynq.axi_dma import AXIDMA

__all__ = ["SimTop", "build_model", "pattern_word"]


def pattern_word(seed, index):
    low = (seed + index) & 0xffffffff
    return (low ^ 0xffffffff) << 32 | low


class SimTop(LiteXModule):
    def __init__(self):
        self.bus = bus = AXIInterface(data_width=64, address_width=32, id_width=6, version="axi3")
        self.dma = dma = AXIDMA(bus)
        self.ios = set()

        def port(name, width, value=None, output=True):
            signal = Signal(width, name=name)
            self.ios.add(signal)
            if value is not None:
                self.comb += signal.eq(value) if output else value.eq(signal)
            return signal

        # The DMA's registers (AXI-Lite).
        ctrl = dma.ctrl
        for channel, fields in [("aw", [("addr", 32, False), ("prot", 3, None)]), ("w", [("data", 32, False),
                ("strb", 4, False)]), ("b", [("resp", 2, True)]), ("ar", [("addr", 32, False), ("prot", 3, None)]),
                ("r", [("data", 32, True), ("resp", 2, True)])]:
            record = getattr(ctrl, channel)
            master_drives = channel in ("aw", "w", "ar")
            port(f"ctrl_{channel}valid", 1, record.valid, output=not master_drives)
            port(f"ctrl_{channel}ready", 1, record.ready, output=master_drives)
            for field, width, out in fields:
                if out is None:
                    port(f"ctrl_{channel}{field}", width)     # Taken, unused.
                else:
                    port(f"ctrl_{channel}{field}", width, getattr(record, field), output=out)

        # HP0 (the DMA masters it).
        for channel in ("aw", "ar"):
            record = getattr(bus, channel)
            port(f"hp0_{channel}valid", 1, record.valid)
            port(f"hp0_{channel}ready", 1, record.ready, output=False)
            port(f"hp0_{channel}id",    6, record.id)
            port(f"hp0_{channel}addr",  32, record.addr)
            port(f"hp0_{channel}len",   8, record.len)
            port(f"hp0_{channel}size",  3, record.size[:3])
            port(f"hp0_{channel}burst", 2, record.burst)
            port(f"hp0_{channel}cache", 4, record.cache)
        port("hp0_wvalid", 1, bus.w.valid)
        port("hp0_wready", 1, bus.w.ready, output=False)
        port("hp0_wdata",  64, bus.w.data)
        port("hp0_wstrb",  8, bus.w.strb)
        port("hp0_wlast",  1, bus.w.last)
        port("hp0_bvalid", 1, bus.b.valid, output=False)
        port("hp0_bready", 1, bus.b.ready)
        port("hp0_bid",    6, bus.b.id, output=False)
        port("hp0_bresp",  2, bus.b.resp, output=False)
        port("hp0_rvalid", 1, bus.r.valid, output=False)
        port("hp0_rready", 1, bus.r.ready)
        port("hp0_rid",    6, bus.r.id, output=False)
        port("hp0_rdata",  64, bus.r.data, output=False)
        port("hp0_rresp",  2, bus.r.resp, output=False)
        port("hp0_rlast",  1, bus.r.last, output=False)
        port("mm2s_irq", 1, dma.mm2s_irq)
        port("s2mm_irq", 1, dma.s2mm_irq)

        # Streams: loopback, checker, generator.
        mode     = port("mode", 2)
        seed     = port("pattern_seed", 32)
        gen_len  = port("generate_bytes", 32)
        generate = port("generate_start", 1)
        errors   = port("check_errors", 32)
        beats    = port("check_beats", 32)
        check_index = Signal(32)
        gen_index   = Signal(32)
        gen_left    = Signal(32)
        expected    = Signal(64)
        generated   = Signal(64)
        self.comb += [
            expected.eq(Cat(seed + check_index, ~(seed + check_index))),
            generated.eq(Cat(seed + gen_index, ~(seed + gen_index))),
        ]
        mask = Signal(64)
        self.comb += mask.eq(Cat(*[Replicate(dma.mm2s.keep[i], 8) for i in range(8)]))
        self.comb += If(mode == 0,
            dma.mm2s.connect(dma.s2mm),
        ).Elif(mode == 1,
            dma.mm2s.ready.eq(1),
        ).Else(
            dma.s2mm.valid.eq(gen_left != 0),
            dma.s2mm.data.eq(generated),
            dma.s2mm.last.eq(gen_left <= 8),
            dma.s2mm.keep.eq(Mux(gen_left >= 8, 0xff, (1 << gen_left[:3]) - 1)),
        )
        self.sync += [
            If(generate,
                gen_index.eq(0),
                gen_left.eq(gen_len),
                check_index.eq(0),
                errors.eq(0),
                beats.eq(0),
            ),
            If((mode == 2) & dma.s2mm.valid & dma.s2mm.ready,
                gen_index.eq(gen_index + 1),
                gen_left.eq(Mux(gen_left >= 8, gen_left - 8, 0)),
            ),
            If((mode == 1) & dma.mm2s.valid,
                check_index.eq(Mux(dma.mm2s.last, 0, check_index + 1)),
                beats.eq(beats + 1),
                If((dma.mm2s.data & mask) != (expected & mask), errors.eq(errors + 1)),
            ),
        ]


def build_model(build_root):
    """The Verilator model of SimTop in `build_root`/sim/zynq, built once per version of the sources;
    returns {"verilog", "model_dir"} for sim/pcie/run.py's run_bench."""
    from hostlink.sim.pcie.run import compile_model
    from hostlink.toolchain import verilator_env
    here = os.path.dirname(os.path.abspath(__file__))
    digest = hashlib.sha256()
    for path in [os.path.join(here, "top.py"), os.path.join(here, "..", "..", "cores", "zynq", "axi_dma.py")]:
        with open(path, "rb") as f:
            digest.update(f.read())
    digest = digest.hexdigest()[:16]
    directory = os.path.join(build_root, "sim", "zynq")
    model_dir = os.path.join(directory, "verilator")
    verilog   = os.path.join(directory, "sim_top.v")
    stamp     = os.path.join(directory, "sources.digest")
    model = {"verilog": verilog, "model_dir": model_dir}
    if os.path.exists(stamp) and open(stamp).read() == digest and os.path.exists(os.path.join(model_dir, "sim_top")):
        return model
    os.makedirs(directory, exist_ok=True)
    top = SimTop()
    sys_clk = ClockDomain("sys")
    top.clock_domains += sys_clk
    top.ios |= {sys_clk.clk, sys_clk.rst}
    sys_clk.clk.name_override, sys_clk.rst.name_override = "clk", "rst"
    convert(top, ios=top.ios, name="sim_top").write(verilog)
    os.environ.update(verilator_env())
    compile_model(model_dir, "sim_top", [verilog], os.path.join(directory, "verilator_build.log"))
    with open(stamp, "w") as f:
        f.write(digest)
    return model
