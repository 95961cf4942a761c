# This file is part of hostlink.
# Copyright (c) 2026 hostlink developers
# SPDX-License-Identifier: BSD-2-Clause

"""Simulation models for the UDP cores' tests (migen `run_simulation` generators).

Stream sources and sinks with random idle cycles and back-pressure, and a model of the PHY side of
LiteEth's MAC, shared by the UDP tests.
"""

import random
import zlib

from migen import *

from litex.soc.interconnect import stream

from hostlink.cores.udp.common import eth_raw_layout
from benches.migen_streams import wait_for

# Stream drivers -----------------------------------------------------------------------------------

class StreamSource:
    """Drives an endpoint with packets (lists of dicts of field values), idling at random."""
    def __init__(self, endpoint, idle=0.0, seed=0):
        self.endpoint = endpoint
        self.idle     = idle
        self.rng      = random.Random(seed)
        self.packets  = []
        self.done     = False

    def send(self, beats):
        self.packets.append(list(beats))

    def generator(self):
        ep = self.endpoint
        while self.packets:
            beats = self.packets.pop(0)
            for i, beat in enumerate(beats):
                while self.idle and self.rng.random() < self.idle:
                    yield ep.valid.eq(0)
                    yield
                yield ep.valid.eq(1)
                yield ep.last.eq(i == len(beats) - 1)
                for k, v in beat.items():
                    yield getattr(ep, k).eq(v)
                yield
                yield from wait_for(ep.ready)
            yield ep.valid.eq(0)
        yield ep.valid.eq(0)
        self.done = True


class StreamSink:
    """Collects packets from an endpoint, applying random back-pressure."""
    def __init__(self, endpoint, fields=("data",), backpressure=0.0, seed=1):
        self.endpoint     = endpoint
        self.fields       = fields
        self.backpressure = backpressure
        self.rng          = random.Random(seed)
        self.packets      = []
        self.current      = []
        self.cycles       = [] # Cycle of each accepted beat.
        self.cycle        = 0

    @passive
    def generator(self):
        ep = self.endpoint
        while True:
            ready = not (self.backpressure and self.rng.random() < self.backpressure)
            yield ep.ready.eq(int(ready))
            yield
            self.cycle += 1
            if ready and (yield ep.valid):
                beat = {}
                for f in self.fields:
                    beat[f] = (yield getattr(ep, f))
                self.current.append(beat)
                self.cycles.append(self.cycle)
                if (yield ep.last):
                    self.packets.append(self.current)
                    self.current = []

# PHY model ----------------------------------------------------------------------------------------

def ethernet_fcs(frame):
    return zlib.crc32(bytes(frame)).to_bytes(4, "little")


def phy_frame(frame, bad_fcs=False):
    """Bytes a GMII PHY delivers for `frame` (no FCS): preamble, SFD, frame, padding, FCS."""
    frame = bytes(frame)
    if len(frame) < 60:
        frame += bytes(60 - len(frame))
    fcs = bytearray(ethernet_fcs(frame))
    if bad_fcs:
        fcs[0] ^= 0xff
    return bytes([0x55]*7 + [0xd5]) + frame + bytes(fcs)


class PHYModel(Module):
    """A LiteEth-compatible 8-bit PHY whose RX is driven and TX captured by the test.

    `sink` is what the MAC transmits (one byte per eth_tx cycle), `source` what it receives.
    """
    dw = 8
    def __init__(self):
        self.sink   = stream.Endpoint(eth_raw_layout())
        self.source = stream.Endpoint(eth_raw_layout())


class PHYTxMonitor:
    """Splits the MAC's output into frames: strips preamble/SFD, checks and strips the FCS."""
    def __init__(self, phy):
        self.phy     = phy
        self.frames  = []
        self.ends    = [] # eth_tx cycle of each frame's last byte.
        self.starts  = [] # eth_tx cycle of each frame's first byte (preamble).
        self.cycle   = 0

    @passive
    def generator(self):
        ep = self.phy.sink
        yield ep.ready.eq(1)
        current = []
        while True:
            yield
            self.cycle += 1
            if (yield ep.valid):
                if not current:
                    self.starts.append(self.cycle)
                current.append((yield ep.data))
                if (yield ep.last):
                    raw = bytes(current)
                    current = []
                    assert raw[:8] == bytes([0x55]*7 + [0xd5]), f"bad preamble {raw[:8].hex()}"
                    frame, fcs = raw[8:-4], raw[-4:]
                    assert ethernet_fcs(frame) == fcs, f"bad FCS {fcs.hex()} {ethernet_fcs(frame).hex()} {raw.hex()}"
                    self.frames.append(frame)
                    self.ends.append(self.cycle)


class PHYRxDriver:
    """Feeds whole PHY frames to the MAC, one byte per eth_rx cycle, with a 12-byte gap."""
    def __init__(self, phy):
        self.phy    = phy
        self.frames = []
        self.done   = False

    def send(self, frame, bad_fcs=False):
        self.frames.append(phy_frame(frame, bad_fcs))

    def generator(self):
        ep = self.phy.source
        while self.frames:
            raw = self.frames.pop(0)
            for i, b in enumerate(raw):
                yield ep.valid.eq(1)
                yield ep.data.eq(b)
                yield ep.last.eq(i == len(raw) - 1)
                yield ep.last_be.eq(i == len(raw) - 1)
                yield
            yield ep.valid.eq(0)
            yield ep.last.eq(0)
            yield ep.last_be.eq(0)
            for _ in range(12):
                yield
        self.done = True
