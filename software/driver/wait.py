# This file is part of hostlink.
# Copyright (c) 2026 hostlink developers
# SPDX-License-Identifier: BSD-2-Clause

"""Waiting for a polled DMA direction by interrupt: LITEPCIE_IOCTL_DMA_WAIT, added to LitePCIe's copied
driver sources when the driver is generated (after polling.py, flow.py, stats.py and removal.py).

    add_wait(kernel_dir)   patch main.c and litepcie.h; raise DriverPatchError naming the anchor when
                           LitePCIe's sources no longer have it.

A polled direction (polling.py) has its MSI off, and a program that finds nothing to do must ask
again later: hostlink's library slept 200 µs between asks. LitePCIe's own MSI path cannot simply be
switched back on for it: it raises an MSI only every DMA_BUFFER_PER_IRQ (32) buffers, so a program waiting
for the one buffer an accelerator sends back would sleep until its timeout; and its handler counts from
the loop status, one buffer behind the flow gate's exact count, so it would move a flow mode's counts
backwards. What changes:

- LITEPCIE_IOCTL_DMA_WAIT {timeout_ms, writer_held, reader_held, writer, reader} (new): the holder of a
  started, polled direction sleeps until that direction has a buffer for it (writer, FPGA to host: one
  filled beyond the buffers it has read and those it holds by zero-copy; reader, host to FPGA: one free,
  fewer than half the ring written ahead of the DMA), or `timeout_ms` passes (-ETIMEDOUT). With both
  directions it returns when either has one, and says which (`writer_ready`, `reader_ready`). A signal
  whose handler runs ends it with -EINTR, even a handler installed with SA_RESTART (-ERESTARTNOHAND, as
  select() does: a program's blocking call ends on Ctrl-C or its alarm); a board removed under it, -ENODEV.
- LITEPCIE_IOCTL_DMA_CANCEL (new): sets the open file's cancel count. DMA_WAIT carries the count its
  caller saw when its call began (`cancel`) and ends at once with -ECANCELED while the file's differs, so
  that another thread of the program ends a blocking call (hostlink_cancel(), Channel.cancel()), whether
  it is asleep in the driver or about to be.
- poll() (select, epoll, asyncio) on a polled direction (new; LitePCIe's counted only what its MSI
  handler had last refreshed, which hostlink's polled directions never do): ready as DMA_WAIT counts it,
  for the opener that holds the direction, from the DMA's own count; not ready, the direction's MSI is
  armed before the count is read, and the next poll that finds it ready disarms it. Level-triggered.
- A polled direction's descriptors each raise the DMA's interrupt at their buffer's end (LitePCIe's:
  every 32nd). Its MSI is enabled only while a program sleeps in DMA_WAIT, counted per direction under
  the device's spinlock: a program that keeps up never takes an interrupt, one that waits takes one.
  The MSI is enabled before the waiter first looks at the counts, so a buffer finished after that look
  wakes it (LitePCIe's MSI core drops events it is not enabled for).
- The MSI handler leaves a polled direction's counts alone and wakes its waiter, which refreshes them
  as every polled call does (in a flow mode from the flow gate's exact count).

In loop flow the refresh counts from the loop status, one buffer behind: there a waiter wakes one buffer
late, which a DMA that never stops (loop mode) makes good at its next buffer.
"""

from hostlink.software.driver.patches import DriverPatchError, apply_patches, load_patches

__all__ = ["WAIT_PATCHES", "add_wait", "DriverPatchError"]

# The changes, as C, in wait.patch.
WAIT_PATCHES, _ = load_patches("wait.patch")


def add_wait(kernel_dir, patches=None):
    """Apply WAIT_PATCHES to the (hardened, polled, flow, stats, removal) LitePCIe sources in `kernel_dir`;
    all or nothing."""
    apply_patches(kernel_dir, WAIT_PATCHES if patches is None else patches, kind="wait change")
    return kernel_dir
