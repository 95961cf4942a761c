# This file is part of hostlink.
# Copyright (c) 2026 hostlink developers
# SPDX-License-Identifier: BSD-2-Clause

"""The transmitter stays within its ECP5 budget (cell counts and nextpnr's Fmax are deterministic
for a given tool version and seed, unlike wall-clock figures)."""

import json

import pytest

from reports import ecp5_area

from helpers import yowasp_missing


@pytest.mark.slow
@pytest.mark.skipif(yowasp_missing() is not None, reason=yowasp_missing() or "")
def test_transmitter_within_budget_on_lfe5u_25f(tmp_path):
    json_path = tmp_path / "area.json"
    assert ecp5_area.main(["--no-soc", "--build-dir", str(tmp_path / "build"), "--json", str(json_path)]) == 0
    report = json.loads(json_path.read_text())
    tx = report["rows"][0]
    assert tx["design"] == "UDPTransmitter alone"
    assert tx["lut4"] == tx["lut4_cells"] + 2*tx["ccu2c"]
    assert tx["lut4"] <= 200
    assert tx["ff"] <= 120
    assert tx["ebr"] == 0
    assert tx["fmax_mhz"] >= 125
    assert all(report["met"].values())


def test_soc_clocks_are_named_by_role():
    """nextpnr names the PLL outputs after the CRG's signal; the report maps them to sys/eth/phy."""
    report = {"fmax": {
        "$glbnet$crg_clkout0":                  {"achieved": 99.5,  "constraint": 50.0},
        "$glbnet$crg_clkout1":                  {"achieved": 131.0, "constraint": 125.0},
        "$glbnet$eth_clocks0_rx$TRELLIS_IO_IN": {"achieved": 190.7, "constraint": 125.0},
    }}
    assert ecp5_area.clock_fmax(report) == {
        "sys": {"achieved": 99.5,  "constraint": 50.0},
        "eth": {"achieved": 131.0, "constraint": 125.0},
        "phy": {"achieved": 190.7, "constraint": 125.0},
    }
