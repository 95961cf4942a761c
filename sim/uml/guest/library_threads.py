#!/usr/bin/env python3
# This file is part of hostlink.
# Copyright (c) 2026 hostlink developers
# SPDX-License-Identifier: BSD-2-Clause

"""hostlink.host and libhostlink with threads, Ctrl-C, cancel and close under the real driver, inside the
User-Mode Linux of ./sim.py driver, as a member of the device's group (as_member.py), on a channel given
to the example accelerator (y = 3x + 0x1234 on 16-bit samples, accelerator_host.py --setup).

    library_threads.py CHANNEL          every check that leaves the core as it found it, Python then C
    library_threads.py CHANNEL stuck    closes whose data the core cannot take (nobody reads its results),
                                        Python then C: last, since what was taken stays in the core

- a reader thread and a writer thread on one Channel: the write, begun 100 ms after the read, does not
  wait for the read's timeout; every result right;
- cancel() ends another thread's read (HostlinkError ECANCELED, nothing received); a call begun after it
  runs to its own end; Ctrl-C (SIGINT) ends a blocking read with KeyboardInterrupt at once;
- a read that times out carries the bytes it received (`error.data`), right;
- read_into() and transfer(into=) receive straight into the program's own array;
- poll() on the channel (as asyncio's add_reader): writable at once for h2c; for c2h, quiet while nothing
  is sent, then woken by the DMA when results come;
- close right after a write sends all of it (another opener reads every result);
- the arguments a newcomer tries: timeout=None, directions="c2h", a register map that does not exist;
- stuck: a close whose data the core cannot take (its results' direction started by another opener and
  never read: once that ring is full the core stops) raises ETIMEDOUT after the timeout, saying how many
  bytes were not sent, and releases the channel all the same.

Then libhostlink's `hostlink_threads` checks the same from C (and a signal handler installed with
SA_RESTART ends a blocking call with EINTR, two threads that fail at once read their own errors). Prints
one line per check and exits 1 if any fails.
"""

import errno
import os
import signal
import struct
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", ".."))
from hostlink.host import Channel, HostlinkError   # noqa: E402

FAILED = []


def check(ok, message):
    print(f"{'ok' if ok else 'FAIL'}: {message}", flush=True)
    if not ok:
        FAILED.append(message)


def samples(count, seed):
    return struct.pack(f"<{count}H", *((i * 7 + seed * 131) & 0xffff for i in range(count)))


def wrong(x, y):
    """Results in `y` that are not the accelerator's y = 3x + 0x1234 of the samples `x`."""
    y = bytes(y[:len(x)]).ljust(len(x), b"\0")
    xs = struct.unpack(f"<{len(x) // 2}H", x)
    ys = struct.unpack(f"<{len(y) // 2}H", y)
    return sum(b != (3 * a + 0x1234) & 0xffff for a, b in zip(xs, ys))


def timed(function, *args):
    """(result or exception, seconds) of function(*args)."""
    began = time.monotonic()
    try:
        result = function(*args)
    except BaseException as error:   # noqa: B902 (KeyboardInterrupt is one of the results checked)
        result = error
    return result, time.monotonic() - began


def in_thread(function, *args):
    """Runs function(*args) in a thread; returns the thread and a list that will hold (result, seconds)."""
    outcome = []
    thread = threading.Thread(target=lambda: outcome.append(timed(function, *args)))
    thread.start()
    return thread, outcome


def reader_and_writer(channel):
    with Channel(channel, timeout=10) as ch:
        size = 16 * ch.buffer_size
        x = samples(size // 2, 1)
        thread, read = in_thread(ch.read, size)
        time.sleep(0.1)
        written, took = timed(ch.write, x)
        thread.join()
        results, read_took = read[0]
        ok = written is None and isinstance(results, bytes) and not wrong(x, results)
        check(ok and took < 5, f"a reader thread and a writer thread on one Channel: {size} bytes each way, the "
              f"write took {took:.1f} s, the read {read_took:.1f} s, "
              f"{wrong(x, results) if isinstance(results, bytes) else results!r} samples wrong")


def cancel_and_interrupt(channel):
    with Channel(channel, directions="c2h", timeout=10) as ch:
        thread, read = in_thread(ch.read, ch.buffer_size)
        time.sleep(0.3)
        ch.cancel()
        thread.join()
        error, took = read[0]
        check(isinstance(error, HostlinkError) and error.errno == errno.ECANCELED and took < 5 and error.data == b""
              and "cancelled" in str(error), f"cancel() ends another thread's read: {error!r} after {took:.1f} s")
        after, took = timed(ch.get_buffers, "c2h", None, 0.2)
        check(isinstance(after, HostlinkError) and after.errno == errno.ETIMEDOUT,
              f"a call begun after the cancel runs to its own end: {after!r}")
        # Ctrl-C: SIGINT 300 ms into a read with nothing coming.
        timer = threading.Timer(0.3, os.kill, [os.getpid(), signal.SIGINT])
        timer.start()
        interrupted, took = timed(ch.read, ch.buffer_size)
        timer.join()
        check(isinstance(interrupted, KeyboardInterrupt) and took < 5,
              f"Ctrl-C ends a blocking read: {interrupted!r} after {took:.1f} s")


def progress(channel):
    with Channel(channel, timeout=1) as ch:
        size = 2 * ch.buffer_size
        x = samples(size // 2, 2)
        ch.start()                          # Armed first: the results have somewhere to go.
        ch.write(x)
        error, _ = timed(ch.read, 2 * size)
        ok = isinstance(error, HostlinkError) and error.errno == errno.ETIMEDOUT and len(error.data) == size
        check(ok and not wrong(x, error.data) and error.sent == 0,
              f"a read that times out carries what it got: {len(getattr(error, 'data', b''))} of {2 * size} "
              f"bytes, {wrong(x, getattr(error, 'data', b''))} samples wrong: {error!r}")


def close_sends_everything(channel):
    with Channel(channel, directions="c2h", timeout=10) as reader:
        writer = Channel(channel, directions="h2c", timeout=10)
        size = 32 * writer.buffer_size
        x = samples(size // 2, 3)
        reader.start()
        writer.write(x)
        closed, _ = timed(writer.close)   # At once: most of it still in the ring.
        results, _ = timed(reader.read, size)
        check(closed is None and isinstance(results, bytes) and not wrong(x, results),
              f"close right after a write sends all of it: {size} bytes, close {closed!r}, "
              f"{wrong(x, results) if isinstance(results, bytes) else results!r} samples wrong")


def read_into(channel):
    """Results straight into the program's own array (array.array here; a numpy array the same), samples
    from a memoryview: no copy beyond the driver's."""
    import array
    with Channel(channel, timeout=10) as ch:
        size = 4 * ch.buffer_size
        x = samples(size // 2, 4)
        results = array.array("H", bytes(size))
        ch.start()
        ch.write(memoryview(x))
        got = ch.read_into(results)
        check(got == size and not wrong(x, results.tobytes()),
              f"read_into() an array of the program's: {got} bytes, {wrong(x, results.tobytes())} samples wrong")
        into = bytearray(size)
        back = ch.transfer(memoryview(x), into=into)
        check(back is into and not wrong(x, into), f"transfer(into=) a bytearray: {wrong(x, into)} samples wrong")


def events(channel):
    """poll() on a channel's file (what selectors and asyncio use): POLLOUT at once for h2c's free ring;
    for c2h, nothing while nothing is sent (300 ms), then woken by the DMA when a buffer sent 300 ms into
    the wait comes back through the core, its results right."""
    import select
    with Channel(channel, directions="c2h", timeout=10) as reader, \
            Channel(channel, directions="h2c", timeout=10) as writer:
        reader.start()
        room = select.poll()
        room.register(writer, select.POLLOUT)
        writable = room.poll(0)
        poller = select.poll()
        poller.register(reader, select.POLLIN)
        quiet = poller.poll(300)
        x = samples(writer.buffer_size // 2, 5)
        sender = threading.Timer(0.3, writer.write, [x])
        sender.start()
        woke, took = timed(poller.poll, 10000)
        sender.join()
        results = reader.read(reader.buffer_size) if woke else b""
        check(writable == [(writer.fileno(), select.POLLOUT)] and quiet == [] and woke
              and woke[0][1] & select.POLLIN and took < 5 and not wrong(x, results),
              f"poll() on the channel: h2c {writable}, c2h with nothing sent {quiet}, then woken by the DMA "
              f"{woke} after {took:.1f} s, {wrong(x, results)} samples wrong")


def arguments(channel):
    with Channel(channel, directions="c2h", timeout=None) as ch:
        check(ch.directions == ("c2h",) and ch.timeout is None,
              f"directions='c2h' and timeout=None: {ch.directions}, {ch.timeout}")
    missing, _ = timed(Channel, channel, "lossless", "c2h", 1, "no_such_csr.json")
    check(isinstance(missing, HostlinkError) and missing.errno == errno.ENOENT and "no register map" in str(missing),
          f"a register map that does not exist: {missing!r}")
    closed = Channel(channel, directions="c2h")
    closed.close()
    after, _ = timed(closed.read, closed.buffer_size)
    check(isinstance(after, HostlinkError) and after.errno == errno.EBADF, f"a channel used after close: {after!r}")
    bad, _ = timed(Channel, channel, "lossless", "c2h", 0)
    check(isinstance(bad, ValueError) and "timeout" in str(bad), f"a timeout of 0: {bad!r}")


def stuck(channel):
    # The results' direction started and never read: once its ring is full, the core stops taking samples.
    reader = Channel(channel, directions="c2h", timeout=0.5)
    reader.start()
    ch = Channel(channel, directions="h2c", timeout=0.5)
    ch.write(bytes(ch.buffer_count * ch.buffer_size))
    error, took = timed(ch.close)
    check(isinstance(error, HostlinkError) and error.errno == errno.ETIMEDOUT and "bytes written but not taken by "
          "the FPGA" in str(error) and took < 5 and ch.fd is None,
          f"a close whose data the core cannot take fails after its timeout: {error!r} after {took:.1f} s")
    again, _ = timed(Channel, channel, "lossless", "h2c", 0.5)
    check(isinstance(again, Channel), f"the channel was released all the same: {again!r}")
    if isinstance(again, Channel):
        again.close()
    reader.close()


def main(argv):
    if len(argv) not in (1, 2) or (len(argv) == 2 and argv[1] != "stuck"):
        print("usage: library_threads.py CHANNEL [stuck]", file=sys.stderr)
        return 2
    channel = int(argv[0])
    # Ctrl-C as at a terminal, whatever the shell that started this one left SIGINT as.
    signal.signal(signal.SIGINT, signal.default_int_handler)
    if len(argv) == 2:
        stuck(channel)
        c = subprocess.call(["hostlink_threads", str(channel), "stuck"])
    else:
        for checks in (reader_and_writer, cancel_and_interrupt, progress, close_sends_everything, read_into,
                       events, arguments):
            checks(channel)
        c = subprocess.call(["hostlink_threads", str(channel)])
    print(f"library threads{' (stuck)' if len(argv) == 2 else ''}: "
          f"{'all as expected' if not FAILED and not c else 'FAILED'}", flush=True)
    return 1 if FAILED or c else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
