# This file is part of hostlink.
# Copyright (c) 2026 hostlink developers
# SPDX-License-Identifier: BSD-2-Clause

"""The Verilog example (examples/axis_increment.v) with a Python model, so that the simulation checks it.

`--user-core examples/axis_increment.v:axis_increment` takes the Verilog module as it is (on a board, or
streaming in simulation); a model needs a few lines of Python around it, here:

    ./sim.py dma --board zc706 --user-core examples.verilog_increment:Increment --sizes 64K
"""

import os

import numpy as np

from hostlink.cores.pcie.verilog_core import verilog_core_class

VERILOG = os.path.join(os.path.dirname(os.path.abspath(__file__)), "axis_increment.v")


class Increment(verilog_core_class(VERILOG, "axis_increment")):
    SIM_SETTINGS = {}

    @staticmethod
    def model(data, settings):
        """Each 32-bit little-endian word plus 1, mod 2**32."""
        words = np.frombuffer(bytes(data), dtype="<u4")
        return (words + np.uint32(1)).astype("<u4").tobytes()
