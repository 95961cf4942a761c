# This file is part of hostlink.
# Copyright (c) 2026 hostlink developers
# SPDX-License-Identifier: BSD-2-Clause

"""hostlink.host: your program's side of a hostlink PCIe SoC, through its generated Linux driver.

    from hostlink.host import Channel

    with Channel(0, flow="lossless") as channel:      # /dev/litepcie0: DMA channel 0 of the first board
        results = channel.transfer(samples)          # host -> your core -> host, overlapped
        more    = channel.read(1 << 20)              # FPGA -> host only

Pure Python over the driver's device nodes (read(), write(), ioctl()) and the standard library: it runs
where the driver is loaded and Python is installed, without a compiler and without the project's
virtualenv; `bytes`, `bytearray` and numpy arrays (anything with the buffer protocol) go in, `bytes` come
out. Pure Python rather than bindings over a C library, so that nothing has to be built on the machine
that runs it; the copies through the driver cost host CPU time, not link time.

Flow modes (doc/user_cores.md, "Flow modes"): "lossless" (the default: the DMA moves only buffers you
have written or read, however slow your program is), "realtime" (FPGA to host from a source that cannot
wait: data dropped between buffers, each buffer headed by what was dropped; `read_buffers()` parses the
headers), "packets" (lossless, packets of any length both ways: `write(data)` sends one packet, which
your core gets with `last` at its final byte; your core's `last` ends a buffer, its header gives the
length, and `read_packets()` gives you the core's packets whole) and "loop" (LitePCIe's own, which loses data
when the program falls behind). The driver reads the flow gate's exact count of buffers done on each call;
a call that finds nothing to do sleeps until the DMA's interrupt says a buffer is done (or room is free),
with no polling, and a program that keeps up takes no interrupt at all.

Several SoCs in one host (doc/host_api.md, "Several SoCs in one host"): each SoC's driver has a name of its
own (`--driver-name`, /dev/<name>N); list_drivers() names every hostlink driver loaded and its SoC,
list_devices() and list_boards() cover them all, and a Channel opens a node of any of them by its path.

Every failure raises `HostlinkError` (an OSError: `errno` and a message that says what to do): no device,
no permission, a channel another program holds, a SoC without flow gates, a size that is not whole
buffers, a DMA that makes no progress within `timeout` seconds (ETIMEDOUT), a call another thread
cancelled (ECANCELED). A data call that fails part-way says how far it got: the error's `sent` (bytes
written into the driver's ring) and `data` (the bytes received until then).

Threads: a Channel may be used from several threads at once. A reader thread and a writer thread never
wait on each other (each direction's calls take turns apart; a call sleeps holding only its own
direction's turn), wait() takes neither, and cancel() ends the others' blocking calls. Ctrl-C
(KeyboardInterrupt) ends a blocking call at once; a signal handler that does not raise lets it go on.
close() first waits until what was written has been taken by the FPGA (drain()).
"""

import errno
import fcntl
import glob
import mmap
import os
import re
import select
import threading
import time

try:
    from hostlink.protocol import FLOW_MODES as FLOWS, FRAMED_FLOWS as FRAMED, HEADER, HEADER_BYTES, \
        HEADER_FLAG_END, HEADER_MAGIC, IOCTLS, STATS_DIRECTION_FIELDS, frame_packet
except ModuleNotFoundError:
    # `python3 host.py` (the boards, main() below): run as a script, its folder is on the path, not the package.
    from protocol import FLOW_MODES as FLOWS, FRAMED_FLOWS as FRAMED, HEADER, HEADER_BYTES, \
        HEADER_FLAG_END, HEADER_MAGIC, IOCTLS, STATS_DIRECTION_FIELDS, frame_packet

__all__ = ["Channel", "HostlinkError", "Buffer", "list_drivers", "list_devices", "list_boards", "board_of", "driver_of",
    "FLOWS", "HEADER_BYTES", "HEADER_MAGIC"]

DEFAULT_DRIVER = "litepcie"      # LitePCIe's name, a generated driver's unless named (--driver-name).
SYS_MODULES    = "/sys/module"   # Where each loaded module shows its parameters.
DEVICES        = "/dev"


class HostlinkError(OSError):
    """A failure of the driver or the device, with its errno and a message that says what to do. A data
    call that failed part-way (a timeout, cancel()) sets `sent` (bytes written into the driver's ring) and
    `data` (the bytes received until then); both are 0 and b"" otherwise."""
    sent = 0
    data = b""


def _error(code, message, sent=0, data=b""):
    error = HostlinkError(code, f"{message} ({errno.errorcode.get(code, code)})")
    error.sent, error.data = sent, bytes(data)
    return error


_ADVICE = {
    errno.ENOTTY: "the driver lacks this call: rebuild it with hostlink (`--driver`)",
    errno.EPERM:  "not permitted for your user",
    errno.EIO:    "the device does not answer: is it still there?",
    errno.ENODEV: "the board is gone (removed, unplugged or its driver unbound): close the channel",
}


def _advice(code):
    return _ADVICE.get(code, os.strerror(code))


def list_drivers():
    """The hostlink drivers loaded: {the driver's name: the identifier of the SoC it is for}. Each shows its SoC
    in /sys/module/<name>/parameters/soc_identifier (software/driver/identity.py); its nodes are /dev/<name>N."""
    drivers = {}
    for path in sorted(glob.glob(os.path.join(SYS_MODULES, "*", "parameters", "soc_identifier"))):
        try:
            with open(path) as f:
                drivers[path.split(os.sep)[-3]] = f.read().strip()
        except OSError:   # Unloaded since the listing.
            continue
    return drivers


def _driver_name(node):
    """The driver's name in a device node's name: litepcie of litepcie3, zc706_litepcie of zc706_litepcie0."""
    return node.rstrip("0123456789")


def list_devices():
    """The DMA channels' device nodes of every hostlink driver loaded (list_drivers()) and of LitePCIe's own
    (/dev/litepcie0, /dev/litepcie1, ...): litepcie's first, then by driver name, each in channel order."""
    nodes = []
    for name in sorted({DEFAULT_DRIVER, *list_drivers()}, key=lambda name: (name != DEFAULT_DRIVER, name)):
        for path in glob.glob(os.path.join(DEVICES, glob.escape(name) + "[0-9]*")):
            if _driver_name(os.path.basename(path)) == name:
                nodes.append((name != DEFAULT_DRIVER, name, int(os.path.basename(path)[len(name):]), path))
    return [path for *_, path in sorted(nodes)]


def list_boards(driver=None):
    """The boards the drivers serve: {the board's PCI address: its channels' device nodes, channel 0 first};
    `driver`: only that driver's (driver_of() says which driver and SoC a board's nodes are). A driver's
    nodes are numbered across its boards (two boards of 2 channels: /dev/litepcie0 and 1, then 2 and 3). A
    driver that does not name its boards (LitePCIe's own) puts every node under None."""
    boards = {}
    for path in list_devices():
        if driver is not None and _driver_name(os.path.basename(path)) != driver:
            continue
        try:
            board = board_of(path)[0]
        except FileNotFoundError:   # Its board was removed since the listing.
            continue
        boards.setdefault(board, []).append(path)
    return boards


def driver_of(path):
    """(the driver's name, the identifier of its SoC) of the device node `path`: ("zc706_litepcie", "hostlink
    ZC706 PCIe Gen2 x4 DMA SoC"); the SoC is None for a driver that does not say (LitePCIe's own)."""
    name = _driver_name(os.path.basename(path))
    return name, list_drivers().get(name)


def board_of(path):
    """(the board's PCI address, the channel's number on that board) of the device node `path`, from sysfs
    (hostlink's driver makes each board's PCI device its nodes' parent, in a folder named after the driver);
    (None, the node's number) when the driver does not say."""
    rdev = os.stat(path).st_rdev
    node = f"/sys/dev/char/{os.major(rdev)}:{os.minor(rdev)}"
    device = os.path.join(node, "device")
    try:
        driver = _driver_name(os.path.basename(os.path.realpath(node)))
        names = os.listdir(os.path.join(device, driver))
        siblings = sorted(names, key=lambda name: int(name[len(driver):]))
        return os.path.basename(os.path.realpath(device)), siblings.index(os.path.basename(os.path.realpath(node)))
    except (OSError, ValueError):
        return None, os.minor(rdev)


class Buffer:
    """One framed buffer (real-time or packets flow): `sequence`, `time` (SoC cycles when it began),
    `dropped` (bytes lost just before its data), `ended` (a `last` from the core ended it: a packet's end)
    and `data` (bytes)."""
    __slots__ = ("sequence", "time", "dropped", "ended", "data")

    def __init__(self, raw):
        magic, self.sequence, self.time, self.dropped, length, flags = HEADER.unpack_from(raw)
        if magic != HEADER_MAGIC or length > len(raw) - HEADER_BYTES:
            raise _error(errno.EPROTO, "a buffer without hostlink's header: is the channel's writer in "
                         "real-time or packets flow, through a user port?")
        self.ended = bool(flags & HEADER_FLAG_END)
        self.data = bytes(raw[HEADER_BYTES:HEADER_BYTES + length])


class Channel:
    """One DMA channel of a board, opened for your program.

    `channel`: the channel's number (/dev/litepcie<N>), or the path of a device node of any hostlink driver
    (/dev/zc706_litepcie0). `flow`: "lossless" (default), "realtime" (FPGA to host), "packets" (both ways:
    write() sends packets of any length, read_packets() receives) or "loop". `directions`: which of "h2c"
    (host to FPGA) and "c2h" (FPGA to
    host) to take ("c2h" alone or a tuple); each is locked for this program (another program holding it:
    HostlinkError EBUSY). `timeout`: seconds without progress before a call gives up (HostlinkError
    ETIMEDOUT); None: never. `registers`: a csr.json or the driver's csr.h, to read and write registers
    by name.
    """
    def __init__(self, channel=0, flow="lossless", directions=("h2c", "c2h"), timeout=5.0, registers=None):
        self.fd = None
        self.path = channel if isinstance(channel, str) else f"/dev/litepcie{int(channel)}"
        if flow not in FLOWS:
            raise ValueError(f"flow must be one of {', '.join(FLOWS)}, not {flow!r}")
        directions = (directions,) if isinstance(directions, str) else tuple(directions)
        if not directions or any(d not in ("h2c", "c2h") for d in directions):
            raise ValueError(f"directions are 'h2c', 'c2h' or both, as ('h2c', 'c2h'), not {directions!r}")
        if flow == "realtime" and "h2c" in directions:
            raise ValueError(f"{flow} flow is FPGA to host: directions='c2h'")
        if timeout is not None and (isinstance(timeout, bool) or not isinstance(timeout, (int, float))
                                    or not timeout > 0):
            raise ValueError(f"timeout is a positive number of seconds, or None for none, not {timeout!r}")
        self.flow, self.directions, self.timeout = flow, directions, timeout
        # Threads: each direction's calls take turns (held while a call sleeps); _state guards what the
        # directions share, never held while sleeping.
        self._state = threading.Lock()
        self._calls = {"h2c": threading.RLock(), "c2h": threading.RLock()}
        self._cancel = 0                     # cancel()'s count: the calls begun before it end.
        self._registers = _read_register_map(registers) if registers else None
        try:
            self.fd = os.open(self.path, os.O_RDWR | os.O_NONBLOCK)
        except FileNotFoundError:
            driver = _driver_name(os.path.basename(self.path))
            raise _error(errno.ENODEV, f"{self.path} does not exist: is the board there and {driver}.ko "
                         f"loaded? (devices: {', '.join(list_devices()) or 'none'})") from None
        except PermissionError:
            raise _error(errno.EACCES, f"no permission to open {self.path}: be a member of its group "
                         f"(hostlink, see doc/driver.md)") from None
        # Which board, and which of its channels (the number in its registers' names: pcie_dma<index>_...).
        self.board, self.index = board_of(self.path)
        self._started = set()
        self._rings = {}                     # Zero-copy: direction -> the driver's ring, mapped.
        self._held = {"h2c": 0, "c2h": 0}    # Zero-copy: buffers got and not yet put.
        self._open_packet = b""              # Packets flow: an open packet's tail, held back to end it with.
        self._no_wait = False                # The driver has no DMA_WAIT (generated before it): poll.
        try:
            info = self._ioctl("MMAP_DMA_INFO", None, "read the ring's geometry")
            self.buffer_size, self.buffer_count = info[1], info[2]
            self._ring_offsets = {"h2c": info[0], "c2h": info[3]}
            writer, reader = "c2h" in directions, "h2c" in directions
            status = self._ioctl("LOCK", (reader, writer, 0, 0, 0, 0), "lock")
            if (reader and not status[4]) or (writer and not status[5]):
                held = [d for d, want, got in (("h2c", reader, status[4]), ("c2h", writer, status[5]))
                        if want and not got]
                raise _error(errno.EBUSY, f"{self.path}: {' and '.join(held)} held by another program")
            self._ioctl("DMA_POLL", (writer, reader), "poll")
            reader_flow = FLOWS[flow] if flow == "packets" else min(FLOWS[flow], 1)
            self._ioctl("DMA_FLOW", (FLOWS[flow] if writer else 0, reader_flow if reader else 0),
                        "set the flow mode", {errno.EOPNOTSUPP: "this SoC has no flow gates: regenerate it with hostlink",
                                              errno.EINVAL: "this driver has no packets flow host to FPGA: "
                                                            "regenerate it with hostlink"})
            if registers:
                self._check_soc(registers)
        except BaseException:
            os.close(self.fd)
            self.fd = None
            raise

    # Plumbing -------------------------------------------------------------------------------------

    def _ioctl(self, name, values, what, messages=None):
        """The driver's ioctl `name` (hostlink.protocol.IOCTLS) with its argument's fields `values` (None: all
        0); returns the fields as the driver left them. A failure raises HostlinkError saying it could not
        `what`, with `messages`' advice for its errno if any."""
        if self.fd is None:
            raise _error(errno.EBADF, f"{self.path}: cannot {what}: the channel is closed")
        ioctl = IOCTLS[name]
        buffer = bytearray(ioctl.layout.size) if values is None else bytearray(ioctl.layout.pack(*values))
        try:
            fcntl.ioctl(self.fd, ioctl.request, buffer)
        except OSError as error:
            message = (messages or {}).get(error.errno) or _advice(error.errno)
            raise _error(error.errno, f"{self.path}: cannot {what}: {message}") from None
        return ioctl.layout.unpack(buffer)

    def _engine(self, direction, enable=None):
        """(enabled, hw_count, sw_count) of a direction; `enable` starts or stops it."""
        current = direction in self._started if enable is None else enable
        _, hw, sw = self._ioctl("DMA_READER" if direction == "h2c" else "DMA_WRITER", (int(current), 0, 0),
                                f"run the {direction} DMA")
        return current, hw, sw

    def _start(self, direction):
        with self._state:
            if direction not in self._started:
                self._engine(direction, True)
                self._started.add(direction)

    def _wait_dma(self, directions, seconds, cancel, drain=False):
        """Sleep until a started direction of `directions` has a buffer for the program (the DMA's
        interrupt wakes it: software/driver/wait.py), `seconds` pass or a signal's handler runs; the caller
        counts again. Returns False when the call that began at cancel count `cancel` has been cancelled.
        `drain`: "h2c" only, wake when the DMA has sent every buffer written. A driver without DMA_WAIT is
        polled every 200 µs."""
        if self._cancel != cancel:
            return False
        directions = [d for d in directions if d in self._started]
        if not directions or self._no_wait:
            select.select([], [], [], 0.0002)
            return True
        # The reader is ready when (sw + reader_held) - hw < count / 2: with count / 2 - 1, when hw >= sw.
        reader_held = self.buffer_count // 2 - 1 if drain else self._held["h2c"]
        wait = IOCTLS["DMA_WAIT"]
        request = wait.layout.pack(max(1, min(int(seconds * 1000), 2**31 - 1)), self._held["c2h"], reader_held,
                                   cancel & 0xffffffff, "c2h" in directions, "h2c" in directions, 0, 0)
        try:
            fcntl.ioctl(self.fd, wait.request, bytearray(request))
        except OSError as error:
            # EINTR: a signal whose handler did not raise (PEP 475: the call goes on); KeyboardInterrupt
            # and other exceptions of handlers come out of the ioctl itself.
            if error.errno == errno.ENOTTY:
                self._no_wait = True
            elif error.errno == errno.ECANCELED:
                return False
            elif error.errno not in (errno.ETIMEDOUT, errno.EINTR):
                raise _error(error.errno, f"{self.path}: cannot wait for the DMA: {_advice(error.errno)}") from None
        return True

    def cancel(self):
        """End the blocking calls other threads are in on this channel (asleep in the driver or about to
        be) with HostlinkError ECANCELED, carrying what they had moved; calls begun afterwards are not
        affected."""
        self._open("cancel")
        with self._state:
            self._cancel += 1
            count = self._cancel
        try:
            cancel = IOCTLS["DMA_CANCEL"]
            fcntl.ioctl(self.fd, cancel.request, cancel.layout.pack(count & 0xffffffff))
        except OSError as error:
            if error.errno != errno.ENOTTY:   # A driver without DMA_CANCEL: the calls see it within 200 µs.
                raise _error(error.errno, f"{self.path}: cannot cancel: {_advice(error.errno)}") from None

    def _cancelled(self, what, sent, received, total):
        return _error(errno.ECANCELED, f"{self.path}: {what}: cancelled (cancel()) after {sent + len(received)} of "
                      f"{total} bytes", sent, received)

    def _buffers_ready(self, direction, hw, sw):
        """Buffers ready for the program in `direction`, whose DMA has done `hw` and the program served `sw`,
        after those it holds: "c2h", filled and not yet got; "h2c", free (the driver lets a program run half
        a ring ahead)."""
        first = sw + self._held[direction]
        return hw - first if direction == "c2h" else self.buffer_count // 2 - (first - hw)

    def _nonblocking(self, what, call, *args):
        """call(*args) on the channel's non-blocking file: the bytes it moved, 0 where it would have blocked."""
        try:
            return call(*args)
        except BlockingIOError:
            return 0
        except OSError as error:
            raise _error(error.errno, f"{self.path}: {what}: {_advice(error.errno)}") from None

    def _deadline(self, timeout):
        return float("inf") if timeout is None else time.monotonic() + timeout

    def _progress_deadline(self):
        return self._deadline(self.timeout)

    def _timed_out(self, what, sent, received, total):
        return _error(errno.ETIMEDOUT, f"{self.path}: {what}: no progress for {self.timeout} s after "
                      f"{sent + len(received)} of {total} bytes (is the core taking and giving data, its "
                      f"channel selected?)", sent, received)

    def _whole(self, size, what):
        if size <= 0 or size % self.buffer_size:
            raise _error(errno.EINVAL, f"{what} moves whole {self.buffer_size}-byte buffers: {size} bytes "
                         f"is not a positive multiple" + (" (packets flow, Channel(flow='packets'), writes any "
                         "length)" if what == "writing" else ""))

    # Data -----------------------------------------------------------------------------------------

    def start(self, *directions):
        """Arm the DMA of `directions` ("h2c", "c2h"; default: the channel's) now; reads, writes and
        get_buffers() arm what they use themselves. For a source that cannot wait, and before zero-copy
        sends whose results you will read."""
        for direction in directions:
            self._need(direction)
        for direction in ("c2h", "h2c"):   # FPGA to host first: it waits for data.
            if direction in (directions or self.directions):
                self._start(direction)

    def write(self, data, end=True):
        """Send `data` host to FPGA; returns when all of it is in the driver's ring.

        Lossless and loop flows: whole buffers. Packets flow: any length; `data` is one packet, which your
        core gets with `last` on its final byte (and `bytes`, that word's bytes of data), in as many
        buffers as it takes (each headed by its length: hostlink.protocol.frame_packet). `end=False`
        leaves the packet open: the next write continues it, with no boundary between (a stream of any
        length); up to 32 bytes of an open packet are held back until the write that ends it (or close()).
        A packet has at least one byte: `write(b"")` ends an open packet, and is refused (EINVAL) when
        none is open."""
        if self.flow != "packets":
            if not end:
                raise _error(errno.EINVAL, f"{self.path}: write(end=False) continues a packet: packets flow only "
                             f"(Channel(flow='packets')); this channel's flow is {self.flow}")
            self.transfer(data, results=0)
            return
        self._need("h2c")
        data = memoryview(data).cast("B")
        with self._calls["h2c"]:
            self._not_holding("write", ["h2c"])
            packet = self._open_packet + bytes(data) if self._open_packet else data
            if end and not len(packet):
                raise _error(errno.EINVAL, f"{self.path}: write(b''): a packet has at least one byte (a core's "
                             f"stream has no empty packet), and no packet is open to end")
            buffers, rest = frame_packet(packet, self.buffer_size, end)
            if len(buffers):
                self._transfer(memoryview(buffers), 0)
            self._open_packet = rest

    def read(self, size):
        """Receive `size` bytes (whole buffers) FPGA to host."""
        return self.transfer(None, results=size)

    def read_into(self, buffer):
        """Receive len(buffer) bytes (whole buffers) FPGA to host straight into `buffer` (a bytearray, a
        numpy array: anything writable with the buffer protocol), without a copy beyond the driver's.
        Returns `buffer`'s byte count. A failure part-way leaves what came in `buffer` (and in the error's
        `data`)."""
        view = memoryview(buffer).cast("B")
        self.transfer(None, into=view)
        return len(view)

    def transfer(self, data, results=None, into=None):
        """Send `data` host to FPGA while receiving `results` bytes FPGA to host (default: as many as sent),
        overlapped: what an accelerator does. Returns the bytes received; with `into` (a bytearray, a numpy
        array, any writable buffer of `results` bytes, or of len(data) by default), they are received
        straight into it (the driver copies from its ring into your memory, no other copy) and `into` is
        returned."""
        data = memoryview(data).cast("B") if data is not None else memoryview(b"")
        if into is not None:
            into = memoryview(into).cast("B")
            if into.readonly:
                raise _error(errno.EINVAL, f"{self.path}: into= must be writable (a bytearray, a numpy array)")
            if results is not None and results != len(into):
                raise _error(errno.EINVAL, f"{self.path}: into= holds {len(into)} bytes, not the {results} asked for")
            results = len(into)
        results = len(data) if results is None else results
        if len(data):
            self._need("h2c")
            if self.flow == "packets":
                raise _error(errno.EINVAL, f"{self.path}: transfer: packets flow host to FPGA sends with write() "
                             f"(it heads each buffer with its length); read_packets() receives")
            self._whole(len(data), "writing")
        if results:
            self._need("c2h")
            self._whole(results, "reading")
        if not len(data) and not results:
            raise _error(errno.EINVAL, f"{self.path}: transfer: nothing to send or receive")
        locks = [self._calls[d] for d, used in (("h2c", len(data)), ("c2h", results)) if used]
        for lock in locks:
            lock.acquire()
        try:
            if into is not None:
                self._transfer(data, results, into)
                return into.obj if isinstance(into, memoryview) else into
            return bytes(self._transfer(data, results))
        finally:
            for lock in reversed(locks):
                lock.release()

    def _transfer(self, data, results, into=None):
        """Under the turns of the directions it uses (transfer()). Receives into `into` (a writable byte
        view of `results` bytes) when given, and returns None; else returns the bytes received."""
        self._not_holding("transfer", [d for d, used in (("h2c", len(data)), ("c2h", results)) if used])
        cancel = self._cancel
        out = memoryview(bytearray(results)) if into is None else into
        sent = got = 0
        batch = self.buffer_size * (self.buffer_count // 2)
        if results:
            self._start("c2h")                       # Armed first: it waits for data.
        deadline = self._progress_deadline()
        while sent < len(data) or got < results:
            moved = False
            if sent < len(data):
                n = self._nonblocking("write", os.write, self.fd, data[sent:sent + batch])
                sent += n
                moved = moved or n > 0
                self._start("h2c")                   # After the first buffers: none is read stale.
            if got < results:
                # Straight into the caller's memory (the driver copies from its ring): no copy here.
                n = self._nonblocking("read", os.readv, self.fd, [out[got:got + min(results - got, batch)]])
                got += n
                moved = moved or n > 0
            if moved:
                deadline = self._progress_deadline()
            elif time.monotonic() > deadline:
                raise self._timed_out("transfer", sent, out[:got], len(data) + results)
            elif not self._wait_dma([d for d, more in (("h2c", sent < len(data)), ("c2h", got < results))
                                     if more], deadline - time.monotonic(), cancel):
                raise self._cancelled("transfer", sent, out[:got], len(data) + results)
        return None if into is not None else out.obj

    def drain(self, timeout=None):
        """Wait until everything written has been taken by the FPGA (the h2c DMA has read every buffer
        written), up to `timeout` seconds (default: the channel's). HostlinkError ETIMEDOUT says how many
        bytes were written but not taken."""
        self._open("drain")
        if "h2c" not in self.directions or "h2c" not in self._started:
            return
        wait = self.timeout if timeout is None else timeout
        with self._calls["h2c"]:
            cancel = self._cancel
            deadline = self._deadline(wait)
            while True:
                _, hw, sw = self._engine("h2c")
                if hw >= sw:
                    return
                left = (sw - hw) * self.buffer_size
                if time.monotonic() > deadline:
                    raise _error(errno.ETIMEDOUT, f"{self.path}: {left} bytes written but not taken by the FPGA "
                                 f"in {wait} s (is the core taking data, its channel selected?)")
                if not self._wait_dma(["h2c"], deadline - time.monotonic(), cancel, drain=True):
                    raise _error(errno.ECANCELED, f"{self.path}: drain: cancelled (cancel()) with {left} bytes "
                                 f"not yet taken by the FPGA")

    # Zero-copy ------------------------------------------------------------------------------------

    def get_buffers(self, direction, count=None, timeout=None):
        """Zero-copy: the next buffers of the driver's ring, in place, as writable memoryviews of
        `buffer_size` bytes each (numpy.frombuffer(view, dtype) is an array over one, without a copy).
        "c2h": buffers the DMA has filled, to read; "h2c": free buffers, to fill. Waits up to the timeout
        for at least one; returns at most `count` (default: all that are ready), after any got before
        and not yet put. `timeout`: seconds to wait (default: the channel's; 0: none, an empty list when
        no buffer is ready). Give them back in order with put_buffers(): the DMA then fills them again
        (c2h) or sends them (h2c); a view kept after that sees the ring's next use of its buffer.
        Loop flow: buffers the DMA wrote again before you got them raise HostlinkError EOVERFLOW (the
        next call goes on from the newest)."""
        self._need(direction)
        if count is not None and (not isinstance(count, int) or isinstance(count, bool) or count <= 0):
            raise _error(errno.EINVAL, f"get_buffers: count is a positive number of buffers, not {count!r}")
        if direction == "h2c" and self.flow == "packets":
            raise _error(errno.EINVAL, f"{self.path}: get_buffers('h2c'): no zero-copy host to FPGA in packets "
                         f"flow (each buffer needs its header): use write()")
        with self._calls[direction]:
            return self._get_buffers(direction, count, timeout)

    def _get_buffers(self, direction, count, timeout):
        cancel = self._cancel
        ring = self._ring(direction)
        if direction == "c2h":
            self._start("c2h")
        wait = self.timeout if timeout is None else timeout
        deadline = self._deadline(wait)
        while True:
            _, hw, sw = self._engine(direction)
            first = sw + self._held[direction]
            ready = self._buffers_ready(direction, hw, sw)
            if direction == "c2h" and self.flow == "loop" and hw - sw > self.buffer_count // 2:
                # (LitePCIe's read() counts these as lost.) Loop flow loses data: lossless or realtime do not.
                if self._held["c2h"]:
                    raise _error(errno.EOVERFLOW, f"{self.path}: the DMA is {hw - sw} buffers ahead: those "
                                 f"you hold may be written again (loop flow: use lossless or realtime)")
                newest = hw - self.buffer_count // 2
                self._update("c2h", newest)
                raise _error(errno.EOVERFLOW, f"{self.path}: {newest - sw} buffers written again by the "
                             f"DMA before you got them (loop flow: use lossless or realtime)")
            if ready > 0:
                break
            if timeout == 0:
                return []
            if time.monotonic() > deadline:
                raise _error(errno.ETIMEDOUT, f"{self.path}: get_buffers({direction!r}): no buffer for {wait} s "
                             f"(is the core taking and giving data, its channel selected?)")
            if not self._wait_dma([direction], deadline - time.monotonic(), cancel):
                raise _error(errno.ECANCELED, f"{self.path}: get_buffers({direction!r}): cancelled (cancel())")
        ready = ready if count is None else min(ready, count)
        with self._state:
            self._held[direction] += ready
        size = self.buffer_size
        return [ring[((first + i) % self.buffer_count) * size:][:size] for i in range(ready)]

    def wait(self, *directions, timeout=None):
        """Sleep until a direction of `directions` ("h2c", "c2h"; default: the channel's) has a buffer for
        you ("c2h": filled, to read; "h2c": free, to fill), beyond those you hold by zero-copy; woken by the
        DMA's interrupt, no polling. Returns the set of directions ready; `timeout`: seconds (default: the
        channel's; 0: returns at once, possibly an empty set); none ready by then raises HostlinkError
        ETIMEDOUT. Arms "c2h", as a read does. read(), transfer() and get_buffers() wait the same way
        themselves: this is for a program that waits on both directions at once."""
        directions = directions or self.directions
        for direction in directions:
            self._need(direction)
        if "c2h" in directions:
            self._start("c2h")                       # Armed: it waits for data.
        cancel = self._cancel
        wait = self.timeout if timeout is None else timeout
        deadline = self._deadline(wait)
        while True:
            ready = {d for d in directions if self._buffers_ready(d, *self._engine(d)[1:]) > 0}
            if ready or timeout == 0:
                return ready
            if time.monotonic() > deadline:
                raise _error(errno.ETIMEDOUT, f"{self.path}: wait({', '.join(map(repr, directions))}): no buffer "
                             f"for {wait} s (is the core taking and giving data, its channel selected?)")
            if not self._wait_dma(directions, deadline - time.monotonic(), cancel):
                raise _error(errno.ECANCELED, f"{self.path}: wait({', '.join(map(repr, directions))}): cancelled "
                             f"(cancel())")

    def put_buffers(self, direction, count=None):
        """Give back the oldest `count` buffers got with get_buffers() (default: all): "c2h", read, the
        DMA may fill them again; "h2c", filled, the DMA sends them."""
        self._need(direction)
        if count is not None and (not isinstance(count, int) or isinstance(count, bool)):
            raise _error(errno.EINVAL, f"put_buffers: count is a number of buffers, not {count!r}")
        with self._calls[direction]:
            count = self._held[direction] if count is None else count
            if not 0 <= count <= self._held[direction]:
                raise _error(errno.EINVAL, f"put_buffers({direction!r}, {count}): {self._held[direction]} got "
                             f"and not yet put")
            if count:
                _, _, sw = self._engine(direction)
                self._update(direction, sw + count)
                with self._state:
                    self._held[direction] -= count
                if direction == "h2c":
                    self._start("h2c")          # After the first buffers: none is read stale.

    def fileno(self):
        """The channel's file descriptor, for select, selectors and asyncio (`loop.add_reader(channel,
        ...)`; poll and level-triggered epoll): readable when a c2h buffer is filled for you, writable when
        an h2c buffer is free, woken by the DMA's interrupt (start("c2h") first). Then read or write one
        buffer: it does not wait. Not for edge-triggered epoll (EPOLLET)."""
        self._open("fileno")
        return self.fd

    def _ring(self, direction):
        with self._state:
            return self._map_ring(direction)

    def _map_ring(self, direction):
        if direction not in self._rings:
            total = self.buffer_size * self.buffer_count
            try:
                self._rings[direction] = memoryview(mmap.mmap(self.fd, total, mmap.MAP_SHARED,
                                                              mmap.PROT_READ | mmap.PROT_WRITE,
                                                              offset=self._ring_offsets[direction]))
            except OSError as error:
                raise _error(error.errno, f"{self.path}: cannot map the {direction} ring: "
                             f"{_advice(error.errno)}") from None
        return self._rings[direction]

    def _update(self, direction, sw_count):
        self._ioctl("MMAP_DMA_READER_UPDATE" if direction == "h2c" else "MMAP_DMA_WRITER_UPDATE", (sw_count,),
                    f"give the {direction} buffers back")

    def _not_holding(self, what, directions=("h2c", "c2h")):
        held = [d for d in directions if self._held[d]]
        if held:
            raise _error(errno.EBUSY, f"{self.path}: {what}: put_buffers() the zero-copy buffers of "
                         f"{' and '.join(held)} first")

    def read_buffers(self, count):
        """`count` framed buffers (Buffer: sequence, time, dropped, ended, data), in order."""
        self._framed("read_buffers")
        if not isinstance(count, int) or isinstance(count, bool) or count <= 0:
            raise _error(errno.EINVAL, f"read_buffers: count is a positive number of buffers, not {count!r}")
        raw = self.read(count * self.buffer_size)
        return [Buffer(memoryview(raw)[i*self.buffer_size:(i + 1)*self.buffer_size]) for i in range(count)]

    def read_packets(self, count):
        """`count` packets of your core (packets flow: each the data up to and with a word with `last`, in
        as many buffers as it took), as bytes, in order. A drop within a packet (real-time flow) raises
        HostlinkError EPROTO; the packet the first buffer read continues (if any) is returned as it is."""
        self._framed("read_packets")
        packets, packet = [], []
        with self._calls["c2h"]:   # One packet's buffers are one reader's (the turn is re-entrant).
            while len(packets) < count:
                [buffer] = self.read_buffers(1)
                if buffer.dropped and packet:
                    raise _error(errno.EPROTO, f"{buffer.dropped} bytes dropped within a packet (buffer "
                                 f"{buffer.sequence}): real-time flow loses data, packets flow does not")
                packet.append(buffer.data)
                if buffer.ended:
                    packets.append(b"".join(packet))
                    packet = []
        return packets

    def _open(self, what):
        if self.fd is None:
            raise _error(errno.EBADF, f"{self.path}: {what}: the channel is closed")

    def _framed(self, what):
        """Before anything is read: a buffer read in another flow would be lost to a header it does not have."""
        self._open(what)
        if self.flow not in FRAMED:
            raise _error(errno.EINVAL, f"{self.path}: {what}: buffers have headers in the realtime and packets "
                         f"flows only, not in {self.flow} (use read() or read_into())")

    def _need(self, direction):
        if self.fd is None:
            raise _error(errno.EBADF, f"{self.path}: the channel is closed")
        if direction not in ("h2c", "c2h"):
            raise _error(errno.EINVAL, f"a direction is 'h2c' or 'c2h', not {direction!r}")
        if direction not in self.directions:
            raise _error(errno.EINVAL, f"{self.path} was opened for {', '.join(self.directions)} only")

    # Registers and state --------------------------------------------------------------------------

    def _check_soc(self, registers):
        """The board's SoC (LiteX's identifier memory, a character a word) must be the register map's, as
        libhostlink checks its own: a map of another SoC names other registers at the same addresses."""
        mine, base = _map_identity(registers)
        if mine is None or base is None:
            return      # A csr.h without its soc.h beside it: nothing to compare with.
        theirs = ""
        for i in range(128):
            _, read, _ = self._ioctl("REG", (base + 4*i, 0, 0), "read the board's SoC identifier")
            if not read & 0xff:
                break
            theirs += chr(read & 0xff)
        theirs = _BUILD_TIME.sub("", theirs)
        if theirs.lower() != mine.lower():
            raise _error(errno.ENODEV, f'{self.path} is a board of SoC "{theirs}"; the register map {registers} '
                         f'is SoC "{mine}"\'s: give that board\'s csr.json (or its driver\'s csr.h)')

    def register(self, name, value=None):
        """Read the register `name` (a CSR name of the SoC's map, e.g. "user_core_a"; its first 32-bit
        word), or write `value` (writes need CAP_SYS_RAWIO: root)."""
        return self.register_word(name, 0, value)

    def register_word(self, name, word, value=None):
        """Read or write 32-bit word `word` of a register wider than 32 bits (most significant first)."""
        self._open(f"register {name}")
        if self._registers is None:
            raise _error(errno.EINVAL, "no register map: open the channel with registers=<csr.json or csr.h>")
        if name not in self._registers:
            raise _error(errno.EINVAL, f"no register {name!r} in this SoC's map")
        _, read, _ = self._ioctl("REG", (self._registers[name] + 4*word, value or 0, value is not None),
                                 f"{'write' if value is not None else 'read'} register {name}",
                                 {errno.EPERM: "register writes need CAP_SYS_RAWIO (root)"})
        return read

    def loopback(self, enable=True):
        """The channel's DMA sends what it reads from the host straight back to it (LitePCIe's loopback,
        which its dma_test uses), instead of through your core: a board checked without a core of yours."""
        self._ioctl("DMA", (int(bool(enable)),), f"{'enable' if enable else 'disable'} the loopback")

    def cycles(self):
        """The SoC's cycle counter (its system clock), to time transfers in device time."""
        return self._ioctl("CYCLES", None, "read the cycle counter", {errno.ENOTTY: "this SoC has no cycle counter"})[0]

    def counts(self):
        """{direction: (buffers done by the DMA, buffers served by this program)}."""
        return {d: self._engine(d)[1:] for d in self.directions}

    def stats(self):
        """The driver's and the DMA's counters for this channel, since each direction's last start:
        {"c2h": {...}, "h2c": {...}, "buffer_count": N, "buffer_size": B}. Per direction: `hw_count` and
        `sw_count` (buffers done by the DMA, served by programs), `lost` and `lost_events` (loop mode:
        buffers read() or write() found lost, and the calls that found them), `level` and `level_max`
        (buffers waiting for the program now, and the most it found when it came), `flow` (its number),
        `enabled`, and the DMA's flow gate's own counts `fpga_given` (flow modes), `fpga_started`, `fpga_done` and
        `fpga_waits` (cycles a buffer waited for the host; all 0 on a SoC without flow gates)."""
        fields = self._ioctl("STATS", None, "read the channel's stats")
        n = len(STATS_DIRECTION_FIELDS)
        return {"c2h": dict(zip(STATS_DIRECTION_FIELDS, fields[:n])),
                "h2c": dict(zip(STATS_DIRECTION_FIELDS, fields[n:2*n])),
                "buffer_count": fields[2*n], "buffer_size": fields[2*n + 1]}

    def close(self):
        """End a packet left open (packets flow: write(b"")), wait until what was written has been taken by
        the FPGA (drain(), the channel's timeout), then stop
        what the channel started and release it, whatever the drain's outcome: a HostlinkError then says
        how many bytes were written but not sent (the channel is closed all the same)."""
        if self.fd is None:
            return
        try:
            if self._open_packet:   # An open packet's held-back tail ends it: nothing written is lost.
                self.write(b"")
            self.drain()
        except HostlinkError as error:
            if error.errno == errno.ENODEV:   # A board gone has nothing left to send to.
                self._stop_and_release()
                return
            self._stop_and_release()
            raise
        self._stop_and_release()

    def _stop_and_release(self):
        if self.fd is None:
            return
        try:
            for direction in sorted(self._started):
                try:
                    self._engine(direction, False)
                except HostlinkError as error:
                    if error.errno != errno.ENODEV:   # A board gone has nothing left to stop.
                        raise
        finally:
            for ring in self._rings.values():
                mapping = ring.obj
                try:
                    ring.release()
                    mapping.close()
                except BufferError:
                    pass   # Views still held: the mapping (and the driver's file) go with the last.
            self._rings = {}
            os.close(self.fd)   # The driver releases the locks, polling and flow with the file.
            self.fd = None

    def __enter__(self):
        return self

    def __exit__(self, kind, value, traceback):
        if kind is None:
            self.close()
        else:
            # Leaving on an exception (Ctrl-C, a failure): stopped at once, without waiting for what was
            # written to go; the exception says what happened.
            self._stop_and_release()

    def __del__(self):
        if getattr(self, "fd", None) is not None:
            os.close(self.fd)


_BUILD_TIME = re.compile(r" \d{4}-\d\d-\d\d \d\d:\d\d:\d\d$")     # LiteX's, after the identifier.


def _map_identity(path):
    """(the SoC's identifier without LiteX's build time, the address of its identifier memory) of a register
    map: a csr.json has both; a csr.h the address, and its soc.h beside it the identifier. None where not."""
    if path.endswith(".json"):
        import json
        with open(path) as f:
            csr = json.load(f)
        identifier = csr.get("constants", {}).get("config_identifier")
        base = csr.get("csr_bases", {}).get("identifier_mem")
    else:
        with open(path) as f:
            text = f.read()
        csr_base = re.search(r"#define CSR_BASE (0x[0-9a-fA-F]+)L?", text)
        offset = re.search(r"#define CSR_IDENTIFIER_MEM_BASE \(CSR_BASE \+ (0x[0-9a-fA-F]+)L\)", text)
        base = (int(csr_base.group(1), 16) if csr_base else 0) + int(offset.group(1), 16) if offset else None
        soc = os.path.join(os.path.dirname(path), "soc.h")
        identifier = None
        if os.path.isfile(soc):
            with open(soc) as f:
                match = re.search(r'#define CONFIG_IDENTIFIER "([^"]*)"', f.read())
            identifier = match.group(1) if match else None
    return (_BUILD_TIME.sub("", identifier) if identifier else None), base


def _read_register_map(path):
    """{name: the address the driver's register ioctl takes} from a csr.json or the driver's csr.h."""
    if not os.path.isfile(path):
        raise _error(errno.ENOENT, f"no register map {path}: registers= names the SoC's csr.json or its driver's "
                     f"csr.h (kernel/csr.h beside litepcie.ko)")
    if path.endswith(".json"):
        import json
        with open(path) as f:
            return {name: r["addr"] for name, r in json.load(f)["csr_registers"].items()}
    with open(path) as f:
        text = f.read()
    base = re.search(r"#define CSR_BASE (0x[0-9a-fA-F]+)L?", text)
    base = int(base.group(1), 16) if base else 0
    return {m.group(1).lower(): base + int(m.group(2), 16)
            for m in re.finditer(r"#define CSR_(\w+)_ADDR \(CSR_BASE \+ (0x[0-9a-fA-F]+)L\)", text)}


def main():
    """python3 host.py: the boards the drivers serve and their channels' device nodes, then each hostlink
    driver loaded and its SoC."""
    boards = list_boards()
    if not boards:
        print("no /dev/litepcie* nor any hostlink driver's nodes: is the board there and its driver loaded?")
    for board, paths in boards.items():
        print(f"board {board or '(not named by this driver)'}: {' '.join(paths)}")
    for name, soc in list_drivers().items():
        print(f"driver {name}: SoC \"{soc}\", boards {' '.join(b or '?' for b in list_boards(name)) or 'none'}")
    return 0 if boards else 1


if __name__ == "__main__":
    raise SystemExit(main())
