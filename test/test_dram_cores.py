# This file is part of hostlink.
# Copyright (c) 2026 hostlink developers
# SPDX-License-Identifier: BSD-2-Clause

"""DRAM DMA cores (cores/dram/) against LiteDRAM's controller and SDRAMPHYModel.

The cocotb tests live in test/benches/dram_unit_bench.py and run in one Verilator model (dram_unit.py):
the channel, the clock crossings, the controller and the model, 150 MHz / 128-bit DMA side, 200 MHz
DRAM.
"""

import os
import xml.etree.ElementTree as ElementTree

import pytest

from litedram.common import LiteDRAMNativePort

from hostlink.cores.dram.writer import DRAMStreamWriter
from hostlink.cores.dram.reader import DRAMStreamReader
from hostlink.sim.pcie.dram import shrunk_module

ROOT  = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BUILD = os.path.join(os.environ.get("HOSTLINK_BUILD_DIR", os.path.join(ROOT, "build")), "dram_unit")

# Verilator runs -----------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def unit_results(tmp_path_factory):
    from cocotb_tools.runner import get_runner
    from benches.dram_unit import build_unit_model
    from hostlink.toolchain import verilator_env
    os.environ.update(verilator_env())
    model_dir, _ = build_unit_model(BUILD)
    test_dir = tmp_path_factory.mktemp("dram_unit")
    results_xml = str(test_dir / "results.xml")
    get_runner("verilator").test(
        test_module       = "benches.dram_unit_bench",
        hdl_toplevel      = "dram_unit",
        hdl_toplevel_lang = "verilog",
        build_dir         = model_dir,
        test_dir          = str(test_dir),
        extra_env         = {"COCOTB_LOG_LEVEL": "WARNING"},
        log_file          = str(test_dir / "sim.log"),
        results_xml       = results_xml,
    )
    results = {}
    for case in ElementTree.parse(results_xml).iter("testcase"):
        failure = case.find("failure")
        results[case.get("name")] = None if failure is None else (failure.get("message") or "failed")
    log = (test_dir / "sim.log").read_text()
    return results, log


@pytest.mark.parametrize("name", ["round_trip", "whole_dram", "refusals", "exact_lengths", "aborts",
                                  "no_bubbles", "pattern_mode", "stuck_bit"])
def test_unit(unit_results, name):
    results, log = unit_results
    assert name in results, f"cocotb test {name} did not run:\n{log[-3000:]}"
    assert results[name] is None, f"{name}: {results[name]}\n{log[-3000:]}"

# Parameters ---------------------------------------------------------------------------------------

def _port(data_width=512):
    return LiteDRAMNativePort("both", address_width=24, data_width=data_width)


@pytest.mark.parametrize("cls", [DRAMStreamWriter, DRAMStreamReader])
def test_bad_parameters(cls):
    with pytest.raises(ValueError, match="DMA data width must be 64, 128, 256 or 512 bits, not 96"):
        cls(_port(), 96, 2**20)
    with pytest.raises(ValueError, match=r"native width \(128 bits\) must be a multiple of the DMA data width, not 256"):
        cls(_port(128), 256, 2**20)
    with pytest.raises(ValueError, match="DRAM size must be a positive power of two in bytes, not 3000"):
        cls(_port(), 128, 3000)
    with pytest.raises(ValueError, match="at most 4 GiB"):
        cls(_port(), 128, 2**33)


def test_bad_reads_in_flight():
    with pytest.raises(ValueError, match="reads in flight must be an integer >= 2, not 1"):
        DRAMStreamReader(_port(), 128, 2**20, outstanding=1)


def test_bad_simulated_geometry():
    from litedram.modules import MT8JTF12864
    with pytest.raises(ValueError, match="power of two >= 2, not 3"):
        shrunk_module(MT8JTF12864, 3)
