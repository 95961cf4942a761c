# This file is part of hostlink.
# Copyright (c) 2026 hostlink developers
# SPDX-License-Identifier: BSD-2-Clause

"""The scheduling primitives of the PCIe bench and its jobs, from the path that runs them.

The reference path runs the bench inside the simulator under cocotb; the fast path (sim/pcie/fast/) runs
it in a plain Python process on its own scheduler, whose `Timer`, `Event`, `First`, `RisingEdge`,
`start_soon` and `get_sim_time` behave as cocotb's do for what the bench asks of them. fast/run.py sets
HOSTLINK_SIM_PATH=fast before the bench is imported.
"""

import os

FAST = os.environ.get("HOSTLINK_SIM_PATH") == "fast"

if FAST:
    from hostlink.sim.pcie.fast.kernel import Timer, Event, First, RisingEdge, get_sim_time, start_soon
else:
    import cocotb
    from cocotb.triggers import Timer, Event, First, RisingEdge
    from cocotb.utils import get_sim_time
    start_soon = cocotb.start_soon

__all__ = ["FAST", "Timer", "Event", "First", "RisingEdge", "get_sim_time", "start_soon"]
