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
import subprocess
import sys

import pytest

from litex.soc.integration.builder import Builder

from hostlink.sim.pcie.dram import SIM_DRAM_ROWS

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
    assert csr["constants"]["dram_size"] == 1 << 30    # MT8JTF12864: 1 GiB.
    assert csr["constants"]["dram_native_bytes"] == 64


def test_zc706_dram_gateware(zc706_dram_build):
    soc, _, output_dir = zc706_dram_build
    verilog = open(os.path.join(str(output_dir), "gateware", "zc706.v")).read()
    assert verilog.count("OSERDESE2") > 64             # K7DDRPHY: DQ, DQS, address, control.
    assert "IDELAYCTRL" in verilog
    assert soc.crg.dram.pll.clkouts[0][1] == 200e6     # DDR3-1600 at 1:4.


def test_zc706_without_dram_has_no_dram(tmp_path):
    _, csr = _elaborate(tmp_path)
    assert not any("dram" in name for name in csr["csr_registers"])


def test_zc706_cli_with_dram(tmp_path):
    result = subprocess.run([sys.executable, os.path.join(REPO, "targets", "zc706.py"), "--with-dram",
        "--output-dir", str(tmp_path)], capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr[-2000:]
    assert os.path.exists(os.path.join(str(tmp_path), "gateware", "zc706.v"))

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


def test_kc705_refuses_with_dram(tmp_path):
    result = subprocess.run([sys.executable, os.path.join(REPO, "targets", "kc705.py"), "--with-pcie",
        "--with-dram", "--output-dir", str(tmp_path)], capture_output=True, text=True, timeout=600)
    assert result.returncode == 2
    assert "--with-dram is not available on the KC705 yet" in result.stderr.strip().splitlines()[-1]


def test_sim_kc705_refuses_with_dram():
    from hostlink.sim.pcie.soc import get_board
    with pytest.raises(ValueError, match="not available on the kc705"):
        get_board("kc705").soc_factory(2, with_dram=True)

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


@pytest.fixture(scope="module")
def sim_results():
    from hostlink.sim.pcie.host import host_profile
    from hostlink.sim.pcie.run import run_jobs
    jobs = [{"target": "dram", "kind": "dram", "size": size, "dram_address": address, "channels": [0],
             "descriptor_size": 65536} for address, size in WINDOWS]
    jobs += [
        {"target": "dram", "kind": "refusal", "channels": [0]},
        {"target": "dram", "kind": "memtest", "dram_address": ROW, "size": 16 * 1024},
        # The pattern rows still work with the DRAM in the SoC.
        {"kind": "h2c", "size": 4096, "channels": [0], "descriptor_size": 65536},
        {"kind": "c2h", "size": 4096, "channels": [0], "descriptor_size": 65536},
    ]
    profile = host_profile("default", link_speed=2, link_width=4)
    return run_jobs("zc706", jobs, profile, with_dram=True)["results"]


def _dram_rows(results, address, size):
    return [r for r in results if r.get("target") == "dram" and r.get("dram_address") == address
            and r.get("size") == size and "direction" in r]


@pytest.mark.parametrize("address,size", WINDOWS)
def test_sim_dram_round_trip(sim_results, address, size):
    rows = _dram_rows(sim_results, address, size)
    assert [r["direction"] for r in rows] == ["h2c", "c2h"]
    for r in rows:
        assert r["errors"] == 0, r
        assert not r["timed_out"], r
        assert r["msis"] == r["msis_expected"], r


def test_sim_dram_refusals(sim_results):
    [row] = [r for r in sim_results if r.get("kind") == "refusal"]
    assert row["refused"] == row["requests"] == 10
    assert row["errors"] == 0


def test_sim_memtest_finds_stuck_bit(sim_results):
    [row] = [r for r in sim_results if r.get("kind") == "memtest"]
    assert row["checker_errors"] == 0
    assert row["checker_errors_stuck_bit"] > 0
    assert row["errors"] == 0


def test_sim_patterns_with_dram(sim_results):
    rows = [r for r in sim_results if r.get("target") is None]
    assert [r["direction"] for r in rows] == ["h2c", "c2h"]
    assert all(r["errors"] == 0 for r in rows)


def test_cli_with_dram_rejects_bad_address():
    from hostlink.sim.dma import build_parser
    with pytest.raises(SystemExit):
        build_parser().parse_args(["--with-dram", "--dram-address", "x"])
