# This file is part of hostlink.
# Copyright (c) 2026 hostlink developers
# SPDX-License-Identifier: BSD-2-Clause

"""`reports/xilinx_area.py`: Yosys `stat` parsing, the boards it knows, and its command line.
(The synthesis itself takes minutes per SoC: it is a report, run by hand; its figures are in
doc/vc709.md and doc/dram.md.)"""

import pytest

from reports import xilinx_area
from hostlink.targets import boards as registry

from helpers import refusal

STAT = """
=== design hierarchy ===

   Number of cells:              12
     FDRE                       100
     FDSE                         3
     LUT2                        10
     LUT6                        20
     RAM32M                       5
     SRLC32E                      2
     RAMB36E1                     4
     RAMB18E1                     3
     CARRY4                       7
"""


def test_stat_counts_luts_lutram_ffs_and_block_ram():
    area = xilinx_area.parse_stat(STAT)
    assert area["lut_logic"] == 30
    assert area["lut_memory"] == 5*4 + 2
    assert area["lut"] == 30 + 22
    assert area["ff"] == 103
    assert area["bram36"] == 4 + 1.5
    assert area["carry4"] == 7


def test_every_board_has_its_device_and_hard_block():
    assert set(xilinx_area.BOARDS) == set(registry.PCIE_BOARDS) == {"vc709", "zc706", "kc705"}
    assert xilinx_area.BOARDS["vc709"][0] == "XC7VX690T" and xilinx_area.BOARDS["vc709"][3] == "pcie3_7x_0"
    for board in ("zc706", "kc705"):
        assert xilinx_area.BOARDS[board][3] == "pcie_s7"
    for _, resources, _, _ in xilinx_area.BOARDS.values():
        assert set(resources) == {"lut", "ff", "bram36"}


@pytest.mark.parametrize("argv, message", [
    (["--board", "arty"],       "invalid choice: 'arty'"),
    (["--dma-channels", "9"],   "9"),
])
def test_bad_arguments_are_refused(argv, message, capsys):
    assert message in refusal(xilinx_area.main, argv, capsys)
