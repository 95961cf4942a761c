// This file is part of hostlink.
// Copyright (c) 2026 hostlink developers
// SPDX-License-Identifier: BSD-2-Clause
//
// The fast path of the VC709's Gen3 PCIe SoC: the Verilated SoC and the `pcie3_7x` hard block's user interface
// (RQ, RC, CQ, CC at 256 bits, RC straddled or not; configuration status, configuration management, MSI,
// sequence numbers, completion timeout), beat by beat, in C++, on fast_common.h's link and host. Python
// (run.py) loads it with ctypes as it loads the pcie_7x one.
//
// The block is what the reference runs (`./sim.py dma --reference`): cocotbext-pcie's UltraScalePcieDevice
// (us_model.py, its RQ/RC/CQ/CC sources and sinks in interface.py, its descriptors in tlp.py) with
// hostlink's additions in sim/pcie/v7gen3.py (MSIs answered and refused, error reports, the completion
// timeout, the receive buffer's drops). Each function below names what it follows. The reference's
// coroutines hand work on within a time step; here each is done at the clock edge at which the reference's
// port shows it, and doc/pcie_sim.md says where the two differ.

#include "fast_common.h"

namespace {

// Bytes of a TLP from a request descriptor's fields (cocotbext-pcie's Tlp.pack()).
Bytes request_tlp(bool write, uint64_t address, uint32_t length_dw, uint16_t requester, uint8_t tag, int tc,
                  int attr, bool ep, int first_be, int last_be, const uint32_t* payload, size_t payload_dw) {
    bool wide = address > 0xffffffffull;
    Bytes b(wide ? 16 : 12);
    uint32_t dw0 = ((write ? 2u : 0u) | (wide ? 1u : 0u)) << 29 | (length_dw & 0x3ff);
    dw0 |= (uint32_t)(tc & 7) << 20 | (uint32_t)((attr >> 2) & 1) << 18 | (uint32_t)ep << 14 | (uint32_t)(attr & 3) << 12;
    put_be32(&b[0], dw0);
    put_be32(&b[4], (uint32_t)requester << 16 | (uint32_t)tag << 8 | (last_be & 0xf) << 4 | (first_be & 0xf));
    if (wide) { put_be32(&b[8], address >> 32); put_be32(&b[12], (uint32_t)address & ~3u); }
    else put_be32(&b[8], (uint32_t)address & ~3u);
    for (size_t i = 0; i < payload_dw; i++)
        for (int k = 0; k < 4; k++) b.push_back((uint8_t)(payload[i] >> (8 * k)));
    return b;
}

// A payload DWORD as the interfaces carry it: bytes in memory order, the first in bits 7:0.
inline uint32_t le32(const uint8_t* p) { return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24; }

// A frame on one of the block's AXI4-Stream interfaces (cocotbext-pcie's UsPcieFrame): DWORDs, descriptor
// first, with per-DWORD byte enables and the first beat's sideband.
struct Frame {
    std::vector<uint32_t> dw;
    std::vector<uint8_t> be;
    int first_be = 0, last_be = 0, seq_num = 0;
    bool discontinue = false;
    uint32_t dword_count = 0;          // RC: the descriptor's dword count (counted as the user logic takes it).
};

// One beat the block drives on RC or CQ.
struct Beat {
    uint32_t data[8] = {0};
    uint32_t keep = 0;
    uint32_t user[3] = {0};            // tuser, bits 0 to 95.
    bool last = false;
    std::vector<uint32_t> ended;       // RC: the dword counts of the completions this beat ends.
    void set_user(int bit, uint32_t value) {
        // `value` (at most 32 bits wide) ORed in at `bit`.
        uint64_t v = (uint64_t)value << (bit % 32);
        user[bit / 32] |= (uint32_t)v;
        if (bit / 32 + 1 < 3) user[bit / 32 + 1] |= (uint32_t)(v >> 32);
    }
};

// cocotbext-pcie's UsPcieSource: a builder that packs frames into beats one beat ahead of the port (its `_run`:
// a beat built while the one before it waits to be driven), and the port, which drives the next beat at a
// clock edge where the bus is free (its `_run_source`). `segments` 2: RC straddling, a frame may start in
// the upper half of a beat in which another ended.
struct Source {
    int segments = 1;
    int user_be_offset = 0;             // Byte enables in tuser: RC at bit 0, CQ at bit 8.
    bool cq = false;                    // CQ's first/last byte enables and sop bit; RC's is_sof/is_eof bits.
    std::deque<Frame> queue;
    bool have_frame = false; Frame frame; size_t offset = 0; bool first = true;
    bool have_drive = false; Beat drive;        // The beat the port drives next (drive_obj),
    bool have_pending = false; Beat pending;    // and the one built after it, waiting (in _drive()).
    bool valid = false;                         // What tvalid holds.

    Beat build() {
        // UsPcieSource subclasses' _run(): one beat from the frame in progress and, in a second segment, the
        // next frame queued.
        Beat t;
        int sop = 0, eop = 0;
        for (int seg = 0; seg < segments; seg++) {
            if (!have_frame) {
                if (queue.empty()) break;
                frame = std::move(queue.front()); queue.pop_front();
                have_frame = true; offset = 0; first = true;
            }
            if (first) {
                first = false;
                if (cq) {
                    t.set_user(0, frame.first_be & 0xf);
                    t.set_user(4, frame.last_be & 0xf);
                    t.set_user(40, 1);
                } else {
                    t.set_user(32 + sop, 1);
                }
                sop++;
            }
            int last_lane = 0;
            for (int k = 0; k < 8 / segments; k++) {
                int lane = k + seg * (8 / segments);
                if (offset < frame.dw.size()) {
                    t.data[lane] = frame.dw[offset];
                    t.keep |= 1u << lane;
                    t.set_user(user_be_offset + lane * 4, frame.be[offset]);
                    offset++;
                    last_lane = lane;
                }
            }
            if (offset >= frame.dw.size()) {
                if (!cq) {
                    t.set_user(34 + eop * 4, 1);
                    t.set_user(35 + eop * 4, last_lane);
                }
                eop++;
                if (segments == 1) t.last = true;
                t.ended.push_back(frame.dword_count);
                have_frame = false;
            }
        }
        return t;
    }

    void run_builder() {
        // _run(): build while there is a frame and room (drive_obj, then one beat waiting in _drive()).
        while (!have_pending) {
            if (!have_frame && queue.empty()) return;
            if (!have_frame) { frame = std::move(queue.front()); queue.pop_front(); have_frame = true; offset = 0; first = true; }
            Beat t = build();
            if (!have_drive) { drive = std::move(t); have_drive = true; }
            else { pending = std::move(t); have_pending = true; }
        }
    }

    void push(Frame&& f) { queue.push_back(std::move(f)); run_builder(); }

    // _run_source() at a clock edge: `ready` is tready before the edge. Returns the beat the user logic took
    // at this edge (if any), and puts the next on the bus (out, and whether tvalid is high).
    bool edge(bool ready, Beat& taken, bool& drive_now, Beat& out) {
        bool took = valid && ready;
        if (took) taken = std::move(current);
        drive_now = false;
        if (took || !valid) {
            if (have_drive) {
                out = drive; current = std::move(drive); have_drive = false; drive_now = true; valid = true;
                if (have_pending) { drive = std::move(pending); have_pending = false; have_drive = true; }
                run_builder();
            } else {
                valid = false;
            }
        }
        return took;
    }
    Beat current;                       // The beat on the bus.
};

struct Request { bool active = false; uint64_t address; uint32_t length_dw; int first_be, last_be;
                 uint16_t requester; int tc, attr; bool read; uint64_t serial; };

// A 256-bit AXI stream into the block (RQ, CC): its inputs as sampled before the edge, and the DWs of the TLP
// whose beats it has taken so far (FastRqSink, CcSink: tkeep per DW; a discontinued frame is flagged).
struct StreamIn {
    uint32_t data[8]; uint32_t keep = 0; uint64_t user = 0; bool valid = false, last = false;
    bool ready = false, in_frame = false, discontinue = false;
    std::vector<uint32_t> dw;

    // The beat on the inputs, if taken: `started` when it is a frame's first; true when it is its last.
    bool take(bool discontinue_bit, bool& started) {
        started = false;
        if (!(ready && valid)) return false;
        if (!in_frame) { in_frame = started = true; dw.clear(); discontinue = false; }
        if (discontinue_bit) discontinue = true;
        for (int k = 0; k < 8; k++) if (keep >> k & 1) dw.push_back(data[k]);
        if (last) in_frame = false;
        return last;
    }
};

struct USSim : SimBase {
    // Hard block configuration (fs_hard_block).
    bool straddle = true;
    double backpressure = 0;
    int cplh_limit = 64, cpld_limit = 16384 / 16;
    int most_cplh_used = 0;
    uint64_t rx_cpl_drops = 0, rx_cpl_bytes = 0, rx_cpl_last_ps = 0, rc_wait_cycles = 0;
    uint64_t rx_tlps = 0, tx_tlps = 0, dropped_requests = 0, tag_errors = 0;
    int reset_edges = 27;               // cocotbext's _run_reset: two edges, 100 ns, an edge.

    // Requester (RQ in, RC out).
    StreamIn rq; int rq_first_be = 0, rq_last_be = 0, rq_seq = 0;
    std::deque<std::pair<uint64_t, int>> seq_nums;   // (when the TLP entered the port's queue, its number).
    Request active[256];
    uint64_t request_serial = 0;
    Source rc, cq;

    // Completer (CQ out, CC in).
    std::deque<std::pair<uint64_t, Frame>> cq_waiting;   // Requests for the next clock edge (_run_cq_logic).
    StreamIn cc;

    // Configuration management (_run_cfg_mgmt_logic): a read or write answered on the fourth edge.
    int mgmt_edges = 0; bool mgmt_done = false; uint32_t mgmt_addr = 0; bool mgmt_read = false;

    // MSIs (v7gen3.py's _run_7series_status).
    uint64_t msis_sent = 0, msis_refused = 0, msi_refusals = 0;
    uint64_t msi_sent_edge = 0; bool msi_busy = false, msi_pulse = false, fail_pulse = false;

    // Completion timeout (v7gen3.py's _run_completion_timeout: a check every 500 ns).
    uint64_t completion_timeout_ps = 50000000000ull, next_check_ps = 500000, completion_timeouts = 0;
    std::vector<std::pair<uint64_t, uint64_t>> timer_started;   // Per tag: (request serial, first seen).

    uint64_t error_uncor = 0; bool prev_uncor = false;

    // Sampled before the edge.
    bool rc_tready = false, cq_tready = false;
    uint32_t msi_int = 0; bool mgmt_rd = false, mgmt_wr = false, uncor = false; uint32_t mgmt_address = 0;

    USSim() {
        rc.segments = 1; rc.user_be_offset = 0; rc.cq = false;
        cq.segments = 1; cq.user_be_offset = 8; cq.cq = true;
        timer_started.assign(256, {0, 0});
    }

    void edge_sample() override {
        get_words(HB(s_axis_rq_tdata), rq.data);
        rq.keep = HB(s_axis_rq_tkeep); rq.user = HB(s_axis_rq_tuser);
        rq.valid = HB(s_axis_rq_tvalid); rq.last = HB(s_axis_rq_tlast);
        get_words(HB(s_axis_cc_tdata), cc.data);
        cc.keep = HB(s_axis_cc_tkeep); cc.user = HB(s_axis_cc_tuser);
        cc.valid = HB(s_axis_cc_tvalid); cc.last = HB(s_axis_cc_tlast);
        rc_tready = HB(m_axis_rc_tready) & 1;
        cq_tready = HB(m_axis_cq_tready) & 1;
        msi_int = HB(cfg_interrupt_msi_int);
        mgmt_rd = HB(cfg_mgmt_read); mgmt_wr = HB(cfg_mgmt_write); mgmt_address = HB(cfg_mgmt_addr);
        uncor = HB(cfg_err_uncor_in);
    }

    void edge() override {
        // What reached the device before this edge; what reaches it at the edge is seen at the next one (the
        // reference's port sleeps until the edge after a frame is queued).
        deliver_before_now();
        if (reset_edges > 0) {
            HB(user_reset) = 1;
            if (--reset_edges == 0) HB(user_reset) = 0;
        }
        HB(user_lnk_up) = 1;
        if (uncor && !prev_uncor) error_uncor++;
        prev_uncor = uncor;
        rq_edge();
        cc_edge();
        rc_edge();
        cq_edge();
        seq_num_edge();
        msi_edge();
        mgmt_edge();
        deliver();
    }

    void deliver_before_now() {
        uint64_t t = now;
        now = t - 1;
        deliver();
        now = t;
    }

    // Requester: RQ -> TLPs (RqSink, us_model's _run_rq_logic) -----------------------------------

    void rq_edge() {
        bool started, ended = rq.take(rq.user >> 11 & 1, started);
        if (started) {
            rq_first_be = rq.user & 0xf; rq_last_be = (rq.user >> 4) & 0xf; rq_seq = (rq.user >> 24) & 0xf;
        }
        if (ended) rq_request();
        // FastRqSink: tready low on the cycles the pause generator draws.
        rq.ready = !paused();
        HB(s_axis_rq_tready) = rq.ready;
    }

    bool paused() { return backpressure > 0 && uniform(device_rng) < backpressure; }

    void rq_request() {
        // Tlp_us.unpack_us_rq and _run_rq_logic.
        if (rq.discontinue || rq.dw.size() < 4) { dropped_requests++; return; }
        const uint32_t* d = rq.dw.data();
        uint64_t address = ((uint64_t)d[1] << 32) | (d[0] & ~3u);
        uint32_t length = d[2] & 0x7ff;
        int req_type = (d[2] >> 11) & 0xf;
        bool ep = d[2] >> 15 & 1;
        uint16_t requester = d[2] >> 16;
        uint8_t tag = d[3] & 0xff;
        bool requester_enable = d[3] >> 24 & 1;
        int tc = (d[3] >> 25) & 7, attr = (d[3] >> 28) & 7;
        if (!requester_enable) requester = (uint16_t)(cfg_bus << 8 | (requester & 0xff));
        if (req_type > 1 || !(cfg_command & 4)) { dropped_requests++; return; }   // Only memory; bus master.
        bool write = req_type == 1;
        Bytes tlp = request_tlp(write, address, length, requester, tag, tc, attr, ep, rq_first_be, rq_last_be,
                                write ? d + 4 : nullptr, write ? rq.dw.size() - 4 : 0);
        if (!write) {
            bool extended = cfg_dcommand >> 8 & 1;
            if (tag >= (extended ? 64 : 32) || active[tag].active) { tag_errors++; return; }
            Request& r = active[tag];
            r.active = true; r.address = address; r.length_dw = length ? length : 1024;
            r.first_be = rq_first_be; r.last_be = rq_last_be; r.requester = requester; r.tc = tc; r.attr = attr;
            r.read = true; r.serial = ++request_serial;
        }
        tx_tlps++;
        up.send(std::move(tlp), now);
        seq_nums.push_back({up.last_put_ps, rq_seq});
    }

    void seq_num_edge() {
        // _run_rq_seq_num_logic: one number per edge, of a TLP that entered the port's queue before it.
        HB(pcie_rq_seq_num_vld) = 0;
        if (!seq_nums.empty() && seq_nums.front().first < now) {
            HB(pcie_rq_seq_num) = seq_nums.front().second;
            HB(pcie_rq_seq_num_vld) = 1;
            seq_nums.pop_front();
        }
    }

    // Completions: TLPs -> RC (us_model's upstream_recv, _run_rc_logic; RcSource) ---------------------

    void receive_completion(Bytes&& tlp, uint64_t t) {
        TlpView v(tlp);
        if (v.cpl_requester_id() != device_id()) { unexpected_completions++; return; }
        bool has_data = v.has_data();
        uint32_t length = has_data ? v.length_dw() : 0;
        uint32_t byte_count = ((tlp[6] & 0xf) << 8) | tlp[7];
        if (!byte_count) byte_count = 4096;
        uint32_t lower = tlp[11] & 0x7f;
        int status = v.status();
        int tag = v.cpl_tag();
        int tc = (tlp[1] >> 4) & 7, attr = ((tlp[1] >> 2) & 1) << 2 | ((tlp[2] >> 4) & 3);
        uint16_t completer = ((uint16_t)tlp[4] << 8) | tlp[5];
        int error = 0; bool completed = false;
        if (v.ep()) error = 1;
        Request& r = active[tag];
        if (!r.active) error = 6;
        else if (v.cpl_requester_id() != r.requester || attr != r.attr || tc != r.tc) error = 4;
        else if (status != 0) { error = 2; completed = true; r.active = false; }
        else if (r.read) {
            uint64_t expected = r.address + be_offset(r.first_be) + be_byte_count(r.length_dw, r.first_be, r.last_be)
                                - byte_count;
            if (lower != (expected & 0x7f)) error = 5;
            else lower = expected & 0xfff;
            if (byte_count <= length * 4 - (lower & 3)) { completed = true; r.active = false; }
            if (!has_data) { error = 3; completed = true; r.active = false; }
        } else { completed = true; r.active = false; }
        // The receive buffer (64 headers, 16 KiB): the completion moves on to the RC port in the time step it
        // arrives, so it holds one at a time.
        int data_fc = (int)((length + 3) / 4);
        if (1 > cplh_limit || data_fc + 1 > cpld_limit) { rx_cpl_drops++; return; }
        most_cplh_used = std::max(most_cplh_used, 1);
        Frame f;
        f.dw.push_back((lower & 0xfff) | (uint32_t)(error & 0xf) << 12 | (byte_count & 0x1fff) << 16 | (uint32_t)completed << 30);
        f.dw.push_back((length & 0x7ff) | (uint32_t)(status & 7) << 11 | (uint32_t)v.ep() << 14 | (uint32_t)v.cpl_requester_id() << 16);
        f.dw.push_back((uint32_t)tag | (uint32_t)completer << 8 | (uint32_t)tc << 25 | (uint32_t)attr << 28);
        f.be.assign(3, 0);
        size_t payload_dw = has_data ? v.payload_bytes() / 4 : 0;
        const uint8_t* p = has_data ? v.payload() : nullptr;
        for (size_t i = 0; i < payload_dw; i++)
            f.dw.push_back(le32(p + 4 * i));
        rc_byte_enables(f, lower, byte_count, length, payload_dw);
        f.dword_count = length & 0x7ff;
        (void)t;
        rc.push(std::move(f));
    }

    static void rc_byte_enables(Frame& f, uint32_t lower, uint32_t byte_count, uint32_t length, size_t n) {
        // Tlp_us.pack_us_rc's byte enables.
        int first = (0xf << (lower & 3)) & 0xf, last;
        if (byte_count + (lower & 3) > length * 4) last = 0xf;
        else last = 0xf >> ((uint32_t)(4 - byte_count - lower) & 3);
        if (n == 1) { first &= last; last = 0; }
        if (n >= 1) f.be.push_back(first);
        for (size_t i = 2; i < n; i++) f.be.push_back(0xf);
        if (n > 1) f.be.push_back(last);
    }

    void rc_edge() {
        // The user logic takes a beat (tvalid and tready at the edge): v7gen3.py's _run_rc_count counts the
        // completions it ends, and the cycles a beat waited.
        if (rc.valid && !rc_tready) rc_wait_cycles++;
        Beat taken, out; bool drive_now;
        if (rc.edge(rc_tready, taken, drive_now, out)) {
            for (uint32_t dwc : taken.ended) { rx_cpl_bytes += (uint64_t)dwc * 4; rx_cpl_last_ps = now; rx_tlps++; }
        }
        if (drive_now) {
            put_words(HB(m_axis_rc_tdata), out.data);
            HB(m_axis_rc_tkeep) = out.keep;
            put_words(HB(m_axis_rc_tuser), out.user);
            HB(m_axis_rc_tlast) = out.last;
        }
        HB(m_axis_rc_tvalid) = rc.valid;
    }

    // Completer: TLPs -> CQ (us_model's upstream_recv, _run_cq_logic; CqSource), CC -> TLPs -----------

    void receive_request(Bytes&& tlp, uint64_t t) {
        TlpView v(tlp);
        uint64_t a = v.address();
        if (a < bar0_base || a >= bar0_base + bar0_size) return;   // No BAR: not modelled further.
        // Tlp_us.pack_us_cq.
        Frame f;
        uint32_t length = v.length_dw();
        int tc = (tlp[1] >> 4) & 7, attr = ((tlp[1] >> 2) & 1) << 2 | ((tlp[2] >> 4) & 3);
        int aperture = 0; while ((1ull << aperture) < bar0_size) aperture++;
        f.dw.push_back((uint32_t)(a & 0xfffffffc));
        f.dw.push_back((uint32_t)(a >> 32));
        f.dw.push_back((length & 0x7ff) | (uint32_t)(v.is_mem_write() ? 1 : 0) << 11 | (uint32_t)v.requester_id() << 16);
        f.dw.push_back((uint32_t)v.tag() | (uint32_t)(cfg_function & 0xff) << 8 | 0u << 16 | (uint32_t)(aperture & 0x3f) << 19
                       | (uint32_t)tc << 25 | (uint32_t)attr << 28);
        f.first_be = v.first_be(); f.last_be = v.last_be();
        f.be.assign(4, 0);
        size_t n = v.is_mem_write() ? v.payload_bytes() / 4 : 0;
        const uint8_t* p = v.payload();
        for (size_t i = 0; i < n; i++)
            f.dw.push_back(le32(p + 4 * i));
        if (n >= 1) f.be.push_back(f.first_be);
        for (size_t i = 2; i < n; i++) f.be.push_back(0xf);
        if (n > 1) f.be.push_back(f.last_be);
        cq_waiting.push_back({t, std::move(f)});
    }

    void cq_edge() {
        Beat taken, out; bool drive_now;
        cq.edge(cq_tready, taken, drive_now, out);
        if (drive_now) {
            put_words(HB(m_axis_cq_tdata), out.data);
            HB(m_axis_cq_tkeep) = out.keep;
            put_words(HB(m_axis_cq_tuser), out.user);
            HB(m_axis_cq_tlast) = out.last;
        }
        HB(m_axis_cq_tvalid) = cq.valid;
        // _run_cq_logic: requests that arrived before this edge go to the CQ port, which drives them from
        // the next edge on. (Its non-posted credit count, 32 a few edges after reset, never holds the host's
        // MMIO reads back: not modelled.)
        while (!cq_waiting.empty() && cq_waiting.front().first < now) {
            cq.push(std::move(cq_waiting.front().second));
            cq_waiting.pop_front();
        }
    }

    void cc_edge() {
        // CcSink and _run_cc_logic: a completion's TLP is sent when its last beat is taken.
        bool started;
        if (cc.take(cc.user & 1, started)) cc_completion();
        cc.ready = !paused();
        HB(s_axis_cc_tready) = cc.ready;
    }

    void cc_completion() {
        // Tlp_us.unpack_us_cc.
        if (cc.discontinue || cc.dw.size() < 3) { dropped_requests++; return; }
        const uint32_t* d = cc.dw.data();
        uint32_t lower = d[0] & 0x7f, byte_count = (d[0] >> 16) & 0x1fff;
        uint32_t length = d[1] & 0x7ff; int status = (d[1] >> 11) & 7; bool ep = d[1] >> 14 & 1;
        uint16_t requester = d[1] >> 16;
        uint8_t tag = d[2] & 0xff;
        uint16_t completer = (d[2] >> 8) & 0xffff;
        bool completer_enable = d[2] >> 24 & 1;
        int tc = (d[2] >> 25) & 7, attr = (d[2] >> 28) & 7;
        if (!completer_enable) completer = (uint16_t)(cfg_bus << 8 | (completer & 0xff));
        Bytes b(12);
        uint32_t dw0 = (length ? 2u : 0u) << 29 | 0x0au << 24 | (length & 0x3ff);
        dw0 |= (uint32_t)tc << 20 | (uint32_t)((attr >> 2) & 1) << 18 | (uint32_t)ep << 14 | (uint32_t)(attr & 3) << 12;
        put_be32(&b[0], dw0);
        put_be32(&b[4], (uint32_t)completer << 16 | (uint32_t)status << 13 | (byte_count & 0xfff));
        put_be32(&b[8], (uint32_t)requester << 16 | (uint32_t)tag << 8 | lower);
        for (uint32_t i = 0; i < length && 3 + i < cc.dw.size(); i++)
            for (int k = 0; k < 4; k++) b.push_back((uint8_t)(d[3 + i] >> (8 * k)));
        tx_tlps++;
        up.send(std::move(b), now);
    }

    // Everything from the host ------------------------------------------------------------------------

    void device_receive(Bytes&& tlp, uint64_t t) override {
        // us_model's upstream_recv releases every TLP's credits as it takes it.
        down.released(t, fc_type(tlp));
        TlpView v(tlp);
        if (v.is_completion()) receive_completion(std::move(tlp), t);
        else if (v.is_mem_read() || v.is_mem_write()) receive_request(std::move(tlp), t);
    }

    // MSIs (v7gen3.py's _run_7series_status) ----------------------------------------------------------

    void msi_edge() {
        HB(cfg_interrupt_msi_sent) = 0;
        HB(cfg_interrupt_msi_fail) = 0;
        if (msi_busy) {
            // Waiting for the MSI's write to enter the port's queue: `sent` is seen at the first edge after.
            if (now < msi_sent_edge) return;
            HB(cfg_interrupt_msi_sent) = 1;
            msi_busy = false;
            return;
        }
        if (!msi_int) return;
        int bits = __builtin_popcount(msi_int);
        if (msi_refusals) {
            msi_refusals--; msis_refused++;
            HB(cfg_interrupt_msi_fail) = 1;
            return;
        }
        if (bits != 1) return;
        msis_sent++;
        if (!msi_enable) { HB(cfg_interrupt_msi_sent) = 1; return; }
        uint32_t vector = __builtin_ctz(msi_int);
        uint32_t data = (msi_data & 0xffff) | vector;
        uint32_t payload = data;
        up.send(request_tlp(true, msi_address, 1, device_id(), 0, 0, 0, false, 0xf, 0, &payload, 1), now, true);
        tx_tlps++;
        uint64_t put = up.last_put_ps;
        if (put <= now) { HB(cfg_interrupt_msi_sent) = 1; return; }
        // The last edge at or before `put` drives `sent` (seen at the edge after it).
        uint64_t period = user_period();
        msi_sent_edge = now + (put - now) / period * period;
        if (msi_sent_edge == now) { HB(cfg_interrupt_msi_sent) = 1; return; }
        msi_busy = true;
    }

    uint64_t user_period() const {
        for (auto& c : clocks) if (c.user) return 2 * c.half_ps;
        return 4000;
    }

    // Configuration management (us_model's _run_cfg_mgmt_logic) -----------------------------------------

    uint32_t config_register(uint32_t reg) const {
        // The function's configuration space as the host left it (run.py keeps cocotbext-pcie's
        // UltraScalePcieFunction, as the reference's, and sends it after each configuration write).
        return reg < config_space.size() ? config_space[reg] : 0;
    }

    void mgmt_edge() {
        if (mgmt_done) { HB(cfg_mgmt_read_write_done) = 0; mgmt_done = false; return; }
        if (mgmt_edges == 0) {
            if (!(mgmt_rd || mgmt_wr)) return;
            mgmt_addr = mgmt_address; mgmt_read = mgmt_rd; mgmt_edges = 3;
            return;
        }
        if (--mgmt_edges > 0) return;
        if (!(mgmt_addr & (1u << 18)) && mgmt_read) HB(cfg_mgmt_read_data) = config_register(mgmt_addr & 0x3ff);
        HB(cfg_mgmt_read_write_done) = 1;
        mgmt_done = true;
    }

    // Completion timeout (v7gen3.py's _run_completion_timeout) ------------------------------------------

    void timers() override {
        while (next_check_ps <= now) {
            uint64_t t = next_check_ps;
            next_check_ps += 500000;
            for (int tag = 0; tag < 256; tag++) {
                Request& r = active[tag];
                auto& s = timer_started[tag];
                if (!r.active) { s = {0, 0}; continue; }
                if (s.first != r.serial) { s = {r.serial, t}; continue; }
                if (t - s.second < completion_timeout_ps) continue;
                // Tlp_us.create_completion_for_tlp, error code 1001, request completed: a descriptor alone.
                r.active = false; s = {0, 0}; completion_timeouts++;
                Frame f;
                f.dw.push_back((uint32_t)9 << 12 | 1u << 30);
                f.dw.push_back((uint32_t)r.requester << 16);
                f.dw.push_back((uint32_t)tag | (uint32_t)r.tc << 25 | (uint32_t)r.attr << 28);
                f.be.assign(3, 0);
                f.dword_count = 0;
                rc.push(std::move(f));
            }
        }
    }

    void configure_ports() override {
        // us_model's _run_cfg_status_logic and v7gen3.py's _run_7series_status copy the configuration to ports.
        HB(cfg_max_payload) = (cfg_dcommand >> 5) & 7;
        HB(cfg_max_read_req) = (cfg_dcommand >> 12) & 7;
        HB(cfg_function_status) = (cfg_command & 4) ? 0x07 : 0;
        HB(cfg_interrupt_msi_enable) = msi_enable ? 1 : 0;
        HB(cfg_interrupt_msi_mmenable) = 0;
    }

    bool counter(const std::string& n, uint64_t& value) override {
#define C(x) if (n == #x) { value = (uint64_t)x; return true; }
        C(rx_cpl_bytes) C(rx_cpl_last_ps) C(rx_cpl_drops) C(most_cplh_used) C(cplh_limit) C(rx_tlps) C(tx_tlps)
        C(msis_sent) C(msis_refused) C(error_uncor) C(completion_timeouts) C(rc_wait_cycles) C(tag_errors)
        C(dropped_requests)
#undef C
        return false;
    }
};

USSim* us() { return static_cast<USSim*>(sim); }

} // namespace

// C interface (ctypes, run.py): the pcie3_7x block ---------------------------------------------------

extern "C" {

void fs_link_status();

int fs_open(int data_width, int link_speed, int link_width, uint64_t seed) {
    if (data_width != 256) return -1;
    delete sim;
    USSim* s = new USSim();
    sim = s;
    open_link(s, link_speed, link_width, seed);
    fs_link_status();
    return 0;
}

void fs_hard_block(int straddle, double rx_gaps, double backpressure, int tx_buffer_tlps,
                   int cplh_limit, int cpld_bytes, uint64_t bar0_base, uint64_t bar0_size) {
    // rx_gaps and tx_buffer_tlps are the pcie_7x block's: cocotbext-pcie's RC port has no gaps, and its
    // requester queue no limit.
    (void)rx_gaps; (void)tx_buffer_tlps;
    USSim* s = us();
    s->straddle = straddle;
    s->rc.segments = straddle ? 2 : 1;
    s->backpressure = backpressure;
    s->cplh_limit = cplh_limit; s->cpld_limit = cpld_bytes / 16;
    s->bar0_base = bar0_base; s->bar0_size = bar0_size;
}

void fs_link_status() {
    // The trained link, as the reference's status coroutines report it from the first edge.
    Vtop* top = sim->top.get();
    HB(cfg_phy_link_down) = 0;
    HB(cfg_phy_link_status) = 3;
    HB(cfg_negotiated_width) = sim->link_width;
    HB(cfg_current_speed) = (1 << (sim->link_speed & 3)) >> 1;
    HB(cfg_max_read_req) = 2;
}

void fs_refuse_msis(int count) { us()->msi_refusals += count; }

void fs_completion_timeout(uint64_t ps) { us()->completion_timeout_ps = ps; }

}
