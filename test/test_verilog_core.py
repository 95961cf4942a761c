# This file is part of hostlink.
# Copyright (c) 2026 hostlink developers
# SPDX-License-Identifier: BSD-2-Clause

"""A Verilog module as a user core (cores/pcie/verilog_core.py, `--user-core FILE.v:MODULE`): reading its
ports and parameters, every module that breaks the AXI4-Stream contract refused with one line (exit 2 from
a target and from ./sim.py), a target that generates it with its own clock, and in simulation the example
(examples/axis_increment.v) on every PCIe board, every result checked against its Python model."""

import json
import os

import pytest

from hostlink import REPO
from hostlink.cores.pcie.user_core import load_user_core, build_user_core
from hostlink.cores.pcie.verilog_core import read_verilog_module
from hostlink.sim.dma import main as dma_main
from hostlink.targets import boards as registry

from helpers import run_target

EXAMPLE = os.path.join(REPO, "examples", "axis_increment.v")

PORTS = """\
    input  wire                  aclk,
    input  wire                  aresetn,
    input  wire [DATA_WIDTH-1:0] s_axis_h2c_tdata,
    input  wire                  s_axis_h2c_tvalid, s_axis_h2c_tlast,
    output wire                  s_axis_h2c_tready,
    output wire [DATA_WIDTH-1:0] m_axis_c2h_tdata,
    output wire                  m_axis_c2h_tvalid,
    input  wire                  m_axis_c2h_tready,
    output wire                  m_axis_c2h_tlast"""


def _module(tmp_path, ports=PORTS, parameters="parameter DATA_WIDTH = 64", name="mine"):
    path = tmp_path / "mine.v"
    path.write_text(f"// A test core.\nmodule {name} #({parameters}) (\n{ports}\n);\n/* body */\nendmodule\n")
    return f"{path}:mine"


def test_the_example_is_read_as_written():
    ports, parameters = read_verilog_module(EXAMPLE, "axis_increment")
    assert parameters == {"DATA_WIDTH": 128, "CLK_FREQ_HZ": 200_000_000, "INCREMENT": 1}
    assert ports["s_axis_h2c_tdata"] == ("input", 128) and ports["m_axis_c2h_tlast"] == ("output", 1)
    core = build_user_core(load_user_core(f"{EXAMPLE}:axis_increment"), 256, 250e6)
    assert (core.data_width, core.clock_domain, core.clk_freq) == (256, "user", 200e6)   # DATA_WIDTH set.


def test_without_data_width_or_clock_the_ports_width_and_the_socs_clock(tmp_path):
    ports = PORTS.replace("[DATA_WIDTH-1:0]", "[63:0]")
    core = build_user_core(load_user_core(_module(tmp_path, ports, parameters="parameter X = 2*3")), 128, 150e6)
    assert (core.data_width, core.clock_domain, core.clk_freq) == (64, "sys", 150e6)


@pytest.mark.parametrize("ports, parameters, message", [
    (PORTS.replace("    input  wire                  aresetn,\n", ""), None, r"has no port aresetn"),
    (PORTS.replace("output wire                  s_axis_h2c_tready", "input wire s_axis_h2c_tready"), None,
     r"port s_axis_h2c_tready must be an output"),
    (PORTS.replace("output wire [DATA_WIDTH-1:0] m_axis_c2h_tdata", "output wire [31:0] m_axis_c2h_tdata"), None,
     r"s_axis_h2c_tdata \(64 bits\) and m_axis_c2h_tdata \(32 bits\) must be as wide"),
    (PORTS.replace("input  wire                  m_axis_c2h_tready", "input wire [1:0] m_axis_c2h_tready"), None,
     r"port m_axis_c2h_tready must be 1 bit wide, not 2"),
    (PORTS.replace("[DATA_WIDTH-1:0] s_axis_h2c_tdata", "[$clog2(W):0] s_axis_h2c_tdata"), None,
     r"cannot read the width of s_axis_h2c_tdata"),
    (PORTS, "parameter DATA_WIDTH = 64, parameter CLK_FREQ_HZ = -5", r"CLK_FREQ_HZ must be a frequency"),
])
def test_a_module_that_breaks_the_contract_is_refused(tmp_path, ports, parameters, message):
    spec = _module(tmp_path, ports, **({"parameters": parameters} if parameters else {}))
    with pytest.raises(ValueError, match=message):
        load_user_core(spec)


def test_a_file_without_the_module_is_refused(tmp_path):
    spec = _module(tmp_path, name="other")
    with pytest.raises(ValueError, match=r"mine\.v has no module mine"):
        load_user_core(spec)
    with pytest.raises(ValueError, match=r"/nonexistent/core\.v does not exist"):
        load_user_core("/nonexistent/core.v:core")


def test_a_target_refuses_a_bad_verilog_core_with_one_line(tmp_path):
    spec = _module(tmp_path, PORTS.replace("    input  wire                  aclk,\n", ""))
    result = run_target("zc706", "--user-core", spec, "--output-dir", str(tmp_path / "out"))
    assert result.returncode == 2
    assert "has no port aclk" in result.stderr.strip().splitlines()[-1]


def test_sim_dma_refuses_a_bad_verilog_core_with_one_line(tmp_path, capsys):
    spec = _module(tmp_path, PORTS.replace("m_axis_c2h_tlast", "m_axis_c2h_tend"))
    with pytest.raises(SystemExit) as exit:
        dma_main(["--board", "zc706", "--sizes", "4K", "--user-core", spec])
    assert exit.value.code == 2
    assert "has no port m_axis_c2h_tlast" in capsys.readouterr().err.strip().splitlines()[-1]


def test_a_target_generates_the_verilog_core_in_its_own_clock(tmp_path):
    result = run_target("zc706", "--user-core", f"{EXAMPLE}:axis_increment", "--output-dir", str(tmp_path),
                        "--csr-json", str(tmp_path / "csr.json"))
    assert result.returncode == 0, result.stderr[-2000:]
    tcl = (tmp_path / "gateware" / "zc706.tcl").read_text()
    assert f"read_verilog {{{EXAMPLE}}}" in tcl
    verilog = (tmp_path / "gateware" / "zc706.v").read_text()
    assert "axis_increment #(" in verilog and ".DATA_WIDTH (8'd128)" in verilog
    assert "user_clk" in verilog
    assert "pcie_dma0_user_select" in json.loads((tmp_path / "csr.json").read_text())["csr_registers"]


@pytest.mark.sim
@pytest.mark.parametrize("board", registry.PCIE_BOARDS)
def test_the_verilog_example_on_every_board(board, tmp_path):
    path = tmp_path / "verilog.json"
    code = dma_main(["--board", board, "--user-core", "examples.verilog_increment:Increment", "--sizes", "16K",
                     "--json", str(path)])
    rows = json.loads(path.read_text())["results"]
    assert code == 0
    assert [(r["direction"], r["errors"], r["timed_out"]) for r in rows] == [("user", 0, False)]
