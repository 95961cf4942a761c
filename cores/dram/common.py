# This file is part of hostlink.
# Copyright (c) 2026 hostlink developers
# SPDX-License-Identifier: BSD-2-Clause

"""What the DRAM DMA cores share: parameter checks, the request-window check, the DRAM port CDC."""

from migen import *

from litex.gen import *

from litedram.common import LiteDRAMNativePort
from litedram.frontend.adapter import LiteDRAMNativePortCDC

# Request registers are 32-bit CSRs: byte addresses and lengths up to 4 GiB.
REQUEST_BITS = 32

# Parameter checks ---------------------------------------------------------------------------------

def check_stream_width(data_width, native_width):
    if data_width not in (64, 128, 256, 512):
        raise ValueError(f"DMA data width must be 64, 128, 256 or 512 bits, not {data_width!r}")
    if native_width % data_width:
        raise ValueError(f"the DRAM native width ({native_width} bits) must be a multiple of the DMA "
                         f"data width, not {data_width!r} bits")


def check_dram_size(dram_size, native_width):
    if not isinstance(dram_size, int) or dram_size <= 0 or dram_size & (dram_size - 1):
        raise ValueError(f"DRAM size must be a positive power of two in bytes, not {dram_size!r}")
    if dram_size > 2**REQUEST_BITS:
        raise ValueError(f"DRAM size must be at most 4 GiB (32-bit request registers), not {dram_size!r}")
    if dram_size < native_width // 8:
        raise ValueError(f"DRAM size must hold at least one {native_width}-bit word, not {dram_size!r}")

def dram_size(module):
    """Bytes a LiteDRAM module instance holds on a 64-bit SODIMM data bus."""
    g = module.geom_settings
    return 2**(g.bankbits + g.rowbits + g.colbits) * 8

# Request window -----------------------------------------------------------------------------------

class RequestWindow(LiteXModule):
    """Whether a (base, length) request in bytes is legal: whole native words, not empty, inside the DRAM.

    Combinational; `first` and `words` are the request in native words, valid when `ok`.
    """
    def __init__(self, dram_size, native_width):
        self.base   = Signal(REQUEST_BITS)   # i: byte address.
        self.length = Signal(REQUEST_BITS)   # i: bytes.
        self.ok     = Signal()               # o
        self.first  = Signal(REQUEST_BITS)   # o: first native word.
        self.words  = Signal(REQUEST_BITS)   # o: native words.

        # # #

        shift = log2_int(native_width // 8)
        end   = Signal(REQUEST_BITS + 1)
        self.comb += [
            end.eq(self.base + self.length),
            self.ok.eq(
                (self.base[:shift]   == 0) &
                (self.length[:shift] == 0) &
                (self.length != 0) &
                (end <= dram_size)
            ),
            self.first.eq(self.base[shift:]),
            self.words.eq(self.length[shift:]),
        ]

# Window control -----------------------------------------------------------------------------------

# The control interface of DRAMStreamReader and DRAMStreamWriter (hostlink.cores.dram.channel drives it from
# its CSRs): name, width, direction and meaning of each signal, made by add_window_control().
WINDOW_CONTROL = [
    ("base",    REQUEST_BITS, "i: window byte address."),
    ("length",  REQUEST_BITS, "i: window bytes."),
    ("start",   1,            "i: opens the window (pulse)."),
    ("abort",   1,            "i: closes an open window (pulse)."),
    ("busy",    1,            "o: a window is open or its last transfers are in flight."),
    ("done",    1,            "o: the last window was moved completely."),
    ("refused", 1,            "o: the start request was refused (pulse)."),
    ("words",   REQUEST_BITS, "o: native words moved in the last window."),
]

def window_start(core, window, *loads):
    """What an idle DRAM stream core does with `start`: a legal request (`window`, its RequestWindow) that is
    not aborted at once does `loads` (the core's own NextValues), clears `words` and `done` and opens the
    window (state RUN); any other is refused."""
    return If(core.start,
        If(window.ok & ~core.abort,
            *loads,
            NextValue(core.words, 0),
            NextValue(core.done,  0),
            NextState("RUN"),
        ).Else(
            core.refused.eq(1),
        )
    )

# DRAM port in another clock domain ----------------------------------------------------------------

def native_port_cdc(dram_port, controller_domain, user_domain="sys"):
    """A native port in `user_domain` for `dram_port`, a crossbar port of a controller that runs in
    `controller_domain` (renamed from LiteDRAM's "sys"). Returns (port, cdc_module).

    The crossbar's own clock_domain= option names the far side "sys", which, once the whole controller
    is renamed, would be the controller's domain: the crossing is built here instead, outside the rename.
    """
    controller_side = LiteDRAMNativePort(dram_port.mode, dram_port.address_width, dram_port.data_width,
        clock_domain=controller_domain)
    user_side = LiteDRAMNativePort(dram_port.mode, dram_port.address_width, dram_port.data_width,
        clock_domain=user_domain)
    # Deep enough for a full burst of reads in flight across the crossing.
    cdc = LiteDRAMNativePortCDC(user_side, controller_side, cmd_depth=16, wdata_depth=32, rdata_depth=32)
    cdc.comb += controller_side.connect(dram_port)
    return user_side, cdc
