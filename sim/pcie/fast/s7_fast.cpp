// This file is part of hostlink.
// Copyright (c) 2026 hostlink developers
// SPDX-License-Identifier: BSD-2-Clause
//
// The fast path of a 7-series Gen2 PCIe SoC (ZC706, KC705): the Verilated SoC, its clocks, the `pcie_7x`
// hard block's user interface beat by beat, the link and the host at TLP level, all in C++. Python (run.py)
// loads this library with ctypes, runs the bench's jobs and is called only when the host has something for
// it (an MMIO read's completion, an MSI, a watched buffer complete) or at a time it asked for.
//
// The hard block is what sim/pcie/models/s7_device.py models, which stays the reference (`./sim.py dma
// --reference`); the host and the link are fast_common.h's. doc/pcie_sim.md says where the two differ and why.

#include "fast_common.h"

namespace {

struct S7Sim : SimBase {
    // Hard block.
    int dwords = 4;                   // User interface width in DWORDs.
    bool straddle = true;
    double rx_gaps = 0, backpressure = 0;
    int tx_buffer_tlps = 4;
    int cplh_limit = 0, cpld_limit = 0, cplh_used = 0, cpld_used = 0, most_cplh_used = 0;
    uint64_t rx_cpl_drops = 0, rx_cpl_bytes = 0, rx_cpl_last_ps = 0, rx_tlps = 0, tx_tlps = 0;
    uint64_t msis_sent = 0, msis_held = 0;
    std::deque<uint64_t> msi_holds;
    uint64_t error_cpl_timeout = 0, error_cpl_unexpect = 0;
    int reset_cycles = 16; bool link_up = false;

    struct RxEntry { Bytes tlp; std::vector<uint32_t> dw; int bar_hit; };
    std::deque<RxEntry> rx_queue;
    bool rx_current = false; RxEntry rx_cur; size_t rx_index = 0;
    bool rx_beat = false; std::vector<const Bytes*> rx_ended; std::vector<RxEntry> rx_ended_store;
    uint32_t rx_data[16]; uint32_t rx_keep = 0, rx_user = 0; bool rx_last = false;

    std::vector<uint32_t> tx_dw;
    bool tx_ready = false;
    int msi_state = 0; uint64_t msi_wait = 0;
    bool prev_err_timeout = false, prev_err_unexpect = false;

    // What the user logic drove during the cycle, sampled before the edge.
    uint32_t tx_data[16]; uint32_t tx_keep = 0, irq_di = 0;
    bool tx_valid = false, tx_last = false, rx_ready = false, irq = false, err_timeout = false, err_unexpect = false;

    void edge_sample() override {
        get_words(HB(s_axis_tx_tdata), tx_data);
        tx_keep = HB(s_axis_tx_tkeep);
        tx_valid = HB(s_axis_tx_tvalid);
        tx_last = HB(s_axis_tx_tlast);
        rx_ready = HB(m_axis_rx_tready);
        irq = HB(cfg_interrupt);
        irq_di = HB(cfg_interrupt_di);
        err_timeout = HB(cfg_err_cpl_timeout);
        err_unexpect = HB(cfg_err_cpl_unexpect);
    }

    void edge() override {
        deliver();
        // Reset and link.
        if (reset_cycles > 0) {
            HB(user_reset_out) = 1; HB(user_lnk_up) = 0;
            if (--reset_cycles == 0) {
                HB(user_reset_out) = 0; HB(user_lnk_up) = 1; link_up = true;
                HB(pl_ltssm_state) = 0x16;
                HB(pl_sel_lnk_rate) = link_speed >= 2;
                HB(pl_sel_lnk_width) = link_width == 1 ? 0 : link_width == 2 ? 1 : link_width == 4 ? 2 : 3;
            }
        }
        // Error reports: one-cycle pulses, counted on their rising edge.
        if (err_timeout && !prev_err_timeout) error_cpl_timeout++;
        if (err_unexpect && !prev_err_unexpect) error_cpl_unexpect++;
        prev_err_timeout = err_timeout; prev_err_unexpect = err_unexpect;
        tx_edge(tx_data, tx_keep, tx_valid, tx_last);
        rx_edge(rx_ready);
        msi_edge(irq, irq_di);
    }

    // RX: block -> user (m_axis_rx) -----------------------------------------------------------

    void device_receive(Bytes&& tlp, uint64_t) override {
        TlpView v(tlp);
        int bar_hit = 0;
        if (v.is_completion()) {
            int credits = (int)((v.payload_bytes() + 15) / 16);
            if (cplh_used + 1 > cplh_limit || cpld_used + credits > cpld_limit) { rx_cpl_drops++; return; }
            cplh_used++; cpld_used += credits;
            most_cplh_used = std::max(most_cplh_used, cplh_used);
        } else if (v.is_mem_read() || v.is_mem_write()) {
            uint64_t a = v.address();
            if (a < bar0_base || a >= bar0_base + bar0_size) return;   // No BAR: not modelled further.
            bar_hit = 1;
        } else {
            return;
        }
        RxEntry e; e.tlp = std::move(tlp); e.bar_hit = bar_hit;
        for (size_t i = 0; i + 3 < e.tlp.size(); i += 4) e.dw.push_back(be32(&e.tlp[i]));
        rx_queue.push_back(std::move(e));
    }

    void rx_edge(bool ready) {
        if (rx_beat && ready) {
            for (auto& e : rx_ended_store) {
                down.released(now, fc_type(e.tlp));
                TlpView v(e.tlp);
                if (v.is_completion()) { rx_cpl_bytes += v.payload_bytes(); rx_cpl_last_ps = now; }
            }
            rx_ended_store.clear();
            rx_beat = false;
        }
        if (rx_beat) return;
        if (!rx_current && rx_queue.empty()) { HB(m_axis_rx_tvalid) = 0; return; }
        if (rx_gaps > 0 && uniform(device_rng) < rx_gaps) { HB(m_axis_rx_tvalid) = 0; return; }
        build_rx_beat();
        put_words(HB(m_axis_rx_tdata), rx_data);
        HB(m_axis_rx_tkeep) = rx_keep;
        HB(m_axis_rx_tuser) = rx_user;
        HB(m_axis_rx_tlast) = rx_last;
        HB(m_axis_rx_tvalid) = 1;
        rx_beat = true;
    }

    void build_rx_beat() {
        // s7_device.py's _build_rx_beat: a TLP starts in DWORD 0, or in DWORD 2 of a 128-bit beat in
        // which the previous one ended.
        for (int i = 0; i < 16; i++) rx_data[i] = 0;
        rx_keep = 0;
        int sof = -1, eof = -1, slot = 0;
        while (slot < dwords) {
            if (!rx_current) {
                if (rx_queue.empty()) break;
                if (slot != 0 && !(straddle && slot <= 2 && eof >= 0)) break;
                if (slot == 1) slot = 2;
                rx_cur = std::move(rx_queue.front()); rx_queue.pop_front();
                rx_current = true; rx_index = 0; sof = slot; rx_tlps++;
            }
            rx_data[slot] = rx_cur.dw[rx_index];
            rx_keep |= 0xfu << (4 * slot);
            rx_index++;
            if (rx_index == rx_cur.dw.size()) {
                eof = slot;
                rx_current = false;
                TlpView v(rx_cur.tlp);
                if (v.is_completion()) { cplh_used--; cpld_used -= (int)((v.payload_bytes() + 15) / 16); }
                rx_ended_store.push_back(std::move(rx_cur));
            }
            slot++;
            if (eof >= 0 && !rx_current && slot > 2) break;
        }
        rx_user = 0;
        if (dwords == 4) {
            if (sof >= 0) rx_user |= (0x10u | (uint32_t)(sof * 4)) << 10;
            if (eof >= 0) rx_user |= (0x10u | (uint32_t)(eof * 4 + 3)) << 17;
        }
        rx_last = eof >= 0;
        int bar_hit = rx_current ? rx_cur.bar_hit : 0;
        rx_user |= (uint32_t)(bar_hit & 0x7f) << 2;
    }

    // TX: user -> block (s_axis_tx) -----------------------------------------------------------

    void tx_edge(const uint32_t* data, uint32_t keep, bool valid, bool last) {
        if (tx_ready && valid) {
            for (int i = 0; i < dwords; i++) if ((keep >> (4 * i)) & 0xf) tx_dw.push_back(data[i]);
            if (last) {
                Bytes b(tx_dw.size() * 4);
                for (size_t i = 0; i < tx_dw.size(); i++) put_be32(&b[4 * i], tx_dw[i]);
                tx_dw.clear();
                tx_tlps++;
                up.send(std::move(b), now);
            }
        }
        // The block's transmit buffer (tx_buffer_tlps TLPs, and the two cocotbext-pcie's port holds
        // between it and the wire) is full: tready falls.
        bool ready = link_up && (int)up.waiting(now) < tx_buffer_tlps + 2;
        if (ready && backpressure > 0) ready = uniform(device_rng) >= backpressure;
        tx_ready = ready;
        HB(s_axis_tx_tready) = ready;
    }

    // MSI (cfg_interrupt) ---------------------------------------------------------------------

    void msi_edge(bool irq, uint32_t di) {
        // s7_device.py's _run_msi: a request seen at an edge is granted there (after the cycles a hold
        // asks for), cfg_interrupt_rdy high for one cycle, if MSI is enabled.
        if (msi_state == 2) { HB(cfg_interrupt_rdy) = 0; msi_state = 0; return; }
        if (msi_state == 0) {
            if (!irq) return;
            if (!msi_holds.empty()) {
                msi_wait = msi_holds.front(); msi_holds.pop_front(); msis_held++;
                if (msi_wait) { msi_state = 1; return; }
            }
        } else if (--msi_wait > 0) {
            return;
        }
        msi_state = 0;
        if (!irq || !msi_enable) return;
        HB(cfg_interrupt_rdy) = 1;
        msi_state = 2;
        msis_sent++;
        (void)di;   // One vector: the MSI's data is the capability's.
        uint8_t d[4]; memcpy(d, &msi_data, 4);
        // Behind the TLPs the block has already taken from s_axis_tx: one transmit queue.
        up.send(mem_request(true, msi_address, 1, device_id(), 0, 0xf, 0, d), now, true);
    }

    void configure_ports() override {
        HB(cfg_command) = cfg_command; HB(cfg_dcommand) = cfg_dcommand;
        HB(cfg_bus_number) = cfg_bus; HB(cfg_device_number) = cfg_device; HB(cfg_function_number) = cfg_function;
        HB(cfg_interrupt_msienable) = msi_enable;
    }

    bool counter(const std::string& n, uint64_t& value) override {
#define C(x) if (n == #x) { value = (uint64_t)x; return true; }
        C(rx_cpl_bytes) C(rx_cpl_last_ps) C(rx_cpl_drops) C(most_cplh_used) C(cplh_limit) C(rx_tlps) C(tx_tlps)
        C(msis_sent) C(msis_held) C(error_cpl_timeout) C(error_cpl_unexpect)
#undef C
        return false;
    }
};

S7Sim* s7() { return static_cast<S7Sim*>(sim); }

} // namespace

// C interface (ctypes, run.py): the pcie_7x block ----------------------------------------------------

extern "C" {

int fs_open(int data_width, int link_speed, int link_width, uint64_t seed) {
    delete sim;
    S7Sim* s = new S7Sim();
    sim = s;
    open_link(s, link_speed, link_width, seed);
    s->dwords = data_width / 32;
    return 0;
}

void fs_hard_block(int straddle, double rx_gaps, double backpressure, int tx_buffer_tlps,
                   int cplh_limit, int cpld_bytes, uint64_t bar0_base, uint64_t bar0_size) {
    S7Sim* s = s7();
    s->straddle = straddle && s->dwords == 4;
    s->rx_gaps = rx_gaps; s->backpressure = backpressure; s->tx_buffer_tlps = tx_buffer_tlps;
    s->cplh_limit = cplh_limit; s->cpld_limit = cpld_bytes / 16;
    s->bar0_base = bar0_base; s->bar0_size = bar0_size;
}


void fs_hold_msis(int count, uint64_t cycles) { for (int i = 0; i < count; i++) s7()->msi_holds.push_back(cycles); }

}
