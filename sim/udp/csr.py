# This file is part of hostlink.
# Copyright (c) 2026 hostlink developers
# SPDX-License-Identifier: BSD-2-Clause

"""CSR reads and writes of the simulated SoC through LiteX's UARTBone protocol, over the TCP port of its
`serial2tcp` simulator module inside the simulation's network namespace."""

import os
import socket
import threading
import time

# Control (UARTBone over serial2tcp) ---------------------------------------------------------------

CLONE_NEWNET = 0x40000000


def connect_in_netns(netns, port, timeout):
    """A TCP connection to 127.0.0.1:port inside `netns`, made from a helper thread.

    setns() moves only the calling thread, so the thread enters the namespace, connects and ends;
    the socket stays in the namespace it was created in and is used from the main thread.
    """
    import ctypes
    libc   = ctypes.CDLL(None, use_errno=True)
    result = {}

    def worker():
        try:
            fd = os.open(f"/run/netns/{netns.name}", os.O_RDONLY)
            try:
                if libc.setns(fd, CLONE_NEWNET) != 0:
                    raise OSError(ctypes.get_errno(), "setns into the simulation's namespace failed")
            finally:
                os.close(fd)
            deadline = time.monotonic() + timeout
            while True:
                try:
                    result["sock"] = socket.create_connection(("127.0.0.1", port), timeout=timeout)
                    return
                except ConnectionRefusedError:
                    if time.monotonic() > deadline:
                        raise
                    time.sleep(0.05)
        except BaseException as e:
            result["error"] = e

    t = threading.Thread(target=worker)
    t.start()
    t.join()
    if "error" in result:
        raise RuntimeError(f"cannot reach the simulation's control port {port}: {result['error']}")
    return result["sock"]


class CSRClient:
    """CSR reads and writes through LiteX's UARTBone protocol."""
    CMD_WRITE = 0x01
    CMD_READ  = 0x02

    def __init__(self, sock, csrs, timeout):
        self.sock = sock
        self.csrs = csrs
        self.sock.settimeout(timeout)

    def _addr(self, name):
        if name not in self.csrs:
            raise KeyError(f"the simulated SoC has no CSR {name!r}")
        return self.csrs[name]

    def write(self, name, value):
        addr, size = self._addr(name)
        words = [(value >> (32 * (size - 1 - i))) & 0xffffffff for i in range(size)]
        msg = bytes([self.CMD_WRITE, size]) + (addr // 4).to_bytes(4, "big")
        msg += b"".join(w.to_bytes(4, "big") for w in words)
        self.sock.sendall(msg)

    def read(self, name):
        addr, size = self._addr(name)
        self.sock.sendall(bytes([self.CMD_READ, size]) + (addr // 4).to_bytes(4, "big"))
        data = b""
        while len(data) < 4 * size:
            chunk = self.sock.recv(4 * size - len(data))
            if not chunk:
                raise RuntimeError("the simulation closed its control connection")
            data += chunk
        value = 0
        for i in range(size):
            value = (value << 32) | int.from_bytes(data[4 * i:4 * i + 4], "big")
        return value
