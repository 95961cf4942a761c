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

`hold` keeps the next descriptor from beginning (a descriptor already begun runs to its end), and
`begin` pulses as each descriptor begins: the flow gate (flow.py) counts and gates the buffers with them.

`framed` (a DMA writer's framed flows, flow.py: real-time and packets) writes each buffer's 32-byte header
last: the data goes from the buffer's byte 32 on, and when it ends (at the buffer's end, or early at a
request that `terminate` ends) one more request of HEADER_BYTES writes the header at the buffer's start.
The header is then in the host's memory before the buffer counts as done. In framed mode a descriptor
must be longer than the header and aligned to `max_size` (the user port's framer pads a buffer ended early
to a request's end, which it finds from the offset in the buffer); one that is not is refused.

It also checks what LitePCIe's splitter takes on trust. A descriptor of length 0, or whose length is not a
whole number of `word_bytes` (the DMA moves whole bus words), is refused: taken from the table without a
request, and signalled on `refused` (one cycle per descriptor) for the SoC's fault counters. Requests are
cut on `max_size` boundaries of the address (not every `max_size` bytes from the descriptor's start): with
`max_size` a power of two that divides 4 KiB, no request then crosses a 4 KiB boundary or exceeds `max_size`
(MPS for writes, MRRS for reads), whatever the descriptor's alignment. A descriptor aligned to `max_size` is
cut exactly as LitePCIe cuts it.

`litepcie_with_descriptor_splitter(word_bytes)` builds LitePCIe's DMA with it (LitePCIe looks the class up
by name when it builds its reader and writer).
"""

import contextlib

from migen import *

from litex.gen import *
from litex.soc.interconnect import stream

import litepcie.frontend.dma as litepcie_dma
from litepcie.frontend.dma import descriptor_layout

from hostlink.protocol import HEADER_BYTES


class DescriptorSplitter(LiteXModule):
    """Splits `sink` descriptors into `source` requests of at most `max_size` bytes (an int or a Signal).

    Ports as LitePCIe's splitter: `source.first`/`last` mark a descriptor's first and last request,
    `source.user_id` counts descriptors, `terminate` (asserted while a request is accepted) ends the current
    descriptor at that request. `irq_disable`/`last_disable` follow the descriptor.
    """
    def __init__(self, max_size, address_width, word_bytes=4):
        if word_bytes not in [4, 8, 16, 32, 64]:
            raise ValueError(f"DMA word must be 4 to 64 bytes, a power of two, not {word_bytes!r}")
        if isinstance(max_size, int) and (max_size not in [128, 256, 512, 1024, 2048, 4096]):
            raise ValueError(f"largest request must be a power of two from 128 to 4096 bytes, not {max_size!r}")
        self.sink      = sink   = stream.Endpoint(descriptor_layout(address_width=address_width))
        self.source    = source = stream.Endpoint(descriptor_layout(address_width=address_width, with_user_id=True))
        self.terminate = Signal()   # i
        self.refused   = Signal()   # o (a descriptor refused this cycle)
        self.hold      = Signal()   # i (no new descriptor begins while high: flow.py's lossless gate)
        self.begin     = Signal()   # o (a descriptor begins: its first request accepted, or it is refused)
        self.held      = Signal()   # o (a descriptor waits at the input because of `hold`)
        self.framed    = Signal()   # i (each buffer's header written last: a writer's framed flow)

        # # #

        running   = Signal()                       # A descriptor's later requests come from the registers.
        header    = Signal()                       # Framed: the data is out, the header request is next.
        address   = Signal.like(sink.address)      # Next request's address...
        remaining = Signal.like(sink.length)       # ...and bytes left of the descriptor from it.
        skip          = Signal(max=HEADER_BYTES + 1)   # Bytes the data leaves for the header (framed).
        first_address = Signal.like(sink.address)  # The data request about to be offered.
        first_length  = Signal.like(sink.length)
        to_boundary   = Signal(14)                 # Bytes from its address to the next max_size boundary.
        data_end      = Signal()                   # That request ends the descriptor's data.
        bad           = Signal()                   # The descriptor at the input is refused.
        misaligned    = Signal()
        self.comb += [
            skip.eq(Mux(self.framed, HEADER_BYTES, 0)),
            first_address.eq(Mux(running, address,   sink.address + skip)),
            first_length.eq( Mux(running, remaining, sink.length - skip)),
            to_boundary.eq(max_size - (first_address[:13] & (max_size - 1))),
            data_end.eq(first_length <= to_boundary),
            misaligned.eq((sink.address[:13] & (max_size - 1)) != 0),
            bad.eq(~running & ((sink.length == 0) | (sink.length[:log2_int(word_bytes)] != 0) |
                               (self.framed & ((sink.length <= HEADER_BYTES) | misaligned)))),
            self.refused.eq(sink.valid & bad & ~self.hold),
            source.valid.eq(sink.valid & ~bad & (running | ~self.hold)),
            source.first.eq(~running),
            If(header,
                source.address.eq(sink.address),
                source.length.eq(HEADER_BYTES),
                source.last.eq(1),
            ).Else(
                source.address.eq(first_address),
                source.length.eq(Mux(data_end, first_length, to_boundary)),
                source.last.eq(data_end & ~self.framed),
            ),
            source.irq_disable.eq(sink.irq_disable),
            # A framed buffer always ends at the framer's `last` (the driver's descriptors disable it).
            source.last_disable.eq(sink.last_disable & ~self.framed),
        ]
        ends = Signal()   # The request accepted now is the descriptor's last.
        self.comb += ends.eq(header | (~self.framed & (data_end | self.terminate)))
        self.sync += If(source.valid & source.ready,
            If(ends,
                running.eq(0),
                header.eq(0),
                source.user_id.eq(source.user_id + 1),
            ).Elif(data_end | self.terminate,
                running.eq(1),
                header.eq(1),
            ).Else(
                running.eq(1),
                address.eq(first_address + to_boundary),
                remaining.eq(first_length - to_boundary),
            )
        )
        self.comb += [
            self.begin.eq((source.valid & source.ready & ~running) | self.refused),
            self.held.eq(sink.valid & ~running & self.hold),
        ]
        # The descriptor leaves the table with its last request, or at once when refused.
        self.comb += sink.ready.eq((source.valid & source.ready & ends) | self.refused)


@contextlib.contextmanager
def litepcie_with_descriptor_splitter(word_bytes=4):
    """While active, LitePCIe's DMA reader and writer are built with `DescriptorSplitter` refusing lengths
    that are not whole `word_bytes` words.

    Why a swap and not composition: LitePCIeDMAReader and LitePCIeDMAWriter make their splitter inside their
    constructors, by this module-level name, and wire it there (the table into it, it into the request
    path); LitePCIe 2024.12 has no parameter for it. Passing our own would mean copying both constructors.
    The swap lasts only while the DMA is built, and fails at once if LitePCIe renames the class."""
    name = "LitePCIeDMADescriptorSplitter"
    if not isinstance(getattr(litepcie_dma, name, None), type):
        raise RuntimeError(f"litepcie.frontend.dma has no class {name} to replace: LitePCIe's DMA has changed")
    original = getattr(litepcie_dma, name)
    class Splitter(DescriptorSplitter):
        """LitePCIe's splitter's constructor arguments, hostlink's DescriptorSplitter with `word_bytes`."""
        def __init__(self, max_size, address_width):
            super().__init__(max_size, address_width, word_bytes=word_bytes)
    Splitter.__name__ = DescriptorSplitter.__name__
    setattr(litepcie_dma, name, Splitter)
    try:
        yield
    finally:
        setattr(litepcie_dma, name, original)
