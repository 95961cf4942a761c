# This file is part of hostlink.
# Copyright (c) 2026 hostlink developers
# SPDX-License-Identifier: BSD-2-Clause

"""Test tiers: `-m "not uml"` leaves out the runs of LitePCIe's driver in User-Mode Linux (minutes each)."""


def pytest_configure(config):
    config.addinivalue_line("markers",
        "uml: boots User-Mode Linux on a simulated SoC and runs LitePCIe's driver and tools (minutes; needs "
        "`make uml-kernel`)")
