# This file is part of hostlink.
# Copyright (c) 2026 hostlink developers
# SPDX-License-Identifier: BSD-2-Clause

"""Completion by user-level polling and device-cycle timing in LitePCIe's Linux driver, added to its
copied sources when the driver is generated (after driver_hardening), for hostlink_bench.

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
- A direction in a flow mode (driver_flow.py) is refreshed from its flow gate's count of buffers done,
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
  software/uml/virt-pci-slow-device.patch.)
- Starting the reader (host -> FPGA) kept no buffer written before: its software count was cleared,
  while LitePCIe's reader in loop mode streams the ring from buffer 0 as soon as it is enabled. Now
  the count written before the start is kept, so a process fills the first half ring, then starts the
  DMA, and every buffer the DMA reads was written (LitePCIe's own tools write only after the start, for
  which nothing changes: the count is 0 then).
"""

from hostlink.software.driver_patches import DriverPatchError, apply_patches

__all__ = ["POLLING_PATCHES", "add_polling", "DriverPatchError"]

_EINVAL = "{\n\t\t\tret = -EINVAL;\n\t\t\tbreak;\n\t\t}\n"


def _refresh(direction):
    """The MSI handler's update of one direction's counters from its loop status, as a function."""
    reg = direction.upper()
    return (
        f"static int hostlink_{direction}_refresh(struct litepcie_device *s, struct litepcie_chan *chan)\n"
        f"{{\n"
        f"\tuint32_t loop_status;\n"
        f"\n"
        f"\t/* Any opener of the channel may refresh: the read and the counters' update as one. */\n"
        f"\tspin_lock(&s->lock);\n"
        f"\tloop_status = litepcie_readl(s, chan->dma.base + PCIE_DMA_{reg}_TABLE_LOOP_STATUS_OFFSET);\n"
        f"\t/* A read that failed (device gone, link down) gives all-ones: no buffer index. */\n"
        f"\tif ((loop_status & 0xffff) >= DMA_BUFFER_COUNT) {{\n"
        f"\t\tspin_unlock(&s->lock);\n"
        f"\t\treturn -EIO;\n"
        f"\t}}\n"
        f"#ifdef PCIE_DMA_{reg}_FLOW_DONE_OFFSET\n"
        f"\t/* A gated direction (driver_flow.py) counts exactly the buffers done: the flow gate's fenced\n"
        f"\t * count (the loop status names the last buffer done, one behind, and is ambiguous at 0). */\n"
        f"\tif (chan->dma.{direction}_flow) {{\n"
        f"\t\tuint32_t done = litepcie_readl(s, chan->dma.base + PCIE_DMA_{reg}_FLOW_DONE_OFFSET);\n"
        f"\t\tchan->dma.{direction}_hw_count += (uint32_t)(done - (uint32_t)chan->dma.{direction}_hw_count);\n"
        f"\t\tspin_unlock(&s->lock);\n"
        f"\t\treturn 0;\n"
        f"\t}}\n"
        f"#endif\n"
        f"\tchan->dma.{direction}_hw_count &= ((~(DMA_BUFFER_COUNT - 1) << 16) & 0xffffffffffff0000);\n"
        f"\tchan->dma.{direction}_hw_count |= (loop_status >> 16) * DMA_BUFFER_COUNT + (loop_status & 0xffff);\n"
        f"\tif (chan->dma.{direction}_hw_count_last > chan->dma.{direction}_hw_count)\n"
        f"\t\tchan->dma.{direction}_hw_count += (1 << (ilog2(DMA_BUFFER_COUNT) + 16));\n"
        f"\tchan->dma.{direction}_hw_count_last = chan->dma.{direction}_hw_count;\n"
        f"\tspin_unlock(&s->lock);\n"
        f"\treturn 0;\n"
        f"}}\n\n")


POLLING_PATCHES = [
    ("litepcie.h", "ioctls: DMA_POLL and CYCLES",
     "#define LITEPCIE_IOCTL_MMAP_DMA_READER_UPDATE    _IOW(LITEPCIE_IOCTL,  27, struct litepcie_ioctl_mmap_dma_update)\n",
     "#define LITEPCIE_IOCTL_MMAP_DMA_READER_UPDATE    _IOW(LITEPCIE_IOCTL,  27, struct litepcie_ioctl_mmap_dma_update)\n"
     "\n"
     "/* hostlink: completion by polling (1: that direction's MSI off, its counters read from the\n"
     " * DMA's loop status by the ioctls, read() and write()), and the device-cycle counter. */\n"
     "struct litepcie_ioctl_dma_poll {\n"
     "\tuint8_t writer;\n"
     "\tuint8_t reader;\n"
     "};\n"
     "\n"
     "struct litepcie_ioctl_cycles {\n"
     "\tuint64_t cycles;\n"
     "};\n"
     "\n"
     "#define LITEPCIE_IOCTL_DMA_POLL                  _IOW(LITEPCIE_IOCTL,  40, struct litepcie_ioctl_dma_poll)\n"
     "#define LITEPCIE_IOCTL_CYCLES                    _IOR(LITEPCIE_IOCTL,  41, struct litepcie_ioctl_cycles)\n"),

    ("main.c", "channel state: polled directions",
     "\tuint8_t writer_lock;\n\tuint8_t reader_lock;\n};\n",
     "\tuint8_t writer_lock;\n\tuint8_t reader_lock;\n"
     "\tuint8_t writer_poll; /* hostlink: MSI off, counters refreshed from the loop status. */\n"
     "\tuint8_t reader_poll;\n};\n"),

    ("main.c", "MSI enable: read-modify-write under the device lock",
     "\tv = litepcie_readl(s, CSR_PCIE_MSI_ENABLE_ADDR);\n\n"
     "\t/* Set the bit corresponding to the given interrupt number */\n"
     "\tv |= (1 << irq_num);\n\n"
     "\t/* Write the updated value back to the register */\n"
     "\tlitepcie_writel(s, CSR_PCIE_MSI_ENABLE_ADDR, v);\n",
     "\t/* hostlink: channels are started from several threads. */\n"
     "\tspin_lock(&s->lock);\n"
     "\tv = litepcie_readl(s, CSR_PCIE_MSI_ENABLE_ADDR);\n"
     "\tv |= (1 << irq_num);\n"
     "\tlitepcie_writel(s, CSR_PCIE_MSI_ENABLE_ADDR, v);\n"
     "\tspin_unlock(&s->lock);\n"),

    ("main.c", "MSI disable: read-modify-write under the device lock",
     "\tv = litepcie_readl(s, CSR_PCIE_MSI_ENABLE_ADDR);\n\n"
     "\t/* Clear the bit corresponding to the given interrupt number */\n"
     "\tv &= ~(1 << irq_num);\n\n"
     "\t/* Write the updated value back to the register */\n"
     "\tlitepcie_writel(s, CSR_PCIE_MSI_ENABLE_ADDR, v);\n",
     "\t/* hostlink: channels are stopped from several threads. */\n"
     "\tspin_lock(&s->lock);\n"
     "\tv = litepcie_readl(s, CSR_PCIE_MSI_ENABLE_ADDR);\n"
     "\tv &= ~(1 << irq_num);\n"
     "\tlitepcie_writel(s, CSR_PCIE_MSI_ENABLE_ADDR, v);\n"
     "\tspin_unlock(&s->lock);\n"),

    ("main.c", "reader start keeps the buffers written before it",
     "\t/* Clear counters */\n"
     "\tdmachan->reader_hw_count = 0;\n"
     "\tdmachan->reader_hw_count_last = 0;\n"
     "\tdmachan->reader_sw_count = 0;\n",
     "\t/* Clear counters; hostlink: keep reader_sw_count, the buffers written before the start (the\n"
     "\t * reader streams the ring from buffer 0 as soon as it is enabled; 0 unless written). */\n"
     "\tdmachan->reader_hw_count = 0;\n"
     "\tdmachan->reader_hw_count_last = 0;\n"),

    ("main.c", "refresh of a polled direction's counters",
     "static int litepcie_open(struct inode *inode, struct file *file)\n",
     "/* hostlink: a polled direction's counters, as the MSI handler updates them. */\n"
     + _refresh("writer") + _refresh("reader") +
     "static int litepcie_open(struct inode *inode, struct file *file)\n"),

    ("main.c", "release: polling off with the lock",
     "\t\tchan->dma.reader_lock = 0;\n\t\tchan->dma.reader_enable = 0;\n",
     "\t\tchan->dma.reader_lock = 0;\n\t\tchan->dma.reader_enable = 0;\n"
     "\t\tchan->dma.reader_poll = 0; /* hostlink */\n"),

    ("main.c", "release: polling off with the lock (writer)",
     "\t\tchan->dma.writer_lock = 0;\n\t\tchan->dma.writer_enable = 0;\n",
     "\t\tchan->dma.writer_lock = 0;\n\t\tchan->dma.writer_enable = 0;\n"
     "\t\tchan->dma.writer_poll = 0; /* hostlink */\n"),

    ("main.c", "read(): a polled writer refreshes and does not sleep",
     "\tif (file->f_flags & O_NONBLOCK) {\n"
     "\t\tif (chan->dma.writer_hw_count == chan->dma.writer_sw_count)\n",
     "\tif (chan->dma.writer_poll && chan->dma.writer_enable && hostlink_writer_refresh(s, chan)) /* hostlink */\n"
     "\t\treturn -EIO;\n"
     "\tif ((file->f_flags & O_NONBLOCK) || chan->dma.writer_poll) {\n"
     "\t\tif (chan->dma.writer_hw_count == chan->dma.writer_sw_count)\n"),

    ("main.c", "write(): a polled reader refreshes and does not sleep; -EAGAIN when the ring is full",
     "\tif (file->f_flags & O_NONBLOCK) {\n"
     "\t\tif (chan->dma.reader_hw_count == chan->dma.reader_sw_count)\n",
     "\tif (chan->dma.reader_poll && chan->dma.reader_enable && hostlink_reader_refresh(s, chan)) /* hostlink */\n"
     "\t\treturn -EIO;\n"
     "\tif ((file->f_flags & O_NONBLOCK) || chan->dma.reader_poll) {\n"
     "\t\t/* hostlink: full, not empty (LitePCIe returned -EAGAIN when every buffer was read). */\n"
     "\t\tif ((chan->dma.reader_sw_count - chan->dma.reader_hw_count) >= DMA_BUFFER_COUNT/2)\n"),

    ("main.c", "DMA_WRITER: a polled writer's MSI stays off",
     "\t\t\t\tlitepcie_enable_interrupt(chan->litepcie_dev, chan->dma.writer_interrupt);\n",
     "\t\t\t\tif (!chan->dma.writer_poll) /* hostlink */\n"
     "\t\t\t\t\tlitepcie_enable_interrupt(chan->litepcie_dev, chan->dma.writer_interrupt);\n"),

    ("main.c", "DMA_READER: a polled reader's MSI stays off",
     "\t\t\t\tlitepcie_enable_interrupt(chan->litepcie_dev, chan->dma.reader_interrupt);\n",
     "\t\t\t\tif (!chan->dma.reader_poll) /* hostlink */\n"
     "\t\t\t\t\tlitepcie_enable_interrupt(chan->litepcie_dev, chan->dma.reader_interrupt);\n"),

    ("main.c", "DMA_WRITER: a polled writer's counters are read from the DMA",
     "\t\tm.hw_count = chan->dma.writer_hw_count;\n",
     "\t\tif (chan->dma.writer_poll && chan->dma.writer_enable && hostlink_writer_refresh(dev, chan)) { /* hostlink */\n"
     "\t\t\tret = -EIO;\n"
     "\t\t\tbreak;\n"
     "\t\t}\n"
     "\t\tm.hw_count = chan->dma.writer_hw_count;\n"),

    ("main.c", "DMA_READER: a polled reader's counters are read from the DMA",
     "\t\tm.hw_count = chan->dma.reader_hw_count;\n",
     "\t\tif (chan->dma.reader_poll && chan->dma.reader_enable && hostlink_reader_refresh(dev, chan)) { /* hostlink */\n"
     "\t\t\tret = -EIO;\n"
     "\t\t\tbreak;\n"
     "\t\t}\n"
     "\t\tm.hw_count = chan->dma.reader_hw_count;\n"),

    ("main.c", "ioctls DMA_POLL and CYCLES",
     "\tcase LITEPCIE_IOCTL_LOCK:\n",
     "\tcase LITEPCIE_IOCTL_DMA_POLL: /* hostlink */\n"
     "\t{\n"
     "\t\tstruct litepcie_ioctl_dma_poll m;\n"
     "\n"
     "\t\tif (copy_from_user(&m, (void *)arg, sizeof(m))) {\n"
     "\t\t\tret = -EFAULT;\n"
     "\t\t\tbreak;\n"
     "\t\t}\n"
     "\t\tif (m.writer > 1 || m.reader > 1) " + _EINVAL +
     "\t\t/* A direction's setting is its lock holder's, changed while the direction is stopped; a\n"
     "\t\t * direction the caller does not hold is left as it is (another program may hold it). */\n"
     "\t\tif ((chan_priv->writer && m.writer != chan->dma.writer_poll && chan->dma.writer_enable) ||\n"
     "\t\t    (chan_priv->reader && m.reader != chan->dma.reader_poll && chan->dma.reader_enable)) {\n"
     "\t\t\tret = -EBUSY;\n"
     "\t\t\tbreak;\n"
     "\t\t}\n"
     "\t\tif (chan_priv->writer)\n"
     "\t\t\tchan->dma.writer_poll = m.writer;\n"
     "\t\tif (chan_priv->reader)\n"
     "\t\t\tchan->dma.reader_poll = m.reader;\n"
     "\t}\n"
     "\tbreak;\n"
     "#ifdef CSR_CYCLES_LATCH_ADDR\n"
     "\tcase LITEPCIE_IOCTL_CYCLES: /* hostlink */\n"
     "\t{\n"
     "\t\tstruct litepcie_ioctl_cycles m;\n"
     "\n"
     "\t\tspin_lock(&dev->lock);\n"
     "\t\tlitepcie_writel(dev, CSR_CYCLES_LATCH_ADDR, 1);\n"
     "\t\tm.cycles = ((uint64_t)litepcie_readl(dev, CSR_CYCLES_VALUE_ADDR) << 32) |\n"
     "\t\t\tlitepcie_readl(dev, CSR_CYCLES_VALUE_ADDR + 4);\n"
     "\t\tspin_unlock(&dev->lock);\n"
     "\t\tif (copy_to_user((void *)arg, &m, sizeof(m)))\n"
     "\t\t\tret = -EFAULT;\n"
     "\t}\n"
     "\tbreak;\n"
     "#endif\n"
     "\tcase LITEPCIE_IOCTL_LOCK:\n"),
]


def add_polling(kernel_dir, patches=None):
    """Apply POLLING_PATCHES to the (hardened) LitePCIe sources in `kernel_dir`; all or nothing."""
    apply_patches(kernel_dir, POLLING_PATCHES if patches is None else patches, kind="polling change")
    return kernel_dir
