# This file is part of hostlink.
# Copyright (c) 2026 hostlink developers
# SPDX-License-Identifier: BSD-2-Clause

"""Completion by user-level polling and device-cycle timing in LitePCIe's Linux driver, added to its
copied sources when the driver is generated (after hardening.py), for hostlink_bench.

    add_polling(kernel_dir)   patch main.c and litepcie.h; raise DriverPatchError naming the anchor
                              when LitePCIe's sources no longer have it.

LitePCIe 2024.12 learns how far a channel's DMA has got only in its MSI handler, which reads the loop
status register of that channel every DMA_BUFFER_PER_IRQ buffers. What changes:
- LITEPCIE_IOCTL_DMA_POLL {writer, reader} (new): the holder of a direction's lock turns its MSI off
  while that direction is stopped. A polled direction's counters are refreshed from its loop status
  (one register read, done by the driver) by the DMA_WRITER / DMA_READER ioctls, read() and write(),
  which do not sleep (-EAGAIN, as with O_NONBLOCK). So a process polls by calling the ioctl; it gets no
  register write and no bus address, as the hardening requires (register writes need CAP_SYS_RAWIO).
  Releasing the file turns polling off.
- LITEPCIE_IOCTL_CYCLES (new, SoCs with hostlink's cycle counter): latches and reads the 64-bit
  device-cycle counter (a write to `cycles_latch`, which nothing else depends on, then two reads,
  under the device's spinlock so that threads do not tear each other's value). Any user of the device
  may time.
- A direction in a flow mode (flow.py) is refreshed from its flow gate's count of buffers done,
  exact where the loop status is one buffer behind.
- A polled direction's refresh (its loop status read and the counters' update) holds the device's
  spinlock: any opener of the channel may refresh, and two refreshes at once would tear the 64-bit
  counts. A loop status whose buffer index is past the ring (the all-ones of a failed read: device
  gone, link down) changes no count: the call fails with -EIO.
- A non-blocking write() returned -EAGAIN when the DMA had read every buffer written (the ring empty)
  and went on when it was full: now -EAGAIN when the ring is full (half of it ahead of the DMA).
- The MSI enable register is read, modified and written under the device's spinlock: channels started
  from several threads at once lost each other's enable bit (a channel then waited for MSIs forever).
- The spinlock is taken with interrupts on (spin_lock, not spin_lock_irqsave): LitePCIe's MSI handler
  never takes it (it reads the MSI enable register but writes only the clear register and the
  counters of directions whose MSI is on, which no refresh touches), so an MSI on the CPU holding it
  cannot deadlock. (Under User-Mode Linux an MSI taken during a register read once corrupted the
  read, which this file worked around with interrupts off; that is fixed in virt-pci itself,
  sim/uml/linux/virt-pci-slow-device.patch.)
- Starting the reader (host -> FPGA) kept no buffer written before: its software count was cleared,
  while LitePCIe's reader in loop mode streams the ring from buffer 0 as soon as it is enabled. Now
  the count written before the start is kept, so a process fills the first half ring, then starts the
  DMA, and every buffer the DMA reads was written (LitePCIe's own tools write only after the start, for
  which nothing changes: the count is 0 then).
"""

from hostlink.software.driver.patches import DriverPatchError, apply_patches, load_patches

__all__ = ["POLLING_PATCHES", "add_polling", "DriverPatchError"]

# The changes, as C, in polling.patch.
POLLING_PATCHES, _ = load_patches("polling.patch")


def add_polling(kernel_dir, patches=None):
    """Apply POLLING_PATCHES to the (hardened) LitePCIe sources in `kernel_dir`; all or nothing."""
    apply_patches(kernel_dir, POLLING_PATCHES if patches is None else patches, kind="polling change")
    return kernel_dir
