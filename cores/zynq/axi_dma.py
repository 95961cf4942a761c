# This file is part of hostlink.
# Copyright (c) 2026 hostlink developers
# SPDX-License-Identifier: BSD-2-Clause

"""An AXI DMA that Linux's unmodified `xilinx_dma` driver drives: Xilinx PG021's direct register mode.

    dma = AXIDMA(bus)        # bus: an AXI master port (LiteX AXIInterface), e.g. a Zynq HP port (64-bit AXI3)
    dma.ctrl                 # AXI-Lite register slave, PG021's offsets (below)
    dma.mm2s                 # stream source: memory to stream (data, keep; last ends a transfer)
    dma.s2mm                 # stream sink: stream to memory (data, keep; last ends a packet)
    dma.mm2s_irq, .s2mm_irq  # interrupt outputs, level, PG021's mm2s_introut / s2mm_introut

Registers (32-bit; MM2S at 0x00, S2MM at 0x30, same layout), as PG021's tables for direct register mode
(C_INCLUDE_SG = 0); the reset value of each is PG021's (DMACR 0x00010002, DMASR 0x00010001, the rest 0):

| offset | name | bits |
|---|---|---|
| 0x00 / 0x30 | DMACR | 0 RS (run); 1 reads 1; 2 Reset (both channels; reads 1 until done); 3 Keyhole reads 0 (ours); 4 Cyclic BD Enable, 12 IOC_IrqEn, 13 Dly_IrqEn, 14 Err_IrqEn, 23:16 IRQThreshold (reset 1; a write of 0 keeps it), 31:24 IRQDelay: read/write |
| 0x04 / 0x34 | DMASR | 0 Halted, 1 Idle, 3 SGIncld (0), 4 DMAIntErr, 5 DMASlvErr, 6 DMADecErr, 8-10 SG errors (0), 12 IOC_Irq, 13 Dly_Irq (0) and 14 Err_Irq (write 1 to clear), 23:16 IRQThresholdSts (1), 31:24 IRQDelaySts (0) |
| 0x18 / 0x48 | SA / DA | the transfer's byte address, aligned to the bus width |
| 0x1C / 0x4C | SA_MSB / DA_MSB | upper address word: kept (ours), must be 0 on a 32-bit bus |
| 0x28 / 0x58 | LENGTH | 25:0: writing a non-zero value to a running channel starts a transfer of that many bytes; 0 starts nothing; written while halted, no effect (it reads back); S2MM: the buffer's size, and once done the bytes the packet had |

Halted is 1 once RS is 0 and no transfer runs. Idle (PG021, direct register mode: "the current transfer has
completed") reads 0 while halted, before the first transfer after a reset and while a transfer runs, and 1 once
it has completed. The fields PG021 gives to scatter-gather or that this DMA leaves out act on nothing here:
Cyclic BD Enable, Dly_IrqEn, IRQThreshold and IRQDelay keep what is written (xilinx_dma writes the last three
and reads DMACR back to modify it); every completion raises IOC_Irq, never Dly_Irq. Ours, where PG021 says
nothing for direct register mode: IRQThresholdSts and IRQDelaySts read their defaults (1, 0), the SG engine's
counters they report being absent; Keyhole (FIXED bursts) is not built, so its bit reads 0 and a driver can
tell; SA_MSB / DA_MSB keep what is written.

The engines master `bus` with INCR bursts of at most `burst_beats` beats (16: AXI3's limit) that never
cross a 4 KiB boundary, up to `max_bursts` in flight each way. MM2S reserves room in its FIFO before it asks
for a burst, so read data is always taken at once; S2MM asks for a burst once the stream has given its
data, so write data always follows at once. A transfer's last beat has `keep` for the bytes it holds (MM2S);
an S2MM packet's length is counted from `keep`. Addresses must be aligned to the bus width, as PG021's
without its Data Realignment Engine (Linux's driver then asks its clients for aligned buffers).

Errors. As PG021: a read or write answered SLVERR or DECERR sets DMASlvErr or DMADecErr; an S2MM packet
longer than the buffer sets DMAIntErr (PG021: S2MM's DMAIntErr in direct register mode) and its excess is
dropped up to its `last`. Each ends the transfer with Err_Irq instead of IOC_Irq and stops the channel (RS
cleared, Halted once idle) until a reset; after it, the next transfer is clean. Ours, where PG021 leaves the
case undefined: a non-zero LENGTH written to a running channel whose address is not aligned to the bus (PG021
requires it without the Data Realignment Engine), or while a transfer runs, starts nothing and stops the
channel with Err_Irq, at once or at the end of the running transfer (which moves all its data); S2MM also sets
DMAIntErr, MM2S sets no error bit, its DMAIntErr being fixed at 0 in direct register mode (PG021).
"""

from functools import reduce
from operator import and_

from migen import *

from litex.gen import *

from litex.soc.interconnect import stream
from litex.soc.interconnect.axi import AXILiteInterface

# The register map and its bits are the driver's too (PG021; software/zynq/dma_user_test.c): defined in
# hostlink.protocol.
from hostlink.protocol import AXI_DMA_CHANNEL, AXI_DMA_LENGTH_BITS as LENGTH_BITS, AXI_DMA_MM2S, AXI_DMA_S2MM, \
    DMACR_CYCLIC_BD, DMACR_DLY_IRQ_EN, DMACR_ERR_IRQ_EN, DMACR_IOC_IRQ_EN, DMACR_IRQ_DELAY_SHIFT, \
    DMACR_IRQ_THRESHOLD_SHIFT, DMACR_RESET, DMACR_RS, DMASR_DLY_IRQ, DMASR_ERR_IRQ, DMASR_IOC_IRQ, AXI_DMA_SG_CHANNEL

from hostlink.cores.zynq.axi_dma_sg import AXIBusShare, SGEngine

__all__ = ["AXIDMA"]

RESP_SLVERR, RESP_DECERR = 0b10, 0b11


def _bit(mask):
    return mask.bit_length() - 1


def _beats_to_4k(address, shift):
    """Beats from `address` to the next 4 KiB boundary, which no AXI burst may cross."""
    return (4096 - address[:12]) >> shift


def _smallest(*values):
    result = values[0]
    for value in values[1:]:
        result = Mux(value < result, value, result)
    return result


class _Channel(LiteXModule):
    """One direction's registers: control, status, address, length, and the interrupt. `int_errors`: whether
    the channel's DMASR has a DMAIntErr in direct register mode (PG021: S2MM's does, MM2S's is fixed at 0)."""
    def __init__(self, int_errors):
        self.int_errors = int_errors
        self.rs        = Signal()
        self.ioc_en    = Signal()
        self.dly_en    = Signal()              # Kept; no delay interrupt in direct register mode.
        self.err_en    = Signal()
        self.cyclic    = Signal()              # Cyclic BD Enable: kept; a scatter-gather mode.
        self.irq_threshold = Signal(8, reset=1)  # Kept; scatter-gather's interrupt coalescing.
        self.irq_delay = Signal(8)             # Kept; scatter-gather's delay timer.
        self.idle      = Signal()              # A transfer has completed since the last start or reset.
        self.ioc_irq   = Signal()
        self.err_irq   = Signal()
        self.dly_irq   = Signal()              # Scatter-gather's delay interrupt (0 in direct register mode).
        self.int_err   = Signal()
        self.slv_err   = Signal()
        self.dec_err   = Signal()
        self.address   = Signal(32)
        self.address_msb = Signal(32)
        self.length    = Signal(LENGTH_BITS)
        self.busy      = Signal()
        self.misuse    = Signal()   # A LENGTH write the channel cannot start (Err_Irq; S2MM: DMAIntErr).
        self.irq       = Signal()
        self.sg        = None                  # The channel's SGEngine, in scatter-gather mode.
        self.comb += self.irq.eq((self.ioc_irq & self.ioc_en) | (self.dly_irq & self.dly_en) |
                                 (self.err_irq & self.err_en))

    def control(self):
        """DMACR without Reset (the DMA's, not the channel's): bit 1 reads 1, Keyhole (3) 0 (ours: no keyhole)."""
        return Cat(self.rs, C(1, 1), C(0, 1), C(0, 1), self.cyclic, C(0, 7), self.ioc_en, self.dly_en,
                   self.err_en, C(0, 1), self.irq_threshold, self.irq_delay)

    def status(self):
        """DMASR. Idle only while running; SGIncld, the SG errors and Dly_Irq 0; IRQThresholdSts and IRQDelaySts
        their defaults (1, 0), the SG engine's counters they report being absent."""
        if self.sg is not None:
            return self.sg_status()
        halted = ~self.rs & ~self.busy
        return Cat(halted, self.idle & ~halted, C(0, 1), C(0, 1), self.int_err, self.slv_err, self.dec_err,
                   C(0, 5), self.ioc_irq, C(0, 1), self.err_irq, C(0, 1), C(1, 8), C(0, 8))


    def sg_status(self):
        """DMASR in scatter-gather mode: SGIncld 1, the SG errors, Dly_Irq and the SG engine's counters;
        Halted waits for the SG engine too."""
        sg = self.sg
        halted = ~self.rs & ~self.busy & ~sg.active
        return Cat(halted, self.idle & ~halted, C(0, 1), C(1, 1), self.int_err, self.slv_err, self.dec_err,
                   C(0, 1), sg.sg_int_err, sg.sg_slv_err, sg.sg_dec_err, C(0, 1), self.ioc_irq, self.dly_irq,
                   self.err_irq, C(0, 1), sg.threshold_sts, sg.delay_sts)


class AXIDMA(LiteXModule):
    """PG021's AXI DMA in direct register mode on the AXI master `bus` (the module docstring says how).

    Parameters:
        bus          the AXI master port the engines read and write memory through (LiteX AXIInterface).
        burst_beats  longest burst: a power of two from 1 to the bus's limit (16 on AXI3).
        max_bursts   bursts in flight each way, 1 to 64.
        fifo_beats   each engine's FIFO, in beats: at least one burst.

    Interface:
        ctrl          AXI-Lite slave: the registers, at PG021's offsets (hostlink.protocol).
        mm2s          stream source: memory to stream (data, keep; last ends a transfer).
        s2mm          stream sink: stream to memory (data, keep; last ends a packet).
        mm2s_irq (o)  MM2S interrupt, level: IOC_Irq or Err_Irq, as DMACR enables them.
        s2mm_irq (o)  S2MM interrupt, level.
        rd, wr        the MM2S and S2MM channels' registers and state (_Channel).
        bus           the master port given.

    Inside, one method per concern, called in this order by the constructor:

        ctrl ──> registers (_add_registers): DMACR, DMASR, SA/DA and LENGTH of rd and wr;
                 a non-zero LENGTH write starts its channel's transfer (or is refused: Err_Irq),
                 DMACR.Reset starts the soft reset
                   │ start pulses, the LENGTH written
                   v
        MM2S (_add_mm2s):  bus.ar/r ──> FIFO (room reserved before each burst) ──> mm2s
        S2MM (_add_s2mm):  s2mm ──> FIFO ──> bursts on bus.aw/w/b, each once its data is in
                   │ quiet (no burst asked for or in flight), the state a reset clears
                   v
        soft reset (the constructor): once both engines are quiet, every register and FIFO cleared
    """

    def __init__(self, bus, burst_beats=16, max_bursts=4, fifo_beats=64, sg=False, delay_resolution=125):
        data_width = len(bus.w.data)
        beat_bytes = data_width//8
        shift      = log2_int(beat_bytes)
        max_len    = 2**len(bus.ar.len)
        if not (isinstance(burst_beats, int) and 1 <= burst_beats <= max_len and burst_beats & (burst_beats - 1) == 0):
            raise ValueError(f"burst_beats must be a power of two from 1 to {max_len} (the bus's {bus.version} "
                             f"bursts), not {burst_beats!r}")
        if not (isinstance(max_bursts, int) and 1 <= max_bursts <= 64):
            raise ValueError(f"max_bursts (bursts in flight each way) must be 1 to 64, not {max_bursts!r}")
        if not (isinstance(fifo_beats, int) and fifo_beats >= burst_beats):
            raise ValueError(f"fifo_beats must hold at least one burst ({burst_beats} beats), not {fifo_beats!r}")
        if not isinstance(sg, bool):
            raise ValueError(f"sg (scatter-gather mode, PG021's C_INCLUDE_SG) must be True or False, not {sg!r}")
        self.bus = bus
        self.sg  = sg
        self._add_interface(data_width)  # ctrl, mm2s, s2mm, mm2s_irq, s2mm_irq (the class docstring).

        # # #

        # PG021: MM2S's DMAIntErr is fixed at 0 in direct register mode; scatter-gather mode has it.
        self.rd = rd = _Channel(int_errors=sg)
        self.wr = wr = _Channel(int_errors=True)
        self.comb += [self.mm2s_irq.eq(rd.irq), self.s2mm_irq.eq(wr.irq)]
        sizes = dict(data_width=data_width, burst_beats=burst_beats, max_bursts=max_bursts, fifo_beats=fifo_beats)

        # Soft reset: no new bursts; the ones in flight finish (read data dropped, write data sent), then
        # every register and FIFO is cleared.
        resetting = Signal()
        clear     = Signal()   # Both engines quiet: clear everything.
        quiet     = Signal()   # No burst asked for or in flight, either way.

        # One method per concern, each called from here (never from another method) and its results unpacked
        # into several names: migen then names their signals as it did when this constructor was one block,
        # and the generated Verilog is unchanged. The ports are made by a method too (_add_interface), first,
        # for the same reason: `ctrl` shares names with the registers' signals (b_valid, r_valid), and a
        # conversion of the DMA alone lists its ports in the order they were made.

        # Scatter-gather (axi_dma_sg.py): a descriptor engine per channel; they and the data engines share
        # `bus` (as PG021's M_AXI_SG, M_AXI_MM2S and M_AXI_S2MM share an HP port through an interconnect).
        self.data_bus = bus
        sg_quiet = []
        if sg:
            self.bus_share = AXIBusShare(bus, 3, depth=max_bursts + 4)
            self.data_bus  = self.bus_share.masters[0]
            for channel, master, s2mm in [(rd, self.bus_share.masters[1], False), (wr, self.bus_share.masters[2], True)]:
                channel.sg = ResetInserter()(SGEngine(channel, master, s2mm, resetting, delay_resolution))
                self.comb += channel.sg.reset.eq(clear)
                sg_quiet.append(~channel.sg.active)
            self.sg_mm2s, self.sg_s2mm = rd.sg, wr.sg

        # Registers (AXI-Lite) -------------------------------------------------------------------------
        start_rd, start_wr, length = self._add_registers(resetting, clear, shift)
        self.comb += clear.eq(resetting & quiet)
        if sg:
            transfers = [(rd.sg.start, rd.sg.address, rd.sg.length, rd.sg.eof), (wr.sg.start, wr.sg.address, wr.sg.length)]
        else:
            transfers = [(start_rd, rd.address, length, 1), (start_wr, wr.address, length)]

        # MM2S: memory to stream -----------------------------------------------------------------------
        rd_quiet, rd_state = self._add_mm2s(*transfers[0], resetting, clear, **sizes)

        # S2MM: stream to memory -----------------------------------------------------------------------
        wr_quiet, wr_state = self._add_s2mm(*transfers[1], resetting, clear, **sizes)

        # Reset ---------------------------------------------------------------------------------------
        self.comb += quiet.eq(reduce(and_, rd_quiet + wr_quiet + sg_quiet))
        self.sync += If(clear,
            *[s.eq(s.reset) for channel in (rd, wr) for s in (channel.rs, channel.ioc_en, channel.dly_en,
                channel.err_en, channel.cyclic, channel.irq_threshold, channel.irq_delay, channel.idle,
                channel.ioc_irq, channel.err_irq, channel.int_err, channel.slv_err, channel.dec_err,
                channel.address, channel.address_msb, channel.length, channel.busy)
                + ((channel.dly_irq,) if sg else ())],
            *[s.eq(0) for s in rd_state + wr_state],
        )

    # Interface and concerns, in the order the constructor calls them -----------------------------
    # The engines return what the soft reset waits for (`quiet`: terms that must all be true) and the state
    # it clears.

    def _add_interface(self, data_width):
        """The ports, as the class docstring lists them."""
        beat_bytes = data_width//8
        self.ctrl = AXILiteInterface(data_width=32, address_width=32)
        self.mm2s = stream.Endpoint([("data", data_width), ("keep", beat_bytes)])  # o
        self.s2mm = stream.Endpoint([("data", data_width), ("keep", beat_bytes)])  # i
        self.mm2s_irq = Signal()  # o
        self.s2mm_irq = Signal()  # o

    def _add_registers(self, resetting, clear, shift):
        """The AXI-Lite slave `ctrl` over both channels' registers; a running channel's non-zero LENGTH write
        starts a transfer or is refused (Err_Irq); DMACR.Reset raises `resetting` until `clear`. Returns the
        start pulses and the LENGTH written (the new transfer's, in the cycle of a start)."""
        ctrl     = self.ctrl
        rd, wr   = self.rd, self.wr
        start_rd = Signal()
        start_wr = Signal()
        b_valid  = Signal()
        r_valid  = Signal()
        r_data   = Signal(32)
        waddr    = Signal(8)
        raddr    = Signal(8)
        wdata    = Signal(32)
        write    = Signal()

        # Data-Path: a write is taken once its address and data are both there and the last response has
        # gone; one read at a time.
        self.comb += [
            ctrl.aw.ready.eq(ctrl.aw.valid & ctrl.w.valid & ~b_valid),
            ctrl.w.ready.eq(ctrl.aw.valid & ctrl.w.valid & ~b_valid),
            write.eq(ctrl.aw.valid & ctrl.w.valid & ~b_valid),
            waddr.eq(ctrl.aw.addr[:8]),
            wdata.eq(ctrl.w.data),
            ctrl.b.valid.eq(b_valid),
            ctrl.b.resp.eq(0),
            ctrl.ar.ready.eq(~r_valid),
            ctrl.r.valid.eq(r_valid),
            ctrl.r.resp.eq(0),
            ctrl.r.data.eq(r_data),
            raddr.eq(ctrl.ar.addr[:8]),
        ]
        self.sync += [
            If(write, b_valid.eq(1)).Elif(ctrl.b.ready, b_valid.eq(0)),
            If(ctrl.ar.valid & ~r_valid, r_valid.eq(1)).Elif(ctrl.r.ready, r_valid.eq(0)),
        ]
        read_cases = {}
        R = AXI_DMA_CHANNEL
        for channel, base in [(rd, AXI_DMA_MM2S), (wr, AXI_DMA_S2MM)]:
            read_cases[base + R["DMACR"]]       = r_data.eq(channel.control() | (resetting << _bit(DMACR_RESET)))
            read_cases[base + R["DMASR"]]       = r_data.eq(channel.status())
            if channel.sg is None:
                read_cases[base + R["ADDRESS"]]     = r_data.eq(channel.address)
                read_cases[base + R["ADDRESS_MSB"]] = r_data.eq(channel.address_msb)
                read_cases[base + R["LENGTH"]]      = r_data.eq(channel.length)
            else:   # SA/DA and LENGTH are reserved in scatter-gather mode: they read 0.
                for name in AXI_DMA_SG_CHANNEL:
                    read_cases[base + AXI_DMA_SG_CHANNEL[name]] = r_data.eq(getattr(channel.sg, name.lower()))
        read_cases["default"] = r_data.eq(0)
        self.sync += If(ctrl.ar.valid & ~r_valid, Case(raddr, read_cases))

        # Control-Path: register writes, starts and refusals.
        for channel, base, start in [(rd, AXI_DMA_MM2S, start_rd), (wr, AXI_DMA_S2MM, start_wr)]:
            # PG021: a non-zero LENGTH written to a running channel starts a transfer; 0 starts nothing (and
            # is no error), and while halted the write has no effect on the DMA. Ours: one at an address not
            # aligned to the bus or while a transfer runs is refused: it stops the channel with Err_Irq, at
            # once or at the end of the running transfer; S2MM also flags DMAIntErr (MM2S's is fixed at 0).
            length_write = write & (waddr == base + R["LENGTH"]) & channel.rs & ~resetting & \
                           (wdata[:LENGTH_BITS] != 0) & (channel.sg is None)
            self.comb += [
                channel.misuse.eq(length_write & (channel.busy | (channel.address[:shift] != 0))),
                start.eq(length_write & ~channel.misuse),
            ]
            self.sync += If(channel.misuse,
                channel.int_err.eq(1) if channel.int_errors else [],
                If(~channel.busy,
                    channel.err_irq.eq(1),
                    channel.rs.eq(0),
                ),
            )
            self.sync += If(start, channel.idle.eq(0))
            threshold = wdata[DMACR_IRQ_THRESHOLD_SHIFT:DMACR_IRQ_THRESHOLD_SHIFT + 8]
            self.sync += If(write,
                If(waddr == base + R["DMACR"],
                    channel.rs.eq(wdata[_bit(DMACR_RS)]),
                    channel.cyclic.eq(wdata[_bit(DMACR_CYCLIC_BD)]),
                    channel.ioc_en.eq(wdata[_bit(DMACR_IOC_IRQ_EN)]),
                    channel.dly_en.eq(wdata[_bit(DMACR_DLY_IRQ_EN)]),
                    channel.err_en.eq(wdata[_bit(DMACR_ERR_IRQ_EN)]),
                    If(threshold != 0, channel.irq_threshold.eq(threshold)),   # PG021: a 0 has no effect.
                    channel.irq_delay.eq(wdata[DMACR_IRQ_DELAY_SHIFT:DMACR_IRQ_DELAY_SHIFT + 8]),
                ),
                If(waddr == base + R["DMASR"],
                    If(wdata[_bit(DMASR_IOC_IRQ)], channel.ioc_irq.eq(0)),
                    If(wdata[_bit(DMASR_ERR_IRQ)], channel.err_irq.eq(0)),
                ),
                *([If(waddr == base + R["ADDRESS"],     channel.address.eq(wdata)),
                   If(waddr == base + R["ADDRESS_MSB"], channel.address_msb.eq(wdata)),
                   If(waddr == base + R["LENGTH"],      channel.length.eq(wdata[:LENGTH_BITS]))]
                  if channel.sg is None else []),
            )
            if channel.sg is not None:
                sgr = AXI_DMA_SG_CHANNEL
                self.comb += [
                    channel.sg.cur_write.eq(write & (waddr == base + sgr["CURDESC"])),
                    channel.sg.tail_write.eq(write & (waddr == base + sgr["TAILDESC"])),
                    channel.sg.control_write.eq(write & (waddr == base + R["DMACR"])),
                    channel.sg.wdata.eq(wdata),
                ]
                self.sync += If(write,
                    If(waddr == base + R["DMASR"], If(wdata[_bit(DMASR_DLY_IRQ)], channel.dly_irq.eq(0))),
                    If(waddr == base + sgr["CURDESC_MSB"],  channel.sg.curdesc_msb.eq(wdata)),
                    If(waddr == base + sgr["TAILDESC_MSB"], channel.sg.taildesc_msb.eq(wdata)),
                )
        # DMACR.Reset, written to either channel, resets both.
        self.sync += [
            If(write & ((waddr == AXI_DMA_MM2S + R["DMACR"]) | (waddr == AXI_DMA_S2MM + R["DMACR"])) &
               wdata[_bit(DMACR_RESET)], resetting.eq(1)),
            If(clear, resetting.eq(0)),
        ]
        return start_rd, start_wr, wdata[:LENGTH_BITS]

    def _add_mm2s(self, start, address, length, eof, resetting, clear, data_width, burst_beats, max_bursts,
                  fifo_beats):
        """MM2S, memory to stream: reads the transfer in bursts from `bus` into a FIFO (room reserved before
        each burst is asked for, so read data is always taken at once) and hands its bytes to `mm2s`.
        Returns the soft reset's quiet terms and the state it clears."""
        rd         = self.rd
        beat_bytes = data_width//8
        shift      = log2_int(beat_bytes)
        beats_bits = LENGTH_BITS - shift + 1

        # Data-Path.
        self.rd_fifo = rd_fifo = ResetInserter()(stream.SyncFIFO([("data", data_width)], fifo_beats, buffered=True))
        rd_address    = Signal(32)
        rd_request    = Signal(beats_bits)          # Beats still to ask for.
        rd_deliver    = Signal(beats_bits)          # Beats still to hand to the stream.
        rd_last_keep  = Signal(beat_bytes)
        rd_reserved   = Signal(max=fifo_beats + 1)  # FIFO room promised to bursts asked for.
        rd_in_flight  = Signal(max=max_bursts + 1)
        rd_burst      = Signal(max=burst_beats + 1)
        rd_ar_valid   = Signal()
        rd_errors     = Signal()
        ar, r = self.data_bus.ar, self.data_bus.r
        self.comb += [
            rd_burst.eq(_smallest(C(burst_beats), _beats_to_4k(rd_address, shift), rd_request)),
            ar.valid.eq(rd_ar_valid),
            ar.burst.eq(0b01),        # INCR.
            ar.size.eq(shift),
            ar.id.eq(0),              # One ID: data comes back in request order.
            ar.cache.eq(0b0011),      # Bufferable, modifiable (what Xilinx's cores drive).
            r.ready.eq(1),            # Room was reserved before the burst was asked for.
            rd_fifo.sink.valid.eq(r.valid & rd.busy),
            rd_fifo.sink.data.eq(r.data),
            rd_fifo.reset.eq(clear),
        ]
        rd_popped = Signal()
        rd_eof    = Signal()   # Scatter-gather: TXEOF. A packet runs from TXSOF to TXEOF, `last` at TXEOF's end.
        self.comb += [
            self.mm2s.valid.eq(rd_fifo.source.valid),
            self.mm2s.data.eq(rd_fifo.source.data),
            self.mm2s.last.eq((rd_deliver == 1) & (rd_eof if self.sg else 1)),
            self.mm2s.keep.eq(Mux(rd_deliver == 1, rd_last_keep, 2**beat_bytes - 1)),
            rd_fifo.source.ready.eq(self.mm2s.ready),
            rd_popped.eq(rd_fifo.source.valid & rd_fifo.source.ready),
        ]

        # Control-Path.
        rd_ask = Signal()
        self.comb += rd_ask.eq(rd.busy & ~resetting & ~rd_ar_valid & (rd_request != 0) & (rd_in_flight < max_bursts) &
                               (rd_reserved + rd_burst <= fifo_beats))
        length_beats = (length + beat_bytes - 1) >> shift
        self.sync += [
            If(start,
                rd.busy.eq(1),
                rd_address.eq(address),
                rd_request.eq(length_beats),
                rd_deliver.eq(length_beats),
                rd_last_keep.eq(Mux(length[:shift] == 0, 2**beat_bytes - 1, (1 << length[:shift]) - 1)),
                rd_errors.eq(0),
            ),
            If(rd_ask,
                rd_ar_valid.eq(1),
                ar.addr.eq(rd_address),
                ar.len.eq(rd_burst - 1),
                rd_address.eq(rd_address + (rd_burst << shift)),
                rd_request.eq(rd_request - rd_burst),
            ).Elif(ar.valid & ar.ready,
                rd_ar_valid.eq(0),
            ),
            rd_in_flight.eq(rd_in_flight + (ar.valid & ar.ready) - (r.valid & r.ready & r.last)),
            rd_reserved.eq(rd_reserved + Mux(rd_ask, rd_burst, 0) - rd_popped),
            If(rd.misuse, rd_errors.eq(1)),
            If(r.valid & (r.resp == RESP_SLVERR), rd.slv_err.eq(1), rd_errors.eq(1)),
            If(r.valid & (r.resp == RESP_DECERR), rd.dec_err.eq(1), rd_errors.eq(1)),
            If(rd_popped,
                rd_deliver.eq(rd_deliver - 1),
                If(rd_deliver == 1,
                    rd.busy.eq(0),
                    # Scatter-gather: the SG engine ends the descriptor (self.sg_mm2s.done).
                    *([] if self.sg else [
                    rd.idle.eq(1),
                    If(rd_errors | (r.valid & r.resp[1]),
                        rd.err_irq.eq(1),
                        rd.rs.eq(0),
                    ).Else(
                        rd.ioc_irq.eq(1),
                    )]),
                ),
            ),
        ]
        if self.sg:
            self.sync += If(start, rd_eof.eq(eof))
            self.comb += rd.sg.done.eq(rd_popped & (rd_deliver == 1))
        # Reserved room is only given back by the stream: a reset drops it with the FIFO.
        return [~rd_ar_valid, rd_in_flight == 0], [rd_request, rd_deliver, rd_reserved]

    def _add_s2mm(self, start, address, length, resetting, clear, data_width, burst_beats, max_bursts, fifo_beats):
        """S2MM, stream to memory: takes the packet from `s2mm` into a FIFO up to the buffer's size, counting
        its bytes from `keep` (a longer packet's excess is dropped up to its `last`: DMAIntErr); asks for a
        burst once the stream has given its data, so write data always follows at once; once the packet has
        ended and its last response is in, ends the transfer (LENGTH: the packet's bytes)."""
        wr         = self.wr
        beat_bytes = data_width//8
        shift      = log2_int(beat_bytes)
        beats_bits = LENGTH_BITS - shift + 1

        # Data-Path.
        self.wr_fifo = wr_fifo = ResetInserter()(stream.SyncFIFO([("data", data_width), ("strb", beat_bytes)],
                                                                fifo_beats, buffered=True))
        self.wr_bursts = wr_bursts = ResetInserter()(stream.SyncFIFO([("beats", bits_for(burst_beats))],
                                                                     max_bursts, buffered=True))
        wr_address   = Signal(32)
        wr_room      = Signal(beats_bits)           # Beats the buffer still takes.
        wr_received  = Signal(beats_bits)           # Beats taken from the stream.
        wr_assigned  = Signal(beats_bits)           # Beats given to a burst.
        wr_bytes     = Signal(LENGTH_BITS + 1)      # Bytes of the packet (keep), in the buffer.
        wr_ended     = Signal()                     # The packet's last beat is in (or its excess dropped).
        wr_dropping  = Signal()                     # Too long: dropping up to its last.
        wr_in_flight = Signal(max=max_bursts + 1)   # Bursts whose response has not come.
        wr_full      = Signal(max=burst_beats + 1)
        wr_burst     = Signal(max=burst_beats + 1)
        wr_pending   = Signal(beats_bits)
        wr_aw_valid  = Signal()
        wr_beat      = Signal(max=burst_beats)
        wr_errors    = Signal()
        aw, w, b = self.data_bus.aw, self.data_bus.w, self.data_bus.b
        sink = self.s2mm
        keep_bytes = Signal(max=beat_bytes + 1)
        self.comb += keep_bytes.eq(reduce(lambda x, y: x + y, [sink.keep[i] for i in range(beat_bytes)]))
        take = Signal()
        drop = Signal()
        self.comb += [
            take.eq(sink.valid & wr.busy & ~resetting & ~wr_ended & ~wr_dropping & (wr_room != 0) & wr_fifo.sink.ready),
            drop.eq(sink.valid & wr.busy & ~wr_ended & (wr_dropping | ((wr_room == 0) & ~resetting))),
            sink.ready.eq(take | drop),
            wr_fifo.sink.valid.eq(take),
            wr_fifo.sink.data.eq(sink.data),
            wr_fifo.sink.strb.eq(sink.keep),
            wr_fifo.reset.eq(clear),
            wr_bursts.reset.eq(clear),
            wr_pending.eq(wr_received - wr_assigned),
            wr_full.eq(_smallest(C(burst_beats), _beats_to_4k(wr_address, shift))),
            wr_burst.eq(_smallest(wr_full, wr_pending)),
            aw.valid.eq(wr_aw_valid),
            aw.burst.eq(0b01),
            aw.size.eq(shift),
            aw.id.eq(0),
            aw.cache.eq(0b0011),
            w.valid.eq(wr_fifo.source.valid & wr_bursts.source.valid),
            w.data.eq(wr_fifo.source.data),
            w.strb.eq(wr_fifo.source.strb),
            w.last.eq(wr_beat == wr_bursts.source.beats - 1),
            wr_fifo.source.ready.eq(w.valid & w.ready),
            wr_bursts.source.ready.eq(w.valid & w.ready & w.last),
            wr_bursts.sink.beats.eq(aw.len + 1),
            wr_bursts.sink.valid.eq(aw.valid & aw.ready),
            b.ready.eq(1),
        ]
        if hasattr(w, "id"):
            self.comb += w.id.eq(0)

        # Control-Path.
        wr_ask = Signal()
        self.comb += wr_ask.eq(wr.busy & ~resetting & ~wr_aw_valid & (wr_pending != 0) &
                               ((wr_pending >= wr_full) | wr_ended) & (wr_in_flight < max_bursts) &
                               wr_bursts.sink.ready)
        wr_done = Signal()
        self.comb += wr_done.eq(wr.busy & wr_ended & (wr_pending == 0) & ~wr_aw_valid & ~wr_bursts.source.valid &
                                (wr_in_flight == 0))
        length_beats = (length + beat_bytes - 1) >> shift
        self.sync += [
            If(start,
                wr.busy.eq(1),
                wr_address.eq(address),
                wr_room.eq(length_beats),
                wr_received.eq(0),
                wr_assigned.eq(0),
                wr_bytes.eq(0),
                wr_ended.eq(0),
                wr_dropping.eq(0),
                wr_errors.eq(0),
            ),
            If(take,
                wr_room.eq(wr_room - 1),
                wr_received.eq(wr_received + 1),
                wr_bytes.eq(wr_bytes + keep_bytes),
                # Scatter-gather: a full buffer ends its descriptor, the packet going on in the next one.
                If(sink.last | ((wr_room == 1) if self.sg else 0), wr_ended.eq(1)),
            ),
            If(drop,
                wr_dropping.eq(1),
                If(~wr_dropping, wr.int_err.eq(1), wr_errors.eq(1)),
                If(sink.last, wr_ended.eq(1), wr_dropping.eq(0)),
            ),
            If(wr_ask,
                wr_aw_valid.eq(1),
                aw.addr.eq(wr_address),
                aw.len.eq(wr_burst - 1),
                wr_address.eq(wr_address + (wr_burst << shift)),
                wr_assigned.eq(wr_assigned + wr_burst),
            ).Elif(aw.valid & aw.ready,
                wr_aw_valid.eq(0),
            ),
            If(w.valid & w.ready,
                wr_beat.eq(Mux(w.last, 0, wr_beat + 1)),
            ),
            wr_in_flight.eq(wr_in_flight + (aw.valid & aw.ready) - (b.valid & b.ready)),
            If(wr.misuse, wr_errors.eq(1)),
            If(b.valid & (b.resp == RESP_SLVERR), wr.slv_err.eq(1), wr_errors.eq(1)),
            If(b.valid & (b.resp == RESP_DECERR), wr.dec_err.eq(1), wr_errors.eq(1)),
            If(wr_done,
                wr.busy.eq(0),
                # Scatter-gather: the SG engine ends the descriptor (self.sg_s2mm.done).
                *([] if self.sg else [
                wr.idle.eq(1),
                wr.length.eq(wr_bytes),
                If(wr_errors,
                    wr.err_irq.eq(1),
                    wr.rs.eq(0),
                ).Else(
                    wr.ioc_irq.eq(1),
                )]),
            ),
        ]
        if self.sg:
            wr_eof = Signal()   # The packet's `last` is in this buffer: RXEOF.
            self.sync += [
                If(start, wr_eof.eq(0)),
                If(take & sink.last, wr_eof.eq(1)),
            ]
            self.comb += [wr.sg.done.eq(wr_done), wr.sg.bytes.eq(wr_bytes), wr.sg.rx_eof.eq(wr_eof)]
        return ([~wr_aw_valid, wr_in_flight == 0, ~wr_bursts.source.valid],
                [wr_received, wr_assigned, wr_ended, wr_dropping, wr_beat])
