# This file is part of hostlink.
# Copyright (c) 2026 hostlink developers
# SPDX-License-Identifier: BSD-2-Clause

"""A channel's counters in one call: LITEPCIE_IOCTL_STATS, added to LitePCIe's copied driver sources when
the driver is generated (after driver_flow).

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

from hostlink.software.driver_patches import DriverPatchError, apply_patches

__all__ = ["STATS_PATCHES", "STATS_STRUCT", "add_stats", "DriverPatchError"]

STATS_STRUCT = (
    "/* hostlink: a channel's counters, per direction, since the direction's last start. */\n"
    "struct litepcie_ioctl_stats_direction {\n"
    "\tint64_t hw_count;     /* buffers the DMA has done */\n"
    "\tint64_t sw_count;     /* buffers the program has served (read, written, given back) */\n"
    "\tuint64_t lost;        /* buffers read() or write() found lost (loop mode) */\n"
    "\tuint64_t lost_events; /* the calls that found them */\n"
    "\tuint32_t level;       /* buffers waiting for the program (reader: written, not yet read by the DMA) */\n"
    "\tuint32_t level_max;   /* the most it found waiting when it came to serve */\n"
    "\tuint32_t flow;        /* LITEPCIE_FLOW_* */\n"
    "\tuint32_t enabled;\n"
    "\tuint32_t fpga_given;  /* the DMA's flow gate (0 on a SoC without): buffers given by the host (flow modes), */\n"
    "\tuint32_t fpga_started; /* begun, */\n"
    "\tuint32_t fpga_done;   /* finished, */\n"
    "\tuint32_t fpga_waits;  /* cycles a buffer waited for the host */\n"
    "};\n"
    "\n"
    "struct litepcie_ioctl_stats {\n"
    "\tstruct litepcie_ioctl_stats_direction writer; /* FPGA to host */\n"
    "\tstruct litepcie_ioctl_stats_direction reader; /* host to FPGA */\n"
    "\tuint32_t buffer_count;\n"
    "\tuint32_t buffer_size;\n"
    "};\n"
    "\n"
    "#define LITEPCIE_IOCTL_STATS                     _IOR(LITEPCIE_IOCTL,  43, struct litepcie_ioctl_stats)\n")

_FLOW_IOCTL = "#define LITEPCIE_IOCTL_DMA_FLOW                  _IOW(LITEPCIE_IOCTL,  42, struct litepcie_ioctl_dma_flow)\n"


def _note(direction, level):
    return (
        f"static void hostlink_{direction}_note_level(struct litepcie_chan *chan)\n"
        f"{{\n"
        f"\tint64_t level = {level};\n"
        f"\n"
        f"\tif (level > (int64_t)chan->dma.{direction}_level_max)\n"
        f"\t\tchan->dma.{direction}_level_max = (uint32_t)level;\n"
        f"}}\n\n")


def _fill(direction, level):
    reg = direction.upper()
    out = [f"\t\tif (chan->dma.{direction}_enable)\n",
           f"\t\t\thostlink_{direction}_refresh(dev, chan);\n",
           f"\t\thostlink_{direction}_note_level(chan);\n",
           f"\t\tm.{direction}.hw_count    = chan->dma.{direction}_hw_count;\n",
           f"\t\tm.{direction}.sw_count    = chan->dma.{direction}_sw_count;\n",
           f"\t\tm.{direction}.lost        = chan->dma.{direction}_lost;\n",
           f"\t\tm.{direction}.lost_events = chan->dma.{direction}_lost_events;\n",
           f"\t\tm.{direction}.level       = (uint32_t)max_t(int64_t, 0, {level});\n",
           f"\t\tm.{direction}.level_max   = chan->dma.{direction}_level_max;\n",
           f"\t\tm.{direction}.flow        = chan->dma.{direction}_flow;\n",
           f"\t\tm.{direction}.enabled     = chan->dma.{direction}_enable;\n",
           f"#ifdef PCIE_DMA_{reg}_FLOW_DONE_OFFSET\n"]
    # What the host gave means something only in a flow mode (loop mode leaves the last value there).
    out.append(f"\t\tif (chan->dma.{direction}_flow)\n"
               f"\t\t\tm.{direction}.fpga_given = litepcie_readl(dev, chan->dma.base + "
               f"PCIE_DMA_{reg}_FLOW_GIVEN_OFFSET);\n")
    for field in ("started", "done", "waits"):
        out.append(f"\t\tm.{direction}.fpga_{field} = litepcie_readl(dev, chan->dma.base + "
                   f"PCIE_DMA_{reg}_FLOW_{field.upper()}_OFFSET);\n")
    out.append("#endif\n")
    return "".join(out)


_WRITER_LEVEL = "chan->dma.writer_hw_count - chan->dma.writer_sw_count"
_READER_LEVEL = "chan->dma.reader_sw_count - chan->dma.reader_hw_count"

STATS_PATCHES = [
    ("litepcie.h", "ioctl: STATS", _FLOW_IOCTL, _FLOW_IOCTL + "\n" + STATS_STRUCT),

    ("main.c", "channel state: losses and high-water marks",
     "\tint64_t reader_sw_count;\n",
     "\tint64_t reader_sw_count;\n"
     "\tuint64_t writer_lost; /* hostlink: the stats ioctl's, since the direction's start. */\n"
     "\tuint64_t writer_lost_events;\n"
     "\tuint32_t writer_level_max;\n"
     "\tuint64_t reader_lost;\n"
     "\tuint64_t reader_lost_events;\n"
     "\tuint32_t reader_level_max;\n"),

    # After the enable: only read(), write() and the ioctls change them, not the MSI handler.
    ("main.c", "writer start: the stats cleared",
     "\tlitepcie_writel(s, dmachan->base + PCIE_DMA_WRITER_ENABLE_OFFSET, 1);\n",
     "\tlitepcie_writel(s, dmachan->base + PCIE_DMA_WRITER_ENABLE_OFFSET, 1);\n"
     "\tdmachan->writer_lost = 0; /* hostlink: the stats, as the counts above. */\n"
     "\tdmachan->writer_lost_events = 0;\n"
     "\tdmachan->writer_level_max = 0;\n"),

    ("main.c", "reader start: the stats cleared",
     "\tlitepcie_writel(s, dmachan->base + PCIE_DMA_READER_ENABLE_OFFSET, 1);\n",
     "\tlitepcie_writel(s, dmachan->base + PCIE_DMA_READER_ENABLE_OFFSET, 1);\n"
     "\tdmachan->reader_lost = 0; /* hostlink: the stats, as the counts above. */\n"
     "\tdmachan->reader_lost_events = 0;\n"
     "\tdmachan->reader_level_max = 0;\n"),

    ("main.c", "the level the program finds",
     "static int litepcie_release(struct inode *inode, struct file *file)\n",
     "/* hostlink: the high-water mark of the buffers waiting for the program, noted when it comes. */\n"
     + _note("writer", _WRITER_LEVEL) + _note("reader", _READER_LEVEL) +
     "static int litepcie_release(struct inode *inode, struct file *file)\n"),

    ("main.c", "read(): the level found",
     "\toverflows = 0;\n",
     "\thostlink_writer_note_level(chan); /* hostlink */\n"
     "\toverflows = 0;\n"),

    ("main.c", "write(): the level found",
     "\tunderflows = 0;\n",
     "\thostlink_reader_note_level(chan); /* hostlink */\n"
     "\tunderflows = 0;\n"),

    ("main.c", "read(): losses counted",
     "\tif (overflows)\n\t\tdev_err(&s->dev->dev, \"Reading too late, %d buffers lost\\n\", overflows);\n",
     "\tif (overflows)\n\t\tdev_err(&s->dev->dev, \"Reading too late, %d buffers lost\\n\", overflows);\n"
     "\tif (overflows) { /* hostlink: for the stats ioctl */\n"
     "\t\tchan->dma.writer_lost += overflows;\n"
     "\t\tchan->dma.writer_lost_events++;\n"
     "\t}\n"),

    ("main.c", "write(): losses counted",
     "\tif (underflows)\n\t\tdev_err(&s->dev->dev, \"Writing too late, %d buffers lost\\n\", underflows);\n",
     "\tif (underflows)\n\t\tdev_err(&s->dev->dev, \"Writing too late, %d buffers lost\\n\", underflows);\n"
     "\tif (underflows) { /* hostlink: for the stats ioctl */\n"
     "\t\tchan->dma.reader_lost += underflows;\n"
     "\t\tchan->dma.reader_lost_events++;\n"
     "\t}\n"),

    # A zero-copy program (liblitepcie's litepcie_dma_process) learns the counts from these ioctls.
    ("main.c", "DMA_WRITER: the level found",
     "\t\tm.hw_count = chan->dma.writer_hw_count;\n\t\tm.sw_count = chan->dma.writer_sw_count;\n",
     "\t\tm.hw_count = chan->dma.writer_hw_count;\n\t\tm.sw_count = chan->dma.writer_sw_count;\n"
     "\t\thostlink_writer_note_level(chan); /* hostlink */\n"),

    ("main.c", "DMA_READER: the level found",
     "\t\tm.hw_count = chan->dma.reader_hw_count;\n\t\tm.sw_count = chan->dma.reader_sw_count;\n",
     "\t\tm.hw_count = chan->dma.reader_hw_count;\n\t\tm.sw_count = chan->dma.reader_sw_count;\n"
     "\t\thostlink_reader_note_level(chan); /* hostlink */\n"),

    ("main.c", "ioctl STATS",
     "\tcase LITEPCIE_IOCTL_DMA_FLOW: /* hostlink */\n",
     "\tcase LITEPCIE_IOCTL_STATS: /* hostlink: any opener; registers only read. */\n"
     "\t{\n"
     "\t\tstruct litepcie_ioctl_stats m;\n"
     "\n"
     "\t\tmemset(&m, 0, sizeof(m));\n"
     + _fill("writer", _WRITER_LEVEL) + _fill("reader", _READER_LEVEL) +
     "\t\tm.buffer_count = DMA_BUFFER_COUNT;\n"
     "\t\tm.buffer_size  = DMA_BUFFER_SIZE;\n"
     "\t\tif (copy_to_user((void *)arg, &m, sizeof(m)))\n"
     "\t\t\tret = -EFAULT;\n"
     "\t}\n"
     "\tbreak;\n"
     "\tcase LITEPCIE_IOCTL_DMA_FLOW: /* hostlink */\n"),
]


def add_stats(kernel_dir, patches=None):
    """Apply STATS_PATCHES to the (hardened, polled, flow) LitePCIe sources in `kernel_dir`; all or nothing."""
    apply_patches(kernel_dir, STATS_PATCHES if patches is None else patches, kind="stats change")
    return kernel_dir
