# This file is part of hostlink.
# Copyright (c) 2026 hostlink developers
# SPDX-License-Identifier: BSD-2-Clause

"""The ZC706 as a Zynq SoC (`./targets/zc706.py --ps7`, hostlink.cores.zynq.integration): the PS7 configured
for HP0, FCLK0 and the interrupts, the AXI DMA mastering HP0 with its registers on GP0 where the device tree
says, the device-tree node Linux's xilinx_dma reads, and clear refusals."""

import json
import os
import re

import pytest

from helpers import read, run_target


@pytest.fixture(scope="module")
def zynq_build(tmp_path_factory):
    out = tmp_path_factory.mktemp("zc706_zynq")
    result = run_target("zc706", "--ps7", "--driver", "--output-dir", str(out))
    assert result.returncode == 0, result.stderr[-3000:]
    return out, result.stdout


def test_the_ps7_is_configured_for_the_dma(zynq_build):
    out, _ = zynq_build
    tcl = read(os.path.join(out, "gateware", "zc706.tcl"))
    assert "set_property -dict [list CONFIG.preset {ZC706}] [get_ips Zynq]" in tcl
    for setting in ["PCW_USE_S_AXI_HP0 {1}", "PCW_S_AXI_HP0_DATA_WIDTH {64}", "PCW_FPGA0_PERIPHERAL_FREQMHZ {150}",
                    "PCW_USE_M_AXI_GP0 {1}", "PCW_USE_FABRIC_INTERRUPT {1}", "PCW_IRQ_F2P_INTR {1}"]:
        assert f"CONFIG.{setting}" in tcl, setting
    assert tcl.index("create_ip -vendor xilinx.com -name processing_system7") < tcl.index("synth_ip [get_ips Zynq]")


def test_the_dma_masters_hp0_and_interrupts_the_ps(zynq_build):
    out, _ = zynq_build
    verilog = read(os.path.join(out, "gateware", "zc706.v"))
    instance = verilog[verilog.index("Zynq Zynq("):]
    instance = instance[:instance.index(");")]
    for port in ["S_AXI_HP0_ARADDR", "S_AXI_HP0_ARLEN", "S_AXI_HP0_RDATA", "S_AXI_HP0_AWADDR", "S_AXI_HP0_WDATA",
                 "S_AXI_HP0_WLAST", "S_AXI_HP0_BRESP", "S_AXI_HP0_ACLK", "IRQ_F2P", "M_AXI_GP0_ARADDR", "FCLK_CLK0"]:
        assert re.search(rf"\.{port}\s*\(\w", instance), port
    csr = json.loads(read(os.path.join(out, "csr.json")))
    assert csr["memories"]["axi_dma"] == {"base": 0x4040_0000, "size": 0x1_0000, "type": "io"}
    assert csr["constants"]["axi_dma_mm2s_interrupt"] == 0 and csr["constants"]["axi_dma_s2mm_interrupt"] == 1
    assert "cycles_value" in csr["csr_registers"] and "cycles_latch" in csr["csr_registers"]
    for name in ["streams_mode", "streams_generator_control", "streams_generator_length", "streams_checker_clear",
                 "streams_checker_words", "streams_checker_errors"]:
        assert name in csr["csr_registers"], name


def test_the_device_tree_node_is_what_xilinx_dma_reads(zynq_build):
    out, stdout = zynq_build
    path = os.path.join(out, "driver", "hostlink_axi_dma.dtsi")
    assert f"Device-tree node of the AXI DMA written to {path}" in stdout
    tree = read(path)
    assert 'compatible = "xlnx,axi-dma-1.00.a";' in tree and "reg = <0x40400000 0x10000>;" in tree
    assert "xlnx,include-sg" not in tree                                 # Direct register mode.
    assert "xlnx,sg-length-width = <26>;" in tree and "xlnx,addrwidth = <0x20>;" in tree
    # IRQ_F2P[0] and [1] are the GIC's SPIs 61 and 62: 29 and 30 in the tree's numbering.
    mm2s = tree[tree.index('"xlnx,axi-dma-mm2s-channel"'):]
    s2mm = tree[tree.index('"xlnx,axi-dma-s2mm-channel"'):]
    assert "interrupts = <0 29 4>;" in mm2s[:mm2s.index("};")] and "interrupts = <0 30 4>;" in s2mm[:s2mm.index("};")]
    assert "dma-channel-s2mm {" in tree and "xlnx,datawidth = <0x40>;" in s2mm
    assert 'clock-names = "s_axi_lite_aclk", "m_axi_mm2s_aclk", "m_axi_s2mm_aclk";' in tree
    assert tree.count("{") == tree.count("}") and tree.rstrip().endswith("};")


def test_the_sg_build_s_node_says_include_sg(tmp_path, zynq_build):
    """--axi-dma-sg: the DMA in PG021's scatter-gather mode; its node gains xlnx,include-sg and nothing else."""
    result = run_target("zc706", "--ps7", "--axi-dma-sg", "--driver", "--output-dir", str(tmp_path))
    assert result.returncode == 0, result.stderr[-3000:]
    tree = read(os.path.join(tmp_path, "driver", "hostlink_axi_dma.dtsi"))
    direct = read(os.path.join(zynq_build[0], "driver", "hostlink_axi_dma.dtsi"))
    assert tree.replace("\txlnx,include-sg;\n", "") == direct


def test_build_without_vivado_says_so_in_one_line(tmp_path):
    result = run_target("zc706", "--ps7", "--build", "--output-dir", str(tmp_path))
    assert result.returncode == 1
    assert result.stderr.strip().splitlines() == [
        f"error: --build needs 'vivado' on PATH (not found); the generated sources are in {tmp_path}/gateware"]


def test_a_clock_the_ps_cannot_give_is_refused(tmp_path):
    result = run_target("zc706", "--ps7", "--sys-clk-freq", "400e6", "--output-dir", str(tmp_path))
    assert result.returncode == 2
    assert "the logic's clock (the PS's FCLK0) must be 10 to 250 MHz, not 400000000.0" in result.stderr


def test_the_pcie_soc_offers_the_zynq_soc_in_its_help():
    result = run_target("zc706", "--help")
    assert result.returncode == 0 and "--ps7" in result.stdout and "xilinx_dma" in result.stdout
