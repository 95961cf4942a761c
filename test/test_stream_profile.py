# This file is part of hostlink.
# Copyright (c) 2026 hostlink developers
# SPDX-License-Identifier: BSD-2-Clause

"""`./sim.py dma --profile-streams`: names checked against the SoC's Verilog before anything is built,
the flag's parsing, the printed table. (The counting itself runs inside the cocotb bench; it was checked
on the ZC706 model: 64 KiB h2c is 4096 beats of 16 bytes on the completion stream.)"""

import argparse

import pytest

from hostlink.sim.dma import build_parser, parse_stream_names
from hostlink.sim.pcie.stream_profile import StreamProfileError, check_stream_names, format_profile

VERILOG = """module sim_top(
    input  wire          sim_sys_clk,
    input  wire          pcie_s7_m_axis_rx_tvalid,
    output wire          pcie_s7_m_axis_rx_tready,
    output wire  [127:0] pcie_s7_m_axis_rx_tdata
);
wire          depacketizer_cmp_source_valid;
reg           depacketizer_cmp_source_ready = 1'd0;
reg   [255:0] reader_source_data = 256'd0;
wire          writer_sink_valid;
endmodule
"""


@pytest.fixture
def verilog(tmp_path):
    path = tmp_path / "sim_top.v"
    path.write_text(VERILOG)
    return str(path)


def test_declared_streams_and_hard_block_ports_are_accepted(verilog):
    check_stream_names(verilog, ["depacketizer_cmp_source", "pcie_s7_m_axis_rx_tvalid"])


@pytest.mark.parametrize("name, missing", [
    ("nope",              "'nope_valid', 'nope_ready'"),
    ("writer_sink",       "'writer_sink_ready'"),
    ("reader_source",     "'reader_source_valid', 'reader_source_ready'"),
    ("pcie_s7_m_axis_tx_tvalid", "'pcie_s7_m_axis_tx_tvalid', 'pcie_s7_m_axis_tx_tready'"),
])
def test_unknown_or_half_streams_are_refused_by_name(verilog, name, missing):
    with pytest.raises(StreamProfileError, match=f"no signal {missing}"):
        check_stream_names(verilog, ["depacketizer_cmp_source", name])


def test_flag_parsing():
    args = build_parser().parse_args(["--profile-streams", "a_source, b_sink,"])
    assert args.profile_streams == ["a_source", "b_sink"]
    assert build_parser().parse_args([]).profile_streams is None
    for bad in ["", ",", "a-b", "a.b"]:
        with pytest.raises(argparse.ArgumentTypeError, match="Verilog identifiers"):
            parse_stream_names(bad)


def test_table_lists_every_stream_with_its_counts():
    table = format_profile({"depacketizer_cmp_source": {"transfer": 4096, "stall": 3, "idle": 2068},
                            "x":                       {"transfer": 0,    "stall": 0, "idle": 7}})
    lines = table.splitlines()
    assert lines[0].split() == ["stream", "transfer", "stall", "idle"]
    assert lines[1].split() == ["depacketizer_cmp_source", "4096", "3", "2068"]
    assert lines[2].split() == ["x", "0", "0", "7"]
