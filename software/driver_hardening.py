# This file is part of hostlink.
# Copyright (c) 2026 hostlink developers
# SPDX-License-Identifier: BSD-2-Clause

"""Hardening of LitePCIe's Linux driver, applied to its copied sources when the driver is generated,
so that a local user allowed to open /dev/litepcie* can run DMA through the driver's own buffers but
cannot turn the device against the host.

    harden_driver(kernel_dir)   patch main.c and init.sh, write the udev rule; raise DriverPatchError
                                naming the anchor when LitePCIe's sources no longer have it.

What LitePCIe 2024.12 lets any user with the device open do, and what changes:
- LITEPCIE_IOCTL_REG reads and writes any 32-bit offset from BAR0's mapping, unchecked: past the BAR
  that is host memory. Now: -EINVAL for an unaligned offset or one outside BAR0
  (pci_resource_len), -EPERM for a write without CAP_SYS_RAWIO. Register writes are what program
  the DMA's descriptor tables with any bus address, so only root-like callers keep them.
- LITEPCIE_IOCTL_FLASH / _ICAP (only built when the SoC has a SPI flash / ICAP) rewrite the FPGA's
  configuration, i.e. the whole DMA engine: CAP_SYS_RAWIO.
- LITEPCIE_IOCTL_MMAP_DMA_{WRITER,READER}_UPDATE store any 64-bit count, later used as
  `count % DMA_BUFFER_COUNT` to index the buffer tables in read()/write(): a negative count indexes
  before the table (kernel memory read or written). Now a count may only move forward, up to what
  the hardware has filled (writer) or one ring ahead of what it has fetched (reader).
- LITEPCIE_IOCTL_LOCK released the lock whoever held it; now only the holder releases it, and
  changing a direction's enable (LITEPCIE_IOCTL_DMA_{WRITER,READER}) needs that direction's lock.
- Boolean fields (is_write, enable, loopback, lock requests) other than 0/1 are -EINVAL.
- init.sh made the nodes world read-writable (chmod 666); now group `hostlink`, mode 0660, as does
  the udev rule written next to it.
- Not a check: each device node gets its board's PCI device as sysfs parent, so that several boards in
  one host are told apart (hostlink.host's list_boards(), udev rules by PCI address).
The mmap handler only maps the channel's own DMA buffers (exact length, two fixed offsets); that
check is required to be present, not added.
"""

import os

from hostlink.software.driver_patches import DriverPatchError, apply_patches

__all__ = ["DriverPatchError", "UDEV_RULE_NAME", "DEVICE_GROUP", "harden_driver"]

DEVICE_GROUP   = "hostlink"
UDEV_RULE_NAME = "99-hostlink-litepcie.rules"

# Patches ------------------------------------------------------------------------------------------

# (file, what the change does, anchor that must occur exactly once, text it becomes).
_EINVAL = "{\n\t\t\tret = -EINVAL;\n\t\t\tbreak;\n\t\t}\n"

PATCHES = [
    ("main.c", "capability header",
     "#include <linux/ioctl.h>\n",
     "#include <linux/ioctl.h>\n#include <linux/capability.h> /* hostlink: capable(). */\n"),

    ("main.c", "REG: offset inside BAR0, aligned; writes need CAP_SYS_RAWIO",
     "\t\tif (m.is_write)\n"
     "\t\t\tlitepcie_writel(dev, m.addr, m.val);\n"
     "\t\telse\n"
     "\t\t\tm.val = litepcie_readl(dev, m.addr);\n",
     "\t\t/* hostlink: only aligned registers inside BAR0; writes (which can program the DMA\n"
     "\t\t * with any bus address) only with CAP_SYS_RAWIO. */\n"
     "\t\toffset = (u64)m.addr - (u64)CSR_BASE; /* Wraps to a huge value below CSR_BASE. */\n"
     "\t\tif ((m.addr & 3) || m.is_write > 1 || bar0_len < 4 || offset > bar0_len - 4) "
     + _EINVAL +
     "\t\tif (m.is_write && !capable(CAP_SYS_RAWIO)) {\n"
     "\t\t\tret = -EPERM;\n"
     "\t\t\tbreak;\n"
     "\t\t}\n"
     "\t\tif (m.is_write)\n"
     "\t\t\tlitepcie_writel(dev, m.addr, m.val);\n"
     "\t\telse\n"
     "\t\t\tm.val = litepcie_readl(dev, m.addr);\n"),

    ("main.c", "REG: locals",
     "\t\tstruct litepcie_ioctl_reg m;\n",
     "\t\tstruct litepcie_ioctl_reg m;\n"
     "\t\tu64 bar0_len = pci_resource_len(dev->dev, 0);\n"
     "\t\tu64 offset;\n"),

    ("main.c", "FLASH: CAP_SYS_RAWIO",
     "\t\tret = litepcie_flash_spi(dev, &m);\n",
     "\t\tif (!capable(CAP_SYS_RAWIO)) { /* hostlink: rewrites the FPGA's configuration. */\n"
     "\t\t\tret = -EPERM;\n"
     "\t\t\tbreak;\n"
     "\t\t}\n"
     "\t\tret = litepcie_flash_spi(dev, &m);\n"),

    ("main.c", "ICAP: CAP_SYS_RAWIO",
     "\t\tlitepcie_writel(dev, CSR_ICAP_ADDR_ADDR, m.addr);\n",
     "\t\tif (!capable(CAP_SYS_RAWIO)) { /* hostlink: reconfigures the FPGA. */\n"
     "\t\t\tret = -EPERM;\n"
     "\t\t\tbreak;\n"
     "\t\t}\n"
     "\t\tlitepcie_writel(dev, CSR_ICAP_ADDR_ADDR, m.addr);\n"),

    ("main.c", "DMA: loopback is 0 or 1",
     "\t\t/* loopback */\n",
     "\t\tif (m.loopback_enable > 1) /* hostlink */ " + _EINVAL +
     "\t\t/* loopback */\n"),

    ("main.c", "DMA_WRITER: enable is 0 or 1, changed only by the writer lock's holder",
     "\t\tif (m.enable != chan->dma.writer_enable) {\n",
     "\t\tif (m.enable > 1) /* hostlink */ " + _EINVAL +
     "\t\tif (m.enable != chan->dma.writer_enable && !chan_priv->writer) {\n"
     "\t\t\tret = -EBUSY;\n"
     "\t\t\tbreak;\n"
     "\t\t}\n"
     "\t\tif (m.enable != chan->dma.writer_enable) {\n"),

    ("main.c", "DMA_READER: enable is 0 or 1, changed only by the reader lock's holder",
     "\t\tif (m.enable != chan->dma.reader_enable) {\n",
     "\t\tif (m.enable > 1) /* hostlink */ " + _EINVAL +
     "\t\tif (m.enable != chan->dma.reader_enable && !chan_priv->reader) {\n"
     "\t\t\tret = -EBUSY;\n"
     "\t\t\tbreak;\n"
     "\t\t}\n"
     "\t\tif (m.enable != chan->dma.reader_enable) {\n"),

    ("main.c", "MMAP_DMA_WRITER_UPDATE: count moves forward, up to what the hardware wrote",
     "\t\tchan->dma.writer_sw_count = m.sw_count;\n",
     "\t\t/* hostlink: the count indexes the buffer table (count % DMA_BUFFER_COUNT). */\n"
     "\t\tif (m.sw_count < chan->dma.writer_sw_count || m.sw_count > chan->dma.writer_hw_count) "
     + _EINVAL +
     "\t\tchan->dma.writer_sw_count = m.sw_count;\n"),

    ("main.c", "MMAP_DMA_READER_UPDATE: count moves forward, at most one ring ahead of the hardware",
     "\t\tchan->dma.reader_sw_count = m.sw_count;\n",
     "\t\t/* hostlink: the count indexes the buffer table (count % DMA_BUFFER_COUNT). */\n"
     "\t\tif (m.sw_count < chan->dma.reader_sw_count ||\n"
     "\t\t    m.sw_count > chan->dma.reader_hw_count + DMA_BUFFER_COUNT) "
     + _EINVAL +
     "\t\tchan->dma.reader_sw_count = m.sw_count;\n"),

    ("main.c", "LOCK: flags are 0 or 1",
     "\t\tm.dma_reader_status = 1;\n",
     "\t\tif (m.dma_reader_request > 1 || m.dma_writer_request > 1 || /* hostlink */\n"
     "\t\t    m.dma_reader_release > 1 || m.dma_writer_release > 1) "
     + _EINVAL +
     "\t\tm.dma_reader_status = 1;\n"),

    ("main.c", "LOCK: only the reader lock's holder releases it",
     "\t\tif (m.dma_reader_release) {\n",
     "\t\tif (m.dma_reader_release && chan_priv->reader) { /* hostlink: holder only. */\n"),

    ("main.c", "LOCK: only the writer lock's holder releases it",
     "\t\tif (m.dma_writer_release) {\n",
     "\t\tif (m.dma_writer_release && chan_priv->writer) { /* hostlink: holder only. */\n"),

    # Not a check: each channel's device node gets its board's PCI device as parent, so that
    # /sys/class/litepcie/litepcie<N>/device names the board (several boards in one host: hostlink.host's
    # list_boards(), udev rules by PCI address). LitePCIe creates the nodes without a parent.
    ("main.c", "device nodes: the board's PCI device as parent",
     "device_create(litepcie_class, NULL, MKDEV(litepcie_major, index), NULL, \"litepcie%d\", index)",
     "device_create(litepcie_class, &s->dev->dev, MKDEV(litepcie_major, index), NULL, \"litepcie%d\", index)"),

    ("init.sh", "device nodes: group hostlink, mode 0660 instead of 0666",
     "# Change permissions on litepcie created devices.\n"
     "for i in `seq 0 16` ; do\n"
     "    chmod 666 /dev/litepcie$i > /dev/null 2>&1\n"
     "done\n",
     f"# hostlink: the device nodes are for root and the group {DEVICE_GROUP} only (mode 0660), as\n"
     f"# {UDEV_RULE_NAME} makes them when installed in /etc/udev/rules.d; never world-writable.\n"
     f"if getent group {DEVICE_GROUP} > /dev/null 2>&1 ; then\n"
     f"    GROUP={DEVICE_GROUP}\n"
     f"else\n"
     f"    GROUP=root\n"
     f"    echo \"No group {DEVICE_GROUP}: only root can use /dev/litepcie* (see doc/driver.md)\"\n"
     f"fi\n"
     f"for dev in /dev/litepcie* ; do\n"
     f"    [ -e \"$dev\" ] || continue\n"
     f"    chgrp \"$GROUP\" \"$dev\" && chmod 660 \"$dev\"\n"
     f"done\n"),
]

# Present in LitePCIe's sources and relied on, not changed: the mmap handler maps the channel's own
# DMA buffers only, for exactly their total length, at offset 0 (reader) or DMA_BUFFER_TOTAL_SIZE (writer).
REQUIRED = [
    ("main.c", "mmap: exact length",
     "\tif (vma->vm_end - vma->vm_start != DMA_BUFFER_TOTAL_SIZE)\n\t\treturn -EINVAL;\n"),
    ("main.c", "mmap: two fixed offsets",
     "\telse if (vma->vm_pgoff == (DMA_BUFFER_TOTAL_SIZE >> PAGE_SHIFT))\n\t\tis_tx = 0;\n\telse\n\t\treturn -EINVAL;\n"),
]

UDEV_RULE = f"""\
# Generated by hostlink: LitePCIe's device nodes for root and the group {DEVICE_GROUP} only.
# Install: cp {UDEV_RULE_NAME} /etc/udev/rules.d/ && udevadm control --reload
KERNEL=="litepcie[0-9]*", GROUP="{DEVICE_GROUP}", MODE="0660"
"""

# Apply --------------------------------------------------------------------------------------------

def harden_driver(kernel_dir, patches=None, required=None):
    """Apply PATCHES to LitePCIe's sources copied in `kernel_dir` and write the udev rule there.

    Every anchor must occur exactly once; otherwise nothing is written and DriverPatchError says
    which change could not be placed (LitePCIe's sources changed: review the change against them).
    """
    patches  = PATCHES  if patches  is None else patches
    required = REQUIRED if required is None else required
    apply_patches(kernel_dir, patches, required, "hardening")
    with open(os.path.join(kernel_dir, UDEV_RULE_NAME), "w") as f:
        f.write(UDEV_RULE)
    return kernel_dir
