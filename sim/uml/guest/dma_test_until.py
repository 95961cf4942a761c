#!/usr/bin/env python3
# This file is part of hostlink.
# Copyright (c) 2026 hostlink developers
# SPDX-License-Identifier: BSD-2-Clause

"""Run LitePCIe's `litepcie_util dma_test` until it has checked a given amount of data, then stop it as
Ctrl-C does (it cleans up and exits 0). Runs inside the User-Mode Linux of ./sim.py driver, where the
data rate depends on the machine: a fixed duration would check a varying amount.

    dma_test_until.py CHECK_BYTES SKIPPED_BUFFERS BUFFER_SIZE -- litepcie_util [-z] dma_test

dma_test prints, every 200 ms, the buffers sent and received and the errors; it checks data only
after SKIPPED_BUFFERS received buffers (128 loops of the ring). Its output is passed through.
"""

import re
import signal
import subprocess
import sys

ANSI = re.compile(r"\x1b\[[0-9;]*m")


def main(argv):
    if len(argv) < 5 or argv[3] != "--":
        print("usage: dma_test_until.py CHECK_BYTES SKIPPED_BUFFERS BUFFER_SIZE -- CMD ...", file=sys.stderr)
        return 2
    check_bytes, skipped, buffer_size = (int(a) for a in argv[:3])
    target = skipped + -(-check_bytes // buffer_size)
    # Line-buffered, so each statistics line arrives as printed.
    proc = subprocess.Popen(["stdbuf", "-oL", *argv[4:]], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
        text=True, errors="replace")
    stopping = False
    for line in proc.stdout:
        sys.stdout.write(line)
        sys.stdout.flush()
        fields = ANSI.sub("", line).split()
        if not stopping and len(fields) == 5 and all(re.fullmatch(r"-?[0-9.]+", f) for f in fields):
            if int(fields[2]) >= target:
                proc.send_signal(signal.SIGINT)
                stopping = True
    return proc.wait()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
