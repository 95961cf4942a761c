# This file is part of hostlink.
# Copyright (c) 2026 hostlink developers
# SPDX-License-Identifier: BSD-2-Clause

"""The PS model's defaults, once: what `./sim.py zynq`, the Linux run (`./sim.py driver --board zc706 --ps7`)
and sim/zynq/models/memory.py's PSMemory take unless told otherwise.

150 MHz logic (the PS's FCLK0), 200 ns from a read burst's address to its first beat, 100 ns from a write's last
beat to its response, 8 bursts in flight each way, 1,200 MB/s each way (UG585's figure for one HP port).
"""

PS_MODEL = {
    "clock_hz":         150e6,
    "read_latency_ns":  200.0,
    "write_latency_ns": 100.0,
    "max_reads":        8,
    "max_writes":       8,
    "rate_bytes_per_s": 1200e6,
}
