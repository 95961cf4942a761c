#!/usr/bin/env python3
# This file is part of hostlink.
# Copyright (c) 2026 hostlink developers
# SPDX-License-Identifier: BSD-2-Clause

"""A program that stops reading now and then, through hostlink.host: what a flow mode keeps or loses.
Runs (as root: it sets the source) inside the User-Mode Linux of ./sim.py driver.

    slow_reader.py CSR_JSON FLOW BYTES EVERY PAUSE_RINGS [RATE]
    slow_reader.py CSR_JSON packets BYTES RATE PACKET

Reads BYTES from channel 0's writer in flow FLOW, pausing after every EVERY buffers for PAUSE_RINGS times
the time the link takes to fill the whole ring (in device cycles, read from the SoC's cycle counter:
simulated time, whatever the machine's speed). The data counts 32-bit words from 0.

- lossless, loop: from the channel's pattern generator; every word must be the next number. Prints the
  driver's stats of the direction (hostlink.host's Channel.stats()) before it stops.
- realtime: from the SoC's user core, examples/stream_source.py at RATE (its `rate` CSR), buffer by buffer
  (hostlink.host.Buffer): each buffer's header must say exactly how many bytes the counts skip before
  its data, and none may be skipped within it; the port's drop count must be at least the headers' sum.
- packets: from the same source at RATE, `last` every PACKET samples, read whole packets without pausing
  (hostlink.host's read_packets): every packet of the same length, a whole number of PACKET samples,
  nothing lost between or within them, no overrun.

Prints what it read and what was wrong; exits 1 if anything was.
"""

import array
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))))
from hostlink.host import Channel   # noqa: E402

BYTES_PER_CYCLE = 16   # At most what a DMA word carries per cycle (128 bits): the ring fills no faster.


def main(argv):
    if len(argv) == 5 and argv[1] == "packets":
        return packets(argv[0], int(argv[2]), int(argv[3]), int(argv[4]))
    if len(argv) not in (5, 6):
        print("usage: slow_reader.py CSR_JSON FLOW BYTES EVERY PAUSE_RINGS [RATE]\n"
              "       slow_reader.py CSR_JSON packets BYTES RATE PACKET", file=sys.stderr)
        return 2
    if len(argv) == 6 and argv[1] == "realtime":
        return realtime(argv[0], int(argv[2]), int(argv[3]), float(argv[4]), int(argv[5]))
    csr_json, flow, size, every, rings = argv[0], argv[1], int(argv[2]), int(argv[3]), float(argv[4])
    with Channel(0, flow=flow, directions=("c2h",), registers=csr_json, timeout=300) as channel:
        ring_cycles = channel.buffer_size * channel.buffer_count // BYTES_PER_CYCLE
        for name, value in [("pcie_dma0_loopback_enable", 0), ("pcie_dma0_generator_control", 0),
                            ("pcie_dma0_generator_length", 0)]:
            channel.register(name, value)
        channel._start("c2h")                       # Armed before the generator counts.
        channel.register("pcie_dma0_generator_control", 1)
        data, pauses = bytearray(), 0
        while len(data) < size:
            data += channel.read(min(every * channel.buffer_size, size - len(data)))
            if len(data) < size:
                until = channel.cycles() + int(rings * ring_cycles)
                while channel.cycles() < until:
                    pass
                pauses += 1
        stats = channel.stats()["c2h"]              # Before the stop, which clears the driver's counts.
        channel.register("pcie_dma0_generator_control", 0)
    words = array.array("I", bytes(data))
    wrong = sum(1 for i, w in enumerate(words) if w != i & 0xffffffff)
    print(f"{len(data)} bytes read in flow {flow}, {pauses} pauses of {rings} ring-fills: {wrong} words wrong")
    print(f"stats of the c2h direction in flow {flow}: " + ", ".join(f"{k} {v}" for k, v in stats.items()))
    return 0 if wrong == 0 else 1


def pause(channel, rings):
    until = channel.cycles() + int(rings * channel.buffer_size * channel.buffer_count // BYTES_PER_CYCLE)
    while channel.cycles() < until:
        pass


def realtime(csr_json, size, every, rings, rate):
    with Channel(0, flow="realtime", directions=("c2h",), registers=csr_json, timeout=300) as channel:
        count = size // channel.buffer_size
        channel.register("pcie_dma0_user_select", 1)
        channel.register("user_core_rate", rate)
        channel._start("c2h")
        channel.register("user_core_enable", 1)
        buffers = []
        while len(buffers) < count:
            buffers += channel.read_buffers(min(every, count - len(buffers)))
            if len(buffers) < count:
                pause(channel, rings)
        channel.register("user_core_enable", 0)
        port_dropped = (channel.register("pcie_dma0_user_c2h_dropped") << 32) | \
            channel.register_word("pcie_dma0_user_c2h_dropped", 1)
        overruns = channel.register("user_core_overruns")
        channel.register("pcie_dma0_user_select", 0)
    wrong, expected, dropped, places = 0, 0, 0, 0
    for k, buffer in enumerate(buffers):
        counts = array.array("I", buffer.data)
        skipped = ((counts[0] - expected) & 0xffffffff) * 4
        wrong += (buffer.sequence != k) + (skipped != buffer.dropped)
        wrong += sum(1 for a, b in zip(counts, counts[1:]) if b != (a + 1) & 0xffffffff)
        dropped += buffer.dropped
        places += buffer.dropped > 0
        expected = (counts[-1] + 1) & 0xffffffff
    wrong += port_dropped < dropped or overruns != 0
    print(f"{len(buffers)} real-time buffers: {dropped} bytes dropped in {places} places by the headers, "
          f"{port_dropped} by the port's count, {overruns} core overruns: {wrong} things wrong")
    return 0 if wrong == 0 and places > 0 else 1


def packets(csr_json, size, rate, packet):
    with Channel(0, flow="packets", directions=("c2h",), registers=csr_json, timeout=300) as channel:
        channel.register("pcie_dma0_user_select", 1)
        channel.register("user_core_rate", rate)
        channel.register("user_core_packet", packet)
        channel._start("c2h")
        channel.register("user_core_enable", 1)
        got, total = [], 0
        while total < size:
            [p] = channel.read_packets(1)
            got.append(p)
            total += len(p)
        channel.register("user_core_enable", 0)
        overruns = channel.register("user_core_overruns")
        channel.register("user_core_packet", 0)
        channel.register("pcie_dma0_user_select", 0)
    lengths = sorted({len(p) for p in got})
    counts = array.array("I", b"".join(got))
    wrong = sum(1 for i, w in enumerate(counts) if w != i & 0xffffffff)
    wrong += len(lengths) != 1 or lengths[0] % packet != 0 or overruns != 0
    print(f"{len(got)} packets of {', '.join(map(str, lengths))} bytes ({packet} samples each) in packets "
          f"flow, {overruns} core overruns: {wrong} things wrong")
    return 0 if wrong == 0 else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
