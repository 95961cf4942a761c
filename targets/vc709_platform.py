# This file is part of hostlink.
# Copyright (c) 2026 hostlink developers
# SPDX-License-Identifier: BSD-2-Clause

"""Xilinx VC709 Connectivity Kit (XC7VX690T-2FFG1761C): the pins hostlink uses.

Net names are the board's (VC709 user guide UG887). Each PCIe lane, the PCIe reference clock, the system
clock and the LEDs agree in two independent public VC709 constraint files (a Xilinx XDMA example design
for the VC709 and alexforencich's VC709 XDC); PERST# is AV35 in the XDMA example and in a second public
VC709 design (one other file says AY35; UG887's PCIE_PERST_LS is AV35).
The PCIe edge connector is wired to GTH quads 114 and 115 in reverse order: lane 0 is GTHE2_CHANNEL_X1Y23
(MGTH channel 3 of quad 115), lane 7 is X1Y16 (channel 0 of quad 114); the reference clock enters
MGTREFCLK1 of quad 115. Public VC709 PCIe designs place the Gen3 block at PCIE_X0Y1 for these quads.
"""

from litex.build.generic_platform import Pins, IOStandard, Subsignal, Misc
from litex.build.xilinx import Xilinx7SeriesPlatform
from litex.build.xilinx.programmer import VivadoProgrammer

# IOs ----------------------------------------------------------------------------------------------

# (tx_p, tx_n, rx_p, rx_n) per lane.
_pcie_lanes = [
    ("W2",  "W1",  "Y4",  "Y3"),   # PCIE_TX0_P/N, PCIE_RX0_P/N (MGTH 3 of quad 115)
    ("AA2", "AA1", "AA6", "AA5"),  # PCIE_TX1_P/N, PCIE_RX1_P/N (MGTH 2 of quad 115)
    ("AC2", "AC1", "AB4", "AB3"),  # PCIE_TX2_P/N, PCIE_RX2_P/N (MGTH 1 of quad 115)
    ("AE2", "AE1", "AC6", "AC5"),  # PCIE_TX3_P/N, PCIE_RX3_P/N (MGTH 0 of quad 115)
    ("AG2", "AG1", "AD4", "AD3"),  # PCIE_TX4_P/N, PCIE_RX4_P/N (MGTH 3 of quad 114)
    ("AH4", "AH3", "AE6", "AE5"),  # PCIE_TX5_P/N, PCIE_RX5_P/N (MGTH 2 of quad 114)
    ("AJ2", "AJ1", "AF4", "AF3"),  # PCIE_TX6_P/N, PCIE_RX6_P/N (MGTH 1 of quad 114)
    ("AK4", "AK3", "AG6", "AG5"),  # PCIE_TX7_P/N, PCIE_RX7_P/N (MGTH 0 of quad 114)
]

def _pcie(nlanes):
    lanes = _pcie_lanes[:nlanes]
    return ("pcie_x{}".format(nlanes), 0,
        # PCIE_PERST_LS: PERST# after the board's level shifter, on a 1.8 V bank; pulled up so that a
        # board outside a slot is not held in reset.
        Subsignal("rst_n", Pins("AV35"), IOStandard("LVCMOS18"), Misc("PULLUP=TRUE")),
        # PCIE_CLK_QO_P/N: the slot's 100 MHz reference clock (MGTREFCLK1 of quad 115).
        Subsignal("clk_p", Pins("AB8")),
        Subsignal("clk_n", Pins("AB7")),
        Subsignal("rx_p",  Pins(" ".join(lane[2] for lane in lanes))),
        Subsignal("rx_n",  Pins(" ".join(lane[3] for lane in lanes))),
        Subsignal("tx_p",  Pins(" ".join(lane[0] for lane in lanes))),
        Subsignal("tx_n",  Pins(" ".join(lane[1] for lane in lanes))),
    )

_io = [
    # Clk: the 200 MHz LVDS system clock oscillator.
    ("clk200", 0,
        Subsignal("p", Pins("H19"), IOStandard("LVDS")),  # SYSCLK_P
        Subsignal("n", Pins("G18"), IOStandard("LVDS")),  # SYSCLK_N
    ),

    # Leds: the eight user LEDs, behind level shifters, on 1.8 V banks.
    ("user_led", 0, Pins("AM39"), IOStandard("LVCMOS18")),  # GPIO_LED_0_LS
    ("user_led", 1, Pins("AN39"), IOStandard("LVCMOS18")),  # GPIO_LED_1_LS
    ("user_led", 2, Pins("AR37"), IOStandard("LVCMOS18")),  # GPIO_LED_2_LS
    ("user_led", 3, Pins("AT37"), IOStandard("LVCMOS18")),  # GPIO_LED_3_LS
    ("user_led", 4, Pins("AR35"), IOStandard("LVCMOS18")),  # GPIO_LED_4_LS
    ("user_led", 5, Pins("AP41"), IOStandard("LVCMOS18")),  # GPIO_LED_5_LS
    ("user_led", 6, Pins("AP42"), IOStandard("LVCMOS18")),  # GPIO_LED_6_LS
    ("user_led", 7, Pins("AU39"), IOStandard("LVCMOS18")),  # GPIO_LED_7_LS

    # PCIe: x1, x2 and x4 are subsets of the x8 wiring (lanes 0 up), as LiteX-Boards platforms do.
    _pcie(1),
    _pcie(2),
    _pcie(4),
    _pcie(8),
]

# Platform -----------------------------------------------------------------------------------------

class Platform(Xilinx7SeriesPlatform):
    default_clk_name   = "clk200"
    default_clk_period = 1e9/200e6

    def __init__(self, toolchain="vivado"):
        # Named after the board: the generated files become vc709.tcl, vc709.xdc, vc709.bit.
        Xilinx7SeriesPlatform.__init__(self, "xc7vx690t-ffg1761-2", _io, name="vc709", toolchain=toolchain)
        # The VC709 configures from BPI flash with 1.8 V configuration banks (UG887).
        self.add_platform_command("set_property CFGBVS GND [current_design]")
        self.add_platform_command("set_property CONFIG_VOLTAGE 1.8 [current_design]")

    def create_programmer(self):
        return VivadoProgrammer()

    def do_finalize(self, fragment):
        Xilinx7SeriesPlatform.do_finalize(self, fragment)
        # The PCIe reference clock is constrained by the PCIe PHY that requests it.
        self.add_period_constraint(self.lookup_request("clk200", loose=True), 1e9/200e6)
