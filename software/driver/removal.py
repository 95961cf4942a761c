# This file is part of hostlink.
# Copyright (c) 2026 hostlink developers
# SPDX-License-Identifier: BSD-2-Clause

"""A board removed while programs hold its channels: applied to LitePCIe's driver when it is generated.

    add_removal(kernel_dir)   patch main.c; DriverPatchError names the anchor LitePCIe's sources lost.

A board leaves the driver without its module being unloaded: PCI hot removal (a surprise unplug, a
Thunderbolt enclosure), `echo 1 > /sys/bus/pci/devices/<address>/remove`, or unbinding the driver. LitePCIe
2024.12's remove stops the DMA and deletes the device nodes, then returns, and the kernel frees the board's
state (devm_kzalloc), unmaps its BAR (pcim_iomap) and frees the DMA buffers (dmam_alloc_coherent) while a
program may still hold a channel open: its next call, or its close, reads freed memory and writes an
unmapped BAR (User-Mode Linux's logic_iomem warned of it here), and its mapped ring may now be someone
else's memory. With these changes:

- from the removal on, every call on the board's channels fails with -ENODEV (read, write, ioctl, mmap;
  poll says POLLERR | POLLHUP), sleepers are woken to see it, and the board opens no more;
- the removal waits, once the device nodes are gone, until the last program has closed its channel (a
  mapped ring holds its file until unmapped), logging every 10 s whom it waits for; only then is the board's
  state freed. hostlink's library turns -ENODEV into "the board is gone: close the channel".

Waiting in a removal is the price of never freeing what a program still uses; a program that holds a
channel and never calls the driver again holds the removal back, and the log says so.
"""

from hostlink.software.driver.patches import apply_patches, load_patches

__all__ = ["PATCHES", "add_removal"]

# The changes, as C, in removal.patch.
PATCHES, _ = load_patches("removal.patch")


def add_removal(kernel_dir, patches=None):
    """Apply PATCHES to the driver's sources in `kernel_dir` (after hostlink's other changes, whose lines
    some anchors include); all or nothing."""
    apply_patches(kernel_dir, PATCHES if patches is None else patches, kind="removal change")
    return kernel_dir
