# This file is part of hostlink.
# Copyright (c) 2026 hostlink developers
# SPDX-License-Identifier: BSD-2-Clause

"""UserPort: a DMA channel's data, to and from the user's own logic, in the user's clock and width.

LitePCIe's DMA channel ends, on the FPGA side, in two streams of the PHY's width in the SoC's clock: what
its reader fetched from the host and what its writer sends to the host. A UserPort turns them into the
two streams a user's core connects to, in the core's clock domain and data width:

    Host-to-FPGA (h2c):  DMA reader ─► dma_sink ─► width converter ─► async FIFO ─► source  (user clock)
    FPGA-to-host (c2h):  sink (user clock) ─► async FIFO ─► width converter ─► dma_source ─► DMA writer
                         └───────── user domain ─────────┘ └─────────────── sys domain ──────────────┘

Bytes keep their order: the first byte from the host is the least significant byte of the first word
(width conversion takes and gives the least significant part first). `first` and `last` pass through:
on h2c they mark the DMA's buffers (when a buffer is a whole number of the user's words); on c2h `last`
ends a buffer early, where the DMA honours it.

In the SoC (`hostlink.cores.pcie.integration.add_pcie_dma(user_ports=...)`) each channel with a UserPort
keeps its test patterns (or DRAM) and internal loopback: the `select` CSR gives the channel's data to the
user port (1) or to them (0, the reset state, so that LitePCIe's `dma_test` works unchanged). A port
not selected receives nothing and back-pressures its core.
"""

from migen import *
from migen.genlib.cdc import MultiReg, PulseSynchronizer, GrayDecoder

from litex.gen import *

from litex.soc.interconnect import stream
from litex.soc.interconnect.csr import *

# Parameters ---------------------------------------------------------------------------------------

def check_user_port(dma_data_width, data_width, fifo_depth):
    """Refuse, with a message a user can act on, a port that cannot be built."""
    if not isinstance(data_width, int) or isinstance(data_width, bool) or data_width <= 0 or data_width % 8:
        raise ValueError(f"user port data width must be a positive whole number of bytes in bits "
                         f"(8, 16, 32, ...), not {data_width!r}")
    if data_width % dma_data_width and dma_data_width % data_width:
        raise ValueError(f"user port data width must divide the DMA's {dma_data_width} bits or be a multiple "
                         f"of them (e.g. {dma_data_width//4}, {dma_data_width}, {dma_data_width*2}), not "
                         f"{data_width}")
    if not isinstance(fifo_depth, int) or isinstance(fifo_depth, bool) or fifo_depth < 4 or \
            fifo_depth & (fifo_depth - 1):
        raise ValueError(f"user port FIFO depth must be a power of 2 of at least 4 words, not {fifo_depth!r}")

def _fifo(layout, cd_from, cd_to, depth):
    """A FIFO of `depth` words from `cd_from` to `cd_to`: asynchronous across clocks, synchronous within one."""
    if cd_from == cd_to:
        return ClockDomainsRenamer(cd_from)(stream.SyncFIFO(layout, depth, buffered=True))
    return stream.ClockDomainCrossing(layout, cd_from=cd_from, cd_to=cd_to, depth=depth)

# Event counter ------------------------------------------------------------------------------------

class _Counter(LiteXModule):
    """Counts cycles where `event` is high; saturates; `clear` (a pulse) restarts it at 0."""
    def __init__(self, event, clear, width=32):
        self.value = Signal(width)   # o

        # # #

        self.sync += If(clear,
            self.value.eq(0),
        ).Elif(event & (self.value != (2**width - 1)),
            self.value.eq(self.value + 1),
        )

class _CrossedCounter(LiteXModule):
    """Counts cycles of `domain` where `event` (of `domain`) is high; saturates; readable in sys as `value`
    (a Gray-coded count through MultiRegs: every value read is one the count had). `clear`, a sys pulse,
    restarts it at 0."""
    def __init__(self, event, clear, domain, width=32):
        self.value = Signal(width)   # o (sys)

        # # #

        if domain == "sys":
            self.counter = _Counter(event, clear, width)
            self.comb += self.value.eq(self.counter.value)
            return
        self.clear_sync = clear_sync = PulseSynchronizer("sys", domain)
        binary = Signal(width)
        gray   = Signal(width)
        step   = Signal(width)
        self.comb += [
            clear_sync.i.eq(clear),
            step.eq(binary + 1),
        ]
        sync = getattr(self.sync, domain)
        sync += If(clear_sync.o,
            binary.eq(0),
            gray.eq(0),
        ).Elif(event & (binary != (2**width - 1)),
            binary.eq(step),
            gray.eq(step ^ step[1:]),
        )
        gray_sys = Signal(width)
        self.specials += MultiReg(gray, gray_sys, odomain="sys")
        self.decoder = decoder = GrayDecoder(width)
        self.comb += [
            decoder.i.eq(gray_sys),
            self.value.eq(decoder.o),
        ]

# User Port ----------------------------------------------------------------------------------------

class UserPort(LiteXModule):
    """One DMA channel's user side: stream ports in the user's clock and width.

    Parameters
    ----------
    dma_data_width : int
        The DMA's data width in bits (the PHY's: 64, 128 or 256).
    data_width : int
        The user's data width in bits, a whole number of bytes that divides `dma_data_width` or is a
        multiple of it. Default: `dma_data_width`.
    clock_domain : str
        The user's clock domain; "sys" (the DMA's own) means no clock crossing.
    fifo_depth : int
        Words (of `data_width`) of each direction's FIFO, a power of 2.
    with_csr : bool
        Add the `select` CSR and the counters as CSRs (`add_csr()`).

    Interface attributes
    --------------------
    source : stream.Endpoint([("data", data_width)]), user domain, o
        Host-to-FPGA data, `first`/`last` at the DMA's buffer bounds.
    sink : stream.Endpoint([("data", data_width)]), user domain, i
        FPGA-to-host data; `last` ends a buffer where the DMA honours it.
    dma_sink : stream.Endpoint([("data", dma_data_width)]), sys domain, i
        The DMA reader's stream.
    dma_source : stream.Endpoint([("data", dma_data_width)]), sys domain, o
        Into the DMA writer.
    select : Signal, sys domain, i
        1: the SoC gives the channel's data to this port (driven by the `select` CSR with `with_csr`).
    h2c_clear, c2h_clear : Signal, sys domain, i
        Restart a direction's counters (the SoC pulses them when the channel's reader or writer is enabled).
    h2c_words, c2h_words : Signal(32), sys domain, o
        DMA words moved through the port in each direction.
    h2c_waits : Signal(32), sys domain, o
        Cycles the DMA reader had a word and the port was full: the core was slower than the host.
    c2h_waits : Signal(32), sys domain, o
        Cycles the port had a word for the DMA writer and the writer did not take it: the host (or the
        link) was slower than the core.
    h2c_core_waits, c2h_core_waits : Signal(32), sys domain, o
        Cycles of the core's clock the core was ready for a word the port did not have (h2c), or had a
        word the port could not take (c2h); counted in the core's clock, read through a Gray code.
    """
    def __init__(self, dma_data_width, data_width=None, clock_domain="sys", fifo_depth=512, with_csr=True):
        data_width = dma_data_width if data_width is None else data_width
        check_user_port(dma_data_width, data_width, fifo_depth)
        self.dma_data_width = dma_data_width
        self.data_width     = data_width
        self.clock_domain   = clock_domain
        self.fifo_depth     = fifo_depth

        self.source     = stream.Endpoint([("data", data_width)])       # o (user domain)
        self.sink       = stream.Endpoint([("data", data_width)])       # i (user domain)
        self.dma_sink   = stream.Endpoint([("data", dma_data_width)])   # i (sys)
        self.dma_source = stream.Endpoint([("data", dma_data_width)])   # o (sys)
        self.select     = Signal()                                      # i (sys): the `select` CSR with_csr
        self.h2c_clear  = Signal()                                      # i (sys)
        self.c2h_clear  = Signal()                                      # i (sys)

        # # #

        layout = [("data", data_width)]

        # Host-to-FPGA: convert in the DMA's domain, then the FIFO (of the user's words) into the user's.
        self.h2c_converter = h2c_converter = stream.Converter(dma_data_width, data_width)
        self.h2c_fifo      = h2c_fifo      = _fifo(layout, "sys", clock_domain, fifo_depth)
        self.comb += [
            self.dma_sink.connect(h2c_converter.sink),
            h2c_converter.source.connect(h2c_fifo.sink),
            h2c_fifo.source.connect(self.source),
        ]

        # FPGA-to-host: the FIFO into the DMA's domain, then convert.
        self.c2h_fifo      = c2h_fifo      = _fifo(layout, clock_domain, "sys", fifo_depth)
        self.c2h_converter = c2h_converter = stream.Converter(data_width, dma_data_width)
        self.comb += [
            self.sink.connect(c2h_fifo.sink),
            c2h_fifo.source.connect(c2h_converter.sink),
            c2h_converter.source.connect(self.dma_source),
        ]

        # Counters (sys domain).
        self.h2c_words_counter = _Counter(self.dma_sink.valid & self.dma_sink.ready,   self.h2c_clear)
        self.h2c_waits_counter = _Counter(self.dma_sink.valid & ~self.dma_sink.ready,  self.h2c_clear)
        self.c2h_words_counter = _Counter(self.dma_source.valid & self.dma_source.ready,  self.c2h_clear)
        self.c2h_waits_counter = _Counter(self.dma_source.valid & ~self.dma_source.ready, self.c2h_clear)
        self.h2c_words = self.h2c_words_counter.value   # o
        self.h2c_waits = self.h2c_waits_counter.value   # o
        self.c2h_words = self.c2h_words_counter.value   # o
        self.c2h_waits = self.c2h_waits_counter.value   # o
        # In the core's clock, read in sys.
        self.h2c_core_waits_counter = _CrossedCounter(self.source.ready & ~self.source.valid, self.h2c_clear,
                                                      clock_domain)
        self.c2h_core_waits_counter = _CrossedCounter(self.sink.valid & ~self.sink.ready, self.c2h_clear,
                                                      clock_domain)
        self.h2c_core_waits = self.h2c_core_waits_counter.value   # o
        self.c2h_core_waits = self.c2h_core_waits_counter.value   # o

        if with_csr:
            self.add_csr()

    def add_csr(self):
        self._select = CSRStorage(fields=[
            CSRField("user", size=1, offset=0, values=[
                ("``0b0``", "The channel's data goes to its test patterns (or DRAM): the reset state."),
                ("``0b1``", "The channel's data goes to the user port."),
            ], description="Where the channel's data goes; change it only while the channel is disabled."),
        ])
        self.comb += self.select.eq(self._select.fields.user)
        self._h2c_words = CSRStatus(32, description="DMA words moved host-to-FPGA through the user port "
                                                    "(cleared when the reader is enabled).")
        self._h2c_waits = CSRStatus(32, description="Cycles the DMA reader had a word and the user port was full.")
        self._c2h_words = CSRStatus(32, description="DMA words moved FPGA-to-host through the user port "
                                                    "(cleared when the writer is enabled).")
        self._c2h_waits = CSRStatus(32, description="Cycles the user port had a word and the DMA writer did not "
                                                    "take it.")
        self._h2c_core_waits = CSRStatus(32, description="Cycles of the core's clock the core was ready and the "
                                                         "port had no word for it (the host was slower).")
        self._c2h_core_waits = CSRStatus(32, description="Cycles of the core's clock the core had a word and the "
                                                         "port was full (the DMA was slower).")
        self.comb += [
            self._h2c_core_waits.status.eq(self.h2c_core_waits),
            self._c2h_core_waits.status.eq(self.c2h_core_waits),
            self._h2c_words.status.eq(self.h2c_words),
            self._h2c_waits.status.eq(self.h2c_waits),
            self._c2h_words.status.eq(self.c2h_words),
            self._c2h_waits.status.eq(self.c2h_waits),
        ]
