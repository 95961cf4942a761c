#!/bin/sh
# This file is part of hostlink.
# Copyright (c) 2026 hostlink developers
# SPDX-License-Identifier: BSD-2-Clause
#
# The libraries' throughput beside hostlink_bench's on the same SoC (doc/host_api.md, "Throughput against
# hostlink_bench"): SIZE bytes through the accelerator and back with the C and the Python example, zero-copy
# and copy, then hostlink_bench's two transfers of SIZE through the DMA's loopback. Run inside
# `./sim.py driver --board BOARD --user-core examples.accelerator:Accelerator -- sh THIS SIZE`, whose
# folder holds csr.json; SIZE in bytes (4194304 by default).
set -e
size=${1:-4194304}
repo=$(cd "$(dirname "$0")/../../.." && pwd)
python3 "$repo/examples/accelerator_host.py" --setup --registers csr.json
accelerator_host --size "$size" --zero-copy
accelerator_host --size "$size"
python3 "$repo/examples/accelerator_host.py" --size "$size" --zero-copy
python3 "$repo/examples/accelerator_host.py" --size "$size"
# The channel back to the DMA's loopback for the bench (the accelerator's set-up gave it to the core).
python3 -c "import sys; sys.path.insert(0, '$repo'); from hostlink.host import Channel; Channel(0, directions=('c2h',), flow='loop', registers='csr.json').register('pcie_dma0_user_select', 0)"
hostlink_bench -m zero-copy,copy -c poll -d loopback -s "$size" -t 2
