# This file is part of hostlink.
# Copyright (c) 2026 hostlink developers
# SPDX-License-Identifier: BSD-2-Clause

"""How hostlink changes LitePCIe's driver sources when it generates a driver: one mechanism for every
change set (the modules of CHANGE_SETS in hostlink.software.driver, and the package's own additions).

    load_patches(name)                                           a change set's file in this package's folder
    apply_patches(kernel_dir, patches, required=(), kind=...)   a change set, all or nothing
    patch_file(path, anchor, replacement, what)                  one change in one file
    read_defines(path)                                           a generated header's #defines, which some
                                                                 changes are computed from

A patch is (file, what it does, anchor, replacement): the anchor must occur exactly once in the file as
it is when the set is applied, and becomes the replacement. Every anchor is LitePCIe's own text, once in
its sources (test_driver.py checks it): a change that goes next to another set's lines is anchored on
LitePCIe's line beside them (a change that inserts keeps its anchor in its replacement), so no anchor can
match text a hostlink change wrote. Sets are applied in CHANGE_SETS' order. When an anchor is
missing or repeated, nothing of the set is written and DriverPatchError says which change could not be
placed: LitePCIe's sources changed, and the change must be reviewed against them.

A change set's C lives in <set>.patch beside its module, as it appears in the driver (tabs and all):

    # Comment lines, at the top only.
    @@ change main.c: what the change does
    the anchor's lines
    @@ becomes
    the replacement's lines
    @@ required main.c: what the set relies on
    lines that must be in the file once, left as they are

A marker line `@@ no newline at end` right after a text takes the text's last newline away.
"""

import os
import re

__all__ = ["DriverPatchError", "PATCH_DIR", "CONFIG_H_END", "apply_patches", "load_patches", "patch_file",
    "read_defines"]

PATCH_DIR = os.path.dirname(os.path.realpath(__file__))   # The .patch files sit beside their modules.

# config.h's last line: hostlink's defines go before it.
CONFIG_H_END = "#endif /* __HW_CONFIG_H */"


class DriverPatchError(ValueError):
    """LitePCIe's copied sources do not have, exactly once, a line a hostlink change is anchored on."""


def load_patches(name):
    """The change set in PATCH_DIR's `name`: (patches [(file, what, anchor, replacement)], required
    [(file, what, text)]), in the file's order."""
    path = os.path.join(PATCH_DIR, name)
    with open(path) as f:
        lines = f.read().split("\n")
    if lines and lines[-1] == "":
        lines.pop()   # The file's own last newline.
    blocks = []       # [kind, file, what, [text lines], [text lines]]
    for number, line in enumerate(lines, 1):
        if not blocks and (line.startswith("#") or not line.strip()):
            continue
        if line.startswith("@@ change ") or line.startswith("@@ required "):
            kind, rest = line[3:].split(" ", 1)
            if ": " not in rest:
                raise DriverPatchError(f"{path}:{number}: expected '@@ {kind} <file>: <what>'")
            file, what = rest.split(": ", 1)
            blocks.append([kind, file, what, []])
        elif line == "@@ becomes" and blocks and blocks[-1][0] == "change" and len(blocks[-1]) == 4:
            blocks[-1].append([])
        elif line == "@@ no newline at end" and blocks:
            blocks[-1][-1].append(None)
        elif line.startswith("@@") or not blocks:
            raise DriverPatchError(f"{path}:{number}: unexpected line {line!r}")
        else:
            blocks[-1][-1].append(line)

    def text(block_lines):
        if block_lines and block_lines[-1] is None:
            return "\n".join(block_lines[:-1])
        return "".join(line + "\n" for line in block_lines)

    patches, required = [], []
    for block in blocks:
        if block[0] == "change":
            if len(block) != 5:
                raise DriverPatchError(f"{path}: change '{block[2]}' has no '@@ becomes'")
            patches.append((block[1], block[2], text(block[3]), text(block[4])))
        else:
            required.append((block[1], block[2], text(block[3])))
    return patches, required


def apply_patches(kernel_dir, patches, required=(), kind="change"):
    """Apply `patches` [(file, what, anchor, replacement)] to the sources in `kernel_dir`, after checking
    that each `required` (file, what, text) is there once; all or nothing (DriverPatchError). `kind` names
    the set in messages ("hardening", "flow change", ...)."""
    texts = {}
    def text(name):
        if name not in texts:
            with open(os.path.join(kernel_dir, name)) as f:
                texts[name] = f.read()
        return texts[name]

    for name, what, anchor in required:
        if text(name).count(anchor) != 1:
            raise DriverPatchError(f"{os.path.join(kernel_dir, name)}: {kind} relies on '{what}', "
                                   f"which LitePCIe's driver no longer has in the expected form; "
                                   f"LitePCIe's driver has changed, review it before generating")
    for name, what, anchor, replacement in patches:
        found = text(name).count(anchor)
        if found != 1:
            raise DriverPatchError(f"{os.path.join(kernel_dir, name)}: cannot apply {kind} '{what}': "
                                   f"expected its anchor once, found it {found} times "
                                   f"({anchor.strip().splitlines()[0]!r}); LitePCIe's driver has changed")
        texts[name] = texts[name].replace(anchor, replacement)
    for name, content in texts.items():
        with open(os.path.join(kernel_dir, name), "w") as f:
            f.write(content)


def patch_file(path, anchor, replacement, what):
    """One change in the file at `path` (its anchor once, else DriverPatchError naming `what`)."""
    apply_patches(os.path.dirname(path), [(os.path.basename(path), what, anchor, replacement)], kind="change")


def read_defines(path):
    """{name: value} of the #define lines of the header at `path` (csr.h, soc.h, config.h)."""
    defines = {}
    with open(path) as f:
        for line in f:
            m = re.match(r"\s*#define\s+(\w+)\s+(.*?)\s*$", line)
            if m:
                defines[m.group(1)] = m.group(2)
    return defines
