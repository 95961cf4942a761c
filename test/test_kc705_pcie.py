# This file is part of hostlink.
# Copyright (c) 2026 hostlink developers
# SPDX-License-Identifier: BSD-2-Clause

"""The KC705 target with PCIe Gen2 x8: elaboration and CSR map (PCIe alone and next to the UDP
core), generated Vivado sources, bad input, CLI, the pcie_7x model's x8 interface check, and a short
DMA simulation against the host model."""

import os
import re

import pytest

from hostlink.targets import kc705
from hostlink.targets import boards as registry
from hostlink.sim.pcie.models.s7_device import check_user_interface

from helpers import (bus_ports, check_enumeration, check_every_row, check_pcie_registers, elaborate,
                     elaborate_fresh, run_target, xdc_ports)

PCIE_ONLY = dict(sys_clk_freq=kc705.PCIE_SYS_CLK_FREQ, with_ethernet=False, with_pcie=True)

# Builds -------------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def pcie_build(tmp_path_factory):
    return elaborate_fresh(tmp_path_factory, "kc705_pcie", kc705.BaseSoC, **PCIE_ONLY)

@pytest.fixture(scope="module")
def pcie_and_udp_build(tmp_path_factory):
    return elaborate_fresh(tmp_path_factory, "kc705_pcie_udp", kc705.BaseSoC,
        sys_clk_freq=kc705.PCIE_SYS_CLK_FREQ, with_pcie=True)

# The PCIe and LED pins the .xdc places (LED 0: link up, LED 1: DMA activity).
PINS = {"pcie_x8_rst_n": "G25", "pcie_x8_clk_p": "U8", "user_led0": "AB8", "user_led1": "AA8",
        **bus_ports("pcie_x8_rx_p", "M6 P6 R4 T6 V6 W4 Y6 AA4"),
        **bus_ports("pcie_x8_tx_p", "L4 M2 N4 P2 T2 U4 V2 Y2")}

def _read(output_dir, name):
    with open(os.path.join(str(output_dir), "gateware", name)) as f:
        return f.read()

# Elaboration and CSR map --------------------------------------------------------------------------

def test_csr_map_pcie_alone(pcie_build):
    soc, csr, _ = pcie_build
    registers = csr["csr_registers"]
    check_pcie_registers(csr, channels=2)
    assert not any(name.startswith("udp_") for name in registers)
    assert csr["constants"]["dma_channels"] == 2
    assert csr["constants"]["config_clock_frequency"] == 250_000_000
    assert "kc705 pcie gen2 x8" in csr["constants"]["config_identifier"].lower()
    assert soc.pcie_phy.nlanes == 8 and soc.pcie_phy.data_width == 128
    # No CPU and no UART: the host drives the SoC through BAR0, as on the ZC706 and VC709.
    assert soc.cpu_type is None and not hasattr(soc, "uart")

@pytest.mark.slow
def test_reads_in_flight_fit_the_pcie_7x_completion_space(pcie_build):
    """At x8 LitePCIe configures pcie_7x for MPS 256: 72 completion headers and 370 x 16 bytes of completion
    space, which bound the reads in flight (hostlink.cores.pcie.endpoint)."""
    soc, csr, output_dir = pcie_build
    controller = soc.pcie_endpoint.crossbar.controller
    assert (controller.in_flight_headers, controller.in_flight_bytes) == (72, 370*16)


def test_csr_map_pcie_next_to_the_udp_core(pcie_and_udp_build):
    soc, csr, output_dir = pcie_and_udp_build
    registers = csr["csr_registers"]
    assert any(name.startswith("udp_") for name in registers)
    check_pcie_registers(csr, channels=2)
    assert "pcie gen2 x8 dma and udp/ipv4" in csr["constants"]["config_identifier"].lower()
    verilog = _read(output_dir, "xilinx_kc705.v")
    assert "udp (UDPCore)" in verilog and "pcie_s7 pcie_s7(" in verilog
    # UARTBone stays with the UDP core, next to BAR0.
    assert "uartbone (UARTBone)" in verilog

def test_ethernet_alone_is_unchanged(tmp_path):
    soc, csr = elaborate(kc705.BaseSoC, tmp_path)
    assert not hasattr(soc, "pcie_phy")
    assert not any(name.startswith("pcie_") for name in csr["csr_registers"])
    assert csr["constants"]["config_clock_frequency"] == int(kc705.SYS_CLK_FREQ)

# Generated Vivado sources -------------------------------------------------------------------------

def test_generated_tcl_configures_pcie_7x_gen2_x8(pcie_build):
    _, _, output_dir = pcie_build
    tcl = _read(output_dir, "xilinx_kc705.tcl")
    assert "-part xc7k325t-ffg900-2" in tcl
    assert re.search(r"create_ip -vendor xilinx.com -name pcie_7x\b", tcl)
    for setting in ["Maximum_Link_Width {X8}", "Link_Speed {5.0_GT/s}", "Trgt_Link_Speed {4'h2}",
                    "Interface_Width {128_bit}", "User_Clk_Freq {250}", "Device_ID {7028}",
                    "Max_Payload_Size {256_bytes}", "Ref_Clk_Freq {100_MHz}"]:
        assert f"CONFIG.{setting}" in tcl, setting
    xdc = _read(output_dir, "xilinx_kc705.xdc")
    assert PINS.items() <= xdc_ports(xdc).items()

# Bad input ----------------------------------------------------------------------------------------

@pytest.mark.parametrize("kwargs, message", [
    (dict(pcie_lanes=1),         "PCIe lane count must be one of 4, 8, not 1"),
    (dict(pcie_lanes=3),         "PCIe lane count must be one of 4, 8, not 3"),
    (dict(pcie_lanes=16),        "PCIe lane count must be one of 4, 8, not 16"),
    (dict(pcie_data_width=64),   r"PCIe data width \(bits\) must be one of 128, not 64"),
    (dict(dma_channels=0),       "DMA channel count must be an integer from 1 to 8, not 0"),
    (dict(dma_channels=9),       "DMA channel count must be an integer from 1 to 8, not 9"),
])
def test_bad_pcie_parameters_raise_value_error(kwargs, message):
    with pytest.raises(ValueError, match=message):
        kc705.BaseSoC(**PCIE_ONLY, **kwargs)

def test_neither_ethernet_nor_pcie_is_refused():
    with pytest.raises(ValueError, match="needs the UDP core, PCIe or both, not neither"):
        kc705.BaseSoC(with_ethernet=False)

# Command line -------------------------------------------------------------------------------------

def test_cli_build_without_vivado_fails_with_one_line(tmp_path):
    result = run_target("kc705", "--with-pcie", "--no-ethernet", "--build",
        "--output-dir", str(tmp_path))
    assert result.returncode != 0
    errors = [l for l in result.stderr.splitlines() if l.strip()]
    assert len(errors) == 1, result.stderr
    assert "--build needs 'vivado' on PATH" in errors[0]
    assert str(tmp_path / "gateware") in errors[0]
    assert "Link_Speed {5.0_GT/s}" in (tmp_path / "gateware" / "xilinx_kc705.tcl").read_text()

@pytest.mark.parametrize("args, message", [
    (["--with-pcie", "--dma-channels", "9"],
        "DMA channel count must be an integer from 1 to 8, not 9"),
    (["--no-ethernet"], "--no-ethernet leaves nothing without --with-pcie"),
    (["--driver"],      "--driver generates the PCIe driver: it needs --with-pcie"),
    (["--with-dram"],   "--with-dram needs --with-pcie: the DRAM is a source and sink of the PCIe DMA"),
])
def test_cli_rejects_bad_options(tmp_path, args, message):
    result = run_target("kc705", *args, "--output-dir", str(tmp_path))
    assert result.returncode == 2
    assert message in result.stderr.strip().splitlines()[-1]
    assert not (tmp_path / "gateware").exists()

PCIE_FLAGS = ["--build", "--load", "--driver", "--output-dir", "--no-compile", "--sys-clk-freq",
              "--dma-channels"]

@pytest.mark.parametrize("board", registry.PCIE_BOARDS)
def test_pcie_targets_share_their_flags(board):
    result = run_target(board, "--help")
    assert result.returncode == 0, result.stderr
    flags = set(re.findall(r"^\s+(--[a-z0-9-]+)", result.stdout, re.MULTILINE))
    assert set(PCIE_FLAGS) <= flags, sorted(set(PCIE_FLAGS) - flags)

# Device model -------------------------------------------------------------------------------------

@pytest.mark.parametrize("speed, width, data_width, clk", [(2, 8, 128, 250e6), (2, 4, 128, 125e6),
    (2, 4, 64, 250e6), (1, 8, 64, 250e6), (2, 1, 64, 125e6)])
def test_model_accepts_the_pcie_7x_interfaces(speed, width, data_width, clk):
    check_user_interface(speed, width, data_width, clk)

@pytest.mark.parametrize("args, message", [
    ((2, 8, 128, 125e6), "pcie_7x at Gen2 x8 carries 32 Gb/s: "
                         "a 128-bit interface at 125 MHz carries only 16 Gb/s"),
    ((2, 8, 64, 250e6),  "pcie_7x at Gen2 x8 carries 32 Gb/s: "
                         "a 64-bit interface at 250 MHz carries only 16 Gb/s"),
    ((3, 8, 128, 250e6), "pcie_7x link speed must be Gen1 or Gen2 (1 or 2), not 3"),
    ((2, 16, 128, 250e6), "pcie_7x link width must be one of 1, 2, 4, 8, not 16"),
    ((2, 8, 256, 250e6), "pcie_7x data width must be 64 or 128, not 256"),
])
def test_model_refuses_an_interface_slower_than_the_link(args, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        check_user_interface(*args)

# Simulation ---------------------------------------------------------------------------------------

# Whole 16-byte words of the 128-bit datapath: one word, odd word counts, several descriptors.
LOOPBACK_SIZES = [16, 48, 4096 + 16, 65536 + 4096 + 48]
SINGLE_SIZES   = [16, 12304]

def _jobs():
    jobs = [{"kind": "bidir", "size": size, "channels": [0], "descriptor_size": 65536}
            for size in LOOPBACK_SIZES]
    for size in SINGLE_SIZES:
        for kind in ("h2c", "c2h"):
            jobs.append({"kind": kind, "size": size, "channels": [0], "descriptor_size": 65536})
    jobs.append({"kind": "bidir", "size": 16384, "channels": [0], "descriptor_size": 4096,
                 "irq_every": 2})
    jobs.append({"kind": "bidir", "size": 8192 + 64, "channels": [0, 1], "descriptor_size": 4096})
    return jobs

@pytest.fixture(scope="module")
def sim_run():
    from hostlink.sim.pcie.run import run_jobs
    from hostlink.sim.pcie.models.host import host_profile
    # The default host: completions reordered, split on 64-byte boundaries, back-pressure, gaps.
    profile = host_profile("default", link_speed=2, link_width=8, seed=5)
    assert profile.reorder_completions and profile.backpressure > 0 and profile.rx_gaps > 0
    return run_jobs("kc705", _jobs(), profile, dma_channels=2)

@pytest.mark.sim
def test_sim_enumeration(sim_run):
    check_enumeration(sim_run["enumeration"], "s7", gen=2, lanes=8, device_id=0x7028)
    assert sim_run["sys_clk_hz"] == 250_000_000

@pytest.mark.sim
def test_sim_transfers_every_byte_with_the_msis_asked_for(sim_run):
    check_every_row(sim_run, _jobs())
    # The 16 KiB job: 4 descriptors per direction, an MSI on the 2nd and the 4th: 2 per direction.
    (row,) = [r for r in sim_run["results"] if r["size"] == 16384]
    assert row["msis_expected"] == 4

@pytest.mark.sim
def test_sim_two_channels_at_once(sim_run):
    (row,) = [r for r in sim_run["results"] if r["channels"] == 2]
    assert row["bytes"] == 2 * (8192 + 64)
