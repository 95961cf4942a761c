# This file is part of hostlink.
# Copyright (c) 2026 hostlink developers
# SPDX-License-Identifier: BSD-2-Clause

"""The straddled RC depacketizer (cores/pcie/rc_straddle.py) in migen's simulator.

Completions of every length from 0 to past two beats, packed as `pcie3_7x` packs them with RC straddling (a
completion may start at DW4 when the previous one ended in DW0-3) and without; idle cycles and back-pressure;
descriptor fields and errors; and no lost input cycle for the completions a host sends (16 n DWs).
"""

import random

import pytest

from migen import *

from hostlink.cores.pcie.rc_straddle import RCStraddleDepacketizer

from benches.migen_streams import IDLE_X_BACKPRESSURE, collect as collect_packets, wait_for


def descriptor(tag, payload, byte_count=None, lower_address=0, status=0, poisoned=0, error_code=0,
        requester_id=0x0100, completer_id=0x0200):
    if byte_count is None:
        byte_count = 4*len(payload)
    return [
        lower_address | error_code << 12 | byte_count << 16,
        len(payload) | status << 11 | poisoned << 14 | requester_id << 16,
        tag | completer_id << 8,
    ]


def rc_beats(completions, straddle):
    """Beats (tdata, tkeep, tuser) of the RC interface carrying `completions` (lists of DWs, descriptor
    first), back to back: a completion starts at DW0, or at DW4 (straddling) when the previous one ended in
    DW0-3 of the same beat."""
    beats = []
    frames = list(completions)
    frame, offset = None, 0
    while frames or frame is not None:
        tdata = tkeep = tuser = 0
        sofs = eofs = 0
        for seg in range(2):
            if frame is None:
                if not frames or (seg == 1 and not straddle):
                    break
                frame, offset = frames.pop(0), 0
                tuser |= 1 << (32 + sofs)
                sofs += 1
            last_lane = None
            for lane in range(4*seg, 4*seg + 4):
                if offset < len(frame):
                    tdata |= frame[offset] << (32*lane)
                    tkeep |= 1 << lane
                    tuser |= 0xf << (4*lane)
                    offset += 1
                    last_lane = lane
            if offset >= len(frame):
                tuser |= (1 | last_lane << 1) << (34 + 4*eofs)
                eofs += 1
                frame = None
        beats.append((tdata, tkeep, tuser))
    return beats


def drive(dut, beats, rng, valid_probability, stalls):
    for tdata, tkeep, tuser in beats:
        while rng.random() > valid_probability:
            yield dut.tvalid.eq(0)
            yield
        yield dut.tvalid.eq(1)
        yield dut.tdata.eq(tdata)
        yield dut.tkeep.eq(tkeep)
        yield dut.tuser.eq(tuser)
        yield
        yield from wait_for(dut.tready, lambda: stalls.append(1))
    yield dut.tvalid.eq(0)


def collect(dut, count, rng, ready_probability, packets):
    return collect_packets(dut.source, ["dat", "tag", "len", "end", "adr", "err", "req_id", "cmp_id"], count, rng,
                           ready_probability, packets)


def run(completions, straddle, valid_probability=1.0, ready_probability=1.0, seed=1):
    dut = RCStraddleDepacketizer()
    stalls, received = [], []
    run_simulation(dut, [
        drive(dut, rc_beats(completions, straddle), random.Random(seed), valid_probability, stalls),
        collect(dut, len(completions), random.Random(seed + 1), ready_probability, received),
    ])
    return received, stalls


def check(cases, received):
    assert len(received) == len(cases)
    for (tag, payload, byte_count, lower), out in zip(cases, received):
        assert len(out) == max(1, -(-len(payload)//8)), f"{len(payload)} DW payload"
        assert out[0]["first"] and all(not b["first"] for b in out[1:])
        words = [(b["dat"] >> (32*k)) & 0xffffffff for b in out for k in range(8)]
        assert words[:len(payload)] == payload, f"{len(payload)} DW payload"
        first = out[0]
        assert [first["tag"], first["len"], first["adr"], first["req_id"], first["cmp_id"], first["err"]] == \
            [tag, len(payload), lower, 0x0100, 0x0200, 0]
        assert first["end"] == (byte_count == 4*len(payload))


@pytest.mark.parametrize("straddle", [True, False])
@pytest.mark.parametrize("valid_probability, ready_probability", IDLE_X_BACKPRESSURE + [(1.0, 0.5)])
def test_payload_and_fields_for_every_length(straddle, valid_probability, ready_probability):
    rng = random.Random(int(straddle) + int(10*valid_probability) + int(100*ready_probability))
    lengths = list(range(0, 26)) + [32, 64, 128]
    rng.shuffle(lengths)
    lengths += list(range(0, 26))   # And in order: every length after every shorter one.
    cases = []
    for i, length in enumerate(lengths):
        payload = [rng.getrandbits(32) for _ in range(length)]
        cases.append((i & 0xff, payload, 4*length + 64*(i % 2), (4*i) & 0x7f))
    completions = [descriptor(tag, payload, byte_count, lower) + payload
        for tag, payload, byte_count, lower in cases]
    received, _ = run(completions, straddle, valid_probability, ready_probability)
    check(cases, received)


@pytest.mark.parametrize("payload_dws", [16, 32, 64, 128])
def test_completions_of_64_byte_blocks_take_a_beat_every_cycle(payload_dws):
    # The host's completions: whole 64-byte blocks. Straddled, two 64-byte completions take 5 beats, and the
    # depacketizer must take every one of them as it comes (its output is 4 beats).
    cases = [(i, list(range(i, i + payload_dws)), 4*payload_dws, 0) for i in range(24)]
    completions = [descriptor(tag, payload) + payload for tag, payload, _, _ in cases]
    beats = rc_beats(completions, straddle=True)
    assert len(beats) == 24*(-(-(payload_dws + 3)//4))//2   # Half beats, whole ones per pair.
    received, stalls = run(completions, straddle=True)
    check(cases, received)
    assert stalls == []


def test_a_beat_that_ends_two_completions_waits_a_cycle():
    # A 1-DW completion at DW0 and another at DW4: two output beats for one input beat.
    cases = [(1, [0x11], 4, 0), (2, [0x22], 4, 0), (3, list(range(16)), 64, 0)]
    completions = [descriptor(tag, payload) + payload for tag, payload, _, _ in cases]
    received, stalls = run(completions, straddle=True)
    check(cases, received)
    assert len(stalls) == 1


@pytest.mark.parametrize("fields, err", [
    (dict(status=0b100), 1),       # Completer Abort.
    (dict(poisoned=1), 1),
    (dict(error_code=0b0001), 1),  # Poisoned, as the block reports it.
    (dict(error_code=0b1001), 1),  # The block's own completion timeout: no status.
    (dict(), 0),
])
def test_errors_in_the_descriptor_end_the_read(fields, err):
    payload = list(range(5))
    completions = [descriptor(7, [] if fields else payload, **fields) + ([] if fields else payload),
        descriptor(8, payload) + payload]
    received, _ = run(completions, straddle=True)
    assert [p[0]["err"] for p in received] == [err, 0]
    assert [p[0]["tag"] for p in received] == [7, 8]
