# This file is part of hostlink.
# Copyright (c) 2026 hostlink developers
# SPDX-License-Identifier: BSD-2-Clause

"""A Verilog module as a user core: `--user-core path/to/core.v:module`, through AXI4-Stream port names.

The module offers, with these names (ANSI-style port declarations), the same as a Python user core:

    input                   aclk,                 // its clock
    input                   aresetn,              // its reset, active low, synchronous to aclk
    input  [DATA_WIDTH-1:0] s_axis_h2c_tdata,     // host-to-FPGA data in (the user port's source)
    input                   s_axis_h2c_tvalid,
    output                  s_axis_h2c_tready,
    input                   s_axis_h2c_tlast,     // the end of a DMA buffer
    output [DATA_WIDTH-1:0] m_axis_c2h_tdata,     // FPGA-to-host data out (into the user port's sink)
    output                  m_axis_c2h_tvalid,
    input                   m_axis_c2h_tready,
    output                  m_axis_c2h_tlast      // ends a buffer early where the DMA honours it

Parameters the module may declare:

- `DATA_WIDTH`: hostlink sets it to the channel's DMA width (128 on the ZC706 and KC705, 256 on the VC709);
  without it, the width is read from `s_axis_h2c_tdata` (and `m_axis_c2h_tdata` must match);
- `CLK_FREQ_HZ`: its default value is the frequency of the module's own clock (domain "user", from an
  MMCM on a board, from the simulation's clock generator in `./sim.py`); without it, or 0, the module
  runs on the SoC's clock.

`verilog_core_class(path, module)` reads the file and returns a class that keeps the Python contract
(hostlink.cores.pcie.user_core), instantiating the module; the file is added to the SoC's sources
(`VERILOG_SOURCES`). The reading is deliberately small: a module whose ports or parameters it cannot read
is refused with one line that says which, rather than guessed at.
"""

import ast
import operator
import os
import re

from migen import *

from litex.gen import *

from litex.soc.interconnect import stream

from hostlink.cores.pcie.axis import endpoint_axis_ports

VERILOG_SUFFIXES = (".v", ".sv")
PORTS = {
    "aclk":              ("input",  None),
    "aresetn":           ("input",  None),
    "s_axis_h2c_tdata":  ("input",  "data"),
    "s_axis_h2c_tvalid": ("input",  1),
    "s_axis_h2c_tready": ("output", 1),
    "s_axis_h2c_tlast":  ("input",  1),
    "m_axis_c2h_tdata":  ("output", "data"),
    "m_axis_c2h_tvalid": ("output", 1),
    "m_axis_c2h_tready": ("input",  1),
    "m_axis_c2h_tlast":  ("output", 1),
}
USER_CLOCK_DOMAIN = "user"


def is_verilog_spec(module_name):
    return module_name.endswith(VERILOG_SUFFIXES)

# Reading the module -------------------------------------------------------------------------------

_OPERATORS = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
              ast.FloorDiv: operator.floordiv, ast.Div: operator.floordiv}


def _evaluate(text, parameters, what):
    """An integer expression of numbers, parameters, + - * / and parentheses (Verilog's subset we read)."""
    text = re.sub(r"(\d)_(?=\d)", r"\1", text.strip())   # 100_000_000
    def value(node):
        if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)):
            return int(node.value)
        if isinstance(node, ast.Name) and node.id in parameters:
            return parameters[node.id]
        if isinstance(node, ast.BinOp) and type(node.op) in _OPERATORS:
            return _OPERATORS[type(node.op)](value(node.left), value(node.right))
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            return -value(node.operand)
        raise ValueError
    try:
        return value(ast.parse(text, mode="eval").body)
    except (ValueError, SyntaxError):
        raise ValueError(f"cannot read {what} {text!r}: use numbers, parameters and + - * /")


def _balanced(text, start):
    """The text inside the parentheses that open at text[start], and the index after them."""
    depth = 0
    for i in range(start, len(text)):
        depth += {"(": 1, ")": -1}.get(text[i], 0)
        if depth == 0:
            return text[start + 1:i], i + 1
    raise ValueError("unbalanced parentheses")


def _split_top_level(text):
    """`text` cut at the commas outside brackets and parentheses."""
    items, depth, current = [], 0, ""
    for char in text:
        depth += {"(": 1, "[": 1, "{": 1, ")": -1, "]": -1, "}": -1}.get(char, 0)
        if char == "," and depth == 0:
            items.append(current)
            current = ""
        else:
            current += char
    return items + [current]


def read_verilog_module(path, module):
    """(ports {name: (direction, width)}, parameters {name: default}) of `module` in the file `path`: its
    ANSI-style header `module name #(parameter ...) (input ..., output ...);` and its body's parameters."""
    if not os.path.isfile(path):
        raise ValueError(f"user core file {path} does not exist")
    with open(path, errors="replace") as f:
        text = f.read()
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.DOTALL)
    text = re.sub(r"//[^\n]*", " ", text)
    found = re.search(rf"\bmodule\s+{re.escape(module)}\b", text)
    if not found:
        raise ValueError(f"user core file {path} has no module {module}")
    where = f"user core {module} ({path})"
    position = found.end()
    parameters = {}
    try:
        header = re.compile(r"\s*#\s*\(").match(text, position)
        if header:
            inside, position = _balanced(text, header.end() - 1)
            for item in _split_top_level(inside):
                item = re.sub(r"^\s*(parameter|localparam)\s+(integer\s+|int\s+)?", "", item)
                name, sep, default = item.partition("=")
                if sep:
                    parameters[name.split()[-1]] = _evaluate(default, parameters, f"parameter {name.strip()} =")
        opening = re.compile(r"\s*\(").match(text, position)
        if not opening:
            raise ValueError(f"{where}: no port list after the module's name")
        inside, position = _balanced(text, opening.end() - 1)
    except ValueError as error:
        raise ValueError(f"{where}: {error}" if not str(error).startswith("user core") else str(error))
    body = text[position:text.find("endmodule", position)]
    for name, default in re.findall(r"\bparameter\s+(?:integer\s+|int\s+)?(\w+)\s*=\s*([^,;]+)", body):
        try:
            parameters[name] = _evaluate(default, parameters, f"parameter {name} =")
        except ValueError as error:
            raise ValueError(f"{where}: {error}")
    ports, direction, width = {}, None, 1
    declaration = re.compile(r"^\s*(input|output|inout)\b\s*((?:wire|reg|logic|var|signed)\s+)*"
                             r"(\[[^\]]*\])?\s*(\w+)\s*$", re.DOTALL)
    for item in _split_top_level(inside):
        if not item.strip():
            continue
        match = declaration.match(item)
        if match:
            direction, _, bounds, name = match.groups()
            width = 1
            if bounds:
                msb, _, lsb = bounds[1:-1].partition(":")
                try:
                    width = (_evaluate(msb, parameters, f"the width of {name}")
                             - _evaluate(lsb or "0", parameters, f"the width of {name}") + 1)
                except ValueError as error:
                    raise ValueError(f"{where}: {error}")
        elif direction and re.fullmatch(r"\s*\w+\s*", item):
            name = item.strip()   # `input a, b`: b as a.
        else:
            raise ValueError(f"{where}: cannot read the port declaration {' '.join(item.split())!r} "
                             f"(ANSI style: input [W-1:0] name, ...)")
        ports[name] = (direction, width)
    return ports, parameters


def check_verilog_ports(path, module, ports):
    """The width of the module's data ports; one line for a port missing, in the wrong direction or width."""
    for name, (direction, width) in PORTS.items():
        if name not in ports:
            raise ValueError(f"user core {module} ({path}) has no port {name} (see hostlink.cores.pcie.verilog_core)")
        if ports[name][0] != direction:
            raise ValueError(f"user core {module} ({path}): port {name} must be an {direction}")
        if isinstance(width, int) and ports[name][1] != width:
            raise ValueError(f"user core {module} ({path}): port {name} must be 1 bit wide, not {ports[name][1]}")
    h2c, c2h = ports["s_axis_h2c_tdata"][1], ports["m_axis_c2h_tdata"][1]
    if h2c != c2h:
        raise ValueError(f"user core {module} ({path}): s_axis_h2c_tdata ({h2c} bits) and m_axis_c2h_tdata "
                         f"({c2h} bits) must be as wide")
    return h2c

# The core -----------------------------------------------------------------------------------------

def verilog_core_class(path, module):
    """A user core class (hostlink.cores.pcie.user_core's contract) around `module` of the file `path`."""
    path = os.path.abspath(path)
    ports, parameters = read_verilog_module(path, module)
    check_verilog_ports(path, module, ports)
    clk_freq = parameters.get("CLK_FREQ_HZ", 0)
    if clk_freq < 0:
        raise ValueError(f"user core {module} ({path}): CLK_FREQ_HZ must be a frequency in Hz or 0, not {clk_freq}")

    class VerilogCore(LiteXModule):
        """The Verilog module as a user core: `sink` (host to FPGA) and `source` (FPGA to host) on its
        s_axis_h2c / m_axis_c2h ports, in its own clock domain when it declares CLK_FREQ_HZ."""
        VERILOG_SOURCES = [path]
        VERILOG_MODULE  = module

        def __init__(self, dma_data_width, sys_clk_freq):
            instance_parameters = {}
            if "DATA_WIDTH" in parameters:
                instance_parameters["p_DATA_WIDTH"] = dma_data_width
                width = dma_data_width
            else:
                width = ports["s_axis_h2c_tdata"][1]
            self.data_width   = width
            self.clock_domain = USER_CLOCK_DOMAIN if clk_freq else "sys"
            self.clk_freq     = clk_freq or sys_clk_freq
            self.sink   = sink   = stream.Endpoint([("data", width)])   # i: host-to-FPGA
            self.source = source = stream.Endpoint([("data", width)])   # o: FPGA-to-host

            # # #

            self.specials += Instance(module,
                **instance_parameters,
                i_aclk              = ClockSignal(self.clock_domain),
                i_aresetn           = ~ResetSignal(self.clock_domain),
                **endpoint_axis_ports("s_axis_h2c", sink),
                **endpoint_axis_ports("m_axis_c2h", source),
            )

    VerilogCore.__name__ = VerilogCore.__qualname__ = module
    return VerilogCore
