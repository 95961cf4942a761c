# This file is part of hostlink.
# Copyright (c) 2026 hostlink developers
# SPDX-License-Identifier: BSD-2-Clause

"""A user's core on a DMA channel: finding it from the command line, checking what it offers, wiring it.

A user core is a class, built as `Core(dma_data_width, sys_clk_freq)`, whose instances offer (the
contract; examples/accelerator.py shows each part):

- `data_width`: its streams' width in bits, whole bytes, dividing the DMA's width or a multiple of it;
- `clock_domain`: the name of its clock domain ("sys": the SoC's own clock), `clk_freq` its frequency in
  Hz (the SoC, or the simulation, makes the domain);
- `sink`: host-to-FPGA data in, `source`: FPGA-to-host data out, each a `stream.Endpoint` with a `data`
  field of `data_width` bits, in `clock_domain`, and optionally a `bytes` field (packets flow: the bytes
  of a word with `last` that hold data, 0 the whole word; hostlink.cores.pcie.bytes_converter's
  `packet_layout`);
- optionally CSRs of its own (in the SoC's clock), and for the simulation `model(data, settings)` and
  `SIM_SETTINGS`.

`load_user_core("pkg.module:Class")`, `load_user_core("path/to/file.py:Class")` or
`load_user_core("path/to/core.v:module")` (a Verilog module, hostlink.cores.pcie.verilog_core) finds the class;
`add_user_core(soc, core, channel)` connects an instance to the channel's user port (the SoC built with
`user_ports=user_port_params(core)` for that channel) as `soc.user_core`.
"""

import importlib
import importlib.util
import logging
import os
import re
import sys

from migen import ClockDomain, ClockSignal, ResetSignal

from hostlink.cores.pcie.config import speed_grade
from hostlink.cores.pcie.user_port import check_user_port
from hostlink.cores.pcie.verilog_core import is_verilog_spec, verilog_core_class

DEFAULT_FIFO_DEPTH = 512


def absolute_spec(spec):
    """`spec` with its file (FILE.py:CLASS, FILE.v:MODULE) as an absolute path: the simulator runs in a
    folder of its own, where a path relative to the user's is not found."""
    module_name, sep, class_name = str(spec).rpartition(":")
    if sep and (module_name.endswith(".py") or is_verilog_spec(module_name)):
        return f"{os.path.abspath(module_name)}:{class_name}"
    return spec


def load_user_core(spec):
    """The class named by `spec`, "module:Class", "file.py:Class" (a module is looked up from the current
    directory first) or "file.v:module" (a Verilog module with AXI4-Stream ports, verilog_core.py). Raises
    ValueError with one line saying what is wrong."""
    module_name, sep, class_name = str(spec).rpartition(":")
    if not sep or not module_name or not class_name.isidentifier():
        raise ValueError(f"user core must be given as MODULE:CLASS, FILE.py:CLASS or FILE.v:MODULE, not {spec!r}")
    if is_verilog_spec(module_name):
        return verilog_core_class(module_name, class_name)
    if module_name.endswith(".py"):
        if not os.path.isfile(module_name):
            raise ValueError(f"user core file {module_name} does not exist")
        name = "hostlink_user_core_" + os.path.splitext(os.path.basename(module_name))[0]
        loader_spec = importlib.util.spec_from_file_location(name, module_name)
        module = importlib.util.module_from_spec(loader_spec)
        # In sys.modules, as an import puts it: `inspect` finds a class's source through its module there.
        sys.modules[name] = module
        try:
            loader_spec.loader.exec_module(module)
        except Exception as error:
            del sys.modules[name]
            raise ValueError(f"user core file {module_name} does not load: {type(error).__name__}: {error}")
    else:
        if os.getcwd() not in sys.path:
            sys.path.insert(0, os.getcwd())
        try:
            module = importlib.import_module(module_name)
        except ModuleNotFoundError as error:
            raise ValueError(f"user core module {module_name} not found ({error})")
        except Exception as error:
            raise ValueError(f"user core module {module_name} does not load: {type(error).__name__}: {error}")
    cls = getattr(module, class_name, None)
    if not isinstance(cls, type):
        raise ValueError(f"user core module {module_name} has no class {class_name}")
    return cls


def check_user_core(core, dma_data_width):
    """Refuse a core that does not offer the contract's ports, naming what is missing or wrong."""
    name = type(core).__name__
    for attribute in ("data_width", "clock_domain", "clk_freq", "sink", "source"):
        if not hasattr(core, attribute):
            raise ValueError(f"user core {name} has no `{attribute}` (see hostlink.cores.pcie.user_core)")
    try:
        check_user_port(dma_data_width, core.data_width, DEFAULT_FIFO_DEPTH)
    except ValueError as error:
        raise ValueError(f"user core {name}: {error}")
    if not isinstance(core.clock_domain, str) or not core.clock_domain.isidentifier():
        raise ValueError(f"user core {name}: clock_domain must be a clock domain's name, not {core.clock_domain!r}")
    if not isinstance(core.clk_freq, (int, float)) or not core.clk_freq > 0:
        raise ValueError(f"user core {name}: clk_freq must be a frequency in Hz, not {core.clk_freq!r}")
    for port in ("sink", "source"):
        data = getattr(getattr(core, port), "data", None)
        if data is None or len(data) != core.data_width:
            raise ValueError(f"user core {name}: `{port}` must be a stream endpoint with a "
                             f"{core.data_width}-bit `data` field")


def build_user_core(cls, dma_data_width, sys_clk_freq):
    """`cls(dma_data_width, sys_clk_freq)`, checked against the contract (check_user_core)."""
    try:
        core = cls(dma_data_width, sys_clk_freq)
    except TypeError as error:
        raise ValueError(f"user core {cls.__name__} must be built as {cls.__name__}(dma_data_width, "
                         f"sys_clk_freq): {error}")
    check_user_core(core, dma_data_width)
    return core


def user_port_params(core, fifo_depth=DEFAULT_FIFO_DEPTH):
    """The UserPort keyword arguments (add_pcie_dma's user_ports) for `core`."""
    return dict(data_width=core.data_width, clock_domain=core.clock_domain, fifo_depth=fifo_depth)


def port_bandwidth_note(core, dma_data_width, sys_clk_freq):
    """None when the core's width and clock carry what the DMA can; else one line saying what the port will
    cap at."""
    core_rate = core.data_width * core.clk_freq / 8
    dma_rate  = dma_data_width * sys_clk_freq / 8
    if core_rate >= dma_rate:
        return None
    return (f"user core {type(core).__name__}: {core.data_width} bits at {core.clk_freq/1e6:g} MHz carry "
            f"{core_rate/1e9:.3f} GB/s each way, less than the DMA's {dma_rate/1e9:.3f}: the channel will cap there")


def mmcm_user_clock(soc, core):
    """The core's clock domain from an MMCM on the SoC's clock (S7MMCM checks the VCO and the output
    frequency for the part's speed grade); its reset held until the MMCM locks and while the SoC is in
    reset."""
    from litex.soc.cores.clock import S7MMCM
    cd = ClockDomain(core.clock_domain)
    soc.clock_domains += cd
    grade = speed_grade(soc.platform.device)
    soc.user_core_mmcm = mmcm = S7MMCM(speedgrade=grade)
    soc.comb += mmcm.reset.eq(ResetSignal("sys"))
    mmcm.register_clkin(ClockSignal("sys"), soc.sys_clk_freq)
    mmcm.create_clkout(cd, core.clk_freq)
    try:
        mmcm.compute_config()   # Here, for a message now rather than a traceback at generation.
    except ValueError:
        raise ValueError(f"user core {type(core).__name__}: no MMCM setting makes {core.clk_freq/1e6:g} MHz from "
                         f"the SoC's {soc.sys_clk_freq/1e6:g} MHz clock (7-series, {grade} speed grade): choose "
                         f"another clk_freq")
    soc.platform.add_false_path_constraints(soc.crg.cd_sys.clk, cd.clk)


def prepare_user_core(user_core, dma_data_width, sys_clk_freq):
    """For a SoC's constructor: `user_core` ({"spec": "module:Class", "channel": n}, or None) built for the
    DMA's width and the SoC's clock. Returns (core, user_ports for add_pcie_dma), (None, None) without."""
    if user_core is None:
        return None, None
    core = build_user_core(load_user_core(user_core["spec"]), dma_data_width, sys_clk_freq)
    note = port_bandwidth_note(core, dma_data_width, sys_clk_freq)
    if note:
        logging.getLogger("hostlink").warning(note)
    return core, {user_core["channel"]: user_port_params(core)}


def finish_user_core(soc, core, user_core, clock=None):
    """After add_pcie_dma: the core's clock (`clock(soc, core)`, mmcm_user_clock by default; none for a core
    in "sys") and the core on its channel (add_user_core)."""
    if core is None:
        return
    if core.clock_domain != "sys":
        (clock or mmcm_user_clock)(soc, core)
    add_user_core(soc, core, user_core["channel"])


def add_user_core(soc, core, channel):
    """`core` as `soc.user_core`, on channel `channel`'s user port (`soc.pcie_dma<channel>_user`)."""
    port = getattr(soc, f"pcie_dma{channel}_user", None)
    if port is None:
        raise ValueError(f"channel {channel} of the SoC has no user port: build the SoC with "
                         f"user_ports={{{channel}: user_port_params(core)}}")
    soc.add_module(name="user_core", module=core)
    for path in getattr(core, "VERILOG_SOURCES", []):   # A Verilog core's own files (verilog_core.py).
        soc.platform.add_source(path)
    # `bytes` (a packet's final word's bytes of data, packets flow) reaches a core whose sink has it; a
    # core's source without it leaves the port's at 0 (the whole word).
    soc.comb += [
        port.source.connect(core.sink, omit=set() if hasattr(core.sink, "bytes") else {"bytes"}),
        core.source.connect(port.sink),
    ]
    return core
