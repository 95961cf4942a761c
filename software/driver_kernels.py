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

from hostlink.software.driver_patches import apply_patches

__all__ = ["PATCHES", "port_driver"]

# liteuart.c's transmit path as LitePCIe ships it, and the same for Linux >= 6.10; both begin by sending a
# pending XON/XOFF character.
_LITEUART_SEND_X_CHAR = (
    "\tif (unlikely(port->x_char)) {\n"
    "\t\tlitex_write8(port->membase + OFF_RXTX, port->x_char);\n"
    "\t\tport->icount.tx++;\n"
    "\t\tport->x_char = 0;\n"
)

_LITEUART_TRANSMIT = (
    "\tstruct circ_buf *xmit = &port->state->xmit;\n"
    "\tunsigned char ch;\n"
    "\n"
    + _LITEUART_SEND_X_CHAR +
    "\t} else if (!uart_circ_empty(xmit)) {\n"
    "\t\twhile (xmit->head != xmit->tail) {\n"
    "\t\t\tch = xmit->buf[xmit->tail];\n"
    "\t\t\txmit->tail = (xmit->tail + 1) & (UART_XMIT_SIZE - 1);\n"
    "\t\t\tport->icount.tx++;\n"
    "\t\t\tliteuart_putchar(port, ch);\n"
    "\t\t}\n"
    "\t}\n"
    "\n"
    "\tif (uart_circ_chars_pending(xmit) < WAKEUP_CHARS)\n"
    "\t\tuart_write_wakeup(port);\n"
)

_LITEUART_TRANSMIT_6_10 = (
    "\t/* hostlink: since Linux 6.10 the transmit buffer is the tty port's kfifo. */\n"
    "\tunsigned char ch;\n"
    "\n"
    + _LITEUART_SEND_X_CHAR +
    "\t} else {\n"
    "\t\twhile (uart_fifo_get(port, &ch)) /* Counts icount.tx. */\n"
    "\t\t\tliteuart_putchar(port, ch);\n"
    "\t}\n"
    "\n"
    "\tif (kfifo_len(&port->state->port.xmit_fifo) < WAKEUP_CHARS)\n"
    "\t\tuart_write_wakeup(port);\n"
)

# (file, what the change does, anchor that must occur exactly once, text it becomes).
PATCHES = [
    ("liteuart.c", "transmit from the kfifo on Linux >= 6.10",
     _LITEUART_TRANSMIT,
     "#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 10, 0)\n" + _LITEUART_TRANSMIT_6_10 +
     "#else\n" + _LITEUART_TRANSMIT + "#endif\n"),

    ("liteuart.c", "platform remove returns void on Linux >= 6.11",
     "static int liteuart_remove(struct platform_device *pdev)\n"
     "{\n",
     "#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 11, 0)\n"
     "static void liteuart_remove(struct platform_device *pdev) /* hostlink: void since Linux 6.11. */\n"
     "#else\n"
     "static int liteuart_remove(struct platform_device *pdev)\n"
     "#endif\n"
     "{\n"),

    ("liteuart.c", "no return value from remove on Linux >= 6.11",
     "\tuart_remove_one_port(&liteuart_driver, port);\n"
     "\txa_erase(&liteuart_array, uart->id);\n"
     "\n"
     "\treturn 0;\n"
     "}\n",
     "\tuart_remove_one_port(&liteuart_driver, port);\n"
     "\txa_erase(&liteuart_array, uart->id);\n"
     "#if LINUX_VERSION_CODE < KERNEL_VERSION(6, 11, 0)\n"
     "\n"
     "\treturn 0;\n"
     "#endif\n"
     "}\n"),
]


def port_driver(kernel_dir, patches=None):
    """Apply PATCHES to LitePCIe's sources copied in `kernel_dir`.

    Every anchor must occur exactly once; otherwise nothing is written and DriverPatchError says which
    change could not be placed (LitePCIe's sources changed: review the change against them).
    """
    apply_patches(kernel_dir, PATCHES if patches is None else patches, kind="kernel compatibility change")
    return kernel_dir
