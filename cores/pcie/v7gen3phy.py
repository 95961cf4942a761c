# This file is part of hostlink.
# Copyright (c) 2026 hostlink developers
# SPDX-License-Identifier: BSD-2-Clause

"""LitePCIe PHY for the Virtex-7 Gen3 Integrated Block for PCI Express (`pcie3_7x`, Xilinx PG023).

The XC7VX690T (VC709) has only this Gen3 block; LitePCIe's S7PCIEPHY wraps the Gen2 `pcie_7x`. The
`pcie3_7x` user interface is the UltraScale one (four AXI4-Stream interfaces: requester request RQ,
requester completion RC, completer request CQ, completer completion CC, with descriptors instead of TLP
headers), so this PHY reuses LitePCIe's UltraScale adapters (`litepcie/phy/xilinx_us/*_adapt_*.v`, which
translate descriptors to and from TLP headers) and offers the same interface as LitePCIe's USPCIEPHY:
`req_sink`/`cmp_sink` towards the host, `req_source`/`cmp_source` from it, `msi`, `id`, `bar0_mask`,
`max_request_size`, `max_payload_size`.

What differs from the UltraScale block and is handled here:

- the PIPE clocks: the 7-series Gen3 block is generated with its PIPE clock module outside the core, so
  the user design derives them from the block's `pipe_txoutclk_out` (an MMCM: 125 MHz PIPE clock at Gen1/2,
  250 MHz at Gen3 selected glitch-free by `pipe_pclk_sel_out`, 125 MHz DRP clock, the core clock userclk1
  and the user clock userclk2);
- MSI: `cfg_interrupt_msi_int` is a 32-bit one-hot pulse per vector, answered by `..._msi_sent` or
  `..._msi_fail`; LitePCIe's MSI stream becomes one pulse per message, re-sent on failure;
- configuration status: widths of the 7-series block (2 functions, not 4), no `pcie_rq_tag_av`;
- every bit of the 22-bit `m_axis_cq_tready` / `m_axis_rc_tready` is driven with the same value (PG023);
- read requests up to 4096 bytes: `max_request_size` follows the host's MRRS up to `max_request_limit`, and
  a 1024-DW read gets the descriptor dword count LitePCIe's RQ adapter cannot express.
"""

import os

from migen import *
from migen.genlib.cdc import MultiReg

from litex.gen import *

from litex.soc.interconnect import stream
from litex.soc.interconnect.csr import *
from litex.soc.cores.clock import S7MMCM

from litepcie.common import phy_layout, msi_layout, get_bar_mask, completion_layout
from litepcie.phy.common import PHYTXDatapath, PHYRXDatapath

import litepcie.phy

from hostlink.cores.pcie.axis import AXIS_SIGNALS, axis_ports
from hostlink.cores.pcie.config import check_choice, speed_grade
from hostlink.cores.pcie.rc_straddle import RCStraddleDepacketizer
from hostlink.cores.pcie.tlp import TLPHeader4DWExpander

# Constants ----------------------------------------------------------------------------------------

LANES       = [1, 2, 4, 8]
DATA_WIDTHS = [64, 128, 256]
SPEEDS      = {"gen1": "2.5_GT/s", "gen2": "5.0_GT/s", "gen3": "8.0_GT/s"}

# (speed, lanes) -> data widths at a 250 MHz user clock, the combinations PG023 offers at 250 MHz.
_WIDTHS_AT_250MHZ = {
    ("gen1", 1): 64, ("gen1", 2): 64, ("gen1", 4): 64,  ("gen1", 8): 64,
    ("gen2", 1): 64, ("gen2", 2): 64, ("gen2", 4): 64,  ("gen2", 8): 128,
    ("gen3", 1): 64, ("gen3", 2): 64, ("gen3", 4): 128, ("gen3", 8): 256,
}

RQ_MEMORY_WRITE = 0b0001    # Request type of a memory write in an RQ descriptor (DW2 bits 14:11).
WRITE_SEQ_NUM   = 1         # Sequence number the writes carry on RQ; reads carry 0.

# The LitePCIe Linux driver matches the UltraScale Gen3 device IDs (0x8030 + lanes): the user interface is
# the same, so the driver is too.
XILINX_VENDOR_ID = 0x10ee

def device_id(nlanes):
    return 0x8030 + nlanes

US_ADAPTERS = os.path.join(os.path.dirname(litepcie.phy.__file__), "xilinx_us")

# Extended Tag watch -------------------------------------------------------------------------------

class ExtendedTagWatch(LiteXModule):
    """Whether the host has set Extended Tag Field Enable (Device Control bit 8), read from the block's own
    configuration space through its configuration management port (`cfg_mgmt_*`, PG023): the block reports
    it nowhere else. The PCI Express capability is found by walking the capability list; Device Control is
    read again every `period` cycles, since the host writes it after the link is up.
    """
    def __init__(self, period=4096):
        self.addr    = addr    = Signal(19)  # o (DW address, function 0)
        self.read    = read    = Signal()    # o
        self.data    = data    = Signal(32)  # i
        self.done    = done    = Signal()    # i
        self.enabled = enabled = Signal()    # o

        # # #

        PCIE_CAP_ID  = 0x10
        CAP_POINTER  = 0x34 >> 2
        ptr    = Signal(8)
        hops   = Signal(6)                   # A broken list must not hold the walk forever.
        devctl = Signal(10)                  # DW address of Device Control, once found.
        timer  = Signal(max=period + 1)
        self.fsm = fsm = FSM(reset_state="WAIT")
        fsm.act("WAIT",
            NextValue(timer, timer + 1),
            If(timer == period,
                NextValue(timer, 0),
                If(devctl != 0,
                    NextState("READ_DEVCTL"),
                ).Else(
                    NextState("READ_POINTER"),
                ),
            ),
        )
        fsm.act("READ_POINTER",
            addr.eq(CAP_POINTER),
            read.eq(1),
            If(done,
                NextValue(ptr, data[2:8] << 2),
                NextValue(hops, 0),
                NextState("READ_CAP"),
            ),
        )
        fsm.act("READ_CAP",
            If(ptr == 0,
                NextState("WAIT"),
            ).Else(
                addr.eq(ptr[2:]),
                read.eq(1),
                If(done,
                    NextValue(hops, hops + 1),
                    If(data[0:8] == PCIE_CAP_ID,
                        NextValue(devctl, ptr[2:] + 2),
                        NextState("READ_DEVCTL"),
                    ).Elif(hops == 47,
                        NextState("WAIT"),
                    ).Else(
                        NextValue(ptr, data[10:16] << 2),
                    ),
                ),
            ),
        )
        fsm.act("READ_DEVCTL",
            addr.eq(devctl),
            read.eq(1),
            If(done,
                NextValue(enabled, data[8]),
                NextState("WAIT"),
            ),
        )

# V7Gen3PCIEPHY ------------------------------------------------------------------------------------

class RQWriteHandoff(LiteXModule):
    """Where a memory write on `pcie3_7x`'s requester interface (RQ) is taken by the block: `write_taken`
    pulses once per write (in the RQ clock domain; hostlink.cores.pcie.write_fence counts them).

    At 128 and 256 bits the whole descriptor is in a request's first beat: a write leaves with sequence
    number WRITE_SEQ_NUM in tuser[27:24] (reads with 0), and the block gives it back on `pcie_rq_seq_num` once
    the TLP is so far down its transmit pipeline that nothing it sends later can pass it (PG023). At 64 bits
    the request type is in the second beat, too late for the first beat's sequence number: a write is taken
    with its last beat accepted."""
    def __init__(self, data_width):
        self.tdata       = Signal(data_width)   # i (RQ beat, as it enters the block)
        self.tuser_in    = Signal(60)           # i (the adapter's tuser)
        self.tvalid      = Signal()             # i
        self.tready      = Signal()             # i
        self.tlast       = Signal()             # i
        self.seq_num     = Signal(4)            # i (pcie_rq_seq_num)
        self.seq_num_vld = Signal()             # i (pcie_rq_seq_num_vld)
        self.tuser_out   = Signal(60)           # o (tuser into the block)
        self.write_taken = Signal()             # o (pulse)
        self.first       = Signal(reset=1)      # o (the beat on RQ is a request's first)

        # # #

        accept = Signal()
        first  = self.first
        self.comb += [
            accept.eq(self.tvalid & self.tready),
            self.tuser_out.eq(self.tuser_in),
        ]
        self.sync += If(accept, first.eq(self.tlast))
        if data_width >= 128:
            self.comb += [
                If(first & (self.tdata[75:79] == RQ_MEMORY_WRITE),
                    self.tuser_out[24:28].eq(WRITE_SEQ_NUM)),
                self.write_taken.eq(self.seq_num_vld & (self.seq_num == WRITE_SEQ_NUM)),
            ]
        else:
            second = Signal()   # The beat accepted before this one was a request's first.
            write  = Signal()   # The request in progress is a write (from its second beat on).
            self.sync += If(accept,
                second.eq(first & ~self.tlast),
                If(second, write.eq(self.tdata[11:15] == RQ_MEMORY_WRITE)),
            )
            self.comb += self.write_taken.eq(accept & self.tlast &
                Mux(second, self.tdata[11:15] == RQ_MEMORY_WRITE, write))


class V7Gen3PCIEPHY(LiteXModule):
    """LitePCIe PHY on the Virtex-7 `pcie3_7x` block (the module docstring says what it handles).

    Parameters:
        platform, pads    the board's platform and its PCIe pads (`clk_p`/`clk_n`, `tx_p`/`tx_n`, `rx_p`/`rx_n`,
                          optional `rst_n`); the lane count is the pads' width (1, 2, 4 or 8).
        speed             "gen1", "gen2" or "gen3": the block's (and so the link's highest) rate.
        data_width        width of the streams on the DMA side (64, 128 or 256 bits).
        cd                clock domain of those streams; "pcie" is the block's own 250 MHz user clock (no
                          clock crossing), anything else crosses to it.
        pcie_data_width   width of the block's user interface; by default the one PG023 gives for `speed`
                          and the lane count at 250 MHz (256 bits at Gen3 x8).
        bar0_size         BAR0 size in bytes (a power of two, 1 MiB or more).
        msi_vectors       MSI vectors the block offers (1 to 32, a power of two).
        max_read_bytes    largest read request issued (128 to 4096 bytes), whatever larger MRRS the host allows.
        rc_straddle       the block may put two completions in one RC beat; they then leave depacketized on
                          `completion_source` (256 bits at cd "pcie" only).
        extended_tags     advertise Extended Tag and watch whether the host enabled it (`extended_tags`).
        with_csr          add the link status CSRs (`add_csr`).

    Interface (LitePCIe's USPCIEPHY's, plus hostlink's additions):
        req_sink, cmp_sink        requests and completions to the host (TLP streams, `phy_layout`).
        req_source, cmp_source    requests and completions from the host; with `rc_straddle`,
                                  `completion_source` (`completion_layout`) instead of `cmp_source`.
        msi                       MSI requests (`msi_layout`: the vector in `dat`).
        err_uncor, msi_failed     pulses: an uncorrectable error to report; an MSI the block refused (re-sent).
        write_taken               a pulse per memory write the block has taken (`write_taken_domain`).
        extended_tags             the host enabled Extended Tag (cd's domain).
        link_up, link_rate, link_width, ltssm, phy_down, phy_status, msi_enable, bus_master_enable,
        max_request_size, max_payload_size    status (sys domain; sizes in bytes).

    Structure, in the order the constructor builds it: clocking (`_add_clocking`: the reference clock and
    the PIPE clocks), the clock-crossing and width-converting datapaths (`_add_datapaths`), LitePCIe's
    UltraScale adapters between TLPs and the block's descriptors (`_add_adapters`), hostlink's fixes on the
    requester side (`_add_requester_fixes`: write hand-off, 4096-byte read dword count) and on completions
    (`_add_completion_error_rewrite`), MSIs (`_add_msi`), configuration status (`_add_config_status`), the
    Extended Tag watch (`_add_extended_tag_watch`), then the block's port map (`pcie_phy_params`, merged in
    the constructor from the `_*_ports` functions after the class: link and PIPE clocks, the four AXI4-Stream
    interfaces, configuration status, management, unused ports and control, interrupts; the block is
    instantiated in `do_finalize`).
    """
    endianness    = "little"
    qword_aligned = False

    def __init__(self, platform, pads, speed="gen3", data_width=256, cd="sys",
        pcie_data_width = None,
        bar0_size       = 0x100000,
        msi_vectors     = 1,
        max_read_bytes  = 512,
        rc_straddle     = False,
        extended_tags   = False,
        with_csr        = True,
    ):
        nlanes          = len(pads.tx_p)
        pcie_data_width = self._check_parameters(speed, nlanes, data_width, pcie_data_width, cd, bar0_size,
            msi_vectors, max_read_bytes, rc_straddle)
        self._add_interface(platform, speed, nlanes, data_width, pcie_data_width, cd, bar0_size, msi_vectors,
            max_read_bytes, rc_straddle, extended_tags)

        # # #

        # One method per concern. Migen names a signal after the variables it passes through on its way up
        # the call stack, so that the generated Verilog keeps the names it had when this was one block: each
        # method's results are unpacked into names here (never stored whole). The block's port map is merged
        # here from parts built by functions (`_*_ports`, after the class), not methods: its unconnected
        # outputs (`Open`) have no name of their own and take a level of name from each method they are
        # created under, so building them in a method would rename every one of them.
        self.cd_pcie = ClockDomain()
        pcie_refclk, pcie_rst_n, pipe = self._add_clocking(platform, pads, nlanes)
        s_axis_cc, s_axis_rq, m_axis_cq, m_axis_rc, cfg_msi = self._add_datapaths(data_width, pcie_data_width,
            cd, rc_straddle)
        a, rx = self._add_adapters(pcie_data_width, rc_straddle, s_axis_rq, m_axis_cq, s_axis_cc, m_axis_rc)
        rq_tdata, rq_tuser, rq_seq_num, rq_seq_num_vld = self._add_requester_fixes(a, cd, pcie_data_width)
        if not rc_straddle:
            self._add_completion_error_rewrite(a, m_axis_rc, rx)
        self.comb += [
            m_axis_cq.first.eq(rx["cq_tuser"][14]),
            m_axis_cq.last.eq(rx["cq_tlast"]),
        ]
        msi_enable, msi_mmenable, msi_int, msi_sent, msi_fail = self._add_msi(cfg_msi)
        cfg_max_payload, cfg_max_read_req, cfg_function_status_sys, msi_enable_sys = self._add_config_status()
        (cfg_mgmt_addr, cfg_mgmt_write, cfg_mgmt_write_data, cfg_mgmt_byte_enable, cfg_mgmt_read, cfg_mgmt_read_data,
            cfg_mgmt_read_write_done) = self._add_extended_tag_watch(extended_tags, cd)

        # Hard IP ----------------------------------------------------------------------------------
        self.pcie_phy_params = dict(
            **_pcie_ports(self, pads, pcie_refclk, pcie_rst_n, pipe, nlanes),
            **_axis_ports(a, rq_tdata, rq_tuser, rq_seq_num, rq_seq_num_vld),
            **_config_status_ports(self, cfg_max_payload, cfg_max_read_req, cfg_function_status_sys),
            **_config_mgmt_ports(cfg_mgmt_addr, cfg_mgmt_write, cfg_mgmt_write_data, cfg_mgmt_byte_enable,
                cfg_mgmt_read, cfg_mgmt_read_data, cfg_mgmt_read_write_done),
            **_config_unused_ports(),
            **_config_control_ports(self),
            **_interrupt_ports(msi_enable, msi_mmenable, msi_int, msi_sent, msi_fail),
        )
        self.specials += MultiReg(msi_enable, msi_enable_sys, "sys")

        if with_csr:
            self.add_csr()

    # Parameters -----------------------------------------------------------------------------------
    @staticmethod
    def _check_parameters(speed, nlanes, data_width, pcie_data_width, cd, bar0_size, msi_vectors, max_read_bytes,
            rc_straddle):
        """Refuses an impossible configuration; returns the block's data width."""
        if pcie_data_width is None:
            pcie_data_width = _WIDTHS_AT_250MHZ.get((speed, nlanes), data_width)
        check_choice("PCIe speed", speed, list(SPEEDS))
        check_choice("PCIe lane count", nlanes, LANES)
        check_choice("PCIe data width (bits)", data_width, DATA_WIDTHS)
        check_choice("PCIe hard block data width (bits)", pcie_data_width, DATA_WIDTHS)
        if pcie_data_width != _WIDTHS_AT_250MHZ[(speed, nlanes)]:
            raise ValueError(f"pcie3_7x at {speed} x{nlanes} and a 250 MHz user clock has a "
                f"{_WIDTHS_AT_250MHZ[(speed, nlanes)]}-bit interface, not {pcie_data_width!r}")
        if not isinstance(bar0_size, int) or bar0_size < 0x100000 or bar0_size & (bar0_size - 1):
            raise ValueError(f"BAR0 size must be a power of two of at least 1 MiB, not {bar0_size!r}")
        check_choice("MSI vector count", msi_vectors, [1, 2, 4, 8, 16, 32])
        # The dword count fix below needs the whole RQ descriptor in the first beat: 128 and 256 bits.
        read_limit = 4096 if pcie_data_width >= 128 else 2048
        if max_read_bytes not in [128, 256, 512, 1024, 2048, 4096] or max_read_bytes > read_limit:
            raise ValueError(f"largest read request must be a power of two from 128 to {read_limit} bytes "
                f"at {pcie_data_width} bits, not {max_read_bytes!r}")

        if rc_straddle and (pcie_data_width, data_width, cd) != (256, 256, "pcie"):
            raise ValueError("RC straddling needs the 256-bit interface at the block's clock (data_width=256, "
                f"cd='pcie'), not {pcie_data_width}/{data_width} bits in {cd!r}")
        return pcie_data_width

    def _add_interface(self, platform, speed, nlanes, data_width, pcie_data_width, cd, bar0_size, msi_vectors,
            max_read_bytes, rc_straddle, extended_tags):
        """The PHY's streams, status signals and parameters (the class docstring lists them)."""
        # Streams ----------------------------------------------------------------------------------
        self.req_sink   = stream.Endpoint(phy_layout(data_width))  # i (FPGA -> host requests)
        self.cmp_sink   = stream.Endpoint(phy_layout(data_width))  # i (FPGA -> host completions)
        self.req_source = stream.Endpoint(phy_layout(data_width))  # o (host -> FPGA requests)
        self.cmp_source = stream.Endpoint(phy_layout(data_width))  # o (host -> FPGA completions)
        # With RC straddling the completions leave already depacketized (`completion_layout`, header fields
        # beside the data), and `cmp_source` stays idle: PCIeEndpoint takes this stream instead.
        self.completion_source = stream.Endpoint(completion_layout(data_width)) if rc_straddle else None
        self.msi        = stream.Endpoint(msi_layout())            # i (dat: MSI vector)

        # Faults (pcie domain) ---------------------------------------------------------------------
        self.err_uncor  = Signal()   # i (pulse: an uncorrectable error the user logic saw, reported to the host)
        self.msi_failed = Signal()   # o (pulse: the block refused an MSI, which is sent again)

        # Status (sys domain) ----------------------------------------------------------------------
        self.link_up           = Signal()    # o
        self.link_rate         = Signal(3)   # o 0b001: 2.5, 0b010: 5.0, 0b100: 8.0 GT/s
        self.link_width        = Signal(4)   # o 0b0001 .. 0b1000: x1 .. x8
        self.ltssm             = Signal(6)   # o
        self.phy_down          = Signal()    # o
        self.phy_status        = Signal(2)   # o
        self.msi_enable        = Signal()    # o
        self.bus_master_enable = Signal()    # o

        # Parameters/Locals ------------------------------------------------------------------------
        self.platform         = platform
        self.speed            = speed
        self.nlanes           = nlanes
        self.data_width       = data_width
        self.pcie_data_width  = pcie_data_width
        self.rc_straddle      = rc_straddle
        # Extended Tag: the block advertises it, and `extended_tags` (pcie domain) says whether the host
        # enabled it, so that the SoC uses tags 32-63 only then (PCIe 7.5.3.4).
        self.extended_tags_supported = extended_tags
        self.extended_tags    = Signal()
        self.bar0_size        = bar0_size
        self.bar0_mask        = get_bar_mask(bar0_size)
        self.msi_vectors      = msi_vectors
        self.clock_domain     = cd          # Domain of the streams on the DMA side ("pcie": the block's own).
        self.id               = Signal(16)
        self.fills_in_requester_id = True   # And drops completions for other requesters (PG023).
        # The block times out reads itself (within the host's Completion Timeout range, 50 us to 50 ms by
        # default) and ends them with an error descriptor (below): the SoC's timer is only a backstop,
        # which must not retire a tag the block still holds.
        self.completion_timeout_s  = 100e-3
        self.max_request_size = Signal(16)
        # Largest read request issued, whatever the host allows. 512 by default: 32 tags of 512 bytes already
        # cover the completion space below (and without straddling its headers bound the reads in flight to
        # 64 x 64 bytes whatever their size). Up to 4096 bytes with the dword count fix below.
        self.max_request_limit = max_read_bytes
        # Completion space of the block's receive buffer (64 headers, 15,872 bytes in PG156's table for the
        # UltraScale block, which shares this interface); an endpoint advertises infinite completion credits,
        # so the user logic must keep its reads in flight within it.
        # - Bytes: the reads in flight never exceed 15,872 bytes.
        # - Headers: a host may split every read on each 64-byte read-completion boundary. Without
        #   straddling, a 64-byte completion takes 3 RC beats (12 ns) and the Gen3 x8 link delivers one every
        #   10.7 ns, so the block's queue grows and each read must reserve a header per 64-byte block it spans
        #   (the guides' RCB_FC method; 64 headers: 4 KiB in flight). With RC straddling, every completion of
        #   whole 64-byte blocks leaves the block in fewer cycles than the link takes to deliver it (a 64-byte
        #   one in 2.5 beats, 10 ns) and the depacketizer takes a beat every cycle, so the block holds no
        #   queue of completions and reserving headers is not needed: the bytes bound the reads in flight
        #   (doc/read_latency.md gives the arithmetic and what the host-profile matrix measures).
        self.completion_space_bytes   = 15872
        self.completion_space_headers = None if rc_straddle else 64
        self.max_payload_size = Signal(16)
        self.config           = {}

    # Clocking / Reset -----------------------------------------------------------------------------
    def _add_clocking(self, platform, pads, nlanes):
        """The 100 MHz reference clock's buffer, the block's reset, the PIPE clocks (_PIPEClocking)."""
        pcie_refclk = Signal()
        pcie_rst_n  = Signal(reset=1)
        if hasattr(pads, "rst_n"):
            self.comb += pcie_rst_n.eq(pads.rst_n)
        self.specials += Instance("IBUFDS_GTE2",
            i_CEB = 0,
            i_I   = pads.clk_p,
            i_IB  = pads.clk_n,
            o_O   = pcie_refclk,
        )
        platform.add_period_constraint(pads.clk_p, 1e9/100e6)
        self.pipe = pipe = _PIPEClocking(nlanes, speed_grade(platform.device))
        return pcie_refclk, pcie_rst_n, pipe

    # Datapaths ------------------------------------------------------------------------------------
    def _add_datapaths(self, data_width, pcie_data_width, cd, rc_straddle):
        """Clock crossing and width conversion between the DMA side and the block's user interface; returns
        the block-side streams (CC and RQ in, CQ and RC out: RC is None when straddled) and the MSI stream in
        the block's domain."""
        m_axis_rc = None
        # TX (FPGA -> host) CDC / data width conversion --------------------------------------------
        self.cc_datapath = PHYTXDatapath(data_width, pcie_data_width, cd)
        self.rq_datapath = PHYTXDatapath(data_width, pcie_data_width, cd)
        self.comb += [
            self.cmp_sink.connect(self.cc_datapath.sink),
            self.req_sink.connect(self.rq_datapath.sink),
        ]
        s_axis_cc = self.cc_datapath.source
        s_axis_rq = self.rq_datapath.source
        if pcie_data_width == 256:
            # LitePCIe's 256-bit RQ adapter only takes 4-DW headers; LitePCIe sends 3-DW ones for host
            # addresses below 4 GiB (it forces 4 DWs only on UltraScale parts).
            self.rq_expander = ClockDomainsRenamer("pcie")(TLPHeader4DWExpander(pcie_data_width))
            self.comb += s_axis_rq.connect(self.rq_expander.sink)
            s_axis_rq = self.rq_expander.source

        # RX (host -> FPGA) CDC / data width conversion --------------------------------------------
        self.cq_datapath = PHYRXDatapath(data_width, pcie_data_width, cd)
        self.comb += self.cq_datapath.source.connect(self.req_source)
        m_axis_cq = self.cq_datapath.sink
        if not rc_straddle:
            # Straddled completions bypass it: they leave depacketized, in the block's clock (below).
            self.rc_datapath = PHYRXDatapath(data_width, pcie_data_width, cd)
            self.comb += self.rc_datapath.source.connect(self.cmp_source)
            m_axis_rc = self.rc_datapath.sink

        # MSI CDC (FPGA -> host) -------------------------------------------------------------------
        if cd == "pcie":
            cfg_msi = self.msi
        else:
            self.msi_cdc = msi_cdc = stream.ClockDomainCrossing(msi_layout(),
                cd_from = cd, cd_to = "pcie", with_common_rst = True)
            self.comb += self.msi.connect(msi_cdc.sink)
            cfg_msi = msi_cdc.source
        return s_axis_cc, s_axis_rq, m_axis_cq, m_axis_rc, cfg_msi

    # Adapters (TLP <-> descriptors) ---------------------------------------------------------------
    def _add_adapters(self, pcie_data_width, rc_straddle, s_axis_rq, m_axis_cq, s_axis_cc, m_axis_rc):
        """LitePCIe's UltraScale adapters (or, straddled, hostlink's RC depacketizer) between the TLP
        streams and the block's descriptor interfaces. Returns the block-side signals (`a`, by port name) and
        the adapter outputs the fixes below rework (`rx`)."""
        dw, kw = pcie_data_width, pcie_data_width//32
        a = {name: Signal(width, name=f"{name}_a") for name, width in [
            ("s_axis_rq_tdata", dw), ("s_axis_rq_tkeep", kw), ("s_axis_rq_tlast", 1),
            ("s_axis_rq_tready", 1), ("s_axis_rq_tuser", 60), ("s_axis_rq_tvalid", 1),
            ("m_axis_rc_tdata", dw), ("m_axis_rc_tkeep", kw), ("m_axis_rc_tlast", 1),
            ("m_axis_rc_tready", 4), ("m_axis_rc_tuser", 75), ("m_axis_rc_tvalid", 1),
            ("m_axis_cq_tdata", dw), ("m_axis_cq_tkeep", kw), ("m_axis_cq_tlast", 1),
            ("m_axis_cq_tready", 4), ("m_axis_cq_tuser", 85), ("m_axis_cq_tvalid", 1),
            ("s_axis_cc_tdata", dw), ("s_axis_cc_tkeep", kw), ("s_axis_cc_tlast", 1),
            ("s_axis_cc_tready", 1), ("s_axis_cc_tuser", 33), ("s_axis_cc_tvalid", 1),
        ]}
        user_clk, user_reset = ClockSignal("pcie"), ResetSignal("pcie")
        m_axis_rc_tuser = Signal(22)
        rc_tdata        = Signal(dw)
        m_axis_cq_tuser = Signal(22)
        m_axis_rc_tlast = Signal()
        m_axis_cq_tlast = Signal()
        def adapter(interface, tlp, block_side=None, **tlp_side):
            """LitePCIe's adapter of the block's `interface`: the TLP stream `tlp` (its signals, but for `tlp_side`,
            by AXI4-Stream signal name) on one side, the block's (`a`, but for `block_side`) on the other, where
            the adapter's ports have the block's names (`<interface>_<signal>_a`) and so the other direction."""
            tlp_side = {**dict(tdata=tlp.dat, tkeep=tlp.be, tlast=tlp.last, tready=tlp.ready, tvalid=tlp.valid),
                **tlp_side}
            return Instance(f"{interface}_adapt", p_DATA_WIDTH=dw, p_KEEP_WIDTH=dw//8,
                i_user_clk=user_clk, i_user_reset=user_reset,
                **axis_ports(interface, **tlp_side),
                **axis_ports(interface, sink=not interface.startswith("s_"), suffix="_a",
                    **_adapter_side(a, interface, **(block_side or {}))))
        self.specials += [
            adapter("s_axis_rq", s_axis_rq, tuser=0),
            adapter("m_axis_cq", m_axis_cq, tlast=m_axis_cq_tlast, tready=Replicate(m_axis_cq.ready, 4),
                tuser=m_axis_cq_tuser),
            adapter("s_axis_cc", s_axis_cc, tuser=0),
        ]
        if rc_straddle:
            # Straddled RC: hostlink's depacketizer reads the descriptors itself (rc_straddle.py).
            self.rc_depacketizer = rc_depacketizer = ClockDomainsRenamer("pcie")(RCStraddleDepacketizer())
            self.comb += [
                rc_depacketizer.tdata.eq(a["m_axis_rc_tdata"]),
                rc_depacketizer.tkeep.eq(a["m_axis_rc_tkeep"]),
                rc_depacketizer.tuser.eq(a["m_axis_rc_tuser"]),
                rc_depacketizer.tvalid.eq(a["m_axis_rc_tvalid"]),
                a["m_axis_rc_tready"].eq(Replicate(rc_depacketizer.tready, 4)),
                rc_depacketizer.source.connect(self.completion_source),
            ]
        else:
            # The 7-series RC tuser is 75 bits, the adapter's port 85 (UltraScale+ width).
            self.specials += adapter("m_axis_rc", m_axis_rc,
                block_side = dict(tuser=Cat(a["m_axis_rc_tuser"], Constant(0, 10))),
                tdata      = rc_tdata,
                tlast      = m_axis_rc_tlast,
                tready     = Replicate(m_axis_rc.ready, 4),
                tuser      = m_axis_rc_tuser,
            )
        return a, dict(rc_tdata=rc_tdata, rc_tuser=m_axis_rc_tuser, rc_tlast=m_axis_rc_tlast,
            cq_tuser=m_axis_cq_tuser, cq_tlast=m_axis_cq_tlast)

    # Requester fixes ------------------------------------------------------------------------------
    def _add_requester_fixes(self, a, cd, dw):
        """The write hand-off (`write_taken`) and the 4096-byte read's dword count, on RQ as it enters the
        block; returns the RQ signals the block takes."""
        # block has taken (RQWriteHandoff).
        self.write_taken_domain = "sys" if cd == "pcie" else "pcie"   # cd "pcie": sys runs on its clock.
        rq_seq_num     = Signal(4)
        rq_seq_num_vld = Signal()
        self.rq_handoff = handoff = ClockDomainsRenamer("pcie")(RQWriteHandoff(dw))
        self.comb += [
            handoff.tdata.eq(a["s_axis_rq_tdata"]),
            handoff.tuser_in.eq(a["s_axis_rq_tuser"]),
            handoff.tvalid.eq(a["s_axis_rq_tvalid"]),
            handoff.tready.eq(a["s_axis_rq_tready"]),
            handoff.tlast.eq(a["s_axis_rq_tlast"]),
            handoff.seq_num.eq(rq_seq_num),
            handoff.seq_num_vld.eq(rq_seq_num_vld),
        ]
        rq_tuser         = handoff.tuser_out
        self.write_taken = handoff.write_taken

        # LitePCIe's RQ adapter copies the TLP's 10-bit length into the descriptor's 11-bit dword count, so a
        # 4096-byte read (length 0, meaning 1024 DWs) would leave as a 0-DW request: set the count's bit 10.
        # The descriptor's first beat holds the whole dword count (bits 74:64) at 128 and 256 bits.
        # At 64 bits reads stop at 2048 bytes (max_request_limit) and need no fix.
        rq_tdata  = Signal(dw)
        self.comb += rq_tdata.eq(a["s_axis_rq_tdata"])
        if dw >= 128:
            self.comb += If(handoff.first & (a["s_axis_rq_tdata"][64:75] == 0), rq_tdata[74].eq(1))
        return rq_tdata, rq_tuser, rq_seq_num, rq_seq_num_vld

    # Completion errors ----------------------------------------------------------------------------
    def _add_completion_error_rewrite(self, a, m_axis_rc, rx):
        rc_tdata, m_axis_rc_tuser, m_axis_rc_tlast = rx["rc_tdata"], rx["rc_tuser"], rx["rc_tlast"]
        # LitePCIe's RC adapter writes EP = 0 into the TLP header it rebuilds and passes the descriptor's
        # Poisoned bit on tuser[1] only: put it back into the header's EP bit (DW0 bit 14), so that the
        # completion depacketizer treats a poisoned completion as an error.
        # Likewise the descriptor's error code (DW0 bits 15:12), which the adapter drops: any code but
        # 0000 (normal) and 0001 (poisoned) ends the request, among them 1001, the block's own completion
        # timeout (PG023), whose descriptor carries no status: the rebuilt header then gets Completer Abort
        # (status 100), so that the read ends with `err`.
        rc_first = Signal(reset=1)
        rc_error = Signal()
        self.sync.pcie += If(m_axis_rc.valid & m_axis_rc.ready, rc_first.eq(m_axis_rc_tlast))
        self.comb += [
            rc_error.eq(a["m_axis_rc_tdata"][12:16] > 1),
            m_axis_rc.dat.eq(rc_tdata),
            If(rc_first & m_axis_rc_tuser[1], m_axis_rc.dat[14].eq(1)),
            If(rc_first & rc_error & (rc_tdata[32 + 13:32 + 16] == 0), m_axis_rc.dat[32 + 15].eq(1)),
        ]
        self.comb += [
            m_axis_rc.first.eq(m_axis_rc_tuser[14]),
            m_axis_rc.last.eq(m_axis_rc_tlast),
        ]

    # MSI (pcie domain) ----------------------------------------------------------------------------
    def _add_msi(self, cfg_msi):
        """LitePCIe's MSI stream as the block's one-hot `cfg_interrupt_msi_int` pulses, re-sent when refused."""
        msi_enable   = Signal(2)
        msi_mmenable = Signal(6)
        msi_sent     = Signal()
        msi_fail     = Signal()
        msi_int      = Signal(32)
        # A function may only use the vectors the host granted (Multiple Message Enable): the others
        # alias to the highest granted one.
        granted  = Signal(6)
        vector   = Signal(5)
        self.comb += [
            granted.eq(1 << msi_mmenable[:3]),
            vector.eq(Mux(cfg_msi.dat < granted, cfg_msi.dat, granted - 1)),
        ]
        # The MSI is taken from the stream when it is issued, not when the block reports it sent: LitePCIe's
        # MSI core merges the events of its sources into the MSI it offers until it is taken, so events that
        # came while the block was sending one must make the next one (else an interrupt-driven driver could
        # miss them). A refused MSI is issued again from `issued`.
        issued = Signal(5)
        self.msi_fsm = msi_fsm = ClockDomainsRenamer("pcie")(FSM(reset_state="IDLE"))
        msi_fsm.act("IDLE",
            If(cfg_msi.valid,
                cfg_msi.ready.eq(1),
                If(msi_enable[0],
                    msi_int.eq(1 << vector),
                    NextValue(issued, vector),
                    NextState("WAIT"),
                )
                # MSI off: the DMA's interrupt status registers still record the event.
            )
        )
        msi_fsm.act("WAIT",
            If(msi_sent,
                NextState("IDLE"),
            ).Elif(msi_fail,
                NextState("RETRY"),
            )
        )
        msi_fsm.act("RETRY",
            msi_int.eq(1 << issued),
            NextState("WAIT"),
        )
        self.comb += self.msi_failed.eq(msi_fsm.ongoing("WAIT") & msi_fail)
        return msi_enable, msi_mmenable, msi_int, msi_sent, msi_fail

    # Configuration status -------------------------------------------------------------------------
    def _add_config_status(self):
        def convert_size(command, size, max_size):
            cases = {}
            value = 128
            for i in range(6):
                cases[i] = size.eq(value)
                value = min(value*2, max_size)
            return Case(command, cases)

        # `id` stays 0: the adapters leave the requester/completer-ID enable bits clear, so the block
        # fills in the bus/device/function numbers the host assigned.
        cfg_max_payload  = Signal(3)
        cfg_max_read_req = Signal(3)
        self.comb += [
            convert_size(cfg_max_read_req, self.max_request_size, max_size=self.max_request_limit),
            convert_size(cfg_max_payload,  self.max_payload_size, max_size=512),
        ]

        cfg_function_status_sys = Signal(8)
        msi_enable_sys          = Signal(2)
        self.comb += [
            self.bus_master_enable.eq(cfg_function_status_sys[2]),
            self.msi_enable.eq(msi_enable_sys[0]),
        ]
        return cfg_max_payload, cfg_max_read_req, cfg_function_status_sys, msi_enable_sys

    def _resync(self, sig, clk="sys"):
        """A signal for the block to drive, resynchronized into `sig` (in `clk`)."""
        _sig = Signal.like(sig)
        self.specials += MultiReg(_sig, sig, clk)
        return _sig

    # Extended Tag (pcie domain) -------------------------------------------------------------------
    def _add_extended_tag_watch(self, extended_tags, cd):
        """The configuration management port, read by ExtendedTagWatch when `extended_tags`."""
        cfg_mgmt_addr            = Signal(19)
        cfg_mgmt_write           = Signal()
        cfg_mgmt_write_data      = Signal(32)
        cfg_mgmt_byte_enable     = Signal(4, reset=0xf)
        cfg_mgmt_read            = Signal()
        cfg_mgmt_read_data       = Signal(32)
        cfg_mgmt_read_write_done = Signal()
        if extended_tags:
            self.tag_watch = tag_watch = ClockDomainsRenamer("pcie")(ExtendedTagWatch())
            self.comb += [
                cfg_mgmt_addr.eq(tag_watch.addr),
                cfg_mgmt_read.eq(tag_watch.read),
                tag_watch.data.eq(cfg_mgmt_read_data),
                tag_watch.done.eq(cfg_mgmt_read_write_done),
            ]
            if cd == "pcie":
                self.comb += self.extended_tags.eq(tag_watch.enabled)
            else:
                self.specials += MultiReg(tag_watch.enabled, self.extended_tags, cd)
        return (cfg_mgmt_addr, cfg_mgmt_write, cfg_mgmt_write_data, cfg_mgmt_byte_enable, cfg_mgmt_read,
            cfg_mgmt_read_data, cfg_mgmt_read_write_done)

    # CSRs -----------------------------------------------------------------------------------------
    def add_csr(self):
        self._link_status = CSRStatus(fields=[
            CSRField("status", size=1, values=[
                ("``0b0``", "Link Down."),
                ("``0b1``", "Link Up."),
            ]),
            CSRField("phy_down", size=1, values=[
                ("``0b0``", "PHY Link Up."),
                ("``0b1``", "PHY Link Down."),
            ]),
            CSRField("phy_status", size=2, values=[
                ("``0b00``", "No receivers detected."),
                ("``0b01``", "Link training in progress."),
                ("``0b10``", "Link up, DL initialization in progress."),
                ("``0b11``", "Link up, DL initialization completed."),
            ]),
            CSRField("rate", size=3, values=[
                ("``0b001``", "2.5 GT/s."),
                ("``0b010``", "5.0 GT/s."),
                ("``0b100``", "8.0 GT/s."),
            ]),
            CSRField("width", size=4, values=[
                ("``0b0001``", "1-Lane link."),
                ("``0b0010``", "2-Lane link."),
                ("``0b0100``", "4-Lane link."),
                ("``0b1000``", "8-Lane link."),
            ]),
            CSRField("ltssm", size=6, description="LTSSM state."),
        ])
        self._msi_enable        = CSRStatus(description="MSI Enable Status. ``1``: MSI is enabled.")
        self._bus_master_enable = CSRStatus(description="Bus Mastering Status. ``1``: Bus Mastering enabled.")
        self._max_request_size  = CSRStatus(16, description="Negotiated Max Read Request Size (in bytes).")
        self._max_payload_size  = CSRStatus(16, description="Negotiated Max Payload Size (in bytes).")
        fields = self._link_status.fields
        self.comb += [
            fields.status.eq(self.link_up),
            fields.phy_down.eq(self.phy_down),
            fields.phy_status.eq(self.phy_status),
            fields.rate.eq(self.link_rate),
            fields.width.eq(self.link_width),
            fields.ltssm.eq(self.ltssm),
            self._msi_enable.status.eq(self.msi_enable),
            self._bus_master_enable.status.eq(self.bus_master_enable),
            self._max_request_size.status.eq(self.max_request_size),
            self._max_payload_size.status.eq(self.max_payload_size),
        ]

    # Hard IP sources ------------------------------------------------------------------------------
    def update_config(self, config):
        self.config.update(config)

    def ip_config(self):
        """The `pcie3_7x` configuration (Vivado IP parameters) for this PHY."""
        bar0_mb = self.bar0_size // 0x100000
        msi_vectors = f"{self.msi_vectors}_vector" + ("s" if self.msi_vectors > 1 else "")
        config = {
            "Component_Name"               : "pcie3_7x_0",
            "mode_selection"               : "Advanced",
            "PL_LINK_CAP_MAX_LINK_WIDTH"   : f"X{self.nlanes}",
            "PL_LINK_CAP_MAX_LINK_SPEED"   : SPEEDS[self.speed],
            "axisten_if_width"             : f"{self.pcie_data_width}_bit",
            "axisten_freq"                 : 250,
            "AXISTEN_IF_RC_STRADDLE"       : "true" if self.rc_straddle else "false",
            # LitePCIe chooses the tags of its read requests. Corundum's pcie3_7x setup notes that the
            # IP's client-tag option appears inverted; "false" there gives user-chosen tags.
            "axisten_if_enable_client_tag" : "false",
            "PF0_DEVICE_ID"                : f"{device_id(self.nlanes):04x}",
            "PF0_SUBSYSTEM_VENDOR_ID"      : f"{XILINX_VENDOR_ID:04x}",
            "PF0_SUBSYSTEM_ID"             : "0007",
            "PF0_CLASS_CODE"               : "058000",
            "pf0_bar0_64bit"               : "false",
            "pf0_bar0_scale"               : "Megabytes",
            "pf0_bar0_size"                : bar0_mb,
            "PF0_INTERRUPT_PIN"            : "NONE",
            "PF0_MSI_CAP_MULTIMSGCAP"      : msi_vectors,
            "pf0_dev_cap_max_payload"      : "512_bytes",
            "extended_tag_field"           : "true" if self.extended_tags_supported else "false",
            "aspm_support"                 : "No_ASPM",
        }
        config.update(self.config)
        return config

    def add_sources(self, platform):
        """The block's IP, generated by Vivado from `ip_config()`, and LitePCIe's adapters."""
        ip_tcl = ["create_ip -vendor xilinx.com -name pcie3_7x -module_name pcie3_7x_0",
                  "set obj [get_ips pcie3_7x_0]",
                  "set_property -dict [list \\"]
        # LiteX formats these lines with str.format(): braces are doubled.
        for key, value in self.ip_config().items():
            ip_tcl.append(f"CONFIG.{key} {{{{{value}}}}} \\")
        ip_tcl += ["] $obj", "synth_ip $obj"]
        platform.toolchain.pre_synthesis_commands += ip_tcl
        self.add_adapter_sources(platform)

    def add_adapter_sources(self, platform):
        platform.add_source(os.path.join(US_ADAPTERS, "axis_iff.v"))
        names = ["s_axis_rq_adapt", "m_axis_cq_adapt", "s_axis_cc_adapt"]
        if not self.rc_straddle:
            names.append("m_axis_rc_adapt")
        for name in names:
            platform.add_source(os.path.join(US_ADAPTERS, f"{name}_{self.pcie_data_width}b.v"))

    # Finalize -------------------------------------------------------------------------------------
    def do_finalize(self):
        self.add_sources(self.platform)
        self.specials += Instance("pcie3_7x_0", **self.pcie_phy_params)

# Hard IP port map ---------------------------------------------------------------------------------
# The parts of V7Gen3PCIEPHY's `pcie_phy_params`, functions rather than methods (its constructor says why).
# The constructor merges them in this order, which is the order in which the unconnected outputs and the
# resynchronized status signals are created, and so the order that numbers their names: keep it.

def _pcie_ports(phy, pads, pcie_refclk, pcie_rst_n, pipe, nlanes):
    """The link, the PIPE clocks (PG023: "PIPE clock module in example design") and the user clock."""
    return dict(
        # PCI Express interface.
        i_sys_clk                       = pcie_refclk,
        i_sys_reset                     = ~pcie_rst_n,
        o_pci_exp_txp                   = pads.tx_p,
        o_pci_exp_txn                   = pads.tx_n,
        i_pci_exp_rxp                   = pads.rx_p,
        i_pci_exp_rxn                   = pads.rx_n,

        # PIPE clocks.
        i_pipe_pclk_in                  = pipe.pclk,
        i_pipe_rxusrclk_in              = pipe.pclk,
        i_pipe_rxoutclk_in              = 0,
        i_pipe_dclk_in                  = pipe.dclk,
        i_pipe_userclk1_in              = pipe.userclk1,
        i_pipe_userclk2_in              = pipe.userclk2,
        i_pipe_oobclk_in                = pipe.pclk,
        i_pipe_mmcm_lock_in             = pipe.locked,
        o_pipe_txoutclk_out             = pipe.txoutclk,
        o_pipe_rxoutclk_out             = Open(nlanes),
        o_pipe_pclk_sel_out             = pipe.pclk_sel,
        o_pipe_gen3_out                 = Open(),
        i_pipe_mmcm_rst_n               = 1,
        o_mmcm_lock                     = Open(),

        # Common.
        o_user_clk                      = ClockSignal("pcie"),
        o_user_reset                    = ResetSignal("pcie"),
        o_user_lnk_up                   = phy._resync(phy.link_up),
        o_user_app_rdy                  = Open(),
    )

def _adapter_side(a, interface, **overrides):
    """The signals of the block's `interface` ("s_axis_rq", ...) on the adapters' side (`a`), by AXI4-Stream
    signal name, but for `overrides`."""
    return {**{name: a[f"{interface}_{name}"] for name in AXIS_SIGNALS}, **overrides}

def _axis_ports(a, rq_tdata, rq_tuser, rq_seq_num, rq_seq_num_vld):
    """The four AXI4-Stream interfaces, on the adapters' side (`a`) but for RQ's reworked tdata and tuser
    (`_add_requester_fixes`) and the 22-bit tready of RC and CQ, every bit driven alike (PG023)."""
    return dict(
        # Requester request (FPGA -> host).
        **axis_ports("s_axis_rq", **_adapter_side(a, "s_axis_rq", tdata=rq_tdata, tuser=rq_tuser)),
        o_pcie_rq_seq_num               = rq_seq_num,
        o_pcie_rq_seq_num_vld           = rq_seq_num_vld,
        o_pcie_rq_tag                   = Open(6),
        o_pcie_rq_tag_vld               = Open(),
        o_pcie_tfc_nph_av               = Open(2),
        o_pcie_tfc_npd_av               = Open(2),

        # Requester completion (host -> FPGA).
        **axis_ports("m_axis_rc", **_adapter_side(a, "m_axis_rc",
            tready=Replicate(a["m_axis_rc_tready"][0], 22))),

        # Completer request (host -> FPGA).
        **axis_ports("m_axis_cq", **_adapter_side(a, "m_axis_cq",
            tready=Replicate(a["m_axis_cq_tready"][0], 22))),
        i_pcie_cq_np_req                = 1,
        o_pcie_cq_np_req_count          = Open(6),

        # Completer completion (FPGA -> host).
        **axis_ports("s_axis_cc", **_adapter_side(a, "s_axis_cc")),
    )

def _config_status_ports(phy, cfg_max_payload, cfg_max_read_req, cfg_function_status_sys):
    """Configuration status: the link's and the sizes and function status `_add_config_status` decodes,
    resynchronized into the sys domain; the rest unused."""
    return dict(
        o_cfg_phy_link_down             = phy._resync(phy.phy_down),
        o_cfg_phy_link_status           = phy._resync(phy.phy_status),
        o_cfg_negotiated_width          = phy._resync(phy.link_width),
        o_cfg_current_speed             = phy._resync(phy.link_rate),
        o_cfg_max_payload               = phy._resync(cfg_max_payload),
        o_cfg_max_read_req              = phy._resync(cfg_max_read_req),
        o_cfg_function_status           = phy._resync(cfg_function_status_sys),
        o_cfg_ltssm_state               = phy._resync(phy.ltssm),
        o_cfg_function_power_state      = Open(6),
        o_cfg_vf_status                 = Open(12),
        o_cfg_vf_power_state            = Open(18),
        o_cfg_link_power_state          = Open(2),
        o_cfg_err_cor_out               = Open(),
        o_cfg_err_nonfatal_out          = Open(),
        o_cfg_err_fatal_out             = Open(),
        o_cfg_ltr_enable                = Open(),
        o_cfg_rcb_status                = Open(2),
        o_cfg_dpa_substate_change       = Open(2),
        o_cfg_obff_enable               = Open(2),
        o_cfg_pl_status_change          = Open(),
        o_cfg_tph_requester_enable      = Open(2),
        o_cfg_tph_st_mode               = Open(6),
        o_cfg_vf_tph_requester_enable   = Open(6),
        o_cfg_vf_tph_st_mode            = Open(18),
    )

def _config_mgmt_ports(addr, write, write_data, byte_enable, read, read_data, read_write_done):
    """Configuration management: reads of Device Control (`_add_extended_tag_watch`), no writes."""
    return dict(
        i_cfg_mgmt_addr                 = addr,
        i_cfg_mgmt_write                = write,
        i_cfg_mgmt_write_data           = write_data,
        i_cfg_mgmt_byte_enable          = byte_enable,
        i_cfg_mgmt_read                 = read,
        o_cfg_mgmt_read_data            = read_data,
        o_cfg_mgmt_read_write_done      = read_write_done,
        i_cfg_mgmt_type1_cfg_reg_access = 0,
    )

def _config_unused_ports():
    """Messages, flow control, per-function status: unused."""
    return dict(
        o_cfg_msg_received              = Open(),
        o_cfg_msg_received_data         = Open(8),
        o_cfg_msg_received_type         = Open(5),
        i_cfg_msg_transmit              = 0,
        i_cfg_msg_transmit_type         = 0,
        i_cfg_msg_transmit_data         = 0,
        o_cfg_msg_transmit_done         = Open(),
        o_cfg_fc_ph                     = Open(8),
        o_cfg_fc_pd                     = Open(12),
        o_cfg_fc_nph                    = Open(8),
        o_cfg_fc_npd                    = Open(12),
        o_cfg_fc_cplh                   = Open(8),
        o_cfg_fc_cpld                   = Open(12),
        i_cfg_fc_sel                    = 0,
        i_cfg_per_func_status_control   = 0,
        o_cfg_per_func_status_data      = Open(16),
        i_cfg_per_function_number       = 0,
        i_cfg_per_function_output_request = 0,
        o_cfg_per_function_update_done  = Open(),
    )

def _config_control_ports(phy):
    """Configuration control: link training and the configuration space always enabled, power state
    changes acknowledged, the user logic's uncorrectable errors reported (`err_uncor`)."""
    return dict(
        i_cfg_dsn                       = 0,
        i_cfg_power_state_change_ack    = 1,
        o_cfg_power_state_change_interrupt = Open(),
        i_cfg_err_cor_in                = 0,
        i_cfg_err_uncor_in              = phy.err_uncor,
        o_cfg_flr_in_process            = Open(2),
        i_cfg_flr_done                  = 0,
        o_cfg_vf_flr_in_process         = Open(6),
        i_cfg_vf_flr_done               = 0,
        i_cfg_link_training_enable      = 1,
        o_cfg_hot_reset_out             = Open(),
        i_cfg_config_space_enable       = 1,
        i_cfg_req_pm_transition_l23_ready = 0,
        i_cfg_hot_reset_in              = 0,
        i_cfg_ds_port_number            = 0,
        i_cfg_ds_bus_number             = 0,
        i_cfg_ds_device_number          = 0,
        i_cfg_ds_function_number        = 0,
        i_cfg_subsys_vend_id            = XILINX_VENDOR_ID,
    )

def _interrupt_ports(msi_enable, msi_mmenable, msi_int, msi_sent, msi_fail):
    """Interrupts: MSI only (`_add_msi`)."""
    return dict(
        i_cfg_interrupt_int             = 0,
        i_cfg_interrupt_pending         = 0,
        o_cfg_interrupt_sent            = Open(),
        o_cfg_interrupt_msi_enable      = msi_enable,
        o_cfg_interrupt_msi_vf_enable   = Open(6),
        o_cfg_interrupt_msi_mmenable    = msi_mmenable,
        o_cfg_interrupt_msi_mask_update = Open(),
        o_cfg_interrupt_msi_data        = Open(32),
        i_cfg_interrupt_msi_select      = 0,
        i_cfg_interrupt_msi_int         = msi_int,
        i_cfg_interrupt_msi_pending_status = 0,
        o_cfg_interrupt_msi_sent        = msi_sent,
        o_cfg_interrupt_msi_fail        = msi_fail,
        i_cfg_interrupt_msi_attr        = 0,
        i_cfg_interrupt_msi_tph_present = 0,
        i_cfg_interrupt_msi_tph_type    = 0,
        i_cfg_interrupt_msi_tph_st_tag  = 0,
        i_cfg_interrupt_msi_function_number = 0,
    )

# PIPE clocking ------------------------------------------------------------------------------------

class _PIPEClocking(LiteXModule):
    """The PIPE clocks of the 7-series Gen3 block, from its 100 MHz TXOUTCLK (PG023, "PIPE clock").

    MMCM at 1000 MHz VCO: 125 MHz (PIPE clock at Gen1/Gen2, DRP clock), 250 MHz (PIPE clock at Gen3),
    500 MHz core clock (userclk1) and 250 MHz user clock (userclk2) for the x8 Gen3 256-bit setting;
    narrower links run the core clock at 250 MHz.

    `speedgrade`: the part's (-1, -2, -3; `hostlink.cores.pcie.config.speed_grade(platform.device)`), whose
    VCO and output ranges the MMCM's setting is checked against.
    """
    def __init__(self, nlanes, speedgrade):
        self.txoutclk = Signal()         # i
        self.pclk_sel = Signal(nlanes)   # i (per lane, 1: Gen3 rate)
        self.pclk     = Signal()         # o
        self.dclk     = Signal()         # o
        self.userclk1 = Signal()         # o
        self.userclk2 = Signal()         # o
        self.locked   = Signal()         # o

        # # #

        # LiteX's S7MMCM finds the dividers and checks them against the part's VCO and output ranges (the
        # VC709's XC7VX690T-2: VCO 600 to 1440 MHz). No margin: the PIPE clocks must be exact, which gives a VCO of
        # 1000 MHz. Its outputs are left unbuffered (each domain's clk is the raw output, the domains
        # themselves unused) for the buffers below.
        self.mmcm = mmcm = S7MMCM(speedgrade=speedgrade)
        mmcm.register_clkin(self.txoutclk, 100e6)
        clk125, clk250, clkuser1, clkuser2 = (ClockDomain(f"pipe_{name}", reset_less=True)
            for name in ("clk125", "clk250", "userclk1", "userclk2"))
        for domain, freq in [(clk125, 125e6), (clk250, 250e6), (clkuser1, 500e6 if nlanes == 8 else 250e6),
                (clkuser2, 250e6)]:
            mmcm.create_clkout(domain, freq, buf=None, margin=0, with_reset=False)
        clk125, clk250, clkuser1, clkuser2 = clk125.clk, clk250.clk, clkuser1.clk, clkuser2.clk
        self.comb += self.locked.eq(mmcm.locked)
        # The PIPE clock switches to 250 MHz only when every lane asks for it, through a glitch-free
        # BUFGCTRL; the selection crosses into the PIPE clock domain first.
        pclk_sel_sync = Signal(nlanes)
        pclk_sel      = Signal()
        self.clock_domains.cd_pipe = ClockDomain(reset_less=True)
        self.comb += self.cd_pipe.clk.eq(self.pclk)
        self.specials += MultiReg(self.pclk_sel, pclk_sel_sync, "pipe")
        self.sync.pipe += If(pclk_sel_sync == (2**nlanes - 1), pclk_sel.eq(1)
            ).Elif(pclk_sel_sync == 0, pclk_sel.eq(0))
        self.specials += [
            Instance("BUFGCTRL",
                i_CE0 = 1, i_CE1 = 1, i_IGNORE0 = 0, i_IGNORE1 = 0,
                i_I0  = clk125, i_I1 = clk250,
                i_S0  = ~pclk_sel, i_S1 = pclk_sel,
                o_O   = self.pclk),
            Instance("BUFG", i_I=clk125,   o_O=self.dclk),
            Instance("BUFG", i_I=clkuser1, o_O=self.userclk1),
            Instance("BUFG", i_I=clkuser2, o_O=self.userclk2),
        ]
