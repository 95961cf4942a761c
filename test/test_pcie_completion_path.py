# This file is part of hostlink.
# Copyright (c) 2026 hostlink developers
# SPDX-License-Identifier: BSD-2-Clause

"""Host -> FPGA completion path (cores/pcie/tlp.py, cores/pcie/controller.py) in migen's simulator.

Byte-exact payloads and decoded fields for every payload length from 0 DW to past a bus word, with idle
cycles and back-pressure; back-to-back TLPs without a lost input cycle; tags, ordering and reordering of the
controller against a host that completes out of order.
"""

import random

import pytest

from migen import *

from hostlink.cores.pcie.tlp import TLPHeaderExtracter, CompletionDepacketizer, TLPDepacketizer
from hostlink.cores.pcie.controller import TLPController

from benches.migen_streams import IDLE_X_BACKPRESSURE, MAX_CYCLES, StreamBench, monitor, stuck, wait_for
from benches.tlps import TlpType, completion_dws, request_dws

# TLPs as beats ------------------------------------------------------------------------------------

def beats_of(dws, data_width):
    n = data_width//32
    beats = []
    for i in range(0, len(dws), n):
        chunk = dws[i:i + n]
        dat = sum(dw << (32*k) for k, dw in enumerate(chunk))
        be  = sum(0xf << (4*k) for k in range(len(chunk)))
        beats.append((dat, be))
    return beats


# Header extracter and depacketizer ----------------------------------------------------------------

@pytest.mark.parametrize("data_width", [128, 256])
@pytest.mark.parametrize("valid_probability, ready_probability", IDLE_X_BACKPRESSURE)
def test_depacketizer_payload_and_fields_for_every_length(data_width, valid_probability, ready_probability):
    rng = random.Random(data_width*7 + int(10*valid_probability))
    n = data_width//32
    lengths = list(range(0, 3*n + 2)) + [64, 128]
    tlps = []
    for i, length in enumerate(lengths):
        payload = [rng.getrandbits(32) for _ in range(length)]
        tlps.append((i & 0xff, payload, 4*length + 8*(i % 2), (4*i) & 0x7f))
    packets = [beats_of(completion_dws(tag, payload, byte_count, lower), data_width)
        for tag, payload, byte_count, lower in tlps]

    dut = CompletionDepacketizer(data_width, endianness="little")
    bench = StreamBench(dut, dut.sink, valid_probability, ready_probability)
    bench.output("completions", dut.source, ["dat", "tag", "len", "end", "adr"], expected=len(packets))
    received = bench.run(packets)["completions"]

    for (tag, payload, byte_count, lower), out in zip(tlps, received):
        assert len(out) == max(1, -(-len(payload)//n)), f"{len(payload)} DW payload"
        assert out[0]["first"] and all(not b["first"] for b in out[1:])
        words = [(b["dat"] >> (32*k)) & 0xffffffff for b in out for k in range(n)]
        assert words[:len(payload)] == payload
        assert [out[0]["tag"], out[0]["len"], out[0]["adr"]] == [tag, len(payload) & 0x3ff, lower]
        assert out[0]["end"] == (byte_count == 4*len(payload))


@pytest.mark.parametrize("depacketizer", ["completions", "requests and completions"])
@pytest.mark.parametrize("data_width, payload_dws", [(256, 64), (256, 128), (128, 64), (128, 16)])
def test_back_to_back_completions_lose_no_input_cycle(depacketizer, data_width, payload_dws):
    # LitePCIe's extracter and controller spent two cycles per TLP here: the limit of host -> FPGA reads.
    # At 128 bits, 64-byte completions (16 DWs, what most Intel hosts send) are 5 beats each: a lost cycle
    # per TLP is slower than a Gen2 x8 link delivers them.
    packets = [beats_of(completion_dws(i, list(range(payload_dws))), data_width) for i in range(16)]
    if depacketizer == "completions":
        dut = CompletionDepacketizer(data_width, endianness="little")
        source = dut.source
    else:
        dut = TLPDepacketizer(data_width, endianness="little")
        source = dut.cmp_source
    bench = StreamBench(dut, dut.sink)
    bench.output("completions", source, ["dat"], expected=16)
    bench.run(packets)
    assert bench.stalls == []


def test_extracter_refuses_other_widths():
    with pytest.raises(ValueError, match="must be 128 or 256 bits, not 64"):
        TLPHeaderExtracter(64)


def test_depacketizer_drops_what_is_not_a_completion():
    write = request_dws(TlpType.MEM_WRITE, 0x1000, [1, 2, 3, 4])
    packets = [beats_of(write, 256), beats_of(completion_dws(5, [9, 8, 7]), 256)]
    dut = CompletionDepacketizer(256, endianness="little")
    bench = StreamBench(dut, dut.sink)
    bench.output("completions", dut.source, ["dat", "tag"], expected=1)
    received = bench.run(packets)["completions"]
    assert received[0][0]["tag"] == 5
    assert received[0][0]["dat"] & 0xffffffff == 9

# Host requests and completions on one stream (pcie_7x) ------------------------------------------------

# A message (Fmt 001, Type 10100: routed to the root complex), not for the user logic. cocotbext-pcie's Tlp
# packs no message header: DWORD 0, then requester ID, tag and code, then one DWORD of the rest.
MESSAGE_DWS = [0b001 << 29 | 0b10100 << 24, 0x000000ff, 0]


@pytest.mark.parametrize("data_width", [128, 256])
@pytest.mark.parametrize("valid_probability, ready_probability", IDLE_X_BACKPRESSURE)
def test_requests_and_completions_leave_on_their_own_outputs(data_width, valid_probability, ready_probability):
    rng  = random.Random(data_width + int(10*valid_probability))
    mask = 0xfff00000   # BAR0 of 1 MiB: the address bits above it are dropped.
    tlps = []           # (kind, dws, expected)
    for i in range(40):
        kind = rng.choice(["write", "read", "completion", "other"])
        if kind == "write":
            payload = [rng.getrandbits(32) for _ in range(rng.choice([1, 2, 3, 4, 5, 8, 9]))]
            address = rng.getrandbits(30) << 2
            tlps.append(("request", request_dws(TlpType.MEM_WRITE, address, payload, requester_id=0x0100 + i, tag=i),
                dict(we=1, adr=address & ~mask, len=len(payload), req_id=0x0100 + i, tag=i, payload=payload)))
        elif kind == "read":
            address = rng.getrandbits(30) << 2
            tlps.append(("request", request_dws(TlpType.MEM_READ, address, length=1, requester_id=0x0200 + i, tag=i),
                dict(we=0, adr=address & ~mask, len=1, req_id=0x0200 + i, tag=i, payload=[])))
        elif kind == "completion":
            payload = [rng.getrandbits(32) for _ in range(rng.choice([1, 3, 16, 17, 64]))]
            tlps.append(("completion", completion_dws(i, payload), dict(tag=i, len=len(payload), payload=payload)))
        else:
            # A 64-bit read (LitePCIe's BAR0 is 32-bit) and a message: taken and dropped.
            tlps.append(("other", rng.choice([request_dws(TlpType.MEM_READ_64, 0x1000, length=1), MESSAGE_DWS]),
                None))
    packets = [beats_of(dws, data_width) for _, dws, _ in tlps]
    requests    = [e for k, _, e in tlps if k == "request"]
    completions = [e for k, _, e in tlps if k == "completion"]

    dut = TLPDepacketizer(data_width, endianness="little", address_mask=mask)
    bench = StreamBench(dut, dut.sink, valid_probability, ready_probability)
    bench.output("requests", dut.req_source, ["we", "adr", "len", "req_id", "tag", "dat"], expected=len(requests))
    bench.output("completions", dut.cmp_source, ["tag", "len", "dat", "err"], expected=len(completions))
    out = bench.run(packets)
    got_requests, got_completions = out["requests"], out["completions"]

    n = data_width//32
    for expected, out in zip(requests, got_requests):
        assert out[0]["first"] and all(not b["first"] for b in out[1:])
        assert {f: out[0][f] for f in ["we", "adr", "len", "req_id", "tag"]} == \
            {f: expected[f] for f in ["we", "adr", "len", "req_id", "tag"]}
        words = [(b["dat"] >> (32*k)) & 0xffffffff for b in out for k in range(n)]
        assert words[:len(expected["payload"])] == expected["payload"]
    for expected, out in zip(completions, got_completions):
        assert [out[0]["tag"], out[0]["len"], out[0]["err"]] == [expected["tag"], expected["len"], 0]
        words = [(b["dat"] >> (32*k)) & 0xffffffff for b in out for k in range(n)]
        assert words[:len(expected["payload"])] == expected["payload"]


def test_a_poisoned_completion_is_an_error_on_the_combined_stream():
    poisoned = completion_dws(3, [1, 2, 3, 4], poisoned=True)
    packets = [beats_of(poisoned, 128), beats_of(completion_dws(4, [5, 6]), 128)]
    dut = TLPDepacketizer(128, endianness="little")
    bench = StreamBench(dut, dut.sink)
    bench.output("completions", dut.cmp_source, ["tag", "err"], expected=2)
    received = bench.run(packets)["completions"]
    assert [(p[0]["tag"], p[0]["err"]) for p in received] == [(3, 1), (4, 0)]

# TLP controller -----------------------------------------------------------------------------------

def _read_requests(dut, requests, dws, byte_offset=0):
    """Read requests of `dws` DWs, one per (channel, user_id), each at a 4 KiB page numbered by its index,
    `byte_offset` bytes into it."""
    for index, (channel, user_id) in enumerate(requests):
        yield dut.master_in.sink.len.eq(dws & 0x3ff)   # 0: 1024 DWs.
        yield dut.master_in.sink.valid.eq(1)
        yield dut.master_in.sink.first.eq(1)
        yield dut.master_in.sink.last.eq(1)
        yield dut.master_in.sink.we.eq(0)
        yield dut.master_in.sink.channel.eq(channel)
        yield dut.master_in.sink.user_id.eq(user_id)
        yield dut.master_in.sink.adr.eq(index << 12 | byte_offset)
        yield
        yield from wait_for(dut.master_in.sink.ready)
    yield dut.master_in.sink.valid.eq(0)


def _requester(dut, requests, beats, offset=0):
    """Read requests of `beats` 256-bit beats (`offset` DWs into their page: the request then takes one
    beat more)."""
    return _read_requests(dut, requests, (beats - (offset > 0))*8, offset*4)


def _completion(dut, tag, beats, end=1, on_wait=None, **fields):
    """One completion of `beats` beats for `tag`, as the host sends it to the controller (waiting for ready,
    `on_wait` called for each cycle waited); `fields`: the completion's other fields, each a value or, for
    one that changes from beat to beat, a function of the beat's number."""
    source = dut.master_out.source
    for w in range(beats):
        yield source.valid.eq(1)
        yield source.tag.eq(tag)
        yield source.first.eq(w == 0)
        yield source.last.eq(w == beats - 1)
        yield source.end.eq(end)
        for name, value in fields.items():
            yield getattr(source, name).eq(value(w) if callable(value) else value)
        yield
        yield from wait_for(source.ready, on_wait)
    yield source.valid.eq(0)


def _host(dut, done, on_request, answer):
    """The host of the controller benches, until `done()`: takes each read request the controller sends
    (`on_request(tag, adr)`), then runs `answer()`, a generator that may send completions, each cycle."""
    sink = dut.master_out.sink
    yield sink.ready.eq(1)
    for _ in range(MAX_CYCLES):
        if done():
            return
        yield
        if (yield sink.valid) and (yield sink.ready):
            on_request((yield sink.tag), (yield sink.adr))
        yield from answer()
    raise stuck("the host's completions")


def _held(dut, completions):
    """Sends `completions` (a generator) with the host's requests held meanwhile."""
    yield dut.master_out.sink.ready.eq(0)
    yield from completions
    yield dut.master_out.sink.ready.eq(1)


def _consumer(dut, fields, count, rng, ready_probability, received):
    """Receives `count` beats from the controller (ready with probability `ready_probability`, then a while
    longer: nothing more may come), each as the tuple of its `fields`."""
    return monitor(dut.master_in.source, fields, lambda: len(received) >= count, rng, ready_probability,
                   lambda beat: received.append(tuple(beat[f] for f in fields)))


def _controller_bench(dut, requests, max_pending, words_per_completion, completions_per_request, rng,
    ready_probability, log):
    """Requests in, a host that completes out of order, completions out; fills `log`."""
    outstanding = {}           # tag -> request index
    order       = []           # request indices in the order they left
    host_queue  = []           # (tag, index) waiting for completion
    answered    = []           # tags completed
    words       = completions_per_request*words_per_completion

    def on_request(tag, adr):
        assert tag not in outstanding, f"tag {tag} reused before its completion"
        outstanding[tag] = adr >> 12
        log["max_outstanding"] = max(log.get("max_outstanding", 0), len(outstanding))
        order.append(adr >> 12)
        host_queue.append((tag, adr >> 12))

    def stall():
        log["completion_stalls"] = log.get("completion_stalls", 0) + 1

    def completions(tag, index):
        for c in range(completions_per_request):
            yield from _completion(dut, tag, words_per_completion, end=c == completions_per_request - 1,
                on_wait=stall, dat=lambda w: index << 16 | c*words_per_completion + w)

    def answer():
        # Complete a random outstanding request (out of order), whole, beat after beat.
        if host_queue and rng.random() < 0.5:
            tag, index = host_queue.pop(rng.randrange(len(host_queue)))
            yield from _held(dut, completions(tag, index))
            del outstanding[tag]
            answered.append(tag)

    log["order"] = order
    return [_requester(dut, requests, words),
        _host(dut, lambda: len(answered) == len(requests), on_request, answer),
        _consumer(dut, ["dat", "channel", "user_id"], len(requests)*words, rng, ready_probability,
                  log.setdefault("received", []))]


@pytest.mark.parametrize("max_pending, ready_probability", [(4, 1.0), (4, 0.5), (8, 0.8), (1, 1.0)])
def test_controller_delivers_in_request_order_with_unique_tags(max_pending, ready_probability):
    rng = random.Random(max_pending*10 + int(10*ready_probability))
    requests = [(i % 3, i & 0xff) for i in range(24)]
    dut = TLPController(256, 64, max_pending)
    log = {}
    run_simulation(dut, _controller_bench(dut, requests, max_pending, words_per_completion=3,
        completions_per_request=2, rng=rng, ready_probability=ready_probability, log=log))
    assert log["max_outstanding"] <= max_pending
    expected = [(index << 16 | w, requests[index][0], requests[index][1])
        for index in log["order"] for w in range(6)]
    assert log["received"] == expected


def test_controller_accepts_completions_every_cycle():
    rng = random.Random(3)
    requests = [(0, i) for i in range(16)]
    dut = TLPController(256, 64, 8)
    log = {}
    run_simulation(dut, _controller_bench(dut, requests, 8, words_per_completion=8,
        completions_per_request=2, rng=rng, ready_probability=1.0, log=log))
    assert len(log["received"]) == 16*16
    assert log.get("completion_stalls", 0) == 0


def test_controller_refuses_bad_reads_in_flight():
    with pytest.raises(ValueError, match="power of two from 1 to 128, not 3"):
        TLPController(256, 64, 3)


def _interleaving_bench(dut, requests, words_per_completion, completions_per_request, rng, ready_probability, log,
    offset=0):
    """Like _controller_bench, but the host interleaves the completions of different tags (whole TLPs
    each), as a root complex serving several reads at once does."""
    order   = []
    pending = []   # [tag, index, completions sent]
    done    = []   # request indices completed
    words   = completions_per_request*words_per_completion

    def on_request(tag, adr):
        order.append(adr >> 12)
        pending.append([tag, adr >> 12, 0])
        log["max_outstanding"] = max(log.get("max_outstanding", 0), len(pending))
        in_flight = sum((completions_per_request - c)*words_per_completion for _, _, c in pending)
        log["max_beats_in_flight"] = max(log.get("max_beats_in_flight", 0), in_flight)

    def answer():
        if pending and rng.random() < 0.7:
            entry = rng.choice(pending)
            tag, index, c = entry
            yield from _held(dut, _completion(dut, tag, words_per_completion, end=c == completions_per_request - 1,
                dat=lambda w: index << 16 | c*words_per_completion + w))
            entry[2] += 1
            if entry[2] == completions_per_request:
                pending.remove(entry)
                done.append(index)

    log["order"] = order
    return [_requester(dut, requests, words, offset),
        _host(dut, lambda: len(done) == len(requests), on_request, answer),
        _consumer(dut, ["dat", "first", "last", "end", "channel", "user_id"], len(requests)*words, rng,
                  ready_probability, log.setdefault("received", []))]


@pytest.mark.slow
@pytest.mark.parametrize("max_pending, ready_probability", [(8, 1.0), (8, 0.6), (32, 0.9), (2, 1.0)])
def test_controller_reorders_interleaved_completions(max_pending, ready_probability):
    rng = random.Random(max_pending + int(10*ready_probability))
    requests = [(i % 4, (7*i) & 0xff) for i in range(40)]
    dut = TLPController(256, 64, max_pending)
    log = {}
    wpc, cpr = 2, 4
    run_simulation(dut, _interleaving_bench(dut, requests, wpc, cpr, rng, ready_probability, log))
    expected = [(index << 16 | c*wpc + w, int(w == 0), int(w == wpc - 1), int(c == cpr - 1),
                 requests[index][0], requests[index][1])
        for index in log["order"] for c in range(cpr) for w in range(wpc)]
    assert log["received"] == expected


def test_controller_streams_consecutive_requests_without_a_bubble():
    """Requests whose data is all in: one beat per cycle out, across request boundaries."""
    dut = TLPController(256, 64, 8)
    beats_out = []

    def bench():
        tags = []
        for index in range(8):
            yield dut.master_in.sink.valid.eq(1)
            yield dut.master_in.sink.last.eq(1)
            yield dut.master_in.sink.adr.eq(index << 12)
            yield dut.master_in.sink.len.eq(16*8)
            yield dut.master_out.sink.ready.eq(1)
            for _ in range(MAX_CYCLES):
                yield
                if (yield dut.master_out.sink.valid) and (yield dut.master_in.sink.ready):
                    tags.append((yield dut.master_out.sink.tag))
                    break
            else:
                raise stuck(f"read request {index}")
        yield dut.master_in.sink.valid.eq(0)
        for index, tag in reversed(list(enumerate(tags))):   # Completed last request first.
            yield from _completion(dut, tag, 16, dat=lambda w: index << 16 | w)
        yield dut.master_in.source.ready.eq(1)
        for cycle in range(400):
            yield
            if (yield dut.master_in.source.valid):
                beats_out.append((cycle, (yield dut.master_in.source.dat)))

    run_simulation(dut, bench())
    assert [dat for _, dat in beats_out] == [index << 16 | w for index in range(8) for w in range(16)]
    cycles = [cycle for cycle, _ in beats_out]
    assert cycles == list(range(cycles[0], cycles[0] + 8*16))


@pytest.mark.parametrize("extended_tags", [0, 1])
def test_controller_reuses_a_returned_tag_at_once_with_or_without_extended_tag(extended_tags):
    """64 tags: tags over 31 only while the host enables Extended Tag, and a tag that comes back is free for
    the next read within a cycle or two, whatever the tags the host does not allow yet."""
    dut = TLPController(256, 64, 64)
    usable = 64 if extended_tags else 32
    log = {"tags": [], "next_read_after": None}

    def bench():
        yield dut.extended_tags.eq(extended_tags)
        yield dut.master_out.sink.ready.eq(1)
        yield dut.master_in.source.ready.eq(1)
        yield dut.master_in.sink.valid.eq(1)
        yield dut.master_in.sink.last.eq(1)
        yield dut.master_in.sink.len.eq(8)   # One beat each.
        index = 0
        # Every tag the host allows, in flight, then nothing more.
        for cycle in range(400):
            yield dut.master_in.sink.adr.eq(index << 12)
            yield
            if (yield dut.master_out.sink.valid) and (yield dut.master_in.sink.ready):
                log["tags"].append((yield dut.master_out.sink.tag))
                index += 1
        assert len(log["tags"]) == usable
        # The first read is answered: its tag comes back once its beat is delivered, and the next read
        # leaves with it.
        yield from _completion(dut, log["tags"][0], 1)
        delivered = None
        for cycle in range(100):
            yield dut.master_in.sink.adr.eq(index << 12)
            yield
            if delivered is None and (yield dut.master_in.source.valid):
                delivered = cycle
            if (yield dut.master_out.sink.valid) and (yield dut.master_in.sink.ready):
                log["tags"].append((yield dut.master_out.sink.tag))
                log["next_read_after"] = cycle - delivered
                break

    run_simulation(dut, bench())
    assert sorted(log["tags"][:usable]) == list(range(usable))
    assert log["tags"][usable] == log["tags"][0]
    assert log["next_read_after"] is not None and log["next_read_after"] <= 3, log["next_read_after"]


# Shared completion buffer --------------------------------------------------------------------------

@pytest.mark.slow
@pytest.mark.parametrize("buffer_bytes, ready_probability", [(8192, 1.0), (16384, 0.7)])
def test_controller_large_reads_share_the_buffer(buffer_bytes, ready_probability):
    """4096-byte reads (TLP length 0: 1024 DWs), each in 16 completions of 256 bytes interleaved with other
    reads': as many in flight as the buffer holds, whatever the tags allow, and delivered whole and in order."""
    rng = random.Random(buffer_bytes + int(10*ready_probability))
    requests = [(i % 2, i) for i in range(10)]
    dut = TLPController(256, 64, 32, max_request_bytes=4096, buffer_bytes=buffer_bytes)
    log = {}
    wpc, cpr = 8, 16
    run_simulation(dut, _interleaving_bench(dut, requests, wpc, cpr, rng, ready_probability, log))
    assert log["max_outstanding"] == buffer_bytes//4096
    expected = [(index << 16 | c*wpc + w, int(w == 0), int(w == wpc - 1), int(c == cpr - 1),
                 requests[index][0], requests[index][1])
        for index in log["order"] for c in range(cpr) for w in range(wpc)]
    assert log["received"] == expected


@pytest.mark.slow
def test_controller_gives_unaligned_reads_a_beat_more():
    """A read starting mid-beat returns one beat more than its length fills: 17 beats for 16 x 8 DWs - 4
    whose first DW is the 5th of a beat. The buffer takes exactly those beats, so the ring wraps mid-request,
    and nothing is overwritten."""
    rng = random.Random(5)
    requests = [(0, i) for i in range(24)]
    dut = TLPController(256, 64, 8, buffer_bytes=2048)   # 64 beats: 3 requests of 17, the 4th waits.
    log = {}
    run_simulation(dut, _interleaving_bench(dut, requests, 17, 1, rng, 0.9, log, offset=4))
    assert log["max_outstanding"] == 3
    expected = [(index << 16 | w, int(w == 0), int(w == 16), 1, requests[index][0], requests[index][1])
        for index in log["order"] for w in range(17)]
    assert log["received"] == expected


@pytest.mark.slow
@pytest.mark.parametrize("ready_probability", [1.0, 0.3])
def test_controller_keeps_reads_in_flight_within_the_hard_blocks_space(ready_probability):
    """With `in_flight_bytes` (the hard block's completion space, 15,872 bytes on pcie3_7x) the beats
    requested and not yet received stay within it, whatever waits in the ring: a slow consumer leaves
    received data in the 32 KiB ring, and reads still go out as soon as earlier ones' beats have arrived."""
    rng = random.Random(int(10*ready_probability))
    requests = [(i % 2, i) for i in range(16)]
    dut = TLPController(256, 64, 32, max_request_bytes=4096, buffer_bytes=32768, in_flight_bytes=15872)
    log = {}
    wpc, cpr = 8, 16
    run_simulation(dut, _interleaving_bench(dut, requests, wpc, cpr, rng, ready_probability, log))
    assert 15872//32 - 128 < log["max_beats_in_flight"] <= 15872//32
    expected = [(index << 16 | c*wpc + w, int(w == 0), int(w == wpc - 1), int(c == cpr - 1),
                 requests[index][0], requests[index][1])
        for index in log["order"] for c in range(cpr) for w in range(wpc)]
    assert log["received"] == expected


def test_controller_refuses_reads_in_flight_outside_the_buffer():
    with pytest.raises(ValueError, match="from 4128 bytes .* up to the 16384-byte completion buffer, not 32768"):
        TLPController(256, 64, 32, max_request_bytes=4096, in_flight_bytes=32768)
    with pytest.raises(ValueError, match="not 2048"):
        TLPController(256, 64, 32, max_request_bytes=4096, in_flight_bytes=2048)


@pytest.mark.parametrize("kwargs, message", [
    (dict(buffer_bytes=3000),  "power of two of at least 1024 bytes .* not 3000"),
    (dict(buffer_bytes=512),   "power of two of at least 1024 bytes .* not 512"),
    (dict(max_request_bytes=4096, buffer_bytes=4096), "at least 8192 bytes .*4096-byte read request"),
    (dict(max_request_bytes=768), "largest read request must be a power of two from 128 to 4096 bytes, not 768"),
])
def test_controller_refuses_a_buffer_that_cannot_take_a_read(kwargs, message):
    with pytest.raises(ValueError, match=message):
        TLPController(256, 64, 8, **kwargs)


def _rcb_bench(dut, requests, request_bytes, completion_bytes, rng, log, offset=0, beat_bytes=32):
    """4 KiB-page reads of `request_bytes` (`offset` bytes into their page); a host that answers them in
    completions of `completion_bytes` split on 64-byte boundaries (the first one shorter when the read is
    unaligned), interleaving tags; `log["max_headers"]`: the most completions the host still owed at once,
    counted as the hard block must (one per 64-byte block each read spans)."""
    order   = []
    pending = []   # [tag, index, [completion lengths in bytes]]
    done    = []   # request indices completed

    def blocks(adr, length):
        return (adr % 64 + length + 63)//64

    def split(adr, length):
        pieces = []
        while length:
            piece = min(length, completion_bytes - adr % 64 if adr % 64 else completion_bytes)
            pieces.append((adr, piece))
            adr, length = adr + piece, length - piece
        return pieces

    def on_request(tag, adr):
        order.append(adr >> 12)
        pending.append([tag, adr >> 12, split(adr % 4096, request_bytes)])
        owed = sum(blocks(a, n) for _, _, pieces in pending for a, n in pieces)
        log["max_headers"] = max(log.get("max_headers", 0), owed)

    def answer():
        if pending and rng.random() < 0.7:
            entry = rng.choice(pending)
            tag, index, pieces = entry
            adr, length = pieces.pop(0)
            yield from _held(dut, _completion(dut, tag, (adr % beat_bytes + length + beat_bytes - 1)//beat_bytes,
                end=not pieces, adr=adr & 0x7f, len=(length//4) & 0x3ff))
            if not pieces:
                pending.remove(entry)
                done.append(index)

    def consumer():
        yield dut.master_in.source.ready.eq(1)
        for _ in range(MAX_CYCLES):
            yield
            if (yield dut.master_in.source.valid) and (yield dut.master_in.source.end) and \
               (yield dut.master_in.source.last):
                log["delivered"] = log.get("delivered", 0) + 1
                if log["delivered"] == len(requests):
                    break

    log["order"] = order
    return [_read_requests(dut, requests, request_bytes//4, offset),
        _host(dut, lambda: len(done) == len(requests), on_request, answer), consumer()]


@pytest.mark.slow
@pytest.mark.parametrize("request_bytes, completion_bytes, offset", [
    (4096, 64, 0), (4096, 256, 0), (512, 64, 0), (512, 64, 32), (512, 256, 96), (256, 64, 4)])
def test_controller_keeps_completion_headers_within_the_hard_blocks_space(request_bytes, completion_bytes, offset):
    """With `in_flight_headers` (pcie3_7x: 64) the completions a host may still send, one per 64-byte block
    each read spans, never exceed the hard block's headers, whatever size the host's completions are; and
    reads keep going out as completions give their headers back (no read waits for all to arrive)."""
    rng = random.Random(request_bytes + completion_bytes + offset)
    requests = [(0, i & 0xff) for i in range(24)]
    dut = TLPController(256, 64, 32, max_request_bytes=4096, buffer_bytes=32768, in_flight_bytes=15872,
        in_flight_headers=64)
    log = {}
    run_simulation(dut, _rcb_bench(dut, requests, request_bytes, completion_bytes, rng, log, offset))
    assert log.get("delivered") == len(requests)
    assert log["max_headers"] <= 64
    spans = (offset % 64 + request_bytes + 63)//64
    assert log["max_headers"] > 64 - spans   # The headers are used, not just bounded.


@pytest.mark.slow
@pytest.mark.parametrize("request_bytes, completion_bytes, offset", [(512, 64, 0), (256, 64, 16), (512, 256, 0)])
def test_controller_keeps_pcie_7x_completions_within_its_space(request_bytes, completion_bytes, offset):
    """The same on the 128-bit `pcie_7x` path with the KC705 block's space (72 headers, 5,920 bytes): the
    headers bind for 64-byte completions, and 32 tags never take more than the space allows."""
    rng = random.Random(request_bytes + completion_bytes + offset + 7)
    requests = [(0, i & 0xff) for i in range(40)]
    dut = TLPController(128, 64, 32, max_request_bytes=512, in_flight_bytes=5920, in_flight_headers=72)
    log = {}
    run_simulation(dut, _rcb_bench(dut, requests, request_bytes, completion_bytes, rng, log, offset,
        beat_bytes=16))
    assert log.get("delivered") == len(requests)
    assert log["max_headers"] <= 72
    spans = (offset % 64 + request_bytes + 63)//64
    assert log["max_headers"] > 72 - spans


def test_controller_refuses_too_few_completion_headers():
    with pytest.raises(ValueError, match="from 64 .*4096-byte read request, split on every 64-byte boundary.* not 63"):
        TLPController(256, 64, 32, max_request_bytes=4096, in_flight_headers=63)
    with pytest.raises(ValueError, match="from 9 .* not 8"):
        TLPController(256, 64, 32, max_request_bytes=512, in_flight_headers=8)
    with pytest.raises(ValueError, match="read completion boundary must be 64 or 128 bytes, not 32"):
        TLPController(256, 64, 32, rcb_bytes=32)

# Completion faults ---------------------------------------------------------------------------------

def _fault_bench(dut, count, beats, faults, rng, ready_probability, log):
    """`count` reads of `beats` 256-bit beats (read `index` at 4 KiB page `index`, user_id `index`); a host
    that answers the reads outstanding in random order, each in one completion, except for `faults`:
    index -> "lost" (never answered; answered late once the timeout has ended it), "ur" (one header-only
    completion with a non-success status), "poisoned" (a poisoned completion, err with data, then a clean
    one), "stray" (a completion for a tag not outstanding first, then the
    right one), "long" (one beat more than the read asked for)."""
    order    = []
    pending  = []   # [tag, index]
    late     = []   # tags whose read timed out, answered late
    answered = []   # request indices answered in time
    lost     = [i for i, f in faults.items() if f == "lost"]

    def completion(tag, index, words, err=0, marker=0, end=1, length=0, offset=0, req_id=0):
        yield from _completion(dut, tag, words, end=end and not (err and not length), req_id=req_id, err=err,
            len=length, dat=lambda w: marker << 32 | index << 16 | (offset + w))
        yield dut.master_out.source.err.eq(0)

    def on_request(tag, adr):
        order.append(adr >> 12)
        pending.append([tag, adr >> 12])

    def answer():
        if (yield dut.timeouts) != len(late):   # A read timed out: it is answered now, too late.
            entry = next(e for e in pending if faults.get(e[1]) == "lost")
            pending.remove(entry)
            yield from _held(dut, completion(entry[0], entry[1], beats, marker=0xbad))   # Dropped.
            late.append(entry[0])
            return
        answerable = [e for e in pending if faults.get(e[1]) != "lost"]
        if answerable and rng.random() < 0.5:
            entry = rng.choice(answerable)
            yield from _held(dut, answers(*entry))
            pending.remove(entry)
            answered.append(entry[1])

    def answers(tag, index):
        fault = faults.get(index)
        if fault == "ur":
            yield from completion(tag, index, 1, err=1)
        elif fault == "stray":
            busy  = {t for t, _ in pending}
            stray = next((t for t in range(2**len(dut.free_tags.source.tag)) if t not in busy), 0xfe)
            yield from completion(stray, index, beats, marker=0xbad)
            yield from completion(0xfe, index, 1, marker=0xbad)   # Not even one of our tags.
            yield from completion(tag, index, beats)
        elif fault == "long":
            yield from completion(tag, index, beats + 1)
        elif fault == "foreign":
            # A completion of the right tag for another requester, then the right one.
            yield from completion(tag, index, beats, marker=0xbad, req_id=0x0108)
            yield from completion(tag, index, beats)
        elif fault == "long2":
            # Two completions, the second two beats longer than what is left of the read.
            half = beats//2
            yield from completion(tag, index, half, end=0, length=8*half)
            yield from completion(tag, index, beats - half + 2, length=8*(beats - half + 2), offset=half)
        elif fault == "poisoned":
            # Its first half poisoned (EP: err with data), its second half clean.
            half = beats//2
            yield from completion(tag, index, half, err=1, end=0, length=8*half)
            yield from completion(tag, index, beats - half, length=8*(beats - half))
        else:
            yield from completion(tag, index, beats)

    def consumer():
        received = log.setdefault("received", [])
        for _ in range(MAX_CYCLES):
            if len(received) == count*beats:
                break
            ready = rng.random() < ready_probability
            yield dut.master_in.source.ready.eq(ready)
            yield
            if ready and (yield dut.master_in.source.valid):
                beat = {}
                for f in ["dat", "err", "first", "last", "end", "user_id"]:
                    beat[f] = (yield getattr(dut.master_in.source, f))
                received.append(beat)
        for _ in range(20):   # Let the last read's room come back.
            yield
        log["free_tags"]   = (yield dut.free_tags.level)
        log["ring_free"]   = (yield dut.ring_free)
        log["in_flight"]   = (yield dut.beats_in_flight)
        log["headers"]     = (yield dut.headers_in_flight)
        log["counters"]    = ((yield dut.timeouts), (yield dut.error_completions),
                              (yield dut.unexpected_completions))
        log["foreign"]     = (yield dut.foreign_completions)

    log["order"], log["late"] = order, late
    requests = [(0, index) for index in range(count)]
    return [_requester(dut, requests, beats),
        _host(dut, lambda: len(answered) + len(lost) == count and len(late) == len(lost), on_request, answer),
        consumer()]


def _fault_dut(max_pending=4, timeout_cycles=300):
    # Requester ID checked against 0 (the `requester_id` input's reset value): the bench's completions carry 0.
    return TLPController(256, 64, max_pending, max_request_bytes=512, buffer_bytes=4096, in_flight_bytes=2048,
        in_flight_headers=32, completion_checks=True, timeout_cycles=timeout_cycles, check_requester_id=True)


@pytest.mark.slow
@pytest.mark.parametrize("faults, counters", [
    ({3: "lost"},                         (1, 0, 1)),   # The late completion is unexpected.
    ({2: "ur", 5: "ur"},                  (0, 2, 0)),
    ({1: "stray", 4: "stray"},            (0, 0, 4)),   # Each: a free tag of ours, and one not ours.
    ({2: "long"},                         (0, 0, 1)),
    ({2: "long2", 7: "long2"},            (0, 0, 2)),
    ({4: "foreign", 9: "foreign"},        (0, 0, 0)),   # Counted apart (foreign_completions).
    ({3: "poisoned", 6: "poisoned"},      (0, 2, 0)),   # The clean rest of each read is its own, not stray.
    ({1: "lost", 3: "ur", 5: "stray", 7: "long"}, (1, 1, 4)),
])
@pytest.mark.parametrize("ready_probability", [1.0, 0.5])
def test_controller_ends_faulty_reads_with_err_and_counts_them(faults, counters, ready_probability):
    """Each fault ends its read with `err` (as many beats as it asked for, framed as one completion),
    is counted, corrupts no other read, and reads after it complete cleanly; at the end every tag, the
    whole ring and all beats and headers in flight are given back."""
    rng = random.Random(len(faults)*10 + int(10*ready_probability))
    count, beats = 12, 4
    dut = _fault_dut()
    log = {}
    run_simulation(dut, _fault_bench(dut, count, beats, faults, rng, ready_probability, log))
    received = log["received"]
    assert len(received) == count*beats
    for n, index in enumerate(log["order"]):
        out = received[n*beats:(n + 1)*beats]
        assert [b["user_id"] for b in out] == [index]*beats
        if faults.get(index) != "long2":   # Two completions: each framed as its own.
            assert [(b["first"], b["last"]) for b in out] == \
                [(int(w == 0), int(w == beats - 1)) for w in range(beats)], f"read {index}"
        assert out[-1]["end"] == 1
        fault = faults.get(index)
        if fault in ("lost", "ur", "poisoned"):
            assert all(b["err"] for b in out), f"read {index}"   # Nothing of it arrived: all stale.
        elif fault in ("long", "long2"):
            assert out[-1]["err"] == 1                           # Ended by the beat that did not fit.
            assert [b["dat"] for b in out] == [index << 16 | w for w in range(beats)]
        else:
            assert [(b["dat"], b["err"], b["end"]) for b in out] == [(index << 16 | w, 0, 1) for w in range(beats)], \
                f"read {index}"
    assert len(log["late"]) == list(faults.values()).count("lost")
    assert log["counters"] == counters
    assert log["foreign"] == list(faults.values()).count("foreign")
    assert (log["free_tags"], log["ring_free"], log["in_flight"], log["headers"]) == (4, 4096//32, 0, 0)


def test_controller_timeout_is_programmable_and_zero_waits_forever():
    """The limit is an input: the head read's wait is timed against it; 0 turns the timeout off."""
    dut = _fault_dut(max_pending=2, timeout_cycles=0)
    seen = {}

    def bench():
        yield dut.master_out.sink.ready.eq(1)
        yield from _requester(dut, [(0, 0)], 2)
        for _ in range(1000):
            yield
        seen["never"] = (yield dut.timeouts)
        yield dut.timeout_cycles.eq(100)
        for cycle in range(200):
            yield
            if (yield dut.timeouts):
                seen["cycle"] = cycle
                break

    run_simulation(dut, bench())
    assert seen["never"] == 0
    assert seen["cycle"] <= 2   # The read has waited 1000 cycles already: past the new limit.


def test_controller_fault_counters_saturate():
    dut = _fault_dut()
    values = []

    def bench():
        yield dut.unexpected_completions.eq(2**32 - 2)
        for _ in range(3):
            yield dut.master_out.source.valid.eq(1)
            yield dut.master_out.source.first.eq(1)
            yield dut.master_out.source.last.eq(1)
            yield dut.master_out.source.tag.eq(0xfe)
            yield
            values.append((yield dut.unexpected_completions))
        yield dut.master_out.source.valid.eq(0)
        yield
        values.append((yield dut.unexpected_completions))

    run_simulation(dut, bench())
    assert values[-1] == 2**32 - 1


@pytest.mark.parametrize("kwargs, message", [
    (dict(timeout_cycles=-1),    "from 0 \\(never\\) to 2\\*\\*32 - 1, not -1"),
    (dict(timeout_cycles=2**32), "not 4294967296"),
    (dict(with_csr=True),        "with_csr needs completion_checks=True"),
    (dict(check_requester_id=True), "check_requester_id needs completion_checks=True"),
])
def test_controller_refuses_bad_fault_parameters(kwargs, message):
    with pytest.raises(ValueError, match=message):
        TLPController(256, 64, 8, **kwargs)


def test_controller_fault_csrs():
    dut = TLPController(256, 64, 8, completion_checks=True, timeout_cycles=1234, with_csr=True)
    names = {csr.name for csr in dut.get_csrs()}
    assert {"timeout_cycles", "timeouts", "error_completions", "unexpected_completions"} <= names
    assert dut._timeout_cycles.storage.reset.value == 1234
