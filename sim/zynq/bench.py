# This file is part of hostlink.
# Copyright (c) 2026 hostlink developers
# SPDX-License-Identifier: BSD-2-Clause

"""cocotb bench of ./sim.py zynq: the Zynq SoC's DMA (sim/zynq/top.py) with the PS replaced by models.

- GP0: cocotbext-axi's AxiLiteMaster on the DMA's registers, programming them as a driver does (run, address,
  length; for S2MM the buffer first, then MM2S).
- HP0: the PS's DDR (memory.py): latency, bursts in flight, the port's rate, one DDR for reads and writes.
- The interrupts: each transfer ends when its interrupt rises; the bench then reads and clears the status.

Each job (mode, size) is timed in the simulation's clock cycles, from the write of LENGTH that starts it (the
last of MM2S's in loopback) to its interrupt, and every byte is checked: MM2S's by the logic's checker, S2MM's
and the loopback's in the memory afterwards. Reads its configuration from $HOSTLINK_SIM_CONFIG, writes the
results to the file named there.
"""

import json
import os

import cocotb
from cocotb.clock import Clock
from cocotb.triggers import First, RisingEdge, Timer
from cocotb.utils import get_sim_time

from cocotbext.axi import AxiLiteBus, AxiLiteMaster

from hostlink.protocol import (AXI_DMA_REGISTERS, AXI_DMA_SG_REGISTERS, AXI_DMA_DESCRIPTOR as DESC, DMACR_RS,
    DMACR_IOC_IRQ_EN, DMACR_ERR_IRQ_EN, DMASR_IOC_IRQ, DMASR_ERR_IRQ, DESC_CONTROL_TXSOF, DESC_CONTROL_TXEOF)
from hostlink.sim.zynq.models.memory import PSMemory
from hostlink.sim.zynq.top import pattern

MODES = {"loopback": 0, "mm2s": 1, "s2mm": 1}
SOURCE = 0x10_0000           # Where MM2S reads (1 MiB into the PS's DDR, as a kernel buffer might sit).
DESCRIPTORS = {"MM2S": 0x1000, "S2MM": 0x1040}   # Scatter-gather: each channel's one descriptor, linked to itself.
REGISTERS = {**AXI_DMA_REGISTERS, **AXI_DMA_SG_REGISTERS}


class Bench:
    def __init__(self, dut, config):
        self.dut, self.config = dut, config
        self.clock_hz = config["clock_hz"]
        self.period_ps = 2 * round(1e12 / self.clock_hz / 2)    # (cocotb wants an even period.)

    async def setup(self):
        dut, config = self.dut, self.config
        cocotb.start_soon(Clock(dut.clk, self.period_ps, "ps").start())
        for name in ("mode", "generate_enable", "generate_words", "check_clear"):
            getattr(dut, name).value = 0
        dut.rst.value = 1
        self.ctrl = AxiLiteMaster(AxiLiteBus.from_prefix(dut, "ctrl"), dut.clk, dut.rst)
        largest = max(config["sizes"])
        self.destination = SOURCE + ((largest + 0xfffff) & ~0xfffff)
        self.memory = PSMemory(dut, "hp0", dut.clk, dut.rst, self.destination + largest + 4096, self.clock_hz,
            read_latency_ns=config["read_latency_ns"], write_latency_ns=config["write_latency_ns"],
            max_reads=config["max_reads"], max_writes=config["max_writes"],
            rate_bytes_per_s=config["rate_bytes_per_s"], ddr={"ddr_bytes_per_s": config["ddr_bytes_per_s"]})
        for _ in range(8):
            await RisingEdge(dut.clk)
        dut.rst.value = 0
        for _ in range(8):
            await RisingEdge(dut.clk)

    async def write(self, name, value):
        await self.ctrl.write_dword(REGISTERS[name], value)

    async def read(self, name):
        return await self.ctrl.read_dword(REGISTERS[name])

    def cycles(self):
        return get_sim_time("ps") / self.period_ps

    async def start(self, channel, address, size):
        """Starts a channel's transfer: direct register mode, its address then LENGTH; scatter-gather, one
        descriptor (a whole packet, linked to itself, its STATUS cleared) and TAILDESC (CURDESC is taken while
        halted, the first time; then the engine goes on from the descriptor's NXTDESC, itself)."""
        run = DMACR_RS | DMACR_IOC_IRQ_EN | DMACR_ERR_IRQ_EN
        if not self.config.get("sg"):
            await self.write(f"{channel}_DMACR", run)
            await self.write(f"{channel}_SA" if channel == "MM2S" else "S2MM_DA", address)
            return await self._started(self.write(f"{channel}_LENGTH", size))
        at, memory = DESCRIPTORS[channel], self.memory.memory
        control = size | (DESC_CONTROL_TXSOF | DESC_CONTROL_TXEOF if channel == "MM2S" else 0)
        for offset, value in [("NXTDESC", at), ("BUFFER_ADDRESS", address), ("CONTROL", control), ("STATUS", 0)]:
            memory[at + DESC[offset]:at + DESC[offset] + 4] = value.to_bytes(4, "little")
        await self.write(f"{channel}_CURDESC", at)      # Before RS, as xilinx_dma does: PG021 takes it while halted.
        await self.write(f"{channel}_DMACR", run)
        return await self._started(self.write(f"{channel}_TAILDESC", at))

    async def _started(self, write):
        start = self.cycles()
        await write
        return start

    async def received(self):
        """S2MM's bytes: LENGTH (direct register mode) or its descriptor's STATUS."""
        if not self.config.get("sg"):
            return await self.read("S2MM_LENGTH")
        at = DESCRIPTORS["S2MM"] + DESC["STATUS"]
        return int.from_bytes(self.memory.memory[at:at + 4], "little") & 0x3ff_ffff

    async def wait_irq(self, signal, limit_cycles):
        if not signal.value:
            await First(RisingEdge(signal), Timer(limit_cycles * self.period_ps, "ps"))
        return bool(signal.value)

    async def run_job(self, mode, size):
        dut, memory = self.dut, self.memory
        dut.mode.value = MODES[mode]
        dut.generate_enable.value = 0
        dut.generate_words.value = size // 4
        dut.check_clear.value = 1
        beats = -(-size // 8)
        data = pattern(8 * beats)     # The checker compares whole beats: the pattern goes on to the last one's end.
        if mode in ("mm2s", "loopback"):
            memory.memory[SOURCE:SOURCE + 8 * beats] = data
        data = data[:size]
        memory.memory[self.destination:self.destination + size + 8] = bytes(size + 8)
        await RisingEdge(dut.clk)
        dut.check_clear.value = 0
        if mode == "s2mm":
            dut.generate_enable.value = 1       # Its packet waits for S2MM.
        limit = 64 * size // 8 + 100_000
        errors = []
        ended = {}
        if mode in ("s2mm", "loopback"):
            start = await self.start("S2MM", self.destination, size)
        if mode in ("mm2s", "loopback"):
            start = await self.start("MM2S", SOURCE, size)
        irq = dut.mm2s_irq if mode == "mm2s" else dut.s2mm_irq
        if not await self.wait_irq(irq, limit):
            return {"mode": mode, "size": size, "cycles": None, "errors": 1,
                    "error": f"no interrupt within {limit} cycles"}
        cycles = self.cycles() - start
        for channel in (["MM2S"] if mode != "s2mm" else []) + (["S2MM"] if mode != "mm2s" else []):
            status = await self.read(f"{channel}_DMASR")
            if not status & DMASR_IOC_IRQ or status & DMASR_ERR_IRQ:
                errors.append(f"{channel}_DMASR 0x{status:x}")
            await self.write(f"{channel}_DMASR", DMASR_IOC_IRQ | DMASR_ERR_IRQ)
        if mode == "mm2s":
            wrong, words = int(dut.check_errors.value), int(dut.check_words.value)
            if wrong or words != 2 * beats:
                errors.append(f"checker: {wrong} wrong words of {words}")
        else:
            length = await self.received()
            written = bytes(memory.memory[self.destination:self.destination + size])
            wrong = sum(1 for a, b in zip(written, data) if a != b)
            beyond = any(memory.memory[self.destination + size:self.destination + size + 8])
            if length != size or wrong or beyond:
                errors.append(f"S2MM_LENGTH {length}, {wrong} bytes wrong, {'bytes' if beyond else 'nothing'} "
                              f"written past the packet")
        return {"mode": mode, "size": size, "cycles": round(cycles), "errors": len(errors),
                "error": "; ".join(errors) or None,
                "mbytes_per_s": round(size / (cycles / self.clock_hz) / 1e6, 1),
                "latency_us": round(cycles / self.clock_hz * 1e6, 3)}


@cocotb.test()
async def zynq_bench(dut):
    with open(os.environ["HOSTLINK_SIM_CONFIG"]) as f:
        config = json.load(f)
    bench = Bench(dut, config)
    await bench.setup()
    results = []
    for mode, size in config["jobs"]:
        results.append(await bench.run_job(mode, size))
    with open(config["results"], "w") as f:
        json.dump({"results": results, "most_reads_in_flight": bench.memory.most_reads,
                   "most_writes_in_flight": bench.memory.most_writes, "bursts": bench.memory.bursts,
                   "ddr_switches": bench.memory.ddr.switches,
                   "ddr_critical_switches": bench.memory.ddr.critical_switches}, f)
