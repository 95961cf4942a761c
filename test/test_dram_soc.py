# This file is part of hostlink.
# Copyright (c) 2026 hostlink developers
# SPDX-License-Identifier: BSD-2-Clause

"""PCIe targets with the board's DDR3 (--with-dram): generation without Vivado, the CSR map, and the
ZC706 SoC in simulation (SDRAMPHYModel in place of the DDR3 PHY) moving host data to and from DRAM.

One simulator run carries every job (building the model takes most of the time); each test then
asserts on its own rows.
"""

import json
import os
import re
import subprocess
import sys

import pytest

from litex.soc.integration.builder import Builder

from hostlink.sim.pcie.dram import SIM_DRAM_ROWS

from helpers import bus_ports, elaborate, elaborate_fresh, run_target, xdc_ports

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

NATIVE   = 64                 # 512-bit native words.
BANK_ROW = 8192               # 1024 columns x 64 bits: the bank changes every 8 KiB,
ROW      = 8 * BANK_ROW       # the row every 64 KiB.
SIM_SIZE = SIM_DRAM_ROWS * ROW

# Generation ---------------------------------------------------------------------------------------

def _elaborate(output_dir, **kwargs):
    from hostlink.targets import zc706
    soc = zc706.BaseSoC(**kwargs)
    builder = Builder(soc, output_dir=str(output_dir), compile_gateware=False, compile_software=False,
        csr_json=os.path.join(str(output_dir), "csr.json"))
    builder.build(run=False)
    with open(os.path.join(str(output_dir), "csr.json")) as f:
        return soc, json.load(f)


@pytest.fixture(scope="module")
def zc706_dram_build(tmp_path_factory):
    output_dir = tmp_path_factory.mktemp("zc706_dram")
    soc, csr = _elaborate(output_dir, with_dram=True)
    return soc, csr, output_dir


def check_sodimm_and_phy(csr=None, verilog=None):
    """What the ZC706 and KC705 share: the SODIMM they ship with (MT8JTF12864: 1 GiB, a 64-byte native port)
    in the csr.json constants, LiteDRAM's K7DDRPHY (serializers for DQ, DQS, address and control, an
    IDELAYCTRL) in the Verilog."""
    if csr is not None:
        assert csr["constants"]["dram_size"] == 1 << 30
        assert csr["constants"]["dram_native_bytes"] == 64
    if verilog is not None:
        assert verilog.count("OSERDESE2") > 64
        assert "IDELAYCTRL" in verilog


@pytest.mark.slow
def test_zc706_dram_csr_map(zc706_dram_build):
    _, csr, _ = zc706_dram_build
    registers = csr["csr_registers"]
    for ch in range(2):
        for name in ["control", "refusals"] + [f"{e}_{r}" for e in ("write", "read")
                for r in ("base", "length", "control", "status", "words")]:
            assert f"pcie_dma{ch}_dram_{name}" in registers, name
    for unit in ("generator", "checker"):
        for name in ("reset", "start", "done", "base", "end", "length", "random"):
            assert f"sdram_{unit}_{name}" in registers
    assert "sdram_checker_errors" in registers
    assert "sdram_dfii_control" in registers           # Initialisation of the DDR3 by the host.
    check_sodimm_and_phy(csr)


@pytest.mark.slow
def test_zc706_dram_gateware(zc706_dram_build):
    soc, _, output_dir = zc706_dram_build
    check_sodimm_and_phy(verilog=open(os.path.join(str(output_dir), "gateware", "zc706.v")).read())
    assert soc.crg.dram.pll.clkouts[0][1] == 200e6     # DDR3-1600 at 1:4.


@pytest.mark.slow
def test_zc706_without_dram_has_no_dram(tmp_path):
    _, csr = _elaborate(tmp_path)
    assert not any("dram" in name for name in csr["csr_registers"])


@pytest.mark.slow
def test_zc706_cli_with_dram(tmp_path):
    result = subprocess.run([sys.executable, os.path.join(REPO, "targets", "zc706.py"), "--with-dram",
        "--output-dir", str(tmp_path)], capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr[-2000:]
    assert os.path.exists(os.path.join(str(tmp_path), "gateware", "zc706.v"))

@pytest.mark.slow
def test_vc709_dram_generation(tmp_path):
    from hostlink.targets import vc709
    soc = vc709.BaseSoC(with_dram=True)
    builder = Builder(soc, output_dir=str(tmp_path), compile_gateware=False, compile_software=False,
        csr_json=os.path.join(str(tmp_path), "csr.json"))
    builder.build(run=False)
    csr = json.load(open(os.path.join(str(tmp_path), "csr.json")))
    assert csr["constants"]["dram_size"] == 4 << 30      # MT8KTF51264: 4 GiB.
    assert "pcie_dma1_dram_read_base" in csr["csr_registers"]
    assert abs(soc.crg.dram.pll.clkouts[0][1] - 233.25e6) < 1e3   # DDR3-1866 at 1:4.
    verilog = open(os.path.join(str(tmp_path), "gateware", "vc709.v")).read()
    assert "IDELAYCTRL" in verilog and verilog.count("ISERDESE2") >= 64


# KC705 --------------------------------------------------------------------------------------------

# The KC705 SODIMM's pins as a second public source lists them: a MIG-generated KC705 XDC (DDR3 in banks
# 32-34, MT8JTF12864HZ-1G6, A0-A13). A14 is from Xilinx's KC705 board files (1.7, `mig_2g.prj`, for the
# later 2 GB SODIMM); A15 (AK11) is LiteX-Boards' alone.
KC705_SECOND_SOURCE = {
    "a":       "AH12 AG13 AG12 AF12 AJ12 AJ13 AJ14 AH14 AK13 AK14 AF13 AE13 AJ11 AH11 AK10",
    "ba":      "AH9 AG9 AK9",
    "ras_n":   "AD9",
    "cas_n":   "AC11",
    "we_n":    "AE9",
    "cs_n":    "AC12",
    "reset_n": "AK3",
    "clk_p":   "AG10",
    "clk_n":   "AH10",
    "cke":     "AF10",
    "odt":     "AD8",
    "dm":      "Y16 AB17 AF17 AE16 AK5 AJ3 AF6 AC7",
    "dq":      "AA15 AA16 AC14 AD14 AA17 AB15 AE15 Y15 AB19 AD16 AC19 AD17 AA18 AB18 AE18 AD18 "
               "AG19 AK19 AG18 AF18 AH19 AJ19 AE19 AD19 AK16 AJ17 AG15 AF15 AH17 AG14 AH15 AK15 "
               "AK8 AK6 AG7 AF7 AF8 AK4 AJ8 AJ6 AH5 AH6 AJ2 AH2 AH4 AJ4 AK1 AJ1 "
               "AF1 AF2 AE4 AE3 AF3 AF5 AE1 AE5 AC1 AD3 AC4 AC5 AE6 AD6 AC2 AD4",
    "dqs_p":   "AC16 Y19 AJ18 AH16 AH7 AG2 AG4 AD2",
    "dqs_n":   "AC15 Y18 AK18 AJ16 AJ7 AH1 AG3 AD1",
}
KC705_IO_STANDARDS = {"dq": "SSTL15_T_DCI", "dqs_p": "DIFF_SSTL15_T_DCI", "dqs_n": "DIFF_SSTL15_T_DCI",
    "clk_p": "DIFF_SSTL15", "clk_n": "DIFF_SSTL15", "reset_n": "LVCMOS15"}

KC705_DRAM = dict(with_ethernet=False, with_pcie=True, with_dram=True)


@pytest.fixture(scope="module")
def kc705_dram_build(tmp_path_factory):
    from hostlink.targets import kc705
    return elaborate_fresh(tmp_path_factory, "kc705_dram", kc705.BaseSoC, sys_clk_freq=kc705.PCIE_SYS_CLK_FREQ,
                           **KC705_DRAM)


@pytest.mark.slow
def test_kc705_dram_csr_map_is_the_zc706_one(kc705_dram_build, zc706_dram_build):
    _, csr, _ = kc705_dram_build
    _, zc706_csr, _ = zc706_dram_build
    def dram_registers(c):
        return sorted(name for name in c["csr_registers"] if "dram" in name)
    assert dram_registers(csr) == dram_registers(zc706_csr)
    assert "pcie_dma1_dram_read_words" in csr["csr_registers"]
    check_sodimm_and_phy(csr)


@pytest.mark.slow
def test_kc705_dram_gateware(kc705_dram_build):
    soc, _, output_dir = kc705_dram_build
    verilog = open(os.path.join(str(output_dir), "gateware", "xilinx_kc705.v")).read()
    check_sodimm_and_phy(verilog=verilog)
    assert "pcie_s7 pcie_s7(" in verilog
    assert [f for _, f, *_ in soc.crg.dram.pll.clkouts.values()] == [200e6, 800e6]   # DDR3-1600, 1:4.
    xdc = open(os.path.join(str(output_dir), "gateware", "xilinx_kc705.xdc")).read()
    locs, standards = xdc_ports(xdc), xdc_ports(xdc, "IOSTANDARD")
    for name, pins in KC705_SECOND_SOURCE.items():
        for port, pin in bus_ports(f"ddram_{name}", pins).items():
            assert (locs.get(port), standards.get(port)) == (pin, KC705_IO_STANDARDS.get(name, "SSTL15")), port
    # Xilinx's board files: VCCAUX_IO 1.8 V (NORMAL) for the DDR3 banks, DCI cascaded from bank 33.
    assert "VCCAUX_IO" not in xdc
    assert xdc.count("set_property DCI_CASCADE {32 34} [get_iobanks 33]") == 1


@pytest.mark.slow
def test_kc705_dram_driver_headers(kc705_dram_build, tmp_path):
    from hostlink.software.driver import generate_driver
    soc, csr, _ = kc705_dram_build
    generate_driver(soc, str(tmp_path))
    csr_h = open(os.path.join(str(tmp_path), "kernel", "csr.h")).read()
    soc_h = open(os.path.join(str(tmp_path), "kernel", "soc.h")).read()
    for name in ["PCIE_DMA0_DRAM_CONTROL", "PCIE_DMA1_DRAM_WRITE_BASE", "SDRAM_CHECKER_ERRORS",
                 "SDRAM_DFII_CONTROL"]:
        assert f"CSR_{name}_ADDR" in csr_h, name
    assert re.search(r"#define DRAM_SIZE 1073741824\b", soc_h)


@pytest.mark.slow
def test_kc705_with_ethernet_and_dram(tmp_path):
    from hostlink.targets import kc705
    soc, csr = elaborate(kc705.BaseSoC, tmp_path, sys_clk_freq=kc705.PCIE_SYS_CLK_FREQ,
        with_pcie=True, with_dram=True)
    assert any(name.startswith("udp_") for name in csr["csr_registers"])
    assert "pcie_dma0_dram_control" in csr["csr_registers"]


@pytest.mark.slow
def test_kc705_without_dram_has_no_dram(tmp_path):
    from hostlink.targets import kc705
    soc, csr = elaborate(kc705.BaseSoC, tmp_path, sys_clk_freq=kc705.PCIE_SYS_CLK_FREQ,
        with_ethernet=False, with_pcie=True)
    assert not any("dram" in name for name in csr["csr_registers"])
    assert not hasattr(soc.crg, "dram")
    assert "ddram" not in open(os.path.join(str(tmp_path), "gateware", "xilinx_kc705.xdc")).read()


def test_kc705_dram_needs_pcie():
    from hostlink.targets import kc705
    with pytest.raises(ValueError, match="--with-dram needs --with-pcie: the DRAM is a source and sink "
                                         "of the PCIe DMA"):
        kc705.BaseSoC(with_dram=True)


@pytest.mark.slow
def test_kc705_cli_with_dram(tmp_path):
    result = run_target("kc705", "--with-pcie", "--no-ethernet", "--with-dram", "--driver",
        "--output-dir", str(tmp_path))
    assert result.returncode == 0, result.stderr[-2000:]
    assert "ddram_dqs_p" in (tmp_path / "gateware" / "xilinx_kc705.xdc").read_text()
    assert "CSR_PCIE_DMA0_DRAM_CONTROL_ADDR" in (tmp_path / "driver" / "kernel" / "csr.h").read_text()

# Simulation ---------------------------------------------------------------------------------------

# (DRAM address, bytes): one native word, odd numbers of them, across a bank and a row, the last
# bytes of the simulated DRAM; sizes are whole 128-bit DMA words and whole native words.
WINDOWS = [
    (0,                      NATIVE),
    (3 * NATIVE,             5 * NATIVE),
    (BANK_ROW - 3 * NATIVE,  7 * NATIVE),
    (ROW - 5 * NATIVE,       BANK_ROW + 9 * NATIVE),
    (5 * ROW + 4096,         65536 + 4096 + 3 * NATIVE),
    (SIM_SIZE - 4096,        4096),
]


def _sim_jobs(refusal_channel):
    jobs = [{"target": "dram", "kind": "dram", "size": size, "dram_address": address, "channels": [0],
             "descriptor_size": 65536} for address, size in WINDOWS]
    jobs += [
        {"target": "dram", "kind": "refusal", "channels": [refusal_channel]},
        {"target": "dram", "kind": "memtest", "dram_address": ROW, "size": 16 * 1024},
        # The pattern rows still work with the DRAM in the SoC.
        {"kind": "h2c", "size": 4096, "channels": [0], "descriptor_size": 65536},
        {"kind": "c2h", "size": 4096, "channels": [0], "descriptor_size": 65536},
    ]
    return jobs


@pytest.fixture(scope="module")
def sim_results():
    from hostlink.sim.pcie.models.host import host_profile
    from hostlink.sim.pcie.run import run_jobs
    profile = host_profile("default", link_speed=2, link_width=4)
    return run_jobs("zc706", _sim_jobs(refusal_channel=0), profile, with_dram=True)["results"]


def check_dram_round_trip(results, address, size):
    """The DRAM window at `address` of `size` bytes written (h2c), then read back (c2h): every byte right,
    in time, each MSI asked for."""
    rows = [r for r in results if r.get("target") == "dram" and r.get("dram_address") == address
            and r.get("size") == size and "direction" in r]
    assert [r["direction"] for r in rows] == ["h2c", "c2h"]
    for r in rows:
        assert r["errors"] == 0, r
        assert not r["timed_out"], r
        assert r["msis"] == r["msis_expected"], r


@pytest.mark.sim
@pytest.mark.parametrize("address,size", WINDOWS)
def test_sim_dram_round_trip(sim_results, address, size):
    check_dram_round_trip(sim_results, address, size)


@pytest.mark.sim
def test_sim_dram_refusals(sim_results):
    [row] = [r for r in sim_results if r.get("kind") == "refusal"]
    assert row["refused"] == row["requests"] == 10
    assert row["errors"] == 0


@pytest.mark.sim
def test_sim_memtest_finds_stuck_bit(sim_results):
    [row] = [r for r in sim_results if r.get("kind") == "memtest"]
    assert row["checker_errors"] == 0
    assert row["checker_errors_stuck_bit"] > 0
    assert row["errors"] == 0


@pytest.mark.sim
def test_sim_patterns_with_dram(sim_results):
    rows = [r for r in sim_results if r.get("target") is None]
    assert [r["direction"] for r in rows] == ["h2c", "c2h"]
    assert all(r["errors"] == 0 for r in rows)


def test_cli_with_dram_rejects_bad_address():
    from hostlink.sim.dma import build_parser
    with pytest.raises(SystemExit):
        build_parser().parse_args(["--with-dram", "--dram-address", "x"])

# KC705 simulation ---------------------------------------------------------------------------------

# The same jobs on the KC705's own SoC (Gen2 x8, 250 MHz DMA side); refusals on the second channel.

@pytest.fixture(scope="module")
def kc705_sim_run():
    from hostlink.sim.pcie.models.host import host_profile
    from hostlink.sim.pcie.run import run_jobs
    profile = host_profile("default", link_speed=2, link_width=8)
    return run_jobs("kc705", _sim_jobs(refusal_channel=1), profile, with_dram=True)


@pytest.mark.sim
@pytest.mark.parametrize("address,size", WINDOWS)
def test_sim_kc705_dram_round_trip(kc705_sim_run, address, size):
    assert kc705_sim_run["sys_clk_hz"] == 250_000_000
    check_dram_round_trip(kc705_sim_run["results"], address, size)


@pytest.mark.sim
def test_sim_kc705_refusals_memtest_and_patterns(kc705_sim_run):
    results = kc705_sim_run["results"]
    [refusal] = [r for r in results if r.get("kind") == "refusal"]
    assert refusal["refused"] == refusal["requests"] == 10
    assert refusal["errors"] == 0
    [memtest] = [r for r in results if r.get("kind") == "memtest"]
    assert memtest["checker_errors"] == 0
    assert memtest["checker_errors_stuck_bit"] > 0
    patterns = [r for r in results if r.get("target") is None]
    assert [r["direction"] for r in patterns] == ["h2c", "c2h"]
    assert all(r["errors"] == 0 for r in patterns)
