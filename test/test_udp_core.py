# This file is part of hostlink.
# Copyright (c) 2026 hostlink developers
# SPDX-License-Identifier: BSD-2-Clause

"""UDPCore on LiteEth's MAC core with a byte-level PHY model: generator at line rate, ARP,
echo, refused requests, CSRs and parameter checks."""

import random

import pytest

from migen import *

from scapy.all import Ether, ARP, IP, UDP, Raw, raw

from litex.soc.interconnect.csr import CSRStatus, CSRStorage

from hostlink.cores.udp import UDPCore, PacketGenerator
from hostlink.cores.udp.core import _Counter, MAX_CLOCK_RATIO
from hostlink.cores.udp.mac import PipelinedMACCore
from hostlink.cores.udp.common import *
from hostlink.cores.udp.arp import arp_reply_frame
from benches.migen_streams import pulse
from benches.udp_models import PHYModel, PHYTxMonitor, PHYRxDriver, StreamSink

FPGA_MAC, FPGA_IP, FPGA_PORT = "10:e2:d5:00:00:01", "192.168.1.50", 1234
HOST_MAC, HOST_IP, HOST_PORT = "10:e2:d5:00:00:02", "192.168.1.100", 4321
ADDRESSES = dict(fpga_mac=FPGA_MAC, fpga_ip=FPGA_IP, host_mac=HOST_MAC, host_ip=HOST_IP,
                 fpga_port=FPGA_PORT, host_port=HOST_PORT)
CLOCKS = {"sys": 10, "eth_tx": 10, "eth_rx": 10}

# Ethernet overhead per frame beyond the bytes the core hands the MAC: preamble+SFD, FCS, gap.
WIRE_OVERHEAD = 8 + 4 + 12


def make_core(**kwargs):
    phy  = PHYModel()
    core = UDPCore(phy, 125e6, **ADDRESSES, **kwargs)
    core.submodules += phy
    return core, phy


def expected_frame(payload, padded=False):
    frame = raw(Ether(src=FPGA_MAC, dst=HOST_MAC) /
               IP(src=FPGA_IP, dst=HOST_IP, id=0, flags="DF", ttl=64) /
               UDP(sport=FPGA_PORT, dport=HOST_PORT, chksum=0) / Raw(load=payload))
    # The MAC pads short frames to the 60-byte minimum.
    return frame + bytes(max(0, 60 - len(frame))) if padded else frame


def host_frame(payload, dport=FPGA_PORT):
    return raw(Ether(src=HOST_MAC, dst=FPGA_MAC) / IP(src=HOST_IP, dst=FPGA_IP) /
               UDP(sport=HOST_PORT, dport=dport) / Raw(load=payload))


def run(core, generators, cycles):
    def timeout():
        for _ in range(cycles):
            yield
    run_simulation(core, generators + [timeout()], clocks=CLOCKS)


def read_after(cycles, signals, values):
    """A bench generator: `cycles` cycles, then each of `signals` ({key: signal}) read into `values`."""
    for _ in range(cycles):
        yield
    for key, signal in signals.items():
        values[key] = (yield signal)

# Generator ----------------------------------------------------------------------------------------

# Lengths stay short: migen simulates the whole MAC slowly. The full 1472-byte case runs in
# test_udp_transmitter's Verilator tests and in ./sim.py udp.
@pytest.mark.slow
@pytest.mark.parametrize("length", [0, 1, 18, 61])
def test_generator_back_to_back_at_line_rate(length):
    count = 3
    core, phy = make_core(generator_defaults=dict(count=count, payload_length=length, start=True), with_csr=False)
    mon = PHYTxMonitor(phy)
    wire = max(HEADER_LEN + length, 60) + WIRE_OVERHEAD
    values = {}
    run(core, [mon.generator(), read_after(count * wire + 200,
        {"sent": core.counters["tx_sent"], "cycles": core.gen_cycles}, values)], count * wire + 220)
    assert [bytes(f) for f in mon.frames] == \
           [expected_frame(generator_payload(i, length), padded=True) for i in range(count)]
    # Only the MAC's own gap between frames: the line is never idle longer than the standard gap.
    for a, b in zip(mon.starts, mon.starts[1:]):
        assert b - a == wire
    assert values["sent"] == count


@pytest.mark.slow
def test_generator_gap_and_stop():
    core, phy = make_core(generator_defaults=dict(count=0, payload_length=40, gap=300, start=True), with_csr=False)
    mon = PHYTxMonitor(phy)
    run(core, [mon.generator(), pulse(core.gen_stop, after=800)], 1500)
    # count=0 runs until stop; a 300-cycle gap separates the requests. A request holds the
    # transmitter for its 82 bytes, its acceptance cycle, and the 8 preamble bytes plus two cycles
    # that the MAC (its datapath in the core's clock) holds it while inserting the preamble.
    assert len(mon.frames) == 3
    assert mon.starts[1] - mon.starts[0] == (HEADER_LEN + 40) + 1 + 10 + 300
    assert [bytes(f) for f in mon.frames] == [expected_frame(generator_payload(i, 40)) for i in range(3)]


@pytest.mark.slow
def test_generator_length_above_maximum_is_refused_and_counted():
    # A 576-byte MTU (548-byte payloads) keeps the refused request short to simulate.
    core, phy = make_core(generator_defaults=dict(count=1, payload_length=549, start=True), with_csr=False, mtu=576)
    mon = PHYTxMonitor(phy)
    values = {}
    run(core, [mon.generator(), read_after(700,
        {"refused": core.counters["tx_refused"], "sent": core.counters["tx_sent"]}, values)], 720)
    assert mon.frames == [] and values == {"refused": 1, "sent": 0}


def test_generator_payload_pattern():
    gen = PacketGenerator()
    snk = StreamSink(gen.source, fields=("data", "length"), backpressure=0.3, seed=9)
    def drive():
        yield gen.count.eq(300)
        yield gen.length.eq(7)
        yield gen.start.eq(1)
        yield
        yield gen.start.eq(0)
        for _ in range(4000):
            yield
    run_simulation(gen, [drive(), snk.generator()])
    assert len(snk.packets) == 300
    for seq, p in enumerate(snk.packets):
        assert bytes(b["data"] for b in p) == generator_payload(seq, 7)

# ARP ----------------------------------------------------------------------------------------------

def arp_request(target_ip=FPGA_IP, dst="ff:ff:ff:ff:ff:ff", op=1):
    return raw(Ether(src=HOST_MAC, dst=dst) /
               ARP(op=op, hwsrc=HOST_MAC, psrc=HOST_IP, hwdst="00:00:00:00:00:00", pdst=target_ip))


@pytest.mark.slow
def test_arp_requests_for_our_ip_are_answered():
    core, phy = make_core(with_csr=False)
    mon, drv = PHYTxMonitor(phy), PHYRxDriver(phy)
    drv.send(arp_request())                          # Broadcast request: answered.
    drv.send(arp_request(target_ip="192.168.1.51"))  # Another IP: ignored.
    drv.send(arp_request(op=2))                      # A reply, not a request: ignored.
    drv.send(arp_request(), bad_fcs=True)            # Bad FCS: ignored.
    drv.send(arp_request(dst=FPGA_MAC))              # Unicast request (cache refresh): answered.
    values = {}
    run(core, [mon.generator(), drv.generator(), read_after(800, {"replies": core.counters["arp_replies"]}, values)],
        820)
    reply = arp_reply_frame(mac_to_int(FPGA_MAC), ip_to_int(FPGA_IP), mac_to_int(HOST_MAC), ip_to_int(HOST_IP))
    assert [bytes(f) for f in mon.frames] == [reply + bytes(18)] * 2
    parsed = Ether(mon.frames[0])
    assert parsed[ARP].op == 2 and parsed[ARP].psrc == FPGA_IP and parsed[ARP].hwsrc == FPGA_MAC
    assert parsed[ARP].pdst == HOST_IP and parsed[ARP].hwdst == HOST_MAC
    assert values["replies"] == 2


@pytest.mark.slow
def test_no_arp_removes_the_responder():
    core, phy = make_core(with_csr=False, with_arp=False)
    assert not hasattr(core, "arp") and "arp_replies" not in core.counters
    mon, drv = PHYTxMonitor(phy), PHYRxDriver(phy)
    drv.send(arp_request())
    run(core, [mon.generator(), drv.generator()], 400)
    assert mon.frames == []

# Echo ---------------------------------------------------------------------------------------------

@pytest.mark.slow
def test_echo_sends_each_valid_payload_back():
    core, phy = make_core(mode="echo", with_csr=False)
    mon, drv = PHYTxMonitor(phy), PHYRxDriver(phy)
    payloads = [b"", b"a", bytes(range(18)), bytes(range(91))]
    for p in payloads:
        drv.send(host_frame(p))
        drv.send(host_frame(b"wrong port", dport=FPGA_PORT + 1))
    values = {}
    run(core, [mon.generator(), drv.generator(), read_after(1100, {"received": core.counters["rx_received"],
        "port": core.counters["rx_drop_port"], "sent": core.counters["tx_sent"]}, values)], 1120)
    assert [bytes(f)[:HEADER_LEN + len(p)] for f, p in zip(mon.frames, payloads)] == \
           [expected_frame(p) for p in payloads]
    assert values == {"received": len(payloads), "port": len(payloads), "sent": len(payloads)}

@pytest.mark.slow
def test_echo_drops_bad_ipv4_checksum_and_counts_it():
    core, phy = make_core(mode="echo", with_csr=False)
    mon, drv = PHYTxMonitor(phy), PHYRxDriver(phy)
    bad = raw(Ether(src=HOST_MAC, dst=FPGA_MAC) / IP(src=HOST_IP, dst=FPGA_IP, chksum=0xbad0) /
              UDP(sport=HOST_PORT, dport=FPGA_PORT) / Raw(load=b"bad checksum"))
    drv.send(bad)
    drv.send(host_frame(b"good"))
    values = {}
    run(core, [mon.generator(), drv.generator(), read_after(500, {"checksum": core.counters["rx_drop_checksum"],
        "received": core.counters["rx_received"]}, values)], 520)
    assert [bytes(f)[:HEADER_LEN + 4] for f in mon.frames] == [expected_frame(b"good")]
    assert values == {"checksum": 1, "received": 1}

# CSRs and parameters ------------------------------------------------------------------------------

def test_csrs_present_and_reset_to_generator_defaults():
    core, _ = make_core(generator_defaults=dict(count=10, payload_length=512, gap=40))
    csrs = {c.name: c for c in core.get_csrs()}
    for name in ["clk_freq", "gen_control", "gen_count", "gen_length", "gen_gap", "gen_status", "gen_sent",
                 "gen_cycles", "tx_sent", "tx_refused", "tx_mismatch", "rx_received", "arp_replies"] + \
                [f"rx_drop_{r}" for r, _ in RX_DROP_REASONS]:
        assert name in csrs, name
    assert csrs["gen_count"].storage.reset.value == 10
    assert csrs["gen_length"].storage.reset.value == 512
    assert csrs["gen_gap"].storage.reset.value == 40
    assert csrs["clk_freq"].status.reset.value == 125_000_000


def test_echo_mode_has_no_generator_csrs():
    core, _ = make_core(mode="echo")
    names = {c.name for c in core.get_csrs()}
    assert "rx_received" in names and not any(n.startswith("gen_") for n in names)


@pytest.mark.parametrize("kwargs,message", [
    (dict(mode="loopback"), "mode must be 'generator' or 'echo', not 'loopback'"),
    (dict(generator_defaults=dict(count=-1)), "generator_defaults\\['count'\\] must be an integer in 0..4294967295, not -1"),
    (dict(generator_defaults=dict(size=3)), "generator_defaults: unknown keys \\['size'\\]"),
    (dict(generator_defaults=dict(start=1)), "generator_defaults\\['start'\\] must be True or False, not 1"),
    (dict(mode="echo", generator_defaults={}), "generator_defaults only applies to mode='generator'"),
    (dict(mtu=9000), "mtu must be an integer in 576..1500, not 9000"),
])
def test_core_rejects_bad_parameters(kwargs, message):
    with pytest.raises(ValueError, match=message):
        make_core(**kwargs)


def test_core_rejects_bad_clock():
    with pytest.raises(ValueError, match="clk_freq must be a positive number of Hz, not 0"):
        UDPCore(PHYModel(), 0, **ADDRESSES)
    with pytest.raises(ValueError, match="clock_domain must name the data plane's clock domain .*not 'eth_tx'"):
        UDPCore(PHYModel(), 125e6, **ADDRESSES, clock_domain="eth_tx")

# Data plane in its own clock ----------------------------------------------------------------------

# The boards' clocks: data plane 125 MHz (8 ns), control plane 50 MHz (20 ns).
SPLIT_CLOCKS = {"sys": 20, "eth": 8, "eth_tx": 8, "eth_rx": 8}

# The core is tested without a CSR bus: these set what a bus write leaves in `sys`.
def csr_store(csr, value):
    yield csr.storage.eq(value)
    yield


def csr_pulse(field):
    yield field.eq(1)
    yield
    yield field.eq(0)
    yield


@pytest.mark.slow
def test_generator_driven_through_csrs_from_a_slower_control_clock():
    """Configuration, start, status and counters cross between `sys` (50 MHz) and `eth` (125 MHz);
    the frames still leave back to back at line rate."""
    count, length = 4, 18
    phy  = PHYModel()
    core = UDPCore(phy, 125e6, **ADDRESSES, clock_domain="eth")
    core.submodules += phy
    mon  = PHYTxMonitor(phy)
    wire = max(HEADER_LEN + length, 60) + WIRE_OVERHEAD
    values = {}
    def control():
        for _ in range(10):
            yield
        yield from csr_store(core._gen_count, count)
        yield from csr_store(core._gen_length, length)
        yield from csr_pulse(core._gen_control.fields.start)
        for _ in range(20):
            yield
        values["busy_after_start"] = (yield core._gen_status.fields.busy)
        for _ in range((count * wire + 100) * 8 // 20):
            yield
        values["busy"]    = (yield core._gen_status.fields.busy)
        values["gen_sent"] = (yield core._gen_sent.status)
        values["cycles"]  = (yield core._gen_cycles.status)
        values["tx_sent"] = (yield core._tx_sent.status)
    def timeout():
        for _ in range((count * wire + 200) * 8 // 20):
            yield
    run_simulation(core, {"sys": [control(), timeout()], "eth_tx": [mon.generator()]}, clocks=SPLIT_CLOCKS)
    assert [bytes(f) for f in mon.frames] == \
           [expected_frame(generator_payload(i, length), padded=True) for i in range(count)]
    for a, b in zip(mon.starts, mon.starts[1:]):
        assert b - a == wire
    assert values["busy_after_start"] == 1
    assert values["busy"] == 0 and values["gen_sent"] == count and values["tx_sent"] == count
    # gen_cycles counts data plane cycles: about the run's wire time.
    assert (count - 1) * wire <= values["cycles"] <= count * wire + 50


@pytest.mark.parametrize("event_period,sys_period", [(8, 20), (8, 8 * MAX_CLOCK_RATIO), (20, 8)])
def test_counter_counts_every_event_of_another_clock(event_period, sys_period):
    """Bursts of back-to-back events (one per cycle) and random ones, at the slowest control clock
    allowed: none is lost; the count is exact once the last event has crossed."""
    event   = Signal()
    counter = _Counter(event, event_domain="eth")
    rng     = random.Random(3)
    pattern = [1] * 100 + [rng.random() < 0.4 for _ in range(1000)] + [1] * 37 + [0] * 50
    values  = {}
    def drive():
        for e in pattern:
            yield event.eq(e)
            yield
        yield event.eq(0)
    def check():
        for _ in range((len(pattern) + 20) * event_period // sys_period + 10):
            yield
        values["count"] = (yield counter.value)
    run_simulation(counter, {"eth": [drive()], "sys": [check()]},
                   clocks={"sys": sys_period, "eth": event_period})
    assert values["count"] == sum(pattern)


def test_counter_saturates():
    event   = Signal(reset=1)
    counter = _Counter(event, event_domain="eth")
    values  = {}
    def check():
        yield counter.value.eq(2**32 - 5)
        for _ in range(20):
            yield
        values["count"] = (yield counter.value)
    run_simulation(counter, {"sys": [check()]}, clocks={"sys": 20, "eth": 8})
    assert values["count"] == 2**32 - 1


@pytest.mark.parametrize("kwargs,message", [
    (dict(cdc_depth=12), "cdc_depth must be a power of 2 >= 4, not 12"),
    (dict(cdc_depth=2),  "cdc_depth must be a power of 2 >= 4, not 2"),
])
def test_mac_rejects_bad_parameters(kwargs, message):
    with pytest.raises(ValueError, match=message):
        PipelinedMACCore(PHYModel(), **kwargs)


def test_mac_needs_an_8_bit_phy():
    phy = PHYModel()
    phy.dw = 32
    with pytest.raises(ValueError, match="PipelinedMACCore needs an 8-bit PHY, not dw=32"):
        PipelinedMACCore(phy)
