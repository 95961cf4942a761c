# This file is part of hostlink.
# Copyright (c) 2026 hostlink developers
# SPDX-License-Identifier: BSD-2-Clause

"""`make bench` (reports/bench.py) covers the figures README.md publishes, writes every output
into its folder, and refuses a group it does not have. The benchmarks themselves are not run here."""

import os
import re
import subprocess
import sys

import pytest

from helpers import REPO
from reports import bench


def words(command):
    """A command's words without what only says where its output goes (sudo, --json/--plot PATH)."""
    argv = command.replace("sudo ", "").split()
    kept, skip = [], False
    for word in argv:
        if skip:
            skip = False
        elif word in ("--json", "--plot"):
            skip = True
        else:
            kept.append(word)
    return kept


def test_every_readme_headline_command_is_benchmarked():
    with open(os.path.join(REPO, "README.md")) as f:
        readme = f.read()
    figures = readme.split("## Figures", 1)[1].split("\n## ", 1)[0]
    commands = re.findall(r"^\|[^|]*\|[^|]*\| `([^`]+)` \|", figures, re.MULTILINE)
    assert len(commands) >= 5, figures
    benched = [words(command) for _, _, command, _, _ in bench.BENCHES]
    for command in commands:
        assert words(command) in benched, f"README's {command!r} is not in make bench"


def test_every_output_goes_into_the_folder():
    for group, name, command, minutes, where in bench.BENCHES:
        argv = command.format(out="/OUT", repo="/REPO").split()
        assert "--json" in argv and argv[argv.index("--json") + 1] == f"/OUT/{name}.json", command
        if "--plot" in argv:
            assert argv[argv.index("--plot") + 1] == f"/OUT/{name}.png", command
        assert minutes > 0 and where


def test_names_are_unique():
    names = [name for _, name, *_ in bench.BENCHES]
    assert len(names) == len(set(names))


def test_list_names_every_command_and_the_total():
    result = subprocess.run([sys.executable, "-m", "reports.bench", "--list", "--out", "/tmp/b"],
        cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.strip().splitlines()
    assert len(lines) == len(bench.BENCHES) + 1
    total = sum(b[3] for b in bench.BENCHES)
    assert lines[-1] == f"{len(bench.BENCHES)} commands, about {bench.format_minutes(total)} on this 2-core machine (estimated)"


def test_only_selects_groups_and_refuses_an_unknown_one():
    assert {b[0] for b in bench.selected("zc706,udp")} == {"zc706", "udp"}
    result = subprocess.run([sys.executable, "-m", "reports.bench", "--only", "nosuch", "--list"],
        cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=60)
    assert result.returncode == 2
    assert "unknown group 'nosuch'" in result.stderr


def test_commands_run_with_this_python_from_the_repository():
    argv = bench.command_argv("./sim.py dma --json {out}/x.json", "/OUT")
    assert argv == [sys.executable, os.path.join(REPO, "sim.py"), "dma", "--json", "/OUT/x.json"]
    assert bench.command_argv("python -m x", "/OUT")[0] == sys.executable


def published_documents():
    docs = [os.path.join(REPO, "README.md"), os.path.join(REPO, "CHANGELOG.md")]
    docs += sorted(os.path.join(REPO, "doc", name) for name in os.listdir(os.path.join(REPO, "doc"))
        if name.endswith(".md"))
    return docs


@pytest.mark.parametrize("path", published_documents(), ids=os.path.basename)
def test_no_table_cell_is_a_placeholder(path):
    """A figure left as a placeholder (TODO, TBD, or an upper-case name such as WORST_H2C in a row of
    figures) is a figure not measured."""
    placeholder = re.compile(r"^(TODO|TBD|XXX|[A-Z][A-Z0-9]*_[A-Z0-9_]+)$")
    figure      = re.compile(r"^[\d.,]+( [A-Za-z%/]+)?$")
    with open(path) as f:
        for number, line in enumerate(f, 1):
            if not line.lstrip().startswith("|"):
                continue
            cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
            for cell in cells:
                assert cell not in ("TODO", "TBD", "XXX"), f"{os.path.basename(path)}:{number}: {cell}"
                if placeholder.match(cell) and any(figure.match(other) for other in cells):
                    raise AssertionError(f"{os.path.basename(path)}:{number}: placeholder {cell!r}")


def test_a_command_that_shows_losses_is_not_a_failed_bench():
    """LitePCIe's loop mode under a stalling host exits 1 with the bytes it got wrong: that is its figure."""
    from reports.bench import BENCHES, EXPECTED_EXIT
    names = {name for _, name, *_ in BENCHES}
    assert set(EXPECTED_EXIT) <= names
    assert all("--flow loop" in command for _, name, command, *_ in BENCHES if name in EXPECTED_EXIT)
