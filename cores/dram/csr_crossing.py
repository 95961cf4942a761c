# This file is part of hostlink.
# Copyright (c) 2026 hostlink developers
# SPDX-License-Identifier: BSD-2-Clause

"""Action registers of a module that runs in another clock domain than the CSR bus.

LiteX's CSR banks run in `sys`. A storage register (CSRStorage) lives in the bank, so a module in the
`dram` domain only reads a value that is static while it is used. A plain `CSR()`, though, is an
action: its `re` is a single `sys` cycle pulse, driven combinationally by the bank, that the module
acts on in its own domain. LiteDRAM's DFI injector (`command_issue`: one DRAM command per write) and
the 7-series DDR3 PHY (`rdly_dq_inc`, `rdly_dq_bitslip`, `wdly_*`, `cdly_*`, `wlevel_strobe`: one
delay tap or bitslip per write) are built that way. Across clocks such a pulse is seen on two edges
when the module's clock is faster (a command issued twice, two taps instead of one) and on none
when it is slower (VC709: `sys` 250 MHz, `dram` 233.25 MHz).

`CSRActionCrossing` gives each such register a `sys`-side twin that the bank sees in its place,
under the same name and at the same address, and brings every write across as exactly one pulse in
the module's domain, with the written value held for it.
"""

from migen import *
from migen.genlib.cdc import PulseSynchronizer

from litex.gen import *

from litex.soc.interconnect.csr import CSR


def _action_registers(module, seen=None):
    """(owner, attribute, CSR) for every plain CSR of `module` and of its submodules."""
    seen = set() if seen is None else seen
    if id(module) in seen:
        return
    seen.add(id(module))
    for name, value in list(vars(module).items()):
        if name.startswith("__") or name == "_fm":
            continue
        if type(value) is CSR:
            yield module, name, value
        elif isinstance(value, Module) and hasattr(value, "get_csrs"):
            yield from _action_registers(value, seen)


class CSRActionCrossing(LiteXModule):
    """Cross every plain CSR of `modules` (already renamed to `odomain`) from `idomain`.

    Call before the SoC is finalized: the CSR banks are built from the registers found then.
    `registers` lists the crossed names, for tests and for the generated documentation.
    """
    def __init__(self, modules, idomain="sys", odomain="dram"):
        if idomain == odomain:
            raise ValueError(f"CSRActionCrossing needs two different clock domains, got {idomain!r} twice")
        self.registers = []

        # # #

        for module in modules:
            for owner, attribute, action in _action_registers(module):
                twin = CSR(action.size, name=action.name)
                # The bank orders its registers by creation (duid): the twin takes the original's
                # place so that the register map is the one the module alone would have.
                twin.duid = action.duid
                setattr(owner, attribute, twin)

                held = Signal(action.size, reset_less=True)
                pulse = PulseSynchronizer(idomain, odomain)
                self.submodules += pulse
                sync = getattr(self.sync, idomain)
                sync += If(twin.re, held.eq(twin.r))
                self.comb += [
                    pulse.i.eq(twin.re),
                    action.re.eq(pulse.o),
                    action.r.eq(held),
                    twin.w.eq(action.w),
                ]
                self.registers.append(action.name)
