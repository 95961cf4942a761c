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

from hostlink.protocol import FLOW_MODES, FRAMED_FLOWS, HEADER, HEADER_BYTES, HEADER_FLAG_END, HEADER_MAGIC
from hostlink.cores.pcie.config import check_dma_length
from hostlink.sim.pcie.driver import DMA_IRQ_DISABLE

POLL_NS = 1000   # Between two polls of the engines' counts.


def count_pattern(size):
    words = (size + 3) // 4
    return struct.pack(f"<{words}I", *[i & 0xffffffff for i in range(words)])[:size]


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


async def run_stream_job(bench, job):
    drv, profile = bench.driver, bench.profile
    word_bytes = bench.config["data_width"] // 8
    check_stream_job(job, word_bytes)
    size, buffers, buffer_bytes = job["size"], job["buffers"], job["buffer_bytes"]
    flow, target, directions = job["flow"], job["target"], job["directions"]
    ch = job["channels"][0]
    count = size // buffer_bytes
    # A job may give its own stall (a run that compares hosts), else the profile's.
    stall_ns, stall_every = job.get("stall_ns", profile.stall_ns), job.get("stall_every", profile.stall_every)

    user_core = bench.config.get("user_core") if target == "user" else None
    model = None
    if target == "user":
        if not user_core or ch != user_core["channel"]:
            raise ValueError("a user stream runs on the channel of the SoC's user core")
        from hostlink.cores.pcie.user_core import load_user_core
        model = getattr(load_user_core(user_core["spec"]), "model", None)
        settings = dict(user_core["settings"], **job.get("settings", {}))
        for name, value in settings.items():
            await drv.write(f"{user_core['csr_prefix']}_{name}", value)
        await drv.write(f"pcie_dma{ch}_user_select", 1)
    await drv.set_loopback(ch, target == "loopback")

    rings = {d: Ring(bench, d, buffers, buffer_bytes) for d in directions}
    for ring in rings.values():
        await program_ring(drv, ch, ring, flow)

    # What goes in (host-to-FPGA) and what must come out.
    data = None
    if "h2c" in rings:
        data = count_pattern(size) if target == "patterns" else bench.rng.randbytes(size)
        ring = rings["h2c"]
        for k in range(min(buffers, count)):
            lo, hi = ring.slot(k)
            ring.region[lo:hi] = data[k*buffer_bytes:(k + 1)*buffer_bytes]
        ring.given = min(buffers, count)
        if target == "patterns":
            await drv.clear_checker(ch)
    if "c2h" in rings:
        rings["c2h"].given = min(buffers, count)
        if target == "patterns":
            await drv.set_generator_length(ch, size)
    for ring in rings.values():
        if flow != "loop":
            await drv.write(f"pcie_dma{ch}_{ring.engine}_flow_given", ring.given)
    # Writers first (they wait for data), then readers; then the data sources.
    if "c2h" in rings:
        await drv.start(ch, "c2h")
    await drv.flush()
    t_start = get_sim_time("ns")
    if "h2c" in rings:
        await drv.start(ch, "h2c")
    if target == "patterns" and "c2h" in rings:
        await drv.set_generator(ch, True)
    start = dict(user_core.get("start", {})) if user_core else {}
    for name, value in start.items():
        await drv.write(f"{user_core['csr_prefix']}_{name}", value)

    received = bytearray()
    framed   = []       # The framed flows: each buffer, as the host read it.
    served   = 0        # Buffers served since the last stall.
    stalls   = 0
    deadline = get_sim_time("ns") + job.get("timeout_ns", 2_000_000 + size * 40 + count * stall_ns * 2)
    bench.job_bytes = lambda: len(received) if "c2h" in rings else rings["h2c"].done * buffer_bytes
    moved = lambda: len(received) if flow in FRAMED_FLOWS else size
    def finished():
        return all(ring.done >= count for ring in rings.values())
    while not finished() and get_sim_time("ns") < deadline:
        for d, ring in rings.items():
            done = await drv.read(f"pcie_dma{ch}_{ring.engine}_flow_done")
            new = (done - ring.done) & 0xffffffff
            for k in range(ring.done, ring.done + min(new, count - ring.done)):
                lo, hi = ring.slot(k)
                if d == "c2h" and flow in FRAMED_FLOWS:
                    buffer = bytes(ring.region[lo:hi])
                    length = struct.unpack_from("<I", buffer, 24)[0]
                    framed.append(buffer[:HEADER_BYTES + min(length, buffer_bytes - HEADER_BYTES)])
                    received += buffer[HEADER_BYTES:HEADER_BYTES + length]
                elif d == "c2h":
                    received += ring.region[lo:hi]
                else:
                    nxt = k + buffers
                    if nxt < count:
                        ring.region[lo:hi] = data[nxt*buffer_bytes:(nxt + 1)*buffer_bytes]
                if d == "c2h" or "c2h" not in rings:
                    served += 1
            ring.done = min(count, ring.done + new)
            given = min(ring.done + buffers, count)
            if flow != "loop" and given != ring.given:
                ring.given = given
                await drv.write(f"pcie_dma{ch}_{ring.engine}_flow_given", given)
        if stall_every and served >= stall_every and not finished():
            served -= stall_every
            stalls += 1
            await Timer(stall_ns, "ns")
        else:
            await Timer(POLL_NS, "ns")
    t_end = get_sim_time("ns") if finished() else None

    # Check.
    errors, row = 0, {}
    if "h2c" in rings and target == "patterns":
        await Timer(2000, "ns")
        words, mismatches = await drv.checker_counts(ch)
        errors += mismatches + abs(words - size // 4)
    if "c2h" in rings:
        expected = None
        if target == "patterns":
            expected = count_pattern(size)
        elif target == "loopback":
            expected = data
        elif model is not None and "h2c" in rings:
            expected = model(data, settings)
        elif flow not in FRAMED_FLOWS:
            expected = count_pattern(size)   # A source of counts (examples/stream_source.py), nothing lost.
        if expected is not None:
            got = bytes(received[:size])
            errors += sum(1 for a, b in zip(got, expected) if a != b) + abs(len(got) - size)
        else:   # A framed flow: the counts, headers and packets.
            parsed = parse_framed(framed)
            errors += parsed["errors"] + abs(len(framed) - count)
            if flow == "packets":
                errors += parsed["dropped"]   # Lossless: nothing may be dropped.
            row.update(header_dropped_bytes=parsed["dropped"], drop_events=parsed["events"][:16],
                       drop_event_count=len(parsed["events"]), packet_count=len(parsed["packets"]),
                       packet_bytes=sorted(set(parsed["packets"]))[:16])
            row["port_dropped_bytes"] = await drv.read64(f"pcie_dma{ch}_user_c2h_dropped")
            if drv.csrs.has(f"{user_core['csr_prefix']}_overruns"):
                row["core_overruns"] = await drv.read(f"{user_core['csr_prefix']}_overruns")
    for d, ring in rings.items():
        row[f"{d}_waits"] = await drv.read(f"pcie_dma{ch}_{ring.engine}_flow_waits")

    # Stop: sources off, engines off, gates open, the channel to its patterns.
    for name in start:
        await drv.write(f"{user_core['csr_prefix']}_{name}", 0)
    if target == "patterns" and "c2h" in rings:
        await drv.set_generator(ch, False)
    for d, ring in rings.items():
        await drv.stop(ch, d)
        await drv.write(f"pcie_dma{ch}_{ring.engine}_flow_mode", 0)
    await drv.set_loopback(ch, False)
    if target == "user":
        await drv.write(f"pcie_dma{ch}_user_select", 0)
    bench.job_bytes = None

    timed_out = t_end is None
    cycles = bench.cycles(t_end - t_start) if not timed_out else None
    row.update({
        "kind": "stream", "flow": flow, "target": target, "direction": "+".join(directions),
        "size": size, "bytes": moved(), "channels": 1, "buffers": buffers, "buffer_bytes": buffer_bytes,
        "stall_ns": stall_ns, "stall_every": stall_every, "stalls": stalls,
        "cycles": cycles,
        "gbytes_per_s": (moved() / (cycles / bench.sys_clk_hz) / 1e9) if cycles else 0.0,
        "errors": errors + (1 if timed_out else 0), "timed_out": timed_out,
        "msis": 0, "msis_expected": 0,
    })
    if user_core:
        row["user_core"] = user_core["spec"]
    return [row]
