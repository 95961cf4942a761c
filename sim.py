#!/usr/bin/env python3
# This file is part of hostlink.
# Copyright (c) 2026 hostlink developers
# SPDX-License-Identifier: BSD-2-Clause

"""Cycle-level simulation of hostlink SoCs against independent host models.

    ./sim.py                 short demonstration: DMA loopback at a few sizes on the default board
    ./sim.py dma  --help     PCIe DMA SoC against a cocotbext-pcie root complex
    ./sim.py udp  --help     Ethernet SoC against the Linux network stack through a TAP device
    ./sim.py driver --help   LitePCIe's Linux driver and tools on the simulated SoC, in User-Mode Linux
"""

import sys


def main(argv=None):
    argv = sys.argv[1:] if argv is None else list(argv)
    if not argv:
        from hostlink.sim.dma import demo
        return demo()
    command, rest = argv[0], argv[1:]
    if command == "dma":
        from hostlink.sim.dma import main as dma_main
        return dma_main(rest)
    if command == "udp":
        from hostlink.sim.udp import main as udp_main
        return udp_main(rest)
    if command == "driver":
        from hostlink.sim.driver import main as driver_main
        return driver_main(rest)
    if command in ("-h", "--help"):
        print(__doc__.strip())
        return 0
    print(f"sim.py: unknown command {command!r}; expected 'dma', 'udp' or 'driver' (see ./sim.py --help)", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
