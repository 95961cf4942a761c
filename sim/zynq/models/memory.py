# This file is part of hostlink.
# Copyright (c) 2026 hostlink developers
# SPDX-License-Identifier: BSD-2-Clause

"""The PS's DDR behind an HP port, as the logic sees it, for ./sim.py zynq (cocotb).

A memory answering the port's reads and writes with:
- one DDR for both directions (ddr.py's DDRArbiter): a read burst waits for it from when its address is taken,
  a write burst from its last beat; the DDR serves one burst at a time, at its rate and efficiency for that
  direction, turns around between reads and writes at a cost, and its arbiter picks the direction (UG585's
  policy: stay while the direction has bursts, switch when it has none or the other has waited too long);
- a latency: a read burst's first beat `read_latency_ns` after the DDR takes it, a write's response
  `write_latency_ns` after the DDR takes it (with the DDR idle: after its address, after its last beat);
- bursts in flight: at most `max_reads` read and `max_writes` write bursts taken and not finished (the port's
  acceptance; further addresses wait);
- the port's rate: at most `rate_bytes_per_s` each way, as a token bucket on the data beats (UG585 gives about
  1,200 MB/s per HP port).

The defaults, and where each comes from, are ps_model.py's; `ddr` overrides some of the DDR's (its keys as
PS_MODEL's `ddr_*`).

The channels are cocotbext-axi's (their handshakes); the timing is this model's. It checks what a Zynq HP
port requires of a master: INCR bursts of at most 16 beats of the port's width that do not cross 4 KiB.

Errors, as the PS answers them: a burst outside the memory gets DECERR (read data all zeros, nothing written);
`fault` ("read" or "write") makes the next burst of that kind get SLVERR, once (tests of the DMA's error path);
"read-decerr" or "write-decerr", DECERR (as for an address the PS does not decode).
"""

import collections

import cocotb
from cocotb.triggers import Event, RisingEdge, Timer
from cocotb.utils import get_sim_time

from cocotbext.axi import AxiBus
from hostlink.sim.zynq.models.ddr import DDRArbiter
from hostlink.sim.zynq.models.ps_model import DDR_KEYS, PS_MODEL

from cocotbext.axi.axi_channels import AxiARSink, AxiAWSink, AxiBSource, AxiBTransaction, AxiRSource, AxiRTransaction, AxiWSink

__all__ = ["PSMemory"]


class PSMemory:
    def __init__(self, dut, prefix, clock, reset, size, clock_hz, read_latency_ns=PS_MODEL["read_latency_ns"],
            write_latency_ns=PS_MODEL["write_latency_ns"], max_reads=PS_MODEL["max_reads"],
            max_writes=PS_MODEL["max_writes"], rate_bytes_per_s=PS_MODEL["rate_bytes_per_s"], ddr=None):
        bus = AxiBus.from_prefix(dut, prefix)
        self.clock, self.period_ns = clock, 1e9/clock_hz
        self.ar = AxiARSink(bus.read.ar, clock, reset)
        self.r  = AxiRSource(bus.read.r, clock, reset)
        self.aw = AxiAWSink(bus.write.aw, clock, reset)
        self.w  = AxiWSink(bus.write.w, clock, reset)
        self.b  = AxiBSource(bus.write.b, clock, reset)
        self.r.queue_occupancy_limit = 4
        self.b.queue_occupancy_limit = 1
        # An address taken counts as in flight from then: the sinks keep none waiting.
        self.ar.queue_occupancy_limit = 1
        self.aw.queue_occupancy_limit = 1
        self.beat_bytes = len(bus.read.r.rdata) // 8
        self.memory = bytearray(size)
        self.read_latency_ns, self.write_latency_ns = read_latency_ns, write_latency_ns
        self.max_reads, self.max_writes = max_reads, max_writes
        unknown = set(ddr or {}) - set(DDR_KEYS)
        if unknown:
            raise ValueError(f"the DDR's parameters are {', '.join(DDR_KEYS)}, not {', '.join(sorted(unknown))}")
        figures = {key: PS_MODEL[key] for key in DDR_KEYS} | dict(ddr or {})
        self.ddr = DDRArbiter(**{key.removeprefix("ddr_"): value for key, value in figures.items()})
        self.ddr_wake = Event()
        self.beats_per_ns = rate_bytes_per_s / self.beat_bytes / 1e9
        # The port's rate as token buckets (one token a beat), each holding at most a burst's worth: the port may
        # move a burst at the bus's pace, never more than the rate over time.
        self.buckets = {"read": [16.0, 0.0], "write": [16.0, 0.0]}   # tokens, when last filled (ns)
        self.reads  = collections.deque()    # Taken by the DDR: (due ns, address, beats, response)
        self.responses = collections.deque() # Taken by the DDR: (due ns, response)
        self.fault = None                    # "read" or "write" (-decerr): the next such burst's error
        self.errors_answered = {"SLVERR": 0, "DECERR": 0}
        self.most_reads = self.most_writes = 0
        self.bursts = 0
        for process in (self._take_reads(), self._give_reads(), self._take_writes(), self._give_responses(),
                self._serve_ddr()):
            cocotb.start_soon(process)

    def _check(self, kind, address, beats, size, burst):
        """Asserts the HP port's rules; returns the burst's response: 0 (OKAY), 2 (SLVERR) or 3 (DECERR)."""
        assert burst == 1 and 2**size == self.beat_bytes, f"{kind}: burst {burst}, size {size}"
        assert 1 <= beats <= 16, f"{kind} of {beats} beats"
        assert address // 4096 == (address + beats*self.beat_bytes - 1) // 4096, f"{kind} at 0x{address:x} crosses 4 KiB"
        self.bursts += 1
        if self.fault in (kind, f"{kind}-decerr"):
            decode, self.fault = self.fault.endswith("decerr"), None
            self.errors_answered["DECERR" if decode else "SLVERR"] += 1
            return 3 if decode else 2
        if address + beats*self.beat_bytes > len(self.memory):
            self.errors_answered["DECERR"] += 1
            return 3
        return 0

    async def _until(self, due_ns):
        wait_ps = round((due_ns - get_sim_time("ns")) * 1000)
        if wait_ps >= 1:
            await Timer(wait_ps, "ps")
        await RisingEdge(self.clock)

    async def _token(self, direction, on_wait=None):
        """Waits until `direction` may move one more beat, and takes it."""
        bucket = self.buckets[direction]
        while True:
            now = get_sim_time("ns")
            bucket[0] = min(16.0, bucket[0] + (now - bucket[1]) * self.beats_per_ns)
            bucket[1] = now
            if bucket[0] >= 1.0:
                bucket[0] -= 1.0
                return
            if on_wait is not None:
                on_wait(True)
            await self._until(now + (1.0 - bucket[0]) / self.beats_per_ns)
            if on_wait is not None:
                on_wait(False)

    def _reads_in_flight(self):
        return len(self.reads) + self.ddr.waiting("read")

    def _writes_in_flight(self):
        return len(self.responses) + self.ddr.waiting("write")

    def _pause_reads(self):
        self.ar.pause = self._reads_in_flight() + self.ar.count() >= self.max_reads

    def _pause_writes(self):
        self.aw.pause = self._writes_in_flight() + 1 + self.aw.count() >= self.max_writes

    async def _serve_ddr(self):
        """Gives each burst to the DDR when its arbiter grants it, and waits while the DDR moves it."""
        while True:
            grant = self.ddr.grant(get_sim_time("ns"))
            if grant is None:
                self.ddr_wake.clear()
                await self.ddr_wake.wait()
                continue
            if grant.direction == "read":
                self.reads.append((grant.start_ns + self.read_latency_ns, *grant.tag))
            else:
                self.responses.append((grant.start_ns + self.write_latency_ns, grant.tag))
            await self._until(grant.end_ns)

    async def _take_reads(self):
        while True:
            ar = await self.ar.recv()
            address, beats = int(ar.araddr), int(ar.arlen) + 1
            response = self._check("read", address, beats, int(ar.arsize), int(ar.arburst))
            self.ddr.push("read", beats*self.beat_bytes, get_sim_time("ns"), (address, beats, response))
            self.ddr_wake.set()
            self.most_reads = max(self.most_reads, self._reads_in_flight())
            self._pause_reads()

    async def _first_due(self, queue):
        """The first entry of `queue` (each led by the time it is due), once there is one and it is due."""
        while not queue:
            await RisingEdge(self.clock)
        await self._until(queue[0][0])
        return queue[0]

    async def _give_reads(self):
        while True:
            _, address, beats, response = await self._first_due(self.reads)
            for n in range(beats):
                await self._token("read")
                start = address + n*self.beat_bytes
                data = 0 if response else int.from_bytes(self.memory[start:start + self.beat_bytes], "little")
                await self.r.send(AxiRTransaction(rid=0, rresp=response, rlast=int(n == beats - 1), rdata=data))
            self.reads.popleft()
            self._pause_reads()

    async def _take_writes(self):
        def pause(value):
            self.w.pause = value
        while True:
            aw = await self.aw.recv()
            address, beats = int(aw.awaddr), int(aw.awlen) + 1
            response = self._check("write", address, beats, int(aw.awsize), int(aw.awburst))
            self.most_writes = max(self.most_writes, self._writes_in_flight() + 1)
            self._pause_writes()
            for n in range(beats):
                await self._token("write", pause)
                w = await self.w.recv()
                data, strb, start = int(w.wdata), int(w.wstrb), address + n*self.beat_bytes
                for i in range(self.beat_bytes if not response else 0):
                    if strb >> i & 1:
                        self.memory[start + i] = data >> (8*i) & 0xff
                assert int(w.wlast) == (n == beats - 1), f"WLAST on beat {n} of {beats}"
            self.ddr.push("write", beats*self.beat_bytes, get_sim_time("ns"), response)
            self.ddr_wake.set()
            self._pause_writes()

    async def _give_responses(self):
        while True:
            _, response = await self._first_due(self.responses)
            await self.b.send(AxiBTransaction(bid=0, bresp=response))
            self.responses.popleft()
            self._pause_writes()
