# This file is part of hostlink.
# Copyright (c) 2026 hostlink developers
# SPDX-License-Identifier: BSD-2-Clause

"""The AXI DMA in scatter-gather mode (`AXIDMA(bus, sg=True)`: cores/zynq/axi_dma_sg.py) in migen's
simulator, against the AXI3 memory model of test_zynq_axi_dma.py, with descriptors in that memory as Linux's
xilinx_dma lays them out (a ring, 0x40 apart): chains of 1 to 3 descriptors, packets across descriptors both
ways, lengths from 1 byte to 5,000 on and off 4 KiB boundaries, idle cycles and back-pressure on the streams
and a slow memory; every STATUS word written back (bytes, Cmplt, RXSOF/RXEOF), every byte of memory compared
with what it must hold (nothing written elsewhere); IRQThreshold and IRQDelay; every SG error bit and the data
errors, each halting the channel, and a clean chain after the reset.
"""

import random
import re

import pytest

from migen import *

from litex.soc.interconnect.axi import AXIInterface

from hostlink.cores.zynq.axi_dma import AXIDMA
from hostlink.protocol import (AXI_DMA_REGISTERS, AXI_DMA_SG_REGISTERS, AXI_DMA_DESCRIPTOR as DESC,
    AXI_DMA_DESCRIPTOR_ALIGN, DMACR_RS, DMACR_RESET, DMACR_IOC_IRQ_EN, DMACR_DLY_IRQ_EN, DMACR_ERR_IRQ_EN,
    DMASR_HALTED, DMASR_IDLE, DMASR_SG_INCLD, DMASR_INT_ERR, DMASR_SLV_ERR, DMASR_DEC_ERR, DMASR_SG_INT_ERR,
    DMASR_SG_SLV_ERR, DMASR_SG_DEC_ERR, DMASR_IOC_IRQ, DMASR_DLY_IRQ, DMASR_ERR_IRQ, DESC_CONTROL_TXSOF,
    DESC_CONTROL_TXEOF, DESC_STATUS_RXSOF, DESC_STATUS_RXEOF, DESC_STATUS_INT_ERR, DESC_STATUS_SLV_ERR,
    DESC_STATUS_DEC_ERR, DESC_STATUS_CMPLT)

from benches.migen_streams import IDLE_X_BACKPRESSURE, MAX_CYCLES, stuck
from test_zynq_axi_dma import Bench as DirectBench, AXIMemory, BEAT, MEMORY_BYTES, send, stream_bytes

REGISTERS = {**AXI_DMA_REGISTERS, **AXI_DMA_SG_REGISTERS}
RESOLUTION = 4                     # Cycles per IRQDelay count in these benches (the DMA's default: 125).
DESCRIPTORS = 0xc000               # Where each bench's descriptors lie, 0x40 apart.
RUN = DMACR_RS | DMACR_IOC_IRQ_EN | DMACR_DLY_IRQ_EN | DMACR_ERR_IRQ_EN
SG_HALTED = 0x00010000 | DMASR_SG_INCLD | DMASR_HALTED   # DMASR after a reset: IRQThresholdSts 1.


def Bench(loopback=False):
    """The direct-mode tests' bench, its DMA built in scatter-gather mode."""
    return DirectBench(loopback, sg=True, delay_resolution=RESOLUTION)


def write_register(dma, name, value):
    yield from dma.ctrl.write(REGISTERS[name], value)


def read_register(dma, name):
    value, _ = yield from dma.ctrl.read(REGISTERS[name])
    return value


def word(memory, address, value=None):
    """The 32-bit word at `address` of the memory model; sets it when `value` is given."""
    if value is not None:
        memory.memory[address:address + 4] = value.to_bytes(4, "little")
    return int.from_bytes(memory.memory[address:address + 4], "little")


def put_chain(memory, entries, first=DESCRIPTORS, status=0):
    """Descriptors for `entries` [(buffer, CONTROL)] from `first`, each 0x40 on, NXTDESC linking them into a
    ring (as Linux's xilinx_dma does); returns their addresses."""
    addresses = [first + i*AXI_DMA_DESCRIPTOR_ALIGN for i in range(len(entries))]
    for i, (address, (buffer, control)) in enumerate(zip(addresses, entries)):
        memory.memory[address:address + AXI_DMA_DESCRIPTOR_ALIGN] = bytes(AXI_DMA_DESCRIPTOR_ALIGN)
        word(memory, address + DESC["NXTDESC"], addresses[(i + 1) % len(addresses)])
        word(memory, address + DESC["BUFFER_ADDRESS"], buffer)
        word(memory, address + DESC["CONTROL"], control)
        word(memory, address + DESC["STATUS"], status)
    return addresses


def mm2s_entries(packets):
    """[[(buffer, length), ...] per packet] -> [(buffer, CONTROL)], TXSOF on each packet's first, TXEOF on
    its last."""
    return [(buffer, length | (DESC_CONTROL_TXSOF if i == 0 else 0) | (DESC_CONTROL_TXEOF if i == len(p) - 1 else 0))
            for p in packets for i, (buffer, length) in enumerate(p)]


def start_chain(dma, channel, first, tail, control=RUN, threshold=1, delay=0):
    """As xilinx_dma starts a chain: CURDESC while halted, DMACR (RS, the interrupts, IRQThreshold and
    IRQDelay), then TAILDESC."""
    yield from write_register(dma, f"{channel}_CURDESC", first)
    yield from write_register(dma, f"{channel}_DMACR", control | threshold << 16 | delay << 24)
    yield from write_register(dma, f"{channel}_TAILDESC", tail)


def wait_status(dma, channel, bits):
    for _ in range(MAX_CYCLES):
        status = yield from read_register(dma, f"{channel}_DMASR")
        if status & bits:
            return status
        for _ in range(8):
            yield
    raise stuck(f"{channel}_DMASR & 0x{bits:x}")


def reset_dma(dma):
    yield from write_register(dma, "MM2S_DMACR", DMACR_RESET)
    for _ in range(MAX_CYCLES):
        if not (yield from read_register(dma, "MM2S_DMACR")) & DMACR_RESET:
            return
    raise stuck("the reset")


@passive
def receive_packets(endpoint, rng, ready_probability, out):
    """Every beat of the stream as (data, keep, last), ready with `ready_probability`, for as long as the
    simulation runs."""
    while True:
        ready = rng.random() < ready_probability
        yield endpoint.ready.eq(ready)
        yield
        if ready and (yield endpoint.valid):
            out.append(((yield endpoint.data), (yield endpoint.keep), (yield endpoint.last)))


def packets_of(beats):
    """The stream's bytes cut at each `last`; what follows the last `last` as a final, open packet."""
    packets, current = [], []
    for beat in beats:
        current.append(beat)
        if beat[2]:
            packets.append(stream_bytes(current))
            current = []
    return packets, stream_bytes(current)


# Registers --------------------------------------------------------------------------------------------

def test_sg_registers_reset_and_read_back_as_pg021_says():
    """DMASR reads SGIncld (what xilinx_dma's probe reads to choose SG), Halted and IRQThresholdSts 1;
    CURDESC / TAILDESC read back with their low 6 bits 0 (16-word aligned descriptors), their MSBs as
    written; SA/DA and LENGTH are reserved (read 0); a TAILDESC written while halted starts nothing."""
    bench = Bench()
    dma = bench.dma
    memory = AXIMemory(bench.bus, random.Random(1))
    state = {}

    def control():
        state["reset"] = {}
        for name in REGISTERS:
            state["reset"][name] = yield from read_register(dma, name)
        for name in AXI_DMA_SG_REGISTERS:
            yield from write_register(dma, name, 0x1234_567f)
        for name in ("MM2S_SA", "MM2S_LENGTH", "S2MM_DA", "S2MM_LENGTH"):
            yield from write_register(dma, name, 0x40)
        for _ in range(100):
            yield
        state["after"] = {}
        for name in REGISTERS:
            state["after"][name] = yield from read_register(dma, name)

    run_simulation(bench, [memory.run(), control()])
    for name, value in state["reset"].items():
        expected = {"DMACR": 0x00010002, "DMASR": SG_HALTED}.get(name.split("_", 1)[1], 0)
        assert value == expected, (name, hex(value))
    for channel in ("MM2S", "S2MM"):
        after = {name.split("_", 1)[1]: value for name, value in state["after"].items() if name.startswith(channel)}
        assert after["CURDESC"] == after["TAILDESC"] == 0x1234_5640, hex(after["CURDESC"])
        assert after["CURDESC_MSB"] == after["TAILDESC_MSB"] == 0x1234_567f
        assert after["SA" if channel == "MM2S" else "DA"] == after["LENGTH"] == 0
        assert after["DMASR"] == SG_HALTED, hex(after["DMASR"])
    assert memory.bursts == []


# Data: MM2S, S2MM, loopback ---------------------------------------------------------------------------

MM2S_CASES = [
    [[(0x1000, 1)]],                                        # One byte, one descriptor.
    [[(0x1000, 100), (0x2008, 28)], [(0x3000, 8)]],         # A packet of two descriptors (the first ends
                                                            # inside a beat), then one of one.
    [[(0x0ff8, 5000)], [(0x4000, 4096), (0x6000, 13)]],     # Across 4 KiB; a page and an odd tail.
]


@pytest.mark.parametrize("packets", MM2S_CASES, ids=["1B", "2+1", "5000+4109"])
@pytest.mark.parametrize("stream_probability, memory_probability", IDLE_X_BACKPRESSURE)
def test_mm2s_chain_sends_each_packet_from_txsof_to_txeof(packets, stream_probability, memory_probability):
    bench = Bench()
    dma = bench.dma
    memory = AXIMemory(bench.bus, random.Random(len(packets)), memory_probability)
    entries = mm2s_entries(packets)
    addresses = put_chain(memory, entries)
    expected = [b"".join(bytes(memory.memory[b:b + n]) for b, n in p) for p in packets]
    beats, state = [], {}

    def control():
        yield from start_chain(dma, "MM2S", addresses[0], addresses[-1], threshold=len(packets))
        state["status"] = yield from wait_status(dma, "MM2S", DMASR_IOC_IRQ | DMASR_ERR_IRQ)
        state["irq"] = yield dma.mm2s_irq
        state["curdesc"] = yield from read_register(dma, "MM2S_CURDESC")

    run_simulation(bench, [memory.run(), control(), receive_packets(dma.mm2s, random.Random(2), stream_probability, beats)])
    assert packets_of(beats) == (expected, b"")
    # One IOC_Irq for the chain (IRQThreshold: its packets), Idle at the tail, the counter reloaded.
    assert state["status"] == (len(packets) << 16) | DMASR_IOC_IRQ | DMASR_SG_INCLD | DMASR_IDLE, hex(state["status"])
    assert state["irq"] == 1 and state["curdesc"] == addresses[-1]
    for address, (_, control) in zip(addresses, entries):
        assert word(memory, address + DESC["STATUS"]) == DESC_STATUS_CMPLT | (control & 0x3ff_ffff)
    assert not any(kind == "write" and not DESCRIPTORS <= address < DESCRIPTORS + 0x1000
                   for kind, address, _ in memory.bursts)


def s2mm_model(buffers, packets):
    """Where each packet's bytes land and each descriptor's STATUS, as PG021's S2MM fills a chain: a packet
    fills buffers in turn, RXSOF on its first, RXEOF on the one its `last` lands in."""
    placed, statuses, i = [], [], 0
    for packet in packets:
        done = 0
        while True:
            buffer, size = buffers[i]
            n = min(size, len(packet) - done)
            placed.append((buffer, packet[done:done + n]))
            eof = done + n == len(packet)
            statuses.append(DESC_STATUS_CMPLT | n | (DESC_STATUS_RXSOF if done == 0 else 0) |
                            (DESC_STATUS_RXEOF if eof else 0))
            done += n
            i += 1
            if eof:
                break
    return placed, statuses


S2MM_CASES = [
    ([(0x1000, 4096)], [1]),                                 # One byte in a page: a short packet.
    ([(0x1000, 64), (0x2000, 64), (0x3000, 256)], [100, 200]),   # 64 + 36; 200 of 256.
    ([(0x0ff8, 4104), (0x4000, 1024), (0x5000, 64)], [5000, 8]),  # Across 4 KiB: 4,104 + 896; 8 of 64.
]


@pytest.mark.parametrize("buffers, lengths", S2MM_CASES, ids=["1B", "100+200", "5000+8"])
@pytest.mark.parametrize("stream_probability, memory_probability", IDLE_X_BACKPRESSURE)
def test_s2mm_chain_writes_each_packet_and_each_status(buffers, lengths, stream_probability, memory_probability):
    bench = Bench()
    dma = bench.dma
    memory = AXIMemory(bench.bus, random.Random(len(lengths)), memory_probability)
    addresses = put_chain(memory, [(buffer, size) for buffer, size in buffers])
    rng = random.Random(7)
    packets = [rng.randbytes(n) for n in lengths]
    placed, statuses = s2mm_model(buffers, packets)
    expected = bytearray(memory.memory)
    for buffer, data in placed:
        expected[buffer:buffer + len(data)] = data
    for address, status in zip(addresses, statuses):
        expected[address + DESC["STATUS"]:address + DESC["STATUS"] + 4] = status.to_bytes(4, "little")
    state = {}

    def control():
        yield from start_chain(dma, "S2MM", addresses[0], addresses[-1], threshold=len(packets))
        state["status"] = yield from wait_status(dma, "S2MM", DMASR_IOC_IRQ | DMASR_ERR_IRQ)

    def stream():
        for packet in packets:
            yield from send(dma.s2mm, packet, random.Random(3), stream_probability)

    run_simulation(bench, [memory.run(), control(), stream()])
    assert state["status"] == (len(packets) << 16) | DMASR_IOC_IRQ | DMASR_SG_INCLD | DMASR_IDLE, hex(state["status"])
    assert [word(memory, a + DESC["STATUS"]) for a in addresses] == statuses
    assert memory.memory == expected    # Every byte where it belongs, nothing anywhere else.


def test_loopback_chains_both_ways_with_a_short_packet():
    """As xilinx_dma's client queues them: S2MM's chain of three buffers and MM2S's of two packets, the
    second shorter than the buffer it lands in (its STATUS gives its length: what Linux's residue reads)."""
    bench = Bench(loopback=True)
    dma = bench.dma
    memory = AXIMemory(bench.bus, random.Random(5), 0.8)
    sent = [[(0x1000, 3000)], [(0x3000, 64)]]
    rx = [(0x5000, 2048), (0x6000, 2048), (0x7000, 512)]
    tx_at = put_chain(memory, mm2s_entries(sent), first=DESCRIPTORS)
    rx_at = put_chain(memory, rx, first=DESCRIPTORS + 0x400)
    data = [bytes(memory.memory[b:b + n]) for p in sent for b, n in p]
    state = {}

    def control():
        yield from start_chain(dma, "S2MM", rx_at[0], rx_at[-1], threshold=2)
        yield from start_chain(dma, "MM2S", tx_at[0], tx_at[-1], threshold=2)
        for channel in ("MM2S", "S2MM"):
            state[channel] = yield from wait_status(dma, channel, DMASR_IOC_IRQ | DMASR_ERR_IRQ)

    run_simulation(bench, [memory.run(), control()])
    assert [word(memory, a + DESC["STATUS"]) for a in rx_at] == [
        DESC_STATUS_CMPLT | DESC_STATUS_RXSOF | 2048, DESC_STATUS_CMPLT | DESC_STATUS_RXEOF | 952,
        DESC_STATUS_CMPLT | DESC_STATUS_RXSOF | DESC_STATUS_RXEOF | 64]
    assert bytes(memory.memory[0x5000:0x5000 + 2048] + memory.memory[0x6000:0x6000 + 952]) == data[0]
    assert bytes(memory.memory[0x7000:0x7000 + 64]) == data[1]
    assert state["MM2S"] & state["S2MM"] & DMASR_IOC_IRQ and not (state["MM2S"] | state["S2MM"]) & DMASR_ERR_IRQ


# Interrupts -------------------------------------------------------------------------------------------

@pytest.mark.parametrize("delay", [0, 30, 3])
def test_irq_threshold_counts_packets_and_the_delay_timer_ends_the_rest(delay):
    """IRQThreshold 2 over three one-descriptor packets: IOC_Irq at the second, IRQThresholdSts then back at
    2; the third counts it to 1. Without IRQDelay nothing more; with IRQDelay 30, Dly_Irq rises 30 x
    RESOLUTION cycles after the third packet's completion and the counter reloads. With IRQDelay 3, shorter
    than the time between two packets, the timer ends each packet alone: Dly_Irq, never IOC_Irq."""
    bench = Bench()
    dma = bench.dma
    memory = AXIMemory(bench.bus, random.Random(9))
    addresses = put_chain(memory, mm2s_entries([[(0x1000 + 0x100*i, 64)] for i in range(3)]))
    beats, state, events = [], {}, {}

    def control():
        yield from start_chain(dma, "MM2S", addresses[0], addresses[-1], threshold=2, delay=delay)
        yield from wait_status(dma, "MM2S", DMASR_IDLE)
        for _ in range(delay*RESOLUTION + 50):
            yield
        state["status"] = yield from read_register(dma, "MM2S_DMASR")

    @passive
    def watch():
        cycle = 0
        while True:
            for name, signal in [("idle", dma.rd.idle), ("ioc", dma.rd.ioc_irq), ("dly", dma.rd.dly_irq)]:
                if name not in events and (yield signal):
                    events[name] = cycle
            yield
            cycle += 1

    run_simulation(bench, [memory.run(), control(), watch(), receive_packets(dma.mm2s, random.Random(2), 1.0, beats)])
    assert len(packets_of(beats)[0]) == 3
    if delay == 3:
        assert state["status"] == (2 << 16) | DMASR_DLY_IRQ | DMASR_SG_INCLD | DMASR_IDLE, hex(state["status"])
        assert "ioc" not in events
        return
    assert events["ioc"] < events["idle"]
    if delay:
        assert state["status"] == (2 << 16) | DMASR_DLY_IRQ | DMASR_IOC_IRQ | DMASR_SG_INCLD | DMASR_IDLE, hex(state["status"])
        assert events["dly"] - events["idle"] in range(delay*RESOLUTION - 1, delay*RESOLUTION + 2), events
    else:
        assert state["status"] == (1 << 16) | DMASR_IOC_IRQ | DMASR_SG_INCLD | DMASR_IDLE, hex(state["status"])
        assert "dly" not in events


# Errors -----------------------------------------------------------------------------------------------

GOOD = (0x1000, 64)
# case: (channel, memory model's arguments, the descriptor (buffer, CONTROL, STATUS before), CURDESC (None:
# the chain's), DMASR error bits, the descriptor's STATUS afterwards (None: untouched)).
ERRORS = {
    "descriptor outside memory": ("MM2S", {"decode_errors": True}, None, MEMORY_BYTES + 0x1000,
                                  DMASR_SG_DEC_ERR, None),
    "SLVERR on a descriptor fetch": ("MM2S", {"read_error_at": DESCRIPTORS}, (0x1000, 64 | DESC_CONTROL_TXSOF |
                                     DESC_CONTROL_TXEOF, 0), None, DMASR_SG_SLV_ERR, 0),
    "SLVERR on a status write-back": ("S2MM", {"write_error_at": DESCRIPTORS + DESC["STATUS"]}, (0x1000, 64, 0),
                                      None, DMASR_SG_SLV_ERR, None),
    "a descriptor already complete": ("MM2S", {}, (0x1000, 64 | DESC_CONTROL_TXSOF | DESC_CONTROL_TXEOF,
                                      DESC_STATUS_CMPLT | 64), None, DMASR_SG_INT_ERR, DESC_STATUS_CMPLT | 64),
    "a length of 0": ("S2MM", {}, (0x1000, 0, 0), None, DMASR_INT_ERR, 0),
    "a buffer not aligned to the bus": ("MM2S", {}, (0x1004, 64 | DESC_CONTROL_TXEOF, 0), None, DMASR_INT_ERR, 0),
    "SLVERR on a data read": ("MM2S", {"read_error_at": 0x1000}, (0x1000, 64 | DESC_CONTROL_TXSOF |
                              DESC_CONTROL_TXEOF, 0), None, DMASR_SLV_ERR, DESC_STATUS_CMPLT | DESC_STATUS_SLV_ERR | 64),
    "DECERR on a data read": ("MM2S", {"decode_errors": True}, (MEMORY_BYTES - 32, 64 | DESC_CONTROL_TXEOF, 0),
                              None, DMASR_DEC_ERR, DESC_STATUS_CMPLT | DESC_STATUS_DEC_ERR | 64),
    "SLVERR on a data write": ("S2MM", {"write_error_at": 0x1000}, (0x1000, 64, 0), None, DMASR_SLV_ERR,
                               DESC_STATUS_CMPLT | DESC_STATUS_SLV_ERR | DESC_STATUS_RXSOF | DESC_STATUS_RXEOF | 64),
}


@pytest.mark.parametrize("case", ERRORS)
def test_each_error_sets_its_bit_halts_and_a_reset_recovers(case):
    """Each error bit as PG021 gives it (DMASR: the bit, Err_Irq, Halted, RS cleared), the descriptor's
    STATUS as written back (or left), then a reset and a clean 64-byte chain on the same channel."""
    channel, memory_args, descriptor, curdesc, bits, after = ERRORS[case]
    bench = Bench(loopback=False)
    dma = bench.dma
    memory = AXIMemory(bench.bus, random.Random(11), **memory_args)
    if descriptor is not None:
        buffer, control, status = descriptor
        put_chain(memory, [(buffer, control)], status=status)
    first = DESCRIPTORS if curdesc is None else curdesc
    clean_at = DESCRIPTORS + 0x800
    beats, state = [], {}

    def control():
        yield from start_chain(dma, channel, first, first)
        state["status"] = yield from wait_status(dma, channel, DMASR_ERR_IRQ | DMASR_IOC_IRQ)
        for _ in range(50):
            yield
        state["halted"] = yield from read_register(dma, f"{channel}_DMASR")
        state["control"] = yield from read_register(dma, f"{channel}_DMACR")
        state["curdesc"] = yield from read_register(dma, f"{channel}_CURDESC")
        yield from reset_dma(dma)
        state["reset"] = yield from read_register(dma, f"{channel}_DMASR")
        put_chain(memory, [(GOOD[0] + 0x2000, GOOD[1] | DESC_CONTROL_TXSOF | DESC_CONTROL_TXEOF)], first=clean_at)
        yield from start_chain(dma, channel, clean_at, clean_at)
        state["clean"] = yield from wait_status(dma, channel, DMASR_ERR_IRQ | DMASR_IOC_IRQ)

    packet = random.Random(4).randbytes(64)

    @passive
    def offer():   # The same packet again and again: the clean chain takes the one after the failed one's.
        while True:
            yield from send(dma.s2mm, packet, random.Random(3), 1.0)

    generators = [memory.run(), control(),
                  receive_packets(dma.mm2s, random.Random(2), 1.0, beats) if channel == "MM2S" else offer()]
    run_simulation(bench, generators)
    assert state["status"] == bits | DMASR_ERR_IRQ | DMASR_SG_INCLD | 0x00010000 | DMASR_HALTED, (case, hex(state["status"]))
    assert state["halted"] == state["status"] and not state["control"] & DMACR_RS
    assert state["curdesc"] == first
    if after is not None:
        assert word(memory, DESCRIPTORS + DESC["STATUS"]) == after, hex(word(memory, DESCRIPTORS + DESC["STATUS"]))
    assert state["reset"] == SG_HALTED, hex(state["reset"])
    assert state["clean"] == 0x00010000 | DMASR_IOC_IRQ | DMASR_SG_INCLD | DMASR_IDLE, hex(state["clean"])
    assert word(memory, clean_at + DESC["STATUS"]) & ~(DESC_STATUS_RXSOF | DESC_STATUS_RXEOF) == DESC_STATUS_CMPLT | 64
    if channel == "MM2S":
        assert packets_of(beats)[0][-1] == bytes(memory.memory[0x3000:0x3040])
    else:
        assert bytes(memory.memory[0x3000:0x3040]) == packet


def test_a_chain_without_eof_leaves_the_packet_open_until_its_eof():
    """PG021 names no error for a tail descriptor without EOF: the engine goes Idle at it with the packet
    open (MM2S: no `last`, no IOC_Irq); the next TAILDESC goes on with the same packet up to its TXEOF."""
    bench = Bench()
    dma = bench.dma
    memory = AXIMemory(bench.bus, random.Random(12))
    addresses = put_chain(memory, [(0x1000, 64 | DESC_CONTROL_TXSOF), (0x2000, 20 | DESC_CONTROL_TXEOF)])
    beats, state = [], {}

    def control():
        yield from start_chain(dma, "MM2S", addresses[0], addresses[0])
        state["first"] = yield from wait_status(dma, "MM2S", DMASR_IDLE)
        for _ in range(100):
            yield
        state["beats"] = len(beats)
        state["open"] = packets_of(beats)
        yield from write_register(dma, "MM2S_TAILDESC", addresses[1])
        state["second"] = yield from wait_status(dma, "MM2S", DMASR_IOC_IRQ | DMASR_ERR_IRQ)

    run_simulation(bench, [memory.run(), control(), receive_packets(dma.mm2s, random.Random(2), 1.0, beats)])
    assert state["first"] == 0x00010000 | DMASR_SG_INCLD | DMASR_IDLE, hex(state["first"])
    assert state["open"] == ([], bytes(memory.memory[0x1000:0x1040]))
    assert packets_of(beats) == ([bytes(memory.memory[0x1000:0x1040] + memory.memory[0x2000:0x2014])], b"")
    assert state["second"] & DMASR_IOC_IRQ and not state["second"] & DMASR_ERR_IRQ


def test_an_s2mm_packet_longer_than_its_chain_waits_for_the_next_descriptor():
    """A packet longer than the chain's buffers: the buffer filled, its STATUS RXSOF without RXEOF, Idle, the
    stream held (no error: PG021's S2MM waits for descriptors); a new TAILDESC takes the rest, RXEOF."""
    bench = Bench()
    dma = bench.dma
    memory = AXIMemory(bench.bus, random.Random(13))
    addresses = put_chain(memory, [(0x1000, 64), (0x2000, 64)])
    packet = random.Random(14).randbytes(100)
    state = {}

    def control():
        yield from start_chain(dma, "S2MM", addresses[0], addresses[0])
        state["first"] = yield from wait_status(dma, "S2MM", DMASR_IDLE)
        state["first_status"] = word(memory, addresses[0] + DESC["STATUS"])
        yield from write_register(dma, "S2MM_TAILDESC", addresses[1])
        state["second"] = yield from wait_status(dma, "S2MM", DMASR_IOC_IRQ | DMASR_ERR_IRQ)

    run_simulation(bench, [memory.run(), control(), send(dma.s2mm, packet, random.Random(3), 1.0)])
    assert state["first"] == 0x00010000 | DMASR_SG_INCLD | DMASR_IDLE, hex(state["first"])
    assert state["first_status"] == DESC_STATUS_CMPLT | DESC_STATUS_RXSOF | 64
    assert word(memory, addresses[1] + DESC["STATUS"]) == DESC_STATUS_CMPLT | DESC_STATUS_RXEOF | 36
    assert bytes(memory.memory[0x1000:0x1040] + memory.memory[0x2000:0x2024]) == packet


def test_run_stop_cleared_mid_chain_halts_after_the_running_descriptor():
    """RS cleared while a chain runs (xilinx_dma's stop): the running descriptor completes and is written back,
    the next is not fetched; Halted, not Idle; CURDESC names the last one done."""
    bench = Bench()
    dma = bench.dma
    memory = AXIMemory(bench.bus, random.Random(15))
    addresses = put_chain(memory, mm2s_entries([[(0x1000, 2048)], [(0x2000, 64)]]))
    beats, state = [], {}

    def control():
        yield from start_chain(dma, "MM2S", addresses[0], addresses[1])
        for _ in range(30):
            yield
        yield from write_register(dma, "MM2S_DMACR", 0)
        state["status"] = yield from wait_status(dma, "MM2S", DMASR_HALTED)
        state["curdesc"] = yield from read_register(dma, "MM2S_CURDESC")

    run_simulation(bench, [memory.run(), control(), receive_packets(dma.mm2s, random.Random(2), 1.0, beats)])
    assert state["status"] & ~DMASR_IOC_IRQ == 0x00010000 | DMASR_SG_INCLD | DMASR_HALTED, hex(state["status"])
    assert state["curdesc"] == addresses[0]
    assert word(memory, addresses[0] + DESC["STATUS"]) == DESC_STATUS_CMPLT | 2048
    assert word(memory, addresses[1] + DESC["STATUS"]) == 0


@pytest.mark.parametrize("kwargs, message", [
    ({"sg": 1}, "sg (scatter-gather mode, PG021's C_INCLUDE_SG) must be True or False, not 1"),
    ({"sg": True, "delay_resolution": 0}, "delay_resolution (cycles per IRQDelay count) must be 1 to 65536, not 0"),
])
def test_bad_sg_parameters_are_refused(kwargs, message):
    bus = AXIInterface(data_width=64, address_width=32, id_width=6, version="axi3")
    with pytest.raises(ValueError, match=re.escape(message)):
        AXIDMA(bus, **kwargs)
