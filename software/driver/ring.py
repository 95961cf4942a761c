# This file is part of hostlink.
# Copyright (c) 2026 hostlink developers
# SPDX-License-Identifier: BSD-2-Clause

"""The DMA ring chosen when the module loads: applied to LitePCIe's copied driver sources when the driver
is generated (the last change set).

    choose_ring(kernel_dir)           patch main.c; DriverPatchError names the anchor LitePCIe's sources lost.
    refuse_another_ring(user_dir)     liblitepcie (LitePCIe's tools) refuses a ring it was not built for.

LitePCIe fixes each channel's ring when the driver is generated: DMA_BUFFER_COUNT buffers of
DMA_BUFFER_SIZE bytes each way (256 x 8 KiB), in config.h. Now they are the defaults of two module
parameters,

    insmod litepcie.ko dma_buffer_count=64 dma_buffer_size=65536

read once when the module loads (0444: /sys/module/litepcie/parameters/ shows them) and checked there:
the count a power of two from 2 to the DMA's descriptor table depth (256, LitePCIe's `table_depth`: the
loop mode holds the whole ring in the table), the size a power of two from the page size to 8 MiB (a
descriptor's length has 24 bits; every framed flow's header and MPS alignment hold for any of them), and
the ring at most 1 GiB each way. A value outside is refused in one line of the kernel log and the module
does not load (EINVAL). The driver's code keeps LitePCIe's names (DMA_BUFFER_COUNT, DMA_BUFFER_SIZE,
DMA_BUFFER_PER_IRQ are the parameters' variables in main.c), so every other change set holds for any
ring. A channel's buffer tables are sized for the largest ring.

The geometry reaches programs through LITEPCIE_IOCTL_MMAP_DMA_INFO (libhostlink, hostlink.host,
hostlink_bench read it there). LitePCIe's own tools (litepcie_util, litepcie_test, liblitepcie) keep the
compiled ring: with another one loaded they are refused at start with one line, as is any program built
against config.h's values (`litepcie_dma_init`).

LitePCIe's MSI every DMA_BUFFER_PER_IRQ (32) buffers (the unpolled path, LitePCIe's tools) becomes every
max(1, min(32, count / 8)) buffers: at least eight a loop, as LitePCIe's 32 in 256; the default rings are
unchanged.

LitePCIe's loop mode never waits for software, so a small ring leaves a program little time: in
simulation hostlink_bench's loopback (loop mode) lost data on rings of 4 to 16 buffers, once in six runs
on 32 x 4 KiB, and ran clean on 32 x 16 KiB and from 64 buffers up. hostlink's flows (lossless, real-time,
packets) wait for the program and run on any ring (test_host_api.py streams lossless on 16 x 16 KiB).
"""

import os

from hostlink.software.driver.patches import DriverPatchError, apply_patches, load_patches, patch_file

__all__ = ["RING_PATCHES", "choose_ring", "refuse_another_ring", "DriverPatchError"]

# The changes, as C, in ring.patch.
RING_PATCHES, _ = load_patches("ring.patch")

# The bounds are written once, in ring.patch's enum; test_driver.py checks its table depth against LitePCIeDMA's
# (cores/pcie/integration.py keeps LitePCIe's default).


def choose_ring(kernel_dir, patches=None):
    """Apply RING_PATCHES to the LitePCIe sources in `kernel_dir` (after every other change set); all or
    nothing."""
    apply_patches(kernel_dir, RING_PATCHES if patches is None else patches, kind="ring change")
    return kernel_dir


# liblitepcie's litepcie_dma_init, after the device is opened and before the DMA is requested.
LIBLITEPCIE_FILE   = os.path.join("liblitepcie", "litepcie_dma.c")
LIBLITEPCIE_ANCHOR = "    /* request dma reader and writer */\n"
LIBLITEPCIE_CHECK  = """\
    /* hostlink (software/driver/ring.py): this library runs the ring config.h gives it; the driver may
     * have been loaded with another. */
    {
        struct litepcie_ioctl_mmap_dma_info ring;
        checked_ioctl(dma->fds.fd, LITEPCIE_IOCTL_MMAP_DMA_INFO, &ring);
        if (ring.dma_tx_buf_count != DMA_BUFFER_COUNT || ring.dma_tx_buf_size != DMA_BUFFER_SIZE) {
            fprintf(stderr, "%s: the driver's DMA ring is %u buffers of %u bytes, this program was built for "
                    "%d of %d: load litepcie.ko without dma_buffer_count/dma_buffer_size\\n", device_name,
                    (unsigned)ring.dma_tx_buf_count, (unsigned)ring.dma_tx_buf_size, DMA_BUFFER_COUNT,
                    DMA_BUFFER_SIZE);
            close(dma->fds.fd);
            dma->fds.fd = -1;
            return -1;
        }
    }

"""


def refuse_another_ring(user_dir):
    """Make liblitepcie in `user_dir` (LitePCIe's user tools: litepcie_util, litepcie_test) refuse, in one
    line, a driver loaded with another ring than the config.h it is built with."""
    patch_file(os.path.join(user_dir, LIBLITEPCIE_FILE), LIBLITEPCIE_ANCHOR, LIBLITEPCIE_CHECK + LIBLITEPCIE_ANCHOR,
               "liblitepcie's DMA refuses another ring")
    return user_dir
