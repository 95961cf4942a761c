#!/usr/bin/env python3
# This file is part of hostlink.
# Copyright (c) 2026 hostlink developers
# SPDX-License-Identifier: BSD-2-Clause

"""hostlink.host's failures under the real driver, inside the User-Mode Linux of ./sim.py driver.

    library_errors.py CSR_JSON [CHANNEL]

Runs as root, with the channel given to a core that gives nothing unless sent something (the example
accelerator); the device nodes are given to the group as the udev rule does. Each check is done by a
child process with a user's credentials, and must raise HostlinkError with the errno named and a message
saying what to do:

- outside the group: opening the channel is EACCES; a channel that does not exist is ENODEV;
- in the group: a direction another program holds is EBUSY (the other direction is free); a size that is
  not whole buffers and a bad direction are EINVAL; a read with nothing coming is ETIMEDOUT after the
  channel's timeout; a zero-copy get with no wait returns nothing, with a wait ETIMEDOUT; a copy while
  zero-copy buffers are held is EBUSY and giving back more than was got is EINVAL; a wait with nothing
  coming is ETIMEDOUT and leaves the MSIs enabled as they were; a register write is EPERM; nothing is sent
  to the core throughout;
- then a program waits for the core's results by interrupt: room to send is found without one; a reader
  waits for one buffer through the accelerator, sent a second later by another opener, and the kernel
  takes MSIs for it.

Then libhostlink's `hostlink_errors` checks the same from C (and a flow or timeout that does not exist,
a register not in the map). Prints one line per check and exits 1 if any fails.
"""

import errno
import os
import subprocess
import sys
import threading

from driver_access import GROUP_GID, MEMBER, OUTSIDER, as_user, give_nodes_to_group

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", ".."))
from hostlink.host import Channel, HostlinkError   # noqa: E402


def expect(what, code, function, words):
    """`function()` must raise HostlinkError `code` whose message has `words`."""
    try:
        function()
    except HostlinkError as error:
        if error.errno == code and words in str(error):
            print(f"ok: {what}: {errno.errorcode[code]}: {error.strerror}", flush=True)
            return 0
        print(f"FAIL: {what}: {error!r}, not {errno.errorcode[code]} with {words!r}", flush=True)
        return 1
    print(f"FAIL: {what}: no error, not {errno.errorcode[code]}", flush=True)
    return 1


def c_checks(who, channel):
    """The same from C: libhostlink's hostlink_errors (built with the library, on the run's PATH)."""
    return 1 if subprocess.call(["hostlink_errors", who, str(channel)]) else 0


def outsider_checks(channel):
    def run():
        return min(1, expect("outside the group: open", errno.EACCES, lambda: Channel(channel), "be a member") +
                   expect("a channel that does not exist", errno.ENODEV, lambda: Channel(99), "loaded?") +
                   c_checks("outsider", channel))
    return run


def member_checks(channel, registers):
    def run():
        failed = 0
        with Channel(channel, directions=("c2h",), timeout=0.5, registers=registers) as holder:
            failed += expect("c2h held by another opener", errno.EBUSY,
                             lambda: Channel(channel, directions=("c2h",)), "c2h held by another program")
            with Channel(channel, directions=("h2c",), timeout=0.5) as other:
                print(f"ok: h2c free while c2h is held ({other.buffer_count} buffers of {other.buffer_size} "
                      f"bytes)", flush=True)
                failed += expect("a write of part of a buffer", errno.EINVAL,
                                 lambda: other.write(bytes(100)), "whole")
                failed += expect("a read on a channel opened h2c only", errno.EINVAL,
                                 lambda: other.read(other.buffer_size), "opened for h2c only")
                failed += expect("a bad direction", errno.EINVAL, lambda: other.get_buffers("up"), "'h2c' or 'c2h'")
                held = other.get_buffers("h2c", 2)
                failed += expect("a copy while zero-copy buffers are held", errno.EBUSY,
                                 lambda: other.write(bytes(other.buffer_size)), "put_buffers()")
                failed += expect("giving back more than was got", errno.EINVAL,
                                 lambda: other.put_buffers("h2c", len(held) + 1), "got and not yet put")
                del held   # Never given back: the core is sent nothing.
            failed += expect("a read with nothing coming", errno.ETIMEDOUT,
                             lambda: holder.read(holder.buffer_size), "no progress for 0.5 s")
            empty = holder.get_buffers("c2h", timeout=0)
            print(f"{'ok' if empty == [] else 'FAIL'}: a zero-copy get without waiting: {len(empty)} buffers",
                  flush=True)
            failed += empty != []
            failed += expect("a zero-copy get with nothing coming", errno.ETIMEDOUT,
                             lambda: holder.get_buffers("c2h", timeout=0.3), "no buffer for 0.3 s")
            ready = holder.wait("c2h", timeout=0)
            print(f"{'ok' if ready == set() else 'FAIL'}: a wait without waiting: {ready}", flush=True)
            failed += ready != set()
            enable = holder.register("pcie_msi_enable")
            failed += expect("a wait with nothing coming", errno.ETIMEDOUT,
                             lambda: holder.wait("c2h", timeout=0.3), "no buffer for 0.3 s")
            after = holder.register("pcie_msi_enable")
            print(f"{'ok' if after == enable else 'FAIL'}: the MSIs enabled after a wait are those before it "
                  f"(0x{enable:x}, 0x{after:x})", flush=True)
            failed += after != enable
            failed += expect("a wait on a direction not opened", errno.EINVAL,
                             lambda: holder.wait("h2c", timeout=0), "opened for c2h only")
            failed += expect("a register write", errno.EPERM,
                             lambda: holder.register("user_core_throttle", 0), "CAP_SYS_RAWIO")
        failed += c_checks("member", channel)
        return min(failed + interrupt_checks(channel), 1)
    return run


def interrupts():
    """MSIs the kernel has taken for litepcie (/proc/interrupts), or None without such a line."""
    counts = [line.split(":", 1)[1].split() for line in open("/proc/interrupts") if "litepcie" in line]
    return sum(int(n) for fields in counts for n in fields if n.isdigit()) if counts else None


def interrupt_checks(channel):
    """A program waits for the accelerator's results by interrupt, not by polling: room to send is found
    without an MSI (a program never short of work takes none); then a reader waits for results that are
    sent only a second after it began, by another opener of the channel's h2c, so that they cannot be
    there before it sleeps: the kernel takes MSIs for them and the reader gets every byte."""
    failed = 0
    with Channel(channel, directions=("c2h",), timeout=30) as reader, \
            Channel(channel, directions=("h2c",)) as writer:
        before = interrupts()
        ready = writer.wait("h2c", timeout=0)
        quiet = interrupts()
        print(f"{'ok' if ready == {'h2c'} and quiet == before else 'FAIL'}: room to send, found without "
              f"sleeping: {ready}, MSIs {before} -> {quiet}", flush=True)
        failed += ready != {"h2c"} or quiet != before
        data = bytes(range(256)) * (writer.buffer_size // 256)
        sender = threading.Timer(1.0, writer.write, [data])
        sender.start()
        try:
            results = reader.read(len(data))
        finally:
            sender.join()
        after = interrupts()
        woken = before is not None and after > quiet
        print(f"{'ok' if woken and len(results) == len(data) else 'FAIL'}: one buffer through the core, its "
              f"{len(results)} bytes of results waited for by interrupt: MSIs {quiet} -> {after}", flush=True)
        failed += not woken or len(results) != len(data)
    return failed


def main(argv):
    if len(argv) not in (1, 2):
        print("usage: library_errors.py CSR_JSON [CHANNEL]", file=sys.stderr)
        return 2
    registers, channel = os.path.abspath(argv[0]), int(argv[1]) if len(argv) == 2 else 0
    give_nodes_to_group()
    failed = as_user(*OUTSIDER, [], outsider_checks(channel))
    failed += as_user(*MEMBER, [GROUP_GID], member_checks(channel, registers))
    print(f"library errors: {'all as expected' if not failed else 'FAILED'}", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
