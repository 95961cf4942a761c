# This file is part of hostlink.
# Copyright (c) 2026 hostlink developers
# SPDX-License-Identifier: BSD-2-Clause

"""Gateware for Zynq-7000 SoCs, whose ARM cores (the PS) move data through the logic (the PL)."""
