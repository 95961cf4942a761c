# This file is part of hostlink.
# Copyright (c) 2026 hostlink developers
# SPDX-License-Identifier: BSD-2-Clause

"""PCIe fault handling around LitePCIe's DMA: per-channel read fault guard and the SoC's fault counters.

`ReadFaultGuard` sits between the TLP controller (which ends a faulty read with `err` beats, see
controller.py) and the crossbar's read ports, one filter per DMA reader. LitePCIe's DMA reader ignores
`err`: it would write a failed read's stale beats into its data FIFO as good data, and the reads after it
would follow a hole. So once a
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

from litex.soc.interconnect.csr import CSRStorage, CSRStatus

from litex.soc.interconnect import stream
from litex.soc.interconnect.packet import Arbiter, Dispatcher

from litepcie.common import completion_layout

# Helpers ------------------------------------------------------------------------------------------

def add_saturating_counter(module, counter, increment):
    """`counter` += `increment` (a signal or expression, 0 when nothing happened) every cycle in `module`'s
    sys domain, stopping at its maximum."""
    total = Signal(len(counter) + 1)
    module.comb += total.eq(counter + increment)
    module.sync += If(total[-1], counter.eq(2**len(counter) - 1)).Else(counter.eq(total[:len(counter)]))

# Read fault guard ---------------------------------------------------------------------------------

class ReadFaultGuard:
    """Discards a channel's completions from its first failed read until its reader is disabled and idle.

    `add_reader(channel, enable)` registers a DMA reader's port channel and its enable (sys domain) before
    the crossbar is finalized, which then calls `connect(crossbar, port, masters)`: the masters' read
    requests are arbitrated onto `port` (the TLP controller's user side) and its completions dispatched to them by
    channel, each registered reader's through its filter. The filter sits after the dispatch, which keeps
    its selection from a packet's first beat to its last: a beat dropped before it would leave it selected.
    Per registered reader: `errors[i]` (o, saturating count of failed reads) and `errored[i]` (o,
    discarding).
    """
    def __init__(self, max_pending_requests):
        self.max_pending_requests = max_pending_requests
        self.readers = []
        self.errors  = []
        self.errored = []

    def add_reader(self, channel, enable):
        self.readers.append((channel, enable))
        self.errors.append(Signal(32, name=f"reader{len(self.readers) - 1}_errors"))
        self.errored.append(Signal(name=f"reader{len(self.readers) - 1}_errored"))

    def connect(self, module, port, masters):
        """Builds the arbitration, dispatch and filters in `module` (the crossbar, while it is finalized:
        this module's own logic is collected before that)."""
        requests, completions = port.sink, port.source

        # # #

        module.submodules += Arbiter([m.sink for m in masters], requests)
        outputs = []
        for m in masters:
            if m.channel in [channel for channel, _ in self.readers]:
                outputs.append(stream.Endpoint(completion_layout(len(completions.dat))))
            else:
                outputs.append(m.source)
        dispatcher = Dispatcher(completions, outputs, one_hot=True)
        module.submodules += dispatcher
        for i, m in enumerate(masters):
            module.comb += dispatcher.sel[i].eq(completions.channel == m.channel)

        for (channel, enable), errors, errored in zip(self.readers, self.errors, self.errored):
            m = next(m for m in masters if m.channel == channel)
            sink, source = outputs[masters.index(m)], m.source
            drop        = Signal()
            taken       = Signal()
            outstanding = Signal(max=self.max_pending_requests + 1)   # Its reads sent, not yet ended.
            issued      = Signal()
            ended       = Signal()
            module.comb += [
                drop.eq(sink.err | errored),
                sink.connect(source, omit={"valid", "ready"}),
                source.valid.eq(sink.valid & ~drop),
                sink.ready.eq(source.ready | drop),
                taken.eq(sink.valid & sink.ready),
                issued.eq(requests.valid & requests.ready & requests.first & ~requests.we &
                    (requests.channel == channel)),
                ended.eq(taken & sink.last & sink.end),
            ]
            module.sync += [
                outstanding.eq(outstanding + issued - ended),
                If(taken & sink.err,
                    errored.eq(1),
                ).Elif(~enable & (outstanding == 0),
                    errored.eq(0),
                ),
            ]
            add_saturating_counter(module, errors, taken & sink.err & sink.last)

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

        # Not as attributes: a LiteXModule would make them its submodules, a second copy in the design.
        self._cores = (controller, guard)
        refused_now = Signal(max=len(refused) + 1)
        self.comb += refused_now.eq(sum(refused) if refused else 0)
        add_saturating_counter(self, self.refused_descriptors, refused_now)
        if msi_failed is not None:
            msi_pulse = msi_failed
            if msi_domain != "sys":
                self.msi_sync = msi_sync = PulseSynchronizer(msi_domain, "sys")
                self.comb += msi_sync.i.eq(msi_failed)
                msi_pulse = msi_sync.o
            add_saturating_counter(self, self.msi_failures, msi_pulse)

    def add_csr(self):
        c, g = self._cores
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
                                                                  "bus words, or (a framed flow) not aligned to "
                                                                  "MPS or no longer than the header (no request "
                                                                  "left for them)."),
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
