# This file is part of hostlink.
# Copyright (c) 2026 hostlink developers
# SPDX-License-Identifier: BSD-2-Clause

"""Network namespaces for the UDP simulation and its tests.

Every simulated frame must stay on this machine: the TAP device of LiteX's simulated Ethernet and
every host socket live in a namespace created here with a unique name and deleted on exit (also on
an exception or Ctrl-C). The namespace only has `lo` and the simulation's TAP device, so nothing in
it can route anywhere else.
"""

import os
import shutil
import signal
import subprocess
import time
import uuid

# Availability -------------------------------------------------------------------------------------

def unavailable_reason():
    """Why namespaces with a TAP device cannot be used here, or None when they can."""
    if os.geteuid() != 0:
        return "network namespaces and TAP devices need root (run as root, e.g. in CI)"
    if shutil.which("ip") is None:
        return "'ip' (iproute2) is missing: apt-get install iproute2"
    if shutil.which("setpriv") is None:
        return "'setpriv' (util-linux) is missing: apt-get install util-linux"
    if not os.path.exists("/dev/net/tun"):
        return "/dev/net/tun is missing: this kernel or container has no TUN/TAP support"
    name = f"hlcheck-{uuid.uuid4().hex[:8]}"
    r = subprocess.run(["ip", "netns", "add", name], capture_output=True, text=True)
    if r.returncode != 0:
        return f"'ip netns add' fails here: {r.stderr.strip()}"
    subprocess.run(["ip", "netns", "del", name], capture_output=True)
    return None

# Namespace ----------------------------------------------------------------------------------------

class NetNamespace:
    """A uniquely named network namespace, deleted on exit of the `with` block.

    Processes are started inside with `popen()`/`run()` (through `ip netns exec`), so the caller
    itself never changes namespace.
    """
    def __init__(self, prefix="hostlink"):
        if not prefix.replace("-", "").isalnum() or len(prefix) > 16:
            raise ValueError(f"prefix must be short and alphanumeric (dashes allowed), not {prefix!r}")
        self.name    = f"{prefix}-{os.getpid()}-{uuid.uuid4().hex[:6]}"
        self.created = False

    def __enter__(self):
        reason = unavailable_reason()
        if reason is not None:
            raise RuntimeError(f"cannot create a network namespace: {reason}")
        subprocess.run(["ip", "netns", "add", self.name], check=True, capture_output=True)
        self.created = True
        try:
            self.run(["ip", "link", "set", "lo", "up"], check=True)
        except BaseException:
            self.delete()
            raise
        return self

    def __exit__(self, *exc):
        self.delete()
        return False

    def pids(self):
        r = subprocess.run(["ip", "netns", "pids", self.name], capture_output=True, text=True)
        return [int(p) for p in r.stdout.split()]

    def delete(self):
        """Ends every process still in the namespace, then deletes it.

        The namespace only outlives its name while a process runs in it; any such process was
        started here (the name is unique to this object), so it is ended rather than left behind
        with the TAP device.
        """
        if not self.created:
            return
        for sig, wait in ((signal.SIGTERM, 2.0), (signal.SIGKILL, 2.0)):
            pids = self.pids()
            for pid in pids:
                try:
                    os.kill(pid, sig)
                except ProcessLookupError:
                    pass
            deadline = time.monotonic() + wait
            while pids and time.monotonic() < deadline:
                time.sleep(0.02)
                pids = self.pids()
            if not pids:
                break
        subprocess.run(["ip", "netns", "del", self.name], capture_output=True)
        self.created = False

    def command(self, argv):
        return ["ip", "netns", "exec", self.name] + [str(a) for a in argv]

    def run(self, argv, check=False, **kwargs):
        kwargs.setdefault("capture_output", True)
        kwargs.setdefault("text", True)
        return subprocess.run(self.command(argv), check=check, **kwargs)

    def popen(self, argv, **kwargs):
        """Starts a process in the namespace that dies with its parent (e.g. on SIGKILL).

        util-linux's setpriv sets the parent-death signal and execs the command, so the process
        keeps its pid and parent. (A Python preexec_fn would do the same but runs fork hooks in
        which a signal arriving at the wrong moment leaves the interpreter's locks held.)
        """
        return subprocess.Popen(self.command(["setpriv", "--pdeathsig", "KILL"] + list(argv)), **kwargs)

    def snmp(self):
        """The namespace's /proc/net/snmp as {"Ip": {...}, "Udp": {...}, ...} of ints."""
        text = self.run(["cat", "/proc/net/snmp"], check=True).stdout
        return parse_snmp(text)

# Kernel counters ----------------------------------------------------------------------------------

# The counters that say the kernel refused or dropped one of our frames.
KERNEL_ERROR_COUNTERS = [
    ("Ip",  "InHdrErrors"),
    ("Ip",  "InAddrErrors"),
    ("Udp", "InCsumErrors"),
    ("Udp", "NoPorts"),
    ("Udp", "RcvbufErrors"),
]


def parse_snmp(text):
    """Parses /proc/net/snmp: pairs of lines, a header line of names and a line of values."""
    lines  = [l.split() for l in text.splitlines() if l.strip()]
    tables = {}
    for names, values in zip(lines[0::2], lines[1::2]):
        if names[0] != values[0] or not names[0].endswith(":"):
            raise ValueError(f"unexpected /proc/net/snmp layout near {names[0]!r}")
        tables[names[0][:-1]] = {n: int(v) for n, v in zip(names[1:], values[1:])}
    return tables


def kernel_error_counters(snmp):
    return {f"{table}.{name}": snmp[table][name] for table, name in KERNEL_ERROR_COUNTERS}
