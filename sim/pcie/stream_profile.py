# This file is part of hostlink.
# Copyright (c) 2026 hostlink developers
# SPDX-License-Identifier: BSD-2-Clause

"""Stream occupancy of a simulated SoC: for each named stream, the cycles it transferred a beat
(valid and ready), stalled (valid, not ready) and idled (not valid), counted on the system clock
during a job.

A DMA that falls short of the link shows where the beats are lost: the first stream downstream of
a stall that idles while its source has data is the one to look at. `./sim.py dma --profile-streams
NAMES` prints the table; NAMES are stream prefixes as LiteX names them in the simulated SoC's
Verilog, `<prefix>_valid` / `<prefix>_ready` (e.g. `pcie_endpoint_depacketizer_source`), or AXI
stream prefixes ending in `_tvalid` (the hard block's ports). The model is then built with every
signal visible (a separate, slower model).
"""

import re

import cocotb
from cocotb.triggers import RisingEdge


class StreamProfileError(ValueError):
    pass


def check_stream_names(verilog_path, names):
    """Refuse, before the simulation starts, a stream the SoC's Verilog does not declare."""
    with open(verilog_path) as f:
        verilog = f.read()
    declared  = set(re.findall(r"^\s*(?:reg|wire)\b[^;]*?\b(\w+)\s*(?:=[^;]*)?;", verilog, re.M))
    declared |= set(re.findall(r"^\s*(?:input|output|inout)\b[^,;]*?\b(\w+)\s*,?\s*$", verilog, re.M))
    missing = []
    for name in names:
        valid, ready = ((name, name[:-len("_tvalid")] + "_tready") if name.endswith("_tvalid")
                        else (name + "_valid", name + "_ready"))
        missing += [signal for signal in (valid, ready) if signal not in declared]
    if missing:
        raise StreamProfileError(f"--profile-streams: the simulated SoC has no signal "
            f"{', '.join(repr(m) for m in missing)} (a stream NAME needs NAME_valid and NAME_ready "
            f"in {verilog_path})")


def _handshake(dut, name):
    """The (valid, ready) handles of stream `name` in the model."""
    if name.endswith("_tvalid"):
        names = (name, name[:-len("_tvalid")] + "_tready")
    else:
        names = (name + "_valid", name + "_ready")
    handles = []
    for signal in names:
        try:
            handles.append(getattr(dut, signal))
        except AttributeError:
            raise StreamProfileError(f"--profile-streams: the simulated SoC has no signal {signal!r} "
                f"(stream names are prefixes of <name>_valid/<name>_ready in its sim_top.v)") from None
    return tuple(handles)


class StreamProfiler:
    """Counts transfer/stall/idle cycles of `names` on `clk` between start() and stop()."""
    def __init__(self, dut, clk, names):
        self.clk     = clk
        self.names   = list(names)
        self.streams = {name: _handshake(dut, name) for name in self.names}
        self._task   = None

    async def _count(self, counts):
        while True:
            await RisingEdge(self.clk)
            for name, (valid, ready) in self.streams.items():
                if int(valid.value):
                    counts[name]["transfer" if int(ready.value) else "stall"] += 1
                else:
                    counts[name]["idle"] += 1

    def start(self):
        self.counts = {name: {"transfer": 0, "stall": 0, "idle": 0} for name in self.names}
        self._task  = cocotb.start_soon(self._count(self.counts))

    def stop(self):
        self._task.cancel()
        self._task = None
        return self.counts


def format_profile(profile):
    """The table `./sim.py dma` prints for one job's profile."""
    width = max([len("stream")] + [len(name) for name in profile])
    lines = [f"  {'stream':<{width}} {'transfer':>9} {'stall':>9} {'idle':>9}"]
    for name, counts in profile.items():
        lines.append(f"  {name:<{width}} {counts['transfer']:>9} {counts['stall']:>9} {counts['idle']:>9}")
    return "\n".join(lines)
