// This file is part of hostlink.
// Copyright (c) 2026 hostlink developers
// SPDX-License-Identifier: BSD-2-Clause
//
// Simulation-only stand-ins for the Xilinx clocking primitives that LitePCIe's S7PCIEPHY instantiates
// around the hard block. They feed only the PIPE clocks of the (modelled) hard block, so their outputs
// are tied low; the hard block's user clock comes from the device model. FDCE is a real flop.

module IBUFDS_GTE2 (output O, output ODIV2, input I, input IB, input CEB);
    assign O = 1'b0;
    assign ODIV2 = 1'b0;
endmodule

module BUFG (output O, input I);
    assign O = I;
endmodule

module BUFGCTRL (output O, input I0, input I1, input S0, input S1, input CE0, input CE1,
                 input IGNORE0, input IGNORE1);
    assign O = 1'b0;
endmodule

module FDCE #(parameter [0:0] INIT = 1'b0) (output reg Q, input C, input CE, input CLR, input D);
    initial Q = INIT;
    always @(posedge C or posedge CLR)
        if (CLR) Q <= 1'b0;
        else if (CE) Q <= D;
endmodule

module MMCME2_ADV #(
    parameter BANDWIDTH = "OPTIMIZED",
    parameter real CLKFBOUT_MULT_F = 5.0,
    parameter real CLKIN1_PERIOD = 10.0,
    parameter real CLKOUT0_DIVIDE_F = 1.0,
    parameter real CLKOUT0_PHASE = 0.0,
    parameter integer CLKOUT1_DIVIDE = 1,
    parameter real CLKOUT1_PHASE = 0.0,
    parameter integer CLKOUT2_DIVIDE = 1,
    parameter real CLKOUT2_PHASE = 0.0,
    parameter integer CLKOUT3_DIVIDE = 1,
    parameter real CLKOUT3_PHASE = 0.0,
    parameter integer CLKOUT4_DIVIDE = 1,
    parameter real CLKOUT4_PHASE = 0.0,
    parameter integer DIVCLK_DIVIDE = 1,
    parameter real REF_JITTER1 = 0.01
) (
    input CLKIN1, input CLKFBIN, input RST, input PWRDWN,
    output CLKFBOUT, output LOCKED,
    output CLKOUT0, output CLKOUT1, output CLKOUT2, output CLKOUT3, output CLKOUT4
);
    assign CLKFBOUT = 1'b0;
    assign LOCKED   = 1'b0;
    assign CLKOUT0  = 1'b0;
    assign CLKOUT1  = 1'b0;
    assign CLKOUT2  = 1'b0;
    assign CLKOUT3  = 1'b0;
    assign CLKOUT4  = 1'b0;
endmodule
