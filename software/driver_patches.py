# This file is part of hostlink.
# Copyright (c) 2026 hostlink developers
# SPDX-License-Identifier: BSD-2-Clause

"""How hostlink changes LitePCIe's driver sources when it generates a driver: one mechanism for every
change set (driver_hardening, driver_mmap, driver_kernels, driver_polling, driver_flow, driver_stats,
driver_removal, and driver.py's own additions).

    apply_patches(kernel_dir, patches, required=(), kind=...)   a change set, all or nothing
    patch_file(path, anchor, replacement, what)                  one change in one file

A patch is (file, what it does, anchor, replacement): the anchor must occur exactly once in the file as
it is when the set is applied, and becomes the replacement. Sets are applied in generate_driver()'s
order; an anchor may be text an earlier set inserted (hostlink's own lines, a deliberate dependency),
otherwise it is LitePCIe's (test_driver.py checks every anchor is one or the other). When an anchor is
missing or repeated, nothing of the set is written and DriverPatchError says which change could not be
placed: LitePCIe's sources changed, and the change must be reviewed against them.
"""

import os

__all__ = ["DriverPatchError", "apply_patches", "patch_file"]


class DriverPatchError(ValueError):
    """LitePCIe's copied sources do not have, exactly once, a line a hostlink change is anchored on."""


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
