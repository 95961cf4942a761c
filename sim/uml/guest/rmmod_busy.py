#!/usr/bin/env python3
# This file is part of hostlink.
# Copyright (c) 2026 hostlink developers
# SPDX-License-Identifier: BSD-2-Clause

"""`rmmod` while LitePCIe's `dma_test` streams, inside the User-Mode Linux of ./sim.py driver.

    rmmod_busy.py CSR_JSON [CHANNEL]      (the module: $HOSTLINK_LITEPCIE_KO, set by the run's init)

1. `litepcie_util dma_test` runs on the channel (loopback, both directions) until it has moved a ring's
   worth of buffers;
2. `rmmod litepcie` must be refused (the open device holds the module) while the DMA goes on;
3. dma_test is killed (SIGKILL: no clean-up of its own; the driver's release must stop the DMA);
4. `rmmod litepcie` must then succeed (the driver's remove stops every channel and frees the ring);
5. the module is loaded again and the channel's reader and writer must be found disabled, and the
   device must answer (scratch register).
Prints one line per step; exits 1 at the first that fails. The module is left loaded.
"""

import os
import re
import signal
import subprocess
import sys

from pattern_record import Registers

ANSI = re.compile(r"\x1b\[[0-9;]*m")


def rx_buffers(line):
    fields = ANSI.sub("", line).split()
    if len(fields) == 5 and all(re.fullmatch(r"-?[0-9.]+", f) for f in fields):
        return int(fields[2])
    return None


def wait_buffers(proc, count):
    for line in proc.stdout:
        n = rx_buffers(line)
        if n is not None and n >= count:
            return n
    return None


def main(argv):
    if len(argv) not in (1, 2) or "HOSTLINK_LITEPCIE_KO" not in os.environ:
        print("usage: HOSTLINK_LITEPCIE_KO=litepcie.ko rmmod_busy.py CSR_JSON [CHANNEL]", file=sys.stderr)
        return 2
    csr_json, module = argv[0], os.environ["HOSTLINK_LITEPCIE_KO"]
    channel = int(argv[1]) if len(argv) == 2 else 0
    dma = subprocess.Popen(["stdbuf", "-oL", "litepcie_util", "-c", str(channel), "dma_test"],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, errors="replace")
    seen = wait_buffers(dma, 64)
    if seen is None:
        print(f"FAIL: dma_test ended before moving a ring of buffers (exit {dma.wait()})")
        return 1
    print(f"ok: dma_test running ({seen} buffers received)", flush=True)
    rmmod = subprocess.run(["rmmod", "litepcie"], capture_output=True, text=True)
    if rmmod.returncode == 0:
        print("FAIL: rmmod succeeded while dma_test held the device")
        return 1
    print(f"ok: rmmod refused while the DMA runs (exit {rmmod.returncode}: {rmmod.stderr.strip()})", flush=True)
    more = wait_buffers(dma, seen + 16)
    if more is None:
        print("FAIL: the DMA stopped after the refused rmmod")
        return 1
    print(f"ok: the DMA went on ({more} buffers received)", flush=True)
    dma.send_signal(signal.SIGKILL)
    dma.wait()
    print("ok: dma_test killed (SIGKILL)", flush=True)
    rmmod = subprocess.run(["rmmod", "litepcie"], capture_output=True, text=True)
    if rmmod.returncode != 0:
        print(f"FAIL: rmmod after dma_test was killed: exit {rmmod.returncode}: {rmmod.stderr.strip()}")
        return 1
    print("ok: rmmod", flush=True)
    insmod = subprocess.run(["insmod", module], capture_output=True, text=True)
    if insmod.returncode != 0:
        print(f"FAIL: insmod after rmmod: exit {insmod.returncode}: {insmod.stderr.strip()}")
        return 1
    regs   = Registers(f"/dev/litepcie{channel}", csr_json)
    prefix = f"pcie_dma{channel}"
    # Bit 0 is the enable; bit 1 reads back whether the engine is idle.
    enables = {name: regs.read(f"{prefix}_{name}_enable") & 1 for name in ("reader", "writer")}
    regs.write("ctrl_scratch", 0x5a5a0001)
    scratch = regs.read("ctrl_scratch")
    os.close(regs.fd)
    if any(enables.values()) or scratch != 0x5a5a0001:
        print(f"FAIL: after reload: enables {enables}, scratch 0x{scratch:08x}")
        return 1
    print(f"ok: reloaded; reader and writer of channel {channel} disabled, device answers", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
