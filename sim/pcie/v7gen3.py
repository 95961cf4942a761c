# This file is part of hostlink.
# Copyright (c) 2026 hostlink developers
# SPDX-License-Identifier: BSD-2-Clause

"""Simulation of the VC709 SoC: V7Gen3PCIEPHY with `pcie3_7x` replaced by cocotbext-pcie's UltraScale model.

The 7-series Gen3 block has the UltraScale Gen3 user interface (RQ/RC/CQ/CC AXI4-Stream with descriptors,
`cfg_*` status and MSI ports), which cocotbext-pcie's `UltraScalePcieDevice` models. Everything of the PHY
but the hard block is simulated: the clock-domain crossings, LitePCIe's UltraScale adapters (compiled
with the SoC), the MSI state machine and the configuration resynchronisation.

Where the 7-series ports are narrower than the UltraScale model's (`cfg_function_status`: 2 functions,
not 4; `cfg_interrupt_msi_enable`, `..._mmenable`), `V7Gen3PcieDevice` drives them itself. It also answers
MSIs itself (`cfg_interrupt_msi_int` -> `..._sent`, as the UltraScale model does), so that it can refuse the
next ones on demand (`refuse_msis(count)`: `..._fail` instead, as the block does when it cannot send), and
counts the user logic's error reports on `cfg_err_uncor_in` (`error_reports`), which the UltraScale model
ignores. It counts the completions the model's receive buffer drops (`rx_cpl_drops`, as the `pcie_7x`
model does). And it times out reads as the block does (PG023: the block keeps a completion timer per outstanding
tag and ends the request with an RC descriptor of error code 1001, `completion_timeout_ns`), which the
UltraScale model does not: without it a tag the user logic retired would stay active in the model.
"""

import os
from unittest import mock

import cocotb
from cocotb.clock import Clock
from cocotb.triggers import RisingEdge, Timer
from cocotb.utils import get_sim_time

from hostlink.cores.pcie.v7gen3phy import V7Gen3PCIEPHY, XILINX_VENDOR_ID, device_id
from hostlink.sim.pcie.hardblock import expose_hard_block
from hostlink.sim.pcie.soc import make_sim_platform

HARD_BLOCK_PREFIX = "pcie3_7x"

# Simulation PHY -----------------------------------------------------------------------------------

class SimV7Gen3PCIEPHY(V7Gen3PCIEPHY):
    """V7Gen3PCIEPHY whose `pcie3_7x_0` hard block is replaced by top-level ports for the device model."""
    def do_finalize(self):
        self.add_adapter_sources(self.platform)
        self.hard_block_ports = expose_hard_block(self, self.platform, self.pcie_phy_params,
            prefix=HARD_BLOCK_PREFIX)

# Simulation platform ------------------------------------------------------------------------------

def make_v7gen3_sim_platform(board_platform_cls):
    """The board's simulation platform, whose Verilog also carries the PHY's Verilog sources.

    The Verilator build compiles one file; LitePCIe's adapters are Verilog modules the PHY adds with
    `platform.add_source()`, so they are appended to it.
    """
    base = make_sim_platform(board_platform_cls)

    class V7Gen3SimPlatform(base):
        def build(self, fragment, build_dir, build_name, run=False, **kwargs):
            verilog = base.build(self, fragment, build_dir, build_name, run=run, **kwargs)
            with open(os.path.join(build_dir, build_name + ".v"), "a") as out:
                for source in self.sources:
                    filename, language = source[0], source[1]
                    if language not in ("verilog", "systemverilog"):
                        raise ValueError(f"simulation cannot compile {filename!r} ({language})")
                    with open(filename) as f:
                        out.write(f"\n// From {os.path.basename(filename)}\n")
                        out.write(f.read())
            return verilog
    V7Gen3SimPlatform.__name__ = base.__name__
    return V7Gen3SimPlatform

# Device model -------------------------------------------------------------------------------------

def _ultrascale_model():
    from cocotbext.pcie.xilinx.us import us_model
    return us_model


class _Clock(Clock):
    # cocotbext-pcie 0.2.16 still passes cocotb 1.x's `units=`; cocotb 2 only takes `unit=`.
    def __init__(self, signal, period, units=None, unit="step", **kwargs):
        super().__init__(signal, period, unit=units or unit, **kwargs)


def make_v7gen3_device(dut, prefix=HARD_BLOCK_PREFIX, *, link_speed=3, link_width=8, data_width=256,
        device_speed=3, device_width=8, user_clk_freq=250e6, bar0_size=0x100000, msi_vectors=1,
        max_payload_size=512, backpressure=0.0, rc_straddle=False, seed=1):
    """`pcie3_7x` user-interface model bound to the top-level ports `<prefix>_<port>` of the DUT.

    `device_speed`/`device_width` are the block's configuration (Gen3 x8 for 256 bits at 250 MHz),
    `link_speed`/`link_width` the host's; the link trains to the lower of each.
    """
    from cocotbext.axi import AxiStreamBus
    us_model = _ultrascale_model()

    def port(name):
        return getattr(dut, f"{prefix}_{name}", None)

    if len(port("s_axis_rq_tdata")) != data_width:
        raise ValueError(f"the SoC's pcie3_7x interface is {len(port('s_axis_rq_tdata'))} bits wide, "
                         f"not {data_width!r}")

    class V7Gen3PcieDevice(us_model.UltraScalePcieDevice):
        def __init__(self):
            with mock.patch.object(us_model, "Clock", _Clock):
                super().__init__(
                    pcie_generation    = device_speed,
                    pcie_link_width    = device_width,
                    user_clk_frequency = user_clk_freq,
                    alignment          = "dword",
                    rc_straddle        = rc_straddle,
                    enable_extended_tag = port("cfg_mgmt_read") is not None,
                    max_payload_size   = max_payload_size,
                    enable_client_tag  = True,
                    pf0_msi_enable     = True,
                    pf0_msi_count      = msi_vectors,

                    user_clk           = port("user_clk"),
                    user_reset         = port("user_reset"),
                    user_lnk_up        = port("user_lnk_up"),

                    rq_bus             = AxiStreamBus.from_prefix(dut, f"{prefix}_s_axis_rq"),
                    rc_bus             = AxiStreamBus.from_prefix(dut, f"{prefix}_m_axis_rc"),
                    cq_bus             = AxiStreamBus.from_prefix(dut, f"{prefix}_m_axis_cq"),
                    cc_bus             = AxiStreamBus.from_prefix(dut, f"{prefix}_s_axis_cc"),

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
            self.functions[0].vendor_id = XILINX_VENDOR_ID
            self.functions[0].device_id = device_id(link_width)
            self.functions[0].class_code = 0x058000
            self.functions[0].configure_bar(0, bar0_size)
            # cocotbext-pcie leaves the Link Status register at zero; a trained link reports its rate
            # and width there, and the block copies them to cfg_current_speed/cfg_negotiated_width.
            self.functions[0].pcie_cap.current_link_speed    = min(link_speed, device_speed)
            self.functions[0].pcie_cap.negotiated_link_width = min(link_width, device_width)
            self.msi_sent       = 0
            self.msi_refusals   = 0      # MSIs still to refuse.
            self.msi_refused    = 0
            self.error_reports  = {"cfg_err_uncor_in": 0}
            self.rx_cpl_bytes   = 0      # Completion payload bytes accepted by the user logic.
            self.rx_cpl_last_ns = None   # When the last of them was accepted.
            self.rc_wait_cycles = 0      # Cycles an RC beat waited on the user logic (tvalid, not tready).
            if backpressure:
                import random
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

        async def upstream_recv(self, tlp):
            from cocotbext.pcie.core.tlp import TlpType
            ours = tlp.fmt_type in {TlpType.CPL, TlpType.CPL_DATA, TlpType.CPL_LOCKED, TlpType.CPL_LOCKED_DATA} \
                and any(f.pcie_id == tlp.requester_id for f in self.functions)
            held = self.rx_buf_cplh_fc_count
            # The model's completion branch does not wait: the buffer count moves by one exactly when it
            # takes the completion.
            await super().upstream_recv(tlp)
            if ours:
                if self.rx_buf_cplh_fc_count == held:
                    self.rx_cpl_drops += 1
                self.most_cplh_used = max(self.most_cplh_used, self.rx_buf_cplh_fc_count)

        async def _run_completion_timeout(self):
            from cocotbext.pcie.core.utils import PcieId
            from cocotbext.pcie.xilinx.us.tlp import Tlp_us, ErrorCode
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

        def refuse_msis(self, count):
            """Answer the next `count` MSI requests with cfg_interrupt_msi_fail."""
            self.msi_refusals += count

        async def _run_error_reports(self):
            # One wake-up per report (one-cycle pulses), not per cycle.
            report = port("cfg_err_uncor_in")
            if report is None:
                return
            while True:
                await RisingEdge(report)
                self.error_reports["cfg_err_uncor_in"] += 1

        async def _run_7series_status(self):
            function_status = port("cfg_function_status")
            msi_enable      = port("cfg_interrupt_msi_enable")
            msi_mmenable    = port("cfg_interrupt_msi_mmenable")
            phy_link_status = port("cfg_phy_link_status")
            msi_int, msi_sent, msi_fail = (port(f"cfg_interrupt_msi_{n}") for n in ("int", "sent", "fail"))
            msi_sent.value = 0
            msi_fail.value = 0
            f = self.functions[0]
            while True:
                await RisingEdge(self.user_clk)
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

        async def _run_rc_count(self):
            # Counted where the user logic accepts the beats (tvalid and tready at a clock edge): the
            # descriptor's dword count at the completion's start, booked at its end. Straddled, a beat may
            # end the completion in progress and start one at DW0 (none in progress, lower half used) and
            # one at DW4 (is_sof_0 / is_sof_1; is_eof_0 / is_eof_1 end them in that order).
            bus, active = self._rc, None
            while True:
                await RisingEdge(self.user_clk)
                try:
                    if not int(bus.tvalid.value):
                        continue
                    if not int(bus.tready.value):
                        self.rc_wait_cycles += 1
                        continue
                    tdata, tuser = int(bus.tdata.value), int(bus.tuser.value)
                    keep, last = int(bus.tkeep.value), int(bus.tlast.value)
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

    return V7Gen3PcieDevice()
