# This file is part of hostlink.
# Copyright (c) 2026 hostlink developers
# SPDX-License-Identifier: BSD-2-Clause

"""A Zynq-7000 SoC whose ARM cores move data through the logic: LiteX's zynq7000 CPU (the PS7), hostlink's
AXI DMA (axi_dma.py) on the PS's HP0 port, its registers on GP0, its interrupts to the PS.

    soc = ZynqDMASoC(platform, preset="ZC706")    # platform: with the PS7's pins (zc706_platform.PS7_IO)
    ZynqBuilder(soc, ...).build(run=False)         # Verilog, Tcl (the PS7 IP configured), constraints
    device_tree(soc)                               # the DMA's node for Linux's xilinx_dma

- The logic runs on the PS's FCLK0 (`sys_clk_freq`, 150 MHz by default: a 64-bit HP port then moves
  1.2 GB/s, UG585's figure for one port).
- HP0: 64-bit AXI3, the DMA its only master. The PS7 is configured for it (PCW_USE_S_AXI_HP0, which LiteX's
  add_axi_hp_slave does not set).
- GP0 (LiteX's bus, as the zynq7000 CPU makes it): the DMA's registers at `DMA_BASE` (0x4040_0000, where
  Xilinx's tools put an AXI DMA), LiteX's CSRs (identifier, cycle counter) at 0x4000_0000.
- Interrupts: MM2S on IRQ_F2P[0], S2MM on IRQ_F2P[1] (GIC SPIs 61 and 62).
- The streams (DMAStreams, CSR `streams_mode`): MM2S looped back into S2MM (0, the default: a buffer goes out
  and comes back into another), or hostlink's pattern (1): its generator's packet into S2MM, MM2S into its
  checker (hostlink.cores.pcie.dma_pattern: 32-bit words counting from 0).

The PL has no LiteX BIOS (the PS boots from its own ROM): ZynqBuilder generates no BIOS files.
"""

from migen import *

from litex.gen import *

from litex.soc.integration.builder import Builder
from litex.soc.integration.soc import SoCRegion
from litex.soc.integration.soc_core import SoCCore

from litex.soc.interconnect.csr import CSRField, CSRStorage

from hostlink.cores.pcie.cycle_counter import CycleCounter
from hostlink.cores.pcie.dma_pattern import DMAPatternChecker, DMAPatternGenerator
from hostlink.cores.zynq.axi_dma import AXIDMA
from hostlink.protocol import AXI_DMA_LENGTH_BITS as LENGTH_BITS

__all__ = ["ZynqDMASoC", "ZynqBuilder", "DMAStreams", "device_tree", "dma_node", "DMA_BASE", "DMA_SIZE"]

DMA_BASE = 0x4040_0000
DMA_SIZE = 0x1_0000
# What the DMA reaches through HP0: the PS's DDR at 0, 1 GiB on the ZC706 (UG954); the node's dma-ranges.
HP0_DDR_BASE, HP0_DDR_SIZE = 0x0000_0000, 0x4000_0000
F2P_FIRST_SPI = 61     # IRQ_F2P[0]'s shared peripheral interrupt on the GIC (UG585, table 7-4).
FCLK0_CLOCK   = 15     # FCLK0's index in the Zynq clock controller's device-tree bindings (clkc).


class _CRG(LiteXModule):
    """The logic's clock is the PS's FCLK0, reset with it."""
    def __init__(self):
        self.cd_sys = ClockDomain()


class DMAStreams(LiteXModule):
    """What the AXI DMA's streams meet: `mode` 0, MM2S looped back into S2MM; 1, the pattern generator's packet
    (`generator.length` 32-bit words once `generator.enable` rises, `last` on its final beat) into S2MM and MM2S
    into the pattern checker (which compares whole beats: a transfer that ends inside a beat is checked as far
    as the pattern in memory goes on)."""
    def __init__(self, dma, with_csr=True):
        width = len(dma.mm2s.data)
        self.mode      = Signal()
        self.generator = generator = DMAPatternGenerator(width, with_csr=with_csr)
        self.checker   = checker   = DMAPatternChecker(width, with_csr=with_csr)

        # # #

        words = width // 32
        sent  = Signal(32)        # Words the generator has given S2MM.
        self.sync += If(~generator.enable,
            sent.eq(0),
        ).Elif(generator.source.valid & generator.source.ready,
            sent.eq(sent + words),
        )
        self.comb += If(self.mode == 0,
            dma.mm2s.connect(dma.s2mm),
        ).Else(
            dma.s2mm.valid.eq(generator.source.valid),
            dma.s2mm.data.eq(generator.source.data),
            dma.s2mm.keep.eq(2**len(dma.s2mm.keep) - 1),
            dma.s2mm.last.eq((generator.length != 0) & (sent + words >= generator.length)),
            generator.source.ready.eq(dma.s2mm.ready),
            checker.sink.valid.eq(dma.mm2s.valid),
            checker.sink.data.eq(dma.mm2s.data),
            dma.mm2s.ready.eq(checker.sink.ready),
        )
        if with_csr:
            self._mode = CSRStorage(fields=[CSRField("mode", size=1, values=[
                ("``0b0``", "MM2S looped back into S2MM."),
                ("``0b1``", "The pattern generator into S2MM, MM2S into the pattern checker."),
            ])], description="What the AXI DMA's streams meet.")
            self.comb += self.mode.eq(self._mode.fields.mode)


class ZynqDMASoC(SoCCore):
    """A Zynq-7000 SoC (LiteX's zynq7000 CPU, the PS7 of `preset`) with hostlink's AXI DMA on HP0, its
    registers on GP0 at DMA_BASE and its interrupts to the PS; the logic on FCLK0 (`sys_clk_freq`)."""

    def __init__(self, platform, preset, sys_clk_freq=150e6, ident="hostlink Zynq AXI DMA SoC", axi_dma_sg=False,
                 **kwargs):
        if not (isinstance(sys_clk_freq, (int, float)) and 10e6 <= sys_clk_freq <= 250e6):
            raise ValueError(f"the logic's clock (the PS's FCLK0) must be 10 to 250 MHz, not {sys_clk_freq!r}")
        self.crg = _CRG()
        SoCCore.__init__(self, platform, sys_clk_freq, cpu_type="zynq7000", integrated_rom_size=0,
            integrated_sram_size=0, with_uart=False, with_timer=False, ident=ident, **kwargs)
        self.comb += [
            ClockSignal("sys").eq(ClockSignal("ps7")),
            ResetSignal("sys").eq(ResetSignal("ps7")),
        ]
        self.cpu.set_ps7(name="Zynq", preset=preset, config={
            "PCW_FPGA0_PERIPHERAL_FREQMHZ": int(sys_clk_freq/1e6),
            "PCW_USE_S_AXI_HP0":            1,
            "PCW_S_AXI_HP0_DATA_WIDTH":     64,
        })
        # The PS's boot ROM and on-chip memory: where the CPU's reset address lies.
        self.bus.add_region("rom", SoCRegion(origin=self.cpu.mem_map["rom"], size=0x4_0000, linker=True))

        # The DMA on HP0, its registers on GP0, its interrupts to the PS.
        # With `axi_dma_sg`, PG021's scatter-gather mode (xilinx_dma then runs it with descriptors).
        self.axi_dma = dma = AXIDMA(self.cpu.add_axi_hp_slave(clock_domain="sys"), sg=axi_dma_sg)
        self.bus.add_slave("axi_dma", dma.ctrl, SoCRegion(origin=DMA_BASE, size=DMA_SIZE, cached=False))
        for name, irq in [("axi_dma_mm2s", dma.mm2s_irq), ("axi_dma_s2mm", dma.s2mm_irq)]:
            self.irq.add(name)
            self.comb += self.cpu.interrupt[self.irq.locs[name]].eq(irq)
        self.streams = DMAStreams(dma)

        # Device time for the programs that measure transfers.
        self.cycles = CycleCounter()


class ZynqBuilder(Builder):
    """LiteX's Builder without the BIOS and its files (and the software packages they need): the PS boots
    itself."""
    def __init__(self, soc, **kwargs):
        Builder.__init__(self, soc, **dict(kwargs, compile_software=False))

    def _generate_includes(self, with_bios=True):
        Builder._generate_includes(self, with_bios=False)


def dma_node(base, data_width, mm2s_interrupt, s2mm_interrupt, clocks, interrupt_parent, comment, sg=False):
    """The AXI DMA's device-tree node for Linux's xilinx_dma (Documentation/devicetree/bindings/dma/xilinx/
    xilinx_dma.txt): direct register mode, or scatter-gather with `sg` (`xlnx,include-sg`, which the binding
    lists; Linux 6.12's xilinx_dma itself decides from DMASR's SGIncld), 26-bit lengths, the channels' interrupts
    (each an interrupt specifier's cells, as text), `clocks` (a phandle and its cells) as its three clocks.
    Labelled `axi_dma`, for a client's `dmas = <&axi_dma 0>, <&axi_dma 1>` (MM2S, S2MM)."""
    clocks = ", ".join([f"<{clocks}>"]*3)
    lines = [
        f"/* {comment} */",
        f"axi_dma: dma@{base:x} {{",
        f"\tcompatible = \"xlnx,axi-dma-1.00.a\";",
        f"\treg = <0x{base:08x} 0x{DMA_SIZE:x}>;",
        f"\t#dma-cells = <1>;",
        f"\tinterrupt-parent = <{interrupt_parent}>;",
        f"\tinterrupts = <{mm2s_interrupt}>, <{s2mm_interrupt}>;",
        f"\tclocks = {clocks};",
        f"\tclock-names = \"s_axi_lite_aclk\", \"m_axi_mm2s_aclk\", \"m_axi_s2mm_aclk\";",
        f"\txlnx,addrwidth = <0x20>;",
        f"\txlnx,sg-length-width = <{LENGTH_BITS}>;",
        # The binding lists dma-ranges (<dma_addr cpu_addr max_len>: one cell each, hence the cells below).
        # Linux maps a device's DMA by its bus's dma-ranges, not its own: this one is the binding's, and
        # changes nothing for xilinx_dma.
        f"\t#address-cells = <1>;",
        f"\t#size-cells = <1>;",
        f"\tdma-ranges = <0x{HP0_DDR_BASE:08x} 0x{HP0_DDR_BASE:08x} 0x{HP0_DDR_SIZE:08x}>;",
    ] + (["\txlnx,include-sg;"] if sg else [])
    # The channels' nodes are named without a unit address: they have no `reg` (the binding's example's
    # dma-channel@<address> makes dtc warn unit_address_vs_reg); xilinx_dma finds them by their compatible.
    for kind, interrupt in [("mm2s", mm2s_interrupt), ("s2mm", s2mm_interrupt)]:
        lines += [
            f"\tdma-channel-{kind} {{",
            f"\t\tcompatible = \"xlnx,axi-dma-{kind}-channel\";",
            f"\t\tdma-channels = <1>;",
            f"\t\tinterrupts = <{interrupt}>;",
            f"\t\txlnx,datawidth = <0x{data_width:x}>;",
            f"\t\txlnx,device-id = <0x0>;",
            f"\t}};",
        ]
    lines.append("};")
    return "\n".join(lines) + "\n"


def device_tree(soc):
    """The DMA's device-tree node for the board: the Zynq's GIC (IRQ_F2P's shared peripheral interrupts,
    level) and FCLK0 as its clocks. To add under the Zynq's `amba` bus of the board's tree."""
    def spi(name):
        return soc.irq.locs[name] + F2P_FIRST_SPI - 32
    return dma_node(DMA_BASE, len(soc.axi_dma.bus.w.data), f"0 {spi('axi_dma_mm2s')} 4", f"0 {spi('axi_dma_s2mm')} 4",
        f"&clkc {FCLK0_CLOCK}", "&intc", f"Generated by hostlink for its {soc.platform.name} Zynq SoC: the AXI DMA "
        f"(cores/zynq/axi_dma.py, PG021's registers) for Linux's xilinx_dma.", sg=soc.axi_dma.sg)
