# This file is part of hostlink.
# Copyright (c) 2026 hostlink developers
# SPDX-License-Identifier: BSD-2-Clause

"""The models a PCIe SoC is simulated against, apart from the benches that use them: the host (`host`: a
cocotbext-pcie root complex with a real host's timing and faults) and the hard blocks (`s7_device`: the
7-series Gen2 block, `v7gen3_device`: the Virtex-7 Gen3 block)."""
