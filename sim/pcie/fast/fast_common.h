// This file is part of hostlink.
// Copyright (c) 2026 hostlink developers
// SPDX-License-Identifier: BSD-2-Clause
//
// What the fast paths of every PCIe SoC share (s7_fast.cpp: the ZC706 and KC705's `pcie_7x`; us_fast.cpp: the
// VC709's `pcie3_7x`): TLPs as bytes, the link with cocotbext-pcie's timing, the host at TLP level (memory, read
// completions, faults, MMIO, MSIs), the clocks and the main loop, and the C interface Python loads with ctypes
// (run.py). Each device file includes it once and adds its hard block's user interface, beat by beat.
//
// It models what sim/pcie/models/host.py on cocotbext-pcie's link models, which stays the reference
// (`./sim.py dma --reference`); doc/pcie_sim.md says where the two differ and why.
//
// fast_top.h, generated per model by run.py, names the SoC's ports (HB(x): the hard block's port x) and
// lists its one-bit inputs (clocks, resets) for fs_set_bit() and fs_add_clock().

#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <deque>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "Vtop.h"
#include "verilated.h"
#include "fast_top.h"

double sc_time_stamp() { return 0; }

namespace {

typedef std::vector<uint8_t> Bytes;

// Ports of any width as 32-bit words ---------------------------------------------------------------

template <std::size_t N> void put_words(VlWide<N>& port, const uint32_t* w) { for (std::size_t i = 0; i < N; i++) port[i] = w[i]; }
inline void put_words(QData& port, const uint32_t* w) { port = (uint64_t)w[0] | ((uint64_t)w[1] << 32); }
inline void put_words(IData& port, const uint32_t* w) { port = w[0]; }
template <std::size_t N> void get_words(const VlWide<N>& port, uint32_t* w) { for (std::size_t i = 0; i < N; i++) w[i] = port[i]; }
inline void get_words(const QData& port, uint32_t* w) { w[0] = (uint32_t)port; w[1] = (uint32_t)(port >> 32); }
inline void get_words(const IData& port, uint32_t* w) { w[0] = port; }

// TLPs: bytes as cocotbext-pcie packs them (header DWORDs big-endian, then the payload in memory order) --

inline uint32_t be32(const uint8_t* p) { return ((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) | ((uint32_t)p[2] << 8) | p[3]; }
inline void put_be32(uint8_t* p, uint32_t v) { p[0] = v >> 24; p[1] = v >> 16; p[2] = v >> 8; p[3] = v; }

struct TlpView {
    const Bytes& b;
    explicit TlpView(const Bytes& bytes) : b(bytes) {}
    int fmt() const { return b[0] >> 5; }
    int type() const { return b[0] & 0x1f; }
    bool has_data() const { return fmt() & 2; }
    int header_bytes() const { return (fmt() & 1) ? 16 : 12; }
    int length_dw() const { int n = ((b[2] & 3) << 8) | b[3]; return n ? n : 1024; }
    bool ep() const { return b[2] & 0x40; }
    bool is_mem_read() const { return (fmt() & 2) == 0 && type() == 0; }
    bool is_mem_write() const { return (fmt() & 2) && type() == 0; }
    bool is_completion() const { return type() == 0x0a || type() == 0x0b; }
    // Memory requests.
    uint16_t requester_id() const { return ((uint16_t)b[4] << 8) | b[5]; }
    uint8_t tag() const { return b[6]; }
    int first_be() const { return b[7] & 0xf; }
    int last_be() const { return b[7] >> 4; }
    uint64_t address() const {
        if (fmt() & 1) return ((uint64_t)be32(&b[8]) << 32) | (be32(&b[12]) & ~3u);
        return be32(&b[8]) & ~3u;
    }
    // Completions.
    int status() const { return b[6] >> 5; }
    uint16_t cpl_requester_id() const { return ((uint16_t)b[8] << 8) | b[9]; }
    uint8_t cpl_tag() const { return b[10]; }
    size_t payload_bytes() const { return has_data() ? b.size() - header_bytes() : 0; }
    const uint8_t* payload() const { return &b[header_bytes()]; }
    // Bytes on the wire (cocotbext-pcie's get_wire_size: header, payload, 8 bytes of framing, sequence
    // number and LCRC).
    size_t wire_bytes() const { return b.size() + 8; }
};

Bytes mem_request(bool write, uint64_t address, uint32_t length_dw, uint16_t requester, uint8_t tag,
                  int first_be, int last_be, const uint8_t* data) {
    bool wide = address >> 32;
    Bytes b(wide ? 16 : 12);
    uint32_t dw0 = ((write ? 2u : 0u) | (wide ? 1u : 0u)) << 29 | (length_dw & 0x3ff);
    put_be32(&b[0], dw0);
    put_be32(&b[4], (uint32_t)requester << 16 | (uint32_t)tag << 8 | (last_be & 0xf) << 4 | (first_be & 0xf));
    if (wide) { put_be32(&b[8], address >> 32); put_be32(&b[12], (uint32_t)address & ~3u); }
    else put_be32(&b[8], (uint32_t)address & ~3u);
    if (write) b.insert(b.end(), data, data + 4 * length_dw);
    return b;
}

// A completion for the request `req` (its TC, attributes, requester and tag), from completer 0:0.0.
Bytes completion(const Bytes& req, int status, uint32_t byte_count, uint32_t lower_address,
                 const uint8_t* data, uint32_t data_dw, bool poisoned) {
    Bytes b(12);
    uint32_t dw0 = (data_dw ? 2u : 0u) << 29 | 0x0au << 24 | (data_dw & 0x3ff);
    dw0 |= (uint32_t)(req[1] & 0x70) << 16;               // TC
    dw0 |= (uint32_t)(req[2] & 0x30) << 8;                // Attr[1:0]
    dw0 |= (uint32_t)(req[1] & 0x04) << 16;               // Attr[2]
    dw0 |= (uint32_t)(req[1] & 0x88) << 16;               // Tag[9:8]
    if (poisoned) dw0 |= 1u << 14;
    put_be32(&b[0], dw0);
    put_be32(&b[4], (uint32_t)(status & 7) << 13 | (byte_count & 0xfff));
    put_be32(&b[8], (uint32_t)(((uint16_t)req[4] << 8) | req[5]) << 16 | (uint32_t)req[6] << 8 | (lower_address & 0x7f));
    if (data_dw) b.insert(b.end(), data, data + 4 * data_dw);
    return b;
}

int be_offset(int first_be) { for (int i = 0; i < 4; i++) if (first_be >> i & 1) return i; return 0; }

uint32_t be_byte_count(int length_dw, int first_be, int last_be) {
    // cocotbext-pcie's Tlp.get_be_byte_count().
    if (length_dw == 1) {
        if (!first_be) return 1;
        int lo = be_offset(first_be), hi = 3;
        while (hi > 0 && !(first_be >> hi & 1)) hi--;
        return hi - lo + 1;
    }
    int hi = 3;
    while (hi > 0 && !(last_be >> hi & 1)) hi--;
    return length_dw * 4 - be_offset(first_be) - (3 - hi);
}

bool breaks_limits(uint64_t address, uint64_t length, uint64_t limit) {
    return length > limit || (address & 0xfff) + length > 0x1000;
}

// Events for Python --------------------------------------------------------------------------------

enum { EV_MMIO_READ = 1, EV_MSI = 2, EV_WATCH = 3 };
struct Event { int kind; uint64_t a, b, time_ps; };

// Host memory: one flat block from `base`, and windows onto memory the host lends (a User-Mode Linux
// kernel's RAM, mapped by its bridge) --------------------------------------------------------------------

struct Memory {
    uint64_t base = 0;
    std::vector<uint8_t> data;
    struct Window { uint64_t base, size; uint8_t* bytes; };
    std::vector<Window> windows;
    // Where `length` bytes at `address` are, or nullptr; `lent`: in a window.
    uint8_t* at(uint64_t address, uint64_t length, bool* lent = nullptr) {
        for (auto& w : windows)
            if (address >= w.base && address + length <= w.base + w.size) {
                if (lent) *lent = true;
                return w.bytes + (address - w.base);
            }
        if (lent) *lent = false;
        if (address >= base && address + length <= base + data.size()) return &data[address - base];
        return nullptr;
    }
};

// The link: one direction, serialized at its rate, delivered after the ports' delay ---------------------

struct InFlight { Bytes tlp; uint64_t start_ps, arrives_ps; bool msi; };

struct LinkDirection {
    double ps_per_byte = 0;
    uint64_t delay_ps = 10000;        // cocotbext-pcie: 5 ns per port, two ports.
    uint64_t free_ps = 0;             // When the wire is free for the next TLP.
    std::deque<InFlight> flight;      // In arrival order.
    // The receiver's DLLPs, as cocotbext-pcie's Port sends them on the other direction's wire (`reply`, 8
    // bytes each), ahead of the TLPs queued there. Its ACK latency timer starts at a TLP's arrival when it is
    // not running, and sends one ACK when it expires. Its flow-control update timer (as long) starts at a
    // release of credits when it is not running; when it expires, or at the port's idle tick (every 10 us),
    // the port sends an UpdateFC for each credit type (posted, non-posted, completion) released since its
    // last one, or whose last one is 30 us old, back to back; a type released while it sends them, after its
    // own, is sent once more.
    LinkDirection* reply = nullptr;
    uint64_t latency_ps = 0, ack_due_ps = 0, fc_timer_ps = 0, fc_idle_tick_ps = 10000000;
    uint64_t fc_next_ps[3] = {0, 0, 0};   // Per type: when an UpdateFC is due without a release.
    struct Update { int type; uint64_t start_ps; };
    std::vector<Update> fc_burst; uint64_t fc_burst_end_ps = 0;
    static constexpr uint64_t FC_REFRESH_PS = 30000000;
    uint64_t dllps = 0;
    void arrived(uint64_t t) { if (!ack_due_ps) ack_due_ps = t + latency_ps; }
    void released(uint64_t t, int type_bit) {
        int type = type_bit == 1 ? 0 : type_bit == 2 ? 1 : 2;
        if (t < fc_burst_end_ps) {
            bool to_come = false;
            for (auto& u : fc_burst) to_come |= u.type == type && u.start_ps >= t;
            if (!to_come) {
                uint64_t end = reply->send_dllp(fc_burst_end_ps - 1);
                fc_burst.push_back({type, end - dllp_ps()});
                fc_next_ps[type] = end - dllp_ps() + FC_REFRESH_PS;
                fc_burst_end_ps = end;
            }
        } else {
            fc_next_ps[type] = 0;
        }
        if (!fc_timer_ps) fc_timer_ps = t + latency_ps;
    }
    uint64_t dllp_ps() const { return reply ? (uint64_t)(8 * reply->ps_per_byte) : 0; }
    void send_updates(uint64_t t) {
        uint64_t end = 0;
        std::vector<Update> burst;
        for (int type = 0; type < 3; type++) {
            if (fc_next_ps[type] > t) continue;
            end = reply->send_dllp(end ? end - 1 : t);
            burst.push_back({type, end - dllp_ps()});
            fc_next_ps[type] = end - dllp_ps() + FC_REFRESH_PS;
        }
        // Nothing due: the port still looks again when it next chooses what to send (the end of the TLP on the
        // wire), and a type released until then goes out there.
        fc_burst = std::move(burst);
        fc_burst_end_ps = end ? end : reply->boundary(t);
    }
    // The DLLPs due by `now`, in the order their timers expire.
    void send_dllps(uint64_t now) {
        if (ack_due_ps && ack_due_ps <= now) { reply->send_dllp(ack_due_ps); ack_due_ps = 0; }
        while (true) {
            uint64_t timer = fc_timer_ps ? fc_timer_ps : UINT64_MAX;
            uint64_t t = std::min(timer, fc_idle_tick_ps);
            if (t > now) return;
            if (t == timer) fc_timer_ps = 0;
            if (t == fc_idle_tick_ps) fc_idle_tick_ps += 10000000;
            send_updates(t);
        }
    }
    // When the port next chooses what to send, at `t` or after: the end of the TLP on the wire at `t`.
    uint64_t boundary(uint64_t t) const {
        if (free_ps <= t) return t;
        uint64_t next = free_ps;
        for (auto it = flight.rbegin(); it != flight.rend() && it->start_ps > t; ++it) next = it->start_ps;
        return next;
    }
    uint64_t send_dllp(uint64_t t) {
        // The port sends a DLLP due at `t` before the next TLP: after the one on the wire then, ahead of those
        // queued behind it, which start 8 bytes later. Returns when the DLLP ends.
        uint64_t d = (uint64_t)(8 * ps_per_byte);
        dllps++;
        if (free_ps > t && !flight.empty() && flight.back().start_ps > t) {
            uint64_t first = 0;
            for (auto it = flight.rbegin(); it != flight.rend() && it->start_ps > t; ++it) {
                first = it->start_ps;
                it->start_ps += d; it->arrives_ps += d;
            }
            free_ps += d;
            if (last_start_ps > t) last_start_ps += d;
            return first + d;
        }
        free_ps = std::max(free_ps, t) + d;
        return free_ps;
    }
    // TLPs queued for the wire at `t` but not on it yet (MSIs aside: the block's own messages).
    size_t waiting(uint64_t t) const {
        size_t n = 0;
        for (auto it = flight.rbegin(); it != flight.rend() && it->start_ps > t; ++it) n += !it->msi;
        return n;
    }
    uint64_t last_start_ps = 0;       // When the last TLP started on the wire,
    uint64_t last_put_ps = 0;         // and when it entered cocotbext-pcie's port queue (one TLP deep:
                                      // when the one before it started, or when it was sent, if later).
    uint64_t send(Bytes&& tlp, uint64_t ready_ps, bool msi = false) {
        uint64_t start = std::max(free_ps, ready_ps);
        last_put_ps = std::max(ready_ps, last_start_ps);
        last_start_ps = start;
        size_t wire = TlpView(tlp).wire_bytes();
        uint64_t end = start + std::max<uint64_t>(1, (uint64_t)(wire * ps_per_byte));
        free_ps = end;
        flight.push_back({std::move(tlp), start, end + delay_ps, msi});
        return start;
    }
};

// A read the host is serving ---------------------------------------------------------------------

struct Completion { Bytes tlp; uint32_t rcb_blocks; uint32_t data_offset; uint32_t data_bytes; bool copy; };
struct PendingRead {
    uint64_t ready_ps;
    Bytes request;
    std::deque<Completion> completions;
    uint64_t address; uint32_t length; bool fetched;
};

enum { FAULT_TIMEOUT, FAULT_UR, FAULT_CA, FAULT_POISONED, FAULT_LONG, FAULT_STRAY, FAULT_FOREIGN };
struct Fault { int kind; uint64_t low, high; };

struct Watch { uint64_t base, size, landed; bool done; uint64_t done_ps; };

struct Clock { CData* signal; uint64_t half_ps; uint64_t next_ps; bool user; };

// The simulation: the host, the link and the clocks; the device (the hard block's user interface) in the
// subclass of each device file ---------------------------------------------------------------------

struct SimBase {
    std::unique_ptr<VerilatedContext> context;
    std::unique_ptr<Vtop> top;
    uint64_t now = 0;
    std::vector<Clock> clocks;
    std::deque<Event> events;
    std::mt19937_64 device_rng, host_rng;
    std::uniform_real_distribution<double> uniform{0.0, 1.0};

    // Configuration, as the host's enumeration leaves it (fs_configure).
    uint16_t cfg_command = 0, cfg_dcommand = 0; int cfg_bus = 0, cfg_device = 0, cfg_function = 0;
    bool msi_enable = false;
    uint64_t msi_address = 0; uint32_t msi_data = 0;
    int link_speed = 2, link_width = 4;
    uint64_t bar0_base = 0, bar0_size = 0;
    std::vector<uint32_t> config_space;   // The function's configuration space as the host left it (fs_config_space).

    // Link.
    LinkDirection up, down;           // up: device to host; down: host to device.

    // Host.
    Memory memory;
    uint32_t mps = 256, mrrs = 512; uint64_t read_latency_ps = 1000000;
    bool completions_64 = false, reorder = true, read_at_completion = true;
    std::vector<PendingRead> pending;
    std::deque<Bytes> host_requests;  // MMIO from Python, in order,
    std::deque<uint64_t> host_request_times;   // and when each was made.
    uint64_t last_decision_ps = 0;
    uint64_t multi_ready_picks = 0;   // Completions chosen from more than one read due.
    uint8_t mmio_tag = 0;
    uint64_t reads_served = 0, bad_reads = 0, largest_read = 0, blocks_owed = 0, most_blocks_owed = 0;
    uint64_t bad_writes = 0, last_read_data_ps = 0, msis_received = 0, unexpected_completions = 0;
    std::vector<Fault> faults;
    std::vector<std::pair<int, uint64_t>> faults_done;
    std::vector<Watch> watches;

    virtual ~SimBase() {}

    // The device ----------------------------------------------------------------------------------

    // A TLP from the host has crossed the link (at `t`, no later than now).
    virtual void device_receive(Bytes&& tlp, uint64_t t) = 0;
    // A rising edge of the hard block's user clock: sample what the user logic drove during the cycle
    // (edge_sample, before the edge), then drive the block's outputs for the next cycle (edge, after it).
    virtual void edge_sample() = 0;
    virtual void edge() = 0;
    // Timers of the device that run on time rather than on the clock.
    virtual void timers() {}
    // The configuration the host left (fs_configure) onto the block's configuration ports.
    virtual void configure_ports() = 0;
    // The device's counters by name (fs_counter).
    virtual bool counter(const std::string& name, uint64_t& value) = 0;

    uint16_t device_id() const { return (uint16_t)(cfg_bus << 8 | cfg_device << 3 | cfg_function); }

    void eval() { top->eval(); }

    // Deliveries: TLPs whose last byte has crossed the link by now --------------------------------

    void deliver() {
        while (!down.flight.empty() && down.flight.front().arrives_ps <= now) {
            InFlight f = std::move(down.flight.front()); down.flight.pop_front();
            down.arrived(f.arrives_ps);
            device_receive(std::move(f.tlp), f.arrives_ps);
        }
        while (!up.flight.empty() && up.flight.front().arrives_ps <= now) {
            InFlight f = std::move(up.flight.front()); up.flight.pop_front();
            up.arrived(f.arrives_ps);
            up.released(f.arrives_ps, fc_type(f.tlp));
            host_receive(f.tlp, f.arrives_ps);
        }
        timers();
        // The host's TLPs due by now before the DLLPs due by now: a DLLP goes after the TLP on the wire when it
        // is due, and ahead of those queued behind it (send_dllp()), so each TLP is queued first.
        host_send();
        down.send_dllps(now);
        up.send_dllps(now);
    }

    static int fc_type(const Bytes& tlp) {
        TlpView v(tlp);
        return v.is_completion() ? 4 : v.is_mem_write() ? 1 : 2;
    }

    // Host ------------------------------------------------------------------------------------

    void host_receive(const Bytes& tlp, uint64_t t) {
        TlpView v(tlp);
        if (v.is_mem_write()) {
            uint64_t a = v.address();
            size_t n = v.payload_bytes();
            if (a == msi_address && msi_address) {
                msis_received++;
                uint32_t data = 0;
                memcpy(&data, v.payload(), std::min<size_t>(n, 4));
                events.push_back({EV_MSI, msis_received, data, t});
                return;
            }
            if (breaks_limits(a, n, mps)) bad_writes++;
            bool lent = false;
            if (uint8_t* m = memory.at(a, n, &lent)) {
                const uint8_t* p = v.payload();
                int fbe = v.first_be(), lbe = v.length_dw() == 1 ? fbe : v.last_be();
                for (size_t i = 0; i < n; i++) {
                    int be = i < 4 ? fbe : i >= n - 4 ? lbe : 0xf;
                    if (be >> (i & 3) & 1) m[i] = p[i];
                }
                if (lent) lent_write(m, n);
            }
            for (size_t k = 0; k < watches.size(); k++) {
                Watch& w = watches[k];
                uint64_t lo = std::max(a, w.base), hi = std::min(a + n, w.base + w.size);
                if (lo < hi) {
                    w.landed += hi - lo;
                    if (w.landed >= w.size && !w.done) {
                        w.done = true; w.done_ps = t;
                        events.push_back({EV_WATCH, k, 0, t});
                    }
                }
            }
        } else if (v.is_mem_read()) {
            host_read_request(tlp, t);
        } else if (v.is_completion()) {
            uint32_t value = 0;
            if (v.payload_bytes() >= 4) memcpy(&value, v.payload(), 4);
            events.push_back({EV_MMIO_READ, (uint64_t)v.cpl_tag() | (uint64_t)v.status() << 8, value, t});
        }
    }

    void host_read_request(const Bytes& tlp, uint64_t t) {
        TlpView v(tlp);
        uint64_t a = v.address();
        uint32_t len = v.length_dw() * 4;
        largest_read = std::max<uint64_t>(largest_read, len);
        if (breaks_limits(a, len, mrrs)) bad_reads++;
        if (!memory.at(a, len)) {
            // No memory there: one Unsupported Request completion, at once.
            PendingRead p{t, tlp, {}, 0, 0, true};
            p.completions.push_back({completion(tlp, 1, 0, 0, nullptr, 0, false), 0, 0, 0, false});
            pending.push_back(std::move(p));
            return;
        }
        PendingRead p{t + read_latency_ps, tlp, {}, a, len, !read_at_completion};
        split(p);
        if (!faults.empty()) {
            if (!spoil(p)) return;
        }
        for (auto& c : p.completions) blocks_owed += c.rcb_blocks;
        most_blocks_owed = std::max(most_blocks_owed, blocks_owed);
        if (!read_at_completion) fetch(p, t);
        pending.push_back(std::move(p));
        reads_served++;
    }

    void split(PendingRead& p) {
        // host.py's HostRootComplex._split: completions on 64-byte (RCB) boundaries, each at most MPS (or
        // up to 64 bytes).
        TlpView v(p.request);
        uint64_t addr = v.address() + be_offset(v.first_be());
        uint32_t dw_length = v.length_dw();
        uint32_t byte_length = be_byte_count(dw_length, v.first_be(), v.last_be());
        uint32_t max_dw = completions_64 ? 16 : mps / 4;
        uint32_t m = 0, n = 0;
        while (m < dw_length) {
            uint32_t cpl_dw = std::min(dw_length - m, max_dw);
            if (m + cpl_dw < dw_length) {
                uint64_t start = addr & ~3ull, end = start + cpl_dw * 4;
                end -= end % 64;
                if (end > start) cpl_dw = (uint32_t)((end - start) / 4);
            }
            Completion c;
            std::vector<uint8_t> zeros(cpl_dw * 4, 0);
            c.tlp = completion(p.request, 0, byte_length - n, (uint32_t)(addr & 0x7f), zeros.data(), cpl_dw, false);
            c.rcb_blocks = (uint32_t)(((addr & 0x3c) + cpl_dw * 4 + 63) / 64);
            c.data_offset = m * 4; c.data_bytes = cpl_dw * 4; c.copy = false;
            p.completions.push_back(std::move(c));
            m += cpl_dw;
            n += cpl_dw * 4 - (uint32_t)(addr & 3);
            addr += cpl_dw * 4 - (addr & 3);
        }
    }

    bool spoil(PendingRead& p) {
        // host.py's HostRootComplex._spoil: the completions for a read under an armed fault.
        uint64_t a = TlpView(p.request).address();
        size_t i = 0;
        for (; i < faults.size(); i++) if (faults[i].low <= a && a < faults[i].high) break;
        if (i == faults.size()) return true;
        int kind = faults[i].kind;
        faults.erase(faults.begin() + i);
        faults_done.push_back({kind, a});
        if (kind == FAULT_TIMEOUT) return false;
        if (kind == FAULT_UR || kind == FAULT_CA) {
            uint32_t blocks = 0;
            for (auto& c : p.completions) blocks += c.rcb_blocks;
            p.completions.clear();
            p.completions.push_back({completion(p.request, kind == FAULT_UR ? 1 : 4, 0, 0, nullptr, 0, false), blocks, 0, 0, false});
            return true;
        }
        if (kind == FAULT_POISONED) {
            for (auto& c : p.completions) c.tlp[2] |= 0x40;
            return true;
        }
        if (kind == FAULT_LONG) {
            Completion& last = p.completions.back();
            TlpView v(last.tlp);
            uint32_t bc = ((last.tlp[6] & 0xf) << 8 | last.tlp[7]) + 32;
            uint32_t dw = v.length_dw() + 8;
            last.tlp.insert(last.tlp.end(), 32, 0);
            uint32_t dw0 = be32(&last.tlp[0]); dw0 = (dw0 & ~0x3ffu) | (dw & 0x3ff); put_be32(&last.tlp[0], dw0);
            last.tlp[6] = (last.tlp[6] & 0xf0) | ((bc >> 8) & 0xf); last.tlp[7] = bc & 0xff;
            last.data_bytes += 32;
            return true;
        }
        // A copy of the first completion, for a stray tag or another requester, owed nothing.
        Completion copy = p.completions.front();
        copy.rcb_blocks = 0; copy.copy = true;
        if (kind == FAULT_STRAY) copy.tlp[10] = 0xff;
        else {
            uint16_t rid = ((uint16_t)copy.tlp[8] << 8) | copy.tlp[9];
            int dev = ((rid >> 3) + 1) & 0x1f;
            rid = (rid & 0xff00) | dev << 3 | (rid & 7);
            copy.tlp[8] = rid >> 8; copy.tlp[9] = rid & 0xff;
        }
        p.completions.push_front(std::move(copy));
        return true;
    }

    // DMA writes into lent memory: counted, and the word at `dma_fault_at` bytes into them inverted as it
    // lands (a test-only fault: sim/uml/pcidev.py's _KernelMemory does the same on the reference path).
    int64_t dma_fault_at = -1;
    uint64_t dma_bytes_written = 0, faults_injected = 0;
    void lent_write(uint8_t* m, size_t n) {
        uint64_t before = dma_bytes_written;
        dma_bytes_written += n;
        if (dma_fault_at >= 0 && before <= (uint64_t)dma_fault_at && (uint64_t)dma_fault_at < dma_bytes_written) {
            size_t word = ((uint64_t)dma_fault_at - before) & ~(size_t)3;
            for (size_t i = word; i < word + 4 && i < n; i++) m[i] ^= 0xff;
            dma_fault_at = -1;
            faults_injected++;
        }
    }

    void fetch(PendingRead& p, uint64_t t) {
        // The read's data into its completions: each takes the next bytes in address order; a fault's copy
        // the first ones; bytes past the read stay zero.
        last_read_data_ps = t;
        p.fetched = true;
        uint32_t offset = 0;
        for (auto& c : p.completions) {
            if (!c.data_bytes) continue;
            uint32_t start = c.copy ? 0 : offset;
            uint8_t* dst = &c.tlp[12];
            const uint8_t* src = memory.at(p.address, p.length);
            for (uint32_t i = 0; i < c.data_bytes; i++)
                dst[i] = start + i < p.length ? src[start + i] : 0;
            if (!c.copy) offset += c.data_bytes;
        }
    }

    void host_send() {
        // The host's transmitter as host.py's completer and cocotbext-pcie's root complex run it: each
        // TLP is queued for the wire when it is due, never waiting for the wire (the root complex queues
        // without bound before its port), in the order due: Python's MMIO requests when made, a read's
        // completions when its data is due. Only reads due at the same moment interleave (one chosen at
        // random, completion by completion, when reordering).
        while (true) {
            bool mmio = !host_requests.empty();
            if (!mmio && pending.empty()) return;
            uint64_t earliest = mmio ? host_request_times.front() : UINT64_MAX;
            for (auto& p : pending) earliest = std::min(earliest, p.ready_ps);
            uint64_t decide = std::max(earliest, last_decision_ps);
            if (decide > now) return;
            last_decision_ps = decide;
            if (mmio && host_request_times.front() <= decide) {
                down.send(std::move(host_requests.front()), decide);
                host_requests.pop_front(); host_request_times.pop_front();
                continue;
            }
            std::vector<size_t> ready;
            for (size_t i = 0; i < pending.size(); i++) if (pending[i].ready_ps <= decide) ready.push_back(i);
            if (ready.size() > 1) multi_ready_picks++;
            size_t pick = reorder ? ready[std::uniform_int_distribution<size_t>(0, ready.size() - 1)(host_rng)] : ready[0];
            PendingRead& p = pending[pick];
            if (!p.fetched) fetch(p, decide);
            Completion c = std::move(p.completions.front());
            p.completions.pop_front();
            if (p.completions.empty()) pending.erase(pending.begin() + pick);
            down.send(std::move(c.tlp), decide);
            blocks_owed -= c.rcb_blocks;
        }
    }

    // Main loop -------------------------------------------------------------------------------

    int run(uint64_t until_ps) {
        while (true) {
            if (!events.empty()) return 1;
            uint64_t t = UINT64_MAX;
            for (auto& c : clocks) t = std::min(t, c.next_ps);
            if (t > until_ps) { now = until_ps; deliver(); return events.empty() ? 0 : 1; }
            now = t;
            bool user_rise = false;
            for (auto& c : clocks) if (c.next_ps == t && c.user && !*c.signal) user_rise = true;
            if (user_rise) edge_sample();
            for (auto& c : clocks) if (c.next_ps == t) { *c.signal = !*c.signal; c.next_ps += c.half_ps; }
            eval();
            if (user_rise) { edge(); eval(); }
        }
    }
};

SimBase* sim = nullptr;

// The link's rate and its receivers' DLLP timers, as cocotbext-pcie's SimPort sets them.
void open_link(SimBase* s, int link_speed, int link_width, uint64_t seed) {
    s->context.reset(new VerilatedContext);
    s->top.reset(new Vtop(s->context.get(), "TOP"));
    s->link_speed = link_speed; s->link_width = link_width;
    // cocotbext-pcie's SimPort: 8 / (rate * width) seconds per byte; rate in bits per second per lane
    // after line coding (Gen1 2 Gb/s, Gen2 4 Gb/s: 8b/10b; Gen3 8 Gb/s x 128/130).
    double rate = link_speed == 1 ? 2e9 : link_speed == 2 ? 4e9 : 8e9 * 128 / 130;
    s->up.ps_per_byte = s->down.ps_per_byte = 8.0 / (rate * link_width) * 1e12;
    s->up.reply = &s->down; s->down.reply = &s->up;
    // cocotbext-pcie's ACK latency: get_max_update_latency() for its ports' 128-byte max payload size, in
    // symbol times of 8 / rate.
    double factor = link_width <= 4 ? 1.4 : link_width == 8 ? 2.5 : 3.0;
    double symbols = (128 + 28) * factor / link_width + (link_speed == 1 ? 19 : link_speed == 2 ? 70 : 115);
    s->up.latency_ps = s->down.latency_ps = (uint64_t)(symbols * 8 / rate * 1e12);
    s->device_rng.seed(seed);
    s->host_rng.seed(seed * 2 + 1);
    s->top->eval();
}

} // namespace

// C interface (ctypes, run.py): what every device shares ------------------------------------------------

extern "C" {

void fs_close() { if (sim) sim->top->final(); delete sim; sim = nullptr; }

int fs_add_clock(const char* name, uint64_t period_ps, int user) {
    CData* s = fast_top_bit(sim->top.get(), name);
    if (!s) return -1;
    *s = 1;    // cocotb's Clock starts high at time 0.
    sim->clocks.push_back({s, period_ps / 2, period_ps / 2, user != 0});
    return 0;
}

int fs_set_bit(const char* name, int value) {
    CData* s = fast_top_bit(sim->top.get(), name);
    if (!s) return -1;
    *s = value;
    return 0;
}

void fs_host(uint32_t mps, uint32_t mrrs, uint64_t read_latency_ps, int completions_64, int reorder,
             int read_at_completion) {
    sim->mps = mps; sim->mrrs = mrrs; sim->read_latency_ps = read_latency_ps;
    sim->completions_64 = completions_64; sim->reorder = reorder; sim->read_at_completion = read_at_completion;
}

void fs_memory(uint64_t base, uint64_t size) {
    sim->memory.base = base;
    if (sim->memory.data.size() < size) sim->memory.data.resize(size, 0);
}

int fs_mem_write(uint64_t address, const uint8_t* data, uint64_t length) {
    uint8_t* m = sim->memory.at(address, length);
    if (!m) return -1;
    memcpy(m, data, length);
    return 0;
}

int fs_mem_read(uint64_t address, uint8_t* data, uint64_t length) {
    uint8_t* m = sim->memory.at(address, length);
    if (!m) return -1;
    memcpy(data, m, length);
    return 0;
}

void fs_memory_window(uint64_t base, uint64_t size, uint8_t* bytes) { sim->memory.windows.push_back({base, size, bytes}); }

void fs_dma_fault_at(int64_t offset) { sim->dma_fault_at = offset; }

void fs_config_space(const uint32_t* words, int count) { sim->config_space.assign(words, words + count); }

void fs_mmio_write(uint64_t address, uint32_t value, int first_be) {
    uint8_t d[4]; memcpy(d, &value, 4);
    sim->host_requests.push_back(mem_request(true, address, 1, 0, 0, first_be, 0, d));
    sim->host_request_times.push_back(sim->now);
}

int fs_mmio_read(uint64_t address) {
    uint8_t tag = sim->mmio_tag++;
    sim->host_requests.push_back(mem_request(false, address, 1, 0, tag, 0xf, 0, nullptr));
    sim->host_request_times.push_back(sim->now);
    return tag;
}

int fs_watch(uint64_t base, uint64_t size) {
    sim->watches.push_back({base, size, 0, false, 0});
    return (int)sim->watches.size() - 1;
}

uint64_t fs_watch_landed(int id) { return sim->watches[id].landed; }

void fs_arm_fault(int kind, uint64_t low, uint64_t high) { sim->faults.push_back({kind, low, high}); }

int fs_faults_done(int index, uint64_t* address) {
    if (index >= (int)sim->faults_done.size()) return -1;
    *address = sim->faults_done[index].second;
    return sim->faults_done[index].first;
}

void fs_configure(int command, int dcommand, int bus, int device, int function, int msi_enable,
                  uint64_t msi_address, uint32_t msi_data) {
    sim->cfg_command = command; sim->cfg_dcommand = dcommand;
    sim->cfg_bus = bus; sim->cfg_device = device; sim->cfg_function = function;
    sim->msi_enable = msi_enable; sim->msi_address = msi_address; sim->msi_data = msi_data;
    sim->configure_ports();
}

uint64_t fs_now() { return sim->now; }

int fs_run(uint64_t until_ps) { return sim->run(until_ps); }

int fs_next_event(uint64_t* a, uint64_t* b, uint64_t* time_ps) {
    if (sim->events.empty()) return 0;
    Event e = sim->events.front(); sim->events.pop_front();
    *a = e.a; *b = e.b; *time_ps = e.time_ps;
    return e.kind;
}

uint64_t fs_counter(const char* name) {
    std::string n(name);
    uint64_t value;
    if (sim->counter(n, value)) return value;
#define C(x) if (n == #x) return (uint64_t)sim->x;
    C(reads_served) C(bad_reads) C(bad_writes) C(largest_read) C(most_blocks_owed) C(blocks_owed)
    C(last_read_data_ps) C(up.dllps) C(down.dllps) C(multi_ready_picks) C(msis_received) C(unexpected_completions)
    C(dma_bytes_written) C(faults_injected)
#undef C
    return UINT64_MAX;
}

}
