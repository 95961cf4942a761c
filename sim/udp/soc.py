# This file is part of hostlink.
# Copyright (c) 2026 hostlink developers
# SPDX-License-Identifier: BSD-2-Clause

"""Simulated Ethernet SoC of `./sim.py udp`: hostlink's UDPCore on LiteX's TAP Ethernet model.

The SoC has no CPU. The host drives it through a UARTBone bridge on LiteX's `serial2tcp` simulator
module (CSR reads and writes over TCP), and the PHY is `WirePHYModel`: LiteX's simulated Ethernet
(one byte per cycle to a TAP device) plus the wire time a real 1 Gb/s PHY spends on every frame
and that the TAP model leaves out, so that cycle counts are what the cable would carry.

Clocks are the board's: the data plane (`eth`: MAC, UDPCore, PHY model) at its `eth_clk_freq`, the
control plane (`sys`: UARTBone, CSRs, counters) at its `sys_clk_freq`. LiteX's TAP and TCP
simulator modules tick on the pin named `sys_clk`, so that pin carries the data plane's clock and
`ctrl_clk` the control plane's; UARTBone crosses from the TCP stream's clock to `sys`.
"""

import hashlib
import os
import subprocess

from migen import *
from migen.genlib.cdc import BusSynchronizer, PulseSynchronizer
from migen.genlib.resetsync import AsyncResetSynchronizer

from litex.gen import *

from litex.build.generic_platform import Pins, Subsignal
from litex.build.sim import SimPlatform
from litex.build.sim.config import SimConfig

from litex.soc.cores.uart import RS232PHYModel, UARTBone
from litex.soc.integration.builder import Builder
from litex.soc.integration.soc_core import SoCMini
from litex.soc.interconnect import stream
from litex.soc.interconnect.csr import *

from liteeth.common import eth_phy_description, eth_min_frame_length, eth_fcs_length
from liteeth.phy.model import LiteEthPHYModelCRG

from hostlink.toolchain import verilator_env
from hostlink.cores.udp import UDPCore
from hostlink.cores.udp.common import UDP_DEFAULTS
from hostlink.targets import boards as registry

# Wire timing --------------------------------------------------------------------------------------

# Byte times a 1 Gb/s PHY adds to every frame that the TAP model does not carry: preamble and SFD
# (8), FCS (4) and the minimum inter-frame gap (12). Padding to the 60-byte minimum is inserted by
# the MAC and does reach the TAP. A 1514-byte frame (1472-byte payload) thus takes 1538 byte times:
# 1472 / 1538 * 125 MB/s = 119.6 MB/s, the line limit.
PREAMBLE_SFD_LEN = 8
IFG_LEN          = 12
WIRE_OVERHEAD    = PREAMBLE_SFD_LEN + eth_fcs_length + IFG_LEN
MIN_FRAME_LEN    = eth_min_frame_length - eth_fcs_length # 60 bytes before the FCS.
MAX_FRAME_LEN    = 1514

# Frames the host may queue at once (e.g. the echo client's window) without loss in the model.
RX_FIFO_DEPTH    = 32768


def wire_cycles(frame_len):
    """Byte times a frame of `frame_len` bytes (without FCS) occupies on a 1 Gb/s wire."""
    return max(frame_len, MIN_FRAME_LEN) + WIRE_OVERHEAD

# Sim I/Os -----------------------------------------------------------------------------------------

def _byte_streams(name):
    """The byte-wide source and sink stream endpoints of one of LiteX's simulator modules."""
    return (name, 0, *[Subsignal(f"{end}_{field}", Pins(8 if field == "data" else 1))
        for end in ("source", "sink") for field in ("valid", "ready", "data")])

_io = [
    ("sys_clk",  0, Pins(1)), # Data plane (the TAP and TCP modules' clock).
    ("ctrl_clk", 0, Pins(1)), # Control plane.
    ("sys_rst",  0, Pins(1)),
    _byte_streams("serial"),  # LiteX's serial2tcp module.
    _byte_streams("eth"),     # LiteX's ethernet (TAP) module.
]

# Wire PHY Model -----------------------------------------------------------------------------------

class WirePHYModel(LiteXModule):
    """LiteEth PHY on LiteX's TAP model, holding off the MAC for the wire overhead of every frame.

    TX: frames go to the TAP one byte per cycle; after each frame `ready` stays low for
    WIRE_OVERHEAD cycles (preamble/SFD, FCS, inter-frame gap), as a real PHY's MAC pipeline would.
    The TAP model ends a frame on the first cycle without `valid`, so a bubble inside a frame would
    split it: the monitor counts such cycles (`bubbles`), which must stay 0.

    RX: the TAP model delivers queued frames back to back with one idle cycle between them,
    faster than any wire. A FIFO takes them and releases them one byte per cycle with WIRE_OVERHEAD
    idle cycles after each frame, so the core sees frames at most as fast as a 1 Gb/s cable brings
    them. Bytes that find the FIFO full are counted (`rx_overflows`), which must stay 0.

    Monitor: from `clear`, counts frames, bytes and the cycles from the first byte of the first
    frame to the end of the wire time of the last one.
    """
    dw                = 8
    with_preamble_crc = False # The TAP carries frames without preamble and FCS; their time is modelled.

    def __init__(self, pads, rx_fifo_depth=RX_FIFO_DEPTH, clock_domain="sys", with_csr=True):
        if not isinstance(rx_fifo_depth, int) or rx_fifo_depth < 2 * MAX_FRAME_LEN:
            raise ValueError(f"rx_fifo_depth must be an integer >= {2 * MAX_FRAME_LEN} (two frames), "
                             f"not {rx_fifo_depth!r}")
        self.clock_domain = clock_domain
        in_domain = ClockDomainsRenamer({"sys": clock_domain})
        sync      = getattr(self.sync, clock_domain)
        self.crg    = in_domain(LiteEthPHYModelCRG())
        self.sink   = sink   = stream.Endpoint(eth_phy_description(8))
        self.source = source = stream.Endpoint(eth_phy_description(8))

        self.clear   = Signal()   # i: pulse, restarts the monitor.
        self.frames  = Signal(32) # o
        self.bytes   = Signal(32) # o
        self.cycles  = Signal(64) # o: first byte to end of the last frame's wire time.
        self.bubbles = Signal(32) # o: idle cycles inside frames.
        self.busy    = Signal()   # o: a frame or its wire overhead is in progress.
        self.rx_overflows = Signal(32) # o: received bytes lost to a full RX FIFO.

        # # #

        # TX Data-Path.
        # -------------
        hold = Signal(max=WIRE_OVERHEAD + 1)
        self.comb += [
            sink.ready.eq(hold == 0),
            pads.source_valid.eq(sink.valid & sink.ready),
            pads.source_data.eq(sink.data),
        ]
        sync += [
            If(hold != 0,
                hold.eq(hold - 1)
            ).Elif(sink.valid & sink.last,
                hold.eq(WIRE_OVERHEAD)
            )
        ]

        # RX Data-Path.
        # -------------
        rx_valid = Signal()
        rx_data  = Signal(8)
        sync += [
            rx_valid.eq(pads.sink_valid),
            rx_data.eq(pads.sink_data),
        ]
        self.rx_fifo = rx_fifo = in_domain(stream.SyncFIFO([("data", 8)], rx_fifo_depth))
        self.comb += [
            rx_fifo.sink.valid.eq(rx_valid),
            rx_fifo.sink.data.eq(rx_data),
            rx_fifo.sink.last.eq(rx_valid & ~pads.sink_valid), # The model idles one cycle after a frame.
        ]
        sync += If(rx_valid & ~rx_fifo.sink.ready, self.rx_overflows.eq(self.rx_overflows + 1))

        rx_hold = Signal(max=WIRE_OVERHEAD + 1)
        self.comb += [
            source.valid.eq(rx_fifo.source.valid & (rx_hold == 0)),
            source.data.eq(rx_fifo.source.data),
            source.last.eq(rx_fifo.source.last),
            rx_fifo.source.ready.eq(source.ready & (rx_hold == 0)),
        ]
        sync += [
            If(rx_hold != 0,
                rx_hold.eq(rx_hold - 1)
            ).Elif(source.valid & source.ready & source.last,
                rx_hold.eq(WIRE_OVERHEAD)
            )
        ]

        # Monitor.
        # --------
        in_frame = Signal()
        running  = Signal()
        elapsed  = Signal(64)
        beat     = Signal()
        self.comb += [
            beat.eq(sink.valid & sink.ready),
            self.busy.eq(in_frame | (hold != 0)),
        ]
        sync += [
            If(self.clear,
                in_frame.eq(0),
                running.eq(0),
                elapsed.eq(0),
                self.frames.eq(0),
                self.bytes.eq(0),
                self.cycles.eq(0),
                self.bubbles.eq(0),
            ).Else(
                If(running | beat,
                    running.eq(1),
                    elapsed.eq(elapsed + 1),
                ),
                If(beat,
                    self.bytes.eq(self.bytes + 1),
                    in_frame.eq(~sink.last),
                    If(sink.last, self.frames.eq(self.frames + 1)),
                ).Elif(in_frame & (hold == 0),
                    self.bubbles.eq(self.bubbles + 1),
                ),
                # The last cycle of a frame's wire time: the next frame may start after it.
                If(hold == 1,
                    self.cycles.eq(elapsed + 1),
                ),
            )
        ]

        if with_csr:
            self.add_csr()

    def add_csr(self):
        self._control = CSRStorage(fields=[
            CSRField("clear", size=1, offset=0, pulse=True, description="Restart the wire monitor."),
        ])
        self._frames  = CSRStatus(32, description="Frames sent since the last clear.")
        self._bytes   = CSRStatus(32, description="Frame bytes sent (without preamble/FCS).")
        self._cycles  = CSRStatus(64, description="Cycles from the first byte to the end of the last frame's wire time.")
        self._bubbles = CSRStatus(32, description="Idle cycles inside frames (each one splits a frame).")
        self._rx_overflows = CSRStatus(32, description="Received bytes lost to a full RX FIFO.")
        self._status  = CSRStatus(fields=[
            CSRField("busy", size=1, offset=0, description="A frame or its wire overhead is in progress."),
        ])
        status  = Cat(self._frames.status, self._bytes.status, self._cycles.status, self._bubbles.status,
                      self._status.fields.busy, self._rx_overflows.status)
        monitor = Cat(self.frames, self.bytes, self.cycles, self.bubbles, self.busy, self.rx_overflows)
        if self.clock_domain == "sys":
            self.comb += [
                self.clear.eq(self._control.fields.clear),
                status.eq(monitor),
            ]
        else:
            # The monitor is read as one coherent word (busy low: the figures are final).
            self.clear_cdc  = PulseSynchronizer("sys", self.clock_domain)
            self.status_cdc = BusSynchronizer(len(status), self.clock_domain, "sys")
            self.comb += [
                self.clear_cdc.i.eq(self._control.fields.clear),
                self.clear.eq(self.clear_cdc.o),
                self.status_cdc.i.eq(monitor),
                status.eq(self.status_cdc.o),
            ]

# Boards -------------------------------------------------------------------------------------------

BOARDS = sorted(registry.UDP_BOARDS)


def board_config(board):
    """The board's core configuration: {sys_clk_freq, eth_clk_freq, fpga_mac, source}.

    The clocks are the ones the board's target exports (hostlink.targets.boards names them), so the
    simulation runs the core at the board's clocks, with the boards' default MAC. The addresses stay the
    simulation's own: they live only inside its namespace, and the host MAC is the TAP device's.
    """
    board = registry.get_board(board, link="udp")
    sys_clk_freq, eth_clk_freq = board.udp_clocks()
    return {
        "sys_clk_freq": sys_clk_freq,
        "eth_clk_freq": eth_clk_freq,
        "fpga_mac":     UDP_DEFAULTS.fpga_mac,
        "source":       board.module,
    }

# SoC ----------------------------------------------------------------------------------------------

class _CRG(LiteXModule):
    def __init__(self, platform):
        self.cd_sys = ClockDomain()
        self.cd_eth = ClockDomain()
        self.cd_por = ClockDomain(reset_less=True)

        # # #

        self.comb += [
            self.cd_sys.clk.eq(platform.request("ctrl_clk")),
            self.cd_por.clk.eq(ClockSignal("sys")),
            self.cd_eth.clk.eq(platform.request("sys_clk")),
        ]
        # Both planes leave reset together, from a power-on reset.
        por_rst = Signal(reset=1)
        self.sync.por += por_rst.eq(platform.request("sys_rst"))
        self.specials += [
            AsyncResetSynchronizer(self.cd_sys, por_rst),
            AsyncResetSynchronizer(self.cd_eth, por_rst),
        ]


class UDPSimSoC(SoCMini):
    """UDPCore at `addresses` (a UDPAddresses), the wire PHY model and a UARTBone; CSRs: `udp_*` (UDPCore),
    `ethphy_*` (monitor)."""
    def __init__(self, sys_clk_freq, eth_clk_freq, addresses, mode):
        platform = SimPlatform("SIM", _io)
        SoCMini.__init__(self, platform, clk_freq=int(sys_clk_freq),
            ident         = "hostlink UDP simulation",
            ident_version = False,
        )
        self.eth_clk_freq = eth_clk_freq
        self.crg = _CRG(platform)

        # Host control: CSR accesses from the simulation driver, over TCP.
        self.uartbone_phy = RS232PHYModel(platform.request("serial"))
        self.uartbone     = UARTBone(phy=self.uartbone_phy, clk_freq=int(sys_clk_freq), cd="eth")
        self.bus.add_master(name="uartbone", master=self.uartbone.wishbone)

        # Ethernet.
        self.ethphy = WirePHYModel(platform.request("eth"), clock_domain="eth")
        self.udp    = UDPCore(self.ethphy,
            clk_freq     = eth_clk_freq,
            clock_domain = "eth",
            **addresses.as_kwargs(),
            mode         = mode,
        )

# Build --------------------------------------------------------------------------------------------

def sim_config(sys_clk_freq, eth_clk_freq, tap, host_ip, control_port):
    config = SimConfig()
    config.add_clocker("sys_clk",  freq_hz=int(eth_clk_freq))
    config.add_clocker("ctrl_clk", freq_hz=int(sys_clk_freq))
    config.add_module("ethernet",   "eth",    args={"interface": tap, "ip": host_ip})
    config.add_module("serial2tcp", "serial", args={"port": control_port})
    return config


def build(soc, build_dir, tap, host_ip, control_port, jobs=2, log=print):
    """Generates the SoC and compiles its Verilator model unless an identical one exists.

    Returns the gateware directory (the simulator's working directory) and the CSR map
    {name: address}. The runtime configuration (TAP name, host IP, control port) lives in
    sim_config.js, read when the simulator starts, so changing it needs no recompilation.
    """
    builder = Builder(soc,
        output_dir       = build_dir,
        compile_software = False,
        compile_gateware = True,
        csr_csv          = os.path.join(build_dir, "csr.csv"),
    )
    config = sim_config(soc.sys_clk_freq, soc.eth_clk_freq, tap, host_ip, control_port)
    builder.build(sim_config=config, run=False, interactive=False, opt_level="O2", jobs=jobs)

    gateware = os.path.join(build_dir, "gateware")
    digest = model_digest(gateware)
    stamp = os.path.join(gateware, "obj_dir", "hostlink.sha256")
    vsim  = os.path.join(gateware, "obj_dir", "Vsim")
    cached = os.path.exists(vsim) and os.path.exists(stamp) and open(stamp).read() == digest
    if cached:
        log(f"sim.py udp: reusing the Verilator model in {gateware} (same Verilog)")
    else:
        log(f"sim.py udp: compiling the Verilator model in {gateware} (a minute or two)")
        r = subprocess.run(["bash", "build_sim.sh"], cwd=gateware, env=dict(os.environ, **verilator_env()),
                           capture_output=True, text=True)
        if r.returncode != 0:
            tail = "\n".join((r.stdout + r.stderr).splitlines()[-40:])
            raise RuntimeError(f"Verilator build failed in {gateware}:\n{tail}")
        with open(stamp, "w") as f:
            f.write(digest)
    return gateware, read_csr_csv(os.path.join(build_dir, "csr.csv"))


def model_digest(gateware):
    """Hash of everything compiled into the model, less comment lines (LiteX dates its output)."""
    h = hashlib.sha256()
    names = ["sim.v", "sim_init.cpp", "sim_header.h"] + sorted(
        n for n in os.listdir(gateware) if n.endswith(".init"))
    for name in names:
        with open(os.path.join(gateware, name), "rb") as f:
            for line in f:
                if not line.lstrip().startswith(b"//"):
                    h.update(line)
    return h.hexdigest()


def read_csr_csv(path):
    """{csr_register name: (address, size in 32-bit words)} from LiteX's csr.csv."""
    csrs = {}
    with open(path) as f:
        for line in f:
            fields = line.strip().split(",")
            if len(fields) >= 4 and fields[0] == "csr_register":
                csrs[fields[1]] = (int(fields[2], 0), int(fields[3]))
    return csrs
