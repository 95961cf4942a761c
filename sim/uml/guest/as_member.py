#!/usr/bin/env python3
# This file is part of hostlink.
# Copyright (c) 2026 hostlink developers
# SPDX-License-Identifier: BSD-2-Clause

"""Run a command as a member of the device's group, not root, inside the User-Mode Linux of
./sim.py driver (which runs its commands as root).

    as_member.py DIR -- CMD ...

The device nodes are given what the udev rule shipped with the driver gives them (group `hostlink`,
mode 0660; a numeric group, as in driver_access.py), DIR (in the current folder, the run's shared one)
is created for and owned by the member so that CMD can write its results there, and CMD runs in DIR as
that user (uid 1000, supplementary group `hostlink`, no capability). Exits with CMD's exit status.
"""

import os
import subprocess
import sys

from driver_access import GROUP_GID, MEMBER, drop_to, give_nodes_to_group


def main(argv):
    if len(argv) < 3 or argv[1] != "--":
        print("usage: as_member.py DIR -- CMD ...", file=sys.stderr)
        return 2
    directory, command = argv[0], argv[2:]
    give_nodes_to_group()
    os.makedirs(directory, exist_ok=True)
    os.chown(directory, MEMBER[0], MEMBER[1])
    print(f"group member (uid {MEMBER[0]}, groups {GROUP_GID}, not root) in {directory}: {' '.join(command)}",
          flush=True)
    code = subprocess.call(command, cwd=directory, preexec_fn=drop_to(*MEMBER, [GROUP_GID]))
    print(f"as_member: exit status {code}", flush=True)
    return code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
