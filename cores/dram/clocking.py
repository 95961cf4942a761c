# This file is part of hostlink.
# Copyright (c) 2026 hostlink developers
# SPDX-License-Identifier: BSD-2-Clause

"""S7DRAMClocking: the clocks a 7-series DDR3 PHY at 1:4 needs, from the board's reference clock.

The DMA side keeps its own system clock; the controller runs in `dram` (memory rate / 4, e.g. 200
MHz for DDR3-1600, 233.3 MHz for DDR3-1866) and the PHY's serialisers in `dram4x`. The IDELAYCTRL
that calibrates the PHY's input delays needs 200 MHz: every supported board has a 200 MHz
oscillator, used as is (one PLL cannot make 233.3, 933.3 and 200 MHz together).

`clkin` is the reference clock after its input buffer (e.g. the system PLL's `clkin`), so that both
PLLs share one differential input.
"""

from migen import *

from migen.genlib.resetsync import AsyncResetSynchronizer

from litex.gen import *

from litex.soc.cores.clock import S7PLL, S7IDELAYCTRL

# S7 DRAM Clocking ---------------------------------------------------------------------------------

class S7DRAMClocking(LiteXModule):
    """The `dram` and `dram4x` clocks of a 7-series DDR3 PHY at 1:4 (`dram_clk_freq`, memory rate / 4) and
    the IDELAYCTRL's 200 MHz, from the board's 200 MHz reference clock `clkin`."""

    def __init__(self, clkin, clkin_freq, dram_clk_freq, speedgrade=-2):
        if clkin_freq != 200e6:
            raise ValueError(f"the reference clock must be 200 MHz (it also clocks the IDELAYCTRL), "
                             f"not {clkin_freq/1e6:g} MHz")
        if not 100e6 <= dram_clk_freq <= 250e6:
            raise ValueError(f"DRAM controller clock must be 100 to 250 MHz (memory rate / 4), "
                             f"not {dram_clk_freq/1e6:g} MHz")
        self.rst       = Signal()   # i
        self.cd_dram   = ClockDomain()
        self.cd_dram4x = ClockDomain(reset_less=True)
        self.cd_idelay = ClockDomain()

        # # #

        self.pll = pll = S7PLL(speedgrade=speedgrade)
        self.comb += pll.reset.eq(self.rst)
        pll.register_clkin(clkin, clkin_freq)
        pll.create_clkout(self.cd_dram,   dram_clk_freq)
        pll.create_clkout(self.cd_dram4x, 4 * dram_clk_freq, with_reset=False)
        self.specials += [
            Instance("BUFG", i_I=clkin, o_O=self.cd_idelay.clk),
            AsyncResetSynchronizer(self.cd_idelay, self.rst),
        ]
        self.idelayctrl = S7IDELAYCTRL(self.cd_idelay)
