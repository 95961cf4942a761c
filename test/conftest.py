# This file is part of hostlink.
# Copyright (c) 2026 hostlink developers
# SPDX-License-Identifier: BSD-2-Clause

"""The test tiers' markers are declared in pytest.ini. Here:

- how `make test` spreads the tests over its pytest-xdist workers: each test file runs in one worker, so
  that its module-scoped builds happen once, and the files with User-Mode Linux runs (marker `uml`) run
  together in one worker, first, since they share `build/uml/runs/` and take longest;
- the kernel module builds' warnings, counted per board and kernel and shown at the end of the run
  (test_driver.py records them as the test's property `kernel_module_warnings`).
"""

import pytest

# The files holding the tests marked `uml`: they run in one worker, one after the other.
UML_TEST_FILES = ("test/test_driver_sim.py", "test/test_hostlink_bench.py", "test/test_host_api.py",
                  "test/test_zynq_linux.py")

KERNEL_MODULE_WARNINGS = {}


def file_of(nodeid):
    return nodeid.split("::")[0]


def pytest_collection_modifyitems(config, items):
    for item in items:
        if item.get_closest_marker("uml") and file_of(item.nodeid) not in UML_TEST_FILES:
            raise pytest.UsageError(f"{item.nodeid} is marked uml: add its file to UML_TEST_FILES in "
                                    "test/conftest.py")
    if hasattr(config, "workerinput"):
        # Under xdist, the longest group first (every worker collects, and sorts, the same way).
        items.sort(key=lambda item: file_of(item.nodeid) not in UML_TEST_FILES)


def pytest_xdist_make_scheduler(config, log):
    from xdist.scheduler import LoadFileScheduling

    class UMLTogetherScheduling(LoadFileScheduling):
        def _split_scope(self, nodeid):
            return "uml" if file_of(nodeid) in UML_TEST_FILES else file_of(nodeid)

    return UMLTogetherScheduling(config, log)


def pytest_runtest_logreport(report):
    # Called in the process that reports: the only one under plain pytest, the controller under xdist.
    for name, value in report.user_properties:
        if name == "kernel_module_warnings":
            build, lines = value
            KERNEL_MODULE_WARNINGS[build] = list(lines)


def pytest_terminal_summary(terminalreporter):
    if not KERNEL_MODULE_WARNINGS:
        return
    terminalreporter.section("kernel module build warnings")
    for build, lines in sorted(KERNEL_MODULE_WARNINGS.items()):
        terminalreporter.write_line(f"{build}: {len(lines)} warning(s)")
        for line in lines:
            terminalreporter.write_line(f"    {line}")
