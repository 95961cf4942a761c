# This file is part of hostlink.
# Copyright (c) 2026 hostlink developers
# SPDX-License-Identifier: BSD-2-Clause

"""`add_dram()`: a board's DDR3 SODIMM as the DMA channels' alternative source and sink, and the helpers
that describe a board's SODIMM from its platform module's DDRAM_* constants (transfer rate, LiteDRAM
module and speed grade, 7-series PHY, IODELAY reference clock)."""

from migen import *

# Board SODIMM -------------------------------------------------------------------------------------

def board_dram_clk_freq(platform_module):
    """The DRAM controller clock of a board at 1:4: the SODIMM's transfer rate / 8."""
    return platform_module.DDRAM_RATE / 8


def board_dram_module(platform_module, clk_freq):
    """The LiteDRAM module instance of a board's SODIMM (the platform's DDRAM_* constants) at 1:4."""
    import litedram.modules
    module_cls = getattr(litedram.modules, platform_module.DDRAM_MODULE)
    return module_cls(clk_freq, "1:4", speedgrade=platform_module.DDRAM_SPEEDGRADE)


def board_dram_phy(platform_module):
    """`dram_phy(platform, clk_freq) -> (phy, module)` for a board's SODIMM on its "ddram" pads."""
    def dram_phy(platform, clk_freq):
        import litedram.phy.s7ddrphy
        phy_cls = getattr(litedram.phy.s7ddrphy, platform_module.DDRAM_PHY)
        phy = phy_cls(platform.request("ddram"),
            memtype          = "DDR3",
            nphases          = 4,
            sys_clk_freq     = clk_freq,
            iodelay_clk_freq = platform_module.DDRAM_IODELAY_CLK_FREQ,
        )
        return phy, board_dram_module(platform_module, clk_freq)
    return dram_phy

# DRAM integration ---------------------------------------------------------------------------------

def add_dram(soc, phy, module, dram_clk_freq, dma_channels, data_width, outstanding_reads=64):
    """LiteDRAM controller on `phy` in the `dram` clock domain (the CRG provides `dram` and `dram4x`),
    a DRAMDMAChannel per DMA channel (returned, for add_pcie_dma) and a memory test (LiteDRAM's BIST
    generator and checker) for bring-up. Every port crosses to the DMA's `sys` domain at the native width.

    `phy` is a LiteDRAM PHY written for the `sys`/`sys4x` domains (K7DDRPHY, V7DDRPHY, or the simulation
    model); `module` a LiteDRAM module instance for the board's SODIMM at 1:4.
    """
    # Imported here, as the board helpers import theirs: a PCIe SoC without DRAM imports no LiteDRAM code.
    # Importing it creates LiteX objects that number themselves (DUID), which would rename the clock domains
    # of such a SoC's Verilog.
    from litedram.core import LiteDRAMCore
    from litedram.core.controller import ControllerSettings
    from litedram.frontend.bist import LiteDRAMBISTGenerator, LiteDRAMBISTChecker
    from hostlink.cores.dram.common import dram_size, native_port_cdc
    from hostlink.cores.dram.channel import DRAMDMAChannel
    from hostlink.cores.dram.csr_crossing import CSRActionCrossing

    soc.ddrphy = ClockDomainsRenamer({"sys": "dram", "sys4x": "dram4x"})(phy)
    soc.sdram  = ClockDomainsRenamer("dram")(LiteDRAMCore(phy,
        geom_settings   = module.geom_settings,
        timing_settings = module.timing_settings,
        clk_freq        = dram_clk_freq,
        # LiteDRAMController's default is one object shared by every controller of the process:
        # the last SoC built would overwrite the settings that the driver generation reads.
        controller_settings = ControllerSettings(),
    ))
    # The DFI injector's and the PHY's action registers (one command, one delay tap per write) must
    # reach the `dram` domain exactly once: the host's DDR3 bring-up depends on it.
    soc.dram_csr_crossing = CSRActionCrossing([soc.ddrphy, soc.sdram.dfii], "sys", "dram")
    size = dram_size(module)
    soc.add_constant("DRAM_SIZE", size)
    soc.add_constant("DRAM_NATIVE_BYTES", soc.sdram.crossbar.controller.data_width // 8)

    def port(mode):
        user_port, cdc = native_port_cdc(soc.sdram.crossbar.get_port(mode=mode), "dram")
        soc.submodules += cdc
        return user_port

    channels = []
    for i in range(dma_channels):
        channel = DRAMDMAChannel(port("write"), port("read"), data_width, size, outstanding=outstanding_reads)
        soc.add_module(name=f"pcie_dma{i}_dram", module=channel)
        channels.append(channel)
    soc.add_module(name="sdram_generator", module=LiteDRAMBISTGenerator(port("write")))
    soc.add_module(name="sdram_checker",   module=LiteDRAMBISTChecker(port("read")))
    return channels
