# This file is part of hostlink.
# Copyright (c) 2026 hostlink developers
# SPDX-License-Identifier: BSD-2-Clause

"""The PG021-compatible AXI DMA (cores/zynq/axi_dma.py) in migen's simulator, against an AXI3 memory model
that checks the protocol: every byte of MM2S, S2MM and a loopback checked, for lengths from 1 byte to
several pages at addresses on and off 4 KiB boundaries, with idle cycles and back-pressure on the streams
and a slow memory; bursts never cross 4 KiB nor exceed 16 beats, several are in flight; the registers,
interrupts, errors (SLVERR, a packet longer than its buffer) and the soft reset as Linux's xilinx_dma
expects them.
"""

import random
import re

import pytest

from migen import *

from litex.gen import LiteXModule
from litex.soc.interconnect.axi import AXIInterface

from hostlink.cores.zynq.axi_dma import AXIDMA
from hostlink.protocol import (AXI_DMA_REGISTERS as REGISTERS, DMACR_RS, DMACR_RESET, DMACR_IOC_IRQ_EN,
    DMACR_ERR_IRQ_EN, DMASR_HALTED, DMASR_IDLE, DMASR_INT_ERR, DMASR_SLV_ERR, DMASR_IOC_IRQ, DMASR_ERR_IRQ)

from benches.migen_streams import IDLE_X_BACKPRESSURE, MAX_CYCLES, stuck

BEAT = 8
MEMORY_BYTES = 1 << 16


class AXIMemory:
    """A 64-bit AXI3 slave over `MEMORY_BYTES` of memory, answering each burst `latency` cycles after its
    request, ready with probability `ready_probability` on every channel. Checks what a Zynq HP port
    requires (INCR bursts of at most 16 beats of 8 bytes within a 4 KiB page, WLAST on each burst's last
    beat, W only after its AW) and keeps the most bursts seen in flight. `error_at`: a read or write
    burst that touches this address is answered SLVERR."""

    def __init__(self, bus, rng, ready_probability=1.0, latency=12, error_at=None):
        self.bus, self.rng, self.p, self.latency, self.error_at = bus, rng, ready_probability, latency, error_at
        self.memory = bytearray(rng.randbytes(MEMORY_BYTES))
        self.reads = []     # [ready cycle, address, beats, beat sent]
        self.writes = []    # [address, beats, beats written, error]
        self.responses = [] # [ready cycle, resp]
        self.most_reads_in_flight = self.most_writes_in_flight = 0
        self.bursts = []    # (kind, address, beats) of every request

    def _check_burst(self, kind, address, beats, burst, size):
        assert burst == 0b01 and size == 3, f"{kind} burst type {burst}, size {size}: INCR of 8 bytes expected"
        assert 1 <= beats <= 16, f"{kind} burst of {beats} beats"
        assert address % BEAT == 0, f"{kind} at 0x{address:x}: not aligned"
        assert address // 4096 == (address + beats*BEAT - 1) // 4096, \
            f"{kind} burst at 0x{address:x} of {beats} beats crosses a 4 KiB boundary"
        assert address + beats*BEAT <= MEMORY_BYTES
        self.bursts.append((kind, address, beats))

    def _errs(self, address, beats):
        return self.error_at is not None and address <= self.error_at < address + beats*BEAT

    @passive
    def run(self):
        bus, cycle = self.bus, 0
        while True:
            ar_ready = self.rng.random() < self.p
            aw_ready = self.rng.random() < self.p
            w_ready  = self.rng.random() < self.p
            read = self.reads[0] if self.reads and self.reads[0][0] <= cycle else None
            r_valid = read is not None and self.rng.random() < self.p
            if r_valid:
                address = read[1] + read[3]*BEAT
                yield bus.r.data.eq(int.from_bytes(self.memory[address:address + BEAT], "little"))
                yield bus.r.last.eq(read[3] == read[2] - 1)
                yield bus.r.resp.eq(0b10 if self._errs(read[1], read[2]) else 0)
            b_valid = bool(self.responses) and self.responses[0][0] <= cycle
            if b_valid:
                yield bus.b.resp.eq(self.responses[0][1])
            for signal, value in [(bus.ar.ready, ar_ready), (bus.aw.ready, aw_ready), (bus.w.ready, w_ready),
                                  (bus.r.valid, r_valid), (bus.b.valid, b_valid)]:
                yield signal.eq(value)
            yield
            cycle += 1
            if ar_ready and (yield bus.ar.valid):
                address, beats = (yield bus.ar.addr), (yield bus.ar.len) + 1
                self._check_burst("read", address, beats, (yield bus.ar.burst), (yield bus.ar.size))
                self.reads.append([cycle + self.latency, address, beats, 0])
            if aw_ready and (yield bus.aw.valid):
                address, beats = (yield bus.aw.addr), (yield bus.aw.len) + 1
                self._check_burst("write", address, beats, (yield bus.aw.burst), (yield bus.aw.size))
                self.writes.append([address, beats, 0, self._errs(address, beats)])
            if w_ready and (yield bus.w.valid):
                assert self.writes and self.writes[-1][2] < self.writes[-1][1] or \
                    any(w[2] < w[1] for w in self.writes), "write data without its burst's address"
                write = next(w for w in self.writes if w[2] < w[1])
                address = write[0] + write[2]*BEAT
                data, strb = (yield bus.w.data), (yield bus.w.strb)
                for i in range(BEAT):
                    if strb >> i & 1:
                        self.memory[address + i] = data >> (8*i) & 0xff
                write[2] += 1
                assert (yield bus.w.last) == (write[2] == write[1]), f"WLAST wrong on beat {write[2]} of {write[1]}"
                if write[2] == write[1]:
                    self.responses.append([cycle + self.latency, 0b10 if write[3] else 0])
                    self.writes.remove(write)
            if r_valid and (yield bus.r.ready):
                read[3] += 1
                if read[3] == read[2]:
                    self.reads.pop(0)
            if b_valid and (yield bus.b.ready):
                self.responses.pop(0)
            self.most_reads_in_flight = max(self.most_reads_in_flight, len(self.reads))
            self.most_writes_in_flight = max(self.most_writes_in_flight, len(self.writes) + len(self.responses))


class Bench(LiteXModule):
    def __init__(self, loopback=False, **kwargs):
        self.bus = AXIInterface(data_width=64, address_width=32, id_width=6, version="axi3")
        self.dma = AXIDMA(self.bus, **kwargs)
        if loopback:
            self.comb += self.dma.mm2s.connect(self.dma.s2mm)


def write_register(dma, name, value):
    yield from dma.ctrl.write(REGISTERS[name], value)


def read_register(dma, name):
    value, _ = yield from dma.ctrl.read(REGISTERS[name])
    return value


def wait_status(dma, name, bits):
    """Reads the DMASR `name` until one of `bits` is set; returns it."""
    for _ in range(MAX_CYCLES):
        status = yield from read_register(dma, name)
        if status & bits:
            return status
        for _ in range(8):
            yield
    raise stuck(f"{name} & 0x{bits:x}")


def receive(endpoint, rng, ready_probability, out, cycles=None):
    """The stream's beats up to its last, as (data, keep, last), ready with `ready_probability`; the cycle
    of each beat in `cycles`."""
    for cycle in range(MAX_CYCLES):
        ready = rng.random() < ready_probability
        yield endpoint.ready.eq(ready)
        yield
        if ready and (yield endpoint.valid):
            out.append(((yield endpoint.data), (yield endpoint.keep), (yield endpoint.last)))
            if cycles is not None:
                cycles.append(cycle)
            if out[-1][2]:
                yield endpoint.ready.eq(0)
                return
    raise stuck("the MM2S stream")


def send(endpoint, data, rng, valid_probability, stalls=None):
    """`data` as one packet, keep marking the last beat's bytes; a 1 in `stalls` per cycle a beat waited."""
    beats = [data[i:i + BEAT] for i in range(0, len(data), BEAT)]
    for i, chunk in enumerate(beats):
        while rng.random() > valid_probability:
            yield endpoint.valid.eq(0)
            yield
        yield endpoint.valid.eq(1)
        yield endpoint.data.eq(int.from_bytes(chunk.ljust(BEAT, b"\0"), "little"))
        yield endpoint.keep.eq((1 << len(chunk)) - 1)
        yield endpoint.last.eq(i == len(beats) - 1)
        yield
        for _ in range(MAX_CYCLES):
            if (yield endpoint.ready):
                break
            if stalls is not None and i > 0:    # (The first beat waits for the transfer's start.)
                stalls.append(1)
            yield
        else:
            raise stuck("the S2MM stream")
    yield endpoint.valid.eq(0)


def stream_bytes(beats):
    out = b""
    for data, keep, last in beats:
        out += bytes(data >> (8*i) & 0xff for i in range(BEAT) if keep >> i & 1)
    return out


CASES = [(1, 0x1000), (8, 0x2000), (100, 0x0ff8), (4096, 0x1000), (4104, 0x3fe8), (5000, 0x0040)]
RATES = IDLE_X_BACKPRESSURE   # (stream, memory) probabilities


@pytest.mark.parametrize("length, address", CASES)
@pytest.mark.parametrize("stream_probability, memory_probability", RATES)
def test_mm2s_reads_every_byte_in_bursts_within_pages(length, address, stream_probability, memory_probability):
    bench = Bench()
    dma = bench.dma
    memory = AXIMemory(bench.bus, random.Random(length), memory_probability)
    beats, cycles, state = [], [], {}

    def control():
        assert (yield from read_register(dma, "MM2S_DMASR")) & DMASR_HALTED
        yield from write_register(dma, "MM2S_DMACR", DMACR_RS | DMACR_IOC_IRQ_EN | DMACR_ERR_IRQ_EN)
        yield from write_register(dma, "MM2S_SA", address)
        yield from write_register(dma, "MM2S_LENGTH", length)
        state["status"] = yield from wait_status(dma, "MM2S_DMASR", DMASR_IOC_IRQ | DMASR_ERR_IRQ)
        state["irq"] = yield dma.mm2s_irq
        yield from write_register(dma, "MM2S_DMASR", DMASR_IOC_IRQ)     # Write 1 to clear.
        yield
        state["irq_after"] = yield dma.mm2s_irq
        state["status_after"] = yield from read_register(dma, "MM2S_DMASR")

    run_simulation(bench, [memory.run(), control(),
                           receive(dma.mm2s, random.Random(2), stream_probability, beats, cycles)])
    assert stream_bytes(beats) == bytes(memory.memory[address:address + length])
    assert len(beats) == -(-length // BEAT) and [last for _, _, last in beats].count(1) == 1
    assert state["status"] & DMASR_IOC_IRQ and not state["status"] & DMASR_ERR_IRQ
    assert state["irq"] == 1 and state["irq_after"] == 0
    assert state["status_after"] & DMASR_IDLE and not state["status_after"] & (DMASR_HALTED | DMASR_IOC_IRQ)
    if length > 16*BEAT:
        assert any(beats == 16 for _, _, beats in memory.bursts)
    if length >= 4*16*BEAT:
        assert memory.most_reads_in_flight > 1, "one read burst at a time"
    if length >= 4096 and stream_probability == memory_probability == 1.0:
        # A beat every cycle once data flows (a 150 MHz HP port's 1.2 GB/s): the bursts in flight cover the
        # memory's latency.
        assert cycles[-1] - cycles[0] + 1 == len(beats), (cycles[0], cycles[-1], len(beats))


@pytest.mark.parametrize("length, address", CASES)
@pytest.mark.parametrize("stream_probability, memory_probability", RATES)
def test_s2mm_writes_every_byte_and_reports_the_packets_length(length, address, stream_probability,
                                                               memory_probability):
    bench = Bench()
    dma = bench.dma
    memory = AXIMemory(bench.bus, random.Random(length), memory_probability)
    before = bytes(memory.memory)
    data = random.Random(length + 1).randbytes(length)
    state = {}

    def control():
        yield from write_register(dma, "S2MM_DMACR", DMACR_RS | DMACR_IOC_IRQ_EN)
        yield from write_register(dma, "S2MM_DA", address)
        yield from write_register(dma, "S2MM_LENGTH", length + 64)     # A buffer larger than the packet.
        state["status"] = yield from wait_status(dma, "S2MM_DMASR", DMASR_IOC_IRQ | DMASR_ERR_IRQ)
        state["irq"] = yield dma.s2mm_irq
        state["length"] = yield from read_register(dma, "S2MM_LENGTH")

    stalls = []
    run_simulation(bench, [memory.run(), control(),
                           send(dma.s2mm, data, random.Random(3), stream_probability, stalls)])
    assert state["status"] & DMASR_IOC_IRQ and not state["status"] & DMASR_ERR_IRQ and state["irq"] == 1
    assert state["length"] == length
    assert bytes(memory.memory[address:address + length]) == data
    # Nothing else written: not before, not the rest of the last beat, not past it.
    assert memory.memory[:address] == before[:address]
    assert memory.memory[address + length:] == before[address + length:]
    if length >= 4*16*BEAT and stream_probability == 1.0:
        assert memory.most_writes_in_flight > 1, "one write burst at a time"
    if memory_probability == 1.0:
        assert stalls == [], f"the stream waited {len(stalls)} cycles"   # A beat every cycle.


def test_loopback_moves_every_byte_from_one_buffer_to_another():
    bench = Bench(loopback=True)
    dma = bench.dma
    memory = AXIMemory(bench.bus, random.Random(7), 0.8)
    source, destination, length = 0x0100, 0x8000, 6000
    state = {}

    def control():
        yield from write_register(dma, "S2MM_DMACR", DMACR_RS | DMACR_IOC_IRQ_EN)
        yield from write_register(dma, "S2MM_DA", destination)
        yield from write_register(dma, "S2MM_LENGTH", length)
        yield from write_register(dma, "MM2S_DMACR", DMACR_RS | DMACR_IOC_IRQ_EN)
        yield from write_register(dma, "MM2S_SA", source)
        yield from write_register(dma, "MM2S_LENGTH", length)
        state["mm2s"] = yield from wait_status(dma, "MM2S_DMASR", DMASR_IOC_IRQ | DMASR_ERR_IRQ)
        state["s2mm"] = yield from wait_status(dma, "S2MM_DMASR", DMASR_IOC_IRQ | DMASR_ERR_IRQ)
        state["length"] = yield from read_register(dma, "S2MM_LENGTH")

    run_simulation(bench, [memory.run(), control()])
    assert state["mm2s"] & DMASR_IOC_IRQ and state["s2mm"] & DMASR_IOC_IRQ and state["length"] == length
    assert memory.memory[destination:destination + length] == memory.memory[source:source + length]


def test_a_read_error_ends_the_transfer_with_err_irq_and_halts():
    bench = Bench()
    dma = bench.dma
    memory = AXIMemory(bench.bus, random.Random(9), error_at=0x1400)
    beats, state = [], {}

    def control():
        yield from write_register(dma, "MM2S_DMACR", DMACR_RS | DMACR_ERR_IRQ_EN)
        yield from write_register(dma, "MM2S_SA", 0x1000)
        yield from write_register(dma, "MM2S_LENGTH", 4096)
        state["status"] = yield from wait_status(dma, "MM2S_DMASR", DMASR_IOC_IRQ | DMASR_ERR_IRQ)
        state["irq"] = yield dma.mm2s_irq
        state["control"] = yield from read_register(dma, "MM2S_DMACR")

    run_simulation(bench, [memory.run(), control(), receive(dma.mm2s, random.Random(2), 1.0, beats)])
    assert state["status"] & DMASR_ERR_IRQ and state["status"] & DMASR_SLV_ERR and state["status"] & DMASR_HALTED
    assert not state["status"] & DMASR_IOC_IRQ and state["irq"] == 1 and not state["control"] & DMACR_RS


def test_a_packet_longer_than_its_buffer_is_cut_and_flagged():
    bench = Bench()
    dma = bench.dma
    memory = AXIMemory(bench.bus, random.Random(11))
    before = bytes(memory.memory)
    data = random.Random(12).randbytes(1000)
    state = {}

    def control():
        yield from write_register(dma, "S2MM_DMACR", DMACR_RS | DMACR_ERR_IRQ_EN)
        yield from write_register(dma, "S2MM_DA", 0x2000)
        yield from write_register(dma, "S2MM_LENGTH", 512)
        state["status"] = yield from wait_status(dma, "S2MM_DMASR", DMASR_IOC_IRQ | DMASR_ERR_IRQ)
        state["length"] = yield from read_register(dma, "S2MM_LENGTH")

    run_simulation(bench, [memory.run(), control(), send(dma.s2mm, data, random.Random(3), 1.0)])
    assert state["status"] & DMASR_INT_ERR and state["status"] & DMASR_ERR_IRQ and state["status"] & DMASR_HALTED
    assert state["length"] == 512
    assert memory.memory[0x2000:0x2200] == data[:512]                   # The buffer, filled.
    assert memory.memory[0x2200:] == before[0x2200:]                     # Nothing past it.


def test_reset_clears_the_registers_and_reads_back_when_done():
    bench = Bench()
    dma = bench.dma
    memory = AXIMemory(bench.bus, random.Random(13))
    state = {}

    def control():
        yield from write_register(dma, "MM2S_DMACR", DMACR_RS | DMACR_IOC_IRQ_EN)
        yield from write_register(dma, "MM2S_SA", 0x1000)
        yield from write_register(dma, "S2MM_DA", 0x2000)
        yield from write_register(dma, "S2MM_DMACR", DMACR_RESET)
        for _ in range(MAX_CYCLES):
            control = yield from read_register(dma, "S2MM_DMACR")
            if not control & DMACR_RESET:
                break
        state["registers"] = []
        for name in REGISTERS:
            state["registers"].append((yield from read_register(dma, name)))

    run_simulation(bench, [memory.run(), control()])
    statuses = {REGISTERS["MM2S_DMASR"], REGISTERS["S2MM_DMASR"]}
    for (name, offset), value in zip(REGISTERS.items(), state["registers"]):
        assert value == (DMASR_HALTED if offset in statuses else 0), (name, value)


def reset_channel(dma, name):
    yield from write_register(dma, f"{name}_DMACR", DMACR_RESET)
    for _ in range(MAX_CYCLES):
        if not (yield from read_register(dma, f"{name}_DMACR")) & DMACR_RESET:
            return
    raise stuck("the reset")


@pytest.mark.parametrize("channel, address, length", [
    ("MM2S", 0x1004, 64),     # Not aligned to the 8-byte bus.
    ("MM2S", 0x1000, 0),      # Nothing to move.
    ("S2MM", 0x2002, 64),
    ("S2MM", 0x2000, 0),
])
def test_a_transfer_the_dma_cannot_start_is_refused_and_the_next_is_clean(channel, address, length):
    """DMAIntErr and Err_Irq at once, the channel halted, nothing on the bus; after a reset (what xilinx_dma's
    error path does), a good transfer is clean."""
    bench = Bench(loopback=True)
    dma = bench.dma
    memory = AXIMemory(bench.bus, random.Random(15))
    state = {}
    other = "S2MM" if channel == "MM2S" else "MM2S"
    where = "SA" if channel == "MM2S" else "DA"

    def control():
        yield from write_register(dma, f"{channel}_DMACR", DMACR_RS | DMACR_ERR_IRQ_EN)
        yield from write_register(dma, f"{channel}_{where}", address)
        yield from write_register(dma, f"{channel}_LENGTH", length)
        state["status"] = yield from wait_status(dma, f"{channel}_DMASR", DMASR_IOC_IRQ | DMASR_ERR_IRQ)
        state["irq"] = (yield dma.mm2s_irq) if channel == "MM2S" else (yield dma.s2mm_irq)
        state["control"] = yield from read_register(dma, f"{channel}_DMACR")
        state["bursts"] = len(memory.bursts)
        yield from reset_channel(dma, channel)
        # A clean loopback: 256 bytes from 0x4000 to 0x6000.
        yield from write_register(dma, "S2MM_DMACR", DMACR_RS | DMACR_IOC_IRQ_EN)
        yield from write_register(dma, "S2MM_DA", 0x6000)
        yield from write_register(dma, "S2MM_LENGTH", 256)
        yield from write_register(dma, "MM2S_DMACR", DMACR_RS | DMACR_IOC_IRQ_EN)
        yield from write_register(dma, "MM2S_SA", 0x4000)
        yield from write_register(dma, "MM2S_LENGTH", 256)
        state["next"] = []
        for name in ("MM2S", "S2MM"):
            state["next"].append((yield from wait_status(dma, f"{name}_DMASR", DMASR_IOC_IRQ | DMASR_ERR_IRQ)))

    run_simulation(bench, [memory.run(), control()])
    assert state["status"] & DMASR_INT_ERR and state["status"] & DMASR_ERR_IRQ and state["status"] & DMASR_HALTED
    assert state["irq"] == 1 and not state["control"] & DMACR_RS and state["bursts"] == 0
    assert all(status & DMASR_IOC_IRQ and not status & (DMASR_ERR_IRQ | DMASR_INT_ERR) for status in state["next"]), \
        [hex(status) for status in state["next"]]
    assert memory.memory[0x6000:0x6100] == memory.memory[0x4000:0x4100]


def test_a_length_written_while_a_transfer_runs_is_flagged_and_the_transfer_ends_right():
    bench = Bench()
    dma = bench.dma
    memory = AXIMemory(bench.bus, random.Random(17), 0.5)
    beats, state = [], {}

    def control():
        yield from write_register(dma, "MM2S_DMACR", DMACR_RS | DMACR_IOC_IRQ_EN | DMACR_ERR_IRQ_EN)
        yield from write_register(dma, "MM2S_SA", 0x1000)
        yield from write_register(dma, "MM2S_LENGTH", 2048)
        yield from write_register(dma, "MM2S_LENGTH", 64)        # While the first runs.
        state["status"] = yield from wait_status(dma, "MM2S_DMASR", DMASR_IOC_IRQ | DMASR_ERR_IRQ)

    run_simulation(bench, [memory.run(), control(), receive(dma.mm2s, random.Random(2), 0.5, beats)])
    assert state["status"] & DMASR_INT_ERR and state["status"] & DMASR_ERR_IRQ and state["status"] & DMASR_HALTED
    assert not state["status"] & DMASR_IOC_IRQ
    assert stream_bytes(beats) == bytes(memory.memory[0x1000:0x1800])     # The running transfer, whole.


@pytest.mark.parametrize("kwargs, message", [
    ({"burst_beats": 32}, "burst_beats must be a power of two from 1 to 16"),
    ({"burst_beats": 12}, "burst_beats must be a power of two"),
    ({"max_bursts": 0}, "max_bursts (bursts in flight each way) must be 1 to 64"),
    ({"fifo_beats": 8}, "fifo_beats must hold at least one burst (16 beats)"),
])
def test_bad_parameters_are_refused(kwargs, message):
    bus = AXIInterface(data_width=64, address_width=32, id_width=6, version="axi3")
    with pytest.raises(ValueError, match=re.escape(message)):
        AXIDMA(bus, **kwargs)
