# This file is part of hostlink.
# Copyright (c) 2026 hostlink developers
# SPDX-License-Identifier: BSD-2-Clause

"""A vhost-user back-end in pure Python: the device side of User-Mode Linux's virtio devices.

User-Mode Linux's `virtio_uml` (the front-end, `virtio_uml.device=SOCKET:ID`) connects to a unix socket
and sends vhost-user requests (docs: the vhost-user protocol of QEMU's interop documentation):
features, its physical memory as file descriptors (SCM_RIGHTS) to map, and for each virtqueue its
size, the addresses of its split-ring parts and an eventfd to kick the back-end with, plus a pipe to
signal used buffers back. This module answers those requests and gives access to the virtqueues;
nothing here blocks, so the cocotb bench can poll it between simulation steps.
"""

import array
import mmap
import os
import select
import socket
import struct

# Protocol constants -------------------------------------------------------------------------------

VHOST_USER_VERSION         = 0x1
VHOST_USER_FLAG_REPLY      = 1 << 2
VHOST_USER_FLAG_NEED_REPLY = 1 << 3

VHOST_USER_F_PROTOCOL_FEATURES   = 30
VIRTIO_F_VERSION_1               = 32
VHOST_USER_PROTOCOL_F_SLAVE_REQ  = 5

# Requests (front-end to back-end).
GET_FEATURES, SET_FEATURES, SET_OWNER, RESET_OWNER, SET_MEM_TABLE = 1, 2, 3, 4, 5
SET_VRING_NUM, SET_VRING_ADDR, SET_VRING_BASE, GET_VRING_BASE     = 8, 9, 10, 11
SET_VRING_KICK, SET_VRING_CALL, SET_VRING_ERR                     = 12, 13, 14
GET_PROTOCOL_FEATURES, SET_PROTOCOL_FEATURES, GET_QUEUE_NUM       = 15, 16, 17
SET_VRING_ENABLE, SET_SLAVE_REQ_FD                                = 18, 21

VRING_INDEX_MASK = 0xff
VRING_NOFD_MASK  = 1 << 8

# Split virtqueue descriptor flags.
VRING_DESC_F_NEXT     = 1
VRING_DESC_F_WRITE    = 2
VRING_DESC_F_INDIRECT = 4

HEADER = struct.Struct("<III")   # request, flags, size

# Guest memory -------------------------------------------------------------------------------------

class GuestMemory:
    """The front-end's memory regions, mapped: guest (bus) address -> bytes. Under User-Mode Linux a
    guest address is a physical address, which is also what the DMA API hands a device."""
    def __init__(self):
        self.regions = []   # (guest_addr, size, user_addr, mmap)

    def set_table(self, regions, fds):
        self.close()
        for (guest_addr, size, user_addr, mmap_offset), fd in zip(regions, fds):
            # mmap wants a page-aligned offset: map from the page below and remember the skew.
            skew = mmap_offset % mmap.PAGESIZE
            m = mmap.mmap(fd, size + skew, mmap.MAP_SHARED, mmap.PROT_READ | mmap.PROT_WRITE,
                offset=mmap_offset - skew)
            os.close(fd)
            self.regions.append((guest_addr, size, user_addr, memoryview(m)[skew:], m))

    def close(self):
        for region in self.regions:
            region[3].release()
            region[4].close()
        self.regions = []

    def _find(self, address, length, user=False):
        for guest_addr, size, user_addr, view, _ in self.regions:
            base = user_addr if user else guest_addr
            if base <= address and address + length <= base + size:
                return view, address - base
        raise ValueError(f"guest address 0x{address:x}+{length} is outside the front-end's memory")

    def view(self, address, length, user=False):
        view, offset = self._find(address, length, user)
        return view[offset:offset + length]

    def read(self, address, length, user=False):
        return bytes(self.view(address, length, user))

    def write(self, address, data, user=False):
        self.view(address, len(data), user)[:] = data

# Split virtqueue ----------------------------------------------------------------------------------

class VirtQueue:
    """One split virtqueue: take available descriptor chains, return them as used."""
    def __init__(self, memory, index):
        self.memory    = memory
        self.index     = index
        self.num       = 0
        self.desc = self.avail = self.used = None
        self.last_avail = 0
        self.used_idx   = 0
        self.kick_fd = self.call_fd = None
        self.enabled = False

    @property
    def ready(self):
        return self.num and self.desc is not None

    def _u16(self, address):
        return struct.unpack("<H", self.memory.read(address, 2, user=True))[0]

    def pending(self):
        return self.ready and self._u16(self.avail + 2) != self.last_avail

    def pop(self):
        """The next available chain as (head, [(address, length, writable), ...]), or None."""
        if not self.pending():
            return None
        head = self._u16(self.avail + 4 + 2*(self.last_avail % self.num))
        self.last_avail = (self.last_avail + 1) & 0xffff
        chain, index, table, count = [], head, self.desc, self.num
        for _ in range(count + 1):
            address, length, flags, nxt = struct.unpack("<QIHH",
                self.memory.read(table + 16*index, 16, user=table == self.desc))
            if flags & VRING_DESC_F_INDIRECT:
                table, count, index = address, length // 16, 0
                continue
            chain.append((address, length, bool(flags & VRING_DESC_F_WRITE)))
            if not flags & VRING_DESC_F_NEXT:
                return head, chain
            index = nxt
        raise ValueError(f"virtqueue {self.index}: descriptor chain at {head} loops")

    def push(self, head, written):
        """Return chain `head` as used, `written` bytes written into it, and signal the front-end."""
        slot = self.used + 4 + 8*(self.used_idx % self.num)
        self.memory.write(slot, struct.pack("<II", head, written), user=True)
        self.used_idx = (self.used_idx + 1) & 0xffff
        self.memory.write(self.used + 2, struct.pack("<H", self.used_idx), user=True)
        if self.call_fd is not None:
            try:
                os.write(self.call_fd, struct.pack("<Q", 1))
            except BlockingIOError:
                pass   # The pipe is full of earlier signals: the front-end will see this one too.
            except BrokenPipeError:
                pass   # The front-end is gone; the back-end's owner sees the connection closed.

    def drain_kicks(self):
        if self.kick_fd is not None:
            try:
                os.read(self.kick_fd, 8)
            except BlockingIOError:
                pass

# Back-end -----------------------------------------------------------------------------------------

class VhostUserBackend:
    """Listens on `path`; `poll()` serves the front-end's requests without blocking."""
    def __init__(self, path, num_queues, max_queue_size=1024):
        self.path   = path
        self.memory = GuestMemory()
        self.queues = [VirtQueue(self.memory, i) for i in range(num_queues)]
        self.max_queue_size = max_queue_size
        self.features       = (1 << VHOST_USER_F_PROTOCOL_FEATURES) | (1 << VIRTIO_F_VERSION_1)
        # Without the slave-request channel, virtio_uml (seen on 6.1) has no interrupt to share the queues'
        # call pipes with and its probe fails (-EBUSY).
        self.protocol_features = 1 << VHOST_USER_PROTOCOL_F_SLAVE_REQ
        self.slave_fd  = None
        self.conn      = None
        self.connected = False
        self.closed    = False
        if os.path.exists(path):
            os.unlink(path)
        self.listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.listener.bind(path)
        self.listener.listen(1)
        self.listener.setblocking(False)

    def close(self):
        for q in self.queues:
            for fd in (q.kick_fd, q.call_fd):
                if fd is not None:
                    os.close(fd)
            q.kick_fd = q.call_fd = None
        if self.slave_fd is not None:
            os.close(self.slave_fd)
            self.slave_fd = None
        if self.conn:
            self.conn.close()
        self.listener.close()
        self.memory.close()
        if os.path.exists(self.path):
            os.unlink(self.path)

    def poll(self):
        """Serve whatever the front-end sent; return True if a request was served."""
        if self.conn is None:
            try:
                self.conn, _ = self.listener.accept()
            except BlockingIOError:
                return False
            self.conn.setblocking(True)
            self.connected = True
        served = False
        while not self.closed and select.select([self.conn], [], [], 0)[0]:
            self._serve_one()
            served = True
        return served

    def _recv_exact(self, size, fds):
        data = bytearray()
        while len(data) < size:
            chunk, ancillary, _, _ = self.conn.recvmsg(size - len(data), socket.CMSG_SPACE(8 * 4))
            if not chunk:
                raise ConnectionError("the vhost-user front-end closed the connection")
            for level, kind, payload in ancillary:
                if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
                    received = array.array("i")
                    received.frombytes(payload[:len(payload) - len(payload) % received.itemsize])
                    fds.extend(received)
            data += chunk
        return bytes(data)

    def _reply(self, request, payload):
        flags = VHOST_USER_VERSION | VHOST_USER_FLAG_REPLY
        self.conn.sendall(HEADER.pack(request, flags, len(payload)) + payload)

    def _serve_one(self):
        fds = []
        try:
            request, flags, size = HEADER.unpack(self._recv_exact(HEADER.size, fds))
            payload = self._recv_exact(size, fds) if size else b""
        except ConnectionError:
            self.closed = True
            return
        u64 = lambda: struct.unpack_from("<Q", payload)[0]
        if request == GET_FEATURES:
            self._reply(request, struct.pack("<Q", self.features))
        elif request == GET_PROTOCOL_FEATURES:
            self._reply(request, struct.pack("<Q", self.protocol_features))
        elif request == GET_QUEUE_NUM:
            self._reply(request, struct.pack("<Q", len(self.queues)))
        elif request in (SET_FEATURES, SET_PROTOCOL_FEATURES, SET_OWNER, RESET_OWNER):
            pass
        elif request == SET_MEM_TABLE:
            count, = struct.unpack_from("<I", payload)
            regions = [struct.unpack_from("<QQQQ", payload, 8 + 32*i) for i in range(count)]
            if len(fds) != count:
                raise ValueError(f"SET_MEM_TABLE: {count} regions but {len(fds)} file descriptors")
            self.memory.set_table(regions, fds)
            fds = []
        elif request == SET_SLAVE_REQ_FD:
            self.slave_fd, fds = fds[0], fds[1:]
        elif request in (SET_VRING_NUM, SET_VRING_BASE, SET_VRING_ENABLE, GET_VRING_BASE):
            index, num = struct.unpack_from("<II", payload)
            q = self._queue(index)
            if request == SET_VRING_NUM:
                if not 0 < num <= self.max_queue_size:
                    raise ValueError(f"virtqueue {index}: size {num} over {self.max_queue_size}")
                q.num = num
            elif request == SET_VRING_BASE:
                q.last_avail = q.used_idx = num
            elif request == SET_VRING_ENABLE:
                q.enabled = bool(num)
            else:
                q.enabled = False
                self._reply(request, struct.pack("<II", index, q.last_avail))
        elif request == SET_VRING_ADDR:
            index, _, desc, used, avail, _ = struct.unpack_from("<IIQQQQ", payload)
            q = self._queue(index)
            q.desc, q.used, q.avail = desc, used, avail
        elif request in (SET_VRING_KICK, SET_VRING_CALL, SET_VRING_ERR):
            value = u64()
            q = self._queue(value & VRING_INDEX_MASK)
            fd = None if value & VRING_NOFD_MASK else fds.pop(0)
            if fd is not None:
                os.set_blocking(fd, False)
            if request == SET_VRING_KICK:
                q.kick_fd = self._replace(q.kick_fd, fd)
            elif request == SET_VRING_CALL:
                q.call_fd = self._replace(q.call_fd, fd)
            elif fd is not None:
                os.close(fd)
        else:
            raise ValueError(f"vhost-user request {request} is not supported by this back-end")
        for fd in fds:
            os.close(fd)
        if flags & VHOST_USER_FLAG_NEED_REPLY:
            self._reply(request, struct.pack("<Q", 0))

    def _queue(self, index):
        if index >= len(self.queues):
            raise ValueError(f"virtqueue {index} does not exist (the device has {len(self.queues)})")
        return self.queues[index]

    @staticmethod
    def _replace(old, new):
        if old is not None:
            os.close(old)
        return new
