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

DDR3: the "ddram" resource is the first SODIMM socket (J1, "DDR3 C0" in a two-controller design). Every
pin and IO standard agrees in two independent public sources: Xilinx's VC709 board files (the MIG project
of socket J1) and SiFive's VC709 fpga-shells DDR overlay; data pins, strobes, address and control (all
but CK and RESET#) are also those of the VC707's SODIMM, whose MIG-generated XDC gives the banks: DQ0-31
in bank 39, DQ32-63 in bank 37, address/control/CK in bank 38. The board's MIG project uses external
VREF and no public VC707/VC709 design sets INTERNAL_VREF or DCI_CASCADE on these banks, so neither is
added. Comments name the SODIMM signals: UG887's net-name table could not be checked here. The sources
are listed in doc/ddr3.md.
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

    # DDR3 SDRAM: SODIMM socket J1, 64-bit, one rank. VCCAUX_IO is 2.0 V on this board (HIGH), which
    # 7-series HP banks need above 1600 MT/s.
    ("ddram", 0,
        # A0-A15 (the 4 Gb x8 chips of the shipped SODIMM have 64K rows: all 16 are used), bank 38.
        Subsignal("a", Pins(
            "A20 B19 C20 A19 A17 A16 D20 C18",
            "D17 C19 B21 B17 A15 A21 F17 E17"),
            IOStandard("SSTL15")),
        Subsignal("ba",      Pins("D21 C21 D18"), IOStandard("SSTL15")),  # BA0-BA2, bank 38
        Subsignal("ras_n",   Pins("E20"), IOStandard("SSTL15")),          # RAS#, bank 38
        Subsignal("cas_n",   Pins("K17"), IOStandard("SSTL15")),          # CAS#, bank 38
        Subsignal("we_n",    Pins("F20"), IOStandard("SSTL15")),          # WE#, bank 38
        Subsignal("cs_n",    Pins("J17"), IOStandard("SSTL15")),          # S0#, bank 38
        # DM0-DM7: DM0-3 in bank 39, DM4-7 in bank 37.
        Subsignal("dm", Pins("M13 K15 F12 A14 C23 D25 C31 F31"), IOStandard("SSTL15")),
        # DQ0-DQ63, one line per 16 bits: DQ0-31 in bank 39, DQ32-63 in bank 37.
        Subsignal("dq", Pins(
            "N14 N13 L14 M14 M12 N15 M11 L12 K14 K13 H13 J13 L16 L15 H14 J15",
            "E15 E13 F15 E14 G13 G12 F14 G14 B14 C13 B16 D15 D13 E12 C16 D16",
            "A24 B23 B27 B26 A22 B22 A25 C24 E24 D23 D26 C25 E23 D22 F22 E22",
            "A30 D27 A29 C28 D28 B31 A31 A32 E30 F29 F30 F27 C30 E29 F26 D30"),
            IOStandard("SSTL15_T_DCI")),
        # DQS0-DQS7 (P and N): DQS0-3 in bank 39, DQS4-7 in bank 37.
        Subsignal("dqs_p", Pins("N16 K12 H16 C15 A26 F25 B28 E27"), IOStandard("DIFF_SSTL15_T_DCI")),
        Subsignal("dqs_n", Pins("M16 J12 G16 C14 A27 E25 B29 E28"), IOStandard("DIFF_SSTL15_T_DCI")),
        # CK0 (P and N), bank 38. On the VC707 these two pins are the system clock and H19/G18 the CK:
        # the VC709 swaps them.
        Subsignal("clk_p",   Pins("E19"), IOStandard("DIFF_SSTL15")),
        Subsignal("clk_n",   Pins("E18"), IOStandard("DIFF_SSTL15")),
        Subsignal("cke",     Pins("K19"), IOStandard("SSTL15")),          # CKE0, bank 38
        Subsignal("odt",     Pins("H20"), IOStandard("SSTL15")),          # ODT0, bank 38
        Subsignal("reset_n", Pins("P18"), IOStandard("LVCMOS15")),        # RESET#
        Misc("SLEW=FAST"),
        Misc("VCCAUX_IO=HIGH"),
    ),
]

# DDR3 memory --------------------------------------------------------------------------------------

# What a target needs to run LiteDRAM on the "ddram" pads. The SODIMM the VC709 ships with is a Micron
# MT8KTF51264HZ-1G9 (4 GB, one rank of eight 4 Gb x8 chips, DDR3-1866): LiteDRAM's MT8KTF51264 with its
# "1866" timings. 1866 MT/s needs VCCAUX_IO at 2.0 V on a -2 part, which this board has; Xilinx's own
# board preset runs the socket at 1600 MT/s. The PHY runs 1:4, so its sys_clk_freq is the rate / 8:
# 233.25 MHz at 1866 MT/s (LiteDRAM picks CL/CWL from that clock and raises ValueError above it unless
# cl/cwl are given). The memory PLL and IDELAYCTRL take the 200 MHz SYSCLK (clk200), which sits in bank
# 38 with the address and control pins, as Xilinx's MIG configuration for this board does.
DDRAM_MODULE           = "MT8KTF51264"   # litedram.modules
DDRAM_SPEEDGRADE       = "1866"
DDRAM_DATA_WIDTH       = 64
DDRAM_RATE             = 1866e6          # transfers per second per pin
DDRAM_PHY              = "V7DDRPHY"      # litedram.phy.s7ddrphy
DDRAM_REFCLK           = "clk200"        # resource feeding the memory PLL and the IDELAYCTRL
DDRAM_IODELAY_CLK_FREQ = 200e6

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
