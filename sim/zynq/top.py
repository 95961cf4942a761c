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
      mm2s_done, s2mm_done  a channel's IOC_Irq or Err_Irq status bit, whether its interrupt is enabled or not
      mode, generate_enable, generate_words, check_clear, check_words, check_errors
                the SoC's DMAStreams (hostlink.cores.zynq.integration), which the SoC drives from CSRs:
                0, MM2S looped back into S2MM; 1, the pattern generator into S2MM, MM2S into the checker

The pattern (32-bit words counting from 0) is what the bench writes into, and reads back from, the PS's DDR:
every byte is checked (MM2S by the checker, S2MM and the loopback by the bench) without Python on the streams.
"""

import hashlib
import os

from migen import *
from migen.fhdl.verilog import convert

from litex.gen import *

from litex.soc.interconnect.axi import AXIInterface

from hostlink.cores.zynq.axi_dma import AXIDMA
from hostlink.cores.zynq.integration import DMAStreams

__all__ = ["SimTop", "build_model", "pattern"]


def pattern(size):
    """The pattern's first `size` bytes: 32-bit little-endian words counting from 0 (dma_pattern.py)."""
    return b"".join(i.to_bytes(4, "little") for i in range(-(-size // 4)))[:size]


class SimTop(LiteXModule):
    def __init__(self, sg=False):
        self.bus = bus = AXIInterface(data_width=64, address_width=32, id_width=6, version="axi3")
        self.dma = dma = AXIDMA(bus, sg=sg)   # sg: PG021's scatter-gather mode (./sim.py ... --axi-dma-sg).
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
        # A transfer's end as its status says it (IOC_Irq or Err_Irq), with its interrupt enabled or not: the
        # bench times a polling driver's transfers by it.
        port("mm2s_done", 1, dma.rd.ioc_irq | dma.rd.err_irq)
        port("s2mm_done", 1, dma.wr.ioc_irq | dma.wr.err_irq)

        # The streams, as the SoC has them (DMAStreams), driven from the top instead of CSRs.
        self.streams = streams = DMAStreams(dma, with_csr=False)
        port("mode", 1, streams.mode, output=False)
        port("generate_enable", 1, streams.generator.enable, output=False)
        port("generate_words", 32, streams.generator.length, output=False)
        port("check_clear", 1, streams.checker.clear, output=False)
        port("check_words", 32, streams.checker.words)
        port("check_errors", 32, streams.checker.errors)


def build_model(build_root, sg=False):
    """The Verilator model of SimTop (`sg`: the DMA in scatter-gather mode) in `build_root`/sim/zynq (zynq_sg),
    built once per version of the sources; returns {"verilog", "model_dir"} for sim/pcie/run.py's run_bench."""
    from hostlink.sim.verilator import compile_model
    from hostlink.toolchain import verilator_env
    here = os.path.dirname(os.path.abspath(__file__))
    digest = hashlib.sha256()
    cores = os.path.join(here, "..", "..", "cores")
    for path in [os.path.join(here, "top.py"), os.path.join(cores, "zynq", "axi_dma.py"),
                 os.path.join(cores, "zynq", "axi_dma_sg.py"),
                 os.path.join(cores, "zynq", "integration.py"), os.path.join(cores, "pcie", "dma_pattern.py")]:
        with open(path, "rb") as f:
            digest.update(f.read())
    digest = digest.hexdigest()[:16]
    directory = os.path.join(build_root, "sim", "zynq_sg" if sg else "zynq")
    model_dir = os.path.join(directory, "verilator")
    verilog   = os.path.join(directory, "sim_top.v")
    stamp     = os.path.join(directory, "sources.digest")
    model = {"verilog": verilog, "model_dir": model_dir}
    if os.path.exists(stamp) and open(stamp).read() == digest and os.path.exists(os.path.join(model_dir, "sim_top")):
        return model
    os.makedirs(directory, exist_ok=True)
    top = SimTop(sg=sg)
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
