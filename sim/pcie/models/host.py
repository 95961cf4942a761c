# This file is part of hostlink.
# Copyright (c) 2026 hostlink developers
# SPDX-License-Identifier: BSD-2-Clause

"""Host model: a cocotbext-pcie root complex with the timing of a real host's memory system.

cocotbext-pcie's RootComplex answers a memory read at once, in order, in completions as large as the
max payload size. A real root complex takes about a microsecond to fetch the data, splits a read into
completions on read-completion-boundary (64-byte) multiples, and interleaves the completions of different
reads (tags). `HostProfile` sets each of these; `HostRootComplex` applies them.

It reads host memory for a read request at the end of that latency, as it sends the first completion
(`read_data_at="completion"`, the default): a real root complex may let a later posted write (an MSI) or a
completion (a loop-status read) pass the read before it has fetched the data (PCIe 2.4.1), so a host that
refills a buffer on the device's word must not change what the read then returns. "request" reads memory at
the request's arrival, as cocotbext-pcie does. `last_read_data_ns` is when memory was last read.

It also checks the device: every read over MRRS or across 4 KiB (`bad_reads`), every write over MPS or
across 4 KiB (`bad_writes`). And it misbehaves on demand, as hosts do (IOMMU faults, AER recovery):
`arm_fault(kind, low, high)` spoils the next read request within [low, high) (see FAULTS).
"""

import math
import random
from dataclasses import dataclass, asdict, field

import cocotb
from cocotb.triggers import Timer, Event
from cocotb.utils import get_sim_time

from cocotbext.pcie.core import RootComplex
from cocotbext.pcie.core.tlp import Tlp, TlpType, CplStatus
from cocotbext.pcie.core.utils import PcieId

# Host profile -------------------------------------------------------------------------------------

@dataclass
class HostProfile:
    link_speed:          int   = 2       # PCIe generation.
    link_width:          int   = 4       # Lanes.
    max_payload_size:    int   = 256     # Bytes (MPS), programmed in the device's control register.
    max_read_request:    int   = 512     # Bytes (MRRS), likewise.
    read_latency_ns:     float = 1000.0  # From a read request's arrival to its first completion.
    completion_size:     str   = "mps"   # "mps": up to MPS, split on 64-byte boundaries; "64": 64-byte only.
    reorder_completions: bool  = True    # Interleave completions of different tags.
    # The hard block drops s_axis_tx_tready on 2% of cycles (its own completions and messages, flow-control
    # updates), and leaves an idle cycle between received beats 5% of the time. At Gen2 x4 the 128-bit user
    # interface is only ~1.5% faster than the link, so each of these costs throughput directly. Boards with
    # pcie3_7x default to no TX back-pressure (hostlink.sim.dma.board_profile_defaults).
    backpressure:        float = 0.02    # Probability that the hard block holds off a beat (tx ready low).
    rx_gaps:             float = 0.05    # Probability of an idle cycle between received beats.
    # Whether the OS sets Extended Tag Field Enable in the device's control register (Linux does since
    # 4.13 where the device supports it; a host may leave it clear: the device then uses 32 tags).
    extended_tag:        bool  = True
    # When the host reads memory for a read request: "completion", at the end of the read latency (the
    # latest a real host may); "request", at the request's arrival.
    read_data_at:        str   = "completion"
    # The host program of a stream job (stream_jobs.py): every `stall_every` buffers it serves, it stalls for
    # `stall_ns` (reads, refills and gives back nothing). 0: never.
    stall_ns:            float = 0.0
    stall_every:         int   = 0
    seed:                int   = 1

    PROFILES = {}

    def check(self):
        if self.max_payload_size not in (128, 256, 512, 1024, 2048, 4096):
            raise ValueError(f"max payload size must be a power of two from 128 to 4096, not {self.max_payload_size!r}")
        if self.max_read_request not in (128, 256, 512, 1024, 2048, 4096):
            raise ValueError(f"max read request must be a power of two from 128 to 4096, not {self.max_read_request!r}")
        if self.completion_size not in ("mps", "64"):
            raise ValueError(f"completion size must be 'mps' or '64', not {self.completion_size!r}")
        if self.read_data_at not in ("completion", "request"):
            raise ValueError(f"read data must be taken at 'completion' or 'request', not {self.read_data_at!r}")
        if not (0 <= self.backpressure < 1) or not (0 <= self.rx_gaps < 1):
            raise ValueError("back-pressure and gap probabilities must be in [0, 1)")
        if self.stall_ns < 0 or not isinstance(self.stall_every, int) or self.stall_every < 0:
            raise ValueError(f"a host stall is >= 0 ns every >= 0 buffers, not {self.stall_ns!r} ns every "
                             f"{self.stall_every!r}")
        if (self.stall_ns > 0) != (self.stall_every > 0):
            raise ValueError("a host stall needs both its length (ns) and its period (buffers)")
        if self.read_latency_ns < 0:
            raise ValueError(f"read latency must be >= 0 ns, not {self.read_latency_ns!r}")
        return self

    def as_dict(self):
        return asdict(self)


def host_profile(name="default", **overrides):
    """Named profiles: 'default' (typical host), 'worst' (64-byte completions only), 'ideal' (no stalls)."""
    base = {
        "default": {},
        "worst":   {"completion_size": "64"},
        "ideal":   {"backpressure": 0.0, "rx_gaps": 0.0, "reorder_completions": False},
    }
    if name not in base:
        raise ValueError(f"host profile must be one of {', '.join(base)}, not {name!r}")
    settings = dict(base[name])
    settings.update({k: v for k, v in overrides.items() if v is not None})
    return HostProfile(**settings).check()

def breaks_limits(address, length, limit):
    """A request the device was not allowed to make: over `limit` bytes (MPS for writes, MRRS for reads)
    or across a 4 KiB boundary (PCIe 2.2.7)."""
    return length > limit or (address & 0xfff) + length > 0x1000

# Faults -------------------------------------------------------------------------------------------

FAULTS = {
    "timeout":    "the read is never answered",
    "ur":         "the read is answered by one Unsupported Request completion, without data",
    "ca":         "the read is answered by one Completer Abort completion, without data",
    "poisoned":   "the read's completions carry their data with the poisoned bit (EP) set",
    "long":       "the read's last completion carries 32 bytes more than the read asked for",
    "stray":      "a completion for a tag not outstanding (0xff) comes before the read's own",
    "foreign":    "a copy of the read's first completion, for another requester ID, comes before it",
}

# Root complex -------------------------------------------------------------------------------------

class _PendingRead:
    def __init__(self, ready_time, completions, address=None, length=0):
        self.ready_time  = ready_time
        self.completions = completions
        self.address     = address   # Memory still to read (read_data_at="completion"), else None.
        self.length      = length


_COMPLETIONS = {TlpType.CPL, TlpType.CPL_DATA, TlpType.CPL_LOCKED, TlpType.CPL_LOCKED_DATA}


class HostRootComplex(RootComplex):
    def __init__(self, profile, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.profile  = profile
        self.rng      = random.Random(profile.seed)
        self.pending  = []
        self.wake     = Event()
        self.split_on_all_rcb = profile.completion_size == "64"
        self.reads_served = 0
        self.bad_reads    = 0   # Requests over MRRS or across a 4 KiB boundary.
        self.largest_read = 0   # Bytes.
        # Completions the host still owes, counted as a device must reserve for them: one per 64-byte block
        # (read-completion boundary) each one covers. The most at once shows whether a device kept its reads
        # within its hard block's completion headers.
        self.blocks_owed      = 0
        self.most_blocks_owed = 0
        self.bad_writes    = 0   # Writes over MPS or across a 4 KiB boundary.
        self.faults_armed  = []  # [kind, low, high]: spoil the next read within [low, high).
        self.faults_done   = []  # (kind, read address) of each fault applied.
        self.last_read_data_ns = None   # When memory was last read for a read request.
        self.unexpected_completions = 0   # Completions for no read outstanding, dropped.
        cocotb.start_soon(self._run_completer())

    async def handle_tlp(self, tlp):
        # A completion whose tag no read of the host's holds is an Unexpected Completion, which a root complex
        # discards. cocotbext-pcie's would keep it for the next read to take that tag, which would return its
        # data: as the fast path does (fast/run.py, on_event), drop it and count it.
        if tlp.fmt_type in _COMPLETIONS and not self.tag_active[tlp.tag]:
            self.unexpected_completions += 1
            tlp.release_fc()
            return
        await super().handle_tlp(tlp)

    def arm_fault(self, kind, low, high):
        if kind not in FAULTS:
            raise ValueError(f"fault must be one of {', '.join(FAULTS)}, not {kind!r}")
        self.faults_armed.append([kind, low, high])

    async def handle_mem_write_tlp(self, tlp):
        # A write the device was not allowed to make is counted as an error of the run; it still lands.
        length = len(tlp.get_data())
        if breaks_limits(tlp.address, length, self.profile.max_payload_size):
            self.bad_writes += 1
            self.log.error("write of %d bytes at 0x%x: over MPS (%d) or across 4 KiB", length, tlp.address,
                self.profile.max_payload_size)
        await super().handle_mem_write_tlp(tlp)

    def _spoil(self, tlp, completions):
        """The completions sent for `tlp` under an armed fault that covers its address (else unchanged)."""
        for fault in self.faults_armed:
            kind, low, high = fault
            if low <= tlp.address < high:
                break
        else:
            return completions
        self.faults_armed.remove(fault)
        self.faults_done.append((kind, tlp.address))
        self.log.warning("fault %s on the read of %d bytes at 0x%x", kind, tlp.length*4, tlp.address)
        def extra(cpl):
            cpl.rcb_blocks = 0   # Owed nothing for it: the device must drop it.
            return cpl
        if kind == "timeout":
            return []
        if kind in ("ur", "ca"):
            create = Tlp.create_ur_completion_for_tlp if kind == "ur" else Tlp.create_ca_completion_for_tlp
            cpl = create(tlp, PcieId(0, 0, 0))
            cpl.rcb_blocks = sum(c.rcb_blocks for c in completions)
            return [cpl]
        if kind == "poisoned":
            for cpl in completions:
                cpl.ep = True
            return completions
        if kind == "long":
            # Its byte count covers the extra bytes (a completion with more data than its byte count is
            # malformed), which makes it too long for the read.
            last = completions[-1]
            last.byte_count += 32
            last.set_data(bytes(last.get_data()) + bytes(32))
            return completions
        first = completions[0]
        copy  = Tlp.create_completion_data_for_tlp(tlp, PcieId(0, 0, 0))
        copy.byte_count, copy.lower_address = first.byte_count, first.lower_address
        copy.set_data(bytes(first.get_data()))
        if kind == "stray":
            copy.tag = 0xff
        else:
            copy.requester_id = PcieId(tlp.requester_id.bus, (tlp.requester_id.device + 1) & 0x1f,
                tlp.requester_id.function)
        return [extra(copy)] + completions

    async def handle_mem_read_tlp(self, tlp):
        addr = tlp.address
        # A read the device was not allowed to make (over the MRRS it was given, or across a 4 KiB
        # boundary) is counted as an error of the run; one within MRRS is still served, so the run ends.
        self.largest_read = max(self.largest_read, tlp.length*4)
        if breaks_limits(addr, tlp.length*4, self.profile.max_read_request):
            self.bad_reads += 1
            self.log.error("read request of %d bytes at 0x%x: over MRRS (%d) or across 4 KiB",
                tlp.length*4, addr, self.profile.max_read_request)
        if not self.mem_address_space.find_regions(addr, tlp.length*4) or \
           tlp.length*4 > 0x1000 - (addr & 0xfff):
            return await super().handle_mem_read_tlp(tlp)
        late = self.profile.read_data_at == "completion"
        if late:
            data = bytes(tlp.length*4)   # Sizes only: the data is read when the first completion leaves.
        else:
            data = await self.mem_address_space.read(addr, tlp.length*4)
            self.last_read_data_ns = get_sim_time("ns")
        completions = self._split(tlp, data)
        if self.faults_armed:
            completions = self._spoil(tlp, completions)
            if not completions:
                return
        self.blocks_owed     += sum(cpl.rcb_blocks for cpl in completions)
        self.most_blocks_owed = max(self.most_blocks_owed, self.blocks_owed)
        self.pending.append(_PendingRead(
            ready_time  = get_sim_time("ns") + self.profile.read_latency_ns,
            completions = completions,
            address     = addr if late else None,
            length      = tlp.length*4))
        self.reads_served += 1
        self.wake.set()

    def _split(self, tlp, data):
        # Completions on RCB (64-byte) boundaries, each at most MPS (or exactly up to 64 bytes).
        completions = []
        m = n = 0
        addr        = tlp.address + tlp.get_first_be_offset()
        dw_length   = tlp.length
        byte_length = tlp.get_be_byte_count()
        max_dw      = 16 if self.split_on_all_rcb else self.profile.max_payload_size // 4
        while m < dw_length:
            cpl = Tlp.create_completion_data_for_tlp(tlp, PcieId(0, 0, 0))
            cpl_dw = min(dw_length - m, max_dw)
            if m + cpl_dw < dw_length:
                # Cut so the next completion starts on an RCB boundary.
                end = (addr & ~3) + cpl_dw*4
                end -= end % 64
                if end > (addr & ~3):
                    cpl_dw = (end - (addr & ~3)) // 4
            cpl.byte_count    = byte_length - n
            cpl.lower_address = addr & 0x7f
            cpl.set_data(data[m*4:(m + cpl_dw)*4])
            cpl.rcb_blocks = ((addr & 0x3c) + cpl_dw*4 + 63) // 64
            completions.append(cpl)
            m    += cpl_dw
            n    += cpl_dw*4 - (addr & 3)
            addr += cpl_dw*4 - (addr & 3)
        return completions

    async def _fetch(self, read):
        """Reads memory for `read` now and puts it in its completions, which `_split` (and `_spoil`) sized:
        each takes the next bytes in address order; a copy made by a fault (owed nothing) the first ones,
        as the completion it copies; bytes past the read (the "long" fault) stay zero."""
        data = await self.mem_address_space.read(read.address, read.length)
        self.last_read_data_ns = get_sim_time("ns")
        read.address = None
        offset = 0
        for cpl in read.completions:
            size = len(cpl.get_data())
            if not size:
                continue
            start = 0 if cpl.rcb_blocks == 0 else offset
            chunk = data[start:start + size]
            cpl.set_data(chunk + bytes(size - len(chunk)))
            if cpl.rcb_blocks:
                offset += size

    async def _run_completer(self):
        while True:
            if not self.pending:
                self.wake.clear()
                await self.wake.wait()
                continue
            now   = get_sim_time("ns")
            ready = [p for p in self.pending if p.ready_time <= now]
            if not ready:
                wait = min(p.ready_time for p in self.pending) - now
                self.wake.clear()
                await Timer(max(math.ceil(wait * 1000), 1), "ps")
                continue
            # Completions of one read stay in order; different reads interleave when reordering is on.
            read = self.rng.choice(ready) if self.profile.reorder_completions else ready[0]
            if read.address is not None:
                await self._fetch(read)
            cpl  = read.completions.pop(0)
            if not read.completions:
                self.pending.remove(read)
            await self.send(cpl)
            self.blocks_owed -= cpl.rcb_blocks
