# This file is part of hostlink.
# Copyright (c) 2026 hostlink developers
# SPDX-License-Identifier: BSD-2-Clause

"""TLPs for the gateware benches, their headers packed by cocotbext-pcie's `Tlp` (the class its root
complex model uses), as LitePCIe's TLP streams carry them: a list of DWORDs, header first, each DWORD's bits
numbered as the PCIe specification numbers them.

    completion_dws(tag, payload, ...)        a completion with data (CplD), `payload` a list of DWORDs
    request_dws(kind, address, payload, ...) a memory read or write (TlpType.MEM_READ, _64, MEM_WRITE, _64)
    first_dw(kind, length)                   DWORD 0 of a request or completion of `length` DWORDs
"""

import struct

from cocotbext.pcie.core.tlp import Tlp, TlpType
from cocotbext.pcie.core.utils import PcieId

__all__ = ["TlpType", "completion_dws", "request_dws", "first_dw"]


def _header_dws(tlp):
    header = tlp.pack_header()
    return list(struct.unpack(f">{len(header)//4}L", header))


def completion_dws(tag, payload, byte_count=None, lower_address=0, requester_id=0x0100, completer_id=0,
                   poisoned=False):
    """CplD header (3 DWORDs) and `payload`; the byte count is the payload's unless given, as in a completion
    that ends its request."""
    tlp = Tlp()
    tlp.fmt_type      = TlpType.CPL_DATA
    tlp.length        = len(payload) & 0x3ff
    tlp.byte_count    = 4*len(payload) if byte_count is None else byte_count
    tlp.lower_address = lower_address
    tlp.requester_id  = PcieId.from_int(requester_id)
    tlp.completer_id  = PcieId.from_int(completer_id)
    tlp.tag           = tag
    tlp.ep            = poisoned
    return _header_dws(tlp) + list(payload)


def request_dws(kind, address, payload=(), length=None, requester_id=0x0000, tag=0):
    """Memory request header (3 DWORDs, 4 for the _64 kinds) and `payload`; every byte enabled. `length`
    (DWORDs) defaults to the payload's."""
    tlp = Tlp()
    tlp.fmt_type     = kind
    tlp.length       = (len(payload) if length is None else length) & 0x3ff
    tlp.first_be     = 0xf
    tlp.last_be      = 0xf
    tlp.address      = address
    tlp.requester_id = PcieId.from_int(requester_id)
    tlp.tag          = tag
    return _header_dws(tlp) + list(payload)


def first_dw(kind, length):
    """DWORD 0 (format, type, length) of a TLP of `kind` with `length` DWORDs of payload or request."""
    tlp = Tlp()
    tlp.fmt_type = kind
    tlp.length   = length & 0x3ff
    return _header_dws(tlp)[0]
