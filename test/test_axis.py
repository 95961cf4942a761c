# This file is part of hostlink.
# Copyright (c) 2026 hostlink developers
# SPDX-License-Identifier: BSD-2-Clause

"""AXI4-Stream port maps (cores/pcie/axis.py): each port's direction from the interface's role, the names
LitePCIe's adapters give the block's side (`_a`), an endpoint's four signals, and a name that is not an
AXI4-Stream signal refused."""

import pytest

from migen import Signal

from litex.soc.interconnect import stream

from hostlink.cores.pcie.axis import axis_ports, endpoint_axis_ports


def test_a_slave_interface_takes_the_stream_and_a_master_one_gives_it():
    data, ready = Signal(8), Signal()
    assert axis_ports("s_axis_rq", tdata=data, tready=ready) == {
        "i_s_axis_rq_tdata": data, "o_s_axis_rq_tready": ready}
    assert axis_ports("m_axis_rc", tdata=data, tready=ready) == {
        "o_m_axis_rc_tdata": data, "i_m_axis_rc_tready": ready}


def test_sink_and_suffix_override_the_names_role():
    # LitePCIe's RQ adapter gives the block's s_axis_rq stream on its s_axis_rq_*_a ports.
    data, ready = Signal(8), Signal()
    assert axis_ports("s_axis_rq", sink=False, suffix="_a", tdata=data, tready=ready) == {
        "o_s_axis_rq_tdata_a": data, "i_s_axis_rq_tready_a": ready}


def test_an_endpoints_data_valid_ready_and_last():
    endpoint = stream.Endpoint([("data", 32)])
    assert endpoint_axis_ports("m_axis_c2h", endpoint) == {
        "o_m_axis_c2h_tdata":  endpoint.data,
        "o_m_axis_c2h_tvalid": endpoint.valid,
        "i_m_axis_c2h_tready": endpoint.ready,
        "o_m_axis_c2h_tlast":  endpoint.last,
    }


def test_a_name_that_is_not_an_axi4_stream_signal_is_refused():
    with pytest.raises(ValueError, match=r"one of tdata, tkeep, tlast, tready, tuser, tvalid, not 'tstrb'"):
        axis_ports("s_axis_rq", tstrb=Signal(4))
