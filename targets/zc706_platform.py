# This file is part of hostlink.
# Copyright (c) 2026 hostlink developers
# SPDX-License-Identifier: BSD-2-Clause

"""Xilinx ZC706 evaluation board (XC7Z045-2FFG900): the PL pins hostlink uses.

Net names are the board's (ZC706 user guide UG954). Clock, LED, button and switch pins and standards
match Xilinx's ZC706 board files (XilinxBoardStore part0_pins.xml) and public ZC706 constraint files;
the PCIe pins (which the board files do not list) come from a public ZC706 PCIe x4 constraint file.
LiteX-Boards has no ZC706 platform, so this one carries what a PL-only PCIe design needs: the 200 MHz system clock, the PCIe edge connector, the PL LEDs, push
buttons and DIP switches. The PS (ARM cores, its DDR3, the USB-UART on MIO) is not used.
"""

from litex.build.generic_platform import Pins, IOStandard, Subsignal
from litex.build.xilinx import Xilinx7SeriesPlatform
from litex.build.xilinx.programmer import VivadoProgrammer

# IOs ----------------------------------------------------------------------------------------------

# The ZC706 edge connector carries 4 PCIe lanes to one GTX quad (bank 112), as (tx_p, tx_n, rx_p, rx_n)
# per lane. The other three quads go to the FMC HPC (8 lanes) and to the SFP+/SMA/FMC LPC.
_pcie_lanes = [
    ("N4", "N3", "P6", "P5"),  # PCIE_TX0_P/N, PCIE_RX0_P/N
    ("P2", "P1", "T6", "T5"),  # PCIE_TX1_P/N, PCIE_RX1_P/N
    ("R4", "R3", "U4", "U3"),  # PCIE_TX2_P/N, PCIE_RX2_P/N
    ("T2", "T1", "V6", "V5"),  # PCIE_TX3_P/N, PCIE_RX3_P/N
]

def _pcie(nlanes):
    lanes = _pcie_lanes[:nlanes]
    return ("pcie_x{}".format(nlanes), 0,
        # PCIE_PERST_LS: PERST# after the board's level shifter; 2.5 V like its neighbours AK25/AK26.
        Subsignal("rst_n", Pins("AK23"), IOStandard("LVCMOS25")),
        # PCIE_CLK_QO_P/N: the slot's 100 MHz reference clock, on a GTX reference clock input.
        Subsignal("clk_p", Pins("N8")),
        Subsignal("clk_n", Pins("N7")),
        Subsignal("rx_p",  Pins(" ".join(lane[2] for lane in lanes))),
        Subsignal("rx_n",  Pins(" ".join(lane[3] for lane in lanes))),
        Subsignal("tx_p",  Pins(" ".join(lane[0] for lane in lanes))),
        Subsignal("tx_n",  Pins(" ".join(lane[1] for lane in lanes))),
    )

_io = [
    # Clk: the 200 MHz LVDS system clock oscillator.
    ("clk200", 0,
        Subsignal("p", Pins("H9"), IOStandard("LVDS")),  # SYSCLK_P
        Subsignal("n", Pins("G9"), IOStandard("LVDS")),  # SYSCLK_N
    ),

    # Leds: the four PL LEDs, two on 2.5 V banks and two on 1.5 V banks.
    ("user_led", 0, Pins("Y21"), IOStandard("LVCMOS25")),  # GPIO_LED_LEFT
    ("user_led", 1, Pins("G2"),  IOStandard("LVCMOS15")),  # GPIO_LED_CENTER
    ("user_led", 2, Pins("W21"), IOStandard("LVCMOS25")),  # GPIO_LED_RIGHT
    ("user_led", 3, Pins("A17"), IOStandard("LVCMOS15")),  # GPIO_LED_0

    # Buttons: the three PL push buttons (active high).
    ("user_btn", 0, Pins("AK25"), IOStandard("LVCMOS25")),  # GPIO_SW_LEFT
    ("user_btn", 1, Pins("K15"),  IOStandard("LVCMOS15")),  # GPIO_SW_CENTER
    ("user_btn", 2, Pins("R27"),  IOStandard("LVCMOS25")),  # GPIO_SW_RIGHT

    # Switches: the 4-position PL DIP switch.
    ("user_sw", 0, Pins("AB17"), IOStandard("LVCMOS25")),  # GPIO_DIP_SW0
    ("user_sw", 1, Pins("AC16"), IOStandard("LVCMOS25")),  # GPIO_DIP_SW1
    ("user_sw", 2, Pins("AC17"), IOStandard("LVCMOS25")),  # GPIO_DIP_SW2
    ("user_sw", 3, Pins("AJ13"), IOStandard("LVCMOS25")),  # GPIO_DIP_SW3

    # PCIe: x1 and x2 are subsets of the x4 wiring (lane 0, lanes 0-1), as LiteX-Boards platforms do.
    _pcie(1),
    _pcie(2),
    _pcie(4),
]

# Platform -----------------------------------------------------------------------------------------

class Platform(Xilinx7SeriesPlatform):
    default_clk_name   = "clk200"
    default_clk_period = 1e9/200e6

    def __init__(self, toolchain="vivado"):
        # Named after the board, not this module: the generated files become zc706.tcl, zc706.xdc, zc706.bit.
        Xilinx7SeriesPlatform.__init__(self, "xc7z045ffg900-2", _io, name="zc706", toolchain=toolchain)

    def create_programmer(self):
        return _ZynqVivadoProgrammer()

    def do_finalize(self, fragment):
        Xilinx7SeriesPlatform.do_finalize(self, fragment)
        # The PCIe reference clock is constrained by the PCIe PHY that requests it.
        self.add_period_constraint(self.lookup_request("clk200", loose=True), 1e9/200e6)

class _ZynqVivadoProgrammer(VivadoProgrammer):
    # On a Zynq the JTAG chain lists the ARM DAP first (arm_dap_0) and the PL second (xc7z045_1).
    def load_bitstream(self, bitstream_file, target="", device=1):
        VivadoProgrammer.load_bitstream(self, bitstream_file, target=target, device=device)
