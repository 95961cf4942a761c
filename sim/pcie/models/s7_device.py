# This file is part of hostlink.
# Copyright (c) 2026 hostlink developers
# SPDX-License-Identifier: BSD-2-Clause

"""Model of the Xilinx 7-series Gen2 PCIe hard block (`pcie_7x`, PG054) at its user interface.

The model sits where LitePCIe's S7PCIEPHY instantiates `pcie_s7` (see hardblock.py) and speaks the
block's AXI4-Stream user interface and configuration ports:

- `m_axis_rx_*` (block -> user): TLPs as big-endian DWORDs, DWORD 0 in tdata[31:0]. On the 128-bit
  interface a TLP may start in DWORD 2 of the beat in which the previous one ended in DWORD 0 or 1
  (straddling); tuser carries is_sof[14:10] and is_eof[21:17] (bit 4: present, bits 3:0: byte offset),
  and the BAR hit in tuser[8:2]. `m_axis_rx_tready` back-pressures the block.
- `s_axis_tx_*` (user -> block): TLPs start in DWORD 0, tkeep marks the valid bytes of the last beat, tlast
  ends the TLP. tready falls when the block's transmit buffer (a few TLPs) is full, or at random when the
  host profile asks for back-pressure.
- `cfg_interrupt*`: the user raises cfg_interrupt with cfg_interrupt_di; the block answers cfg_interrupt_rdy
  for one cycle and sends the MSI memory write programmed in its MSI capability, behind the TLPs it has
  already taken from s_axis_tx (an assumption: PG054 does not say; posted requests keep their order on
  the link, and a block that queued its MSI ahead would need a fence no user logic can build). It has no way to
  refuse an MSI (no `..._fail`): it grants it when it can. `hold_msis(count, cycles)` makes the model
  keep the next `count` requests waiting `cycles` before granting them, as a busy block does.
- Completion space: the block advertises infinite completion credits and holds completions for the user
  in a receive buffer of `completion_space` (headers, bytes; LitePCIe's configuration by default:
  `hostlink.cores.pcie.endpoint.S7_COMPLETION_SPACE`). A completion that arrives when it is full is dropped
  and counted in `rx_cpl_drops`, as the block would lose it; its space is given back when its last DWORD
  has gone to the user.
- `cfg_err_cpl_timeout`, `cfg_err_cpl_unexpect`: error reports from the user logic, counted in
  `error_reports` (the block would log them and send an error message to the root complex).
- `cfg_command`, `cfg_dcommand`, `cfg_bus/device/function_number`, `pl_sel_lnk_rate/width`,
  `pl_ltssm_state`, `user_lnk_up`, `user_reset_out`, `user_clk_out`: from the configuration space that the
  root complex writes during enumeration.

Not modelled: the PIPE/transceiver side and link training (the link comes up after reset), the
configuration management and DRP ports, power management, error messages and ECRC, legacy interrupts.
Flow-control credits, link rate and TLP framing overhead are cocotbext-pcie's (its SimPort).
"""

import random
from collections import deque

import cocotb
from cocotb.clock import Clock
from cocotb.queue import Queue
from cocotb.triggers import RisingEdge, Event
from cocotb.utils import get_sim_time

from hostlink.cores.pcie.endpoint import S7_COMPLETION_SPACE

from cocotbext.pcie.core import Device, Endpoint
from cocotbext.pcie.core.caps import MsiCapability
from cocotbext.pcie.core.tlp import Tlp, TlpType

# Constants ----------------------------------------------------------------------------------------

LTSSM_L0 = 0x16

# Payload bits per second per lane after 8b/10b coding, by PCIe generation.
LANE_BITS_PER_S = {1: 2e9, 2: 4e9}


def check_user_interface(link_speed, link_width, data_width, user_clk_freq):
    """pcie_7x's user interface must carry what the link carries (PG054: Gen2 x8 is 128 bits at
    250 MHz, Gen2 x4 128 bits at 125 MHz or 64 bits at 250 MHz)."""
    if link_speed not in LANE_BITS_PER_S:
        raise ValueError(f"pcie_7x link speed must be Gen1 or Gen2 (1 or 2), not {link_speed!r}")
    if link_width not in (1, 2, 4, 8):
        raise ValueError(f"pcie_7x link width must be one of 1, 2, 4, 8, not {link_width!r}")
    if data_width not in (64, 128):
        raise ValueError(f"pcie_7x data width must be 64 or 128, not {data_width!r}")
    link_bits = link_width * LANE_BITS_PER_S[link_speed]
    if data_width * user_clk_freq < link_bits:
        raise ValueError(
            f"pcie_7x at Gen{link_speed} x{link_width} carries {link_bits/1e9:g} Gb/s: "
            f"a {data_width}-bit interface at {user_clk_freq/1e6:g} MHz carries only "
            f"{data_width*user_clk_freq/1e9:g} Gb/s")

_MEM_REQUESTS = {TlpType.MEM_READ, TlpType.MEM_READ_64, TlpType.MEM_WRITE, TlpType.MEM_WRITE_64}
_COMPLETIONS  = {TlpType.CPL, TlpType.CPL_DATA, TlpType.CPL_LOCKED, TlpType.CPL_LOCKED_DATA}

# Function (configuration space) -------------------------------------------------------------------

class S7PcieFunction(Endpoint):
    """Configuration space of the LitePCIe `pcie_7x` configuration: PM, 32-bit MSI, PCIe capability."""
    def __init__(self, *args, vendor_id, device_id, bar0_size, msi_vectors=1, max_payload_size=512, **kwargs):
        super().__init__(*args, **kwargs)
        self.vendor_id = vendor_id
        self.device_id = device_id
        self.class_code = 0x058000  # Memory controller, other: what the Xilinx IP defaults to.
        self.register_capability(self.pm_cap, offset=0x10)
        self.msi_cap = MsiCapability()
        self.msi_cap.msi_64bit_address_capable   = 0
        self.msi_cap.msi_multiple_message_capable = (msi_vectors - 1).bit_length()
        self.register_capability(self.msi_cap, offset=0x12)
        self.register_capability(self.pcie_cap, offset=0x1a)
        self.pcie_cap.max_payload_size_supported = (max_payload_size // 128 - 1).bit_length()
        self.configure_bar(0, bar0_size)

# Device -------------------------------------------------------------------------------------------

class S7PcieDevice(Device):
    """`pcie_7x` user-interface model bound to the top-level ports `<prefix>_<port>` of the DUT.

    `link_speed`/`link_width` are the link the block trains to, `data_width`/`user_clk_freq` its
    user interface (checked to carry the link). `device_id` and the largest payload the block
    supports default to what LitePCIe's pcie_7x configuration announces for that width.
    """
    def __init__(self, dut, prefix="pcie_s7", *,
            link_speed       = 2,
            link_width       = 4,
            data_width       = 128,
            user_clk_freq    = 125e6,
            vendor_id        = 0x10ee,
            device_id        = None,
            bar0_size        = 0x100000,
            max_payload_size = None,
            tx_buffer_tlps   = 4,
            rx_gap_probability    = 0.0,
            tx_backpressure_probability = 0.0,
            rx_straddle      = True,
            completion_space = None,
            completion_headers = None,
            seed             = 0,
            **kwargs):
        super().__init__(**kwargs)
        check_user_interface(link_speed, link_width, data_width, user_clk_freq)
        if device_id is None:
            device_id = 0x7020 + link_width   # What LitePCIe's pcie_7x configuration announces.
        if max_payload_size is None:
            # LitePCIe configures pcie_7x for 256-byte payloads at x8, 512 otherwise.
            max_payload_size = 256 if link_width == 8 else 512
        if completion_space is None:
            completion_space = S7_COMPLETION_SPACE[max_payload_size]
        # `completion_headers`: fewer headers than the block has (tests: a buffer the SoC overfills).
        self.cplh_limit = completion_space["headers"] if completion_headers is None else completion_headers
        self.cpld_limit = completion_space["bytes"] // 16   # CPLD credits: 16 bytes each.
        self.cplh_used  = 0
        self.cpld_used  = 0
        self.rx_cpl_drops = 0       # Completions lost for want of completion space.
        self.most_cplh_used = 0     # High-water mark of the headers held.
        self.dut        = dut
        self.prefix     = prefix
        self.dw         = data_width
        self.dwords     = data_width // 32
        self.rng        = random.Random(seed)
        self.rx_gap_probability          = rx_gap_probability
        self.tx_backpressure_probability = tx_backpressure_probability
        self.rx_straddle = rx_straddle and data_width == 128
        self.tx_buffer_tlps = tx_buffer_tlps

        self.upstream_port.max_link_speed = link_speed
        self.upstream_port.max_link_width = link_width
        self.link_speed = link_speed
        self.link_width = link_width

        self.default_function = lambda: S7PcieFunction(vendor_id=vendor_id, device_id=device_id,
            bar0_size=bar0_size, max_payload_size=max_payload_size)
        self.make_function()
        # TLPs the block makes itself (MSIs, configuration completions) leave behind the user's TLPs it has
        # already taken: one transmit queue, in order (hostlink.cores.pcie.write_fence relies on it).
        self.functions[0].upstream_tx_handler = self._send_own_tlp

        self.rx_queue   = deque()   # TLPs for the user, as lists of DWORDs with their BAR hit.
        self.rx_event   = Event()
        self.tx_queue   = Queue()   # The user's TLPs (at most tx_buffer_tlps) and the block's own.

        self.msi_sent   = 0
        self.msi_holds  = []        # Cycles to hold each of the next MSI requests before granting it.
        self.msi_held   = 0         # MSI requests held so far.
        self.error_reports = {"cfg_err_cpl_timeout": 0, "cfg_err_cpl_unexpect": 0}
        self.rx_tlps    = 0
        self.tx_tlps    = 0
        self.rx_cpl_bytes  = 0      # Completion payload bytes accepted by the user logic.
        self.rx_cpl_last_ns = None  # When the last of them was accepted.

        self.clk = self._port("user_clk_out")
        cocotb.start_soon(Clock(self.clk, 2 * round(0.5e12 / user_clk_freq), unit="ps").start())
        cocotb.start_soon(self._run_reset_and_status())
        cocotb.start_soon(self._run_rx())
        cocotb.start_soon(self._run_tx())
        cocotb.start_soon(self._run_tx_send())
        cocotb.start_soon(self._run_msi())
        cocotb.start_soon(self._run_error_reports())

    def _port(self, name):
        return getattr(self.dut, f"{self.prefix}_{name}")

    # Downstream TLPs (from the root complex) ------------------------------------------------------

    async def upstream_recv(self, tlp):
        if tlp.fmt_type in _MEM_REQUESTS:
            bar = self.functions[0].match_bar(tlp.address)
            if not bar:
                return await super().upstream_recv(tlp)
            self._enqueue_rx(tlp, bar_hit=1 << bar[0])
        elif tlp.fmt_type in _COMPLETIONS:
            self._enqueue_rx(tlp, bar_hit=0)
        else:
            # Configuration requests and the rest are handled inside the hard block.
            await super().upstream_recv(tlp)

    @staticmethod
    def _cpld_credits(tlp):
        return (len(tlp.data) + 15) // 16 if tlp.fmt_type in _COMPLETIONS else 0

    def _enqueue_rx(self, tlp, bar_hit):
        self.log.debug("TLP to the user side: %r", tlp)
        if tlp.fmt_type in _COMPLETIONS:
            credits = self._cpld_credits(tlp)
            if self.cplh_used + 1 > self.cplh_limit or self.cpld_used + credits > self.cpld_limit:
                self.rx_cpl_drops += 1
                self.log.warning("No space in the receive buffer for a completion, dropped: CPLH %d (limit %d), "
                    "CPLD %d (limit %d)", self.cplh_used, self.cplh_limit, self.cpld_used, self.cpld_limit)
                return
            self.cplh_used += 1
            self.cpld_used += credits
            self.most_cplh_used = max(self.most_cplh_used, self.cplh_used)
        raw = bytes(tlp.pack())
        dwords = [int.from_bytes(raw[i:i+4], "big") for i in range(0, len(raw), 4)]
        self.rx_queue.append((tlp, dwords, bar_hit))
        self.rx_event.set()

    # Reset, link and configuration status ---------------------------------------------------------

    async def _run_reset_and_status(self):
        f = self.functions[0]
        user_reset = self._port("user_reset_out")
        lnk_up     = self._port("user_lnk_up")
        user_reset.value = 1
        lnk_up.value     = 0
        for _ in range(16):
            await RisingEdge(self.clk)
        user_reset.value = 0
        lnk_up.value     = 1
        self._set("pl_ltssm_state",   LTSSM_L0)
        self._set("pl_sel_lnk_rate",  1 if self.link_speed >= 2 else 0)
        self._set("pl_sel_lnk_width", {1: 0, 2: 1, 4: 2, 8: 3}[self.link_width])
        while True:
            command  = (int(f.io_space_enable) << 0) | (int(f.memory_space_enable) << 1) | \
                       (int(f.bus_master_enable) << 2) | (int(f.interrupt_disable) << 10)
            dcommand = ((f.pcie_cap.max_payload_size & 7) << 5) | ((f.pcie_cap.max_read_request_size & 7) << 12)
            self._set("cfg_command",             command)
            self._set("cfg_dcommand",            dcommand)
            self._set("cfg_bus_number",          f.bus_num)
            self._set("cfg_device_number",       f.device_num)
            self._set("cfg_function_number",     f.function_num)
            self._set("cfg_interrupt_msienable", int(f.msi_cap.msi_enable))
            # Configuration changes only through TLPs: sampling every few cycles is enough.
            for _ in range(8):
                await RisingEdge(self.clk)

    def _set(self, name, value):
        port = getattr(self.dut, f"{self.prefix}_{name}", None)
        if port is not None:
            port.value = value

    # RX: block -> user (m_axis_rx) ----------------------------------------------------------------

    async def _run_rx(self):
        tvalid = self._port("m_axis_rx_tvalid")
        tready = self._port("m_axis_rx_tready")
        tdata  = self._port("m_axis_rx_tdata")
        tkeep  = self._port("m_axis_rx_tkeep")
        tuser  = self._port("m_axis_rx_tuser")
        tlast  = getattr(self.dut, f"{self.prefix}_m_axis_rx_tlast", None)
        tvalid.value = 0
        current = None   # (tlp, dwords, bar_hit, next index)
        beat    = None
        while True:
            if beat is None:
                if current is None and not self.rx_queue:
                    tvalid.value = 0
                    self.rx_event.clear()
                    await self.rx_event.wait()
                    await RisingEdge(self.clk)
                    continue
                if self.rx_gap_probability and self.rng.random() < self.rx_gap_probability:
                    tvalid.value = 0
                    await RisingEdge(self.clk)
                    continue
                beat, current = self._build_rx_beat(current)
                data, keep, user, last, _ = beat
                tdata.value  = data
                tkeep.value  = keep
                tuser.value  = user
                if tlast is not None:
                    tlast.value = last
                tvalid.value = 1
            await RisingEdge(self.clk)
            # Sampled at the edge, as cocotbext-axi does: the values the flops saw.
            if tready.value:
                for tlp in beat[4]:
                    tlp.release_fc()
                    if tlp.fmt_type in _COMPLETIONS:
                        self.rx_cpl_bytes  += len(tlp.get_data())
                        self.rx_cpl_last_ns = get_sim_time("ns")
                beat = None

    def _build_rx_beat(self, current):
        n = self.dwords
        slots = [0] * n
        keep = 0
        ended = []
        sof = eof = None
        slot = 0
        while slot < n:
            if current is None:
                if not self.rx_queue:
                    break
                # A TLP starts in DWORD 0, or in DWORD 2 of the 128-bit beat where the previous one ended.
                if slot != 0 and not (self.rx_straddle and slot <= 2 and eof is not None):
                    break
                if slot == 1:
                    slot = 2
                tlp, dwords, bar_hit = self.rx_queue.popleft()
                current = [tlp, dwords, bar_hit, 0]
                sof = slot
                self.rx_tlps += 1
            tlp, dwords, bar_hit, index = current
            slots[slot] = dwords[index]
            keep |= 0xf << (4*slot)
            index += 1
            current[3] = index
            if index == len(dwords):
                eof = slot
                current = None
                ended.append(tlp)
                if tlp.fmt_type in _COMPLETIONS:
                    self.cplh_used -= 1
                    self.cpld_used -= self._cpld_credits(tlp)
            slot += 1
            if eof is not None and current is None and slot > 2:
                break
        data = 0
        for i, dw in enumerate(slots):
            data |= dw << (32*i)
        bar_hit = 0
        user = 0
        if self.dw == 128:
            if sof is not None:
                user |= (0b10000 | (sof * 4)) << 10
            if eof is not None:
                user |= (0b10000 | (eof * 4 + 3)) << 17
        last = eof is not None
        if current is not None:
            bar_hit = current[2]
        user |= (bar_hit & 0x7f) << 2
        return (data, keep, user, int(last), ended), current

    # TX: user -> block (s_axis_tx) ----------------------------------------------------------------

    async def _run_tx(self):
        tvalid = self._port("s_axis_tx_tvalid")
        tready = self._port("s_axis_tx_tready")
        tdata  = self._port("s_axis_tx_tdata")
        tkeep  = self._port("s_axis_tx_tkeep")
        tlast  = self._port("s_axis_tx_tlast")
        tready.value = 0
        driven = 0
        dwords = []
        while True:
            ready = self.tx_queue.qsize() < self.tx_buffer_tlps
            if ready and self.tx_backpressure_probability:
                ready = self.rng.random() >= self.tx_backpressure_probability
            if int(ready) != driven:
                driven = int(ready)
                tready.value = driven
            if ready and not dwords and not tvalid.value:
                # Idle: sleep until the user logic offers a TLP (saves a wake-up per cycle).
                await RisingEdge(tvalid)
            await RisingEdge(self.clk)
            if ready and tvalid.value:
                data = int(tdata.value)
                keep = int(tkeep.value)
                for i in range(self.dwords):
                    if (keep >> (4*i)) & 0xf:
                        dwords.append((data >> (32*i)) & 0xffffffff)
                if tlast.value:
                    raw = b"".join(dw.to_bytes(4, "big") for dw in dwords)
                    dwords = []
                    tlp = Tlp.unpack(bytearray(raw))
                    self.log.debug("TLP from the user side: %r", tlp)
                    self.tx_queue.put_nowait(tlp)

    async def _send_own_tlp(self, tlp):
        self.tx_queue.put_nowait(tlp)

    async def _run_tx_send(self):
        while True:
            tlp = await self.tx_queue.get()
            self.tx_tlps += 1
            await self.upstream_send(tlp)

    # MSI (cfg_interrupt) --------------------------------------------------------------------------

    def hold_msis(self, count, cycles):
        """Keep each of the next `count` MSI requests waiting `cycles` user-clock cycles before the grant."""
        self.msi_holds += [cycles]*count

    async def _run_msi(self):
        req = self._port("cfg_interrupt")
        rdy = self._port("cfg_interrupt_rdy")
        di  = getattr(self.dut, f"{self.prefix}_cfg_interrupt_di", None)
        rdy.value = 0
        f = self.functions[0]
        while True:
            if not req.value:
                await RisingEdge(req)
            if self.msi_holds:
                self.msi_held += 1
                for _ in range(self.msi_holds.pop(0)):
                    await RisingEdge(self.clk)
            await RisingEdge(self.clk)
            fire = bool(req.value) and f.msi_cap.msi_enable
            number = int(di.value) if di is not None else 0
            rdy.value = int(fire)
            if fire:
                vectors = 2**min(f.msi_cap.msi_multiple_message_enable, f.msi_cap.msi_multiple_message_capable)
                self.msi_sent += 1
                cocotb.start_soon(f.msi_cap.issue_msi_interrupt(number % vectors))
                await RisingEdge(self.clk)
                rdy.value = 0


    # Error reports (cfg_err_*) ----------------------------------------------------------------------

    async def _run_error_reports(self):
        # One wake-up per report, not per cycle: the reports are one-cycle pulses.
        async def count(name, port):
            while True:
                await RisingEdge(port)
                self.error_reports[name] += 1
        for name in self.error_reports:
            port = getattr(self.dut, f"{self.prefix}_{name}", None)
            if port is not None:
                cocotb.start_soon(count(name, port))
