# This file is part of hostlink.
# Copyright (c) 2026 hostlink developers
# SPDX-License-Identifier: BSD-2-Clause

"""The simulations' plots (./sim.py dma --plot, --sweep-latency --plot, ./sim.py zynq --plot): one figure
size, grid and legend for all."""

from contextlib import contextmanager


@contextmanager
def png(path, dpi=120):
    """The axes of a figure written to `path` (PNG), with its grid and legend, when the block ends."""
    import matplotlib
    matplotlib.use("Agg")   # Files only: no display.
    import matplotlib.pyplot as plt
    figure, axes = plt.subplots(figsize=(8, 5))
    try:
        yield axes
        axes.grid(True, which="both", alpha=0.3)
        axes.legend(fontsize=8)
        figure.tight_layout()
        figure.savefig(path, dpi=dpi)
    finally:
        plt.close(figure)
