# This file is part of hostlink.
# Copyright (c) 2026 hostlink developers
# SPDX-License-Identifier: BSD-2-Clause

"""How the folders cores/, targets/, sim/, software/ and examples/ become `hostlink.*`: through committed
links (hostlink/cores -> ../cores, ...), which a static analyser follows as it follows any folder, so an
editor's go-to-definition lands in the file; the installed package holds `hostlink.*` and nothing bare; the
target scripts find `hostlink` without editing `sys.path`."""

import ast
import os
import shutil
import subprocess
import sys
import zipfile

import jedi
import pytest

from hostlink.targets import boards as registry

from helpers import REPO

TOP_LEVEL = ["cores", "targets", "sim", "software", "examples"]


@pytest.mark.parametrize("folder", TOP_LEVEL)
def test_each_folder_is_linked_under_hostlink(folder):
    link = os.path.join(REPO, "hostlink", folder)
    assert os.path.islink(link) and os.readlink(link) == os.path.join("..", folder)


def imports_of(path):
    """(line, dotted name) of each `from hostlink... import ...` in a file."""
    tree = ast.parse(open(path).read())
    return [(node.lineno, node.module) for node in ast.walk(tree)
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("hostlink.")]


@pytest.mark.parametrize("board", list(registry.BOARDS))
def test_a_static_analyser_resolves_a_target_scripts_imports(board):
    # jedi (the analyser behind several editors' Python support) reads the files only; it never runs the
    # import hook of an editable install. Each `from hostlink.x.y import ...` of the target script, at its
    # last name, must lead to the module's file in the repository's folders.
    script_path = os.path.join(REPO, "targets", f"{board}.py")
    project = jedi.Project(REPO, added_sys_path=[], load_unsafe_extensions=False)
    script = jedi.Script(path=script_path, project=project)
    lines = open(script_path).read().splitlines()
    found = imports_of(script_path)
    assert found
    for line, module in found:
        column = lines[line - 1].index(module) + len(module) - 1   # On the module's last name.
        names = script.goto(line, column, follow_imports=True)
        assert names, f"{board}.py:{line}: jedi cannot resolve {module}"
        expected = os.path.join(REPO, *module.split("."))
        expected = expected + ".py" if os.path.exists(expected + ".py") else os.path.join(expected, "__init__.py")
        assert os.path.realpath(str(names[0].module_path)) == os.path.realpath(expected), (board, module)


@pytest.mark.parametrize("board", list(registry.BOARDS))
def test_target_scripts_leave_sys_path_alone(board):
    source = open(os.path.join(REPO, "targets", f"{board}.py")).read()
    assert "sys.path" not in source


def test_the_wheel_holds_hostlink_and_nothing_bare(tmp_path):
    # A regular (not editable) install packs the linked folders' files under hostlink/, once: the link back
    # from targets/ to hostlink/ is not followed.
    # Built from a copy, so that setuptools' build/ stays out of the repository's.
    source = tmp_path / "source"
    shutil.copytree(REPO, source, symlinks=True, ignore=shutil.ignore_patterns(
        ".git", ".venv", "build", "sim_build", "*.egg-info", "__pycache__", ".pytest_cache"))
    subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation",
                    "-w", str(tmp_path), str(source)], check=True, capture_output=True)
    wheel, = tmp_path.glob("hostlink-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    tops = {name.split("/")[0] for name in names if not name.split("/")[0].endswith(".dist-info")}
    assert tops == {"hostlink"}
    for name in ["hostlink/cores/pcie/controller.py", "hostlink/targets/vc709.py", "hostlink/sim/dma.py",
                 "hostlink/sim/pcie/xilinx_stubs.v", "hostlink/examples/accelerator.py",
                 "hostlink/software/driver/hardening.patch", "hostlink/software/lib/hostlink.c",
                 "hostlink/software/lib/hostlink.pc.in", "hostlink/sim/uml/linux/uml.config",
                 "hostlink/sim/uml/guest/as_member.py", "hostlink/sim/zynq/guest/dma_client_test.py",
                 "hostlink/software/bench/hostlink_bench.c"]:
        assert name in names
    assert not any(name.startswith("hostlink/targets/hostlink/") for name in names)


def test_every_public_class_of_the_gateware_and_the_host_library_says_what_it_is():
    """Issue 51: a class docstring on every public class in cores/ and hostlink/'s own modules (host.py,
    toolchain.py), for whoever reads them beside liteeth and litepcie."""
    missing = []
    for top in ("cores", "hostlink"):
        for folder, dirs, files in os.walk(os.path.join(REPO, top)):
            dirs[:] = [d for d in dirs if d != "__pycache__" and not os.path.islink(os.path.join(folder, d))]
            for name in sorted(files):
                path = os.path.join(folder, name)
                if not name.endswith(".py") or os.path.islink(path):
                    continue
                with open(path) as f:
                    tree = ast.parse(f.read())
                missing += [f"{os.path.relpath(path, REPO)}:{node.lineno} {node.name}" for node in tree.body
                            if isinstance(node, ast.ClassDef) and not node.name.startswith("_")
                            and not ast.get_docstring(node)]
    assert missing == []
