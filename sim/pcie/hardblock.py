# This file is part of hostlink.
# Copyright (c) 2026 hostlink developers
# SPDX-License-Identifier: BSD-2-Clause

"""Simulation boundary: a PCIe hard block's ports become top-level ports of the simulated SoC.

LitePCIe's PHYs build everything around the Xilinx hard block (clock-domain crossings, width conversion,
TLP framing, configuration resynchronisation) and end in one `Instance` whose keyword arguments are kept in
`phy.pcie_phy_params`. In simulation we keep all of that logic and replace only the `Instance`: each of its
ports that is wired to a signal becomes a top-level port named `<prefix>_<port>`, which the cocotb device
model (sim/pcie/*_device.py) drives and samples exactly as the hard block would.
"""

from migen import *
from migen.fhdl.structure import _Value

from litex.build.generic_platform import Subsignal, Pins
from litex.gen.signal import Open

# Helpers ------------------------------------------------------------------------------------------

def _is_wired(value):
    # Constants tie an input off, Open() leaves an output unconnected: neither crosses the boundary.
    return isinstance(value, _Value) and not isinstance(value, (Constant, Open))


def port_reader(handle):
    """A function that returns a port's value as `int(handle.value)` does on a two-state simulator
    (Verilator), without building a cocotb LogicArray at each read: the device models sample their busy
    ports on every clock edge (ValueError on X or Z, as int() gives)."""
    get = handle._handle.get_signal_val_binstr
    return lambda: int(get(), 2)


def expose_hard_block(module, platform, params, prefix):
    """Wire `params` (an Instance's i_/o_ keyword arguments) to new top-level ports of `platform`.

    Returns {port name: ("i" or "o", width)} as seen from the hard block, for the device model.
    """
    ports    = {}
    subsigs  = []
    for key, value in params.items():
        direction, _, port = key.partition("_")
        if direction not in ("i", "o"):
            raise ValueError(f"hard block parameter {key!r} is not an i_/o_ port")
        if not _is_wired(value):
            continue
        width = len(value)
        ports[port] = (direction, width)
        subsigs.append(Subsignal(port, Pins(width)))
    platform.add_extension([(prefix, 0, *subsigs)])
    pads = platform.request(prefix)
    for key, value in params.items():
        direction, _, port = key.partition("_")
        if port not in ports:
            continue
        pad = getattr(pads, port)
        if direction == "i":
            module.comb += pad.eq(value)   # Into the hard block: out of the SoC.
        else:
            module.comb += value.eq(pad)   # Out of the hard block: into the SoC.
    return ports
