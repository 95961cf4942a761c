# This file is part of hostlink.
# Copyright (c) 2026 hostlink developers
# SPDX-License-Identifier: BSD-2-Clause

"""AXI4-Stream port maps for `Instance`: the Xilinx PCIe blocks, LitePCIe's adapters and Verilog user cores name
their stream ports `<interface>_<signal>` (`s_axis_rq_tdata`, `m_axis_c2h_tready`, ...).
"""

# AXI4-Stream ports --------------------------------------------------------------------------------

AXIS_SIGNALS = ("tdata", "tkeep", "tlast", "tready", "tuser", "tvalid")

def axis_ports(interface, sink=None, suffix="", **signals):
    """`Instance` keyword arguments that connect `signals` (tdata=..., tvalid=..., by AXI4-Stream signal name) to
    the ports `<interface>_<signal><suffix>` of a module.

    A module that takes the stream (`sink`) has tready as an output and the other signals as inputs; one that
    gives it, the reverse. `sink` defaults to what AXI's names say: an `s_axis_*` interface (slave) takes the
    stream, an `m_axis_*` one (master) gives it.
    """
    if sink is None:
        sink = interface.startswith("s_")
    for name in signals:
        if name not in AXIS_SIGNALS:
            raise ValueError(f"an AXI4-Stream signal is one of {', '.join(AXIS_SIGNALS)}, not {name!r}")
    return {f"{'o' if (name == 'tready') == sink else 'i'}_{interface}_{name}{suffix}": signal
        for name, signal in signals.items()}

def endpoint_axis_ports(interface, endpoint, sink=None):
    """axis_ports() of a LiteX stream Endpoint with a `data` payload: tdata, tvalid, tready and tlast."""
    return axis_ports(interface, sink,
        tdata  = endpoint.data,
        tvalid = endpoint.valid,
        tready = endpoint.ready,
        tlast  = endpoint.last,
    )
