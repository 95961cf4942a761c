# This file is part of hostlink.
# Copyright (c) 2026 hostlink developers
# SPDX-License-Identifier: BSD-2-Clause

"""The PG021-compatible AXI DMA (cores/zynq/axi_dma.py) in migen's simulator, against an AXI3 memory model
that checks the protocol: every byte of MM2S, S2MM and a loopback checked, for lengths from 1 byte to
several pages at addresses on and off 4 KiB boundaries, with idle cycles and back-pressure on the streams
and a slow memory; bursts never cross 4 KiB nor exceed 16 beats, several are in flight; every register's
every field against PG021's tables (reset value, access), Halted and Idle, a LENGTH of 0 and LENGTH written
while halted as PG021 says; the interrupts, errors (SLVERR, a packet longer than its buffer) and the soft
reset as Linux's xilinx_dma expects them.
"""

import random
import re

import pytest

from migen import *

from litex.gen import LiteXModule
from litex.soc.interconnect.axi import AXIInterface

from hostlink.cores.zynq.axi_dma import AXIDMA
from hostlink.protocol import (AXI_DMA_REGISTERS as REGISTERS, DMACR_RS, DMACR_RESET, DMACR_IOC_IRQ_EN,
    DMACR_ERR_IRQ_EN, DMASR_HALTED, DMASR_IDLE, DMASR_INT_ERR, DMASR_SLV_ERR, DMASR_IOC_IRQ, DMASR_ERR_IRQ,
    AXI_DMA_LENGTH_BITS)

from benches.migen_streams import IDLE_X_BACKPRESSURE, MAX_CYCLES, stuck

BEAT = 8
MEMORY_BYTES = 1 << 16


class AXIMemory:
    """A 64-bit AXI3 slave over `MEMORY_BYTES` of memory, answering each burst `latency` cycles after its
    request, ready with probability `ready_probability` on every channel. Checks what a Zynq HP port
    requires (INCR bursts of at most 16 beats of 8 bytes within a 4 KiB page, WLAST on each burst's last
    beat, W only after its AW) and keeps the most bursts seen in flight. `error_at`: a read or write
    burst that touches this address is answered SLVERR (`read_error_at`, `write_error_at`: reads or writes
    only). With `decode_errors`, a burst outside the memory is answered DECERR (reads give 0, writes are
    dropped), as the PS answers an address it does not decode; without, it fails the test."""

    def __init__(self, bus, rng, ready_probability=1.0, latency=12, error_at=None, read_error_at=None,
                 write_error_at=None, decode_errors=False):
        self.bus, self.rng, self.p, self.latency, self.error_at = bus, rng, ready_probability, latency, error_at
        self.read_error_at, self.write_error_at, self.decode_errors = read_error_at, write_error_at, decode_errors
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
        assert self.decode_errors or address + beats*BEAT <= MEMORY_BYTES, f"{kind} at 0x{address:x}: outside memory"
        self.bursts.append((kind, address, beats))

    def _response(self, kind, address, beats):
        """OKAY (0), SLVERR (0b10) or DECERR (0b11) for a burst."""
        if address + beats*BEAT > MEMORY_BYTES:
            return 0b11
        at = [self.error_at, self.read_error_at if kind == "read" else self.write_error_at]
        return 0b10 if any(a is not None and address <= a < address + beats*BEAT for a in at) else 0

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
                yield bus.r.data.eq(int.from_bytes(self.memory[address:address + BEAT].ljust(BEAT, b"\0"), "little"))
                yield bus.r.last.eq(read[3] == read[2] - 1)
                yield bus.r.resp.eq(self._response("read", read[1], read[2]))
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
                self.writes.append([address, beats, 0, self._response("write", address, beats)])
            if w_ready and (yield bus.w.valid):
                assert self.writes and self.writes[-1][2] < self.writes[-1][1] or \
                    any(w[2] < w[1] for w in self.writes), "write data without its burst's address"
                write = next(w for w in self.writes if w[2] < w[1])
                address = write[0] + write[2]*BEAT
                data, strb = (yield bus.w.data), (yield bus.w.strb)
                for i in range(BEAT):
                    if strb >> i & 1 and address + i < MEMORY_BYTES:
                        self.memory[address + i] = data >> (8*i) & 0xff
                write[2] += 1
                assert (yield bus.w.last) == (write[2] == write[1]), f"WLAST wrong on beat {write[2]} of {write[1]}"
                if write[2] == write[1]:
                    self.responses.append([cycle + self.latency, write[3]])
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


# PG021's register tables ----------------------------------------------------------------------------------

# AXI DMA v7.1 (PG021), direct register mode (C_INCLUDE_SG = 0), each register's table as the guide gives it,
# transcribed here rather than taken from hostlink.protocol so that the gateware is checked against the guide:
# (first bit, width, field, default, access). Access: "RW"; "RO" (writes ignored); "W1C" (R/WC: a 1 clears).
PG021 = {
    # docs.amd.com/r/en-US/pg021_axi_dma/MM2S_DMACR-MM2S-DMA-Control-Register-Offset-00h (S2MM_DMACR: same).
    "DMACR": [(0, 1, "RS", 0, "RW"), (1, 1, "Reserved", 1, "RO"), (2, 1, "Reset", 0, "RW"),
              (3, 1, "Keyhole", 0, "RW"), (4, 1, "Cyclic BD Enable", 0, "RW"), (5, 7, "Reserved", 0, "RO"),
              (12, 1, "IOC_IrqEn", 0, "RW"), (13, 1, "Dly_IrqEn", 0, "RW"), (14, 1, "Err_IrqEn", 0, "RW"),
              (15, 1, "Reserved", 0, "RO"), (16, 8, "IRQThreshold", 1, "RW"), (24, 8, "IRQDelay", 0, "RW")],
    # .../MM2S_DMASR-MM2S-DMA-Status-Register-Offset-04h and S2MM_DMASR (34h). SGIncld is C_INCLUDE_SG (0).
    "DMASR": [(0, 1, "Halted", 1, "RO"), (1, 1, "Idle", 0, "RO"), (2, 1, "Reserved", 0, "RO"),
              (3, 1, "SGIncld", 0, "RO"), (4, 1, "DMAIntErr", 0, "RO"), (5, 1, "DMASlvErr", 0, "RO"),
              (6, 1, "DMADecErr", 0, "RO"), (7, 1, "Reserved", 0, "RO"), (8, 1, "SGIntErr", 0, "RO"),
              (9, 1, "SGSlvErr", 0, "RO"), (10, 1, "SGDecErr", 0, "RO"), (11, 1, "Reserved", 0, "RO"),
              (12, 1, "IOC_Irq", 0, "W1C"), (13, 1, "Dly_Irq", 0, "W1C"), (14, 1, "Err_Irq", 0, "W1C"),
              (15, 1, "Reserved", 0, "RO"), (16, 8, "IRQThresholdSts", 1, "RO"), (24, 8, "IRQDelaySts", 0, "RO")],
    # .../MM2S_SA (18h), S2MM_DA (48h): the address, all 32 bits.
    "ADDRESS": [(0, 32, "Address", 0, "RW")],
    # .../MM2S_LENGTH (28h), S2MM_LENGTH (58h): a Length of "Buffer Length Register Width" bits (26 here).
    "LENGTH": [(0, 26, "Length", 0, "RW"), (26, 6, "Reserved", 0, "RO")],
    # SA_MSB / DA_MSB apply only with addresses over 32 bits; ours keeps what is written (hostlink.protocol).
    "ADDRESS_MSB": [(0, 32, "Address MSB (ours)", 0, "RW")],
}
# Where this DMA departs from the tables (cores/zynq/axi_dma.py says why): Keyhole reads 0, writes ignored.
OURS = {("DMACR", "Keyhole"): "RO"}
assert AXI_DMA_LENGTH_BITS == 26


def register_kind(name):
    """"MM2S_DMACR" -> "DMACR"; "MM2S_SA" / "S2MM_DA" -> "ADDRESS"."""
    kind = name.split("_", 1)[1]
    return {"SA": "ADDRESS", "DA": "ADDRESS", "SA_MSB": "ADDRESS_MSB", "DA_MSB": "ADDRESS_MSB"}.get(kind, kind)


def fields(name):
    """The register's fields: (mask, field, default, access), its table's, ours where OURS says."""
    kind = register_kind(name)
    table = PG021[kind]
    assert sum(width for _, width, _, _, _ in table) == 32 and \
        all(a[0] + a[1] == b[0] for a, b in zip(table, table[1:])), f"{kind}: the fields do not tile 32 bits"
    return [(((1 << width) - 1) << first, field, default << first, OURS.get((kind, field), access))
            for first, width, field, default, access in table]


def reset_value(name):
    return sum(default for _, _, default, _ in fields(name))


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
    for name, value in zip(REGISTERS, state["registers"]):
        assert value == reset_value(name), (name, hex(value))     # PG021: all registers in their reset state.


def reset_channel(dma, name):
    yield from write_register(dma, f"{name}_DMACR", DMACR_RESET)
    for _ in range(MAX_CYCLES):
        if not (yield from read_register(dma, f"{name}_DMACR")) & DMACR_RESET:
            return
    raise stuck("the reset")


@pytest.mark.parametrize("channel, address, length", [
    ("MM2S", 0x1004, 64),     # Not aligned to the 8-byte bus.
    ("S2MM", 0x2002, 64),
])
def test_a_transfer_the_dma_cannot_start_is_refused_and_the_next_is_clean(channel, address, length):
    """Err_Irq at once (ours: PG021 leaves an unaligned address without its Data Realignment Engine undefined),
    DMAIntErr on S2MM only (MM2S's is fixed at 0 in direct register mode), the channel halted, nothing on the
    bus; after a reset (what xilinx_dma's error path does), a good transfer is clean."""
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
    assert state["status"] & DMASR_ERR_IRQ and state["status"] & DMASR_HALTED
    assert bool(state["status"] & DMASR_INT_ERR) == (channel == "S2MM"), hex(state["status"])
    assert state["irq"] == 1 and not state["control"] & DMACR_RS and state["bursts"] == 0
    assert all(status & DMASR_IOC_IRQ and not status & (DMASR_ERR_IRQ | DMASR_INT_ERR) for status in state["next"]), \
        [hex(status) for status in state["next"]]
    assert memory.memory[0x6000:0x6100] == memory.memory[0x4000:0x4100]


def test_a_length_written_while_a_transfer_runs_is_flagged_and_the_transfer_ends_right():
    """Ours (PG021 does not say): the running transfer moves all its data, then ends with Err_Irq and halts;
    MM2S has no DMAIntErr to show in direct register mode."""
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
    assert state["status"] & DMASR_ERR_IRQ and state["status"] & DMASR_HALTED
    assert not state["status"] & (DMASR_IOC_IRQ | DMASR_INT_ERR)
    assert stream_bytes(beats) == bytes(memory.memory[0x1000:0x1800])     # The running transfer, whole.


# Registers against PG021 ---------------------------------------------------------------------------------

def read_all(dma):
    values = {}
    for name in REGISTERS:
        values[name] = yield from read_register(dma, name)
    return values


def test_every_field_resets_and_answers_writes_as_pg021_says():
    """Each register of both channels, field by field: the reset value; RO fields ignore a write of all ones
    and of all zeros; RW fields read back both (IRQThreshold keeps its value on a write of 0: PG021's minimum
    is 1); written with the channels halted, so nothing starts (PG021: LENGTH then has no effect)."""
    bench = Bench()
    dma = bench.dma
    memory = AXIMemory(bench.bus, random.Random(19))
    state = {}

    def control():
        state["reset"] = yield from read_all(dma)
        state["ones"], state["zeros"] = {}, {}
        for name in REGISTERS:
            kind = register_kind(name)
            # DMACR: not Reset (tested below) nor RS (the channel would run: test_halted_and_idle...).
            ones = 0xffffffff & ~(DMACR_RESET | DMACR_RS) if kind == "DMACR" else 0xffffffff
            yield from write_register(dma, name, ones)
            state["ones"][name] = yield from read_register(dma, name)
            yield from write_register(dma, name, 0)
            state["zeros"][name] = yield from read_register(dma, name)
        state["after"] = yield from read_all(dma)
        state["irq"] = (yield dma.mm2s_irq) | (yield dma.s2mm_irq)

    run_simulation(bench, [memory.run(), control()])
    checked = set()
    for name in REGISTERS:
        kind = register_kind(name)
        for mask, field, default, access in fields(name):
            where = f"{name}.{field}"
            assert state["reset"][name] & mask == default, (where, "reset", hex(state["reset"][name]))
            if kind == "DMACR" and field in ("RS", "Reset"):
                continue
            if access == "RW":
                assert state["ones"][name] & mask == mask, (where, hex(state["ones"][name]))
                kept = mask if field == "IRQThreshold" else 0
                assert state["zeros"][name] & mask == kept, (where, hex(state["zeros"][name]))
            else:   # RO, and W1C bits that nothing set: writes leave them as they were.
                assert state["ones"][name] & mask == default and state["zeros"][name] & mask == default, where
            checked.add((kind, mask))
    assert len(checked) == sum(len(table) for table in PG021.values()) - 2     # All but RS and Reset.
    # Nothing ran: no burst, both channels halted and not idle, no interrupt.
    assert memory.bursts == [] and state["irq"] == 0
    for name in ("MM2S_DMASR", "S2MM_DMASR"):
        assert state["after"][name] == reset_value(name), (name, hex(state["after"][name]))


@pytest.mark.parametrize("channel", ["MM2S", "S2MM"])
def test_halted_and_idle_follow_run_stop_and_each_transfer(channel):
    """PG021 in direct register mode: Halted 1 at reset and once RS is 0; Idle 0 while halted and before the
    first transfer, 0 while a transfer runs, 1 once it has completed; IOC_Irq is write-1-to-clear (a write of
    its other bits leaves it), Dly_Irq never set."""
    bench = Bench(loopback=True)
    dma = bench.dma
    memory = AXIMemory(bench.bus, random.Random(21), 0.5)
    other = "S2MM" if channel == "MM2S" else "MM2S"
    address = {"MM2S": ("MM2S_SA", 0x1000), "S2MM": ("S2MM_DA", 0x4000)}
    status = {}

    def control():
        status["reset"] = yield from read_register(dma, f"{channel}_DMASR")
        yield from write_register(dma, f"{channel}_DMACR", DMACR_RS)
        status["running"] = yield from read_register(dma, f"{channel}_DMASR")
        # The other channel takes or gives the data (the streams are looped).
        yield from write_register(dma, f"{other}_DMACR", DMACR_RS)
        for name in (channel, other):
            yield from write_register(dma, address[name][0], address[name][1])
        yield from write_register(dma, "S2MM_LENGTH", 2048)
        yield from write_register(dma, "MM2S_LENGTH", 2048)
        status["busy"] = yield from read_register(dma, f"{channel}_DMASR")
        status["done"] = yield from wait_status(dma, f"{channel}_DMASR", DMASR_IOC_IRQ | DMASR_ERR_IRQ)
        yield from write_register(dma, f"{channel}_DMASR", 0xffffffff & ~DMASR_IOC_IRQ)
        status["not cleared"] = yield from read_register(dma, f"{channel}_DMASR")
        yield from write_register(dma, f"{channel}_DMASR", DMASR_IOC_IRQ)
        status["cleared"] = yield from read_register(dma, f"{channel}_DMASR")
        yield from write_register(dma, f"{channel}_DMACR", 0)
        status["stopped"] = yield from read_register(dma, f"{channel}_DMASR")
        yield from wait_status(dma, f"{other}_DMASR", DMASR_IOC_IRQ | DMASR_ERR_IRQ)   # The data all moved.

    run_simulation(bench, [memory.run(), control()])
    idle_halted = {key: (bool(value & DMASR_IDLE), bool(value & DMASR_HALTED)) for key, value in status.items()}
    assert idle_halted == {"reset": (False, True), "running": (False, False), "busy": (False, False),
                           "done": (True, False), "not cleared": (True, False), "cleared": (True, False),
                           "stopped": (False, True)}, idle_halted
    assert status["done"] & DMASR_IOC_IRQ and status["not cleared"] & DMASR_IOC_IRQ
    assert not status["cleared"] & DMASR_IOC_IRQ
    assert all(value & 0xffff0000 == 0x00010000 for value in status.values())   # IRQThresholdSts 1, DelaySts 0.
    assert not any(value & (1 << 13) for value in status.values())              # Dly_Irq.
    assert memory.memory[0x4000:0x4800] == memory.memory[0x1000:0x1800]


@pytest.mark.parametrize("channel", ["MM2S", "S2MM"])
def test_a_length_of_0_starts_nothing_and_is_no_error(channel):
    """PG021: a non-zero LENGTH starts a transfer; 0 starts nothing, and the channel stays running, not idle,
    without an error or an interrupt; the next non-zero LENGTH starts a clean transfer."""
    bench = Bench(loopback=True)
    dma = bench.dma
    memory = AXIMemory(bench.bus, random.Random(23))
    other = "S2MM" if channel == "MM2S" else "MM2S"
    state = {}

    def control():
        for name in (channel, other):
            yield from write_register(dma, f"{name}_DMACR", DMACR_RS | DMACR_IOC_IRQ_EN | DMACR_ERR_IRQ_EN)
        yield from write_register(dma, "MM2S_SA", 0x1000)
        yield from write_register(dma, "S2MM_DA", 0x4000)
        yield from write_register(dma, f"{channel}_LENGTH", 0)
        for _ in range(200):
            yield
        state["status"] = yield from read_register(dma, f"{channel}_DMASR")
        state["length"] = yield from read_register(dma, f"{channel}_LENGTH")
        state["irq"] = (yield dma.mm2s_irq) | (yield dma.s2mm_irq)
        state["bursts"] = len(memory.bursts)
        yield from write_register(dma, "S2MM_LENGTH", 256)
        yield from write_register(dma, "MM2S_LENGTH", 256)
        state["next"] = []
        for name in ("MM2S", "S2MM"):
            state["next"].append((yield from wait_status(dma, f"{name}_DMASR", DMASR_IOC_IRQ | DMASR_ERR_IRQ)))

    run_simulation(bench, [memory.run(), control()])
    assert state["status"] == 0x00010000, hex(state["status"])        # Running, not idle, nothing flagged.
    assert state["length"] == 0 and state["irq"] == 0 and state["bursts"] == 0
    assert all(status & DMASR_IOC_IRQ and not status & 0x4070 for status in state["next"]), state["next"]
    assert memory.memory[0x4000:0x4100] == memory.memory[0x1000:0x1100]


def test_a_length_written_while_halted_has_no_effect_even_once_running():
    """PG021: halted, a LENGTH write has no effect on the DMA (it reads back); setting RS afterwards starts
    nothing either: a transfer starts only on a LENGTH written while running."""
    bench = Bench()
    dma = bench.dma
    memory = AXIMemory(bench.bus, random.Random(25))
    beats, state = [], {}

    def control():
        yield from write_register(dma, "MM2S_SA", 0x1000)
        yield from write_register(dma, "MM2S_LENGTH", 64)
        yield from write_register(dma, "MM2S_DMACR", DMACR_RS | DMACR_IOC_IRQ_EN)
        for _ in range(200):
            yield
        state["status"] = yield from read_register(dma, "MM2S_DMASR")
        state["length"] = yield from read_register(dma, "MM2S_LENGTH")
        state["bursts"] = len(memory.bursts)
        yield from write_register(dma, "MM2S_LENGTH", 64)
        state["done"] = yield from wait_status(dma, "MM2S_DMASR", DMASR_IOC_IRQ | DMASR_ERR_IRQ)

    run_simulation(bench, [memory.run(), control(), receive(dma.mm2s, random.Random(2), 1.0, beats)])
    assert state["status"] == 0x00010000 and state["length"] == 64 and state["bursts"] == 0, hex(state["status"])
    assert state["done"] & DMASR_IOC_IRQ and stream_bytes(beats) == bytes(memory.memory[0x1000:0x1040])


def test_the_threshold_and_delay_fields_keep_what_linux_writes():
    """xilinx_dma writes DMACR with IRQThreshold (its pending count), IRQDelay and all three interrupt enables,
    and reads it back to modify it: they read back (a threshold of 0 leaves it), and the transfer completes
    with IOC_Irq alone (no coalescing, no delay interrupt in direct register mode)."""
    bench = Bench()
    dma = bench.dma
    memory = AXIMemory(bench.bus, random.Random(27))
    beats, state = [], {}
    control_word = DMACR_RS | 0x7000 | (3 << 16) | (0x20 << 24)

    def control():
        yield from write_register(dma, "MM2S_DMACR", control_word)
        state["control"] = yield from read_register(dma, "MM2S_DMACR")
        yield from write_register(dma, "MM2S_DMACR", control_word & ~(0xff << 16))
        state["zero"] = yield from read_register(dma, "MM2S_DMACR")
        yield from write_register(dma, "MM2S_SA", 0x1000)
        yield from write_register(dma, "MM2S_LENGTH", 64)
        state["done"] = yield from wait_status(dma, "MM2S_DMASR", DMASR_IOC_IRQ | DMASR_ERR_IRQ)
        state["irq"] = yield dma.mm2s_irq

    run_simulation(bench, [memory.run(), control(), receive(dma.mm2s, random.Random(2), 1.0, beats)])
    assert state["control"] == control_word | 0b10 and state["zero"] == control_word | 0b10, hex(state["zero"])
    assert state["done"] == 0x00011002 and state["irq"] == 1, hex(state["done"])   # IOC_Irq, Idle; threshold 1.


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
