# This file is part of hostlink.
# Copyright (c) 2026 hostlink developers
# SPDX-License-Identifier: BSD-2-Clause

"""software/apt_packages.py: `make sim` asks only for what ./sim.py needs, and bookworm-backports is
derived from the machine's own apt source (hostlink names no package host)."""

import os
import re
import subprocess

from hostlink.software.apt_packages import SIM_PACKAGES, TEST_PACKAGES, backports_source, parse_deb822, \
    parse_one_line, read_sources

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

DEB822 = """\
Types: deb
# a comment
URIs: http://mirror.example/archive
Suites: bookworm bookworm-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb
URIs: http://mirror.example/archive-security
Suites: bookworm-security
Components: main
"""


def test_make_sim_asks_only_for_a_compiler_and_venv():
    assert SIM_PACKAGES == ["build-essential", "python3-venv"]
    assert set(SIM_PACKAGES) < set(TEST_PACKAGES)
    assert "linux-source-6.12" in TEST_PACKAGES


def test_backports_take_the_machines_own_mirror_and_keyring():
    source = backports_source(parse_deb822(DEB822))
    assert "URIs: http://mirror.example/archive\n" in source
    assert "Suites: bookworm-backports\n" in source
    assert "Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg\n" in source


def test_one_line_sources_and_their_options():
    entries = parse_one_line("# old style\n"
                             "deb [arch=amd64 signed-by=/etc/apt/keyrings/k.gpg] https://m.example/archive bookworm main contrib\n"
                             "deb-src https://m.example/archive bookworm main\n")
    source = backports_source(entries)
    assert "URIs: https://m.example/archive\n" in source and "Signed-By: /etc/apt/keyrings/k.gpg\n" in source


def test_nothing_added_when_backports_are_there_or_nothing_to_derive_from():
    assert backports_source(parse_one_line("deb http://m.example/archive bookworm-backports main\n")) == ""
    assert backports_source(parse_one_line("deb http://m.example/archive trixie main\n")) is None
    assert backports_source(parse_deb822(DEB822.replace("Types: deb\n# a comment", "Enabled: no\nTypes: deb"))) is None


def test_read_sources_reads_both_styles(tmp_path):
    os.makedirs(tmp_path / "etc/apt/sources.list.d")
    (tmp_path / "etc/apt/sources.list").write_text("deb http://a.example/archive bookworm main\n")
    (tmp_path / "etc/apt/sources.list.d/debian.sources").write_text(DEB822)
    suites = [s for e in read_sources(str(tmp_path)) for s in e["suites"]]
    assert suites == ["bookworm", "bookworm", "bookworm-updates", "bookworm-security"]


def test_no_package_host_is_written_into_the_project():
    files = subprocess.run(["git", "ls-files"], cwd=REPO, capture_output=True, text=True, check=True).stdout.split()
    hosts = re.compile(r"deb\.debian\.org|ftp\.[a-z.]*debian\.org|security\.debian\.org|pypi\.org|"
                       r"files\.pythonhosted\.org|archive\.ubuntu\.com")
    found = []
    for path in files:
        try:
            with open(os.path.join(REPO, path), errors="replace") as f:
                found += [f"{path}: {m.group(0)}" for m in hosts.finditer(f.read())]
        except (IsADirectoryError, FileNotFoundError):
            continue
    assert found == []
