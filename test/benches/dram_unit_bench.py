# This file is part of hostlink.
# Copyright (c) 2026 hostlink developers
# SPDX-License-Identifier: BSD-2-Clause

"""cocotb tests of the DRAMDMAChannel unit top (dram_unit.py), run in Verilator by test_dram_cores.py.

Streams are driven at the falling edge and sampled after it settles (ReadOnly): a word moves at the
next rising edge when valid and ready were both high. Random idle cycles and back-pressure use fixed
seeds.
"""

import random

import cocotb
from cocotb.clock import Clock
from cocotb.triggers import FallingEdge, ReadOnly, RisingEdge

from benches.dram_unit import DATA_WIDTH, SYS_CLK_FREQ, DRAM_CLK_FREQ, DRAM_ROWS

WORD      = DATA_WIDTH // 8
NATIVE    = 64                     # Bytes per native word (512 bits).
BANK_ROW  = 8192                   # Bytes per bank row: 1024 columns x 64 bits.
ROW       = 8 * BANK_ROW           # ROW_BANK_COL: every 64 KiB the row changes.
SIZE      = DRAM_ROWS * ROW

# Bench --------------------------------------------------------------------------------------------

class UnitBench:
    def __init__(self, dut):
        self.dut = dut
        self.clk = dut.sys_clk

    async def start(self):
        dut = self.dut
        cocotb.start_soon(Clock(dut.sys_clk,  2 * round(0.5e12 / SYS_CLK_FREQ),  unit="ps").start())
        cocotb.start_soon(Clock(dut.dram_clk, 2 * round(0.5e12 / DRAM_CLK_FREQ), unit="ps").start())
        for name in ("stuck", "dram_mode", "from_dma_valid", "from_pattern_valid", "to_dma_ready",
                     "to_pattern_ready", "write_start", "write_abort", "read_start", "read_abort"):
            getattr(dut, name).value = 0
        dut.sys_rst.value  = 1
        dut.dram_rst.value = 1
        for _ in range(10):
            await RisingEdge(self.clk)
        dut.sys_rst.value  = 0
        dut.dram_rst.value = 0
        dut.dram_mode.value = 1
        for _ in range(200):   # The controller's first refresh and the crossings' resets.
            await RisingEdge(self.clk)

    async def cycles(self, n):
        for _ in range(n):
            await FallingEdge(self.clk)

    async def request(self, engine, base, length):
        """Program and start a window; returns True if it opened, False if refused (counter +1)."""
        dut = self.dut
        before = int(dut.refusals.value)
        await FallingEdge(self.clk)
        getattr(dut, f"{engine}_base").value   = base
        getattr(dut, f"{engine}_length").value = length
        getattr(dut, f"{engine}_start").value  = 1
        await FallingEdge(self.clk)
        getattr(dut, f"{engine}_start").value  = 0
        await FallingEdge(self.clk)
        refused = int(dut.refusals.value) - before
        assert refused in (0, 1)
        return refused == 0

    async def abort(self, engine):
        await FallingEdge(self.clk)
        getattr(self.dut, f"{engine}_abort").value = 1
        await FallingEdge(self.clk)
        getattr(self.dut, f"{engine}_abort").value = 0

    async def send(self, name, words, idle=0.0, rng=None, max_cycles=None):
        """Offer `words` on stream `name`; returns how many were taken (all unless max_cycles ran out)."""
        dut, sent, cycle = self.dut, 0, 0
        valid, ready, data = (getattr(dut, f"{name}_{f}") for f in ("valid", "ready", "data"))
        offering = False
        while sent < len(words) and (max_cycles is None or cycle < max_cycles):
            assert cycle < 200_000, f"{name}: {sent} of {len(words)} words taken after 200000 cycles"
            await FallingEdge(self.clk)
            # A word on offer stays on offer until taken (stream rule); idle cycles only between
            # words.
            offering = offering or not (idle and rng.random() < idle)
            valid.value = int(offering)
            data.value  = words[sent]
            await ReadOnly()
            if offering and int(ready.value):
                sent += 1
                offering = False
            cycle += 1
        await FallingEdge(self.clk)
        valid.value = 0
        return sent

    async def receive(self, name, count, backpressure=0.0, rng=None, quiet=64, limit=200_000):
        """Take words from stream `name` until `count` arrived, then `quiet` more cycles (extra words are
        collected too, so a stream that sends too much fails the comparison)."""
        dut, got, silent, cycle = self.dut, [], 0, 0
        valid, ready, data = (getattr(dut, f"{name}_{f}") for f in ("valid", "ready", "data"))
        while len(got) < count or silent < quiet:
            cycle += 1
            assert cycle < limit, f"{name}: {len(got)} of {count} words after {limit} cycles"
            await FallingEdge(self.clk)
            take = not (backpressure and rng.random() < backpressure)
            ready.value = int(take)
            await ReadOnly()
            if take and int(valid.value):
                got.append(int(data.value))
            if len(got) >= count:
                silent += 1
        await FallingEdge(self.clk)
        ready.value = 0
        return got

    async def wait_idle(self, engine, limit=100_000):
        for _ in range(limit):
            await FallingEdge(self.clk)
            if not int(getattr(self.dut, f"{engine}_busy").value):
                return
        raise AssertionError(f"{engine} still busy after {limit} cycles")

    async def write(self, base, words, idle=0.0, rng=None):
        assert await self.request("write", base, len(words) * WORD)
        assert await self.send("from_dma", words, idle, rng) == len(words)
        await self.wait_idle("write")
        assert int(self.dut.write_done.value) == 1
        assert int(self.dut.write_words.value) == len(words) * WORD // NATIVE

    async def read(self, base, count, backpressure=0.0, rng=None):
        assert await self.request("read", base, count * WORD)
        got = await self.receive("to_dma", count, backpressure, rng)
        await self.wait_idle("read")
        assert int(self.dut.read_done.value) == 1
        assert int(self.dut.read_words.value) == count * WORD // NATIVE
        return got


def random_words(rng, count):
    return [rng.getrandbits(DATA_WIDTH) for _ in range(count)]


async def bench(dut):
    b = UnitBench(dut)
    await b.start()
    return b

# Tests --------------------------------------------------------------------------------------------

# (base, bytes): one native word, odd numbers of them, across a bank (8 KiB) and a row (64 KiB), up
# to the last word of the DRAM.
WINDOWS = [
    (0,                    NATIVE),
    (NATIVE,               3 * NATIVE),
    (BANK_ROW - 2*NATIVE,  5 * NATIVE),
    (ROW - 3*NATIVE,       7 * NATIVE),
    (3 * ROW - 5*NATIVE,   BANK_ROW + 11 * NATIVE),
    (SIZE - 4*NATIVE,      4 * NATIVE),
]


@cocotb.test()
async def round_trip(dut):
    """Every window comes back intact, with and without idle cycles and back-pressure."""
    b = await bench(dut)
    rng = random.Random(5)
    for idle, bp in [(0.0, 0.0), (0.3, 0.3)]:
        for base, length in WINDOWS:
            words = random_words(rng, length // WORD)
            await b.write(base, words, idle, rng)
            assert await b.read(base, len(words), bp, rng) == words, (base, length, idle, bp)
    assert int(dut.refusals.value) == 0


@cocotb.test()
async def whole_dram(dut):
    """The largest window, the whole DRAM, written and read back; then one word past the end is refused."""
    b = await bench(dut)
    rng = random.Random(6)
    words = random_words(rng, SIZE // WORD)
    await b.write(0, words)
    assert await b.read(0, len(words)) == words
    assert not await b.request("write", 0, SIZE + NATIVE)
    assert not await b.request("read",  NATIVE, SIZE)
    assert int(dut.refusals.value) == 2


@cocotb.test()
async def refusals(dut):
    """Bad windows are refused and counted exactly, take no data and change nothing in the DRAM."""
    b = await bench(dut)
    rng = random.Random(7)
    base = ROW
    guard = random_words(rng, 3 * 4 * NATIVE // WORD)   # Words before, inside and after the target.
    await b.write(base - 4*NATIVE, guard)
    bad = [
        (base + 16,        NATIVE),          # Base not on a native word.
        (base,             NATIVE + WORD),   # Length not whole native words.
        (base,             0),               # Empty.
        (SIZE - NATIVE,    2 * NATIVE),      # Past the end.
        (SIZE,             NATIVE),          # Starts past the end.
        (0xffffffc0,       NATIVE),          # Far past the end.
    ]
    for count, (addr, length) in enumerate(bad, 1):
        for engine in ("write", "read"):
            assert not await b.request(engine, addr, length), (engine, addr, length)
        assert int(dut.refusals.value) == 2 * count
        assert not int(dut.write_busy.value) and not int(dut.read_busy.value)
    # Nothing may be taken from the DMA, nothing sent to it.
    assert await b.send("from_dma", random_words(rng, 8), max_cycles=64) == 0
    assert await b.receive("to_dma", 0, quiet=64) == []
    # A start while a window is open is refused too, and the open window is unharmed.
    assert await b.request("write", base, NATIVE)
    assert not await b.request("write", base, NATIVE)
    new = random_words(rng, NATIVE // WORD)
    assert await b.send("from_dma", new) == len(new)
    await b.wait_idle("write")
    assert int(dut.refusals.value) == 2 * len(bad) + 1
    expected = guard[:4*NATIVE // WORD] + new + guard[4*NATIVE // WORD + len(new):]
    assert await b.read(base - 4*NATIVE, len(guard)) == expected


@cocotb.test()
async def exact_lengths(dut):
    """A window takes exactly its length: the next words wait in the DMA (ready low), none is written
    past the end; the reader sends exactly its window."""
    b = await bench(dut)
    rng = random.Random(8)
    around = random_words(rng, 4 * NATIVE // WORD)
    await b.write(2 * NATIVE, around)
    assert await b.request("write", 3 * NATIVE, NATIVE)
    offered = random_words(rng, 2 * NATIVE // WORD)
    assert await b.send("from_dma", offered, max_cycles=200) == NATIVE // WORD
    await b.wait_idle("write")
    assert await b.send("from_dma", offered, max_cycles=64) == 0   # Window closed: nothing taken.
    expected = around[:NATIVE // WORD] + offered[:NATIVE // WORD] + around[2*NATIVE // WORD:]
    assert await b.read(2 * NATIVE, len(around)) == expected   # receive() also fails on extra words.


@cocotb.test()
async def aborts(dut):
    """Aborted windows stop cleanly: partial native words are not written, the next windows work."""
    b = await bench(dut)
    rng = random.Random(9)
    old = random_words(rng, 8 * NATIVE // WORD)
    await b.write(0, old)
    # Writer: 1.5 native words arrive, then abort: the first word is written, the half word is not.
    assert await b.request("write", 0, 8 * NATIVE)
    new = random_words(rng, 6)
    assert await b.send("from_dma", new) == 6
    await b.cycles(50)
    await b.abort("write")
    await b.wait_idle("write")
    assert int(dut.write_done.value) == 0 and int(dut.write_words.value) == 1
    assert await b.read(0, len(old)) == new[:4] + old[4:]
    # Reader: abort with reads in flight and the DMA side stalled, then a full read is clean.
    assert await b.request("read", 0, 8 * NATIVE)
    await b.cycles(100)
    await b.abort("read")
    await b.wait_idle("read")
    assert int(dut.read_done.value) == 0
    assert await b.receive("to_dma", 0, quiet=32) == []
    assert await b.read(0, len(old)) == new[:4] + old[4:]


@cocotb.test()
async def no_bubbles(dut):
    """Fast path: with the DMA side never stalling, a long window moves close to one word per cycle."""
    b = await bench(dut)
    rng = random.Random(10)
    words = random_words(rng, 2 * ROW // WORD)
    assert await b.request("write", 0, len(words) * WORD)
    start = cocotb.utils.get_sim_time("ps")
    assert await b.send("from_dma", words) == len(words)
    write_cycles = (cocotb.utils.get_sim_time("ps") - start) / (1e12 / SYS_CLK_FREQ)
    await b.wait_idle("write")
    assert await b.request("read", 0, len(words) * WORD)
    start = cocotb.utils.get_sim_time("ps")
    got = await b.receive("to_dma", len(words), quiet=0)
    read_cycles = (cocotb.utils.get_sim_time("ps") - start) / (1e12 / SYS_CLK_FREQ)
    assert got == words
    dut._log.warning("no_bubbles: %d words, write %.0f cycles, read %.0f cycles", len(words), write_cycles, read_cycles)
    # The DRAM (512 bits at 200 MHz, refresh included) outruns 128 bits at 150 MHz: only the
    # start-up latency and the refresh stalls may show.
    assert write_cycles < len(words) * 1.03 + 100
    assert read_cycles  < len(words) * 1.03 + 100


@cocotb.test()
async def pattern_mode(dut):
    """In pattern mode the DMA streams go to and come from the pattern side, untouched; no DRAM access."""
    b = await bench(dut)
    rng = random.Random(11)
    dut.dram_mode.value = 0
    words = random_words(rng, 40)
    receiver = cocotb.start_soon(b.receive("to_pattern", len(words), 0.3, random.Random(1)))
    assert await b.send("from_dma", words, 0.3, rng) == len(words)
    assert await receiver == words
    receiver = cocotb.start_soon(b.receive("to_dma", len(words), 0.3, random.Random(2)))
    assert await b.send("from_pattern", words, 0.3, rng) == len(words)
    assert await receiver == words
    assert int(dut.write_words.value) == 0 and int(dut.read_words.value) == 0


@cocotb.test()
async def stuck_bit(dut):
    """The injected fault shows on read-back (bit 0 of every DFI phase's read data), and only then."""
    b = await bench(dut)
    rng = random.Random(12)
    words = [w & ~1 & ~(1 << 64) for w in random_words(rng, 4 * NATIVE // WORD)]
    await b.write(0, words)
    dut.stuck.value = 1
    got = await b.read(0, len(words))
    dut.stuck.value = 0
    assert got != words
    assert all(g & ~w == (g ^ w) for g, w in zip(got, words))   # Only bits forced to 1.
    assert await b.read(0, len(words)) == words
