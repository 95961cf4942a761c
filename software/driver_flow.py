# This file is part of hostlink.
# Copyright (c) 2026 hostlink developers
# SPDX-License-Identifier: BSD-2-Clause

"""Flow modes in LitePCIe's Linux driver (hostlink.cores.pcie.flow), added to its copied sources when the
driver is generated (after driver_polling).

    add_flow(kernel_dir)   patch main.c and litepcie.h; raise DriverPatchError naming the anchor when
                           LitePCIe's sources no longer have it.
    flow_offsets(csr, ...) the flow registers' offsets in a DMA channel's CSR region, for config.h.

LitePCIe's driver already keeps, per direction, the buffers the DMA has done (`hw_count`, from the loop
status) and those the program has served (`sw_count`: read, or written), and the program tells it with
read(), write() or the zero-copy update ioctls. What it lacks is telling the DMA: in loop mode the DMA
overwrites buffers not yet read, and reads buffers not yet written ("Reading/Writing too late, N buffers
lost"). What changes:

- LITEPCIE_IOCTL_DMA_FLOW {writer, reader} (new): a direction's flow mode, set by the holder of its lock
  while it is stopped, used from its next start; 0 loop (LitePCIe's, the default), 1 lossless, 2
  real-time (writer only: the channel's user port drops data between buffers and heads each buffer with
  what it dropped), 3 packets (writer only: lossless, each buffer headed by its data's length, ended early
  by the core's `last`). Releasing the file sets it back to 0.
- At the start of a gated direction the driver writes the mode and what the DMA may use: for a writer,
  half the ring (read() and the zero-copy path count a buffer as lost when the DMA is more than half the
  ring ahead, so the DMA never goes further), and the buffer size for framing (real-time, packets);
  for a reader, the buffers written before the start.
- Each time the program's count moves (read(), write(), the update ioctls), one register write gives
  the DMA the new count: writer, `sw_count` + half the ring; reader, `sw_count`. One write per call,
  however many buffers it served.

- A polled direction (driver_polling.py) in a flow mode counts the buffers done from the flow gate's
  `done`, exactly (the loop status is one buffer behind): a program polling sees its last buffer.

So a program that falls behind makes the DMA wait instead of losing buffers; LitePCIe's own tools
(`litepcie_util dma_test`, `litepcie_test`) behave as before unless a program sets a flow mode.
"""

from hostlink.software.driver_patches import DriverPatchError, apply_patches

__all__ = ["FLOW_PATCHES", "FLOW_REGISTERS", "add_flow", "flow_offsets", "DriverPatchError"]

# The flow registers the driver writes or reads, per direction (hostlink.cores.pcie.flow.DMAFlow's CSRs;
# STARTED and WAITS for the stats ioctl, driver_stats.py).
FLOW_REGISTERS = [("WRITER", "MODE"), ("WRITER", "GIVEN"), ("WRITER", "DONE"), ("WRITER", "BUFFER_BYTES"),
                  ("WRITER", "STARTED"), ("WRITER", "WAITS"),
                  ("READER", "MODE"), ("READER", "GIVEN"), ("READER", "DONE"),
                  ("READER", "STARTED"), ("READER", "WAITS")]

_EINVAL = "{\n\t\t\tret = -EINVAL;\n\t\t\tbreak;\n\t\t}\n"


def flow_offsets(csr_defines, csr_offset):
    """{PCIE_DMA_<ENGINE>_FLOW_<REG>_OFFSET: offset} from channel 0 of csr.h's defines (`csr_offset` reads
    an address define), or {} for a SoC without flow gates. driver._check_dma_offsets then checks every
    channel against them."""
    if "CSR_PCIE_DMA0_WRITER_FLOW_MODE_ADDR" not in csr_defines:
        return {}
    base = csr_offset(csr_defines.get("CSR_PCIE_DMA0_BASE", ""))
    offsets = {}
    for engine, reg in FLOW_REGISTERS:
        addr = csr_offset(csr_defines.get(f"CSR_PCIE_DMA0_{engine}_FLOW_{reg}_ADDR", ""))
        if base is None or addr is None:
            raise ValueError(f"csr.h has a flow gate without a readable CSR_PCIE_DMA0_{engine}_FLOW_{reg}_ADDR")
        offsets[f"PCIE_DMA_{engine}_FLOW_{reg}_OFFSET"] = addr - base
    return offsets


def _give(direction, given):
    reg = direction.upper()
    return (
        f"static void hostlink_{direction}_give(struct litepcie_device *s, struct litepcie_chan *chan)\n"
        f"{{\n"
        f"#ifdef PCIE_DMA_{reg}_FLOW_GIVEN_OFFSET\n"
        f"\tif (chan->dma.{direction}_flow && chan->dma.{direction}_enable)\n"
        f"\t\tlitepcie_writel(s, chan->dma.base + PCIE_DMA_{reg}_FLOW_GIVEN_OFFSET, (uint32_t)({given}));\n"
        f"#endif\n"
        f"}}\n\n")


FLOW_PATCHES = [
    ("litepcie.h", "ioctl: DMA_FLOW",
     "#define LITEPCIE_IOCTL_CYCLES                    _IOR(LITEPCIE_IOCTL,  41, struct litepcie_ioctl_cycles)\n",
     "#define LITEPCIE_IOCTL_CYCLES                    _IOR(LITEPCIE_IOCTL,  41, struct litepcie_ioctl_cycles)\n"
     "\n"
     "/* hostlink: flow modes (0 loop, 1 lossless, 2 real-time and 3 packets: writer only), set by a\n"
     " * direction's lock holder while it is stopped, used from its next start. */\n"
     "#define LITEPCIE_FLOW_LOOP     0\n"
     "#define LITEPCIE_FLOW_LOSSLESS 1\n"
     "#define LITEPCIE_FLOW_REALTIME 2\n"
     "#define LITEPCIE_FLOW_PACKETS  3\n"
     "struct litepcie_ioctl_dma_flow {\n"
     "\tuint8_t writer;\n"
     "\tuint8_t reader;\n"
     "};\n"
     "\n"
     "#define LITEPCIE_IOCTL_DMA_FLOW                  _IOW(LITEPCIE_IOCTL,  42, struct litepcie_ioctl_dma_flow)\n"),

    ("main.c", "channel state: flow modes",
     "\tint64_t writer_sw_count;\n\tuint8_t writer_enable;\n",
     "\tint64_t writer_sw_count;\n"
     "\tuint8_t writer_flow; /* hostlink: flow mode (LITEPCIE_FLOW_*), used at the next start. */\n"
     "\tuint8_t reader_flow;\n"
     "\tuint8_t writer_enable;\n"),

    ("main.c", "writer start: the flow mode, half the ring given",
     "\t/* Start DMA Writer. */\n",
     "#ifdef PCIE_DMA_WRITER_FLOW_MODE_OFFSET\n"
     "\t/* hostlink: the flow mode; a gated writer may fill half the ring (the table's reset above\n"
     "\t * restarted the DMA's counts). */\n"
     "\tlitepcie_writel(s, dmachan->base + PCIE_DMA_WRITER_FLOW_MODE_OFFSET, dmachan->writer_flow);\n"
     "\tif (dmachan->writer_flow) {\n"
     "\t\tlitepcie_writel(s, dmachan->base + PCIE_DMA_WRITER_FLOW_BUFFER_BYTES_OFFSET, DMA_BUFFER_SIZE);\n"
     "\t\tlitepcie_writel(s, dmachan->base + PCIE_DMA_WRITER_FLOW_GIVEN_OFFSET, DMA_BUFFER_COUNT/2);\n"
     "\t}\n"
     "#endif\n"
     "\t/* Start DMA Writer. */\n"),

    ("main.c", "reader start: the flow mode, the buffers written before it given",
     "\t/* Start dma reader */\n",
     "#ifdef PCIE_DMA_READER_FLOW_MODE_OFFSET\n"
     "\t/* hostlink: the flow mode; a gated reader may read the buffers written before the start. */\n"
     "\tlitepcie_writel(s, dmachan->base + PCIE_DMA_READER_FLOW_MODE_OFFSET, dmachan->reader_flow);\n"
     "\tif (dmachan->reader_flow)\n"
     "\t\tlitepcie_writel(s, dmachan->base + PCIE_DMA_READER_FLOW_GIVEN_OFFSET, (uint32_t)dmachan->reader_sw_count);\n"
     "#endif\n"
     "\t/* Start dma reader */\n"),

    ("main.c", "giving the DMA the program's count",
     "static ssize_t litepcie_read(struct file *file, char __user *data, size_t size, loff_t *offset)\n",
     "/* hostlink: a gated direction's DMA may use what the program has served: one write. */\n"
     + _give("writer", "chan->dma.writer_sw_count + DMA_BUFFER_COUNT/2")
     + _give("reader", "chan->dma.reader_sw_count") +
     "static ssize_t litepcie_read(struct file *file, char __user *data, size_t size, loff_t *offset)\n"),

    ("main.c", "read(): the buffers read go back to the DMA",
     "\tif (overflows)\n\t\tdev_err(&s->dev->dev, \"Reading too late, %d buffers lost\\n\", overflows);\n",
     "\thostlink_writer_give(s, chan); /* hostlink */\n"
     "\tif (overflows)\n\t\tdev_err(&s->dev->dev, \"Reading too late, %d buffers lost\\n\", overflows);\n"),

    ("main.c", "write(): the buffers written go to the DMA",
     "\tif (underflows)\n\t\tdev_err(&s->dev->dev, \"Writing too late, %d buffers lost\\n\", underflows);\n",
     "\thostlink_reader_give(s, chan); /* hostlink */\n"
     "\tif (underflows)\n\t\tdev_err(&s->dev->dev, \"Writing too late, %d buffers lost\\n\", underflows);\n"),

    ("main.c", "zero-copy writer update: the buffers read go back to the DMA",
     "\t\tchan->dma.writer_sw_count = m.sw_count;\n",
     "\t\tchan->dma.writer_sw_count = m.sw_count;\n"
     "\t\thostlink_writer_give(dev, chan); /* hostlink */\n"),

    ("main.c", "zero-copy reader update: the buffers written go to the DMA",
     "\t\tchan->dma.reader_sw_count = m.sw_count;\n",
     "\t\tchan->dma.reader_sw_count = m.sw_count;\n"
     "\t\thostlink_reader_give(dev, chan); /* hostlink */\n"),

    ("main.c", "release: flow off with the lock",
     "\t\tchan->dma.reader_poll = 0; /* hostlink */\n",
     "\t\tchan->dma.reader_poll = 0; /* hostlink */\n"
     "\t\tchan->dma.reader_flow = 0;\n"),

    ("main.c", "release: flow off with the lock (writer)",
     "\t\tchan->dma.writer_poll = 0; /* hostlink */\n",
     "\t\tchan->dma.writer_poll = 0; /* hostlink */\n"
     "\t\tchan->dma.writer_flow = 0;\n"),

    ("main.c", "ioctl DMA_FLOW",
     "\tcase LITEPCIE_IOCTL_MMAP_DMA_WRITER_UPDATE:\n",
     "\tcase LITEPCIE_IOCTL_DMA_FLOW: /* hostlink */\n"
     "\t{\n"
     "\t\tstruct litepcie_ioctl_dma_flow m;\n"
     "\n"
     "\t\tif (copy_from_user(&m, (void *)arg, sizeof(m))) {\n"
     "\t\t\tret = -EFAULT;\n"
     "\t\t\tbreak;\n"
     "\t\t}\n"
     "\t\tif (m.writer > LITEPCIE_FLOW_PACKETS || m.reader > LITEPCIE_FLOW_LOSSLESS) " + _EINVAL +
     "#ifndef PCIE_DMA_WRITER_FLOW_MODE_OFFSET\n"
     "\t\tif (m.writer || m.reader) {\n"
     "\t\t\tret = -EOPNOTSUPP; /* A SoC without flow gates. */\n"
     "\t\t\tbreak;\n"
     "\t\t}\n"
     "#endif\n"
     "\t\t/* A direction's setting is its lock holder's, changed while the direction is stopped; a\n"
     "\t\t * direction the caller does not hold is left as it is (another program may hold it). */\n"
     "\t\tif ((chan_priv->writer && m.writer != chan->dma.writer_flow && chan->dma.writer_enable) ||\n"
     "\t\t    (chan_priv->reader && m.reader != chan->dma.reader_flow && chan->dma.reader_enable)) {\n"
     "\t\t\tret = -EBUSY;\n"
     "\t\t\tbreak;\n"
     "\t\t}\n"
     "\t\tif (chan_priv->writer)\n"
     "\t\t\tchan->dma.writer_flow = m.writer;\n"
     "\t\tif (chan_priv->reader)\n"
     "\t\t\tchan->dma.reader_flow = m.reader;\n"
     "\t}\n"
     "\tbreak;\n"
     "\tcase LITEPCIE_IOCTL_MMAP_DMA_WRITER_UPDATE:\n"),
]


def add_flow(kernel_dir, patches=None):
    """Apply FLOW_PATCHES to the (hardened, polled) LitePCIe sources in `kernel_dir`; all or nothing."""
    apply_patches(kernel_dir, FLOW_PATCHES if patches is None else patches, kind="flow change")
    return kernel_dir
