# This file is part of hostlink.
# Copyright (c) 2026 hostlink developers
# SPDX-License-Identifier: BSD-2-Clause

"""The driver's name: one per SoC, so that the drivers of several SoCs load in one host side by side.

    use_driver_name(kernel_dir)            main.c takes its names from config.h's HOSTLINK_DRIVER_NAME
                                           (the change set; LitePCIe's "litepcie" by default)
    set_driver_name(driver_dir, name)      the generated driver named `name`: config.h, the module's
                                           Makefile and init.sh, the udev rule, LitePCIe's user tools
    check_driver_name(name)                `name`, or ValueError saying why it cannot be one
    driver_name(driver_dir)                the name a generated driver has (its config.h)

Every LitePCIe driver is module litepcie, PCI driver litepcie, class litepcie, character device region
litepcie and device nodes /dev/litepcieN: a second one does not load (the module's name is taken) and would
not create its class if it did. A driver generated with `--driver-name zc706_litepcie` is NAME.ko, its PCI
driver, class and region are NAME, its nodes /dev/NAME0, /dev/NAME1, ...; the user tools and libhostlink built
with it open those nodes. The default stays "litepcie": `litepcie_util dma_test` on /dev/litepcie0, as
LitePCIe's users expect.
"""

import os
import re

from hostlink.software.driver.patches import CONFIG_H_END, apply_patches, load_patches, patch_file, read_defines

__all__ = ["DEFAULT_DRIVER_NAME", "DRIVER_NAME_MAX", "PATCHES", "check_driver_name", "driver_name",
    "set_driver_name", "use_driver_name"]

DEFAULT_DRIVER_NAME = "litepcie"
# Linux's module names have at most 55 characters (MODULE_NAME_LEN - 1); the nodes add the channel's number.
DRIVER_NAME_MAX = 32

# The changes, as C, in naming.patch.
PATCHES, _ = load_patches("naming.patch")

# LitePCIe's tools name the node they open with this format; the named driver's come from config.h.
USER_TOOLS_NODE = '"/dev/litepcie%d"'


def check_driver_name(name):
    """`name` if it can name a driver (module, class, device nodes NAME0, NAME1, ...), else ValueError."""
    if not isinstance(name, str) or not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
        raise ValueError(f"a driver name is a C identifier (letters, digits, '_'; not a digit first), "
                         f"not {name!r}")
    if len(name) > DRIVER_NAME_MAX:
        raise ValueError(f"a driver name has at most {DRIVER_NAME_MAX} characters, not {len(name)} ({name!r})")
    if name[-1].isdigit():
        raise ValueError(f"a driver name cannot end with a digit: its device nodes are NAME0, NAME1, ... "
                         f"({name!r} would give /dev/{name}0)")
    if name == "liteuart":
        raise ValueError("a driver name cannot be 'liteuart': LitePCIe's UART module has it")
    return name


def use_driver_name(kernel_dir):
    """main.c names itself HOSTLINK_DRIVER_NAME, written at the end of config.h as LitePCIe's "litepcie";
    set_driver_name() gives it another."""
    name = ("config.h", "the driver's name at the end of config.h", CONFIG_H_END,
            "/* hostlink: the driver's name (module, class, device nodes /dev/<name>N); naming.py. */\n"
            f'#define HOSTLINK_DRIVER_NAME "{DEFAULT_DRIVER_NAME}"\n\n' + CONFIG_H_END)
    apply_patches(kernel_dir, [*PATCHES, name], kind="naming change")   # All or nothing.
    return kernel_dir


def set_driver_name(driver_dir, name):
    """Name the driver generated in `driver_dir` `name` (its default too, for LitePCIe's tools, which keep
    their own node format otherwise): config.h's HOSTLINK_DRIVER_NAME, and, for another name, the module's
    Makefile and init.sh and the udev rule."""
    from hostlink.software.driver.hardening import UDEV_RULE_NAME
    check_driver_name(name)
    kernel_dir, user_dir = os.path.join(driver_dir, "kernel"), os.path.join(driver_dir, "user")
    patch_file(os.path.join(kernel_dir, "config.h"), f'#define HOSTLINK_DRIVER_NAME "{DEFAULT_DRIVER_NAME}"\n',
               f'#define HOSTLINK_DRIVER_NAME "{name}"\n', "the driver's name in config.h")
    # LitePCIe's tools (litepcie.h includes config.h) and their -c N: the nodes of this driver.
    for tool in ["litepcie_util.c", "litepcie_test.c"]:
        patch_file(os.path.join(user_dir, tool), USER_TOOLS_NODE, '"/dev/" HOSTLINK_DRIVER_NAME "%d"',
                   f"{tool}: the node it opens")
    if name == DEFAULT_DRIVER_NAME:
        return driver_dir
    makefile = os.path.join(kernel_dir, "Makefile")
    for anchor, replacement in [("obj-m = litepcie.o", f"obj-m = {name}.o"),
                                ("litepcie-objs = main.o", f"{name}-objs = main.o"),
                                ("all: litepcie.ko", f"all: {name}.ko"),
                                ("litepcie.ko: main.c", f"{name}.ko: main.c"),
                                ("litepcie.ko: litepcie.h", f"{name}.ko: litepcie.h")]:
        patch_file(makefile, anchor, replacement, f"the module's Makefile: {anchor}")
    init = os.path.join(kernel_dir, "init.sh")
    with open(init) as f:
        text = f.read()
    text = text.replace("grep litepcie", f"grep -w {name}").replace("litepcie.ko", f"{name}.ko")
    with open(init, "w") as f:
        f.write(text.replace("/dev/litepcie", f"/dev/{name}"))
    rule = os.path.join(kernel_dir, UDEV_RULE_NAME)
    with open(rule) as f:
        text = f.read()
    os.remove(rule)
    with open(os.path.join(kernel_dir, UDEV_RULE_NAME.replace("litepcie", name)), "w") as f:
        f.write(text.replace('KERNEL=="litepcie[0-9]*"', f'KERNEL=="{name}[0-9]*"'))
    return driver_dir


def driver_name(driver_dir):
    """The name of the driver generated in `driver_dir` (LitePCIe's for one generated before names)."""
    name = read_defines(os.path.join(driver_dir, "kernel", "config.h")).get("HOSTLINK_DRIVER_NAME")
    return name.strip('"') if name else DEFAULT_DRIVER_NAME
