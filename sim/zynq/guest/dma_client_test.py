#!/usr/bin/env python3
# This file is part of hostlink.
# Copyright (c) 2026 hostlink developers
# SPDX-License-Identifier: BSD-2-Clause

"""Loop a buffer through the Zynq SoC's AXI DMA by Linux's xilinx_dma driver, through hostlink's dmaengine
client (/dev/hostlink_dma, software/zynq/hostlink_dma_client.c), and check every byte.

    dma_client_test.py BYTES CHUNK BUFFERS [BUFFERS ...]
    dma_client_test.py --errors
    dma_client_test.py --queued          (the DMA in scatter-gather mode)
    dma_client_test.py --sg-errors       (the DMA in scatter-gather mode)

For each BUFFERS (1: single buffering, 2: double), sends BYTES out through MM2S while S2MM takes them back
(the SoC's streams loop MM2S into S2MM), CHUNK bytes per DMA transfer; the bytes received must be the bytes
sent. Prints one "ok:" line per run with what the client counted (chunks, interrupts waited for, copies) and
the kernel's count of the DMA's interrupts (/proc/interrupts), or a "FAIL:" line; exits 1 if any run failed.

--errors: a chunk larger than the client's buffers is refused (EINVAL); a slave error on a read and on a write
(the simulation's HP0 model answers the next burst SLVERR when the file hp0_fault in the current folder says
"read" or "write"): xilinx_dma logs the channel's errors and stops it; its descriptor never completes, so the
client's wait ends at its timeout (ETIMEDOUT) and it terminates the channels, which resets them; the next
transfer must be clean. One "ok:" or "FAIL:" line each.

--queued (HOSTLINK_DMA_QUEUE): 8 packets each way submitted before waiting, each packet over two descriptors,
every byte checked and every residue 0; then 4 packets shorter than their S2MM buffers: each buffer's residue
(from the descriptors' STATUS, through xilinx_dma's callback) gives the packet's length.

--sg-errors: as --errors, on the descriptors: the next read burst on HP0 answered SLVERR, then DECERR (S2MM's
descriptor fetch, the first read of a queued call: SGSlvErr 0x200, SGDecErr 0x400 in xilinx_dma's log), and
the next write burst SLVERR (S2MM's data: DMASlvErr 0x20); each call ends ETIMEDOUT (xilinx_dma completes
nothing of a failed chain), and the next queued call is clean.
"""

import re

import ctypes
import errno
import fcntl
import os
import subprocess
import sys
import time

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
sys.path.insert(0, REPO)
# The client's ioctls, defined once (hostlink.protocol; test_protocol.py checks hostlink_dma_client.h against it).
from hostlink.protocol import AXI_DMA_CLIENT_IOCTLS, AXI_DMA_CLIENT_QUEUE_MAX as QUEUE_MAX   # noqa: E402

TRANSFER, QUEUE = AXI_DMA_CLIENT_IOCTLS["TRANSFER"].layout, AXI_DMA_CLIENT_IOCTLS["QUEUE"].layout
HOSTLINK_DMA_TRANSFER, HOSTLINK_DMA_QUEUE = AXI_DMA_CLIENT_IOCTLS["TRANSFER"].request, AXI_DMA_CLIENT_IOCTLS["QUEUE"].request


def dma_interrupts():
    """The kernel's count of xilinx_dma's interrupts (its two channels), from /proc/interrupts."""
    total = 0
    with open("/proc/interrupts") as f:
        for line in f:
            if "xilinx-dma-controller" in line:
                total += sum(int(field) for field in line.split()[1:] if field.isdigit())
    return total


def data(size, seed):
    """`size` bytes that differ from run to run and from word to word (a 32-bit multiplicative sequence)."""
    words = (size + 3) // 4
    return b"".join(((i * 2654435761 + seed) & 0xffffffff).to_bytes(4, "little") for i in range(words))[:size]


def loop(fd, size, chunk, buffers, seed, timeout_ms=120_000):
    sent = ctypes.create_string_buffer(data(size, seed), size)
    received = ctypes.create_string_buffer(size)
    request = bytearray(TRANSFER.pack(ctypes.addressof(sent), ctypes.addressof(received), size, chunk, buffers,
                                      timeout_ms, 0, 0, 0, 0))
    before = dma_interrupts()
    fcntl.ioctl(fd, HOSTLINK_DMA_TRANSFER, request)
    taken = dma_interrupts() - before
    chunks, waited, copies = TRANSFER.unpack(request)[7:]
    wrong = sum(1 for a, b in zip(sent.raw, received.raw) if a != b)
    return chunks, waited, copies, taken, wrong


def queued(fd, count, tx_length, rx_length, seed, timeout_ms=60_000):
    """`count` packets of `tx_length` bytes out, `count` buffers of `rx_length` back, all queued before waiting.
    Returns (completions, complete, residues, bytes wrong in what came back)."""
    sent = ctypes.create_string_buffer(data(count * tx_length, seed), count * tx_length)
    received = ctypes.create_string_buffer(count * rx_length)
    request = bytearray(QUEUE.pack(ctypes.addressof(sent), ctypes.addressof(received), tx_length, rx_length, count,
                                   timeout_ms, 0, 0, *[0] * QUEUE_MAX))
    fcntl.ioctl(fd, HOSTLINK_DMA_QUEUE, request)
    fields = QUEUE.unpack(request)
    completions, complete, residues = fields[6], fields[7], list(fields[8:8 + count])
    wrong = sum(sent.raw[i*tx_length:(i + 1)*tx_length] != received.raw[i*rx_length:i*rx_length + tx_length]
                for i in range(count))
    return completions, complete, residues, wrong


def queued_runs(fd):
    failed = False
    for count, tx_length, rx_length in [(8, 4096, 4096), (4, 1000, 4096)]:
        what = f"{count} packets of {tx_length} bytes into buffers of {rx_length}"
        try:
            completions, complete, residues, wrong = queued(fd, count, tx_length, rx_length, count)
        except OSError as error:
            print(f"FAIL: queued, {what}: {error}")
            failed = True
            continue
        ok = completions == complete == 2 * count and not wrong and residues == [rx_length - tx_length] * count
        failed |= not ok
        print(f"{'ok' if ok else 'FAIL'}: queued: {what}, submitted before waiting, {wrong} packets wrong; "
              f"{completions} completions by callback, {complete} cookies DMA_COMPLETE; residues {residues} "
              f"(received {[rx_length - r for r in residues]} bytes)")
    return failed


def logged_errors():
    """The DMASR error bits of each "Channel ... has errors" line xilinx_dma logged, in order."""
    return [int(m, 16) for m in re.findall(r"has errors ([0-9a-f]+),", kernel_log())]


def provoke(kind, faulty, clean, what):
    """Arm the HP0 model's fault `kind`, make the call `faulty()` meet it, then the call `clean()`. Returns how the
    faulty call ended (its errno's name, or "it completed"), the DMASR error bits xilinx_dma logged meanwhile, and
    the clean call's result (None, said, when it failed)."""
    before = len(logged_errors())
    arm_fault(kind)
    try:
        faulty()
        outcome = "it completed"
    except OSError as error:
        outcome = errno.errorcode.get(error.errno, str(error.errno))
    logged = logged_errors()[before:]
    try:
        result = clean()
    except OSError as error:
        result = None
        print(f"FAIL: after {what}, the next call failed: {error}")
    return outcome, logged, result


def sg_errors(fd):
    failed = False
    for seed, (kind, name, bits) in enumerate([("read", "SGSlvErr", 0x200), ("read-decerr", "SGDecErr", 0x400),
                                               ("write", "DMASlvErr", 0x20)], start=80):
        outcome, logged, clean = provoke(kind, lambda: queued(fd, 1, 4096, 4096, seed, timeout_ms=20_000),
                                         lambda: queued(fd, 4, 4096, 4096, seed + 10), kind)
        clean_ok = clean is not None and clean[3] == 0 and clean[2] == [0] * 4
        ok = outcome == "ETIMEDOUT" and logged == [bits] and clean_ok
        failed |= not ok
        print(f"{'ok' if ok else 'FAIL'}: HP0 answering the next {kind} burst with an error: the call ended {outcome}, "
              f"xilinx_dma logged errors {[hex(b) for b in logged]} ({name} is {bits:#x}); the next 4 queued packets "
              f"{'were clean' if clean_ok else 'were not clean'}")
    return failed


def arm_fault(kind):
    """Ask the simulation's HP0 model to answer the next `kind` burst SLVERR (kind "read-decerr" or
    "write-decerr": DECERR); wait until it has taken the file."""
    with open("hp0_fault", "w") as f:
        f.write(kind)
    for _ in range(6000):
        if not os.path.exists("hp0_fault"):
            return
        time.sleep(0.01)
    raise RuntimeError("hp0_fault: the simulation did not take it")


def kernel_log():
    return subprocess.run(["dmesg"], capture_output=True, text=True).stdout


def errors(fd):
    failed = False
    with open("/sys/module/hostlink_dma_client/parameters/buffer_size") as f:
        largest = int(f.read())
    try:
        loop(fd, 8, 2 * largest, 1, 50)
        print(f"FAIL: a chunk of {2 * largest} bytes (the client's buffers hold {largest}) was taken")
        failed = True
    except OSError as error:
        ok = error.errno == errno.EINVAL
        failed |= not ok
        print(f"{'ok' if ok else 'FAIL'}: a chunk of {2 * largest} bytes (the client's buffers hold {largest}): "
              f"{errno.errorcode.get(error.errno, error.errno)}")
    for seed, kind in enumerate(("read", "write"), start=60):
        channel = "MM2S" if kind == "read" else "S2MM"
        outcome, logged, clean = provoke(kind, lambda: loop(fd, 4096, 4096, 1, seed, timeout_ms=20_000),
                                         lambda: loop(fd, 64 << 10, 64 << 10, 1, seed + 10), f"a slave error on a {kind}")
        clean_ok = clean is not None and clean[4] == 0
        ok = outcome == "ETIMEDOUT" and logged == [0x20] and clean_ok
        failed |= not ok
        print(f"{'ok' if ok else 'FAIL'}: a slave error on a {kind} ({channel}): the call ended {outcome}, xilinx_dma "
              f"logged the channel's errors {[hex(b) for b in logged]} (DMASlvErr is 0x20); the next 65536 bytes each "
              f"way {'were clean' if clean_ok else 'were not clean'}")
    return failed


def main(argv):
    modes = {"--errors": errors, "--queued": queued_runs, "--sg-errors": sg_errors}
    if len(argv) == 1 and argv[0] in modes:
        fd = os.open("/dev/hostlink_dma", os.O_RDWR)
        try:
            return 1 if modes[argv[0]](fd) else 0
        finally:
            os.close(fd)
    size, chunk, runs = int(argv[0]), int(argv[1]), [int(b) for b in argv[2:]]
    failed = False
    fd = os.open("/dev/hostlink_dma", os.O_RDWR)
    for seed, buffers in enumerate(runs, start=1):
        name = "single" if buffers == 1 else "double"
        try:
            chunks, waited, copies, taken, wrong = loop(fd, size, chunk, buffers, seed)
        except OSError as error:
            print(f"FAIL: {name} buffering, {size} bytes in chunks of {chunk}: {error}")
            failed = True
            continue
        expected = -(-size // chunk)
        if wrong or chunks != expected or waited != 2 * expected:
            print(f"FAIL: {name} buffering, {size} bytes in chunks of {chunk}: {wrong} bytes wrong, {chunks} chunks "
                  f"of {expected}, {waited} completions")
            failed = True
        else:
            print(f"ok: {name} buffering: {size} bytes each way in {chunks} chunks of {chunk}, every byte checked; "
                  f"{waited} completions by interrupt, {taken} DMA interrupts taken, {copies} copies")
    os.close(fd)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
