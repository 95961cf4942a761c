# This file is part of hostlink.
# Copyright (c) 2026 hostlink developers
# SPDX-License-Identifier: BSD-2-Clause

"""What the benches expect the SoC to move: the counting pattern (hostlink.cores.pcie.dma_pattern's generator
and checker, examples/stream_source.py's counts) and how many bytes of a result differ from what was expected.
The dma, stream and fault jobs all take them from here."""

import struct

__all__ = ["count_pattern", "mismatched_bytes"]


def count_pattern(size):
    """`size` bytes of 32-bit little-endian counts from 0."""
    words = (size + 3) // 4
    return struct.pack(f"<{words}I", *[i & 0xffffffff for i in range(words)])[:size]


def mismatched_bytes(got, expected):
    """Bytes of `got` that differ from `expected`, and any missing or extra at the end."""
    return sum(1 for a, b in zip(got, expected) if a != b) + abs(len(got) - len(expected))
