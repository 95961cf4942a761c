#!/usr/bin/env python3
# This file is part of hostlink.
# Copyright (c) 2026 hostlink developers
# SPDX-License-Identifier: BSD-2-Clause

"""What a local user can and cannot do with the hardened driver (software/driver/hardening.py).

Runs as root inside the User-Mode Linux of ./sim.py driver. The device nodes are given what the udev rule
shipped with the driver gives them (group `hostlink`, mode 0660; a numeric group here, the host's
/etc/group being read-only), then unprivileged processes try:

- a user outside the group: opening /dev/litepcie0 is refused (EACCES);
- a user in the group: a register read inside BAR0 works; reads outside BAR0 or unaligned are EINVAL;
  a register write is EPERM (it could program the DMA with any bus address) and leaves the register as
  it was; LitePCIe's `dma_test` runs and checks data (through dma_test_until.py, whose output follows).

    driver_access.py CSR_JSON -- DMA_TEST_COMMAND ...

Prints one line per check and exits 1 at the first that fails.
"""

import errno
import glob
import json
import os
import subprocess
import sys

from pattern_record import REG, LITEPCIE_IOCTL_REG

GROUP_GID  = 4242          # Stands for the group `hostlink`.
MEMBER     = (1000, 1000)  # uid, primary gid; in GROUP_GID too.
OUTSIDER   = (1001, 1001)


def drop_to(uid, gid, groups):
    def preexec():
        os.setgroups(groups)
        os.setgid(gid)
        os.setuid(uid)
    return preexec


def as_user(uid, gid, groups, function):
    """Run `function()` in a child with those credentials; returns what it returns (an int)."""
    pid = os.fork()
    if pid == 0:
        try:
            drop_to(uid, gid, groups)()
            os._exit(function())
        except BaseException as error:
            print(f"unexpected: {error!r}", flush=True)
            os._exit(99)
    return os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])


def reg(fd, addr, value=0, write=False):
    import fcntl
    buf = bytearray(REG.pack(addr, value, int(write)))
    fcntl.ioctl(fd, LITEPCIE_IOCTL_REG, buf)
    return REG.unpack(buf)[1]


def expect_errno(what, code, function):
    try:
        function()
    except OSError as error:
        if error.errno == code:
            print(f"ok: {what}: {errno.errorcode[code]}", flush=True)
            return True
        print(f"FAIL: {what}: {errno.errorcode.get(error.errno, error.errno)}, not {errno.errorcode[code]}",
              flush=True)
        return False
    print(f"FAIL: {what}: allowed, not {errno.errorcode[code]}", flush=True)
    return False


def bar0_length():
    devices = glob.glob("/sys/bus/pci/drivers/litepcie/*/resource")
    if len(devices) != 1:
        raise RuntimeError(f"expected one device bound to litepcie, found {devices}")
    with open(devices[0]) as f:
        start, end, _ = (int(x, 16) for x in f.readline().split())
    return end - start + 1


def give_nodes_to_group():
    """The device nodes as the udev rule leaves them: root:GROUP_GID, mode 0660. Returns them."""
    nodes = sorted(glob.glob("/dev/litepcie[0-9]*"))
    for node in nodes:
        os.chown(node, 0, GROUP_GID)
        os.chmod(node, 0o660)
    return nodes


def main(argv):
    if len(argv) < 3 or argv[1] != "--":
        print("usage: driver_access.py CSR_JSON -- DMA_TEST_COMMAND ...", file=sys.stderr)
        return 2
    with open(argv[0]) as f:
        csrs = json.load(f)
    scratch  = csrs["csr_registers"]["ctrl_scratch"]["addr"]
    csr_base = csrs["memories"]["csr"]["base"]   # BAR0 starts at the CSR region (LitePCIe's CSR_BASE).
    bar0_len = bar0_length()
    nodes    = give_nodes_to_group()
    print(f"{', '.join(nodes)}: root:{GROUP_GID} 0660 (as the udev rule); BAR0 {bar0_len} bytes", flush=True)

    def outsider():
        return 0 if expect_errno("outside the group: open /dev/litepcie0", errno.EACCES,
            lambda: os.open("/dev/litepcie0", os.O_RDWR)) else 1

    def member():
        fd = os.open("/dev/litepcie0", os.O_RDWR)
        before = reg(fd, scratch)
        print(f"ok: group member: register read inside BAR0 (scratch = 0x{before:08x})", flush=True)
        ok = all([
            expect_errno("group member: read at the end of BAR0", errno.EINVAL,
                lambda: reg(fd, csr_base + bar0_len)),
            expect_errno("group member: read 4 GiB - 4 past the CSR base", errno.EINVAL,
                lambda: reg(fd, 0xfffffffc)),
            expect_errno("group member: unaligned read", errno.EINVAL, lambda: reg(fd, scratch + 1)),
            expect_errno("group member: register write", errno.EPERM,
                lambda: reg(fd, scratch, before ^ 0xffffffff, write=True)),
        ])
        after = reg(fd, scratch)
        if after != before:
            print(f"FAIL: the refused write changed scratch to 0x{after:08x}", flush=True)
            ok = False
        os.close(fd)
        return 0 if ok else 1

    if as_user(*OUTSIDER, [], outsider) != 0 or as_user(*MEMBER, [GROUP_GID], member) != 0:
        return 1
    print(f"group member (uid {MEMBER[0]}, not root): {' '.join(argv[2:])}", flush=True)
    code = subprocess.call(argv[2:], preexec_fn=drop_to(*MEMBER, [GROUP_GID]))
    print(f"{'ok' if code == 0 else 'FAIL'}: group member: dma_test exited with {code}", flush=True)
    return 0 if code == 0 else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
