# This file is part of hostlink.
# Copyright (c) 2026 hostlink developers
# SPDX-License-Identifier: BSD-2-Clause

"""A board of another SoC left to its own driver: applied to LitePCIe's copied driver sources when the
driver is generated (the last change set).

    refuse_other_socs(kernel_dir)   write the SoC's identifier into config.h and patch main.c's probe;
                                    DriverPatchError names the anchor LitePCIe's sources lost.
    soc_identifier(kernel_dir)      the identifier the probe requires, from the generated soc.h.

LitePCIe's driver binds every LitePCIe board it finds (its PCI IDs are the PHYs', shared by every SoC on
them) and drives it with the register map it was generated for: with boards of two SoCs in one host, the
other SoC's board would be driven through the wrong registers. Now the probe compares the board's SoC
identifier with this driver's SoC's and leaves a board of another SoC to that SoC's driver (-ENODEV). The
comparison leaves out LiteX's build time (a space and the date after the identifier), which a driver
generated apart from the bitstream's build does not share. The module shows the SoC it is for as a read-only
parameter, /sys/module/<name>/parameters/soc_identifier: programs find every hostlink driver loaded by it
(hostlink.host's list_drivers()), and libhostlink makes the same comparison when it opens a channel.
"""

import os
import re

from hostlink.software.driver.patches import CONFIG_H_END, apply_patches, load_patches, patch_file, read_defines

__all__ = ["PATCHES", "refuse_other_socs", "soc_identifier"]

BUILD_TIME = re.compile(r' \d{4}-\d\d-\d\d \d\d:\d\d:\d\d"$')

# The probe's check, as C, in identity.patch.
PATCHES, _ = load_patches("identity.patch")


def soc_identifier(kernel_dir):
    """The SoC's identifier as a C string literal, from the generated soc.h, without LiteX's build time
    (a driver generated apart from the bitstream's build has another): what the probe requires of a board."""
    soc = read_defines(os.path.join(kernel_dir, "soc.h"))
    literal = soc.get("CONFIG_IDENTIFIER")
    if not literal or not literal.startswith('"'):
        raise ValueError(f"soc.h in {kernel_dir} has no CONFIG_IDENTIFIER: the SoC needs LiteX's identifier")
    return literal if "CONFIG_BIOS_NO_BUILD_TIME" in soc else BUILD_TIME.sub('"', literal)


def refuse_other_socs(kernel_dir):
    """Make the probe of the sources in `kernel_dir` refuse a board whose SoC identifier is not this
    driver's SoC's: HOSTLINK_SOC_IDENTIFIER at the end of config.h, then PATCHES in main.c."""
    patch_file(os.path.join(kernel_dir, "config.h"), CONFIG_H_END,
               "/* hostlink: the SoC this driver is for (its identifier, without the build time). */\n"
               f"#define HOSTLINK_SOC_IDENTIFIER {soc_identifier(kernel_dir)}\n\n" + CONFIG_H_END,
               "the SoC's identifier at the end of config.h")
    apply_patches(kernel_dir, PATCHES, kind="identity change")
    return kernel_dir
