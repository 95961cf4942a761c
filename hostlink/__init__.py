# This file is part of hostlink.
# Copyright (c) 2026 hostlink developers
# SPDX-License-Identifier: BSD-2-Clause

"""hostlink: host <-> FPGA data movers (PCIe DMA and minimal UDP/IPv4) built on LiteX."""

__version__ = "0.1.0"
