# This file is part of hostlink.
# Copyright (c) 2026 hostlink developers
# SPDX-License-Identifier: BSD-2-Clause

"""Xilinx ZC706 evaluation board (XC7Z045-2FFG900): the PL pins hostlink uses.

Net names are the board's (ZC706 user guide UG954). Clock, LED, button and switch pins and standards
match Xilinx's ZC706 board files (XilinxBoardStore part0_pins.xml) and public ZC706 constraint files;
the PCIe pins (which the board files do not list) come from a public ZC706 PCIe x4 constraint file.
LiteX-Boards has no ZC706 platform, so this one carries what a PL-only PCIe design needs: the 200 MHz
system clock, the PCIe edge connector, the PL DDR3 SODIMM, the PL LEDs, push buttons and DIP switches.
The PS (ARM cores, its DDR3, the USB-UART on MIO) is used only by the Zynq SoC (`--ps7`, PS7_IO).

DDR3: the "ddram" resource is the PL-side SODIMM. Every pin and IO standard agrees in three public
sources: Xilinx's ZC706 board files (MIG project), Analog Devices' ZC706 PL DDR3 MIG project and a
MIG-generated ZC706 XDC that also gives the banks: DQ0-31 in bank 33, DQ32-39 and address/control/CK in
bank 34, DQ40-63 and RESET# in bank 35. Bank 34 takes its DCI reference from bank 33 (DCI_CASCADE, as
that XDC and OpenPiton's ZC706 constraints set it); VREF is external (no INTERNAL_VREF). Comments name
the SODIMM signals: UG954's net-name table could not be checked here. The sources are listed in
doc/ddr3.md.
"""

from litex.build.generic_platform import Pins, IOStandard, Subsignal, Misc
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

    # DDR3 SDRAM: the PL SODIMM, 64-bit, one rank. Xilinx's board files declare VCCAUX_IO at 1.8 V for
    # it (NORMAL, the default, hence no VCCAUX_IO=HIGH), enough for 1600 MT/s on this -2 part.
    ("ddram", 0,
        # A0-A13 (the 1 Gb x8 chips of the shipped SODIMM have 16K rows), bank 34.
        Subsignal("a", Pins(
            "E10 B9 E11 A9 D11 B6 F9 E8",
            "B10 J8 D6 B7 H12 A10"),
            IOStandard("SSTL15")),
        Subsignal("ba",      Pins("F8 H7 A7"), IOStandard("SSTL15")),     # BA0-BA2, bank 34
        Subsignal("ras_n",   Pins("H11"), IOStandard("SSTL15")),          # RAS#, bank 34
        Subsignal("cas_n",   Pins("E7"),  IOStandard("SSTL15")),          # CAS#, bank 34
        Subsignal("we_n",    Pins("F7"),  IOStandard("SSTL15")),          # WE#, bank 34
        Subsignal("cs_n",    Pins("J11"), IOStandard("SSTL15")),          # S0#, bank 34
        # DM0-DM7: DM0-3 in bank 33, DM4 in bank 34, DM5-7 in bank 35.
        Subsignal("dm", Pins("J3 F2 E1 C2 L12 G14 C16 C11"), IOStandard("SSTL15")),
        # DQ0-DQ63, one line per 16 bits: DQ0-31 in bank 33, DQ32-39 in bank 34, DQ40-63 in bank 35.
        Subsignal("dq", Pins(
            "L1 L2 K5 J4 K1 L3 J5 K6 G6 H4 H6 H3 G1 H2 G5 G4",
            "E2 E3 D4 E5 F4 F3 D1 D3 A2 B2 B4 B5 A3 B1 C1 C4",
            "K10 L9 K12 J9 K11 L10 J10 L7 F14 F15 F13 G16 G15 E12 D13 E13",
            "D15 E15 D16 E16 C17 B16 D14 B17 B12 C12 A12 A14 A13 B11 C14 B14"),
            IOStandard("SSTL15_T_DCI")),
        # DQS0-DQS7 (P and N): DQS0-3 in bank 33, DQS4 in bank 34, DQS5-7 in bank 35.
        Subsignal("dqs_p", Pins("K3 J1 E6 A5 L8 G12 F17 B15"), IOStandard("DIFF_SSTL15_T_DCI")),
        Subsignal("dqs_n", Pins("K2 H1 D5 A4 K8 F12 E17 A15"), IOStandard("DIFF_SSTL15_T_DCI")),
        # CK0 (P and N), bank 34.
        Subsignal("clk_p",   Pins("G10"), IOStandard("DIFF_SSTL15")),
        Subsignal("clk_n",   Pins("F10"), IOStandard("DIFF_SSTL15")),
        Subsignal("cke",     Pins("D10"), IOStandard("SSTL15")),          # CKE0, bank 34
        Subsignal("odt",     Pins("G7"),  IOStandard("SSTL15")),          # ODT0, bank 34
        Subsignal("reset_n", Pins("G17"), IOStandard("LVCMOS15")),        # RESET#, bank 35
        Misc("SLEW=FAST"),
    ),
]

# PS7 ----------------------------------------------------------------------------------------------

# The PS's own pins, for a SoC with LiteX's zynq7000 CPU (hostlink.cores.zynq.integration): its clock, resets,
# the 54 MIO pins (UART, SD, Ethernet, USB, QSPI on this board) and its 32-bit DDR3. They are the PS7 block's
# dedicated package pins, placed by Vivado's processing_system7 IP with the ZC706 preset; they are given by
# width only, as LiteX-Boards' Zynq platforms do when they do not name them (the constraints then say LOC X
# for them).
PS7_IO = [
    ("ps7_clk",   0, Pins(1)),
    ("ps7_porb",  0, Pins(1)),
    ("ps7_srstb", 0, Pins(1)),
    ("ps7_mio",   0, Pins(54)),
    ("ps7_ddram", 0,
        Subsignal("addr",    Pins(15)),
        Subsignal("ba",      Pins(3)),
        Subsignal("cas_n",   Pins(1)),
        Subsignal("ck_n",    Pins(1)),
        Subsignal("ck_p",    Pins(1)),
        Subsignal("cke",     Pins(1)),
        Subsignal("cs_n",    Pins(1)),
        Subsignal("dm",      Pins(4)),
        Subsignal("dq",      Pins(32)),
        Subsignal("dqs_n",   Pins(4)),
        Subsignal("dqs_p",   Pins(4)),
        Subsignal("odt",     Pins(1)),
        Subsignal("ras_n",   Pins(1)),
        Subsignal("reset_n", Pins(1)),
        Subsignal("we_n",    Pins(1)),
        Subsignal("vrn",     Pins(1)),
        Subsignal("vrp",     Pins(1)),
    ),
]
PS7_PRESET = "ZC706"   # processing_system7's preset for this board (its MIO, DDR3 and clocks).

# DDR3 memory --------------------------------------------------------------------------------------

# What a target needs to run LiteDRAM on the "ddram" pads. The PL SODIMM the ZC706 ships with is a Micron
# MT8JTF12864HZ-1G6 (1 GB, one rank of eight 1 Gb x8 chips, DDR3-1600): LiteDRAM's MT8JTF12864. LiteDRAM
# only has "1066" and "1333" timings for it; the "1333" ones are equal to or longer than the -1G6
# figures of Xilinx's MIG project for this board (tRP = tRCD = 13.125 ns, tRFC = 110 ns, tFAW = 30 ns,
# tRAS 36 ns against 35 ns), so they are safe at 1600 MT/s. The PHY runs 1:4, so its sys_clk_freq is the
# rate / 8: 200 MHz at 1600 MT/s. The memory PLL and IDELAYCTRL take the 200 MHz SYSCLK (clk200), which
# sits in bank 34 with the address and control pins, as Xilinx's MIG configuration for this board does.
DDRAM_MODULE           = "MT8JTF12864"   # litedram.modules
DDRAM_SPEEDGRADE       = "1333"
DDRAM_DATA_WIDTH       = 64
DDRAM_RATE             = 1600e6          # transfers per second per pin
DDRAM_PHY              = "K7DDRPHY"      # litedram.phy.s7ddrphy (the Z-7045 PL is Kintex-7 fabric)
DDRAM_REFCLK           = "clk200"        # resource feeding the memory PLL and the IDELAYCTRL
DDRAM_IODELAY_CLK_FREQ = 200e6

# Platform -----------------------------------------------------------------------------------------

class Platform(Xilinx7SeriesPlatform):
    default_clk_name   = "clk200"
    default_clk_period = 1e9/200e6

    def __init__(self, toolchain="vivado", with_ps7=False):
        # Named after the board, not this module: the generated files become zc706.tcl, zc706.xdc, zc706.bit.
        Xilinx7SeriesPlatform.__init__(self, "xc7z045ffg900-2", _io + (PS7_IO if with_ps7 else []), name="zc706",
                                       toolchain=toolchain)

    def create_programmer(self):
        return _ZynqVivadoProgrammer()

    def do_finalize(self, fragment):
        Xilinx7SeriesPlatform.do_finalize(self, fragment)
        # The PCIe reference clock is constrained by the PCIe PHY that requests it.
        self.add_period_constraint(self.lookup_request("clk200", loose=True), 1e9/200e6)
        # Bank 34 (DDR3 address/control and byte 4) takes its DCI reference from bank 33, as the MIG
        # constraints for this board set it.
        if self.lookup_request("ddram", loose=True) is not None:
            self.add_platform_command("set_property DCI_CASCADE {{34}} [get_iobanks 33]")

class _ZynqVivadoProgrammer(VivadoProgrammer):
    # On a Zynq the JTAG chain lists the ARM DAP first (arm_dap_0) and the PL second (xc7z045_1).
    def load_bitstream(self, bitstream_file, target="", device=1):
        VivadoProgrammer.load_bitstream(self, bitstream_file, target=target, device=device)
