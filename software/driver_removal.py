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

from hostlink.software.driver_patches import apply_patches

__all__ = ["PATCHES", "add_removal"]

_GONE = "\tif (READ_ONCE({dev}->gone)) /* hostlink: the board was removed (driver_removal.py). */\n\t\treturn -ENODEV;\n"


def _copy_call_patches(call, engine, queue, ready):
    """read() or write(): -ENODEV once removed, before the engine's counters are refreshed from the board;
    a sleeper (blocking, not polled) wakes on the removal too."""
    refresh = (f"\tif (chan->dma.{engine}_poll && chan->dma.{engine}_enable && hostlink_{engine}_refresh(s, chan))"
               f" /* hostlink */\n")
    wait = f"\t\tret = wait_event_interruptible(chan->{queue},\n\t\t\t\t\t       {ready}"
    return [
        ("main.c", f"{call}: -ENODEV once removed", refresh, _GONE.format(dev="s") + refresh),
        ("main.c", f"{call}: a sleeper wakes on the removal", wait + ");\n\t}\n",
         wait + " ||\n\t\t\t\t\t       READ_ONCE(s->gone));\n\t}\n" + _GONE.format(dev="s")),
    ]


PATCHES = [
    ("main.c", "the board's removal state",
     "\tint channels;                                 /* Number of DMA channels */\n};\n",
     "\tint channels;                                 /* Number of DMA channels */\n"
     "\t/* hostlink (driver_removal.py): a board removed while programs hold its channels. */\n"
     "\tbool gone;                                    /* removed: every call fails with -ENODEV */\n"
     "\tatomic_t users;                               /* open files (a mapped ring holds its file) */\n"
     "\twait_queue_head_t users_gone;                 /* the removal waits here for the last close */\n"
     "};\n"),

    ("main.c", "probe: the removal's wait queue",
     "\tspin_lock_init(&litepcie_dev->lock);\n",
     "\tspin_lock_init(&litepcie_dev->lock);\n"
     "\tinit_waitqueue_head(&litepcie_dev->users_gone); /* hostlink (driver_removal.py) */\n"),

    ("main.c", "the last close wakes a waiting removal",
     "static dev_t litepcie_dev_t;\n",
     "static dev_t litepcie_dev_t;\n\n"
     "/* hostlink (driver_removal.py): one open file of the board fewer. The last one after a removal wakes\n"
     " * it; under the device's lock, which the removal takes after waking, so that the board's state is not\n"
     " * freed while this still uses it. */\n"
     "static void hostlink_user_gone(struct litepcie_device *s)\n"
     "{\n"
     "\tspin_lock(&s->lock);\n"
     "\tif (atomic_dec_and_test(&s->users))\n"
     "\t\twake_up(&s->users_gone);\n"
     "\tspin_unlock(&s->lock);\n"
     "}\n"),
    ("main.c", "open: counted; a removed board opens no more",
     "\tchan_priv->chan = chan;\n\tfile->private_data = chan_priv;\n",
     "\tchan_priv->chan = chan;\n\tfile->private_data = chan_priv;\n"
     "\t/* hostlink (driver_removal.py): counted before the check, which the removal's wait then covers. */\n"
     "\tatomic_inc(&chan->litepcie_dev->users);\n"
     "\tsmp_mb__after_atomic();\n"
     "\tif (READ_ONCE(chan->litepcie_dev->gone)) {\n"
     "\t\tkfree(chan_priv);\n"
     "\t\thostlink_user_gone(chan->litepcie_dev);\n"
     "\t\treturn -ENODEV;\n"
     "\t}\n"),

    ("main.c", "release: the last close lets a waiting removal go on",
     "\tkfree(chan_priv);\n\n\treturn 0;\n}\n",
     "\tkfree(chan_priv);\n\thostlink_user_gone(chan->litepcie_dev); /* hostlink (driver_removal.py) */\n\n"
     "\treturn 0;\n}\n"),

    *_copy_call_patches("read", "writer", "wait_rd",
                        "(chan->dma.writer_hw_count - chan->dma.writer_sw_count) > 0"),
    *_copy_call_patches("write", "reader", "wait_wr",
                        "(chan->dma.reader_sw_count - chan->dma.reader_hw_count) < DMA_BUFFER_COUNT/2"),

    ("main.c", "mmap: -ENODEV once removed",
     "\tif (vma->vm_end - vma->vm_start != DMA_BUFFER_TOTAL_SIZE)\n\t\treturn -EINVAL;\n",
     _GONE.format(dev="s") +
     "\tif (vma->vm_end - vma->vm_start != DMA_BUFFER_TOTAL_SIZE)\n\t\treturn -EINVAL;\n"),

    ("main.c", "poll: POLLERR | POLLHUP once removed",
     "\tpoll_wait(file, &chan->wait_rd, wait);\n\tpoll_wait(file, &chan->wait_wr, wait);\n",
     "\tpoll_wait(file, &chan->wait_rd, wait);\n\tpoll_wait(file, &chan->wait_wr, wait);\n"
     "\tif (READ_ONCE(chan->litepcie_dev->gone)) /* hostlink: removed (driver_removal.py). */\n"
     "\t\treturn POLLERR | POLLHUP;\n"),

    ("main.c", "ioctl: -ENODEV once removed",
     "\tstruct litepcie_device *dev = chan->litepcie_dev;\n\n\tswitch (cmd) {\n",
     "\tstruct litepcie_device *dev = chan->litepcie_dev;\n\n" + _GONE.format(dev="dev") + "\n\tswitch (cmd) {\n"),

    ("main.c", "remove: the board is gone for its programs, sleepers woken",
     "\t/* Stop the DMAs */\n\tlitepcie_stop_dma(litepcie_dev);\n",
     "\t/* hostlink (driver_removal.py): from here on every call on the board's channels fails with -ENODEV;\n"
     "\t * sleepers are woken to see it. */\n"
     "\tWRITE_ONCE(litepcie_dev->gone, true);\n"
     "\tsmp_mb();\n"
     "\tfor (i = 0; i < litepcie_dev->channels; i++) {\n"
     "\t\twake_up_interruptible(&litepcie_dev->chan[i].wait_rd);\n"
     "\t\twake_up_interruptible(&litepcie_dev->chan[i].wait_wr);\n"
     "\t}\n"
     "\n"
     "\t/* Stop the DMAs */\n\tlitepcie_stop_dma(litepcie_dev);\n"),
    ("main.c", "remove: the board's state is freed only after the last close",
     "\tlitepcie_free_chdev(litepcie_dev);\n\n\tpci_free_irq_vectors(dev);\n}\n",
     "\tlitepcie_free_chdev(litepcie_dev);\n\n\tpci_free_irq_vectors(dev);\n"
     "\n"
     "\t/* hostlink (driver_removal.py): the board's state, its BAR and its DMA buffers are freed when this\n"
     "\t * returns: wait until no program holds a channel (a mapped ring holds its file). Their calls fail\n"
     "\t * meanwhile; the device nodes are gone, so nothing opens. */\n"
     "\twhile (!wait_event_timeout(litepcie_dev->users_gone, atomic_read(&litepcie_dev->users) == 0, 10 * HZ))\n"
     "\t\tdev_warn(&dev->dev, \"removal waits for %d open files of /dev/litepcie%d..%d to be closed\\n\",\n"
     "\t\t\t atomic_read(&litepcie_dev->users), litepcie_dev->minor_base,\n"
     "\t\t\t litepcie_dev->minor_base + litepcie_dev->channels - 1);\n"
     "\tspin_lock(&litepcie_dev->lock); /* The last close has left hostlink_user_gone(). */\n"
     "\tspin_unlock(&litepcie_dev->lock);\n"
     "}\n"),
]


def add_removal(kernel_dir, patches=None):
    """Apply PATCHES to the driver's sources in `kernel_dir` (after hostlink's other changes, whose lines
    some anchors include); all or nothing."""
    apply_patches(kernel_dir, PATCHES if patches is None else patches, kind="removal change")
    return kernel_dir
