#!/usr/bin/env python3
# This file is part of hostlink.
# Copyright (c) 2026 hostlink developers
# SPDX-License-Identifier: BSD-2-Clause

"""The host side of the example accelerator (examples/accelerator.py): samples out, results back, every
result checked. Copy it to start your program.

    accelerator_host.py --setup --registers csr.json     # once, as root: the channel to the core, a and b
    accelerator_host.py --size 1M                         # as a member of the device's group
    accelerator_host.py --size 1M --zero-copy             # the same in the driver's ring, in place

It needs Python and the driver only (hostlink.host, no compiler, no numpy): in the simulation,

    ./sim.py driver --board zc706 --user-core examples.accelerator:Accelerator -- \\
        sh -c "python3 $PWD/examples/accelerator_host.py --setup --registers csr.json && \\
               python3 $PWD/examples/accelerator_host.py --size 1M"

(from the repository's root: ./sim.py driver runs its commands in a folder holding the SoC's csr.json,
so they name the program by its full path, which your shell fills in).
"""

import argparse
import array
import os
import random
import sys
import time

try:
    from hostlink.host import Channel, HostlinkError
except ImportError:   # Run from a checkout: the repository's root holds the package.
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    from hostlink.host import Channel, HostlinkError


def expected(samples, a, b):
    """y = (a*x + b) mod 2**16 on each 16-bit little-endian signed sample (the core's model)."""
    x = array.array("h", samples)
    if sys.byteorder != "little":
        x.byteswap()
    y = array.array("H", [((a * v + b) & 0xffff) for v in x])
    if sys.byteorder != "little":
        y.byteswap()
    return y.tobytes()


def zero_copy(channel, samples):
    """Samples written straight into the driver's h2c buffers, results taken from its c2h buffers
    (get_buffers/put_buffers): sends while there is room, waits for results only when it cannot send."""
    size, total = channel.buffer_size, len(samples) // channel.buffer_size
    results, sent, got = bytearray(len(samples)), 0, 0
    channel.start("c2h")                                       # Armed first: it waits for results.
    while got < total:
        views = channel.get_buffers("h2c", total - sent, timeout=0) if sent < total else []
        for view in views:
            view[:] = samples[sent*size:(sent + 1)*size]
            sent += 1
        channel.put_buffers("h2c")
        for view in channel.get_buffers("c2h", total - got, timeout=0 if views and sent < total else None):
            results[got*size:(got + 1)*size] = view
            got += 1
        channel.put_buffers("c2h")
    return bytes(results)


def parse_size(text):
    scale = {"K": 1 << 10, "M": 1 << 20}.get(text[-1:].upper(), 1)
    return int(text[:-1] if scale > 1 else text) * scale


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.strip().splitlines()[0])
    p.add_argument("--channel", type=int, default=0, help="The core's DMA channel's device node, /dev/litepcie<N> "
        "(default 0); the numbers go on across boards: `python3 hostlink/host.py` lists each board's.")
    p.add_argument("--size", type=parse_size, default=1 << 20, help="Bytes of samples (default 1M).")
    p.add_argument("--a", type=int, default=3, help="Multiplier a, set by --setup (default 3).")
    p.add_argument("--b", type=int, default=0x1234, help="Addend b, set by --setup (default 0x1234).")
    p.add_argument("--setup", action="store_true",
        help="As root: give the channel to the core (pcie_dma<N>_user_select) and set a and b, then exit.")
    p.add_argument("--registers", default="csr.json", help="The SoC's csr.json or csr.h (for --setup).")
    p.add_argument("--zero-copy", action="store_true",
        help="Samples written and results read in the driver's ring, in place (get_buffers/put_buffers).")
    p.add_argument("--seed", type=int, default=1)
    args = p.parse_args(argv)
    try:
        if args.setup:
            with Channel(args.channel, directions=("c2h",), flow="loop", registers=args.registers) as channel:
                # The channel's number on its board (the node's number counts across boards).
                channel.register(f"pcie_dma{channel.index}_user_select", 1)
                channel.register("user_core_a", args.a & 0xffff)
                channel.register("user_core_b", args.b & 0xffff)
                channel.register("user_core_throttle", 0)
                board = f", board {channel.board}" if channel.board else ""
            print(f"channel {channel.index} to the accelerator, a = {args.a}, b = {args.b} ({channel.path}{board})")
            return 0
        samples = random.Random(args.seed).randbytes(args.size)
        with Channel(args.channel, flow="lossless", timeout=120) as channel:
            start, cycles = time.monotonic(), channel.cycles()
            results = zero_copy(channel, samples) if args.zero_copy else channel.transfer(samples)
            seconds, cycles = time.monotonic() - start, channel.cycles() - cycles
    except HostlinkError as error:
        print(f"accelerator_host.py: {error}", file=sys.stderr)
        return 1
    want = expected(samples, args.a, args.b)
    wrong = sum(1 for got, good in zip(results, want) if got != good) + abs(len(results) - len(want))
    print(f"{args.size} bytes through the accelerator and back{' zero-copy' if args.zero_copy else ''} in "
          f"{seconds:.3f} s, {cycles} device cycles: {wrong} bytes wrong ({channel.path})")
    return 0 if wrong == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
