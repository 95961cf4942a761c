#!/usr/bin/env python3
# This file is part of hostlink.
# Copyright (c) 2026 hostlink developers
# SPDX-License-Identifier: BSD-2-Clause

"""Cycle-level simulation of hostlink SoCs against independent host models.

    ./sim.py                 short demonstration: DMA loopback at a few sizes on the default board
    ./sim.py dma  --help     PCIe DMA SoC against a cocotbext-pcie root complex
    ./sim.py udp  --help     Ethernet SoC against the Linux network stack through a TAP device
    ./sim.py driver --help   LitePCIe's Linux driver and tools on the simulated SoC, in User-Mode Linux
    ./sim.py zynq --help     the Zynq SoC's AXI DMA against models of the PS (its DDR on HP0, GP0)

Every run has a wall-clock limit (dma: --timeout, default scaled from the bytes simulated; udp: from
its per-size --timeout; driver: per command inside the machine; zynq: scaled from the bytes simulated):
past it the simulator is stopped and the tail of its log is shown.
"""

import importlib
import os
import sys

# From a shell without the project's virtualenv, importing hostlink re-runs this script with it
# (hostlink/__init__.py), or says what to install.
import hostlink


def main(argv=None):
    argv = sys.argv[1:] if argv is None else list(argv)
    if not argv:
        from hostlink.sim.dma import DEMO_ARGS
        argv = ["dma", *DEMO_ARGS]
    command, rest = argv[0], argv[1:]
    if command in ("-h", "--help"):
        print(__doc__.strip())
        return 0
    if command == "driver":
        # Ends each command inside the machine after its own timeout (sim/driver.py).
        from hostlink.sim.driver import main as driver_main
        return driver_main(rest)
    if command not in ("dma", "udp", "zynq"):
        print(f"sim.py: unknown command {command!r}; expected 'dma', 'udp', 'driver' or 'zynq' (see ./sim.py --help)",
            file=sys.stderr)
        return 2
    from hostlink.sim.watchdog import CHILD_ENV, run_with_limit
    module = importlib.import_module(f"hostlink.sim.{command}")
    if os.environ.get(CHILD_ENV) or "-h" in rest or "--help" in rest:
        return module.main(rest)
    # Arguments are checked here, before anything is built; the run itself goes to a child process
    # that is stopped at the limit.
    if command in ("dma", "zynq"):
        args = module.parse_args(rest)
    else:
        args  = module.parser().parse_args(rest)
        error = module.check_args(args)
        if error is not None:
            print(f"sim.py udp: {error}", file=sys.stderr)
            return 2
    return run_with_limit([sys.executable, os.path.abspath(__file__), command, *rest],
        module.run_limit(args), f"sim.py {command}", log_roots=module.LOG_ROOTS)


if __name__ == "__main__":
    sys.exit(main())
