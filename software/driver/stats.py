# This file is part of hostlink.
# Copyright (c) 2026 hostlink developers
# SPDX-License-Identifier: BSD-2-Clause

"""A channel's counters in one call: LITEPCIE_IOCTL_STATS, added to LitePCIe's copied driver sources when
the driver is generated (after flow.py).

    add_stats(kernel_dir)   patch main.c and litepcie.h; raise DriverPatchError naming the anchor when
                            LitePCIe's sources no longer have it.

LitePCIe's driver keeps each direction's buffers done by the DMA (`hw_count`) and served by the program
(`sw_count`), and says "Reading/Writing too late, N buffers lost" in the kernel log only. The stats ioctl
gives any opener of the channel, per direction (writer: FPGA to host; reader: host to FPGA), since the
direction's last start:

- `hw_count`, `sw_count`: buffers done and served; a running direction's `hw_count` is refreshed first
  (as a polled one is: from the flow gate's exact count in a flow mode);
- `lost`, `lost_events`: buffers read() or write() found lost (loop mode only; the flow modes make the DMA
  wait) and the calls that found them: the sum of the kernel log's messages;
- `level`, `level_max`: buffers waiting for the program (writer: done and not read; reader: written and
  not yet read by the DMA), now and the most it found when it came to serve (read(), write(), the
  DMA_WRITER/_READER ioctls through which a zero-copy program learns the counts) or asked for the stats;
- `flow`, `enabled`;
- the DMA's own counts from its flow gate (hostlink.cores.pcie.flow: buffers given, in a flow mode only;
  started, done, cycles a buffer waited for the host), 0 on a SoC without flow gates;
- the ring: buffer count and size.
"""

from hostlink.software.driver.patches import DriverPatchError, apply_patches, load_patches

__all__ = ["STATS_PATCHES", "add_stats", "DriverPatchError"]

# The changes, as C, in stats.patch.
STATS_PATCHES, _ = load_patches("stats.patch")


def add_stats(kernel_dir, patches=None):
    """Apply STATS_PATCHES to the (hardened, polled, flow) LitePCIe sources in `kernel_dir`; all or nothing."""
    apply_patches(kernel_dir, STATS_PATCHES if patches is None else patches, kind="stats change")
    return kernel_dir
