# This file is part of hostlink.
# Copyright (c) 2026 hostlink developers
# SPDX-License-Identifier: BSD-2-Clause

"""TLP stream cores: depacketizers that accept one beat every cycle, TLP after TLP (`TLPDepacketizer` for a
stream of host requests and completions, as `pcie_7x` delivers them; `CompletionDepacketizer` for a stream of
completions only), and the 3-DW to 4-DW request header expander in front of the Gen3 PHY's requester adapter
(v7gen3phy.py).

LitePCIe's header extracter returns to an IDLE state after every TLP, and its TLP controller waits one
cycle on the first beat of every completion: two idle cycles per TLP. A 256-byte completion is 9 beats on a
256-bit bus, so host -> FPGA reads lose 2 cycles in 11 (7.11 -> 5.8 GB/s on Gen3 x8 at 250 MHz). The
depacketizers keep the same interfaces (LitePCIe's `phy_layout` in, `request_layout` and `completion_layout`
out) without those cycles.

The header is 3 or 4 DWs; payload starts at DW3 (3-DW completion and 32-bit memory request headers, the
only TLPs with data that reach the user logic), as in LitePCIe, so each output
beat is the last n-3 DWs of the previous input beat followed by the first 3 DWs of the current one. The
first beat of a TLP produces no output (its payload waits for the next beat): that is realignment, not a
lost input cycle. Only a TLP whose payload ends beyond DW2 of its last beat needs one extra output cycle.
"""

from migen import *

from litex.gen import *

from litex.soc.interconnect import stream

from litepcie.common import phy_layout, completion_layout, request_layout
from litepcie.tlp.common import tlp_common_header, tlp_completion_header, tlp_request_header, fmt_type_dict, dword_endianness_swap

# Header extracter ---------------------------------------------------------------------------------

HEADER_DWS = 3   # Payload offset in the first beat (3-DW completion header).


class TLPHeaderExtracter(LiteXModule):
    """Splits each TLP into its 4-DW `header` (held for the whole packet) and its realigned payload."""
    def __init__(self, data_width):
        if data_width not in [128, 256]:
            raise ValueError(f"TLP header extracter data width must be 128 or 256 bits, not {data_width!r}")
        self.sink   = sink   = stream.Endpoint(phy_layout(data_width))  # i
        self.source = source = stream.Endpoint(phy_layout(data_width))  # o
        self.header = header = Signal(128)                              # o (valid with source)

        # # #

        prev_dat = Signal(data_width)
        prev_be  = Signal(data_width//8)
        in_copy  = Signal()                     # Header beat seen, payload beats follow.
        flush    = Signal()                     # Output the carried DWs alone, then end the packet.
        first    = Signal()                     # Next output beat is the packet's first.

        tail_spills = Signal()
        self.comb += tail_spills.eq(sink.be[4*HEADER_DWS:] != 0)

        # Data-Path.
        self.comb += [
            source.dat.eq(Cat(prev_dat[32*HEADER_DWS:], sink.dat[:32*HEADER_DWS])),
            source.be.eq(Cat(prev_be[4*HEADER_DWS:],    sink.be[:4*HEADER_DWS])),
            If(flush,
                source.dat.eq(Cat(prev_dat[32*HEADER_DWS:], Constant(0, 32*HEADER_DWS))),
                source.be.eq(Cat(prev_be[4*HEADER_DWS:],    Constant(0, 4*HEADER_DWS))),
            ),
            source.first.eq(first),
        ]
        self.sync += If(sink.valid & sink.ready,
            prev_dat.eq(sink.dat),
            prev_be.eq(sink.be),
        )

        # Control-Path.
        self.comb += [
            If(flush,
                source.valid.eq(1),
                source.last.eq(1),
            ).Elif(in_copy,
                source.valid.eq(sink.valid),
                source.last.eq(sink.last & ~tail_spills),
                sink.ready.eq(source.ready),
            ).Else(
                # Header beat: nothing to output yet, so it is always accepted. A header-only TLP still
                # ends with one output beat carrying `last` (completions without data reach the controller).
                sink.ready.eq(1),
            )
        ]
        self.sync += [
            If(flush,
                If(source.ready,
                    flush.eq(0),
                    in_copy.eq(0),
                )
            ).Elif(in_copy,
                If(sink.valid & sink.ready,
                    first.eq(0),
                    If(sink.last,
                        flush.eq(tail_spills),
                        in_copy.eq(tail_spills),
                    )
                )
            ).Elif(sink.valid,
                header.eq(sink.dat[:128]),
                first.eq(1),
                If(sink.last,
                    flush.eq(1),
                ),
                in_copy.eq(1),
            )
        ]

# Depacketizers -----------------------------------------------------------------------------------

class TLPDepacketizer(LiteXModule):
    """Host requests and completions from one TLP stream, as `pcie_7x`'s receive interface carries them.

    The same outputs as LitePCIe's `LitePCIeTLPDepacketizer` with requests and completions (`req_source`:
    `request_layout`, 32-bit memory reads and writes to BAR0, the address masked by `address_mask`;
    `cmp_source`: `completion_layout`), without its idle cycle per TLP: a 64-byte completion is 5 beats of
    128 bits, and LitePCIe's extracter takes 6 cycles for it, slower than a Gen2 x8 link delivers one.
    Anything else is dropped.
    """
    def __init__(self, data_width, endianness, address_mask=0, with_requests=True):
        if endianness not in ["big", "little"]:
            raise ValueError(f"endianness must be 'big' or 'little', not {endianness!r}")
        self.sink       = sink       = stream.Endpoint(phy_layout(data_width))         # i
        self.cmp_source = cmp_source = stream.Endpoint(completion_layout(data_width))  # o
        if with_requests:
            self.req_source = req_source = stream.Endpoint(request_layout(data_width)) # o

        # # #

        self.extracter = extracter = TLPHeaderExtracter(data_width)
        self.comb += sink.connect(extracter.sink)
        header = extracter.header

        common = Record(tlp_common_header.get_layout())
        self.comb += tlp_common_header.decode(header, common)
        fmt_type = Signal(7)
        self.comb += fmt_type.eq(Cat(common.type, common.fmt))
        is_completion = Signal()
        is_request    = Signal()
        self.comb += is_completion.eq((fmt_type == fmt_type_dict["cpld"]) | (fmt_type == fmt_type_dict["cpl"]))
        if with_requests:
            self.comb += is_request.eq(
                (fmt_type == fmt_type_dict["mem_rd32"]) | (fmt_type == fmt_type_dict["mem_wr32"]))

        payload = Signal(data_width)
        self.comb += dword_endianness_swap(src=extracter.source.dat, dst=payload,
            data_width=data_width, endianness=endianness, mode="dat")

        # Each beat goes to the output its TLP's header names, with the payload; a TLP of any other kind is
        # taken and dropped.
        outputs = [(cmp_source, is_completion)] + ([(req_source, is_request)] if with_requests else [])
        self.comb += extracter.source.ready.eq(~(is_completion | is_request))
        for source, is_kind in outputs:
            self.comb += [
                source.valid.eq(extracter.source.valid & is_kind),
                source.first.eq(extracter.source.first),
                source.last.eq(extracter.source.last),
                source.dat.eq(payload),
                If(is_kind, extracter.source.ready.eq(source.ready)),
            ]

        completion = Record(tlp_completion_header.get_layout())
        self.comb += [
            tlp_completion_header.decode(header, completion),
            cmp_source.len.eq(completion.length),
            cmp_source.end.eq(completion.length == completion.byte_count[2:]),
            cmp_source.adr.eq(completion.lower_address),
            cmp_source.req_id.eq(completion.requester_id),
            cmp_source.cmp_id.eq(completion.completer_id),
            # A poisoned completion's data must not be used either (EP, PCIe 2.2.8.4).
            cmp_source.err.eq((completion.status != 0) | completion.ep),
            cmp_source.tag.eq(completion.tag),
        ]

        if with_requests:
            request = Record(tlp_request_header.get_layout())
            self.comb += [
                tlp_request_header.decode(header, request),
                req_source.we.eq(req_source.valid & (fmt_type == fmt_type_dict["mem_wr32"])),
                req_source.adr.eq(request.address & ~address_mask),
                req_source.len.eq(request.length),
                req_source.req_id.eq(request.requester_id),
                req_source.tag.eq(request.tag),
            ]


class CompletionDepacketizer(TLPDepacketizer):
    """Host -> FPGA completions, from the PHY's completion stream to LitePCIe's `completion_layout`
    (`source`). Anything that is not a completion (the PHY's completion channel carries none) is dropped.
    """
    def __init__(self, data_width, endianness):
        TLPDepacketizer.__init__(self, data_width, endianness, with_requests=False)
        self.source = self.cmp_source

# 3-DW to 4-DW request headers ---------------------------------------------------------------------

class TLPHeader4DWExpander(LiteXModule):
    """Rewrites memory requests with a 3-DW header (32-bit address) into the 4-DW form (64-bit address).

    Little-endian LitePCIe TLP stream, DW0 in dat[0:32]. The address moves from DW2 to DW3, DW2 becomes the
    (zero) upper address, fmt bit 29 says "4-DW header", and the payload moves up one DW: each output beat
    takes the last DW of the previous input beat, and a packet whose last input beat has its last DW valid
    ends with one extra beat. 4-DW requests pass unchanged.
    """
    def __init__(self, data_width=256):
        if data_width not in [128, 256]:
            raise ValueError(f"header expander data width must be 128 or 256 bits, not {data_width!r}")
        self.sink   = sink   = stream.Endpoint(phy_layout(data_width))  # i
        self.source = source = stream.Endpoint(phy_layout(data_width))  # o

        # # #

        n = data_width//32
        dws  = [sink.dat[32*i:32*(i + 1)] for i in range(n)]
        bes  = [sink.be[4*i:4*(i + 1)]    for i in range(n)]
        carry_dat = Signal(32)
        carry_be  = Signal(4)
        shifting  = Signal()   # Inside a packet whose header was expanded.
        extra     = Signal()   # One beat left holding the last DW.

        expand   = Signal()
        shifted  = Signal()
        overflow = Signal()
        self.comb += [
            expand.eq(sink.first & ~sink.dat[29]),
            shifted.eq(expand | (shifting & ~sink.first)),
            overflow.eq(bes[n - 1] != 0),
        ]

        # Data-Path.
        self.comb += [
            If(extra,
                source.valid.eq(1),
                source.dat.eq(carry_dat),
                source.be.eq(carry_be),
                source.last.eq(1),
            ).Else(
                source.valid.eq(sink.valid),
                source.first.eq(sink.first),
                sink.ready.eq(source.ready),
                If(expand,
                    source.dat.eq(Cat(dws[0] | (1 << 29), dws[1], Constant(0, 32), dws[2], *dws[3:n - 1])),
                    source.be.eq(Cat(bes[0], bes[1], Constant(0xf, 4), bes[2], *bes[3:n - 1])),
                ).Elif(shifted,
                    source.dat.eq(Cat(carry_dat, *dws[:n - 1])),
                    source.be.eq(Cat(carry_be, *bes[:n - 1])),
                ).Else(
                    source.dat.eq(sink.dat),
                    source.be.eq(sink.be),
                ),
                source.last.eq(sink.last & ~(shifted & overflow)),
            )
        ]

        # Control-Path.
        self.sync += [
            If(extra,
                If(source.ready,
                    extra.eq(0),
                    shifting.eq(0),
                )
            ).Elif(sink.valid & sink.ready,
                carry_dat.eq(dws[n - 1]),
                carry_be.eq(bes[n - 1]),
                shifting.eq(shifted & ~sink.last),
                extra.eq(shifted & sink.last & overflow),
            )
        ]
