# This file is part of hostlink.
# Copyright (c) 2026 hostlink developers
# SPDX-License-Identifier: BSD-2-Clause

"""ARPResponder alone against requests built by scapy, with idle cycles on its input and
back-pressure on its output: requests for our IP from a unicast sender are answered byte for byte;
senders whose MAC is zero, broadcast or multicast are ignored."""

import pytest

from migen import run_simulation

from scapy.all import Ether, ARP, Raw, raw

from hostlink.cores.udp.arp import ARPResponder, arp_reply_frame
from hostlink.cores.udp.common import mac_to_int, ip_to_int
from benches.migen_streams import IDLE_X_BACKPRESSURE_AS_IDLE
from benches.udp_models import StreamSource, StreamSink

FPGA_MAC, FPGA_IP = "10:e2:d5:00:00:01", "192.168.1.50"
HOST_IP           = "192.168.1.100"

# Helpers ------------------------------------------------------------------------------------------

def request(sender_mac, dst="ff:ff:ff:ff:ff:ff"):
    frame = raw(Ether(src="10:e2:d5:00:00:02", dst=dst) /
                ARP(op=1, hwsrc=sender_mac, psrc=HOST_IP, hwdst="00:00:00:00:00:00", pdst=FPGA_IP))
    return frame + bytes(60 - len(frame)) # As LiteEth's MAC hands it over: padded, FCS stripped.


def reply(sender_mac):
    return arp_reply_frame(mac_to_int(FPGA_MAC), ip_to_int(FPGA_IP), mac_to_int(sender_mac), ip_to_int(HOST_IP))


# Not ARP: spaces the requests so each reply is out before the next request ends (one is held at a time).
FILLER = raw(Ether(src="10:e2:d5:00:00:02", dst=FPGA_MAC, type=0x0800) / Raw(load=bytes(300)))


def run_arp(frames, idle, backpressure):
    arp = ARPResponder(FPGA_MAC, FPGA_IP)
    src = StreamSource(arp.sink, idle=idle, seed=3)
    snk = StreamSink(arp.source, backpressure=backpressure, seed=4)
    for frame in frames:
        beats = [{"data": b, "last_be": 0, "error": 0} for b in frame]
        beats[-1]["last_be"] = 1
        src.send(beats)
        src.send([{"data": b, "last_be": 0, "error": 0} for b in FILLER])
    replied = []

    def monitor():
        quiet = 0
        while quiet < 200:
            quiet = quiet + 1 if src.done and not (yield arp.source.valid) else 0
            replied.append((yield arp.replied))
            yield
    run_simulation(arp, [src.generator(), monitor(), snk.generator()])
    assert snk.current == [], "a reply was left unfinished"
    return [bytes(b["data"] for b in p) for p in snk.packets], sum(replied)

# Tests --------------------------------------------------------------------------------------------

SENDERS = [
    ("10:e2:d5:00:00:02", True),   # Ordinary unicast host.
    ("00:00:00:00:00:00", False),  # Zero.
    ("ff:ff:ff:ff:ff:ff", False),  # Broadcast.
    ("01:00:5e:00:00:01", False),  # IPv4 multicast.
    ("33:33:00:00:00:01", False),  # IPv6 multicast.
    ("11:22:33:44:55:66", False),  # Group bit set in an otherwise ordinary address.
    ("00:00:00:00:00:01", True),   # Only the last byte non-zero: a legal unicast address.
    ("02:00:00:00:00:00", True),   # Locally administered unicast.
    ("10:e2:d5:00:00:03", True),   # The responder still answers after ignoring some.
]

@pytest.mark.parametrize("idle,backpressure", IDLE_X_BACKPRESSURE_AS_IDLE)
def test_sender_mac_zero_broadcast_or_multicast_is_ignored(idle, backpressure):
    frames = [request(mac) for mac, _ in SENDERS]
    frames.append(request("10:e2:d5:00:00:04", dst=FPGA_MAC)) # Unicast request, unicast sender.
    expected = [reply(mac) for mac, answered in SENDERS if answered] + [reply("10:e2:d5:00:00:04")]
    got, replied = run_arp(frames, idle, backpressure)
    assert got == expected
    assert replied == len(expected)


def test_multicast_sender_to_our_mac_is_ignored_too():
    got, replied = run_arp([request("01:00:5e:7f:00:01", dst=FPGA_MAC), request("00:00:00:00:00:00", dst=FPGA_MAC)],
                           0.0, 0.0)
    assert got == [] and replied == 0
