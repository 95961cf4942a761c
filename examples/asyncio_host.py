#!/usr/bin/env python3
# This file is part of hostlink.
# Copyright (c) 2026 hostlink developers
# SPDX-License-Identifier: BSD-2-Clause

"""The example accelerator (examples/accelerator.py: y = a*x + b on 16-bit samples, a = 3 and b = 0x1234
set by `accelerator_host.py --setup`) from an asyncio program: the channel is one more file of the event
loop. Samples go out a buffer at a time when the driver has room (`loop.add_writer`), results come in a
buffer at a time when the DMA has filled one (`loop.add_reader`), each woken by the DMA's interrupt, while
the loop's other tasks run (here a ticker that counts the loop's turns). Copy it to start your own.

    python3 asyncio_host.py --size 262144 [--channel 0]     as a member of the device's group

Pure standard library, as hostlink.host: it runs where the driver is loaded.
"""

import argparse
import asyncio
import os
import struct
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from hostlink.host import Channel, HostlinkError   # noqa: E402


def make_samples(size):
    return struct.pack(f"<{size // 2}H", *((i * 7 + 11) & 0xffff for i in range(size // 2)))


def wrong_results(samples, results):
    xs = struct.unpack(f"<{len(samples) // 2}H", samples)
    ys = struct.unpack(f"<{len(results) // 2}H", results)
    return sum(y != (3 * x + 0x1234) & 0xffff for x, y in zip(xs, ys))


async def stream(channel, samples, timeout):
    """Sends `samples` and receives as many bytes of results, a buffer per event; returns the results and
    the loop's turns meanwhile."""
    loop = asyncio.get_running_loop()
    size, total = channel.buffer_size, len(samples) // channel.buffer_size
    results = bytearray(len(samples))
    sent = got = 0
    done = loop.create_future()

    def can_send():                     # An h2c buffer is free: this write does not wait.
        nonlocal sent
        channel.write(memoryview(samples)[sent * size:(sent + 1) * size])
        sent += 1
        if sent == total:
            loop.remove_writer(channel)

    def can_receive():                  # A c2h buffer is filled: this read does not wait.
        nonlocal got
        channel.read_into(memoryview(results)[got * size:(got + 1) * size])
        got += 1
        if got == total:
            loop.remove_reader(channel)
            done.set_result(None)

    turns = 0

    async def ticker():
        nonlocal turns
        while not done.done():
            turns += 1
            await asyncio.sleep(0)

    channel.start("c2h")                # Armed first: the results have somewhere to go.
    loop.add_writer(channel, can_send)
    loop.add_reader(channel, can_receive)
    tick = asyncio.ensure_future(ticker())
    try:
        await asyncio.wait_for(done, timeout)
    finally:
        loop.remove_writer(channel)
        loop.remove_reader(channel)
        await tick
    return bytes(results), turns


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--size", type=int, default=262144, help="Bytes out and back (whole buffers).")
    p.add_argument("--channel", type=int, default=0, help="DMA channel (default 0).")
    p.add_argument("--timeout", type=float, default=30.0, help="Seconds for the whole stream.")
    args = p.parse_args(argv)
    try:
        with Channel(args.channel, timeout=5) as channel:
            if args.size <= 0 or args.size % channel.buffer_size:
                p.error(f"--size must be a positive multiple of {channel.buffer_size} bytes")
            samples = make_samples(args.size)
            began = time.monotonic()
            results, turns = asyncio.run(stream(channel, samples, args.timeout))
            took = time.monotonic() - began
    except (HostlinkError, asyncio.TimeoutError) as error:
        print(f"asyncio_host: {error or 'the stream did not end in time'}", file=sys.stderr)
        return 1
    wrong = wrong_results(samples, results)
    print(f"{args.size} bytes through the accelerator from asyncio in {took:.2f} s, {turns} turns of the loop's "
          f"other task meanwhile: {wrong} samples wrong")
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main())
