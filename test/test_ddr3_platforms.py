# This file is part of hostlink.
# Copyright (c) 2026 hostlink developers
# SPDX-License-Identifier: BSD-2-Clause

"""The DDR3 SODIMM pads of the VC709 and ZC706 platforms: widths, pins against a second public source, IO
standards, no pin shared with another resource, the memory constants, and a LiteDRAM PHY elaborated on
the pads down to Verilog and XDC (no Vivado)."""

import os
import re

import pytest

from migen import *

from litex.gen import *

from litex.build.generic_platform import IOStandard, Pins, Subsignal
from litex.soc.cores.clock import S7IDELAYCTRL

from litedram import modules as dram_modules
from litedram.phy import s7ddrphy

from hostlink.targets import vc709_platform, zc706_platform

from helpers import bus_ports, xdc_ports

# Expected values ----------------------------------------------------------------------------------

# Each board's pins as a second public source lists them (not the source the platform was written from),
# so that a typo in either shows up here. VC709: SiFive's fpga-shells VC709 DDR overlay.
SECOND_SOURCE = {
    "vc709": {
        "a":       "A20 B19 C20 A19 A17 A16 D20 C18 D17 C19 B21 B17 A15 A21 F17 E17",
        "ba":      "D21 C21 D18",
        "ras_n":   "E20",
        "cas_n":   "K17",
        "we_n":    "F20",
        "reset_n": "P18",
        "clk_p":   "E19",
        "clk_n":   "E18",
        "cke":     "K19",
        "cs_n":    "J17",
        "odt":     "H20",
        "dm":      "M13 K15 F12 A14 C23 D25 C31 F31",
        "dq":      "N14 N13 L14 M14 M12 N15 M11 L12 K14 K13 H13 J13 L16 L15 H14 J15 "
                   "E15 E13 F15 E14 G13 G12 F14 G14 B14 C13 B16 D15 D13 E12 C16 D16 "
                   "A24 B23 B27 B26 A22 B22 A25 C24 E24 D23 D26 C25 E23 D22 F22 E22 "
                   "A30 D27 A29 C28 D28 B31 A31 A32 E30 F29 F30 F27 C30 E29 F26 D30",
        "dqs_n":   "M16 J12 G16 C14 A27 E25 B29 E28",
        "dqs_p":   "N16 K12 H16 C15 A26 F25 B28 E27",
    },
    # ZC706: Analog Devices' ZC706 PL DDR3 MIG project (hdl, projects/common/zc706/zc706_plddr3_mig.prj).
    "zc706": {
        "a":       "E10 B9 E11 A9 D11 B6 F9 E8 B10 J8 D6 B7 H12 A10",
        "ba":      "F8 H7 A7",
        "ras_n":   "H11",
        "cas_n":   "E7",
        "we_n":    "F7",
        "reset_n": "G17",
        "clk_p":   "G10",
        "clk_n":   "F10",
        "cke":     "D10",
        "cs_n":    "J11",
        "odt":     "G7",
        "dm":      "J3 F2 E1 C2 L12 G14 C16 C11",
        "dq":      "L1 L2 K5 J4 K1 L3 J5 K6 G6 H4 H6 H3 G1 H2 G5 G4 "
                   "E2 E3 D4 E5 F4 F3 D1 D3 A2 B2 B4 B5 A3 B1 C1 C4 "
                   "K10 L9 K12 J9 K11 L10 J10 L7 F14 F15 F13 G16 G15 E12 D13 E13 "
                   "D15 E15 D16 E16 C17 B16 D14 B17 B12 C12 A12 A14 A13 B11 C14 B14",
        "dqs_n":   "K2 H1 D5 A4 K8 F12 E17 A15",
        "dqs_p":   "K3 J1 E6 A5 L8 G12 F17 B15",
    },
}

# dci_cascade: the DCI_CASCADE command the platform adds once the pads are requested, if any.
BOARDS = {
    "vc709": dict(platform=vc709_platform, address_bits=16, vccaux_io_high=True,  dci_cascade=None),
    "zc706": dict(platform=zc706_platform, address_bits=14, vccaux_io_high=False,
        dci_cascade="set_property DCI_CASCADE {34} [get_iobanks 33]"),
}

IO_STANDARDS = {
    "a":       "SSTL15",
    "ba":      "SSTL15",
    "ras_n":   "SSTL15",
    "cas_n":   "SSTL15",
    "we_n":    "SSTL15",
    "cs_n":    "SSTL15",
    "dm":      "SSTL15",
    "dq":      "SSTL15_T_DCI",
    "dqs_p":   "DIFF_SSTL15_T_DCI",
    "dqs_n":   "DIFF_SSTL15_T_DCI",
    "clk_p":   "DIFF_SSTL15",
    "clk_n":   "DIFF_SSTL15",
    "cke":     "SSTL15",
    "odt":     "SSTL15",
    "reset_n": "LVCMOS15",
}

# Helpers ------------------------------------------------------------------------------------------

def _ddram_io(board):
    for io in BOARDS[board]["platform"]._io:
        if io[0] == "ddram" and io[1] == 0:
            return io
    raise KeyError(f"no ddram resource on {board}")

def _subsignals(io):
    return {item.name: item for item in io[2:] if isinstance(item, Subsignal)}

def _pins(item):
    return [pin for constraint in item.constraints if isinstance(constraint, Pins)
        for pin in constraint.identifiers]

def _io_standard(item):
    standards = [constraint.name for constraint in item.constraints
        if isinstance(constraint, IOStandard)]
    return standards[0] if standards else None

def _resource_pins(io):
    pins = []
    for item in io[2:]:
        if isinstance(item, Pins):
            pins += item.identifiers
        elif isinstance(item, Subsignal):
            pins += _pins(item)
    return pins

# Pads ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("board", sorted(BOARDS))
def test_ddram_widths(board):
    pads = BOARDS[board]["platform"].Platform().request("ddram")
    assert len(pads.a) == BOARDS[board]["address_bits"]
    assert 14 <= len(pads.a) <= 16
    assert len(pads.ba)    == 3
    assert len(pads.dq)    == 64
    assert len(pads.dqs_p) == 8
    assert len(pads.dqs_n) == 8
    assert len(pads.dm)    == 8
    for name in ["ras_n", "cas_n", "we_n", "cs_n", "clk_p", "clk_n", "cke", "odt", "reset_n"]:
        assert len(getattr(pads, name)) == 1, name

@pytest.mark.parametrize("board", sorted(BOARDS))
def test_ddram_pins_match_second_source(board):
    subsignals = _subsignals(_ddram_io(board))
    assert set(subsignals) == set(SECOND_SOURCE[board])
    for name, pins in SECOND_SOURCE[board].items():
        assert _pins(subsignals[name]) == pins.split(), name

@pytest.mark.parametrize("board", sorted(BOARDS))
def test_ddram_io_standards(board):
    io = _ddram_io(board)
    for name, item in _subsignals(io).items():
        assert _io_standard(item) == IO_STANDARDS[name], name
    misc = [item.misc for item in io[2:] if hasattr(item, "misc")]
    assert "SLEW=FAST" in misc
    assert ("VCCAUX_IO=HIGH" in misc) == BOARDS[board]["vccaux_io_high"]

@pytest.mark.parametrize("board", sorted(BOARDS))
def test_no_pin_used_twice_in_the_platform(board):
    resources = BOARDS[board]["platform"]._io
    # The narrower PCIe resources are subsets of the widest one by design: count the widest only.
    pcie = sorted((io for io in resources if io[0].startswith("pcie_x")),
        key=lambda io: len(_resource_pins(io)))
    for io in pcie[:-1]:
        assert set(_resource_pins(io)) <= set(_resource_pins(pcie[-1])), io[0]
    pins = []
    for io in resources:
        if io in pcie[:-1]:
            continue
        pins += _resource_pins(io)
    assert len(pins) > 64 + 8 + 8 + 8 + 14
    duplicates = sorted({pin for pin in pins if pins.count(pin) > 1})
    assert duplicates == []

# Memory constants ---------------------------------------------------------------------------------

@pytest.mark.parametrize("board", sorted(BOARDS))
def test_memory_constants_match_the_pads(board):
    platform_module = BOARDS[board]["platform"]
    pads            = platform_module.Platform().request("ddram")
    sys_clk_freq    = platform_module.DDRAM_RATE/8
    module_cls      = getattr(dram_modules, platform_module.DDRAM_MODULE)
    module          = module_cls(sys_clk_freq, "1:4", speedgrade=platform_module.DDRAM_SPEEDGRADE)
    assert issubclass(module_cls, dram_modules.DDR3Module)
    assert module.geom_settings.rowbits  == len(pads.a)
    assert module.geom_settings.bankbits == len(pads.ba)
    assert module.geom_settings.colbits  == 10
    assert platform_module.DDRAM_DATA_WIDTH == len(pads.dq)
    assert issubclass(getattr(s7ddrphy, platform_module.DDRAM_PHY), s7ddrphy.S7DDRPHY)
    assert platform_module.DDRAM_IODELAY_CLK_FREQ in [200e6, 300e6, 400e6]
    platform_module.Platform().request(platform_module.DDRAM_REFCLK)
    # One rank of x8 chips: capacity = 2^(row + column + bank bits) x 64 bits.
    geom     = module.geom_settings
    capacity = 2**(geom.rowbits + geom.colbits + geom.bankbits)*8
    assert capacity == {"vc709": 4*2**30, "zc706": 2**30}[board]

# PHY elaboration ----------------------------------------------------------------------------------

class _DDR3PHYOnly(LiteXModule):
    def __init__(self, platform, platform_module):
        self.cd_sys    = ClockDomain()
        self.cd_sys4x  = ClockDomain()
        self.cd_idelay = ClockDomain()

        # # #

        self.idelayctrl = S7IDELAYCTRL(self.cd_idelay)
        phy_cls = getattr(s7ddrphy, platform_module.DDRAM_PHY)
        self.ddrphy = phy_cls(platform.request("ddram"),
            memtype          = "DDR3",
            nphases          = 4,
            sys_clk_freq     = platform_module.DDRAM_RATE/8,
            iodelay_clk_freq = platform_module.DDRAM_IODELAY_CLK_FREQ,
        )

@pytest.mark.parametrize("board", sorted(BOARDS))
def test_litedram_phy_elaborates_on_the_pads(board, tmp_path):
    platform_module = BOARDS[board]["platform"]
    platform = platform_module.Platform()
    top      = _DDR3PHYOnly(platform, platform_module)
    platform.build(top, build_dir=str(tmp_path), build_name="ddr3", run=False)
    with open(os.path.join(str(tmp_path), "ddr3.v")) as f:
        verilog = f.read()
    with open(os.path.join(str(tmp_path), "ddr3.xdc")) as f:
        xdc = f.read()

    def instances(primitive):
        return len(re.findall(rf"^{primitive} (#\(|\w+\()", verilog, re.MULTILINE))

    # Every DQ is read through a delay and a deserializer; every output (DQ, DQS, DM, address, bank,
    # RAS#, CAS#, WE#, CS#, CKE, ODT, RESET#, CK) leaves through a serializer and an output delay.
    outputs = 64 + 8 + 8 + BOARDS[board]["address_bits"] + 3 + 7 + 1
    assert instances("ISERDESE2")  == 64
    assert instances("IDELAYE2")   == 64
    assert instances("OSERDESE2")  == outputs
    assert instances("ODELAYE2")   == outputs
    assert instances("IOBUF")      == 64
    assert instances("IOBUFDS")    == 8
    assert instances("OBUFDS")     == 1
    assert instances("IDELAYCTRL") == 1

    locs, standards = xdc_ports(xdc), xdc_ports(xdc, "IOSTANDARD")
    for name, pins in SECOND_SOURCE[board].items():
        for port, pin in bus_ports(f"ddram_{name}", pins).items():
            assert (locs.get(port), standards.get(port)) == (pin, IO_STANDARDS[name]), port
    assert ("VCCAUX_IO HIGH" in xdc) == BOARDS[board]["vccaux_io_high"]
    assert "INTERNAL_VREF" not in xdc
    dci_cascade = BOARDS[board]["dci_cascade"]
    if dci_cascade is None:
        assert "DCI_CASCADE" not in xdc
    else:
        assert xdc.count(dci_cascade) == 1

class _LEDOnly(LiteXModule):
    def __init__(self, platform):
        self.comb += platform.request("user_led").eq(1)

@pytest.mark.parametrize("board", sorted(BOARDS))
def test_no_ddr3_constraints_without_the_pads(board, tmp_path):
    platform = BOARDS[board]["platform"].Platform()
    platform.build(_LEDOnly(platform), build_dir=str(tmp_path), build_name="led", run=False)
    with open(os.path.join(str(tmp_path), "led.xdc")) as f:
        xdc = f.read()
    assert "ddram" not in xdc
    assert "DCI_CASCADE" not in xdc
