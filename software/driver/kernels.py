# This file is part of hostlink.
# Copyright (c) 2026 hostlink developers
# SPDX-License-Identifier: BSD-2-Clause

"""Kernel compatibility of LitePCIe's Linux driver, applied to its copied sources when the driver is
generated, so that the modules build against Debian 12's Linux 6.1 and bookworm-backports' 6.12 alike.

    port_driver(kernel_dir)   patch liteuart.c; raise DriverPatchError naming the anchor when LitePCIe's
                              sources no longer have it.

LitePCIe 2024.12's `litepcie.ko` (main.c) builds as is against both. Its `liteuart.ko` (the tty of a
UART crossover, which hostlink's SoCs do not have, but which the Makefile builds and init.sh loads)
does not build on 6.12:
- since Linux 6.10 a serial port's transmit buffer is a kfifo (`tty_port.xmit_fifo`), not the
  `uart_state.xmit` circular buffer: the transmit path takes its characters with `uart_fifo_get()`;
- since Linux 6.11 a platform driver's `.remove` returns void.
Each change is guarded by LINUX_VERSION_CODE, so the code older kernels compile is LitePCIe's own.
"""

from hostlink.software.driver.patches import apply_patches, load_patches

__all__ = ["PATCHES", "port_driver"]

# The changes, as C, in kernels.patch.
PATCHES, _ = load_patches("kernels.patch")


def port_driver(kernel_dir, patches=None):
    """Apply PATCHES to LitePCIe's sources copied in `kernel_dir`.

    Every anchor must occur exactly once; otherwise nothing is written and DriverPatchError says which
    change could not be placed (LitePCIe's sources changed: review the change against them).
    """
    apply_patches(kernel_dir, PATCHES if patches is None else patches, kind="kernel compatibility change")
    return kernel_dir
