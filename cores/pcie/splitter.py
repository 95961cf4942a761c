# This file is part of hostlink.
# Copyright (c) 2026 hostlink developers
# SPDX-License-Identifier: BSD-2-Clause

"""A DMA descriptor splitter without a gap between descriptors, for LitePCIe's DMA reader and writer.

LitePCIe's `LitePCIeDMADescriptorSplitter` cuts each scatter-gather descriptor into requests of at most
`max_size` bytes (MPS for writes, MRRS for reads). After the last request of a descriptor it spends a cycle
in an idle state loading the next one, with its output not valid. The DMA writer spends a cycle between
two write requests anyway (its own idle state, hidden behind the TLP header beat downstream), so that extra
cycle is one lost beat on the link per descriptor: 16 at 1 MiB with 64 KiB descriptors on the VC709.

`DescriptorSplitter` has the same ports and the same behaviour, request for request, but presents the first
request of a descriptor straight from its input, so requests follow each other across descriptors without
a gap. A descriptor is still accepted from the table only once its last request has been accepted, so the
table's loop status (which the driver reads) counts only descriptors whose requests have all been issued.

`litepcie_with_descriptor_splitter()` builds LitePCIe's DMA with it (LitePCIe looks the class up by name
when it builds its reader and writer).
"""

import contextlib

from migen import *

from litex.gen import *
from litex.soc.interconnect import stream

import litepcie.frontend.dma as litepcie_dma
from litepcie.frontend.dma import descriptor_layout


class DescriptorSplitter(LiteXModule):
    """Splits `sink` descriptors into `source` requests of at most `max_size` bytes (an int or a Signal).

    Ports as LitePCIe's splitter: `source.first`/`last` mark a descriptor's first and last request,
    `source.user_id` counts descriptors, `terminate` (asserted while a request is accepted) ends the current
    descriptor at that request. `irq_disable`/`last_disable` follow the descriptor.
    """
    def __init__(self, max_size, address_width):
        self.sink      = sink   = stream.Endpoint(descriptor_layout(address_width=address_width))
        self.source    = source = stream.Endpoint(descriptor_layout(address_width=address_width, with_user_id=True))
        self.terminate = Signal()

        # # #

        running   = Signal()                       # A descriptor's later requests come from the registers.
        address   = Signal.like(sink.address)      # Next request's address...
        remaining = Signal.like(sink.length)       # ...and bytes left of the descriptor from it.
        first_address = Signal.like(sink.address)  # The request about to be offered.
        first_length  = Signal.like(sink.length)
        self.comb += [
            first_address.eq(Mux(running, address,   sink.address)),
            first_length.eq( Mux(running, remaining, sink.length)),
            source.valid.eq(sink.valid),
            source.first.eq(~running),
            source.address.eq(first_address),
            If(first_length > max_size,
                source.length.eq(max_size),
            ).Else(
                source.length.eq(first_length),
                source.last.eq(1),
            ),
            source.irq_disable.eq(sink.irq_disable),
            source.last_disable.eq(sink.last_disable),
        ]
        self.sync += If(source.valid & source.ready,
            If(source.last | self.terminate,
                running.eq(0),
                source.user_id.eq(source.user_id + 1),
            ).Else(
                running.eq(1),
                address.eq(first_address + max_size),
                remaining.eq(first_length - max_size),
            )
        )
        # The descriptor leaves the table with its last request.
        self.comb += sink.ready.eq(source.valid & source.ready & (source.last | self.terminate))


@contextlib.contextmanager
def litepcie_with_descriptor_splitter():
    """While active, LitePCIe's DMA reader and writer are built with `DescriptorSplitter`."""
    name = "LitePCIeDMADescriptorSplitter"
    if not isinstance(getattr(litepcie_dma, name, None), type):
        raise RuntimeError(f"litepcie.frontend.dma has no class {name} to replace: LitePCIe's DMA has changed")
    original = getattr(litepcie_dma, name)
    setattr(litepcie_dma, name, DescriptorSplitter)
    try:
        yield
    finally:
        setattr(litepcie_dma, name, original)
