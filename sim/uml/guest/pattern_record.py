#!/usr/bin/env python3
# This file is part of hostlink.
# Copyright (c) 2026 hostlink developers
# SPDX-License-Identifier: BSD-2-Clause

"""Record a DMA channel's pattern generator with LitePCIe's `litepcie_test record` and check every word.

Runs inside the User-Mode Linux of ./sim.py driver, against /dev/litepcie0 (LitePCIe's driver). The
generator and the loopback are hostlink CSRs, which LitePCIe's tools do not know: they are written through
the driver's register ioctl, at the addresses of the SoC's csr.json.

    pattern_record.py CSR_JSON BYTES [CHANNEL]

With the loopback off and the generator counting from 0 (hostlink.cores.pcie.dma_pattern), the recorded
file must hold the 32-bit little-endian words 0, 1, 2, ...; exits 1 at the first word that is not.
"""

import array
import fcntl
import json
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))))
from hostlink.protocol import IOCTLS   # noqa: E402

# struct litepcie_ioctl_reg {uint32_t addr; uint32_t val; uint8_t is_write;}: LITEPCIE_IOCTL_REG.
REG = IOCTLS["REG"].layout
LITEPCIE_IOCTL_REG = IOCTLS["REG"].request


class Registers:
    def __init__(self, device, csr_json):
        with open(csr_json) as f:
            self.map = json.load(f)["csr_registers"]
        self.fd = os.open(device, os.O_RDWR)

    def write(self, name, value):
        fcntl.ioctl(self.fd, LITEPCIE_IOCTL_REG, bytearray(REG.pack(self.map[name]["addr"], value, 1)))

    def read(self, name):
        buf = bytearray(REG.pack(self.map[name]["addr"], 0, 0))
        fcntl.ioctl(self.fd, LITEPCIE_IOCTL_REG, buf)
        return REG.unpack(buf)[1]


def main(argv):
    if len(argv) not in (2, 3):
        print("usage: pattern_record.py CSR_JSON BYTES [CHANNEL]", file=sys.stderr)
        return 2
    csr_json, size, channel = argv[0], int(argv[1]), int(argv[2]) if len(argv) == 3 else 0
    regs = Registers(f"/dev/litepcie{channel}", csr_json)
    prefix = f"pcie_dma{channel}"
    regs.write(f"{prefix}_loopback_enable", 0)
    regs.write(f"{prefix}_generator_control", 0)
    regs.write(f"{prefix}_generator_length", 0)   # Without end: the recording stops the stream.
    path = os.path.abspath(f"record{channel}.bin")
    record = subprocess.Popen(["litepcie_test", "-c", str(channel), "record", path, str(size)])
    time.sleep(2)   # The writer is armed (its first ioctl) before the generator starts counting.
    regs.write(f"{prefix}_generator_control", 1)
    code = record.wait()
    regs.write(f"{prefix}_generator_control", 0)
    if code != 0:
        print(f"litepcie_test record exited with {code}")
        return 1
    words = array.array("I")
    with open(path, "rb") as f:
        words.frombytes(f.read())
    if len(words) * 4 != size:
        print(f"recorded {len(words) * 4} bytes, not {size}")
        return 1
    for i, word in enumerate(words):
        if word != i:
            print(f"word {i} is 0x{word:08x}, not 0x{i:08x}")
            return 1
    print(f"{size} bytes recorded from the pattern generator, every word checked: 0 errors")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
