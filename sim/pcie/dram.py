# This file is part of hostlink.
# Copyright (c) 2026 hostlink developers
# SPDX-License-Identifier: BSD-2-Clause

"""Simulated board DRAM: LiteDRAM's SDRAMPHYModel in place of the DDR3 PHY, with a fault to inject.

The model stores the whole memory in simulator arrays, so its geometry is the board module's with
fewer rows: banks, columns (8 KiB per row across the 64-bit SODIMM) and timings stay those of the
board, so transfers cross banks every 8 KiB and rows every 64 KiB exactly as on the board, but the
model holds `rows` x 64 KiB instead of the SODIMM's gigabytes.
"""

from migen import *

from litex.gen import *

from litedram.phy.dfi import Interface
from litedram.phy.model import SDRAMPHYModel

# Geometry -----------------------------------------------------------------------------------------

def shrunk_module(module_cls, nrows):
    """The board's LiteDRAM module class with `nrows` rows (a power of two) instead of its own."""
    if not isinstance(nrows, int) or nrows < 2 or nrows & (nrows - 1):
        raise ValueError(f"simulated DRAM rows must be a power of two >= 2, not {nrows!r}")
    board_address_bits = max(log2_int(module_cls.nrows), log2_int(module_cls.ncols))
    def __init__(self, *args, **kwargs):
        module_cls.__init__(self, *args, **kwargs)
        # The board's address bus: the model and the controller use A10 (auto-precharge), which a
        # bus sized for the fewer rows would not have.
        self.geom_settings.addressbits = board_address_bits
    return type(f"Sim{module_cls.__name__}", (module_cls,), {"nrows": nrows, "__init__": __init__})


# Fault injection ----------------------------------------------------------------------------------

class StuckBitDFI(LiteXModule):
    """Sits between the controller and a PHY: while `stuck` is set, read data bit `bit` of every DFI
    phase reads 1, as a DQ line shorted high would. Writes are untouched, so the memory test has to
    notice on read-back."""
    def __init__(self, phy, bit=0):
        self.phy      = phy
        self.settings = phy.settings
        self.stuck    = Signal()   # i
        d = phy.dfi
        self.dfi = Interface(addressbits=len(d.phases[0].address), bankbits=len(d.phases[0].bank),
            nranks=len(d.phases[0].cs_n), databits=len(d.phases[0].wrdata), nphases=len(d.phases))
        if not 0 <= bit < len(d.phases[0].rddata):
            raise ValueError(f"stuck bit must be in 0..{len(d.phases[0].rddata) - 1}, not {bit!r}")

        # # #

        self.comb += self.dfi.connect(d)
        for phase in self.dfi.phases:
            self.comb += If(self.stuck, phase.rddata[bit].eq(1))
        # SDRAMPHYModel raises rddata_valid on phase 0 only; a DDR3 PHY raises it on every phase that
        # carries read data. The controller does not look at it (it counts the read latency), but
        # the DFI injector captures each phase's read data on it, as the host's bring-up reads it.
        for phase in self.dfi.phases[1:]:
            self.comb += phase.rddata_valid.eq(d.phases[0].rddata_valid)


# DFI probe ----------------------------------------------------------------------------------------

DFI_PROBE_FIELDS = ["cs_n", "ras_n", "cas_n", "we_n"]   # Per phase, low bit first, in sim_dram_dfi_command.


def add_dfi_probe(phy, platform):
    """The DFI commands that reach the memory model, on top-level outputs, so that a bench can see what
    the DRAM receives (the host's initialisation sequence) without making the whole SoC public:

    - `sim_dram_dfi_command`: per phase (phase 0 in the low bits) cs_n, ras_n, cas_n, we_n;
    - `sim_dram_dfi_address`, `sim_dram_dfi_bank`: per phase, phase 0 in the low bits;
    - `sim_dram_dfi_control`: reset_n, cke, odt of phase 0 (the DFI injector drives every phase alike);
    - `sim_dram_dfi_data_en`: per phase wrdata_en, then per phase rddata_en.
    """
    from litex.build.generic_platform import Pins
    phases   = phy.dfi.phases
    nphases  = len(phases)
    abits    = len(phases[0].address)
    bbits    = len(phases[0].bank)
    platform.add_extension([
        ("sim_dram_dfi_command", 0, Pins(len(DFI_PROBE_FIELDS) * nphases)),
        ("sim_dram_dfi_address", 0, Pins(abits * nphases)),
        ("sim_dram_dfi_bank",    0, Pins(bbits * nphases)),
        ("sim_dram_dfi_control", 0, Pins(3)),
        ("sim_dram_dfi_data_en", 0, Pins(2 * nphases)),
    ])
    phy.comb += [
        platform.request("sim_dram_dfi_command").eq(Cat(*[getattr(p, f)[0] if f == "cs_n" else getattr(p, f)
            for p in phases for f in DFI_PROBE_FIELDS])),
        platform.request("sim_dram_dfi_address").eq(Cat(*[p.address for p in phases])),
        platform.request("sim_dram_dfi_bank").eq(Cat(*[p.bank for p in phases])),
        platform.request("sim_dram_dfi_control").eq(Cat(phases[0].reset_n, phases[0].cke[0], phases[0].odt[0])),
        platform.request("sim_dram_dfi_data_en").eq(Cat(*[p.wrdata_en for p in phases],
            *[p.rddata_en for p in phases])),
    ]


def sdram_model(module, clk_freq):
    """SDRAMPHYModel of a 64-bit DDR3 SODIMM at 1:4 for `module` (a LiteDRAM module instance)."""
    return SDRAMPHYModel(module, data_width=64, clk_freq=clk_freq)

# Simulated board DRAM -----------------------------------------------------------------------------

# 128 rows x 64 KiB = 8 MiB: room for the 4 MiB figures at an offset, while the model's arrays stay
# small for Verilator.
SIM_DRAM_ROWS = 128


def sim_dram_phy(platform_module, rows=SIM_DRAM_ROWS):
    """A `dram_phy(platform, clk_freq) -> (phy, module)` for the board targets: the board's module (from
    its platform's DDRAM_* constants) with `rows` rows, on SDRAMPHYModel, behind a stuck-bit injector
    driven by the top-level port `sim_dram_stuck`."""
    def dram_phy(platform, clk_freq):
        import litedram.modules
        from litex.build.generic_platform import Pins
        module_cls = getattr(litedram.modules, platform_module.DDRAM_MODULE)
        module = shrunk_module(module_cls, rows)(clk_freq, "1:4", speedgrade=platform_module.DDRAM_SPEEDGRADE)
        phy    = StuckBitDFI(sdram_model(module, clk_freq))
        platform.add_extension([("sim_dram_stuck", 0, Pins(1))])
        phy.comb += phy.stuck.eq(platform.request("sim_dram_stuck"))
        add_dfi_probe(phy, platform)
        return phy, module
    return dram_phy
