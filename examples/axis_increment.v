// This file is part of hostlink.
// Copyright (c) 2026 hostlink developers
// SPDX-License-Identifier: BSD-2-Clause
//
// An example user core in Verilog: each 32-bit little-endian lane of the host's data comes back plus
// INCREMENT (mod 2^32), through one register stage that keeps the AXI4-Stream handshake.
//
// Copy it to start your own. hostlink instantiates it on a DMA channel's user port with
//   ./targets/zc706.py --user-core examples/axis_increment.v:axis_increment
// (also vc709, kc705 --with-pcie), and in simulation, with its Python model (examples/verilog_increment.py),
//   ./sim.py dma --board zc706 --user-core examples.verilog_increment:Increment --sizes 64K
// It sets DATA_WIDTH to the channel's DMA width (a multiple of 32 here); CLK_FREQ_HZ is the frequency of
// aclk, which hostlink makes (an MMCM on the SoC's clock on a board). The ports' names and directions are
// what hostlink looks for (hostlink.cores.pcie.verilog_core); ./sim.py dma checks every result against the
// Python model in examples/verilog_increment.py.

module axis_increment #(
    parameter DATA_WIDTH  = 128,
    parameter CLK_FREQ_HZ = 200_000_000,
    parameter INCREMENT   = 1
) (
    input  wire                  aclk,
    input  wire                  aresetn,
    // Host-to-FPGA data in.
    input  wire [DATA_WIDTH-1:0] s_axis_h2c_tdata,
    input  wire                  s_axis_h2c_tvalid,
    output wire                  s_axis_h2c_tready,
    input  wire                  s_axis_h2c_tlast,
    // FPGA-to-host data out.
    output reg  [DATA_WIDTH-1:0] m_axis_c2h_tdata,
    output reg                   m_axis_c2h_tvalid,
    input  wire                  m_axis_c2h_tready,
    output reg                   m_axis_c2h_tlast
);
    // The stage takes a word when it is empty or its word leaves in this cycle.
    assign s_axis_h2c_tready = ~m_axis_c2h_tvalid | m_axis_c2h_tready;

    integer lane;
    always @(posedge aclk) begin
        if (!aresetn) begin
            m_axis_c2h_tvalid <= 1'b0;
            m_axis_c2h_tlast  <= 1'b0;
        end else if (s_axis_h2c_tready) begin
            m_axis_c2h_tvalid <= s_axis_h2c_tvalid;
            m_axis_c2h_tlast  <= s_axis_h2c_tlast;
            for (lane = 0; lane < DATA_WIDTH/32; lane = lane + 1)
                m_axis_c2h_tdata[lane*32 +: 32] <= s_axis_h2c_tdata[lane*32 +: 32] + INCREMENT;
        end
    end
endmodule
