# This file is part of hostlink.
# Copyright (c) 2026 hostlink developers
# SPDX-License-Identifier: BSD-2-Clause

"""One process at a time in a shared build folder.

Two runs that need the same simulated SoC (two `./sim.py dma` in two shells, or two test workers under
`make test`) would otherwise generate and compile it into the same folder at once, or clear each other's
User-Mode Linux run folder. `held(path)` takes an exclusive lock on `path + ".lock"` for the duration of
the `with` block; a second run says what it waits for and continues once the first is done, finding the
model built. The lock is the kernel's (`flock`), so a run that dies releases it.
"""

import contextlib
import fcntl
import os


@contextlib.contextmanager
def held(path, say=None):
    """Hold the lock of the folder `path` (the file `path.lock` beside it). `say(message)`, if given, is
    told once when another process holds the lock and this one waits."""
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    with open(path + ".lock", "a") as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            if say is not None:
                say(f"waiting for another run using {path} to finish with it")
            fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)
