# This file is part of hostlink.
# Copyright (c) 2026 hostlink developers
# SPDX-License-Identifier: BSD-2-Clause

"""A status line for long simulations: which row runs, simulated cycles per second, time left.

Shown only on a terminal (stdout and stderr both terminals), rewritten in place on stderr, and cleared
before any other output; a run whose output goes to a file or a pipe prints exactly what it printed
before. Simulated figures never depend on it: it only reads counters the runs keep anyway.
"""

import os
import sys
import time

__all__ = ["Progress", "format_seconds"]


def format_seconds(seconds):
    """3725 -> '1 h 02 min', 95 -> '1 min 35 s', 7 -> '7 s'."""
    seconds = max(0, int(round(seconds)))
    if seconds >= 3600:
        return f"{seconds // 3600} h {seconds % 3600 // 60:02d} min"
    if seconds >= 60:
        return f"{seconds // 60} min {seconds % 60:02d} s"
    return f"{seconds} s"


class Progress:
    """One status line on `stream` (stderr), at most every `interval` seconds of wall-clock time."""
    def __init__(self, label, stream=None, enabled=None, interval=1.0):
        self.label    = label
        self.stream   = stream or sys.stderr
        self.enabled  = (sys.stdout.isatty() and self.stream.isatty()) if enabled is None else enabled
        self.interval = interval
        self.shown    = False
        self.last     = 0.0

    def due(self):
        """Whether an update would be shown now (callers skip reading counters when it would not)."""
        return self.enabled and time.monotonic() - self.last >= self.interval

    def show(self, row, cycles_per_s=None, seconds_left=None):
        if not self.due():
            return
        self.last = time.monotonic()
        parts = [f"{self.label}: {row}"]
        if cycles_per_s is not None:
            parts.append(f"{cycles_per_s / 1e3:,.0f} k simulated cycles/s")
        if seconds_left is not None:
            parts.append(f"about {format_seconds(seconds_left)} left")
        try:
            width = os.get_terminal_size(self.stream.fileno()).columns - 1
        except OSError:
            width = 0
        if width < 40:   # Unknown (a new pseudo-terminal says 0 columns): do not cut the line short.
            width = 159
        self.stream.write("\r\x1b[K" + ", ".join(parts)[:width])
        self.stream.flush()
        self.shown = True

    def clear(self):
        """Erase the status line (before other output, and at the end)."""
        if self.shown:
            self.stream.write("\r\x1b[K")
            self.stream.flush()
            self.shown = False
            self.last  = 0.0


class RateEstimate:
    """Work done against wall-clock time since the first sample: the rate and the time left."""
    def __init__(self):
        self.start = None

    def update(self, done, total):
        now = time.monotonic()
        if self.start is None or done < self.start[1]:
            self.start = (now, done)
            return None
        elapsed, progress = now - self.start[0], done - self.start[1]
        if elapsed <= 0 or progress <= 0:
            return None
        return (total - done) * elapsed / progress
