# This file is part of hostlink.
# Copyright (c) 2026 hostlink developers
# SPDX-License-Identifier: BSD-2-Clause

"""./sim.py udp: the UDP core in a Verilator model, against the Linux network stack.

The Ethernet SoC (hostlink's UDPCore on LiteX's simulated Ethernet) runs inside a network
namespace created for the run; its PHY is a TAP device in that namespace, and `hostlink-udp`
receives (or echoes) through a real kernel UDP socket there. The namespace is deleted at the end,
also on errors and Ctrl-C, and holds only `lo` and the TAP device: no frame can leave it.

Time is simulated time: the SoC counts the cycles its frames occupy on a 1 Gb/s wire (preamble,
SFD, FCS, inter-frame gap and padding included), and goodput is payload bytes per simulated second
at the board's clock. Wall-clock figures of the host tool are not used.

The package, by job: `soc` (the simulated Ethernet SoC and its Verilator build), `csr` (CSR reads and
writes over UARTBone), `tool` (the `hostlink-udp` host tool's process), `session` (the running model and
one row of measurements), `cli` (`./sim.py udp`'s arguments, run and summary).
"""

from hostlink.sim.udp.cli import (main, run, parser, check_args, run_limit, RUN_BUILD_ALLOWANCE,
    LOG_ROOTS)
