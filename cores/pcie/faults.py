# This file is part of hostlink.
# Copyright (c) 2026 hostlink developers
# SPDX-License-Identifier: BSD-2-Clause

"""PCIe fault handling around LitePCIe's DMA: per-channel read fault guard and the SoC's fault counters.

`ReadFaultGuard` sits between the TLP controller (which ends a faulty read with `err` beats, see
controller.py) and the crossbar's read ports. LitePCIe's DMA reader ignores `err`: it would write a failed
read's stale beats into its data FIFO as good data, and the reads after it would follow a hole. So once a
channel has had a failed read, the guard discards every completion beat of that channel (the failed read's
and those of the reads after it) and counts the failed reads. The channel stays in that state until its
reader is disabled with none of its reads left in flight (the driver's disable/enable, no FPGA reload): a
read still in flight at re-enable would otherwise deliver its data to the next transfer. Other channels
are not affected. It passes good beats straight through (valid/ready only): no added cycle.

`PCIeFaults` is the SoC's one CSR block of fault counters (saturating, 32 bits): completion timeouts,
error/poisoned completions, unexpected completions, completions for another requester, refused
descriptors, refused MSIs, and each channel's failed reads and error state. It also holds the completion
timeout.
"""

from migen import *
from migen.genlib.cdc import PulseSynchronizer

from litex.gen import *

from litex.soc.interconnect.csr import CSRStorage, CSRStatus, CSRField

from litepcie.core.common import LitePCIeMasterInternalPort

# Helpers ------------------------------------------------------------------------------------------

def saturating_add(counter, increment):
    """`counter` += `increment` (a signal or expression, 0 when nothing happened), stopping at its maximum."""
    total = Signal(len(counter) + 1)
    return [
        total.eq(counter + increment),
        If(total[-1], counter.eq(2**len(counter) - 1)).Else(counter.eq(total[:len(counter)])),
    ]

# Read fault guard ---------------------------------------------------------------------------------

class ReadFaultGuard(LiteXModule):
    """Discards a channel's completions from its first failed read until its reader is disabled and idle.

    `add_reader(channel, enable)` registers a DMA reader's port channel and its enable (sys domain) before
    the module is finalized; completions of other channels pass untouched. Per registered reader:
    `errors[i]` (o, saturating count of failed reads) and `errored[i]` (o, discarding).
    """
    def __init__(self, data_width, address_width, max_pending_requests):
        self.master_in  = LitePCIeMasterInternalPort(data_width, address_width)  # Towards the user ports.
        self.master_out = LitePCIeMasterInternalPort(data_width, address_width)  # Towards the controller.
        self.max_pending_requests = max_pending_requests
        self.readers = []
        self.errors  = []
        self.errored = []

    def add_reader(self, channel, enable):
        self.readers.append((channel, enable))
        self.errors.append(Signal(32, name=f"reader{len(self.readers) - 1}_errors"))
        self.errored.append(Signal(name=f"reader{len(self.readers) - 1}_errored"))

    def do_finalize(self):
        req_in,  req_out = self.master_in.sink,    self.master_out.sink
        cmp_in,  cmp_out = self.master_out.source, self.master_in.source

        # # #

        self.comb += req_in.connect(req_out)

        drop = Signal()
        self.comb += [
            cmp_in.connect(cmp_out, omit={"valid", "ready"}),
            cmp_out.valid.eq(cmp_in.valid & ~drop),
            cmp_in.ready.eq(cmp_out.ready | drop),
        ]
        taken = Signal()
        self.comb += taken.eq(cmp_in.valid & cmp_in.ready)
        for (channel, enable), errors, errored in zip(self.readers, self.errors, self.errored):
            mine        = Signal()
            outstanding = Signal(max=self.max_pending_requests + 1)   # Its reads sent, not yet ended.
            issued      = Signal()
            ended       = Signal()
            self.comb += [
                mine.eq(cmp_in.channel == channel),
                If(mine & cmp_in.valid & (cmp_in.err | errored), drop.eq(1)),
                issued.eq(req_out.valid & req_out.ready & req_out.first & ~req_out.we & (req_out.channel == channel)),
                ended.eq(taken & mine & cmp_in.last & cmp_in.end),
            ]
            self.sync += [
                outstanding.eq(outstanding + issued - ended),
                If(taken & mine & cmp_in.err,
                    errored.eq(1),
                ).Elif(~enable & (outstanding == 0),
                    errored.eq(0),
                ),
                *saturating_add(errors, taken & mine & cmp_in.err & cmp_in.last),
            ]

# Fault counters -----------------------------------------------------------------------------------

class PCIeFaults(LiteXModule):
    """The SoC's PCIe fault counters and completion timeout, as one CSR block.

    Event inputs are sys-domain pulses (`msi_failed` may come from the PHY's `pcie` domain: give its
    domain as `msi_domain`). `controller` is the endpoint's TLPController (with completion checks),
    `guard` its ReadFaultGuard, `refused` the descriptor splitters' `refused` pulses.
    """
    def __init__(self, controller, guard, refused, msi_failed=None, msi_domain="sys"):
        self.refused_descriptors = Signal(32)   # o
        self.msi_failures        = Signal(32)   # o

        # # #

        self.controller = controller
        self.guard      = guard
        refused_now = Signal(max=len(refused) + 1)
        self.comb += refused_now.eq(sum(refused) if refused else 0)
        self.sync += saturating_add(self.refused_descriptors, refused_now)
        if msi_failed is not None:
            msi_pulse = msi_failed
            if msi_domain != "sys":
                self.msi_sync = msi_sync = PulseSynchronizer(msi_domain, "sys")
                self.comb += msi_sync.i.eq(msi_failed)
                msi_pulse = msi_sync.o
            self.sync += saturating_add(self.msi_failures, msi_pulse)

    def add_csr(self):
        c, g = self.controller, self.guard
        self._completion_timeout = CSRStorage(32, reset=c.timeout_cycles.reset.value, description=
            "Cycles (sys clock) a DMA read may wait for its completions once at the head of the delivery "
            "order; 0: forever. Its channel then reports the error.")
        counters = [
            ("timeouts",               c.timeouts,               "DMA reads ended by the completion timeout."),
            ("error_completions",      c.error_completions,      "Completions with a non-success status (UR, "
                                                                  "CA, CRS) or poisoned (EP), each ending its read."),
            ("unexpected_completions", c.unexpected_completions, "Completions dropped: tag not outstanding, or "
                                                                  "longer than their read (which then ends)."),
            ("foreign_completions",    c.foreign_completions,    "Completions dropped: another requester ID."),
            ("refused_descriptors",    self.refused_descriptors, "DMA descriptors refused: length 0, or not whole "
                                                                  "bus words (no request left for them)."),
            ("msi_failures",           self.msi_failures,        "MSIs the hard block refused (each is sent again)."),
        ]
        for i, errors in enumerate(g.errors):
            counters.append((f"reader{i}_errors", errors, f"Failed reads of DMA channel {i}'s reader (its data "
                "from the first on is discarded until the reader is disabled)."))
        for name, signal, description in counters:
            csr = CSRStatus(32, name=name, description=description + " Saturates.")
            setattr(self, f"_{name}", csr)
            self.comb += csr.status.eq(signal)
        self._reader_errored = CSRStatus(max(1, len(g.errored)), description=
            "Bit i: DMA channel i's reader discards its completions after a failed read; cleared once the "
            "reader is disabled with no read in flight.")
        self.comb += [
            c.timeout_cycles.eq(self._completion_timeout.storage),
            self._reader_errored.status.eq(Cat(*g.errored) if g.errored else 0),
        ]
