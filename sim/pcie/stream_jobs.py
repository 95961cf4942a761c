# This file is part of hostlink.
# Copyright (c) 2026 hostlink developers
# SPDX-License-Identifier: BSD-2-Clause

"""Streaming jobs of the cocotb bench (bench.py): a host that runs a ring of buffers, as a program does.

Where the other jobs move one transfer through one-shot descriptors, a stream job programs each direction's
table once with a ring of `buffers` descriptors of `buffer_bytes` each, in LitePCIe's loop mode, and moves
`size` bytes per direction through it (`size` a whole number of buffers). The host polls each engine's
`flow_done` count (flow.py) and, for each buffer done:

- FPGA-to-host: reads it, then gives it back;
- host-to-FPGA: refills it with the next data, then hands it over;

one `flow_given` write per direction per poll, however many buffers it served. Every `stall_every`
buffers it stalls for `stall_ns` (the host profile's stall options): it then reads, refills and gives
nothing, as a program that is descheduled or busy elsewhere.

`flow` is the engines' flow mode: "lossless" (both directions gated), "realtime" (FPGA-to-host only,
through a user core that never waits), "packets" (FPGA-to-host only, through a user core: lossless, each
buffer ended by the core's `last` or full, its length in its header), or "loop" (LitePCIe's own, no gate:
what a slow host loses there). In the framed flows (real-time, packets) `size` counts whole buffers.

Targets: "patterns" (the channel's pattern generator and checker, each direction alone or both),
"loopback" (host data through the FPGA's loopback and back), "user" (the SoC's user core: an accelerator
through its model, or a source in real-time flow whose counts and headers are checked).

Each row's `errors` counts every byte that is not what it must be (lost, stale, overwritten or wrong) and
every header that does not say exactly what was dropped before its data.
"""

import struct

from hostlink.sim.pcie.triggers import Timer, get_sim_time

from hostlink.protocol import FLOW_MODES, FRAMED_FLOWS, HEADER, HEADER_BYTES, HEADER_FIELDS, HEADER_FLAG_END, \
    HEADER_MAGIC
from hostlink.cores.pcie.config import check_dma_length
from hostlink.sim.pcie.driver import DMA_IRQ_DISABLE
from hostlink.sim.pcie.patterns import count_pattern

HEADER_LENGTH = [name for name, _, _ in HEADER_FIELDS].index("length")   # In HEADER's unpacked fields.

POLL_NS = 1000   # Between two polls of the engines' counts.


class Ring:
    """One direction's ring of buffers in host memory, and the host's counts for it."""
    def __init__(self, bench, direction, buffers, buffer_bytes):
        self.direction = direction
        self.engine    = "reader" if direction == "h2c" else "writer"
        self.buffers, self.buffer_bytes = buffers, buffer_bytes
        self.region    = bench.rc.mem_pool.alloc_region(buffers * buffer_bytes + 4096)
        self.base      = self.region.get_absolute_address(0)
        self.given     = 0   # Buffers given to the engine (the value last written to flow_given).
        self.done      = 0   # Buffers the host has seen done and served.

    def slot(self, k):
        offset = (k % self.buffers) * self.buffer_bytes
        return offset, offset + self.buffer_bytes

    def descriptors(self):
        return [(self.base + k * self.buffer_bytes, self.buffer_bytes) for k in range(self.buffers)]


async def program_ring(drv, channel, ring, flow):
    """Load the ring's descriptors (no MSIs: the host polls), loop mode, the flow mode."""
    prefix = f"pcie_dma{channel}_{ring.engine}"
    await drv.write(f"{prefix}_enable", 0)
    await drv.write(f"{prefix}_table_reset", 1)   # Also restarts the flow counts.
    await drv.write(f"{prefix}_table_loop_prog_n", 0)
    for address, length in ring.descriptors():
        await drv.write(f"{prefix}_table_value", DMA_IRQ_DISABLE | length, word=0)
        await drv.write(f"{prefix}_table_value", address & 0xffffffff, word=1)
        await drv.write(f"{prefix}_table_we", address >> 32)
    await drv.write(f"{prefix}_table_loop_prog_n", 1)
    await drv.write(f"{prefix}_flow_mode", FLOW_MODES[flow] if flow not in FRAMED_FLOWS or ring.engine == "writer"
                    else FLOW_MODES["lossless"])
    if ring.engine == "writer":
        await drv.write(f"{prefix}_flow_buffer_bytes", ring.buffer_bytes)


def check_stream_job(job, word_bytes):
    size, buffers, buffer_bytes = job["size"], job["buffers"], job["buffer_bytes"]
    check_dma_length(buffer_bytes, granularity=word_bytes)
    if job["flow"] not in FLOW_MODES:
        raise ValueError(f"flow must be one of {', '.join(FLOW_MODES)}, not {job['flow']!r}")
    if not 1 <= buffers <= 256:
        raise ValueError(f"a ring has 1 to 256 buffers (the descriptor table's depth), not {buffers!r}")
    if size <= 0 or size % buffer_bytes:
        raise ValueError(f"a stream moves a whole number of {buffer_bytes}-byte buffers, not {size} bytes")
    if job["flow"] in FRAMED_FLOWS and (job["target"] != "user" or job["directions"] != ["c2h"]):
        raise ValueError(f"{job['flow']} flow is FPGA-to-host through a user core that produces data")
    if job["flow"] in FRAMED_FLOWS and (buffer_bytes <= HEADER_BYTES or buffer_bytes % 512):
        raise ValueError(f"a {job['flow']} buffer holds its {HEADER_BYTES}-byte header and data and is aligned "
                         f"to the largest request (512 bytes at most here): a multiple of 512 bytes, not "
                         f"{buffer_bytes}")


def parse_framed(buffers, lanes_start=0):
    """Checks a framed stream (real-time or packets flow) of 32-bit counts (examples/stream_source.py),
    given as each buffer's bytes in host memory (header and data; what follows the data is not read):
    each header (magic, sequence, a data length that fills the buffer unless a `last` ended it), that the
    counts skipped just before each buffer's data are exactly the bytes its header says were dropped, and
    that none is skipped within a buffer. Returns a dict: errors, dropped (bytes, by the headers), events
    [(buffer, bytes)], times, packets (bytes of each packet a `last` ended, in order), data_bytes."""
    errors, dropped, events, times, packets = 0, 0, [], [], []
    expected, packet, data_bytes = lanes_start, 0, 0
    for k, buffer in enumerate(buffers):
        magic, sequence, time, gap, length, flags = HEADER.unpack_from(buffer)
        ended = flags & HEADER_FLAG_END
        if (magic, sequence, flags & ~HEADER_FLAG_END) != (HEADER_MAGIC, k & 0xffffffff, 0) or \
                length > len(buffer) - HEADER_BYTES or (not ended and length != len(buffer) - HEADER_BYTES) or \
                length == 0 or length % 4:
            errors += 1
            continue
        counts = struct.unpack_from(f"<{length // 4}I", buffer, HEADER_BYTES)
        skipped = ((counts[0] - expected) & 0xffffffff) * 4
        if skipped != gap:
            errors += 1
        errors += sum(1 for a, b in zip(counts, counts[1:]) if b != (a + 1) & 0xffffffff)
        if gap:
            events.append((k, gap))
            packet = 0   # A drop cuts the packet it falls in.
        dropped += gap
        times.append(time)
        expected = (counts[-1] + 1) & 0xffffffff
        packet += length
        data_bytes += length
        if ended:
            packets.append(packet)
            packet = 0
    return {"errors": errors, "dropped": dropped, "events": events, "times": times, "packets": packets,
            "data_bytes": data_bytes}


class StreamJob:
    """One stream job (the module's docstring): the host's side in steps, run in order by run()."""
    def __init__(self, bench, job):
        check_stream_job(job, bench.config["data_width"] // 8)
        self.bench, self.drv = bench, bench.driver
        self.size, self.buffers, self.buffer_bytes = job["size"], job["buffers"], job["buffer_bytes"]
        self.flow, self.target, self.directions = job["flow"], job["target"], job["directions"]
        self.ch    = job["channels"][0]
        self.count = self.size // self.buffer_bytes
        # A job may give its own stall (a run that compares hosts), else the profile's.
        self.stall_ns    = job.get("stall_ns", bench.profile.stall_ns)
        self.stall_every = job.get("stall_every", bench.profile.stall_every)
        self.timeout_ns  = job.get("timeout_ns", 2_000_000 + self.size * 40 + self.count * self.stall_ns * 2)
        self.job         = job
        self.user_core   = bench.config.get("user_core") if self.target == "user" else None
        self.model       = None   # The user core's model of what it returns, if it has one,
        self.settings    = None   # and the settings it was run with.
        self.rings       = {}     # Per direction.
        self.data        = None   # What goes in (host-to-FPGA).
        self.start_csrs  = {}     # The user core's CSRs that set it going, cleared at the end.
        self.received    = bytearray()   # What came out (FPGA-to-host), the headers left out.
        self.framed      = []     # The framed flows: each buffer, as the host read it.
        self.stalls      = 0

    async def run(self):
        drv, ch = self.drv, self.ch
        if self.target == "user":
            await self.select_user_core()
        await drv.set_loopback(ch, self.target == "loopback")
        await self.program_rings()
        await self.give_first_buffers()
        t_start = await self.start()
        t_end = await self.serve()
        errors, row = await self.check()
        for d, ring in self.rings.items():
            row[f"{d}_waits"] = await drv.read(f"pcie_dma{ch}_{ring.engine}_flow_waits")
        await self.stop()
        self.bench.job_bytes = None
        return [self.result_row(row, errors, t_start, t_end)]

    # Set-up ---------------------------------------------------------------------------------------

    async def select_user_core(self):
        """The channel's user port on, the core's settings (the job's over the SoC's) written."""
        user_core = self.user_core
        if not user_core or self.ch != user_core["channel"]:
            raise ValueError("a user stream runs on the channel of the SoC's user core")
        from hostlink.cores.pcie.user_core import load_user_core
        self.model = getattr(load_user_core(user_core["spec"]), "model", None)
        self.settings = dict(user_core["settings"], **self.job.get("settings", {}))
        for name, value in self.settings.items():
            await self.drv.write(f"{user_core['csr_prefix']}_{name}", value)
        await self.drv.write(f"pcie_dma{self.ch}_user_select", 1)

    async def program_rings(self):
        self.rings = {d: Ring(self.bench, d, self.buffers, self.buffer_bytes) for d in self.directions}
        for ring in self.rings.values():
            await program_ring(self.drv, self.ch, ring, self.flow)

    async def give_first_buffers(self):
        """Host-to-FPGA: the data made and the first buffers filled; then as many buffers as the ring
        holds given to each engine, and the channel's patterns made ready."""
        drv, ch, rings, first = self.drv, self.ch, self.rings, min(self.buffers, self.count)
        if "h2c" in rings:
            size = self.size
            self.data = count_pattern(size) if self.target == "patterns" else self.bench.rng.randbytes(size)
            ring = rings["h2c"]
            for k in range(first):
                lo, hi = ring.slot(k)
                ring.region[lo:hi] = self.data[k*self.buffer_bytes:(k + 1)*self.buffer_bytes]
            ring.given = first
            if self.target == "patterns":
                await drv.clear_checker(ch)
        if "c2h" in rings:
            rings["c2h"].given = first
            if self.target == "patterns":
                await drv.set_generator_length(ch, self.size)
        for ring in rings.values():
            if self.flow != "loop":
                await drv.write(f"pcie_dma{ch}_{ring.engine}_flow_given", ring.given)

    async def start(self):
        """Writers first (they wait for data), then readers; then the data sources. Returns the start
        time: the write that sets data moving, once the set-up has reached the SoC."""
        drv, ch, rings = self.drv, self.ch, self.rings
        if "c2h" in rings:
            await drv.start(ch, "c2h")
        await drv.flush()
        t_start = get_sim_time("ns")
        if "h2c" in rings:
            await drv.start(ch, "h2c")
        if self.target == "patterns" and "c2h" in rings:
            await drv.set_generator(ch, True)
        self.start_csrs = dict(self.user_core.get("start", {})) if self.user_core else {}
        for name, value in self.start_csrs.items():
            await drv.write(f"{self.user_core['csr_prefix']}_{name}", value)
        return t_start

    # The host's loop ------------------------------------------------------------------------------

    async def serve(self):
        """Polls and serves the rings until every buffer is done or the job's time is up, stalling as
        the host profile says. Returns when the last buffer was served (None: timed out)."""
        rings = self.rings
        served   = 0   # Buffers served since the last stall (FPGA-to-host's, if the job has that direction).
        deadline = get_sim_time("ns") + self.timeout_ns
        self.bench.job_bytes = lambda: len(self.received) if "c2h" in rings else \
            rings["h2c"].done * self.buffer_bytes
        while not self.finished() and get_sim_time("ns") < deadline:
            for d, ring in rings.items():
                buffers_served = await self.serve_ring(d, ring)
                if d == "c2h" or "c2h" not in rings:
                    served += buffers_served
            if self.stall_every and served >= self.stall_every and not self.finished():
                served -= self.stall_every
                self.stalls += 1
                await Timer(self.stall_ns, "ns")
            else:
                await Timer(POLL_NS, "ns")
        return get_sim_time("ns") if self.finished() else None

    def finished(self):
        return all(ring.done >= self.count for ring in self.rings.values())

    async def serve_ring(self, d, ring):
        """One poll of one ring: each buffer the engine has done since the last poll is read
        (FPGA-to-host) or refilled with the data a ring further on (host-to-FPGA), then all of them given
        back in one write. Returns how many buffers were served."""
        drv, ch, count, buffer_bytes = self.drv, self.ch, self.count, self.buffer_bytes
        done = await drv.read(f"pcie_dma{ch}_{ring.engine}_flow_done")
        new = (done - ring.done) & 0xffffffff
        served = min(new, count - ring.done)
        for k in range(ring.done, ring.done + served):
            lo, hi = ring.slot(k)
            if d == "c2h" and self.flow in FRAMED_FLOWS:
                buffer = bytes(ring.region[lo:hi])
                length = HEADER.unpack_from(buffer)[HEADER_LENGTH]
                self.framed.append(buffer[:HEADER_BYTES + min(length, buffer_bytes - HEADER_BYTES)])
                self.received += buffer[HEADER_BYTES:HEADER_BYTES + length]
            elif d == "c2h":
                self.received += ring.region[lo:hi]
            else:
                nxt = k + self.buffers
                if nxt < count:
                    ring.region[lo:hi] = self.data[nxt*buffer_bytes:(nxt + 1)*buffer_bytes]
        ring.done = min(count, ring.done + new)
        given = min(ring.done + self.buffers, count)
        if self.flow != "loop" and given != ring.given:
            ring.given = given
            await drv.write(f"pcie_dma{ch}_{ring.engine}_flow_given", given)
        return served

    # Check and stop -------------------------------------------------------------------------------

    async def check(self):
        """Errors in what the job moved; and, in the framed flows, the row's fields on drops and packets."""
        drv, ch, rings = self.drv, self.ch, self.rings
        errors, row = 0, {}
        if "h2c" in rings and self.target == "patterns":
            await Timer(2000, "ns")
            words, mismatches = await drv.checker_counts(ch)
            errors += mismatches + abs(words - self.size // 4)
        if "c2h" in rings:
            expected = self.expected_c2h()
            if expected is not None:
                got = bytes(self.received[:self.size])
                errors += sum(1 for a, b in zip(got, expected) if a != b) + abs(len(got) - self.size)
            else:
                errors += await self.check_framed(row)
        return errors, row

    def expected_c2h(self):
        """What the FPGA-to-host data must be, byte for byte; None in a framed flow (its headers say)."""
        if self.target == "patterns":
            return count_pattern(self.size)
        if self.target == "loopback":
            return self.data
        if self.model is not None and "h2c" in self.rings:
            return self.model(self.data, self.settings)
        if self.flow not in FRAMED_FLOWS:
            return count_pattern(self.size)   # A source of counts (examples/stream_source.py), nothing lost.
        return None

    async def check_framed(self, row):
        """A framed flow's counts, headers and packets: returns the errors, adds the drops and packets
        to `row`."""
        drv, ch, user_core = self.drv, self.ch, self.user_core
        parsed = parse_framed(self.framed)
        errors = parsed["errors"] + abs(len(self.framed) - self.count)
        if self.flow == "packets":
            errors += parsed["dropped"]   # Lossless: nothing may be dropped.
        row.update(header_dropped_bytes=parsed["dropped"], drop_events=parsed["events"][:16],
                   drop_event_count=len(parsed["events"]), packet_count=len(parsed["packets"]),
                   packet_bytes=sorted(set(parsed["packets"]))[:16])
        row["port_dropped_bytes"] = await drv.read64(f"pcie_dma{ch}_user_c2h_dropped")
        if drv.csrs.has(f"{user_core['csr_prefix']}_overruns"):
            row["core_overruns"] = await drv.read(f"{user_core['csr_prefix']}_overruns")
        return errors

    async def stop(self):
        """Sources off, engines off, gates open, the channel to its patterns."""
        drv, ch = self.drv, self.ch
        for name in self.start_csrs:
            await drv.write(f"{self.user_core['csr_prefix']}_{name}", 0)
        if self.target == "patterns" and "c2h" in self.rings:
            await drv.set_generator(ch, False)
        for d, ring in self.rings.items():
            await drv.stop(ch, d)
            await drv.write(f"pcie_dma{ch}_{ring.engine}_flow_mode", 0)
        await drv.set_loopback(ch, False)
        if self.target == "user":
            await drv.write(f"pcie_dma{ch}_user_select", 0)

    def result_row(self, row, errors, t_start, t_end):
        """The job's result row: `row` (the check's fields and each direction's waits), then the figures."""
        # The framed flows count the data the buffers held, their headers left out.
        moved = len(self.received) if self.flow in FRAMED_FLOWS else self.size
        timed_out = t_end is None
        cycles = self.bench.cycles(t_end - t_start) if not timed_out else None
        row.update({
            "kind": "stream", "flow": self.flow, "target": self.target,
            "direction": "+".join(self.directions),
            "size": self.size, "bytes": moved, "channels": 1,
            "buffers": self.buffers, "buffer_bytes": self.buffer_bytes,
            "stall_ns": self.stall_ns, "stall_every": self.stall_every, "stalls": self.stalls,
            "cycles": cycles,
            "gbytes_per_s": (moved / (cycles / self.bench.sys_clk_hz) / 1e9) if cycles else 0.0,
            "errors": errors + (1 if timed_out else 0), "timed_out": timed_out,
            "msis": 0, "msis_expected": 0,
        })
        if self.user_core:
            row["user_core"] = self.user_core["spec"]
        return row


async def run_stream_job(bench, job):
    return await StreamJob(bench, job).run()
