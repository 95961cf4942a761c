# This file is part of hostlink.
# Copyright (c) 2026 hostlink developers
# SPDX-License-Identifier: BSD-2-Clause

"""UDPCore: LiteEth's MAC core plus hostlink's minimal UDP/IPv4 transmitter, receiver, ARP
responder and packet generator (or echo), with status counters."""

from migen import *
from migen.genlib.cdc import MultiReg, PulseSynchronizer, BusSynchronizer

from litex.gen import *

from litex.soc.interconnect import stream
from litex.soc.interconnect.csr import *
from litex.soc.interconnect.packet import Arbiter


from hostlink.cores.udp.common import *
from hostlink.cores.udp.transmitter import UDPTransmitter
from hostlink.cores.udp.receiver import UDPReceiver
from hostlink.cores.udp.arp import ARPResponder
from hostlink.cores.udp.generator import PacketGenerator
from hostlink.cores.udp.mac import PipelinedMACCore

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


# Events of a faster data plane reach the control plane as a Gray-coded count of this many bits: at
# most 2**EVENT_COUNT_BITS - 1 events may occur between two cycles of the control clock, so the data
# plane's clock may be up to MAX_CLOCK_RATIO times the control plane's.
EVENT_COUNT_BITS = 4
MAX_CLOCK_RATIO  = 8

# One byte per cycle: Gigabit line rate with the 8-bit datapath.
GIGABIT_CLK_FREQ = 125e6

def check_plane_clocks(sys_clk_freq, eth_clk_freq):
    """For a board target: the data plane (`eth_clk_freq`) keeps up with a 1 Gb/s wire, and the
    control plane (`sys_clk_freq`) with the data plane's events."""
    if eth_clk_freq < GIGABIT_CLK_FREQ:
        raise ValueError(f"eth_clk_freq must be >= {GIGABIT_CLK_FREQ/1e6:g} MHz for Gigabit line rate, "
                         f"not {eth_clk_freq/1e6:g} MHz")
    if sys_clk_freq * MAX_CLOCK_RATIO < eth_clk_freq:
        raise ValueError(f"sys_clk_freq must be >= eth_clk_freq / {MAX_CLOCK_RATIO} "
                         f"({eth_clk_freq/MAX_CLOCK_RATIO/1e6:g} MHz), not {sys_clk_freq/1e6:g} MHz")


class _Counter(LiteXModule):
    """32-bit count, in `sys`, of one-cycle events of `event_domain`; saturates instead of wrapping,
    so a reading is never too low.

    From another domain the events cross as a small Gray-coded wrapping count (one bit changes per
    event, as an async FIFO's pointers): `sys` samples it through a MultiReg and adds the difference
    to the previous sample, so no event is lost however close together they come.
    """
    def __init__(self, event, event_domain="sys"):
        self.value = Signal(32) # o

        # # #

        increment = Signal(EVENT_COUNT_BITS)
        if event_domain == "sys":
            # The event is registered so the counter's carry chain starts a fresh timing path.
            self.sync += increment.eq(event)
        else:
            events  = Signal(EVENT_COUNT_BITS)
            gray    = Signal(EVENT_COUNT_BITS)
            event_r = Signal()
            event_sync = getattr(self.sync, event_domain)
            event_sync += [
                # Registered first: events come from compares (the transmitter's end of payload) whose
                # path into this adder was the data clock's worst.
                event_r.eq(event),
                If(event_r, events.eq(events + 1)),
                gray.eq(events ^ events[1:]),
            ]
            gray_sys = Signal(EVENT_COUNT_BITS)
            binary   = Signal(EVENT_COUNT_BITS)
            previous = Signal(EVENT_COUNT_BITS)
            self.specials += MultiReg(gray, gray_sys, "sys")
            self.comb += [binary[i].eq(Reduce("XOR", gray_sys[i:])) for i in range(EVENT_COUNT_BITS)]
            self.sync += [
                previous.eq(binary),
                increment.eq(binary - previous),
            ]
        total = Signal(33)
        self.comb += total.eq(self.value + increment)
        self.sync += self.value.eq(Mux(total[32], 2**32 - 1, total))

# UDP Core -----------------------------------------------------------------------------------------

class UDPCore(LiteXModule):
    """Complete minimal UDP/IPv4 endpoint on any LiteEth PHY (8-bit datapath).

    The data plane (MAC, transmitter, receiver, ARP, generator) runs in `clock_domain` at
    `clk_freq`: line rate needs >= 125 MHz for 1 Gb/s PHYs (one byte per cycle); the MAC's clock
    domain crossings decouple it from the PHY's clocks. The status counters and the CSRs are in
    `sys`, the control plane. When `clock_domain` is not `sys`, `sys` may be slower (down to
    1/MAX_CLOCK_RATIO of `clk_freq`): the generator's configuration crosses through MultiRegs (it
    is static while a run is started: a start pulse arrives after it), its start/stop pulses
    through PulseSynchronizers, its status (busy, packets, cycles) as one coherent word through a
    BusSynchronizer, and the counters' events as Gray-coded counts (see `_Counter`).

    mode="generator": the PacketGenerator feeds the transmitter; received payloads are counted
    and discarded. mode="echo": each received payload is sent back, unchanged, to host_ip/host_port.
    """
    def __init__(self, phy, clk_freq, fpga_mac, fpga_ip, host_mac, host_ip, fpga_port, host_port,
        clock_domain       = "sys",
        mode               = "generator",
        with_arp           = True,
        with_csr           = True,
        generator_defaults = None,
        mtu                = DEFAULT_MTU,
    ):
        if mode not in ("generator", "echo"):
            raise ValueError(f"mode must be 'generator' or 'echo', not {mode!r}")
        if isinstance(clk_freq, bool) or not isinstance(clk_freq, (int, float)) or clk_freq <= 0:
            raise ValueError(f"clk_freq must be a positive number of Hz, not {clk_freq!r}")
        if not isinstance(clock_domain, str) or not clock_domain or clock_domain in ("eth_tx", "eth_rx"):
            raise ValueError(f"clock_domain must name the data plane's clock domain (not the PHY's "
                             f"eth_tx/eth_rx), not {clock_domain!r}")
        if mode != "generator" and generator_defaults is not None:
            raise ValueError(f"generator_defaults only applies to mode='generator', not mode={mode!r}")
        self.mode         = mode
        self.clk_freq     = clk_freq
        self.clock_domain = clock_domain
        self.max_payload  = max_payload = max_payload_for_mtu(mtu)
        self.fpga_mac     = mac_to_int(fpga_mac, "fpga_mac")
        self.fpga_ip      = ip_to_int(fpga_ip,   "fpga_ip")
        self.host_mac     = mac_to_int(host_mac, "host_mac")
        self.host_ip      = ip_to_int(host_ip,   "host_ip")
        self.fpga_port    = check_port(fpga_port, "fpga_port")
        self.host_port    = check_port(host_port, "host_port")
        defaults = check_generator_defaults(generator_defaults, max_payload)

        # # #

        in_domain = ClockDomainsRenamer({"sys": clock_domain})
        sync      = getattr(self.sync, clock_domain)

        # MAC (preamble, FCS, padding, inter-frame gap, clock domain crossings).
        # ---------------------------------------------------------------------
        # Its datapath runs in the data plane's clock, a register stage between each of its stages
        # (see PipelinedMACCore); only the crossings' FIFOs and the gap inserter are in the PHY's
        # clocks. 16-deep crossings fit one distributed RAM per 4 bits on ECP5 (no read
        # multiplexer); they only absorb the clocks' ppm difference and the MAC's per-frame stalls.
        self.mac = mac = in_domain(PipelinedMACCore(phy, cdc_depth=16))

        # UDP/IPv4.
        # ---------
        addresses = dict(
            fpga_mac  = self.fpga_mac,  fpga_ip   = self.fpga_ip,
            host_mac  = self.host_mac,  host_ip   = self.host_ip,
            fpga_port = self.fpga_port, host_port = self.host_port,
        )
        self.tx = tx = in_domain(UDPTransmitter(max_payload=max_payload, **addresses))
        self.rx = rx = in_domain(UDPReceiver(
            fpga_mac    = self.fpga_mac,
            fpga_ip     = self.fpga_ip,
            fpga_port   = self.fpga_port,
            max_payload = max_payload,
        ))

        # The transmitter's header bytes come from its length adder: a register stage keeps that
        # path off the arbiter and the MAC's input.
        self.tx_out = tx_out = in_domain(stream.PipeValid(eth_raw_layout()))
        self.comb += tx.source.connect(tx_out.sink)

        # TX: UDP frames and ARP replies share the MAC, one whole frame at a time.
        # RX: every frame goes to the receiver and to the ARP responder.
        if with_arp:
            self.arp = arp = in_domain(ARPResponder(fpga_mac=self.fpga_mac, fpga_ip=self.fpga_ip))
            self.arbiter = in_domain(Arbiter([tx_out.source, arp.source], mac.sink))
            self.comb += [
                mac.source.connect(rx.sink,  omit={"valid", "ready"}),
                mac.source.connect(arp.sink, omit={"valid", "ready"}),
                rx.sink.valid.eq(mac.source.valid & arp.sink.ready),
                arp.sink.valid.eq(mac.source.valid & rx.sink.ready),
                mac.source.ready.eq(rx.sink.ready & arp.sink.ready),
            ]
        else:
            self.comb += [
                tx_out.source.connect(mac.sink),
                mac.source.connect(rx.sink),
            ]

        # Payload source: generator or echo.
        # ----------------------------------
        # A skid buffer in front of the transmitter keeps the payload source's logic and the
        # transmitter's request decode and ready on separate timing paths (full throughput).
        self.tx_buffer = tx_buffer = in_domain(stream.Buffer(udp_payload_layout, pipe_valid=True, pipe_ready=True))
        self.comb += tx_buffer.source.connect(tx.sink)
        self.gen_start  = Signal()   # i: pulse.
        self.gen_stop   = Signal()   # i: pulse.
        self.gen_count  = Signal(32, reset=defaults["count"])
        self.gen_length = Signal(16, reset=defaults["payload_length"])
        self.gen_gap    = Signal(32, reset=defaults["gap"])
        self.gen_cycles = Signal(32) # o: cycles the generator has been busy in the last run.
        if mode == "generator":
            self.generator = gen = in_domain(PacketGenerator())
            autostart = Signal(reset=int(defaults["start"]))
            sync += autostart.eq(0)
            self.comb += [
                gen.start.eq(self.gen_start | autostart),
                gen.stop.eq(self.gen_stop),
                gen.count.eq(self.gen_count),
                gen.length.eq(self.gen_length),
                gen.gap.eq(self.gen_gap),
                gen.source.connect(tx_buffer.sink),
                rx.source.ready.eq(1),
            ]
            sync += [
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
            counter = _Counter(event, event_domain=clock_domain)
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
        self._clk_freq = CSRStatus(32, reset=int(self.clk_freq),
            description="Frequency of the data plane's clock (Hz), to turn gen_cycles into time.")
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
            config = [
                (self._gen_count.storage,  self.gen_count),
                (self._gen_length.storage, self.gen_length),
                (self._gen_gap.storage,    self.gen_gap),
            ]
            pulses = [
                (self._gen_control.fields.start, self.gen_start),
                (self._gen_control.fields.stop,  self.gen_stop),
            ]
            status     = Cat(self._gen_status.fields.busy, self._gen_sent.status, self._gen_cycles.status)
            gen_status = Cat(gen.busy, gen.seq, self.gen_cycles)
            if self.clock_domain == "sys":
                self.comb += [o.eq(i) for i, o in config + pulses]
                self.comb += status.eq(gen_status)
            else:
                # MultiRegs reset to the configuration's reset values, so that a run started at
                # reset (generator_defaults) sees them from the first cycle.
                self.specials += [MultiReg(i, o, self.clock_domain, reset=o.reset.value) for i, o in config]
                for i, o in pulses:
                    synchronizer = PulseSynchronizer("sys", self.clock_domain)
                    self.submodules += synchronizer
                    self.comb += [synchronizer.i.eq(i), o.eq(synchronizer.o)]
                # One word, so that a reading with busy low has the run's final packets and cycles.
                self.status_cdc = BusSynchronizer(len(status), self.clock_domain, "sys")
                self.comb += [
                    self.status_cdc.i.eq(gen_status),
                    status.eq(self.status_cdc.o),
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
