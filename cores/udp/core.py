# This file is part of hostlink.
# Copyright (c) 2026 hostlink developers
# SPDX-License-Identifier: BSD-2-Clause

"""UDPCore: LiteEth's MAC core plus hostlink's minimal UDP/IPv4 transmitter, receiver, ARP
responder and packet generator (or echo), with status counters."""

from migen import *

from litex.gen import *

from litex.soc.interconnect import stream
from litex.soc.interconnect.csr import *
from litex.soc.interconnect.packet import Arbiter

from liteeth.mac.core import LiteEthMACCore

from hostlink.cores.udp.common import *
from hostlink.cores.udp.transmitter import UDPTransmitter
from hostlink.cores.udp.receiver import UDPReceiver
from hostlink.cores.udp.arp import ARPResponder
from hostlink.cores.udp.generator import PacketGenerator

# Helpers ------------------------------------------------------------------------------------------

GENERATOR_DEFAULT_KEYS = {"count", "payload_length", "gap", "start"}

def check_generator_defaults(defaults, max_payload):
    """The generator's reset configuration: {count, payload_length, gap, start}, all optional."""
    if defaults is None:
        defaults = {}
    if not isinstance(defaults, dict):
        raise ValueError(f"generator_defaults must be a dict with keys {sorted(GENERATOR_DEFAULT_KEYS)}, "
                         f"not {defaults!r}")
    unknown = set(defaults) - GENERATOR_DEFAULT_KEYS
    if unknown:
        raise ValueError(f"generator_defaults: unknown keys {sorted(unknown)}; "
                         f"expected some of {sorted(GENERATOR_DEFAULT_KEYS)}")
    r = {"count": 0, "payload_length": max_payload, "gap": 0, "start": False}
    r.update(defaults)
    for key, limit in [("count", 2**32 - 1), ("payload_length", 2**16 - 1), ("gap", 2**32 - 1)]:
        v = r[key]
        if isinstance(v, bool) or not isinstance(v, int) or not 0 <= v <= limit:
            raise ValueError(f"generator_defaults[{key!r}] must be an integer in 0..{limit}, not {v!r}")
    if not isinstance(r["start"], bool):
        raise ValueError(f"generator_defaults['start'] must be True or False, not {r['start']!r}")
    return r


class _Counter(LiteXModule):
    """32-bit event counter that saturates instead of wrapping, so a reading is never too low."""
    def __init__(self, event):
        self.value = Signal(32) # o

        # # #

        # The event is registered so the counter's carry chain starts a fresh timing path.
        pending = Signal()
        self.sync += [
            pending.eq(event),
            If(pending & (self.value != 2**32 - 1), self.value.eq(self.value + 1)),
        ]

# UDP Core -----------------------------------------------------------------------------------------

class UDPCore(LiteXModule):
    """Complete minimal UDP/IPv4 endpoint on any LiteEth PHY (8-bit datapath in `sys`).

    Line rate needs `sys` at >= 125 MHz for 1 Gb/s PHYs (one byte per cycle); the MAC's clock
    domain crossings decouple `sys` from the PHY's clocks.

    mode="generator": the PacketGenerator feeds the transmitter; received payloads are counted
    and discarded. mode="echo": each received payload is sent back, unchanged, to host_ip/host_port.
    """
    def __init__(self, phy, sys_clk_freq, fpga_mac, fpga_ip, host_mac, host_ip, fpga_port, host_port,
        mode               = "generator",
        with_arp           = True,
        with_csr           = True,
        generator_defaults = None,
        mtu                = DEFAULT_MTU,
    ):
        if mode not in ("generator", "echo"):
            raise ValueError(f"mode must be 'generator' or 'echo', not {mode!r}")
        if isinstance(sys_clk_freq, bool) or not isinstance(sys_clk_freq, (int, float)) or sys_clk_freq <= 0:
            raise ValueError(f"sys_clk_freq must be a positive number of Hz, not {sys_clk_freq!r}")
        if mode != "generator" and generator_defaults is not None:
            raise ValueError(f"generator_defaults only applies to mode='generator', not mode={mode!r}")
        self.mode         = mode
        self.sys_clk_freq = sys_clk_freq
        self.max_payload  = max_payload = max_payload_for_mtu(mtu)
        self.fpga_mac     = mac_to_int(fpga_mac, "fpga_mac")
        self.fpga_ip      = ip_to_int(fpga_ip,   "fpga_ip")
        self.host_mac     = mac_to_int(host_mac, "host_mac")
        self.host_ip      = ip_to_int(host_ip,   "host_ip")
        self.fpga_port    = check_port(fpga_port, "fpga_port")
        self.host_port    = check_port(host_port, "host_port")
        defaults = check_generator_defaults(generator_defaults, max_payload)

        # # #

        # MAC (preamble, FCS, padding, inter-frame gap, clock domain crossings).
        # ---------------------------------------------------------------------
        self.mac = mac = LiteEthMACCore(phy=phy, dw=8)

        # UDP/IPv4.
        # ---------
        addresses = dict(
            fpga_mac  = self.fpga_mac,  fpga_ip   = self.fpga_ip,
            host_mac  = self.host_mac,  host_ip   = self.host_ip,
            fpga_port = self.fpga_port, host_port = self.host_port,
        )
        self.tx = tx = UDPTransmitter(max_payload=max_payload, **addresses)
        self.rx = rx = UDPReceiver(
            fpga_mac    = self.fpga_mac,
            fpga_ip     = self.fpga_ip,
            fpga_port   = self.fpga_port,
            max_payload = max_payload,
        )

        # TX: UDP frames and ARP replies share the MAC, one whole frame at a time.
        # RX: every frame goes to the receiver and to the ARP responder.
        if with_arp:
            self.arp = arp = ARPResponder(fpga_mac=self.fpga_mac, fpga_ip=self.fpga_ip)
            self.arbiter = Arbiter([tx.source, arp.source], mac.sink)
            self.comb += [
                mac.source.connect(rx.sink,  omit={"valid", "ready"}),
                mac.source.connect(arp.sink, omit={"valid", "ready"}),
                rx.sink.valid.eq(mac.source.valid & arp.sink.ready),
                arp.sink.valid.eq(mac.source.valid & rx.sink.ready),
                mac.source.ready.eq(rx.sink.ready & arp.sink.ready),
            ]
        else:
            self.comb += [
                tx.source.connect(mac.sink),
                mac.source.connect(rx.sink),
            ]

        # Payload source: generator or echo.
        # ----------------------------------
        # A register stage in front of the transmitter keeps the payload source's logic and the
        # transmitter's request decode on separate timing paths (full throughput).
        self.tx_buffer = tx_buffer = stream.PipeValid(udp_payload_layout)
        self.comb += tx_buffer.source.connect(tx.sink)
        self.gen_start  = Signal()   # i: pulse.
        self.gen_stop   = Signal()   # i: pulse.
        self.gen_count  = Signal(32, reset=defaults["count"])
        self.gen_length = Signal(16, reset=defaults["payload_length"])
        self.gen_gap    = Signal(32, reset=defaults["gap"])
        self.gen_cycles = Signal(32) # o: cycles the generator has been busy in the last run.
        if mode == "generator":
            self.generator = gen = PacketGenerator()
            autostart = Signal(reset=int(defaults["start"]))
            self.sync += autostart.eq(0)
            self.comb += [
                gen.start.eq(self.gen_start | autostart),
                gen.stop.eq(self.gen_stop),
                gen.count.eq(self.gen_count),
                gen.length.eq(self.gen_length),
                gen.gap.eq(self.gen_gap),
                gen.source.connect(tx_buffer.sink),
                rx.source.ready.eq(1),
            ]
            self.sync += [
                If(gen.start & ~gen.busy,
                    self.gen_cycles.eq(0)
                ).Elif(gen.busy,
                    self.gen_cycles.eq(self.gen_cycles + 1)
                )
            ]
        else:
            self.comb += rx.source.connect(tx_buffer.sink)

        # Status counters.
        # ----------------
        self.counters = {}
        def count(name, event):
            counter = _Counter(event)
            setattr(self, f"_{name}_counter", counter)
            self.counters[name] = counter.value
        count("tx_sent",     tx.sent)
        count("tx_refused",  tx.refused)
        count("tx_mismatch", tx.mismatch)
        count("rx_received", rx.received)
        for i, (name, _) in enumerate(RX_DROP_REASONS):
            count(f"rx_drop_{name}", rx.drop[i])
        if with_arp:
            count("arp_replies", arp.replied)

        if with_csr:
            self.add_csr()

    def add_csr(self):
        self._clk_freq = CSRStatus(32, reset=int(self.sys_clk_freq),
            description="Frequency of the core's clock (Hz), to turn cycle counts into time.")
        if self.mode == "generator":
            gen = self.generator
            self._gen_control = CSRStorage(fields=[
                CSRField("start", size=1, offset=0, pulse=True, description="Start a run."),
                CSRField("stop",  size=1, offset=1, pulse=True, description="Stop after the current packet."),
            ])
            self._gen_count  = CSRStorage(32, reset=self.gen_count.reset.value,
                description="Packets per run (0: until stop).")
            self._gen_length = CSRStorage(16, reset=self.gen_length.reset.value,
                description=f"Payload bytes per packet (0..{self.max_payload}; longer is refused).")
            self._gen_gap    = CSRStorage(32, reset=self.gen_gap.reset.value,
                description="Idle cycles between packets (0: back-to-back).")
            self._gen_status = CSRStatus(fields=[
                CSRField("busy", size=1, offset=0, description="A run is in progress."),
            ])
            self._gen_sent   = CSRStatus(32, description="Packets generated in the current/last run.")
            self._gen_cycles = CSRStatus(32, description="Cycles the current/last run has lasted.")
            self.comb += [
                self.gen_start.eq(self._gen_control.fields.start),
                self.gen_stop.eq(self._gen_control.fields.stop),
                self.gen_count.eq(self._gen_count.storage),
                self.gen_length.eq(self._gen_length.storage),
                self.gen_gap.eq(self._gen_gap.storage),
                self._gen_status.fields.busy.eq(gen.busy),
                self._gen_sent.status.eq(gen.seq),
                self._gen_cycles.status.eq(self.gen_cycles),
            ]
        descriptions = {
            "tx_sent"     : "Frames sent.",
            "tx_refused"  : f"Requests refused (payload above {self.max_payload} bytes); nothing sent.",
            "tx_mismatch" : "Requests whose beats did not match their length.",
            "rx_received" : "Payloads received and forwarded.",
            "arp_replies" : "ARP replies sent.",
        }
        for name, text in RX_DROP_REASONS:
            descriptions[f"rx_drop_{name}"] = f"Frames dropped: {text}"
        for name, value in self.counters.items():
            csr = CSRStatus(32, name=name, description=descriptions[name])
            setattr(self, f"_{name}", csr)
            self.comb += csr.status.eq(value)
