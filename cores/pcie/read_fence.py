# This file is part of hostlink.
# Copyright (c) 2026 hostlink developers
# SPDX-License-Identifier: BSD-2-Clause

"""Read fence: a DMA reader tells the host of a buffer only once the host has answered the buffer's reads.

LitePCIe's DMA reader raises its interrupt, and its table's loop status counts a buffer as read, when the
buffer's last read request leaves the reader. The host has not fetched that data yet: the request still has
the crossbar, the hard block and the link ahead of it, then the host's read latency (about 1-2 us). And the
host may let the MSI (a posted write) or a loop-status completion pass those reads (PCIe 2.4.1), so an
interrupt-driven or polling host that refills a buffer as soon as it is reported could change what reads of
it still return. LitePCIe's own user library keeps half the ring between what it writes and what the reader
has reported, so it never does; a host program that reuses a buffer on the device's word would.

`ReadFence` counts the read requests the readers issue (`issued`) and the reads the TLP controller has
delivered (`taken`: a read's last beat handed on, answered, failed or timed out), which it does in request
order. It holds each reader's interrupt and each change of its loop status until every read issued before
the event has been delivered: its completions, and so the host's fetch of its data, came before. The counting
and holding are `DMAFence`'s (fence.py). Every read ends (the controller's completion timeout ends a read
never answered), so the fence needs no restart; with the timeout off, a read never answered stops the
controller's delivery (every channel's: it delivers in request order), and the events behind it wait with it. Every read through the controller must come
from a reader fenced here: a read of another master would count as delivered without having been counted as
issued, and release later events early. Given the crossbar, the fence refuses to finalize otherwise.

Each held event costs a read round trip in time (the host's latency), not throughput: reads go on
meanwhile, and LitePCIe's driver keeps half a ring of buffers ahead of the reader.
"""

from migen import *

from litex.gen import *

from hostlink.cores.pcie.fence import DMAFence

# Read Fence ---------------------------------------------------------------------------------------

class ReadFence(DMAFence):
    """Holds the DMA readers' interrupts and loop status until their reads have been delivered by
    `controller` (TLPController's `read_delivered`, sys domain).

    With `crossbar` (the LitePCIe crossbar whose reads `controller` serves), finalizing checks that every
    port of it that can read is a reader fenced here (`add_reader`'s `channel`): a ValueError otherwise."""
    def __init__(self, controller, crossbar=None):
        DMAFence.__init__(self, restart=False)
        self._crossbar = crossbar
        self._channels = []
        self.sync += If(controller.read_delivered, self.taken.eq(self.taken + 1))

    def add_reader(self, request, irq, loop_status, enable, table_reset=None, channel=None, counts=()):
        """Fence one LitePCIe DMA reader: `request` its port's request stream (one beat per read request),
        `irq` its interrupt, `loop_status` its table's loop-status CSR, `enable` its enable, `table_reset` its
        table's reset pulse, `counts` more counts to fence (DMAFence.add_channel), `channel` its crossbar
        port's channel. Returns the fenced interrupt; the CSR then shows the fenced loop status."""
        self._channels.append(channel)
        return self.add_channel(request.valid & request.ready & request.last, irq, loop_status, enable,
            table_reset, counts)

    def do_finalize(self):
        DMAFence.do_finalize(self)
        if self._crossbar is None:
            return
        for port in self._crossbar.user_masters:
            if not port.write_only and port.channel not in self._channels:
                raise ValueError(f"PCIe crossbar port {port.channel} reads but is not a fenced DMA reader: "
                    "the read fence would count its reads as delivered without having counted them as issued "
                    "(ReadFence.add_reader)")
