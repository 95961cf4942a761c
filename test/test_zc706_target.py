# This file is part of hostlink.
# Copyright (c) 2026 hostlink developers
# SPDX-License-Identifier: BSD-2-Clause

"""The ZC706 target: platform pins, elaboration, CSR map, generated Vivado sources, bad input, CLI."""

import json
import os
import re

import pytest

from hostlink.targets import zc706, zc706_platform

from helpers import bus_ports, check_pcie_registers, elaborate, elaborate_fresh, run_target, xdc_ports

# The PCIe and LED pins the .xdc places (LED 0: link up, LED 1: DMA activity).
PINS = {"pcie_x4_rst_n": "AK23", "pcie_x4_clk_p": "N8", "clk200_p": "H9", "user_led0": "Y21", "user_led1": "G2",
        **bus_ports("pcie_x4_rx_p", "P6 T6 U4 V6"),
        **bus_ports("pcie_x4_tx_p", "N4 P2 R4 T2")}

# Helpers ------------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def default_build(tmp_path_factory):
    return elaborate_fresh(tmp_path_factory, "zc706_default", zc706.BaseSoC)

# Platform -----------------------------------------------------------------------------------------

def _pins(platform, name, number=0):
    for io in zc706_platform._io:
        if io[0] == name and io[1] == number:
            return io
    raise KeyError(name)

def _subsignal_pins(io):
    return {s.name: s.constraints[0].identifiers for s in io[2:] if hasattr(s, "name")}

def test_platform_identity():
    platform = zc706_platform.Platform()
    assert platform.device == "xc7z045ffg900-2"
    assert platform.name == "zc706"
    assert platform.default_clk_name == "clk200"
    assert platform.default_clk_period == pytest.approx(5.0)
    assert platform.toolchain.__class__.__name__ == "XilinxVivadoToolchain"

def test_platform_pins_unique_and_pcie_subsets():
    platform = zc706_platform.Platform()
    x1, x2, x4 = (_subsignal_pins(_pins(platform, f"pcie_x{n}")) for n in [1, 2, 4])
    for name in ["rx_p", "rx_n", "tx_p", "tx_n"]:
        assert len(x4[name]) == 4
        assert x2[name] == x4[name][:2]
        assert x1[name] == x4[name][:1]
    for name in ["rst_n", "clk_p", "clk_n"]:
        assert x1[name] == x2[name] == x4[name]
    assert x4["rst_n"] == ["AK23"]
    assert (x4["clk_p"], x4["clk_n"]) == (["N8"], ["N7"])

    # Every package pin is used by one IO only, the x1/x2 subsets of pcie_x4 aside.
    owners = {}
    for io in zc706_platform._io:
        if io[0] in ["pcie_x1", "pcie_x2"]:
            continue
        pins = []
        for item in io[2:]:
            if hasattr(item, "identifiers"):
                pins += item.identifiers
            elif hasattr(item, "constraints"):
                pins += item.constraints[0].identifiers
        for pin in pins:
            assert pin not in owners, f"{pin} used by {owners[pin]} and {io[0]}:{io[1]}"
            owners[pin] = f"{io[0]}:{io[1]}"

def test_platform_requests():
    platform = zc706_platform.Platform()
    leds = platform.request_all("user_led")
    assert len(leds) == 4
    clk = platform.request("clk200")
    assert hasattr(clk, "p") and hasattr(clk, "n")
    pcie = platform.request("pcie_x4")
    assert [len(getattr(pcie, s)) for s in ["rx_p", "rx_n", "tx_p", "tx_n"]] == [4, 4, 4, 4]
    assert len(platform.request_all("user_btn")) == 3

def test_platform_programmer_targets_the_pl():
    from litex.build.xilinx.programmer import VivadoProgrammer
    programmer = zc706_platform.Platform().create_programmer()
    assert isinstance(programmer, VivadoProgrammer)
    # JTAG device 0 of a Zynq is the ARM DAP; the bitstream goes to the PL (device 1).
    import inspect
    assert inspect.signature(programmer.load_bitstream).parameters["device"].default == 1

# CSR map ------------------------------------------------------------------------------------------

def test_csr_map_phy_msi_dma_channels_identification(default_build):
    soc, csr, output_dir = default_build
    registers = csr["csr_registers"]
    check_pcie_registers(csr, channels=2)
    assert csr["constants"]["dma_addr_width"] == 64
    assert "identifier_mem" in csr["csr_bases"]
    assert "zc706" in csr["constants"]["config_identifier"]
    assert csr["constants"]["config_clock_frequency"] == int(zc706.SYS_CLK_FREQ)
    # The CSV export carries the same registers.
    with open(os.path.join(str(output_dir), "csr.csv")) as f:
        csv_registers = {line.split(",")[1] for line in f if line.startswith("csr_register,")}
    assert csv_registers == set(registers)

@pytest.mark.slow
def test_reads_in_flight_fit_the_pcie_7x_completion_space(default_build):
    """pcie_7x advertises infinite completion credits: the controller keeps the reads in flight within its
    receive buffer's completion space (LitePCIe's configuration at x4: MPS 512, 72 headers, 850 x 16 bytes),
    with the tags to use all of it at 2 us reads (hostlink.cores.pcie.endpoint)."""
    soc, csr, output_dir = default_build
    controller = soc.pcie_endpoint.crossbar.controller
    assert controller.in_flight_headers == 72
    assert controller.in_flight_bytes == min(850*16, controller.buffer_bytes)
    assert soc.pcie_endpoint.max_pending_requests == 32
    # LitePCIe's reader FIFO is sized on the reads the space admits (4,608 bytes: 9 of 512 -> 16), not on
    # the 32 tags: 4 x 16 x 512 bytes.
    assert soc.pcie_endpoint.reads_in_flight_bytes == 72*64
    assert soc.pcie_dma0.reader.data_fifo.depth*16 == 4*16*512


def test_csr_map_four_channels(tmp_path):
    soc, csr = elaborate(zc706.BaseSoC, tmp_path, dma_channels=4)
    check_pcie_registers(csr, channels=4)
    interrupts = [k for k in csr["constants"] if re.fullmatch(r"pcie_dma\d_(reader|writer)_interrupt", k)]
    assert len(interrupts) == 8

# Generated Vivado sources -------------------------------------------------------------------------

def test_generated_tcl_and_xdc(default_build):
    _, _, output_dir = default_build
    gateware = os.path.join(str(output_dir), "gateware")
    with open(os.path.join(gateware, "zc706.tcl")) as f:
        tcl = f.read()
    assert "-part xc7z045ffg900-2" in tcl
    assert re.search(r"create_ip -vendor xilinx.com -name pcie_7x\b", tcl)
    assert "CONFIG.Maximum_Link_Width {X4}" in tcl
    assert "CONFIG.Link_Speed {5.0_GT/s}" in tcl
    assert "CONFIG.Trgt_Link_Speed {4'h2}" in tcl  # Gen2 target speed.
    assert "CONFIG.Interface_Width {128_bit}" in tcl
    assert "CONFIG.Ref_Clk_Freq {100_MHz}" in tcl
    with open(os.path.join(gateware, "zc706.xdc")) as f:
        xdc = f.read()
    assert PINS.items() <= xdc_ports(xdc).items()

# Bad input ----------------------------------------------------------------------------------------

@pytest.mark.parametrize("kwargs, shown", [
    (dict(lanes=3),        "3"),
    (dict(lanes=8),        "8"),
    (dict(data_width=96),  "96"),
    (dict(data_width=256), "256"),
    (dict(dma_channels=0), "0"),
    (dict(dma_channels=9), "9"),
])
def test_bad_parameters_raise_value_error_naming_the_value(kwargs, shown):
    with pytest.raises(ValueError, match=rf"\b{shown}\b"):
        zc706.BaseSoC(**kwargs)

# Command line -------------------------------------------------------------------------------------

def run_zc706(*args):
    return run_target("zc706", *args)

@pytest.mark.parametrize("flag", ["--build", "--load"])
def test_cli_without_vivado_fails_with_one_line(tmp_path, flag):
    output_dir = tmp_path / "out"
    proc = run_zc706(flag, "--output-dir", str(output_dir))
    assert proc.returncode != 0, proc.stdout + proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, f"expected one line on stderr, got {len(lines)}:\n{proc.stderr}"
    gateware = os.path.join(str(output_dir), "gateware")
    assert "vivado" in lines[0].lower()
    assert gateware in lines[0]
    # Generation completed before stopping: the sources are where the line says.
    assert os.path.isfile(os.path.join(gateware, "zc706.tcl"))
    assert os.path.isfile(os.path.join(gateware, "zc706.v"))

def test_cli_generates_without_flags(tmp_path):
    proc = run_zc706("--output-dir", str(tmp_path), "--dma-channels", "4",
        "--csr-json", str(tmp_path / "csr.json"))
    assert proc.returncode == 0, proc.stderr
    with open(tmp_path / "csr.json") as f:
        assert json.load(f)["constants"]["dma_channels"] == 4

def test_cli_bad_dma_channels(tmp_path):
    proc = run_zc706("--output-dir", str(tmp_path), "--dma-channels", "9")
    assert proc.returncode == 2
    assert re.search(r"\b9\b", proc.stderr.strip().splitlines()[-1])


@pytest.mark.slow
def test_msi_sources_do_not_leak_between_socs():
    # LiteX's add_pcie() defaults `msis` to one dict shared by every call: a second SoC built in the same
    # process used to inherit the first one's MSI sources (16 interrupts for 4 channels).
    zc706.BaseSoC(dma_channels=8)
    soc = zc706.BaseSoC(dma_channels=1)
    interrupts = sorted(k for k in soc.constants if k.endswith("_INTERRUPT"))
    assert interrupts == ["PCIE_DMA0_READER_INTERRUPT", "PCIE_DMA0_WRITER_INTERRUPT"]
