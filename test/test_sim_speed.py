# This file is part of hostlink.
# Copyright (c) 2026 hostlink developers
# SPDX-License-Identifier: BSD-2-Clause

"""Simulation speed (issue 34): what decides a model rebuild, the `--reference` switch, the speed report and
the bench of the link and root complex alone. That the default and reference models give the same runs is
test_pcie_host_profiles.py::test_the_reference_model_gives_the_same_run."""

import pytest

from hostlink.sim.verilator import verilog_design_text
from reports import sim_speed

VERILOG = """// Date       : 2026-11-29 07:11:40
// LiteX sha1 : c43ac5f
`timescale 1ns / 1ps
/*
sim_top
 |--- [IBUFDS_GTE2]
 |--- pcie_phy
*/
module sim_top (input wire clk);
endmodule
"""


def test_a_new_elaboration_of_the_same_design_is_not_compiled_again():
    """LiteX's date, git hash and module tree (whose branches come in a different order each time) are
    comments: not a change of the design."""
    again = VERILOG.replace("07:11:40", "08:00:00").replace("c43ac5f", "1234567").replace(
        " |--- [IBUFDS_GTE2]\n |--- pcie_phy\n", " |--- pcie_phy\n |--- [IBUFDS_GTE2]\n")
    assert verilog_design_text(again) == verilog_design_text(VERILOG)
    assert "module sim_top" in verilog_design_text(VERILOG)
    changed = VERILOG.replace("input wire clk", "input wire clk, input wire rst")
    assert verilog_design_text(changed) != verilog_design_text(VERILOG)


def test_sim_dma_takes_reference():
    from hostlink.sim.dma import build_parser
    assert build_parser().parse_args(["--reference"]).reference is True
    assert build_parser().parse_args([]).reference is False


def _run(cycles, wall_s):
    rows = [{"direction": d, "cycles": c, "errors": 0, "msis": 16} for d, c in zip(("c2h", "h2c", "bidir"), cycles)]
    return {"wall_s": wall_s, "cycles": sum(cycles), "rows": rows}


def test_speed_report_gives_the_ratio_and_says_whether_the_runs_agree():
    fast, reference = _run([100, 200, 300], 1.0), _run([100, 200, 300], 3.0)
    report = {"size": 4 << 20, "runs": [{"board": "vc709", "profile": "default", "fast": fast,
        "reference": reference, "same": True, "ratio": 3.0, "path": "default"}],
        "fabric": {"vc709": {"wall_us_per_tlp": 400.0, "cycles_per_c2h_tlp": 9.0, "bound_cycles_per_s": 22500.0}}}
    text = sim_speed.format_report(report)
    assert "| vc709 | default | default | 600 | 0.6 | 0.2 | 3.00 | yes |" in text
    assert "| vc709 | 400 us | 9.0 | 22.5 k cycles/s |" in text
    assert "of 4 MiB each" in text


@pytest.mark.sim
def test_the_link_and_root_complex_alone_move_every_tlp_at_the_links_rate():
    """The bench behind the bound: every write lands, and no faster than the VC709's Gen3 x8 link carries
    256-byte TLPs (7.877 GB/s of symbols; less after framing and DLLPs)."""
    from hostlink.sim.pcie.fabric_cost import measure
    result = measure("vc709", count=256)
    assert result["tlps"] == 256 and result["bytes"] == 256 * 256
    assert 6.0 < result["gbytes_per_s"] < 7.877
    assert result["wall_us_per_tlp"] > 0
