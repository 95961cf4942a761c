# This file is part of hostlink.
# Copyright (c) 2026 hostlink developers
# SPDX-License-Identifier: BSD-2-Clause

"""Checks shared by the PCIe DMA SoCs: each rejects a bad parameter with a message a user can act on.

LitePCIe's PHYs only `assert` their parameters; a user who asks for an impossible lane count gets a bare
AssertionError from deep inside the PHY. These checks run first, in the target, and say what was given.
"""

import re

# Limits -------------------------------------------------------------------------------------------

# LitePCIe's DMA descriptor carries a 24-bit length (litepcie/frontend/dma.py: descriptor_layout).
DMA_DESCRIPTOR_MAX_BYTES = 2**24 - 1

DMA_CHANNELS_MAX = 8


# Checks -------------------------------------------------------------------------------------------

def speed_grade(device):
    """The speed grade of a 7-series part name (`platform.device`): -2 for "xc7k325t-ffg900-2", -1 for
    "xc7z045ffg900-1" or "xc7a100t-csg324-1L"."""
    match = re.search(r"-([123])[A-Za-z]?$", str(device))
    if match is None:
        raise ValueError(f"no speed grade at the end of the part name {device!r} (e.g. xc7k325t-ffg900-2)")
    return -int(match.group(1))


def check_choice(name, value, choices, described=None):
    """`value` if it is one of `choices`, else a ValueError naming them (or saying `described`, e.g. "a
    power of two from 1 to 128")."""
    if isinstance(value, bool) or value not in choices:
        allowed = described or f"one of {', '.join(str(c) for c in choices)}"
        raise ValueError(f"{name} must be {allowed}, not {value!r}")
    return value


def check_lanes(lanes, supported):
    return check_choice("PCIe lane count", lanes, supported)


def check_data_width(data_width, supported):
    return check_choice("PCIe data width (bits)", data_width, supported)


def check_dma_channels(channels, maximum=DMA_CHANNELS_MAX):
    if not isinstance(channels, int) or isinstance(channels, bool) or not (1 <= channels <= maximum):
        raise ValueError(f"DMA channel count must be an integer from 1 to {maximum}, not {channels!r}")
    return channels


def check_dma_length(length, maximum=DMA_DESCRIPTOR_MAX_BYTES, granularity=1):
    """A descriptor's length. LitePCIe's DMA moves whole datapath words: `granularity` is the word size in
    bytes (16 on a 128-bit datapath), and a length that is not a multiple of it never completes."""
    if not isinstance(length, int) or isinstance(length, bool) or not (1 <= length <= maximum):
        raise ValueError(f"DMA descriptor length must be from 1 to {maximum} bytes, not {length!r}")
    if length % granularity:
        raise ValueError(f"DMA descriptor length must be a multiple of {granularity} bytes "
                         f"(the {8*granularity}-bit datapath), not {length!r}")
    return length
