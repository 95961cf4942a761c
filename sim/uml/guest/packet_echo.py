#!/usr/bin/env python3
# This file is part of hostlink.
# Copyright (c) 2026 hostlink developers
# SPDX-License-Identifier: BSD-2-Clause

"""Packets flow both ways under the real driver, inside the User-Mode Linux of ./sim.py driver, with the
example packet echo (examples/packet_echo.py) on channel 0.

    packet_echo.py CSR_JSON

- Packets of lengths that cross every edge (1 byte, a word's edges, a buffer's data and one past it,
  several buffers and a few bytes) go out with `write(data)` and come back through `read_packets()`
  identical, in order: one at a time, then all in flight at once; then one packet written in pieces
  (`end=False`, then an empty write that ends it).
- Bad input gets one clear error and loses nothing: an empty packet, `end=False` and a size that is not
  whole buffers in lossless flow (EINVAL, saying to use packets flow), transfer() and zero-copy host to
  FPGA in packets flow; a buffer with a bad header written past the library is dropped by the FPGA and
  counted (`pcie_dma0_user_h2c_malformed`); a packet sent after each comes back whole.

Prints one line per check and exits 1 if any fails.
"""

import errno
import os
import random
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", ".."))
from hostlink.host import Channel, HostlinkError   # noqa: E402
from hostlink.protocol import HEADER_BYTES, frame_packet   # noqa: E402


def refused(what, call, code, words):
    """1 if `call()` did not raise HostlinkError `code` with `words` in its message, printing the check."""
    try:
        call()
    except HostlinkError as error:
        ok = error.errno == code and words in str(error)
        print(f"{what}: {errno.errorcode.get(error.errno)}: {error} ({'right' if ok else 'WRONG'})")
        return 0 if ok else 1
    print(f"{what}: not refused (WRONG)")
    return 1


def echo(channel, packets, wrong, in_flight=False):
    """Each packet written and read back (`in_flight`: all written, then all read)."""
    got = []
    for packet in packets:
        channel.write(packet)
        if not in_flight:
            got += channel.read_packets(1)
    if in_flight:
        got = channel.read_packets(len(packets))
    bad = sum(a != b for a, b in zip(got, packets)) + abs(len(got) - len(packets))
    wrong_bytes = sum(sum(x != y for x, y in zip(a, b)) + abs(len(a) - len(b)) for a, b in zip(got, packets))
    return got, wrong + bad, wrong_bytes


def main(argv):
    if len(argv) != 1:
        print("usage: packet_echo.py CSR_JSON", file=sys.stderr)
        return 2
    csr_json, rng, wrong = argv[0], random.Random(49), 0
    with Channel(0, flow="lossless", registers=csr_json, timeout=300) as channel:
        wrong += refused("lossless, 100 bytes", lambda: channel.write(bytes(100)), errno.EINVAL,
                         "Channel(flow='packets'), writes any length")
        wrong += refused("lossless, end=False", lambda: channel.write(bytes(channel.buffer_size), end=False),
                         errno.EINVAL, "packets flow only")
    with Channel(0, flow="packets", registers=csr_json, timeout=60) as channel:
        size = channel.buffer_size
        data = size - HEADER_BYTES
        lengths = [1, 31, 32, 33, 1000, data, data + 1, 3*size + 7, 2]
        packets = [bytes(rng.randrange(256) for _ in range(n)) for n in lengths]
        channel.register("pcie_dma0_user_select", 1)
        channel.start("c2h")
        got, wrong, wrong_bytes = echo(channel, packets, wrong)
        print(f"{len(got)} packets of {', '.join(str(len(p)) for p in got)} bytes echoed in packets flow: "
              f"{wrong_bytes} bytes wrong")
        wrong += wrong_bytes != 0
        got, wrong, wrong_bytes = echo(channel, packets, wrong, in_flight=True)
        print(f"the same {len(got)} packets all in flight at once: {wrong_bytes} bytes wrong")
        wrong += wrong_bytes != 0

        pieces = [bytes(rng.randrange(256) for _ in range(n)) for n in (45, 1, 200, 32, 3000, 17)]
        for piece in pieces:
            channel.write(piece, end=False)
        channel.write(b"")
        [whole] = channel.read_packets(1)
        bad = whole != b"".join(pieces)
        print(f"a packet of {len(whole)} bytes written in {len(pieces)} pieces and ended by write(b''): "
              f"{'WRONG' if bad else 'right'}")
        wrong += bad

        wrong += refused("packets, an empty packet", lambda: channel.write(b""), errno.EINVAL,
                         "at least one byte")
        wrong += refused("packets, transfer()", lambda: channel.transfer(bytes(size)), errno.EINVAL,
                         "sends with write()")
        wrong += refused("packets, zero-copy h2c", lambda: channel.get_buffers("h2c"), errno.EINVAL,
                         "use write()")
        # A buffer the FPGA cannot parse, written past the library: dropped whole and counted.
        bad_buffer = bytearray(frame_packet(bytes(64), size)[0])
        bad_buffer[0] ^= 0xff
        os.write(channel.fd, bad_buffer)
        after = [bytes(rng.randrange(256) for _ in range(n)) for n in (77, data + 1)]
        got, wrong, wrong_bytes = echo(channel, after, wrong)
        malformed = channel.register("pcie_dma0_user_h2c_malformed")
        print(f"a buffer with a bad magic: {malformed} dropped by the FPGA, the {len(after)} packets after it "
              f"echoed with {wrong_bytes} bytes wrong")
        wrong += malformed != 1 or wrong_bytes != 0
        channel.register("pcie_dma0_user_select", 0)
    print(f"packets flow both ways: {wrong} things wrong")
    return 0 if wrong == 0 else 1


DIAGNOSTICS = ["pcie_dma0_user_h2c_words", "pcie_dma0_user_h2c_malformed", "pcie_dma0_user_h2c_fifo_max",
               "pcie_dma0_user_c2h_words", "pcie_dma0_user_c2h_fifo_max", "pcie_dma0_reader_flow_mode",
               "pcie_dma0_reader_flow_started", "pcie_dma0_reader_flow_done", "pcie_dma0_writer_flow_mode",
               "pcie_dma0_writer_flow_buffer_bytes", "pcie_dma0_writer_flow_started", "pcie_dma0_writer_flow_done"]


def diagnose(csr_json):
    """The port's and the flow gates' counts, for a run that failed."""
    with Channel(0, flow="packets", directions=("c2h",), registers=csr_json, timeout=10) as channel:
        print(", ".join(f"{name} {channel.register(name)}" for name in DIAGNOSTICS), flush=True)


if __name__ == "__main__":
    sys.stdout.reconfigure(line_buffering=True)
    try:
        sys.exit(main(sys.argv[1:]))
    except HostlinkError as error:
        print(f"packet_echo.py: {error}", flush=True)
        diagnose(sys.argv[1])
        sys.exit(1)
