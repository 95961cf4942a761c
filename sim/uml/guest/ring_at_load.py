#!/usr/bin/env python3
# This file is part of hostlink.
# Copyright (c) 2026 hostlink developers
# SPDX-License-Identifier: BSD-2-Clause

"""The DMA ring chosen when litepcie.ko loads (software/driver/ring.py), inside the User-Mode Linux of
./sim.py driver (as root; the module: $HOSTLINK_LITEPCIE_KO, set by the run's init).

    ring_at_load.py COUNT SIZE

1. the module unloaded, each impossible ring (a count of 0, 3 or 512, a size of 1000, 2048 or 16 MiB, a
   ring over 1 GiB) is refused: insmod fails and one line of the kernel log says why;
2. loaded with dma_buffer_count=COUNT dma_buffer_size=SIZE: the parameters read back in
   /sys/module/litepcie/parameters, and a channel's ring (hostlink.host, from the driver) is COUNT x SIZE;
3. LitePCIe's own tool, built for config.h's ring, refuses another in one line (litepcie_util dma_test).
The streams on that ring are the caller's (the accelerator's examples). Prints one line per step; exits 1
at the first that fails. The module is left loaded with that ring.
"""

import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", ".."))
from hostlink.host import Channel   # noqa: E402

IMPOSSIBLE = [("dma_buffer_count=0",), ("dma_buffer_count=3",), ("dma_buffer_count=512",),
              ("dma_buffer_size=1000",), ("dma_buffer_size=2048",), ("dma_buffer_size=16777216",),
              ("dma_buffer_count=256", "dma_buffer_size=8388608")]


def kernel_log():
    return subprocess.run(["dmesg"], capture_output=True, text=True, check=True).stdout.splitlines()


def fail(message):
    print(f"FAIL: {message}", flush=True)
    return 1


def main(argv):
    if len(argv) != 2 or "HOSTLINK_LITEPCIE_KO" not in os.environ:
        print("usage: HOSTLINK_LITEPCIE_KO=litepcie.ko ring_at_load.py COUNT SIZE", file=sys.stderr)
        return 2
    count, size = int(argv[0]), int(argv[1])
    module = os.environ["HOSTLINK_LITEPCIE_KO"]
    subprocess.run(["rmmod", "litepcie"], check=True)
    for parameters in IMPOSSIBLE:
        before = len(kernel_log())
        insmod = subprocess.run(["insmod", module, *parameters], capture_output=True, text=True)
        lines = [line for line in kernel_log()[before:] if "litepcie" in line]
        if insmod.returncode == 0:
            subprocess.run(["rmmod", "litepcie"])
            return fail(f"insmod {' '.join(parameters)} succeeded")
        if len(lines) != 1:
            return fail(f"insmod {' '.join(parameters)}: {len(lines)} kernel log lines, not one: {lines}")
        print(f"ok: {' '.join(parameters)} refused: {lines[0].split('] ', 1)[-1]}", flush=True)
    subprocess.run(["insmod", module, f"dma_buffer_count={count}", f"dma_buffer_size={size}"], check=True)
    read_back = {}
    for name in ["dma_buffer_count", "dma_buffer_size"]:
        with open(f"/sys/module/litepcie/parameters/{name}") as f:
            read_back[name] = int(f.read())
    if read_back != {"dma_buffer_count": count, "dma_buffer_size": size}:
        return fail(f"the parameters read back as {read_back}")
    with Channel(0, flow="lossless") as channel:
        geometry = (channel.buffer_count, channel.buffer_size)
    if geometry != (count, size):
        return fail(f"a channel's ring is {geometry[0]} x {geometry[1]}, not {count} x {size}")
    print(f"ok: loaded with a ring of {count} buffers of {size} bytes; a channel's ring is {geometry[0]} x "
          f"{geometry[1]}", flush=True)
    util = subprocess.run(["litepcie_util", "dma_test"], capture_output=True, text=True, timeout=60)
    refusal = [line for line in util.stderr.splitlines() if "DMA ring" in line]
    if util.returncode == 0 or len(refusal) != 1:
        return fail(f"litepcie_util dma_test on another ring: exit {util.returncode}, {util.stderr!r}")
    print(f"ok: litepcie_util refuses it: {refusal[0]}", flush=True)
    print("ring at load: all as expected", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
