# This file is part of hostlink.
# Copyright (c) 2026 hostlink developers
# SPDX-License-Identifier: BSD-2-Clause

"""Run inside User-Mode Linux by test/test_uml_fpu.py: floating-point results must survive what the kernel
does with each process's FPU state (saved and restored through the host's ptrace on every switch): context
switches between processes, signals delivered and returned from, fork. Prints one line, "fpu workload: ok
..." or what differed."""

import math
import os
import signal


def work(seed, n=20000):
    value = 0.0
    for i in range(n):
        value += math.sqrt(i + seed) * 1.0000001
    return value


def main():
    expected = {k: work(k) for k in range(4)}
    signals = [0]

    def on_alarm(signum, frame):
        signals[0] += 1
        work(99, 200)   # Floating point in the handler: the interrupted computation must not see it.

    signal.signal(signal.SIGALRM, on_alarm)
    signal.setitimer(signal.ITIMER_REAL, 0.002, 0.002)
    children = {}
    for k in range(4):
        pid = os.fork()
        if pid == 0:
            os._exit(0 if all(work(k) == expected[k] for _ in range(5)) else 1)
        children[pid] = k
    wrong = sorted(k for pid, k in children.items() if os.waitpid(pid, 0)[1] != 0)
    wrong += [f"parent {k}" for k in range(4) if work(k) != expected[k]]
    signal.setitimer(signal.ITIMER_REAL, 0)
    if wrong:
        print(f"fpu workload: wrong results in {wrong}")
    else:
        print(f"fpu workload: ok ({len(children)} processes, {signals[0]} signals)")


if __name__ == "__main__":
    main()
