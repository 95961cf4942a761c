# This file is part of hostlink.
# Copyright (c) 2026 hostlink developers
# SPDX-License-Identifier: BSD-2-Clause

"""Model of the Xilinx 7-series Gen3 PCIe hard block (`pcie3_7x`) at its user interface: cocotbext-pcie's
UltraScale model with the 7-series block's differences.

The 7-series Gen3 block has the UltraScale Gen3 user interface (RQ/RC/CQ/CC AXI4-Stream with descriptors,
`cfg_*` status and MSI ports), which cocotbext-pcie's `UltraScalePcieDevice` models.

Where the 7-series ports are narrower than the UltraScale model's (`cfg_function_status`: 2 functions,
not 4; `cfg_interrupt_msi_enable`, `..._mmenable`), `V7Gen3PcieDevice` drives them itself. It also answers
MSIs itself (`cfg_interrupt_msi_int` -> `..._sent`, as the UltraScale model does), so that it can refuse the
next ones on demand (`refuse_msis(count)`: `..._fail` instead, as the block does when it cannot send), and
counts the user logic's error reports on `cfg_err_uncor_in` (`error_reports`), which the UltraScale model
ignores. It counts the completions the model's receive buffer drops (`rx_cpl_drops`, as the `pcie_7x`
model does). And it times out reads as the block does (PG023: the block keeps a completion timer per outstanding
tag and ends the request with an RC descriptor of error code 1001, `completion_timeout_ns`), which the
UltraScale model does not: without it a tag the user logic retired would stay active in the model.

Event-driven: cocotbext-pcie's model runs a dozen coroutines that wake on every clock edge, most of them to
copy configuration to ports or to sample ports that rarely move. By default `V7Gen3PcieDevice` replaces
them with coroutines that do the same at the same edges but sleep while nothing they watch can change (a
port they sample rises or changes, a queue they drain gets an entry, a configuration write), and its RQ
sink and RC source (`FastRqSink`, `FastRcSource`) read their ports once per beat. `reference=True`
(`./sim.py dma --reference`) keeps cocotbext-pcie's coroutines and streams as they are written; the two give
identical runs (`test_pcie_host_profiles.py::test_the_reference_model_gives_the_same_run`, doc/pcie_sim.md).

The SoC side (the simulation PHY and platform) and the factory the bench calls, `make_v7gen3_device()`, are
in v7gen3.py, which the SoC's build imports without cocotb.
"""

import random
import warnings

import cocotb
from cocotb.queue import Queue
from cocotb.triggers import Event, First, RisingEdge, Timer, ValueChange
from cocotb.utils import get_sim_time

from cocotbext.axi import AxiStreamBus
from cocotbext.pcie.core.tlp import TlpType
from cocotbext.pcie.core.utils import PcieId
from cocotbext.pcie.xilinx.us.interface import RcSource, RqSink, UsPcieFrame
from cocotbext.pcie.xilinx.us.tlp import ErrorCode, Tlp_us
from cocotbext.pcie.xilinx.us.us_model import UltraScalePcieDevice

from hostlink.cores.pcie.v7gen3phy import XILINX_VENDOR_ID, device_id
from hostlink.sim.pcie.hardblock import port_reader

# cocotbext-pcie 0.2.16 starts its user clock with cocotb 1.x's `units=`, which cocotb 2.1 takes (the same
# clock) with a DeprecationWarning on every run. Set when the bench imports this module, after cocotb has set
# its own filters.
warnings.filterwarnings("ignore", "The 'units' argument", DeprecationWarning,
    r"cocotbext\.pcie\.xilinx\.us\.us_model")

_NON_POSTED_REQUESTS = {TlpType.IO_READ, TlpType.IO_WRITE, TlpType.MEM_READ, TlpType.MEM_READ_64}
_COMPLETIONS         = {TlpType.CPL, TlpType.CPL_DATA, TlpType.CPL_LOCKED, TlpType.CPL_LOCKED_DATA}

# Streams ------------------------------------------------------------------------------------------

def _sample_handshake(tready, tvalid, reset):
    """tready, tvalid and reset (port readers; reset may be None) at a clock edge, as cocotbext-pcie's
    sources and sinks sample them: a port reading X or Z, or no reset port, counts as 0."""
    def sample(read):
        try:
            return read() if read is not None else 0
        except ValueError:
            return 0
    return sample(tready), sample(tvalid), sample(reset)


class FastRqSink(RqSink):
    """cocotbext-pcie's RqSink doing its per-beat work in one coroutine, each port read once per beat.

    The original samples a beat in `_run_sink` and hands it to a second coroutine, `_run`, which converts
    tdata and tuser to integers once per DWORD; this one decodes the beat where it is sampled, with the
    same result (the frame reaches the queue in the same time step). Built for what the VC709 uses: one
    segment, 64 to 256 bits.
    """
    async def _run(self):
        pass    # The frames are built in _run_sink.

    async def _run_sink(self):
        assert self.seg_count == 1 and self.width != 512
        bus = self.bus
        tdata, tkeep, tlast, tuser, tready, tvalid = (port_reader(getattr(bus, name)) for name in
            ("tdata", "tkeep", "tlast", "tuser", "tready", "tvalid"))
        reset = port_reader(self.reset) if self.reset is not None else None
        seq_num_high = len(bus.tuser) == 62
        driven = None   # What tready holds: written only when it changes.
        lanes = range(self.byte_lanes)
        discontinue = 1 << self.discontinue_offset
        parity_offset = self.parity_offset
        clock_edge_event = RisingEdge(self.clock)
        wake_event = self.wake_event.wait()
        frame = None
        while True:
            pause_sample = bool(self.pause)
            await clock_edge_event
            tready_sample, tvalid_sample, reset_sample = _sample_handshake(tready, tvalid, reset)
            if reset_sample:
                bus.tready.value = driven = 0
                continue
            if tready_sample and tvalid_sample:
                self.active = True
                data, keep, user = tdata(), tkeep(), tuser()
                if not frame:
                    frame = UsPcieFrame()
                    frame.first_be = user & 0xf
                    frame.last_be  = (user >> 4) & 0xf
                    frame.seq_num  = (user >> 24) & 0xf
                    if seq_num_high:
                        frame.seq_num |= ((user >> 60) & 0x3) << 4
                if user & discontinue:
                    frame.discontinue = True
                for k in lanes:
                    if keep >> k & 1:
                        frame.data.append((data >> 32*k) & 0xffffffff)
                        frame.parity.append((user >> (4*k + parity_offset)) & 0xf)
                if tlast():
                    self._sink_frame(frame)
                    self.active = False
                    frame = None
            paused = self.full() or pause_sample
            if driven != (not paused):
                bus.tready.value = driven = not paused
            if (not tvalid_sample or paused) and (pause_sample == bool(self.pause)):
                self.wake_event.clear()
                await wake_event


class FastRcSource(RcSource):
    """cocotbext-pcie's RcSource whose per-cycle coroutine reads its handshake ports without building a
    cocotb value object each time (hardblock.port_reader); otherwise the same code."""
    async def _run_source(self):
        self.active = False
        bus = self.bus
        tready, tvalid = port_reader(bus.tready), port_reader(bus.tvalid)
        reset = port_reader(self.reset) if self.reset is not None else None
        clock_edge_event = RisingEdge(self.clock)
        while True:
            await clock_edge_event
            tready_sample, tvalid_sample, reset_sample = _sample_handshake(tready, tvalid, reset)
            if reset_sample:
                bus.tvalid.value = 0
                continue
            if (tready_sample and tvalid_sample) or not tvalid_sample:
                if self.drive_obj and not self.pause:
                    bus.drive(self.drive_obj)
                    self.drive_obj = None
                    self.drive_sync.set()
                    bus.tvalid.value = 1
                    self.active = True
                else:
                    bus.tvalid.value = 0
                    self.active = bool(self.drive_obj)
                    if not self.drive_obj:
                        self.idle_event.set()
                        self.bus_active_event.clear()
                        await self.bus_active_event.wait()


class _NotifyingQueue(Queue):
    """A cocotb Queue that sets `event` whenever something is put in it."""
    def __init__(self, event):
        super().__init__()
        self.event = event

    def put_nowait(self, item):
        super().put_nowait(item)
        self.event.set()

# Device model -------------------------------------------------------------------------------------

class V7Gen3PcieDevice(UltraScalePcieDevice):
    """`pcie3_7x` user-interface model bound to the top-level ports `<prefix>_<port>` of the DUT.

    Built by `v7gen3.make_v7gen3_device()`, which holds the defaults and documents the parameters.

    Parameters
    ----------
    dut, prefix : the cocotb DUT and the prefix of the hard block's ports on it.
    link_speed, link_width : the host's link; the link trains to the lower of these and the block's.
    data_width : the SoC's RQ/RC/CQ/CC width, checked against its `s_axis_rq_tdata`.
    device_speed, device_width, user_clk_freq : the block's configuration and user clock.
    bar0_size, msi_vectors, max_payload_size, rc_straddle : the block's function and RC interface.
    backpressure, seed : the probability that the RQ and CC sinks hold tready low at an edge, and its seed.
    reference : cocotbext-pcie's per-cycle coroutines and streams as written (module docstring).

    Interface attributes
    --------------------
    refuse_msis(count) : answer the next `count` MSI requests with `cfg_interrupt_msi_fail`.
    completion_timeout_ns : how long a read may wait for its completions (set before the reads).
    msi_sent, msi_refused, error_reports, completion_timeouts : what the block did and was told.
    rx_cpl_bytes, rx_cpl_last_ns, rc_wait_cycles : the completions the user logic accepted, and when.
    rx_cpl_drops, cplh_limit, most_cplh_used : the receive buffer's losses, size and high-water mark.
    """
    def __init__(self, dut, prefix, *, link_speed, link_width, data_width, device_speed, device_width,
            user_clk_freq, bar0_size, msi_vectors, max_payload_size, backpressure, rc_straddle, seed,
            reference):
        self._dut      = dut
        self._prefix   = prefix
        self.reference = reference
        if len(self._port("s_axis_rq_tdata")) != data_width:
            raise ValueError(f"the SoC's pcie3_7x interface is {len(self._port('s_axis_rq_tdata'))} bits "
                             f"wide, not {data_width!r}")
        super().__init__(
            pcie_generation     = device_speed,
            pcie_link_width     = device_width,
            user_clk_frequency  = user_clk_freq,
            alignment           = "dword",
            rc_straddle         = rc_straddle,
            enable_extended_tag = self._port("cfg_mgmt_read") is not None,
            max_payload_size    = max_payload_size,
            enable_client_tag   = True,
            pf0_msi_enable      = True,
            pf0_msi_count       = msi_vectors,
            **self._model_ports(),
        )
        # Given no rq_bus or rc_bus, the model built neither stream: ours, the fast ones by default.
        self._add_requester_streams()
        self._identify(link_speed, link_width, device_speed, device_width, bar0_size)
        self.msi_sent       = 0
        self.msi_refusals   = 0      # MSIs still to refuse.
        self.msi_refused    = 0
        self.error_reports  = {"cfg_err_uncor_in": 0}
        self.rx_cpl_bytes   = 0      # Completion payload bytes accepted by the user logic.
        self.rx_cpl_last_ns = None   # When the last of them was accepted.
        self.rc_wait_cycles = 0      # Cycles an RC beat waited on the user logic (tvalid, not tready).
        if backpressure:
            rng = random.Random(seed)
            self.rq_sink.set_pause_generator(iter(lambda: rng.random() < backpressure, None))
            self.cc_sink.set_pause_generator(iter(lambda: rng.random() < backpressure, None))
        self._rc = AxiStreamBus.from_prefix(dut, f"{prefix}_m_axis_rc")
        cocotb.start_soon(self._run_7series_status())
        cocotb.start_soon(self._run_rc_count())
        cocotb.start_soon(self._run_error_reports())
        self.completion_timeout_ns = 50e6   # The block's default range: 50 us to 50 ms.
        self.completion_timeouts   = 0
        cocotb.start_soon(self._run_completion_timeout())
        # The block's receive buffer: the UltraScale model holds completions in 64 headers and 16 KiB
        # and drops one that does not fit with a warning only. Counted here as the pcie_7x model
        # counts its own, so that ./sim.py dma counts each loss as an error on every board.
        self.rx_cpl_drops   = 0
        self.cplh_limit     = self.rx_buf_cplh_fc_limit
        self.most_cplh_used = 0
        self._add_wake_events()

    def _port(self, name):
        return getattr(self._dut, f"{self._prefix}_{name}", None)

    def _model_ports(self):
        """The UltraScale model's port arguments: the 7-series block's ports of the same name and meaning.
        The RQ and RC streams are _add_requester_streams()'s."""
        port = self._port
        return dict(
            user_clk           = port("user_clk"),
            user_reset         = port("user_reset"),
            user_lnk_up        = port("user_lnk_up"),

            cq_bus             = AxiStreamBus.from_prefix(self._dut, f"{self._prefix}_m_axis_cq"),
            cc_bus             = AxiStreamBus.from_prefix(self._dut, f"{self._prefix}_s_axis_cc"),

            pcie_rq_seq_num        = port("pcie_rq_seq_num"),
            pcie_rq_seq_num_vld    = port("pcie_rq_seq_num_vld"),

            cfg_phy_link_down      = port("cfg_phy_link_down"),
            cfg_negotiated_width   = port("cfg_negotiated_width"),
            cfg_current_speed      = port("cfg_current_speed"),
            cfg_max_payload        = port("cfg_max_payload"),
            cfg_max_read_req       = port("cfg_max_read_req"),

            # The SoC reads Device Control (Extended Tag Field Enable) through these.
            cfg_mgmt_addr            = port("cfg_mgmt_addr"),
            cfg_mgmt_write           = port("cfg_mgmt_write"),
            cfg_mgmt_write_data      = port("cfg_mgmt_write_data"),
            cfg_mgmt_byte_enable     = port("cfg_mgmt_byte_enable"),
            cfg_mgmt_read            = port("cfg_mgmt_read"),
            cfg_mgmt_read_data       = port("cfg_mgmt_read_data"),
            cfg_mgmt_read_write_done = port("cfg_mgmt_read_write_done"),

            # MSIs: _run_7series_status.
        )

    def _add_requester_streams(self):
        """The RQ sink and RC source, built and started as UltraScalePcieDevice builds and starts its own
        from `rq_bus` and `rc_bus` (which it is not given): by default the fast ones."""
        rq_sink_class, rc_source_class = (RqSink, RcSource) if self.reference else (FastRqSink, FastRcSource)
        rq_bus = AxiStreamBus.from_prefix(self._dut, f"{self._prefix}_s_axis_rq")
        rc_bus = AxiStreamBus.from_prefix(self._dut, f"{self._prefix}_m_axis_rc")
        self.rq_sink = rq_sink_class(rq_bus, self.user_clk, self.user_reset)
        self.rq_sink.queue_occupancy_limit_frames = 2
        rc_segments = 2 if len(rc_bus.tdata) >= 256 and self.rc_straddle else 1
        self.rc_source = rc_source_class(rc_bus, self.user_clk, self.user_reset, segments=rc_segments)
        self.rc_source.queue_occupancy_limit_frames = 2
        cocotb.start_soon(self._run_rq_logic())
        cocotb.start_soon(self._run_rq_np_queue_logic())
        cocotb.start_soon(self._run_rq_seq_num_logic())
        if not self.enable_client_tag:
            cocotb.start_soon(self._run_rq_tag_logic())
        cocotb.start_soon(self._run_rc_logic())

    def _identify(self, link_speed, link_width, device_speed, device_width, bar0_size):
        f = self.functions[0]
        f.vendor_id = XILINX_VENDOR_ID
        f.device_id = device_id(link_width)
        f.class_code = 0x058000
        f.configure_bar(0, bar0_size)
        # cocotbext-pcie leaves the Link Status register at zero; a trained link reports its rate
        # and width there, and the block copies them to cfg_current_speed/cfg_negotiated_width.
        f.pcie_cap.current_link_speed    = min(link_speed, device_speed)
        f.pcie_cap.negotiated_link_width = min(link_width, device_width)

    def _add_wake_events(self):
        """Event-driven: what wakes the overrides below. The coroutines that __init__ started have not run
        yet, so the queues can still be swapped."""
        # A configuration write finished: the status ports may change (one event for each of the two
        # coroutines that copy configuration to ports, cfg_status and 7series_status).
        self.config_changed = [Event(), Event()]
        self.cq_ready       = Event()   # A completer request arrived.
        self.seq_num_ready  = Event()   # A requester TLP left: its sequence number is due.
        if self.reference:
            return
        f = self.functions[0]
        write_config_register = f.write_config_register
        async def write_and_notify(reg, data, mask):
            await write_config_register(reg, data, mask)
            for event in self.config_changed:
                event.set()
        f.write_config_register = write_and_notify
        self.cq_queue    = _NotifyingQueue(self.cq_ready)
        self.rq_seq_num  = _NotifyingQueue(self.seq_num_ready)

    async def upstream_recv(self, tlp):
        ours = tlp.fmt_type in _COMPLETIONS and any(f.pcie_id == tlp.requester_id for f in self.functions)
        held = self.rx_buf_cplh_fc_count
        # The model's completion branch does not wait: the buffer count moves by one exactly when it
        # takes the completion.
        await super().upstream_recv(tlp)
        if ours:
            if self.rx_buf_cplh_fc_count == held:
                self.rx_cpl_drops += 1
            self.most_cplh_used = max(self.most_cplh_used, self.rx_buf_cplh_fc_count)

    async def _run_completion_timeout(self):
        started = {}   # tag -> (request, when it was first seen active)
        while True:
            await Timer(500, "ns")
            now = get_sim_time("ns")
            for tag, request in enumerate(self.active_request):
                if request is None:
                    started.pop(tag, None)
                    continue
                if tag not in started or started[tag][0] is not request:
                    started[tag] = (request, now)
                elif now - started[tag][1] >= self.completion_timeout_ns:
                    cpl = Tlp_us.create_completion_for_tlp(request, PcieId(0, 0, 0))
                    cpl.error_code        = ErrorCode.TIMEOUT
                    cpl.request_completed = True
                    self.active_request[tag] = None
                    started.pop(tag)
                    self.completion_timeouts += 1
                    self.rx_buf_cplh_fc_count += 1
                    self.rx_buf_cpld_fc_count += 1
                    self.rc_queue.put_nowait(cpl)

    # Event-driven overrides of cocotbext-pcie's per-cycle coroutines ------------------------------
    #
    # Each does what the original does at a clock edge, at the same edges, but sleeps while its
    # inputs are idle: a port it samples is low (woken by the port's rising edge or change, then
    # the next clock edge: the first edge at which the original would have seen it), a queue it
    # drains is empty (woken by a put), or the configuration it copies to ports is unchanged (woken
    # by a configuration write). An edge it skips is one at which the original writes the values
    # the ports already hold.

    async def _run_cfg_ctrl_logic(self):
        if self.reference or self.sys_reset is not None or self.cfg_config_space_enable is not None:
            return await super()._run_cfg_ctrl_logic()
        self.config_space_enable = True     # What the original sets on every edge without these ports.

    async def _run_cfg_int_logic(self):
        # This block's MSIs are _run_7series_status's: none of the UltraScale MSI ports is wired, so
        # the original reads and writes nothing.
        ports = [n for n in vars(self) if n.startswith("cfg_interrupt")]
        if self.reference or not ports or any(getattr(self, n) is not None for n in ports):
            return await super()._run_cfg_int_logic()

    async def _run_cfg_status_logic(self):
        if self.reference or self.sys_reset is not None or self.cfg_local_error is not None \
                or self.cfg_function_status is not None or self.cfg_rcb_status is not None:
            return await super()._run_cfg_status_logic()
        f = self.functions[0]
        while True:
            await RisingEdge(self.user_clk)
            self.config_changed[0].clear()
            if self.cfg_phy_link_down is not None:
                self.cfg_phy_link_down.value = 0
            if self.user_lnk_up is not None:
                self.user_lnk_up.value = 1
            if self.cfg_negotiated_width is not None:
                self.cfg_negotiated_width.value = f.pcie_cap.negotiated_link_width
            if self.cfg_current_speed is not None:
                self.cfg_current_speed.value = (1 << (f.pcie_cap.current_link_speed & 3)) >> 1
            if self.cfg_max_payload is not None:
                self.cfg_max_payload.value = f.pcie_cap.max_payload_size
            if self.cfg_max_read_req is not None:
                self.cfg_max_read_req.value = f.pcie_cap.max_read_request_size
            await self.config_changed[0].wait()

    async def _run_cfg_mgmt_logic(self):
        if self.reference:
            return await super()._run_cfg_mgmt_logic()
        clock_edge_event = RisingEdge(self.user_clk)
        while True:
            await clock_edge_event
            cfg_mgmt_read  = int(self.cfg_mgmt_read.value)
            cfg_mgmt_write = int(self.cfg_mgmt_write.value)
            if self.cfg_mgmt_read_write_done.value:
                self.cfg_mgmt_read_write_done.value = 0
            elif cfg_mgmt_read or cfg_mgmt_write:
                cfg_mgmt_addr = int(self.cfg_mgmt_addr.value)
                function      = (cfg_mgmt_addr >> 10) & 0x7f
                reg_num       = cfg_mgmt_addr & 0x3ff
                write_data    = int(self.cfg_mgmt_write_data.value)
                byte_enable   = int(self.cfg_mgmt_byte_enable.value)
                for k in range(3):
                    await RisingEdge(self.user_clk)
                if not cfg_mgmt_addr & (1 << 18):    # Not an internal register: the function's.
                    if cfg_mgmt_read:
                        self.cfg_mgmt_read_data.value = \
                            await self.functions[function].read_config_register(reg_num)
                    else:
                        await self.functions[function].write_config_register(reg_num, write_data,
                            byte_enable)
                self.cfg_mgmt_read_write_done.value = 1
            else:
                await First(RisingEdge(self.cfg_mgmt_read), RisingEdge(self.cfg_mgmt_write))

    async def _run_cq_logic(self):
        if self.reference or self.pcie_cq_np_req is not None or self.pcie_cq_np_req_count is not None:
            return await super()._run_cq_logic()
        # cq_np_req_count grows by one per edge, up to 32: kept as (count, edge time) and brought up
        # to date at each edge this coroutine sees.
        period = round(1e12 / self.user_clk_frequency)
        start  = get_sim_time("ps")
        last   = None
        while True:
            if self.cq_queue.empty() and self.cq_np_queue.empty():
                self.cq_ready.clear()
                await self.cq_ready.wait()
            await RisingEdge(self.user_clk)
            now = get_sim_time("ps")
            if last is None:
                edges = (now - start) // period + 1
            else:
                edges = round((now - last) / period)
            last = now
            self.cq_np_req_count = min(self.cq_np_req_count + edges, 32)
            while not self.cq_np_queue.empty() and self.cq_np_req_count > 0:
                tlp = self.cq_np_queue.get_nowait()
                self.cq_np_req_count -= 1
                await self.cq_source.send(tlp.pack_us_cq())
            while not self.cq_queue.empty():
                tlp = self.cq_queue.get_nowait()
                if tlp.fmt_type in _NON_POSTED_REQUESTS:
                    if self.cq_np_req_count > 0:
                        self.cq_np_req_count -= 1
                        await self.cq_source.send(tlp.pack_us_cq())
                    else:
                        self.cq_np_queue.put_nowait(tlp)
                else:
                    await self.cq_source.send(tlp.pack_us_cq())

    async def _run_rq_seq_num_logic(self):
        if self.reference:
            return await super()._run_rq_seq_num_logic()
        valid = False   # What pcie_rq_seq_num_vld holds.
        while True:
            if self.rq_seq_num.empty() and not valid:
                self.seq_num_ready.clear()
                await self.seq_num_ready.wait()
            await RisingEdge(self.user_clk)
            if self.pcie_rq_seq_num is not None:
                self.pcie_rq_seq_num_vld.value = 0
                valid = False
                if not self.rq_seq_num.empty():
                    self.pcie_rq_seq_num.value = self.rq_seq_num.get_nowait()
                    self.pcie_rq_seq_num_vld.value = 1
                    valid = True
            elif not self.rq_seq_num.empty():
                self.rq_seq_num.get_nowait()

    # The 7-series block's own ports -----------------------------------------------------------------

    def refuse_msis(self, count):
        """Answer the next `count` MSI requests with cfg_interrupt_msi_fail."""
        self.msi_refusals += count

    async def _run_error_reports(self):
        # One wake-up per report (one-cycle pulses), not per cycle.
        report = self._port("cfg_err_uncor_in")
        if report is None:
            return
        while True:
            await RisingEdge(report)
            self.error_reports["cfg_err_uncor_in"] += 1

    async def _run_7series_status(self):
        port = self._port
        function_status = port("cfg_function_status")
        msi_enable      = port("cfg_interrupt_msi_enable")
        msi_mmenable    = port("cfg_interrupt_msi_mmenable")
        phy_link_status = port("cfg_phy_link_status")
        msi_int, msi_sent, msi_fail = (port(f"cfg_interrupt_msi_{n}") for n in ("int", "sent", "fail"))
        msi_sent.value = 0
        msi_fail.value = 0
        f = self.functions[0]
        config_changed = self.config_changed[1]
        while True:
            await RisingEdge(self.user_clk)
            config_changed.clear()
            # MSIs as the UltraScale model answers them: one-cycle `sent` after the request.
            msi_sent.value = 0
            msi_fail.value = 0
            try:
                vectors = int(msi_int.value)
            except ValueError:
                vectors = 0
            if vectors:
                bits = [i for i in range(32) if vectors >> i & 1]
                if self.msi_refusals:
                    self.msi_refusals -= 1
                    self.msi_refused  += 1
                    msi_fail.value = 1
                elif len(bits) == 1:
                    self.msi_sent += 1
                    await f.msi_cap.issue_msi_interrupt(bits[0])
                    msi_sent.value = 1
            if function_status is not None:
                function_status.value = (0x07 if f.bus_master_enable else 0) | \
                                        (0x08 if f.interrupt_disable else 0)
            if msi_enable is not None:
                msi_enable.value = int(bool(f.msi_cap.msi_enable))
            if phy_link_status is not None:
                phy_link_status.value = 0b11   # Link up, data link layer initialised.
            if msi_mmenable is not None:
                msi_mmenable.value = f.msi_cap.msi_multiple_message_enable & 0x7
            if not self.reference and not vectors:
                # `sent` and `fail` are low now: nothing changes until the user logic requests an
                # MSI or the configuration changes.
                await First(ValueChange(msi_int), config_changed.wait())

    async def _run_rc_count(self):
        # Counted where the user logic accepts the beats (tvalid and tready at a clock edge): the
        # descriptor's dword count at the completion's start, booked at its end. Straddled, a beat may
        # end the completion in progress and start one at DW0 (none in progress, lower half used) and
        # one at DW4 (is_sof_0 / is_sof_1; is_eof_0 / is_eof_1 end them in that order).
        bus, active = self._rc, None
        valid, ready, data_of, user_of, keep_of, last_of = (port_reader(getattr(bus, name)) for name in
            ("tvalid", "tready", "tdata", "tuser", "tkeep", "tlast"))
        while True:
            await RisingEdge(self.user_clk)
            try:
                if not valid():
                    if not self.reference:
                        await RisingEdge(bus.tvalid)
                    continue
                if not ready():
                    self.rc_wait_cycles += 1
                    continue
                tdata, tuser = data_of(), user_of()
                keep, last = keep_of(), last_of()
            except ValueError:
                continue
            def dword_count(dw):
                return ((tdata >> (32*(dw + 1))) & 0x7ff) * 4
            if self.rc_straddle:
                starts = []
                if tuser >> 32 & 1:
                    starts.append(4 if active is not None or not keep & 1 else 0)
                if tuser >> 33 & 1:
                    starts.append(4)
                ends = (tuser >> 34 & 1) + (tuser >> 38 & 1)
            else:
                starts = [0] if active is None else []
                ends = last
            completions = ([] if active is None else [active]) + [dword_count(dw) for dw in starts]
            for pending in completions[:ends]:
                self.rx_cpl_bytes  += pending
                self.rx_cpl_last_ns = get_sim_time("ns")
            active = completions[ends] if len(completions) > ends else None
