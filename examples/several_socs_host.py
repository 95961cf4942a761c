#!/usr/bin/env python3
# This file is part of hostlink.
# Copyright (c) 2026 hostlink developers
# SPDX-License-Identifier: BSD-2-Clause

"""Every hostlink board in the host at once, whatever its SoC: a ZC706 and a VC709 side by side, each served by
its own SoC's driver. Data out and back through each board's first channel (the DMA's loopback), all boards
streaming at once, every byte checked. Copy it to start a program that drives boards of several SoCs.

    several_socs_host.py                    # every board of every hostlink driver loaded
    several_socs_host.py --size 4M --driver zc706_litepcie

Each SoC's driver is generated with a name of its own (`./targets/zc706.py --driver-name zc706_litepcie`,
doc/driver.md), so both load in one host; hostlink.host lists them all (list_drivers, list_boards) and opens
any of their nodes by path. In the simulation, a ZC706 and a VC709 on one machine:

    ./sim.py driver --board zc706,vc709 -- python3 $PWD/examples/several_socs_host.py --size 256K

It needs Python and the drivers only (hostlink.host, no compiler).
"""

import argparse
import os
import random
import sys
import threading
import time

try:
    from hostlink.host import Channel, HostlinkError, driver_of, list_boards, list_drivers
except ImportError:   # Run from a checkout: the repository's root holds the package.
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    from hostlink.host import Channel, HostlinkError, driver_of, list_boards, list_drivers


def stream(path, size, seed, results):
    """`size` random bytes out through the board's channel at `path` and back by its loopback; what came back,
    compared, into results[path]."""
    data = random.Random(seed).randbytes(size)
    try:
        with Channel(path, flow="lossless", timeout=120) as channel:
            channel.loopback(True)
            start, cycles = time.monotonic(), channel.cycles()
            back = channel.transfer(data)
            seconds, cycles = time.monotonic() - start, channel.cycles() - cycles
            channel.loopback(False)
    except HostlinkError as error:
        results[path] = error
        return
    wrong = sum(1 for got, sent in zip(back, data) if got != sent) + abs(len(back) - len(data))
    results[path] = (wrong, seconds, cycles)


def parse_size(text):
    scale = {"K": 1 << 10, "M": 1 << 20}.get(text[-1:].upper(), 1)
    return int(text[:-1] if scale > 1 else text) * scale


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.strip().splitlines()[0])
    p.add_argument("--size", type=parse_size, default=1 << 20,
        help="Bytes through each board, a whole number of its ring's buffers (default 1M).")
    p.add_argument("--driver", action="append", metavar="NAME",
        help="Only this driver's boards (again for more; default: every hostlink driver's).")
    p.add_argument("--seed", type=int, default=1)
    args = p.parse_args(argv)
    drivers = list_drivers()
    unknown = [name for name in args.driver or [] if name not in drivers]
    if unknown or not drivers:
        print(f"several_socs_host.py: no hostlink driver {', '.join(unknown) or 'loaded'} (loaded: "
              f"{', '.join(drivers) or 'none'}): load each SoC's NAME.ko (doc/driver.md)", file=sys.stderr)
        return 1
    # Each board's first channel, of each driver chosen.
    paths = [nodes[0] for name in (args.driver or drivers) for nodes in list_boards(name).values()]
    results, threads = {}, []
    for i, path in enumerate(paths):
        threads.append(threading.Thread(target=stream, args=(path, args.size, args.seed + i, results)))
        threads[-1].start()
    for thread in threads:
        thread.join()
    failed = 0
    for path in paths:
        name, soc = driver_of(path)
        outcome = results[path]
        if isinstance(outcome, HostlinkError):
            print(f"several_socs_host.py: {outcome}", file=sys.stderr)
            failed += 1
            continue
        wrong, seconds, cycles = outcome
        print(f"{args.size} bytes through {path} (driver {name}, SoC \"{soc}\") and back in {seconds:.3f} s, "
              f"{cycles} device cycles: {wrong} bytes wrong")
        failed += wrong != 0
    print(f"{len(paths)} boards of {len({driver_of(path)[0] for path in paths})} SoCs at once: "
          f"{'all right' if not failed else f'{failed} failed'}")
    return 0 if paths and not failed else 1


if __name__ == "__main__":
    sys.exit(main())
