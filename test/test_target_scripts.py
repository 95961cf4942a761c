# This file is part of hostlink.
# Copyright (c) 2026 hostlink developers
# SPDX-License-Identifier: BSD-2-Clause

"""Each board's target runs as the README shows it, `./targets/<board>.py ...`: an executable script with
a shebang, whose help names the script and describes the board."""

import os
import subprocess
import sys

import pytest

from hostlink.targets import boards as registry

from helpers import REPO

BOARDS = list(registry.BOARDS)


def test_every_target_script_is_a_registry_board():
    # What is not a board's script: the package, the shared command line, the registry, the pin modules.
    others  = {"__init__", "common", "boards"}
    scripts = {name[:-3] for name in os.listdir(os.path.join(REPO, "targets"))
               if name.endswith(".py") and not name.endswith("_platform.py") and name[:-3] not in others}
    assert scripts == set(BOARDS)
    for board in registry.BOARDS.values():
        if board.platform is not None:
            assert os.path.exists(os.path.join(REPO, "targets", f"{board.platform}.py"))


@pytest.mark.parametrize("board", BOARDS)
def test_target_is_an_executable_script(board):
    path = os.path.join(REPO, "targets", f"{board}.py")
    assert os.access(path, os.X_OK), f"{path} is not executable"
    with open(path) as f:
        assert f.readline() == "#!/usr/bin/env python3\n"


@pytest.mark.parametrize("board", BOARDS)
def test_target_help_names_the_script_and_the_board(board):
    # Run as a user does: the shebang finds this Python (the project's environment) first on PATH.
    env = dict(os.environ, PATH=os.path.dirname(sys.executable) + os.pathsep + os.environ.get("PATH", ""))
    result = subprocess.run([f"./targets/{board}.py", "--help"], cwd=REPO, env=env,
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=120)
    assert result.returncode == 0, result.stdout
    assert result.stdout.startswith(f"usage: {board}.py [-h]"), result.stdout[:200]
    with open(os.path.join(REPO, "targets", f"{board}.py")) as f:
        source = f.read()
    description = source.split('"""')[1].strip().splitlines()[0]
    assert description in result.stdout
