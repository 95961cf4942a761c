#!/usr/bin/env python3
# This file is part of hostlink.
# Copyright (c) 2026 hostlink developers
# SPDX-License-Identifier: BSD-2-Clause

"""The round trip of one small message, host -> FPGA -> host, through hostlink.host: its latency in device
cycles. Runs as root (it selects the channel's path) inside the User-Mode Linux of ./sim.py driver, or on a
board with the driver loaded.

    round_trip.py CSR_JSON PATHS COUNT [JSON]

PATHS: `loopback` (the DMA's internal loopback: channel 0's `select` 0, `loopback_enable` 1) and/or
`accelerator` (the example user core, examples/accelerator.py: `select` 1; needs a SoC built with
`--user-core examples.accelerator:Accelerator`), comma-separated. The message is one buffer of the
driver's ring (`buffer_size` bytes: the smallest a write moves today), in lossless flow, the c2h DMA armed
by the first wait or read, after the first write (what came back meanwhile waited for it). Each of COUNT round trips, after one that is not counted (it starts the h2c DMA):

    t0 = cycles(); write(message); <wait for the result>; read_into(result); t1 = cycles()

- poll: the program asks the driver until the result is there (`wait("c2h", timeout=0)`: each ask makes
  the driver read the flow gate's count of buffers done, one read across the link);
- irq: `read_into()` at once: it finds nothing and sleeps in the driver until the DMA's MSI (the library's
  own wait, software/driver/wait.py).

Every result is checked (loopback: the message itself; accelerator: y = (a*x + b) mod 2^16). Prints per
path and completion the minimum, median and maximum in device cycles and in microseconds at the SoC's
clock (csr.json's `config_clock_frequency`), and the cost of the timing itself (`cycles()` twice in a
row: its latch write and two reads), which every figure includes once. JSON: the same, and every sample.
Exits 1 if a result was wrong.
"""

import json
import os
import random
import statistics
import sys

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
sys.path.insert(0, REPO)
from hostlink.host import Channel   # noqa: E402
from examples.accelerator_host import expected   # noqa: E402

A, B = 3, 0x1234   # The accelerator's y = (a*x + b) mod 2^16.


def select(csr_json, path):
    """Give channel 0 to the DMA's loopback or to the accelerator (register writes: root)."""
    with Channel(0, directions=("c2h",), flow="loop", registers=csr_json) as channel:
        if path == "loopback":
            channel.register("pcie_dma0_user_select", 0)
            channel.register("pcie_dma0_loopback_enable", 1)
        else:
            channel.register("pcie_dma0_loopback_enable", 0)
            channel.register("pcie_dma0_user_select", 1)
            channel.register("user_core_a", A)
            channel.register("user_core_b", B)
            channel.register("user_core_throttle", 0)


def round_trips(channel, path, completion, count, seed):
    """COUNT + 1 round trips of one buffer each; returns (cycles of the last COUNT, results wrong)."""
    rng, result, wrong, samples = random.Random(seed), bytearray(channel.buffer_size), 0, []
    for i in range(count + 1):
        message = rng.randbytes(channel.buffer_size)
        t0 = channel.cycles()
        channel.write(message)
        if completion == "poll":
            while not channel.wait("c2h", timeout=0):
                pass
        channel.read_into(result)
        t1 = channel.cycles()
        if i:
            samples.append(t1 - t0)
        wrong += result != (message if path == "loopback" else expected(message, A, B))
    return samples, wrong


def main(argv):
    if len(argv) not in (3, 4):
        print("usage: round_trip.py CSR_JSON loopback|accelerator[,...] COUNT [JSON]", file=sys.stderr)
        return 2
    csr_json, paths, count = argv[0], argv[1].split(","), int(argv[2])
    if any(p not in ("loopback", "accelerator") for p in paths) or count < 1:
        print(f"round_trip.py: paths are loopback and accelerator, COUNT at least 1, not {argv[1:3]}",
              file=sys.stderr)
        return 2
    with open(csr_json) as f:
        clock = json.load(f)["constants"]["config_clock_frequency"]
    report, failed = {"clock_hz": clock, "runs": []}, False
    for path in paths:
        select(csr_json, path)
        with Channel(0, flow="lossless", timeout=60) as channel:
            # Not armed first: lossless flow holds what reaches the c2h DMA before it runs (flow.py,
            # hold_writer_input), so the first message, written before the first read, comes back whole.
            floor = []
            for _ in range(count):
                t0 = channel.cycles()
                floor.append(channel.cycles() - t0)
            report["timing_cycles"] = statistics.median(floor)
            report["message_bytes"] = channel.buffer_size
            for completion in ("poll", "irq"):
                samples, wrong = round_trips(channel, path, completion, count, seed=len(report["runs"]))
                run = {"path": path, "completion": completion, "count": count, "wrong": wrong,
                       "min": min(samples), "median": statistics.median(samples), "max": max(samples),
                       "samples": samples}
                report["runs"].append(run)
                failed |= wrong > 0
                us = [run[k] / clock * 1e6 for k in ("min", "median", "max")]
                print(f"round trip {path} {completion}: {channel.buffer_size} bytes, {count} times: "
                      f"min {run['min']} median {run['median']:.0f} max {run['max']} cycles = "
                      f"{us[0]:.2f} / {us[1]:.2f} / {us[2]:.2f} us at {clock / 1e6:.0f} MHz; {wrong} wrong")
    print(f"timing itself (cycles() twice): {report['timing_cycles']:.0f} cycles = "
          f"{report['timing_cycles'] / clock * 1e6:.2f} us, included once in each figure")
    if len(argv) == 4:
        with open(argv[3], "w") as f:
            json.dump(report, f, indent=1)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
