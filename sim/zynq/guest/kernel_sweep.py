#!/usr/bin/env python3
# This file is part of hostlink.
# Copyright (c) 2026 hostlink developers
# SPDX-License-Identifier: BSD-2-Clause

"""Seed 003's loop-back sweep through its kernel-level driver: Linux's xilinx_dma through hostlink's dmaengine
client (/dev/hostlink_dma, software/zynq/hostlink_dma_client.c), by interrupt.

    kernel_sweep.py BLOCK SIZE [SIZE ...]

The same calls as `dma_user_test --sweep BLOCK SIZE ...` (software/zynq/dma_user_test.c), in the same order: for
each SIZE, single buffer Unique (the whole size in one transfer, or in the fewest the client's buffers hold),
and for sizes over BLOCK up to 16 blocks, Blocks (BLOCK bytes a transfer) single and double buffered. Each
call's bytes are checked. One "call:" line each; exits 1 if any failed. The client marks each call's beginning
and end in the simulation's cost device, and charges its system call, copies and cache maintenance there.
"""

import array
import ctypes
import fcntl
import os
import sys

from dma_client_test import HOSTLINK_DMA_TRANSFER, TRANSFER

BUFFER_SIZE = "/sys/module/hostlink_dma_client/parameters/buffer_size"
BLOCKS_UP_TO = 16      # Blocks modes up to 16 blocks, as dma_user_test's sweep.


def data(size, seed):
    """dma_client_test.py's sequence (a 32-bit multiplicative one), built in an array: 6 MiB fit in the
    machine's memory beside the client's buffers."""
    words = (size + 3) // 4
    return array.array("I", ((i * 2654435761 + seed) & 0xffffffff for i in range(words))).tobytes()[:size]


def call(fd, size, mode, chunk, buffers, seed):
    sent = ctypes.create_string_buffer(data(size, seed), size)
    received = ctypes.create_string_buffer(size)
    request = bytearray(TRANSFER.pack(ctypes.addressof(sent), ctypes.addressof(received), size, chunk, buffers,
                                      120_000, 0, 0, 0, 0))
    try:
        fcntl.ioctl(fd, HOSTLINK_DMA_TRANSFER, request)
        ok = sent.raw == received.raw
    except OSError as error:
        print(f"call failed: {error}", file=sys.stderr)
        ok = False
    chunks, waited, copies = TRANSFER.unpack(request)[7:]
    print(f"call: driver=kernel size={size} mode={mode} chunk={chunk} buffers={buffers} chunks={chunks} "
          f"interrupts={waited} copies={copies} {'ok' if ok else 'FAIL'}", flush=True)
    return ok


def main(argv):
    if len(argv) < 3:
        print(__doc__.strip().splitlines()[3].strip(), file=sys.stderr)
        return 2
    block, sizes = int(argv[1], 0), [int(a, 0) for a in argv[2:]]
    with open(BUFFER_SIZE) as f:
        most = int(f.read()) & ~7
    if block <= 0 or block % 8 or block > most:
        print(f"BLOCK must be a multiple of 8 bytes the client's {most}-byte buffers hold, not {block}",
              file=sys.stderr)
        return 2
    if any(size <= 0 or size % 8 for size in sizes):
        print(f"each SIZE must be a positive multiple of 8 bytes: {sizes}", file=sys.stderr)
        return 2
    ok = True
    fd = os.open("/dev/hostlink_dma", os.O_RDWR)
    try:
        for i, size in enumerate(sizes, 1):
            ok &= call(fd, size, "unique", min(size, most), 1, i)
            if block < size <= BLOCKS_UP_TO * block:
                ok &= call(fd, size, "blocks", block, 1, 1000 + i)
                ok &= call(fd, size, "blocks", block, 2, 2000 + i)
    finally:
        os.close(fd)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
