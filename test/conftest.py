# This file is part of hostlink.
# Copyright (c) 2026 hostlink developers
# SPDX-License-Identifier: BSD-2-Clause

"""The test tiers' markers are declared in pytest.ini. Here:

- how `make test` spreads the tests over its pytest-xdist workers: each test file runs in one worker, so
  that its module-scoped builds happen once, and the files with User-Mode Linux runs (marker `uml`) run
  together in one worker, first, since they share `build/uml/runs/` and take longest; then the tests of
  SPLIT_FILES, each on its own (a file of long runs with no module-scoped fixture, which in one worker
  was a chain of half an hour under load), then the other files, those with the most tests first;
- the kernel module builds' warnings, counted per board and kernel and shown at the end of the run
  (test_driver.py records them as the test's property `kernel_module_warnings`);
- `--busy N`: N processes that keep a core each busy for the whole run (`make test-loaded`), since CI's
  machine may be busy and a test that passes only on an idle machine costs a landing.
"""

import subprocess
import sys

import pytest

# The files holding the tests marked `uml`: they run in one worker, one after the other.
UML_TEST_FILES = ("test/test_driver_sim.py", "test/test_hostlink_bench.py", "test/test_host_api.py",
                  "test/test_several_socs.py", "test/test_zynq_linux.py")

# Files whose tests are long and share nothing in the process (their builds are cached on disk, behind
# sim/build_lock.py): each test is a unit of work of its own, so that both workers take them. test_fast_path.py's
# agreement matrix (the reference path's runs) took 1,680 s under load in one worker, the suite's longest chain.
SPLIT_FILES = ("test/test_fast_path.py",)

KERNEL_MODULE_WARNINGS = {}

# Each burner spins until its parent (this pytest) is gone, so a killed run leaves none behind.
BURNER = "import os\nparent = os.getppid()\nwhile os.getppid() == parent:\n    sum(range(100000))\n"
BURNERS = []


def pytest_addoption(parser):
    parser.addoption("--busy", type=int, default=0, metavar="N",
                     help="keep N CPU-bound processes running beside the tests for the whole run (make "
                          "test-loaded), to find tests that pass only on an idle machine")


def pytest_configure(config):
    busy = config.getoption("busy")
    if busy < 0:
        raise pytest.UsageError(f"--busy must be a number of processes (0 or more), not {busy}")
    # Started once, by the controller (not again by each xdist worker).
    if busy and not hasattr(config, "workerinput"):
        BURNERS.extend(subprocess.Popen([sys.executable, "-c", BURNER]) for _ in range(busy))


def pytest_unconfigure(config):
    while BURNERS:
        burner = BURNERS.pop()
        burner.kill()
        burner.wait()


def file_of(nodeid):
    return nodeid.split("::")[0]


def pytest_collection_modifyitems(config, items):
    for item in items:
        if item.get_closest_marker("uml") and file_of(item.nodeid) not in UML_TEST_FILES:
            raise pytest.UsageError(f"{item.nodeid} is marked uml: add its file to UML_TEST_FILES in "
                                    "test/conftest.py")
    if hasattr(config, "workerinput"):
        # Under xdist (every worker collects, and sorts, the same way; the scheduler keeps this order:
        # pytest_xdist_make_scheduler): the User-Mode Linux group, SPLIT_FILES' tests, then the other files,
        # those with the most tests first, as pytest-xdist would order them.
        tests = {}
        for item in items:
            tests[file_of(item.nodeid)] = tests.get(file_of(item.nodeid), 0) + 1

        def rank(item):
            name = file_of(item.nodeid)
            return (0, 0) if name in UML_TEST_FILES else (1, 0) if name in SPLIT_FILES else (2, -tests[name])

        items.sort(key=rank)


def work_unit(nodeid):
    """What one worker runs: the User-Mode Linux group, a test of SPLIT_FILES, or a test file."""
    if file_of(nodeid) in UML_TEST_FILES:
        return "uml"
    return nodeid if file_of(nodeid) in SPLIT_FILES else file_of(nodeid)


def pytest_xdist_make_scheduler(config, log):
    from xdist.scheduler import LoadFileScheduling

    class UMLTogetherScheduling(LoadFileScheduling):
        def _split_scope(self, nodeid):
            return work_unit(nodeid)

    # The units in the workers' collection order (above), not re-sorted by their number of tests.
    config.option.loadscopereorder = False
    return UMLTogetherScheduling(config, log)


def pytest_runtest_logreport(report):
    # Called in the process that reports: the only one under plain pytest, the controller under xdist.
    for name, value in report.user_properties:
        if name == "kernel_module_warnings":
            build, lines = value
            KERNEL_MODULE_WARNINGS[build] = list(lines)


def pytest_report_header(config):
    if config.getoption("busy"):
        return f"busy: {config.getoption('busy')} CPU-bound processes run beside the tests"


def pytest_terminal_summary(terminalreporter):
    if not KERNEL_MODULE_WARNINGS:
        return
    terminalreporter.section("kernel module build warnings")
    for build, lines in sorted(KERNEL_MODULE_WARNINGS.items()):
        terminalreporter.write_line(f"{build}: {len(lines)} warning(s)")
        for line in lines:
            terminalreporter.write_line(f"    {line}")
