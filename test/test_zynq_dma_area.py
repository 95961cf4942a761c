# This file is part of hostlink.
# Copyright (c) 2026 hostlink developers
# SPDX-License-Identifier: BSD-2-Clause

"""The AXI DMA's area report (reports/zynq_dma_area.py): Yosys maps the core to 7-series cells."""

import pytest

from reports.zynq_dma_area import area


@pytest.mark.slow
def test_the_dma_synthesizes_to_a_small_core(tmp_path):
    figures = area(str(tmp_path))
    assert 200 < figures["lut"] < 5000 and 200 < figures["ff"] < 5000, figures
    assert figures["lut_memory"] > 0 and figures["bram36"] == 0    # Its FIFOs fit in LUT memory.
