# This file is part of hostlink.
# Copyright (c) 2026 hostlink developers
# SPDX-License-Identifier: BSD-2-Clause

"""Xilinx KC705 (XC7K325T-2FFG900): LiteX-Boards' platform, with the DDR3 SODIMM as Xilinx configures it
and the DDRAM_* constants that say how to run LiteDRAM on it (as zc706_platform and vc709_platform do).

LiteX-Boards 2023.12's `xilinx_kc705` has every pin hostlink uses (clock, PCIe x8, Ethernet, LEDs, DDR3).
Its "ddram" pins equal, pin for pin, Xilinx's KC705 board files (XilinxBoardStore kc705 1.3 `mig.prj`,
MT8JTF12864HZ-1G6) and a second, MIG-generated KC705 XDC; two of its IO settings do not
(doc/kc705.md):

- DQS0-7 are `DIFF_SSTL15` there; Xilinx's MIG configuration uses `DIFF_SSTL15_T_DCI`, the on-die split
  termination while the FPGA receives (read bursts), as DQ already has and as our ZC706/VC709 pads have.
- The pads carry `VCCAUX_IO=HIGH` (2.0 V); Xilinx's board files declare VCCAUX_IO 1.8 V (`NORMAL`) for
  every DDR3 pin, which the -2 part allows at 1600 MT/s. Telling Vivado 2.0 V where the board has 1.8 V
  would time the IOs against the wrong supply.

So this Platform replaces that one resource and keeps everything else, including the generated file
names (`xilinx_kc705.v/.tcl/.xdc`) and LiteX-Boards' DCI cascade (banks 32 and 34 from bank 33).
"""

from litex.build.generic_platform import Pins, IOStandard, Subsignal, Misc

from litex_boards.platforms import xilinx_kc705

# DDR3 SDRAM ---------------------------------------------------------------------------------------

# Banks from the MIG-generated XDC: DQ0-31, DQS0-3, DM0-3 in bank 32; address, control and CK in bank 33;
# DQ32-63, DQS4-7, DM4-7 and RESET# in bank 34.
_ddram = ("ddram", 0,
    # A0-A15. The shipped 1 GB SODIMM uses A0-A13 (16K rows); A14 is AK10 in Xilinx's board files for the
    # later 2 GB SODIMM; A15 (AK11) is LiteX-Boards' alone. LiteDRAM drives the unused upper pins low.
    Subsignal("a", Pins(
        "AH12 AG13 AG12 AF12 AJ12 AJ13 AJ14 AH14",
        "AK13 AK14 AF13 AE13 AJ11 AH11 AK10 AK11"),
        IOStandard("SSTL15")),
    Subsignal("ba",    Pins("AH9 AG9 AK9"), IOStandard("SSTL15")),          # BA0-BA2
    Subsignal("ras_n", Pins("AD9"),  IOStandard("SSTL15")),                 # RAS#
    Subsignal("cas_n", Pins("AC11"), IOStandard("SSTL15")),                 # CAS#
    Subsignal("we_n",  Pins("AE9"),  IOStandard("SSTL15")),                 # WE#
    Subsignal("cs_n",  Pins("AC12"), IOStandard("SSTL15")),                 # S0#
    Subsignal("dm", Pins("Y16 AB17 AF17 AE16 AK5 AJ3 AF6 AC7"), IOStandard("SSTL15")),  # DM0-DM7
    # DQ0-DQ63, one line per byte lane.
    Subsignal("dq", Pins(
        "AA15 AA16 AC14 AD14 AA17 AB15 AE15 Y15",
        "AB19 AD16 AC19 AD17 AA18 AB18 AE18 AD18",
        "AG19 AK19 AG18 AF18 AH19 AJ19 AE19 AD19",
        "AK16 AJ17 AG15 AF15 AH17 AG14 AH15 AK15",
        "AK8 AK6 AG7 AF7 AF8 AK4 AJ8 AJ6",
        "AH5 AH6 AJ2 AH2 AH4 AJ4 AK1 AJ1",
        "AF1 AF2 AE4 AE3 AF3 AF5 AE1 AE5",
        "AC1 AD3 AC4 AC5 AE6 AD6 AC2 AD4"),
        IOStandard("SSTL15_T_DCI")),
    # DQS0-DQS7 (P and N).
    Subsignal("dqs_p", Pins("AC16 Y19 AJ18 AH16 AH7 AG2 AG4 AD2"), IOStandard("DIFF_SSTL15_T_DCI")),
    Subsignal("dqs_n", Pins("AC15 Y18 AK18 AJ16 AJ7 AH1 AG3 AD1"), IOStandard("DIFF_SSTL15_T_DCI")),
    Subsignal("clk_p",   Pins("AG10"), IOStandard("DIFF_SSTL15")),          # CK0_P
    Subsignal("clk_n",   Pins("AH10"), IOStandard("DIFF_SSTL15")),          # CK0_N
    Subsignal("cke",     Pins("AF10"), IOStandard("SSTL15")),               # CKE0
    Subsignal("odt",     Pins("AD8"),  IOStandard("SSTL15")),               # ODT0
    Subsignal("reset_n", Pins("AK3"),  IOStandard("LVCMOS15")),             # RESET#
    Misc("SLEW=FAST"),
)

# DDR3 memory --------------------------------------------------------------------------------------

# What a target needs to run LiteDRAM on the "ddram" pads. The KC705 ships with a Micron MT8JTF12864HZ-1G6
# SODIMM (1 GB, one rank of eight 1 Gb x8 chips, DDR3-1600), the memory of Xilinx's board files:
# LiteDRAM's MT8JTF12864, the ZC706's module. As there, LiteDRAM only has "1066"
# and "1333" timings; the "1333" ones are equal to or longer than the -1G6 figures of Xilinx's KC705 MIG
# project (tRP = tRCD = 13.125 ns, tRFC = 110 ns, tFAW = 30 ns, tRAS 36 ns against 35 ns), so they are safe
# at 1600 MT/s. The PHY runs 1:4, so its clock is the rate / 8: 200 MHz. The memory PLL and IDELAYCTRL take
# the 200 MHz SYSCLK (clk200, AD12/AD11), which sits in bank 33 with the address and control pins, where
# Xilinx's MIG configuration for this board takes them from ("Use System Clock").
DDRAM_MODULE           = "MT8JTF12864"   # litedram.modules
DDRAM_SPEEDGRADE       = "1333"
DDRAM_DATA_WIDTH       = 64
DDRAM_RATE             = 1600e6          # transfers per second per pin
DDRAM_PHY              = "K7DDRPHY"      # litedram.phy.s7ddrphy
DDRAM_REFCLK           = "clk200"        # resource feeding the memory PLL and the IDELAYCTRL
DDRAM_IODELAY_CLK_FREQ = 200e6

# Platform -----------------------------------------------------------------------------------------

class Platform(xilinx_kc705.Platform):
    def __init__(self, toolchain="vivado"):
        xilinx_kc705.Platform.__init__(self, toolchain=toolchain)
        # Named as LiteX-Boards' platform: the generated files stay xilinx_kc705.v/.tcl/.xdc.
        self.name = "xilinx_kc705"
        self.constraint_manager.available = [resource
            for resource in self.constraint_manager.available if resource[0] != "ddram"]
        self.add_extension([_ddram])
