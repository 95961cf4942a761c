# This file is part of hostlink.
# Copyright (c) 2026 hostlink developers
# SPDX-License-Identifier: BSD-2-Clause

"""reports/sim_profile.py: py-spy samples attributed to the coroutine that ran, by model."""

from reports.sim_profile import NO_PYTHON, profile

RESUME = "handle_gpi_callback (bind.cpp:177);EventLoop.run (cocotb/_event_loop.py:53);Task._resume (cocotb/task.py:349)"


def test_samples_go_to_the_coroutine_that_ran():
    lines = [
        f"{RESUME};UltraScalePcieDevice._run_cq_logic (us/us_model.py:995);Logic.__new__ (cocotb/types/_logic.py:1) 3\n",
        f"{RESUME};V7Gen3PcieDevice._run_7series_status (sim/pcie/models/v7gen3_device.py:507) 2\n",
        "0x7f26 (libc.so.6);handle_vpi_callback (VpiCbHdl.cpp:59) 4\n",
        "handle_gpi_callback (bind.cpp:177);GPITrigger._react (cocotb/_gpi_triggers.py:49) 1\n",
        "\n",
    ]
    counts, total = profile(lines)
    assert total == 10
    assert counts[NO_PYTHON] == 4
    assert counts["cocotbext-pcie's UltraScale device model, per-cycle logic (us/us_model.py)"] == 3
    assert counts["hostlink's Gen3 hard-block adapter (sim/pcie/models/v7gen3_device.py)"] == 2
    assert counts["cocotb's trigger dispatch, not attributable to one coroutine"] == 1
