# This file is part of hostlink.
# Copyright (c) 2026 hostlink developers
# SPDX-License-Identifier: BSD-2-Clause

"""The test tiers' markers are declared in pytest.ini. Here: the kernel module builds' warnings, counted
per board and kernel and shown at the end of the run (test_driver.py records them)."""


def pytest_terminal_summary(terminalreporter):
    from helpers import DRIVER_WARNINGS
    if not DRIVER_WARNINGS:
        return
    terminalreporter.section("kernel module build warnings")
    for build, lines in sorted(DRIVER_WARNINGS.items()):
        terminalreporter.write_line(f"{build}: {len(lines)} warning(s)")
        for line in lines:
            terminalreporter.write_line(f"    {line}")
