# This file is part of hostlink.
# Copyright (c) 2026 hostlink developers
# SPDX-License-Identifier: BSD-2-Clause

"""What the target tests share: elaborating a SoC without the vendor tool, and running a target's
command line as a user without Vivado would."""

import json
import os
import subprocess
import sys

from litex.soc.integration.builder import Builder

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# Elaboration --------------------------------------------------------------------------------------

def elaborate(soc_cls, output_dir, **kwargs):
    """Build `soc_cls(**kwargs)` without the vendor tool (gateware sources, csr.json, csr.csv in
    `output_dir`); return (soc, csr.json contents)."""
    output_dir = str(output_dir)
    soc        = soc_cls(**kwargs)
    builder    = Builder(soc, output_dir=output_dir, compile_gateware=False, compile_software=False,
        csr_json = os.path.join(output_dir, "csr.json"),
        csr_csv  = os.path.join(output_dir, "csr.csv"))
    builder.build(run=False)
    with open(os.path.join(output_dir, "csr.json")) as f:
        return soc, json.load(f)

# Command line -------------------------------------------------------------------------------------

def env_without_vivado():
    """The test environment with every PATH entry holding a `vivado` removed."""
    env  = dict(os.environ)
    keep = [d for d in env.get("PATH", "").split(os.pathsep)
            if d and not os.path.exists(os.path.join(d, "vivado"))]
    env["PATH"] = os.pathsep.join(keep)
    return env


def run_target(board, *args, timeout=300):
    """`targets/<board>.py args...` from the repository root, without Vivado on PATH."""
    target = os.path.join(REPO, "targets", f"{board}.py")
    return subprocess.run([sys.executable, target, *args], cwd=REPO, env=env_without_vivado(),
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=timeout)


def yowasp_missing():
    """Why the YoWASP tools cannot run (a skip reason), or None."""
    from hostlink.toolchain import find_yowasp
    try:
        find_yowasp()
    except OSError as e:
        return str(e)
    return None


# LitePCIe's driver sources as the package ships them, before hostlink changes them.
LITEPCIE_KERNEL = os.path.join(os.path.dirname(os.path.abspath(
    __import__("litepcie.software", fromlist=["software"]).__file__)), "kernel")


def read(path):
    with open(path) as f:
        return f.read()


def check_missing_anchor_is_refused(tmp_path, patch, apply, kind, applied_before=()):
    """A copy of LitePCIe's driver sources (with the patch sets `applied_before` applied) that lost the anchor
    of `patch` (file, what, anchor, replacement): `apply(kernel)` refuses it with DriverPatchError naming
    the `kind` of change and `what`, and leaves the sources as they were (nothing half-patched)."""
    import re
    import shutil
    import pytest
    from hostlink.software.driver_patches import DriverPatchError
    kernel = str(tmp_path / "kernel")
    shutil.copytree(LITEPCIE_KERNEL, kernel, ignore=shutil.ignore_patterns("__pycache__"))
    for before in applied_before:
        before(kernel)
    name, what, anchor, _ = patch
    path = os.path.join(kernel, name)
    changed = read(path).replace(anchor, "/* moved */\n")
    with open(path, "w") as f:
        f.write(changed)
    sources = {n: read(os.path.join(kernel, n)) for n in sorted(os.listdir(kernel)) if n.endswith((".c", ".h"))}
    with pytest.raises(DriverPatchError, match=rf"cannot apply {re.escape(kind)} '{re.escape(what)}'.*found it 0 "
                                               r"times.*LitePCIe's driver has changed"):
        apply(kernel)
    assert {n: read(os.path.join(kernel, n)) for n in sources} == sources


def generate_zc706_driver(tmp_path_factory):
    """The ZC706 SoC's generated driver (kernel/, user/, ...) in a fresh folder; returns the folder."""
    from hostlink.software.driver import generate_driver
    from hostlink.targets.zc706 import BaseSoC
    driver_dir = str(tmp_path_factory.mktemp("driver_zc706"))
    generate_driver(BaseSoC(), driver_dir)
    return driver_dir


def assemble_framed(words, word_bytes):
    """The buffers the DMA writer makes of the framer's output [(data, last)]: each buffer's data (and
    padding) up to a `last`, then its header's words up to a `last`, written at the buffer's start."""
    buffers, data, header, in_header = [], b"", b"", False
    for word, last in words:
        raw = word.to_bytes(word_bytes, "little")
        if in_header:
            header += raw
            if last:
                buffers.append(header + data)
                data, header, in_header = b"", b"", False
        else:
            data += raw
            in_header = bool(last)
    assert not data and not header, "output stopped within a buffer"
    return buffers
