# This file is part of hostlink.
# Copyright (c) 2026 hostlink developers
# SPDX-License-Identifier: BSD-2-Clause

"""Read-request tags and completion reordering for LitePCIe's crossbar, one completion beat per cycle.

Same job and ports as LitePCIe's `LitePCIeTLPController`: hand out a free tag to each read request, remember
the order the requests left in, buffer each tag's completions, and deliver them in request order to the
crossbar's read ports. Completions are written straight into their request's place in one block RAM
(LitePCIe waits one cycle on the first beat of each completion).

The block RAM is a ring shared by all tags: each read request takes as many beats of it as it will return,
in request order, and gives them back when its last beat has been delivered. A read leaves only with a free
tag and room for its data, so completions always have somewhere to go, whatever the size of the requests:
32 reads of 512 bytes or 4 of 4096 in the same 16 KiB.

Requests that do not start on a data-width boundary are given one more beat than their length needs.

With `completion_checks`, a read no longer waits forever for a host that misbehaves. A completion with a
non-success status (UR, CA, CRS) ends its read; a read still waiting `timeout_cycles` (an input, 10 ms at
250 MHz by default, 0: never) after it reached the head of the delivery order ends too. Either way its
tag and its room in the ring, in flight and in headers are given back, and its remaining beats are delivered
with `err` set (stale ring data is never handed on as good). A poisoned completion (EP: the depacketizers
set `err` for it too; only a successful completion carries data, so `err` with data is EP) has its read
delivered with `err` from its first beat not yet delivered, but the read keeps its tag until its last
completion (or the timeout), so that the rest cannot land in another read. A completion for a tag not
outstanding, or a beat past the room its read reserved (which then also ends that read with `err`), is
dropped. With `check_requester_id`, so is a completion whose requester ID is not `requester_id` (the
function's bus/device/function). Each case has a saturating 32-bit counter (`timeouts`,
`error_completions`, `unexpected_completions`, `foreign_completions`; CSRs with `add_csr()`). One timer on
the head-of-line read, not one per tag: only the head holds up delivery, a read behind it is timed from
when it reaches the head (so never earlier than from its request), and 32 tags would cost 32 counters and
comparators for no earlier recovery. A completion arriving after its read timed out and its tag was handed
out again cannot be told from the new read's: the limit must stay well above
the host's completion timeout (PCIe allows up to 50 ms; the default suits the 50 us..10 ms range).
"""

from migen import *

from litex.gen import *

from litex.soc.interconnect import stream
from litex.soc.interconnect.csr import CSRStorage, CSRStatus

from litepcie.common import completion_layout
from litepcie.core.common import LitePCIeMasterInternalPort
from hostlink.cores.pcie.config import check_choice

# TLP Controller -----------------------------------------------------------------------------------

class _Wires:
    """The signals and sizes the parts of TLPController's constructor share: each part takes what it
    needs with `get` and gives what later parts need with `set` (the part's own signals keep their names
    in the generated Verilog, as when the constructor was one block)."""
    def __init__(self, **values):
        self.__dict__.update(values)

    def get(self, names):
        return [getattr(self, name) for name in names.split()]

    def set(self, **values):
        self.__dict__.update(values)


class TLPController(LiteXModule):
    """Tags and in-order completions between LitePCIe's crossbar and the PHY (the module docstring says how).

    Parameters:
        data_width, address_width  of the crossbar's master ports.
        max_pending_requests       tags, so reads in flight (a power of two, 1 to 128; tags over 31 only
                                   while `extended_tags` is set).
        max_request_bytes          largest read request (128 to 4096 bytes): sizes the smallest ring.
        buffer_bytes               the completion ring (default: a 512-byte read per tag).
        in_flight_bytes            optional limit on the bytes requested and not yet received: the hard
                                   block's completion space.
        in_flight_headers          optional limit on the completions the host may still send, a read counting
                                   one per `rcb_bytes` block it spans: the hard block's completion headers.
        rcb_bytes                  the host's read completion boundary (64 or 128).
        completion_checks          end reads on error completions, stray or overflowing beats and the timeout,
                                   with counters; `timeout_cycles` is the timeout's reset value.
        check_requester_id         also drop completions for another requester (`requester_id`).
        with_csr                   the counters and the timeout as CSRs (`add_csr`).

    Interface:
        master_in   the crossbar's side: requests in (`sink`), completions out in request order (`source`).
        master_out  the PHY's side: requests out with their tags, completions in, in any order.
        extended_tags (i), timeout_cycles (i), requester_id (i); ring_free, beats_in_flight,
        headers_in_flight, read_delivered (o); timeouts, error_completions, unexpected_completions,
        foreign_completions (o, saturating counters); timeout_event, unexpected_event (o, pulses).

    Inside, in the order the constructor builds it (one method each):

        master_in.sink ──> requests ─────────────────────────────────────> master_out.sink
                             │  a read takes a tag (tags), its beats of the ring and its
                             │  share of the in-flight limits; `issued` keeps the order
                             v
        master_out.source ─> ring writes ─> completion checks ─> progress writes
                             │  each beat at its tag's base + its beats so far; per-tag
                             │  progress in distributed RAM; faulty beats end their read
                             v
        master_in.source <── delivery <── ring, read at the head tag in `issued` order
                             │  (timeout: one timer on the head read)
                             v
                           tag return: the tag, its ring beats and its limits given back
    """
    @staticmethod
    def min_buffer_bytes(data_width, max_request_bytes):
        # One largest request, unaligned, must fit: the ring is then never too small to take a request.
        return 2**log2_int(max_request_bytes + data_width//8, need_pow2=False)

    @classmethod
    def default_buffer_bytes(cls, data_width, max_pending_requests, max_request_bytes=512):
        # A 512-byte read on every tag.
        return max(cls.min_buffer_bytes(data_width, max_request_bytes), max_pending_requests*512)

    def __init__(self, data_width, address_width, max_pending_requests, max_request_bytes=512,
        buffer_bytes=None, in_flight_bytes=None, in_flight_headers=None, rcb_bytes=64,
        completion_checks=False, timeout_cycles=2_500_000, check_requester_id=False, with_csr=False):
        check_choice("reads in flight", max_pending_requests, [2**n for n in range(8)],
                     "a power of two from 1 to 128")
        check_choice("largest read request", max_request_bytes, [2**n for n in range(7, 13)],
                     "a power of two from 128 to 4096 bytes")
        beat_bytes = data_width//8
        min_bytes  = self.min_buffer_bytes(data_width, max_request_bytes)
        if buffer_bytes is None:
            buffer_bytes = self.default_buffer_bytes(data_width, max_pending_requests, max_request_bytes)
        if not isinstance(buffer_bytes, int) or buffer_bytes & (buffer_bytes - 1) or buffer_bytes < min_bytes:
            raise ValueError(f"completion buffer must be a power of two of at least {min_bytes} bytes (one "
                f"{max_request_bytes}-byte read request), not {buffer_bytes!r}")
        self.buffer_bytes = buffer_bytes
        if in_flight_bytes is not None and not (max_request_bytes + beat_bytes <= in_flight_bytes <= buffer_bytes):
            raise ValueError(f"reads in flight must be allowed from {max_request_bytes + beat_bytes} bytes (one "
                f"{max_request_bytes}-byte read request) up to the {buffer_bytes}-byte completion buffer, "
                f"not {in_flight_bytes!r}")
        self.in_flight_bytes = in_flight_bytes
        check_choice("read completion boundary", rcb_bytes, [64, 128], "64 or 128 bytes")
        # An unaligned largest read spans one RCB block more, unless it is a whole 4 KiB page (reads never
        # cross a 4 KiB boundary).
        max_request_headers = min(max_request_bytes//rcb_bytes + 1, 4096//rcb_bytes)
        if in_flight_headers is not None and not (isinstance(in_flight_headers, int) and
            max_request_headers <= in_flight_headers <= 4096):
            raise ValueError(f"completion headers in flight must be allowed from {max_request_headers} (one "
                f"{max_request_bytes}-byte read request, split on every {rcb_bytes}-byte boundary) up to 4096, "
                f"not {in_flight_headers!r}")
        self.in_flight_headers = in_flight_headers
        self.rcb_bytes         = rcb_bytes
        if not (isinstance(timeout_cycles, int) and 0 <= timeout_cycles < 2**32):
            raise ValueError(f"completion timeout must be a number of cycles from 0 (never) to 2**32 - 1, "
                f"not {timeout_cycles!r}")
        if check_requester_id and not completion_checks:
            raise ValueError("check_requester_id needs completion_checks=True")
        if with_csr and not completion_checks:
            raise ValueError("with_csr needs completion_checks=True: the CSRs are the fault counters")
        self.completion_checks = completion_checks
        self.master_in  = LitePCIeMasterInternalPort(data_width, address_width)  # Towards the user ports.
        self.master_out = LitePCIeMasterInternalPort(data_width, address_width)  # Towards the PHY.

        # # #

        req_in,  req_out = self.master_in.sink,    self.master_out.sink
        cmp_in,  cmp_out = self.master_out.source, self.master_in.source
        tag_bits  = max(1, log2_int(max_pending_requests))
        words     = buffer_bytes//beat_bytes   # Ring size, in beats.
        ring_bits = log2_int(words)
        dw_shift  = log2_int(beat_bytes//4)    # DWs per beat, as a shift.

        w = _Wires(beat_bytes=beat_bytes, check_requester_id=check_requester_id, cmp_in=cmp_in, cmp_out=cmp_out,
            completion_checks=completion_checks, data_width=data_width, dw_shift=dw_shift,
            in_flight_bytes=in_flight_bytes, in_flight_headers=in_flight_headers,
            max_pending_requests=max_pending_requests, max_request_headers=max_request_headers,
            rcb_bytes=rcb_bytes, req_in=req_in, req_out=req_out, ring_bits=ring_bits, tag_bits=tag_bits,
            timeout_cycles=timeout_cycles, words=words)
        self._add_tags(w)
        self._add_requests(w)
        self._add_fault_signals(w)
        self._add_ring_writes(w)
        self._add_completion_checks(w)
        self._add_progress_writes(w)
        self._add_delivery(w)
        self._add_timeout(w)
        self._add_tag_return(w)
        self._add_in_flight_limit(w)
        self._add_header_limit(w)

        if with_csr:
            self.add_csr()

    # Parts of the constructor, in the order it calls them ----------------------------------------
    def _add_tags(self, w):
        """Free tags (under 32, and over 31 while the host allows them), the order requests left in (`issued`),
        the next read's tag, and the filling of the tag FIFOs after reset."""
        max_pending_requests, ring_bits, tag_bits = w.get("max_pending_requests ring_bits tag_bits")
        # Free tags, filled with every tag after reset; a tag returns when its request is complete. Tags over
        # 31 wait in a FIFO of their own, used only while the host allows them (Extended Tag Field Enable,
        # PCIe 7.5.3.4), so that a tag under 32 never queues behind them.
        self.free_tags = free_tags = stream.SyncFIFO([("tag", tag_bits)], min(max_pending_requests, 32),
            buffered=True)
        free_high_tags = None
        if max_pending_requests > 32:
            self.free_high_tags = free_high_tags = stream.SyncFIFO([("tag", tag_bits)],
                max_pending_requests - 32, buffered=True)
        # Tags in the order their requests left, with their place in the ring: completions are delivered
        # in this order.
        self.issued = issued = stream.SyncFIFO([("tag", tag_bits), ("channel", 8), ("user_id", 8),
            ("base", ring_bits), ("words", ring_bits + 1)], max_pending_requests, buffered=True)

        # The next read's tag: under 32 first, over 31 only while the host allows them.
        self.extended_tags = Signal(reset=1)   # i
        tag_ready = Signal()                   # A tag is free for the next read.
        next_tag  = Signal(tag_bits)
        take_high = Signal()                   # It comes from the tags over 31.
        self.comb += [
            tag_ready.eq(free_tags.source.valid),
            next_tag.eq(free_tags.source.tag),
        ]
        if free_high_tags is not None:
            self.comb += [
                take_high.eq(~free_tags.source.valid),
                If(take_high,
                    tag_ready.eq(self.extended_tags & free_high_tags.source.valid),
                    next_tag.eq(free_high_tags.source.tag),
                ),
            ]

        fill_count = Signal(tag_bits + 1)
        filling    = Signal()
        self.comb += filling.eq(fill_count != max_pending_requests)
        self.sync += If(filling, fill_count.eq(fill_count + 1))
        w.set(fill_count=fill_count, filling=filling, free_high_tags=free_high_tags, free_tags=free_tags,
            issued=issued, next_tag=next_tag, tag_ready=tag_ready, take_high=take_high)

    def _add_requests(self, w):
        """Writes pass; a read leaves only with a free tag, room to remember it and room for its data in the ring."""
        (dw_shift, filling, free_high_tags, free_tags, issued, next_tag, req_in, req_out, ring_bits, tag_ready,
            take_high, words) = w.get(
            "dw_shift filling free_high_tags free_tags issued next_tag req_in req_out ring_bits tag_ready "
            "take_high words")
        # Writes pass; a read leaves only with a free tag, room to remember it and room for its data.
        req_dws   = Signal(11)
        req_words = Signal(ring_bits + 1)
        alloc     = Signal(ring_bits)              # Where the next request's data goes.
        self.ring_free = free = Signal(max=words + 1, reset=words)   # o (beats of the ring not reserved)
        can_read  = Signal()
        room_in_flight = Signal(reset=1)
        room_headers   = Signal(reset=1)
        pass_req  = Signal()
        issue     = Signal()
        self.comb += [
            req_dws.eq(Mux(req_in.len[:10] == 0, 1024, req_in.len[:10])),
            req_words.eq((req_in.adr[2:2 + dw_shift] + req_dws + (2**dw_shift - 1)) >> dw_shift),
            can_read.eq(tag_ready & issued.sink.ready & ~filling & (free >= req_words) &
                room_in_flight & room_headers),
            pass_req.eq(req_in.we | can_read),
            req_in.connect(req_out, omit={"valid", "ready", "tag"}),
            req_out.valid.eq(req_in.valid & pass_req),
            req_in.ready.eq(req_out.ready & pass_req),
            req_out.tag.eq(Mux(req_in.we, req_in.tag, next_tag)),
            issued.sink.tag.eq(next_tag),
            issued.sink.channel.eq(req_in.channel),
            issued.sink.user_id.eq(req_in.user_id),
            issued.sink.base.eq(alloc),
            issued.sink.words.eq(req_words),
            issue.eq(req_out.valid & req_out.ready & req_out.last & ~req_in.we),
            issued.sink.valid.eq(issue),
            free_tags.source.ready.eq(issue & ~take_high),
        ]
        if free_high_tags is not None:
            self.comb += free_high_tags.source.ready.eq(issue & take_high)
        self.sync += If(issue, alloc.eq(alloc + req_words))
        w.set(alloc=alloc, free=free, issue=issue, req_dws=req_dws, req_words=req_words, room_headers=room_headers,
            room_in_flight=room_in_flight)

    def _add_fault_signals(self, w):
        """The fault counters and events (outputs) and the signals that end a read (`fail`, `fail_tag`,
        `timed_out`)."""
        tag_bits, timeout_cycles = w.get("tag_bits timeout_cycles")
        # Fault handling: a read ends (`fail`) on an error completion, a beat past its room or a timeout.
        self.timeout_cycles         = Signal(32, reset=timeout_cycles)  # i (0: never)
        self.timeouts               = Signal(32)                        # o
        self.error_completions      = Signal(32)                        # o
        self.unexpected_completions = Signal(32)                        # o
        self.foreign_completions    = Signal(32)                        # o
        self.requester_id           = Signal(16)                        # i (ours, with check_requester_id)
        self.timeout_event          = Signal()                          # o (a read timed out)
        self.unexpected_event       = Signal()                          # o (a completion dropped)
        fail      = Signal()          # The read of `fail_tag` ends now, with `err`.
        fail_tag  = Signal(tag_bits)
        timed_out = Signal()          # Head read past its limit, failing this cycle.
        w.set(fail=fail, fail_tag=fail_tag, timed_out=timed_out)

    def _add_ring_writes(self, w):
        """The completion ring and each tag's progress, place and size: completion beats are written at their
        tag's base plus the beats it has had."""
        (alloc, cmp_in, data_width, fill_count, filling, issue, issued, next_tag, req_words, ring_bits, tag_bits,
            timed_out, words) = w.get(
            "alloc cmp_in data_width fill_count filling issue issued next_tag req_words ring_bits tag_bits "
            "timed_out words")
        # A request's completions arrive in address order, those of different tags interleave: each beat
        # is written at its tag's base plus the beats its tag has had so far. Per-tag FIFOs instead cost
        # LUT RAM, an output register and a 2**tag_bits-way multiplexer for every bit of the completion
        # layout: more than half of the whole SoC's LUTs and flip-flops at 32 tags.
        fields     = [(name, len(getattr(cmp_in, name))) for name, _ in completion_layout(data_width).payload_layout
                      if name not in ("channel", "user_id")]
        layout     = fields + [("first", 1), ("last", 1)]
        stored     = Record(layout)
        mem        = Memory(len(stored), words)
        wport      = mem.get_port(write_capable=True)
        # Read-first: a beat is only read once its tag's write count has passed it, never in the cycle
        # it is written, so the port needs no write-to-read bypass.
        rport      = mem.get_port(async_read=False, mode=READ_FIRST)
        self.specials += mem, wport, rport

        tags     = 2**tag_bits
        cmp_tag  = Signal(tag_bits)
        ours     = Signal()
        head     = issued.source
        # Each tag's progress, in distributed RAM with one write per cycle (registers with a multiplexer per
        # tag and per writer cost about 40 LUTs a tag): `count`, the beats the tag has received since
        # reset (modular), with `done` (its read has ended: last beat in, or failed) and `failed` (delivered
        # with err). `start` holds `count` as it was when the tag's request left, so the beats in are
        # count - start, and the flags count only once a beat is in (or the read failed): a request just
        # issued reads as not done and not failed without a write at issue. The filling after reset writes
        # count 1, done, over start 0: every tag then reads as ended, so a completion for it is a stray.
        count_bits = ring_bits + 1
        progress   = Record([("count", count_bits), ("done", 1), ("failed", 1)])
        prog_mem   = Memory(len(progress), tags, init=[1 | 1 << count_bits]*tags)   # As after the filling.
        prog_wport = prog_mem.get_port(write_capable=True)
        prog_cmp   = prog_mem.get_port(async_read=True)   # At the completion's tag.
        prog_head  = prog_mem.get_port(async_read=True)   # At the head request's tag.
        prog_free  = prog_mem.get_port(async_read=True)   # At the tag being issued.
        start_mem   = Memory(count_bits, tags)
        start_wport = start_mem.get_port(write_capable=True)
        start_cmp   = start_mem.get_port(async_read=True)
        start_head  = start_mem.get_port(async_read=True)
        self.specials += prog_mem, prog_wport, prog_cmp, prog_head, prog_free
        self.specials += start_mem, start_wport, start_cmp, start_head
        at_cmp, at_head, at_free = Record(progress.layout), Record(progress.layout), Record(progress.layout)
        written_cmp  = Signal(count_bits)   # Beats in, of the completion's tag...
        written_head = Signal(count_bits)   # ...and of the head request's.
        complete_cmp  = Signal()
        complete_head = Signal()
        failed_head   = Signal()
        self.comb += [
            prog_cmp.adr.eq(cmp_tag),   at_cmp.raw_bits().eq(prog_cmp.dat_r),   start_cmp.adr.eq(cmp_tag),
            prog_head.adr.eq(head.tag), at_head.raw_bits().eq(prog_head.dat_r), start_head.adr.eq(head.tag),
            prog_free.adr.eq(next_tag), at_free.raw_bits().eq(prog_free.dat_r),
            written_cmp.eq(at_cmp.count - start_cmp.dat_r),
            written_head.eq(at_head.count - start_head.dat_r),
            complete_cmp.eq(at_cmp.done & (written_cmp != 0)),
            complete_head.eq(at_head.done & (written_head != 0)),
            failed_head.eq(at_head.failed & (written_head != 0)),
            start_wport.adr.eq(Mux(filling, fill_count, next_tag)),
            start_wport.dat_w.eq(Mux(filling, 0, at_free.count)),
            start_wport.we.eq(filling | issue),
        ]
        # Each tag's place in the ring, written when its request leaves (distributed RAM).
        base_mem   = Memory(ring_bits, tags)
        base_wport = base_mem.get_port(write_capable=True)
        base_rport = base_mem.get_port(async_read=True)
        self.specials += base_mem, base_wport, base_rport
        self.comb += [
            base_wport.adr.eq(next_tag),
            base_wport.dat_w.eq(alloc),
            base_wport.we.eq(issue),
            base_rport.adr.eq(cmp_tag),
        ]
        # Each tag's request size in beats, written when its request leaves (distributed RAM).
        words_mem   = Memory(ring_bits + 1, tags)
        words_wport = words_mem.get_port(write_capable=True)
        words_rport = words_mem.get_port(async_read=True)
        self.specials += words_mem, words_wport, words_rport
        acct_tag = Signal(tag_bits)   # The tag whose beats/headers are given back: a beat's, or a timeout's.
        self.comb += [
            words_wport.adr.eq(next_tag),
            words_wport.dat_w.eq(req_words),
            words_wport.we.eq(issue),
            words_rport.adr.eq(acct_tag),
            acct_tag.eq(Mux(timed_out, issued.source.tag, cmp_tag)),   # Not fail_tag: it depends on this.
        ]
        accept = Signal()   # This beat goes into the ring.
        ends   = Signal()   # This beat ends its read normally.
        self.comb += [
            cmp_tag.eq(cmp_in.tag[:tag_bits]),
            ours.eq(cmp_in.tag[tag_bits:] == 0),
            cmp_in.ready.eq(1),   # Room is guaranteed: a read only leaves with room for its data.
            wport.adr.eq(base_rport.dat_r + written_cmp[:ring_bits]),
            wport.dat_w.eq(Cat(*[getattr(cmp_in, name) for name, _ in layout])),
            wport.we.eq(accept),   # Not one of our tags: dropped.
            ends.eq(accept & cmp_in.last & cmp_in.end),
        ]
        w.set(accept=accept, acct_tag=acct_tag, at_cmp=at_cmp, cmp_tag=cmp_tag, complete_cmp=complete_cmp,
            complete_head=complete_head, count_bits=count_bits, ends=ends, failed_head=failed_head, fields=fields,
            head=head, layout=layout, ours=ours, prog_wport=prog_wport, rport=rport, start_cmp=start_cmp,
            start_head=start_head, tags=tags, words_rport=words_rport, written_cmp=written_cmp,
            written_head=written_head)

    def _add_completion_checks(self, w):
        """Which beats go into the ring; with `completion_checks`, the faulty ones end their read and are counted."""
        (accept, check_requester_id, cmp_in, cmp_tag, complete_cmp, completion_checks, fail, fail_tag, filling,
            ours, timed_out, words_rport, written_cmp) = w.get(
            "accept check_requester_id cmp_in cmp_tag complete_cmp completion_checks fail fail_tag filling ours "
            "timed_out words_rport written_cmp")
        poisoned = None   # With completion_checks, EP completions (below).
        if not completion_checks:
            self.comb += accept.eq(cmp_in.valid & ours & ~filling)
        else:
            stray    = Signal()
            foreign  = Signal()   # For another requester: not ours, whatever its tag.
            overflow = Signal()
            status   = Signal()   # Non-success status: no data, ends its read.
            poisoned = Signal()   # EP: data, but not to be used; more completions of its read may follow.
            if check_requester_id:
                self.comb += foreign.eq(cmp_in.req_id != self.requester_id)
            self.comb += [
                # Not outstanding: its read has ended (or its tag was never issued).
                stray.eq(~ours | complete_cmp | foreign | filling),
                # The beats a read reserved are all in: this one has nowhere to go without overwriting
                # the next read's.
                overflow.eq(~stray & (written_cmp >= words_rport.dat_r)),
                # Only a successful completion carries data (PCIe 2.2.9): `err` with data is the EP bit.
                status.eq(  ~stray & cmp_in.err & (cmp_in.len == 0)),
                poisoned.eq(~stray & cmp_in.err & (cmp_in.len != 0)),
                accept.eq(cmp_in.valid & ~stray & ~overflow & ~status),
                If(timed_out,
                    fail.eq(1),
                ).Elif(cmp_in.valid & (overflow | status),
                    fail.eq(1),
                    fail_tag.eq(cmp_tag),
                ),
            ]

            def saturating(counter, increment):
                return If(increment & (counter != 2**32 - 1), counter.eq(counter + 1))
            self.sync += [
                saturating(self.timeouts,               timed_out),
                saturating(self.error_completions,      cmp_in.valid & (status | poisoned) & cmp_in.first),
                # Per TLP: its first beat if its tag is not ours, or the beat that overflows.
                saturating(self.unexpected_completions, cmp_in.valid & ((stray & ~foreign & cmp_in.first) | overflow)),
                saturating(self.foreign_completions,    cmp_in.valid & foreign & cmp_in.first),
            ]
            # For the hard block's error reporting (cfg_err_*): one pulse per event.
            self.comb += [
                self.timeout_event.eq(timed_out),
                self.unexpected_event.eq(cmp_in.valid & ((stray & cmp_in.first) | overflow)),
            ]
        w.set(poisoned=poisoned)

    def _add_progress_writes(self, w):
        """The one write per cycle to the progress RAM: the filling, a failed read, or an accepted beat."""
        (accept, at_cmp, cmp_in, cmp_tag, completion_checks, count_bits, fail, fail_tag, fill_count, filling,
            poisoned, prog_wport, start_cmp, start_head, timed_out, words_rport, written_cmp) = w.get(
            "accept at_cmp cmp_in cmp_tag completion_checks count_bits fail fail_tag fill_count filling poisoned "
            "prog_wport start_cmp start_head timed_out words_rport written_cmp")
        # One write per cycle: the filling, a failed read (never with an accepted beat: a beat that fails its
        # read is not accepted, and a timeout fails only in a cycle without a beat), or an accepted beat.
        # A failed read has all its beats in (its remaining ones go out, with err), and is done.
        # A poisoned completion's read is delivered with err from the first beat not yet delivered (its
        # beats before it arrived in address order, good), but goes on to its end, keeping its tag until
        # then: a later completion of it must not land in a read that reuses the tag.
        poisoned_beat = Signal()
        if completion_checks:
            self.comb += poisoned_beat.eq(cmp_in.valid & poisoned)
        fail_start = Signal(count_bits)
        fail_count = Signal(count_bits)
        next_count = Signal(count_bits)
        self.comb += [
            fail_start.eq(Mux(timed_out, start_head.dat_r, start_cmp.dat_r)),   # fail_tag's start.
            fail_count.eq(fail_start + words_rport.dat_r),
            next_count.eq(at_cmp.count + 1),
            prog_wport.we.eq(filling | fail | accept),
            If(filling,
                prog_wport.adr.eq(fill_count),
                prog_wport.dat_w.eq(Cat(Constant(1, count_bits), Constant(1, 1), Constant(0, 1))),
            ).Elif(fail,
                prog_wport.adr.eq(fail_tag),
                prog_wport.dat_w.eq(Cat(fail_count, Constant(1, 1), Constant(1, 1))),
            ).Else(
                prog_wport.adr.eq(cmp_tag),
                prog_wport.dat_w.eq(Cat(next_count,
                    (cmp_in.last & cmp_in.end) | (at_cmp.done   & (written_cmp != 0)),
                    poisoned_beat              | (at_cmp.failed & (written_cmp != 0)))),
            ),
        ]

    def _add_delivery(self, w):
        """Completions out, in request order, through a small FIFO that also carries what to give back."""
        (cmp_out, complete_head, completion_checks, failed_head, fields, head, layout, ring_bits, rport, tag_bits,
            written_head) = w.get(
            "cmp_out complete_head completion_checks failed_head fields head layout ring_bits rport tag_bits "
            "written_head")
        # The head request's beats are read as soon as they are written. The beat read with its tag
        # complete and no beat left is the request's last: the head moves on in the same cycle, so
        # consecutive requests stream without a bubble. Reads land one cycle later in a small FIFO;
        # a read is only issued with room for it there.
        out_depth = 4
        read_ptr  = Signal(ring_bits + 1)
        head_written  = Signal(ring_bits + 1)
        head_complete = Signal()
        readable  = Signal()
        final     = Signal()
        do_read   = Signal()
        # A read ended early (a beat past its room, a timeout with all its beats in) needs a beat left to
        # deliver its end on: with the checks, its last reserved beat waits for its end.
        hold_last = Signal()
        if completion_checks:
            self.comb += hold_last.eq(~head_complete & (read_ptr + 1 == head.words))
        meta_layout = [("channel", 8), ("user_id", 8), ("free_tag", tag_bits), ("free_words", ring_bits + 1),
            ("final", 1), ("failed", 1), ("head_first", 1)]
        self.out_fifo = out_fifo = stream.SyncFIFO(fields + meta_layout, out_depth)
        read_valid = Signal()
        read_meta  = Record(meta_layout)
        self.comb += [
            head_written.eq(written_head),
            head_complete.eq(complete_head),
            readable.eq(head.valid & (read_ptr != head_written) & ~hold_last),
            final.eq(head_complete & (read_ptr + 1 == head_written)),
            do_read.eq(readable & (out_fifo.level + read_valid < out_depth)),
            rport.adr.eq(head.base + read_ptr[:ring_bits]),
            head.ready.eq(do_read & final),
        ]
        self.sync += [
            If(do_read,
                read_ptr.eq(Mux(final, 0, read_ptr + 1))
            ),
            read_valid.eq(do_read),
            read_meta.channel.eq(head.channel),
            read_meta.user_id.eq(head.user_id),
            read_meta.free_tag.eq(head.tag),
            read_meta.free_words.eq(head.words),
            read_meta.final.eq(final),
            read_meta.failed.eq(failed_head),
            read_meta.head_first.eq(read_ptr == 0),
        ]
        read_data = Record(layout)
        self.comb += [
            read_data.raw_bits().eq(rport.dat_r),
            out_fifo.sink.valid.eq(read_valid),
            *[getattr(out_fifo.sink, name).eq(getattr(read_data, name)) for name, _ in layout],  # With first/last.
            *[getattr(out_fifo.sink, name).eq(getattr(read_meta, name)) for name, _ in meta_layout],
            # A failed read's beats read after it failed may be stale: flagged, and framed as one completion
            # ending with the read.
            If(read_meta.failed,
                out_fifo.sink.err.eq(1),
                out_fifo.sink.first.eq(read_meta.head_first),
                out_fifo.sink.last.eq(read_meta.final),
                out_fifo.sink.end.eq(read_meta.final),
            ),
            out_fifo.source.connect(cmp_out, omit={"free_tag", "free_words", "final", "failed", "head_first"}),
        ]
        w.set(head_complete=head_complete, out_fifo=out_fifo)

    def _add_timeout(self, w):
        """One timer on the head read (`completion_checks`)."""
        (cmp_in, completion_checks, fail_tag, head, head_complete, timed_out) = w.get(
            "cmp_in completion_checks fail_tag head head_complete timed_out")
        # One timer, on the head read while its data is not all in (see the docstring). It fails the read in
        # a cycle without a completion beat, so that only one read gives its room back at a time.
        if completion_checks:
            timer   = Signal(32)
            waiting = Signal()
            expired = Signal()
            self.comb += [
                waiting.eq(head.valid & ~head_complete),
                expired.eq(waiting & (self.timeout_cycles != 0) & (timer >= self.timeout_cycles)),
                timed_out.eq(expired & ~cmp_in.valid),
                If(timed_out, fail_tag.eq(head.tag)),
            ]
            self.sync += If(~waiting,
                timer.eq(0)
            ).Elif(~expired,
                timer.eq(timer + 1)
            )

    def _add_tag_return(self, w):
        """A tag and its read's beats of the ring given back once its last beat is delivered."""
        (fill_count, filling, free, free_high_tags, free_tags, issue, out_fifo, req_words, tag_bits) = w.get(
            "fill_count filling free free_high_tags free_tags issue out_fifo req_words tag_bits")
        # A tag and its request's beats of the ring are free again once its last beat has been delivered.
        self.read_delivered = delivered = Signal()   # o (a read's last beat delivered, in request order)
        self.comb += delivered.eq(out_fifo.source.valid & out_fifo.source.ready & out_fifo.source.final)
        returned     = Signal()            # A tag goes (back) to its free FIFO: at reset, or delivered.
        returned_tag = Signal(tag_bits)
        self.comb += [
            returned.eq(filling | delivered),
            returned_tag.eq(Mux(filling, fill_count, out_fifo.source.free_tag)),
            free_tags.sink.tag.eq(returned_tag),
            free_tags.sink.valid.eq(returned & (returned_tag < 32)),
        ]
        if free_high_tags is not None:
            self.comb += [
                free_high_tags.sink.tag.eq(returned_tag),
                free_high_tags.sink.valid.eq(returned & (returned_tag >= 32)),
            ]
        self.sync += free.eq(free + Mux(delivered, out_fifo.source.free_words, 0) - Mux(issue, req_words, 0))

    def _add_in_flight_limit(self, w):
        """Reads in flight kept within `in_flight_bytes` (optional)."""
        (accept, beat_bytes, ends, fail, in_flight_bytes, issue, req_words, ring_bits, room_in_flight, timed_out,
            words_rport, written_cmp, written_head) = w.get(
            "accept beat_bytes ends fail in_flight_bytes issue req_words ring_bits room_in_flight timed_out "
            "words_rport written_cmp written_head")
        # Optionally, the beats requested but not yet received stay within `in_flight_bytes`: the hard
        # block's own completion space, which the host's completions fill before they reach us. That space
        # is given back as the beats arrive, in whatever order; the ring's room only once they have been
        # delivered in request order. With a ring larger than the hard block's space, completions that
        # wait behind an earlier request's no longer hold back the next read.
        if in_flight_bytes is not None:
            limit_words = in_flight_bytes//beat_bytes
            self.beats_in_flight = in_flight = Signal(max=limit_words + 1)   # o
            in_flight_next = Signal(max=limit_words + 2**(ring_bits + 1))   # Own width, as headers_next.
            received    = Signal(ring_bits + 1)   # Beats given back this cycle.
            # A request's last beat gives back the beats its completions did not use (an aligned request's
            # spare one); a failed request all those it has not received.
            self.comb += [
                If(fail | ends,
                    received.eq(words_rport.dat_r - Mux(timed_out, written_head, written_cmp))
                ).Elif(accept,
                    received.eq(1)
                ),
                in_flight_next.eq(in_flight + req_words),
                room_in_flight.eq(in_flight_next <= limit_words),
            ]
            self.sync += in_flight.eq(in_flight + Mux(issue, req_words, 0) - received)

    def _add_header_limit(self, w):
        """Completion headers in flight kept within `in_flight_headers` (optional)."""
        (accept, acct_tag, cmp_in, ends, fail, fill_count, filling, in_flight_headers, issue, max_request_headers,
            next_tag, rcb_bytes, req_dws, req_in, room_headers, tags) = w.get(
            "accept acct_tag cmp_in ends fail fill_count filling in_flight_headers issue max_request_headers "
            "next_tag rcb_bytes req_dws req_in room_headers tags")
        # Optionally, the completions the host may still send stay within `in_flight_headers`: the hard
        # block's completion header space (64 on pcie3_7x). A host may split a read on every
        # read-completion boundary (RCB), so a read reserves one header per RCB block it spans. Each
        # completion that arrives gives back the RCB blocks it covers, the request's last one whatever
        # is left. Counting bytes alone is not enough: the block drains a 64-byte completion in three
        # 256-bit beats (5.3 GB/s) while the link delivers them at 5.7 GB/s, so with 15,872 bytes of
        # 64-byte completions in flight (248) the 64 headers overflow and completions are dropped.
        if in_flight_headers is not None:
            rcb_dws      = rcb_bytes//4
            rcb_shift    = log2_int(rcb_dws)
            hdr_bits     = bits_for(max_request_headers)
            self.headers_in_flight = headers = Signal(max=in_flight_headers + 1)   # o
            # The sum is given its own width: Verilog would compare it at the width of its operands.
            headers_next = Signal(max=in_flight_headers + 2**hdr_bits)
            req_headers  = Signal(hdr_bits)
            cpl_dws      = Signal(11)
            cpl_headers  = Signal(hdr_bits)
            hdr_returned = Signal(hdr_bits)            # Headers given back this cycle.
            # Each tag's headers given back so far (distributed RAM, read and written at acct_tag; the
            # filling after reset clears it).
            taken_mem    = Memory(hdr_bits, tags)
            taken_wport  = taken_mem.get_port(write_capable=True)
            taken_rport  = taken_mem.get_port(async_read=True)
            self.specials += taken_mem, taken_wport, taken_rport
            hdr_taken    = Signal(hdr_bits)
            # Each tag's reservation, written when its request leaves (distributed RAM).
            hdr_mem      = Memory(hdr_bits, tags)
            hdr_wport    = hdr_mem.get_port(write_capable=True)
            hdr_rport    = hdr_mem.get_port(async_read=True)
            self.specials += hdr_mem, hdr_wport, hdr_rport
            self.comb += [
                req_headers.eq((req_in.adr[2:2 + rcb_shift] + req_dws + (rcb_dws - 1)) >> rcb_shift),
                headers_next.eq(headers + req_headers),
                room_headers.eq(headers_next <= in_flight_headers),
                hdr_wport.adr.eq(next_tag),
                hdr_wport.dat_w.eq(req_headers),
                hdr_wport.we.eq(issue),
                hdr_rport.adr.eq(acct_tag),
                cpl_dws.eq(Mux(cmp_in.len == 0, 1024, cmp_in.len)),
                cpl_headers.eq((cmp_in.adr[2:2 + rcb_shift] + cpl_dws + (rcb_dws - 1)) >> rcb_shift),
                taken_rport.adr.eq(acct_tag),
                hdr_taken.eq(taken_rport.dat_r),
                If(fail | ends,
                    If(hdr_rport.dat_r > hdr_taken,
                        hdr_returned.eq(hdr_rport.dat_r - hdr_taken)
                    )
                ).Elif(accept & cmp_in.last,
                    hdr_returned.eq(cpl_headers)
                ),
            ]
            self.sync += headers.eq(headers + Mux(issue, req_headers, 0) - hdr_returned)
            self.comb += [
                taken_wport.adr.eq(Mux(filling, fill_count, acct_tag)),
                If(filling | fail | ends,
                    taken_wport.we.eq(1),
                    taken_wport.dat_w.eq(0),
                ).Elif(accept & cmp_in.last,
                    taken_wport.we.eq(1),
                    taken_wport.dat_w.eq(hdr_taken + cpl_headers),
                ),
            ]

    def add_csr(self):
        """The fault counters and the completion timeout, for the SoC's CSR bus (`completion_checks`)."""
        if not self.completion_checks:
            raise ValueError("add_csr needs completion_checks=True: the CSRs are the fault counters")
        self._timeout_cycles = CSRStorage(32, reset=self.timeout_cycles.reset.value, description=
            "Cycles a read may wait for its completions once at the head of the delivery order; 0: forever.")
        self._timeouts = CSRStatus(32, description="Reads ended by the completion timeout (saturates).")
        self._error_completions = CSRStatus(32, description=
            "Completions with a non-success status (UR, CA, CRS), each ending its read (saturates).")
        self._unexpected_completions = CSRStatus(32, description=
            "Completions dropped: tag not outstanding, or past the room their read reserved (saturates).")
        self.comb += [
            self.timeout_cycles.eq(self._timeout_cycles.storage),
            self._timeouts.status.eq(self.timeouts),
            self._error_completions.status.eq(self.error_completions),
            self._unexpected_completions.status.eq(self.unexpected_completions),
        ]
