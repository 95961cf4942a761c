# This file is part of hostlink.
# Copyright (c) 2026 hostlink developers
# SPDX-License-Identifier: BSD-2-Clause

"""`add_pcie()`: LiteX's `SoC.add_pcie()` with hostlink's endpoint (`hostlink.cores.pcie.endpoint`).

Same module names, CSRs, constants and MSI numbering as LiteX's method, so LitePCIe's generated driver and
user tools work unchanged; only the endpoint's completion path differs. Covers what hostlink's targets use:
Wishbone access through BAR0, plain MSI, scatter-gather DMA channels with buffering and loopback. The DMA
is LitePCIe's, with hostlink's descriptor splitter (`hostlink.cores.pcie.splitter`: no gap between
descriptors, bad descriptors refused, no request across 4 KiB).

The completion path checks its completions (timeout, error/poisoned status, unexpected tags, other
requesters: `TLPController`, `ReadFaultGuard`), and `<name>_faults` (`PCIeFaults`) counts every fault in one
CSR block. Where the hard block takes error reports from the user logic, completion timeouts and unexpected
completions are reported to it: `cfg_err_cpl_timeout` / `cfg_err_cpl_unexpect` on `pcie_7x`,
`cfg_err_uncor_in` on `pcie3_7x`.

On top of it, what every board's DMA SoC composes the same way: `add_pcie_dma()` (the DMA channels with
their pattern generators/checkers, cycle counter and LEDs), `add_pcie_endpoint()` (the PHY on the board's
pads, then add_pcie_dma), `check_pcie_parameters()` and `PCIeDMASoC`, the SoC the PCIe targets subclass.
"""

from migen import *
from migen.genlib.cdc import PulseSynchronizer

from litex.gen import *

from litex.soc.integration.soc_core import SoCMini
from litex.soc.interconnect import stream

from litepcie.core import LitePCIeMSI
from litepcie.frontend.dma import LitePCIeDMA
from litepcie.frontend.wishbone import LitePCIeWishboneMaster

from hostlink.cores.pcie.config import check_lanes, check_data_width, check_dma_channels
from hostlink.cores.pcie.cycle_counter import CycleCounter
from hostlink.cores.pcie.dma_pattern import DMAPatternGenerator, DMAPatternChecker
from hostlink.cores.pcie.endpoint import PCIeEndpoint
from hostlink.cores.pcie.faults import PCIeFaults
from hostlink.cores.pcie.flow import DMAFlow, hold_writer_input
from hostlink.cores.pcie.irq_serializer import IRQSerializer
from hostlink.cores.pcie.splitter import litepcie_with_descriptor_splitter
from hostlink.cores.pcie.read_fence import ReadFence
from hostlink.cores.pcie.write_fence import WriteFence
from hostlink.protocol import FLOW_PACKETS
from hostlink.cores.pcie.user_port import UserPort
from hostlink.cores.pcie.user_core import prepare_user_core, finish_user_core
from hostlink.cores.dram.integration import board_dram_clk_freq, board_dram_phy, add_dram

# Within the PCIe specification's completion timeout ranges (50 us to 50 ms; 10 ms is in range B).
COMPLETION_TIMEOUT_S = 10e-3


def add_pcie(soc, phy, ndmas, name="pcie", max_pending_requests=8, address_width=32,
    dma_buffering_depth  = 1024,
    with_dma_loopback    = True,
    msi_width            = 32,
    completion_timeout_s = COMPLETION_TIMEOUT_S):
    if soc.csr.data_width != 32:
        raise ValueError(f"LitePCIe needs 32-bit CSRs, not {soc.csr.data_width!r}-bit")
    if 2*ndmas > msi_width:
        raise ValueError(f"{ndmas} DMA channels need {2*ndmas} MSI sources, more than {msi_width}")
    # A hard block that times reads out itself (pcie3_7x) asks for a longer backstop.
    completion_timeout_s = getattr(phy, "completion_timeout_s", completion_timeout_s)
    timeout_cycles = round(completion_timeout_s*soc.sys_clk_freq)
    if not (0 < timeout_cycles < 2**32):
        raise ValueError(f"completion timeout must be a positive number of seconds that fits 2**32 cycles, "
            f"not {completion_timeout_s!r}")

    endpoint = PCIeEndpoint(phy,
        max_pending_requests = max_pending_requests,
        endianness           = phy.endianness,
        address_width        = address_width,
        completion_checks    = True,
        timeout_cycles       = timeout_cycles,
    )
    soc.add_module(name=f"{name}_endpoint", module=endpoint)

    mmap = LitePCIeWishboneMaster(endpoint, base_address=soc.mem_map["csr"])
    soc.add_module(name=f"{name}_mmap", module=mmap)
    soc.bus.add_master(name=f"{name}_mmap", master=mmap.wishbone)

    msi = LitePCIeMSI(width=msi_width)
    soc.add_module(name=f"{name}_msi", module=msi)
    soc.comb += msi.source.connect(phy.msi)

    # Writers tell the host of a buffer once its writes are in the hard block (write_fence.py), readers once
    # the host has answered its reads (read_fence.py).
    fence = WriteFence(phy)
    soc.add_module(name=f"{name}_write_fence", module=fence)
    read_fence = ReadFence(endpoint.crossbar.controller, endpoint.crossbar)
    soc.add_module(name=f"{name}_read_fence", module=read_fence)

    msis = {}
    refused = []
    # LitePCIe sizes each DMA reader's data FIFO for 4 x `max_pending_requests` reads of the largest size.
    # Where the block's completion space keeps fewer reads in flight than there are tags (every board with
    # 32 tags), the FIFO is sized on the reads the space admits: 4x what can be in flight, as LitePCIe
    # means, not 4x the tags (64 KiB per channel at 32 tags, 14x what the ZC706 can have in flight).
    largest_read = endpoint.crossbar.max_request_bytes
    fifo_reads   = min(max_pending_requests,
        2**log2_int(-(-endpoint.reads_in_flight_bytes//largest_read), need_pow2=False))
    for i in range(ndmas):
        with litepcie_with_descriptor_splitter(word_bytes=phy.data_width//8):
            endpoint.max_pending_requests = fifo_reads   # Read by LitePCIeDMAReader for its FIFO only.
            try:
                dma = LitePCIeDMA(phy, endpoint,
                    with_buffering = True, buffering_depth=dma_buffering_depth,
                    with_loopback  = with_dma_loopback,
                    address_width  = address_width,
                )
            finally:
                endpoint.max_pending_requests = max_pending_requests
        soc.add_module(name=f"{name}_dma{i}", module=dma)
        # Each engine's flow gate (flow.py): `pcie_dma<i>_reader_flow_*`, `pcie_dma<i>_writer_flow_*`.
        for engine in (dma.reader, dma.writer):
            engine.flow = DMAFlow(engine.splitter, engine.table, _table_reset(engine.table),
                writer=engine is dma.writer)
        hold_writer_input(dma.writer)
        msis[f"{name.upper()}_DMA{i}_WRITER"] = fence.add_writer(dma.writer.port.source, dma.writer.irq,
            dma.writer.table.loop_status, dma.writer.enable, _table_reset(dma.writer.table),
            counts=[(dma.writer.flow.done_raw, dma.writer.flow.done)])
        msis[f"{name.upper()}_DMA{i}_READER"] = read_fence.add_reader(dma.reader.port.source, dma.reader.irq,
            dma.reader.table.loop_status, dma.reader.enable, _table_reset(dma.reader.table),
            channel=dma.reader.port.channel, counts=[(dma.reader.flow.done_raw, dma.reader.flow.done)])
        endpoint.crossbar.guard.add_reader(dma.reader.port.channel, dma.reader.enable)
        refused += [dma.reader.splitter.refused, dma.writer.splitter.refused]

    # Fault counters, and the hard block's error reports.
    controller = endpoint.crossbar.controller
    faults = PCIeFaults(controller, endpoint.crossbar.guard, refused,
        msi_failed = getattr(phy, "msi_failed", None),
        msi_domain = "pcie",
    )
    soc.add_module(name=f"{name}_faults", module=faults)
    faults.add_csr()
    _report_errors_to_hard_block(soc, phy, controller.timeout_event, controller.unexpected_event)
    soc.add_constant("DMA_CHANNELS",   ndmas)
    soc.add_constant("DMA_ADDR_WIDTH", address_width)

    # MSI vectors in the order LiteX numbers them (sorted names): the generated driver relies on it.
    # One event per cycle into the MSI core, so that each makes its own MSI (irq_serializer.py).
    serializer = IRQSerializer(len(msis))
    soc.add_module(name=f"{name}_irq_serializer", module=serializer)
    soc.comb += msi.irqs[:len(msis)].eq(serializer.irqs_out)
    for i, (source, irq) in enumerate(sorted(msis.items())):
        soc.comb += serializer.irqs_in[i].eq(irq)
        soc.add_constant(source + "_INTERRUPT", i)

    # A PHY whose streams are in its own `pcie` domain (VC709) runs the SoC on that clock: no false path then.
    if getattr(phy, "clock_domain", "sys") != "pcie":
        soc.platform.add_false_path_constraints(soc.crg.cd_sys.clk, phy.cd_pcie.clk)
    return endpoint


def _table_reset(table):
    """The pulse that resets LitePCIe's descriptor table `table` (LitePCIeDMAScatterGather), and with it its
    loop status: a write of 1 to its `reset` CSR."""
    return table.reset.storage & table.reset.re


def _report_errors_to_hard_block(soc, phy, timeout, unexpected):
    """Completion timeouts and unexpected completions (sys-domain pulses) to the hard block's error inputs,
    which report them to the root complex (AER); a lost pulse (two within the synchronizer's few cycles)
    only loses a report, the counters have them all."""
    reports = []
    params  = getattr(phy, "pcie_phy_params", {})
    if "i_cfg_err_cpl_timeout" in params and "i_cfg_err_cpl_unexpect" in params:   # pcie_7x (PG054).
        reports = [(timeout, "i_cfg_err_cpl_timeout"), (unexpected, "i_cfg_err_cpl_unexpect")]
    elif hasattr(phy, "err_uncor"):                                                  # pcie3_7x (PG023).
        either = Signal()
        soc.comb += either.eq(timeout | unexpected)
        reports = [(either, None)]
    for pulse, param in reports:
        sync = PulseSynchronizer("sys", "pcie")
        soc.submodules += sync
        soc.comb += sync.i.eq(pulse)
        if param is None:
            soc.comb += phy.err_uncor.eq(sync.o)
        else:
            params[param] = sync.o

# PCIe DMA SoC -------------------------------------------------------------------------------------

DEFAULT_DMA_CHANNELS = 2


def add_pcie_dma(soc, phy, dma_channels, max_pending_requests=8, led_pads=None, dram_channels=None,
    user_ports=None):
    """LitePCIe endpoint, scatter-gather DMA channels with internal loopback, MSI, on `phy`.

    `max_pending_requests` reads of max-read-request size stay in flight: they must cover the link's
    bandwidth times the host's read latency (Gen2 x4: 8 x 512 B per ~1.3 us; Gen3 x8 needs 32).

    Each channel's user side has a pattern generator and checker (hostlink.cores.pcie.dma_pattern), used
    when its loopback is off, so each direction can be measured and checked alone.
    `led_pads`, when given, show link-up (LED 0) and DMA activity (LED 1).
    `dram_channels` (from add_dram), when given, put a switch between each channel and its patterns, so
    that the host can move that channel's data to and from the board's DRAM instead.
    `user_ports`, when given, maps channel numbers to the keyword arguments of a UserPort
    (hostlink.cores.pcie.user_port: `data_width`, `clock_domain`, `fifo_depth`): that channel gets
    `soc.pcie_dma<i>_user`, whose `source` / `sink` the user's core connects to, and whose `select` CSR
    gives it the channel's data instead of the patterns (or DRAM).
    """
    user_ports = dict(user_ports or {})
    for channel in user_ports:
        if not isinstance(channel, int) or isinstance(channel, bool) or not 0 <= channel < dma_channels:
            raise ValueError(f"user port channel must be one of the SoC's DMA channels 0..{dma_channels - 1}, "
                             f"not {channel!r}")
    add_pcie(soc, phy,
        ndmas                = dma_channels,
        address_width        = 64,  # Host buffers may sit above 4 GiB.
        max_pending_requests = max_pending_requests,
        dma_buffering_depth  = 8192,
        with_dma_loopback    = True,
    )
    # Host tools time DMA in device cycles (sys clock); real-time buffers carry the count (user_port.py).
    soc.add_module(name="cycles", module=CycleCounter())
    for i in range(dma_channels):
        dma       = getattr(soc, f"pcie_dma{i}")
        generator = DMAPatternGenerator(dma.data_width)
        checker   = DMAPatternChecker(dma.data_width)
        soc.add_module(name=f"pcie_dma{i}_generator", module=generator)
        soc.add_module(name=f"pcie_dma{i}_checker",   module=checker)
        # The channel's data: to and from the user port when it has one and selects it, else as without.
        from_dma, to_dma = dma.source, dma.sink
        if i in user_ports:
            from_dma, to_dma = _add_user_port(soc, phy, dma, i, user_ports[i])
        if dram_channels is None:
            soc.comb += [
                generator.source.connect(to_dma),
                from_dma.connect(checker.sink),
            ]
        else:
            dram = dram_channels[i]
            soc.comb += [
                from_dma.connect(dram.from_dma),
                dram.to_dma.connect(to_dma),
                generator.source.connect(dram.from_pattern),
                dram.to_pattern.connect(checker.sink),
            ]
    if led_pads is not None:
        dma_active = Signal()
        soc.comb += dma_active.eq(Reduce("OR", [
            getattr(soc, f"pcie_dma{i}").reader.enable | getattr(soc, f"pcie_dma{i}").writer.enable
                for i in range(dma_channels)]))
        soc.comb += led_pads[0].eq(phy._link_status.fields.status)
        soc.comb += led_pads[1].eq(dma_active)

def _add_user_port(soc, phy, dma, channel, params):
    """`soc.pcie_dma<channel>_user`, switched by its `select` CSR between the DMA and the streams it returns
    (from_dma, to_dma), which carry the channel's data when the user port is not selected."""
    port = UserPort(dma.data_width, **params)
    soc.add_module(name=f"pcie_dma{channel}_user", module=port)
    from_dma = stream.Endpoint([("data", dma.data_width)])
    to_dma   = stream.Endpoint([("data", dma.data_width)])
    soc.comb += If(port.select,
        dma.source.connect(port.dma_sink),
        port.dma_source.connect(dma.sink),
    ).Else(
        dma.source.connect(from_dma),
        to_dma.connect(dma.sink),
    )
    # Framed flows (real-time, packets) from the writer's flow gate: the port's framer makes each buffer's
    # header and the writer's splitter writes it at the buffer's start, once the data is out.
    flow = dma.writer.flow
    soc.comb += [
        port.c2h_realtime.eq(flow.realtime & port.select),
        port.c2h_packets.eq(flow.packets & port.select),
        port.c2h_max_request.eq(phy.max_payload_size),
        dma.writer.splitter.framed.eq(flow.framed & port.select),
        port.c2h_running.eq(dma.writer.enable),
        port.c2h_table_reset.eq(_table_reset(dma.writer.table)),
        port.c2h_given.eq(flow.given),
        port.c2h_buffer_bytes.eq(flow.buffer_bytes),
        port.time.eq(soc.cycles.count),
    ]
    # Packets flow host to FPGA from the reader's flow gate: the port's deframer, with the ring's buffer
    # size from the writer's register (the driver writes it when the reader starts in packets flow).
    soc.comb += [
        port.h2c_packets.eq((dma.reader.flow.mode == FLOW_PACKETS) & port.select),
        port.h2c_table_reset.eq(_table_reset(dma.reader.table)),
        port.h2c_buffer_bytes.eq(flow.buffer_bytes),
    ]
    # Each direction's counters restart when the host enables that direction's engine.
    for enable, clear in [(dma.reader.enable, port.h2c_clear), (dma.writer.enable, port.c2h_clear)]:
        enabled = Signal()
        soc.sync += enabled.eq(enable)
        soc.comb += clear.eq(enable & ~enabled)
    return from_dma, to_dma


def check_pcie_parameters(lanes, data_width, dma_channels, allowed_lanes, allowed_data_widths):
    """Refuse, before anything is built, a PCIe configuration the board or LitePCIe cannot have."""
    check_lanes(lanes, allowed_lanes)
    check_data_width(data_width, allowed_data_widths)
    check_dma_channels(dma_channels)


def add_pcie_endpoint(soc, platform, pcie_phy_cls, lanes, data_width, dma_channels,
    max_pending_requests = 8,
    bar0_size            = 0x100000,
    pcie_phy_kwargs      = None,
    dram_channels        = None,
    user_ports           = None):
    """`pcie_phy_cls` on the board's `pcie_x<lanes>` pads as `soc.pcie_phy`, and add_pcie_dma().

    Shared by PCIeDMASoC and the SoCs that add PCIe to something else (KC705: next to the UDP core).
    """
    soc.pcie_phy = pcie_phy_cls(platform, platform.request(f"pcie_x{lanes}"),
        data_width = data_width,
        bar0_size  = bar0_size,
        **(pcie_phy_kwargs or {}),
    )
    add_pcie_dma(soc, soc.pcie_phy,
        dma_channels         = dma_channels,
        max_pending_requests = max_pending_requests,
        led_pads             = platform.request_all("user_led"),
        dram_channels        = dram_channels,
        user_ports           = user_ports,
    )


class PCIeDMASoC(SoCMini):
    """A board's PCIe scatter-gather DMA SoC with no CPU: the host drives it through BAR0.

    The board's subclass gives its constants (platform module, system clock, lanes and widths as class
    attributes; clocking and hard block) and adds what only that board has after this constructor. This
    class composes what every board does the same way: CRG, a SoC without CPU/UART/ROM/RAM, the PCIe PHY on
    `pcie_x<lanes>`, the DMA channels and the LEDs.

    `platform` and `sys_clk_freq` default to the board's. `crg_cls(platform, sys_clk_freq)` and
    `pcie_phy_cls` are parameters so that the simulation (hostlink.sim.pcie) can replace the board clocking
    and the hard block and keep everything else. `pcie_phy_kwargs` carries the settings of one PHY class only
    (VC709: `speed="gen3"`).

    `with_dram` adds the board's DDR3 SODIMM (add_dram) as described by the platform module's DDRAM_*
    constants; the CRG then gets `dram_clk_freq` and makes the `dram`/`dram4x` domains.
    `dram_phy(platform, clk_freq) -> (phy, module)` replaces the board's PHY (the simulation's model).

    `user_ports` ({channel: UserPort keyword arguments}) gives those channels a port for the user's own
    logic (add_pcie_dma), `soc.pcie_dma<i>_user`; a clock domain the ports name must be made by the caller.
    `user_core` ({"spec": "module:Class", "channel": n}) puts a user's core (hostlink.cores.pcie.user_core)
    on a channel's port as `soc.user_core`, in its own clock: an MMCM on the SoC's clock, or
    `user_core_clock(soc, core)` (the simulation's port).
    """
    PLATFORM     = None   # The board's platform module: its `Platform` and its DDRAM_* constants.
    SYS_CLK_FREQ = None
    LANES        = None   # The lane counts and DMA data widths the board takes.
    DATA_WIDTHS  = None

    def __init__(self, crg_cls, pcie_phy_cls, lanes, data_width,
        platform             = None,
        sys_clk_freq         = None,
        dma_channels         = DEFAULT_DMA_CHANNELS,
        max_pending_requests = 8,
        bar0_size            = 0x100000,
        ident                = "hostlink PCIe DMA SoC",
        pcie_phy_kwargs      = None,
        with_dram            = False,
        dram_phy             = None,
        user_ports           = None,
        user_core            = None,
        user_core_clock      = None,
        **kwargs):
        platform     = platform     if platform     is not None else self.PLATFORM.Platform()
        sys_clk_freq = sys_clk_freq if sys_clk_freq is not None else self.SYS_CLK_FREQ
        check_pcie_parameters(lanes, data_width, dma_channels, self.LANES, self.DATA_WIDTHS)
        core, core_ports = prepare_user_core(user_core, data_width, sys_clk_freq)
        if core_ports:
            user_ports = {**(user_ports or {}), **core_ports}
        if with_dram and not hasattr(self.PLATFORM, "DDRAM_RATE"):
            raise ValueError("--with-dram needs the board's DDR3 settings; this board has none")

        # CRG --------------------------------------------------------------------------------------
        if with_dram:
            dram_clk_freq = board_dram_clk_freq(self.PLATFORM)
            self.crg = crg_cls(platform, sys_clk_freq, dram_clk_freq=dram_clk_freq)
        else:
            self.crg = crg_cls(platform, sys_clk_freq)

        # SoCMini ----------------------------------------------------------------------------------
        # The command line's --ident, when given, wins over the board's.
        if kwargs.get("ident") is None:
            kwargs["ident"] = ident
        # The host drives the SoC through BAR0: no CPU, no UART, no RAM or ROM for a CPU, whatever
        # the command line's SoC defaults say.
        kwargs.update(cpu_type="None", with_uart=False,
            integrated_rom_size=0, integrated_sram_size=0)
        SoCMini.__init__(self, platform, sys_clk_freq, **kwargs)

        # DRAM -------------------------------------------------------------------------------------
        dram_channels = None
        if with_dram:
            phy, module = (dram_phy or board_dram_phy(self.PLATFORM))(platform, dram_clk_freq)
            dram_channels = add_dram(self, phy, module, dram_clk_freq, dma_channels, data_width)

        # PCIe -------------------------------------------------------------------------------------
        add_pcie_endpoint(self, platform, pcie_phy_cls,
            lanes                = lanes,
            data_width           = data_width,
            dma_channels         = dma_channels,
            max_pending_requests = max_pending_requests,
            bar0_size            = bar0_size,
            pcie_phy_kwargs      = pcie_phy_kwargs,
            dram_channels        = dram_channels,
            user_ports           = user_ports,
        )
        finish_user_core(self, core, user_core, user_core_clock)
