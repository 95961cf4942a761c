# This file is part of hostlink.
# Copyright (c) 2026 hostlink developers
# SPDX-License-Identifier: BSD-2-Clause

"""The simulated PCIe SoCs: each board's own BaseSoC with only its clocking and hard block replaced.

Everything LitePCIe builds around the hard block stays: the PHY's clock-domain crossings, width converters
and RX aligner, the endpoint, the DMA and its buffering. What changes:

- the CRG: the system clock and reset come from top-level ports `sim_sys_clk` / `sim_sys_rst` (the board's
  PLL has no simulation model here), or, for a SoC that runs on its hard block's user clock (VC709), the
  clock from the block's model and the reset from `sim_sys_rst`;
- the hard block: its ports become top-level ports `pcie_s7_<port>` (hardblock.py) for the device model;
- the remaining Xilinx clocking primitives of the PHY (IBUFDS_GTE2, BUFG, BUFGCTRL, MMCME2_ADV) drive the
  PIPE clocks only, which the hard block's model does not use: `xilinx_stubs.v` ties their outputs low.
"""

import os
import json
import logging
import contextlib
from dataclasses import dataclass

from migen import *

from litex.gen import *
from litex.build.generic_platform import Subsignal, Pins
from migen.genlib.resetsync import AsyncResetSynchronizer
from litex.soc.integration.builder import Builder


from hostlink.cores.pcie.s7phy import S7PCIEPHY
from hostlink.targets.vc709 import soft_reset_held
from hostlink.sim.pcie.hardblock import expose_hard_block
from hostlink.sim.pcie.sim_platform import make_sim_platform
from hostlink.targets import boards as registry

STUBS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "xilinx_stubs.v")

# Simulation clocking ------------------------------------------------------------------------------

# How long the system domain stays in reset after the SoC's soft reset (`ctrl_reset`), standing in for the
# board's PLL relocking: the ZC706's and KC705's CRGs reset their PLL (S7PLL, S7MMCM) with it, and the system
# domain stays in reset until the PLL locks again. Short, to keep simulations short: a board's PLL takes
# its own lock time, well within the 10 ms LitePCIe's probe waits after the reset.
SOFT_RESET_NS = 10_000


class SimCRG(LiteXModule):
    """The system clock and reset from `sim_sys_clk` / `sim_sys_rst`. The SoC's soft reset (`rst`) holds the
    system domain in reset for SOFT_RESET_NS, as the board's PLL does while it relocks: a reset of one cycle
    would leave each asynchronous FIFO of the PCIe PHY (LitePCIe's clock-domain crossings, reset on both sides
    through AsyncResetSynchronizer) with its pointer synchronizers, which no reset clears, holding the pointers
    of before the reset; the FIFO then hands on stale entries, and the first BAR read after the reset lost its
    completion. With a DRAM, its controller's clock and reset come from `sim_dram_clk` / `sim_dram_rst` (the
    PHY model has no `dram4x` side)."""
    def __init__(self, platform, sys_clk_freq, dram_clk_freq=None):
        self.rst    = Signal()
        self.cd_sys = ClockDomain()

        # # #

        # The PLL's lock: its own clock domain, which the soft reset does not reset.
        self.cd_pll = ClockDomain(reset_less=True)
        relock_cycles = round(SOFT_RESET_NS*1e-9*sys_clk_freq)
        relock = Signal(max=relock_cycles + 1, reset_less=True)
        self.sync.pll += If(self.rst, relock.eq(relock_cycles)).Elif(relock != 0, relock.eq(relock - 1))
        if dram_clk_freq is not None:
            self.cd_dram = ClockDomain()
        for name in ["sys"] + (["dram"] if dram_clk_freq is not None else []):
            platform.add_extension([(f"sim_{name}", 0, Subsignal("clk", Pins(1)), Subsignal("rst", Pins(1)))])
            pads = platform.request(f"sim_{name}")
            cd   = getattr(self, f"cd_{name}")
            self.comb += [
                cd.clk.eq(pads.clk),
                cd.rst.eq(pads.rst | self.rst | ((relock != 0) if name == "sys" else 0)),
            ]
            if name == "sys":
                self.comb += self.cd_pll.clk.eq(pads.clk)

class SimPCIeClockedCRG(LiteXModule):
    """For SoCs whose system clock is the PCIe block's user clock (the PHY's `pcie` domain, driven by the
    device model): only the reset comes from the top-level port `sim_sys_rst`, and the soft reset is held
    SOFT_RESET_CYCLES as on the VC709. A DRAM is clocked as in SimCRG."""
    def __init__(self, platform, sys_clk_freq, dram_clk_freq=None):
        self.rst    = Signal()
        self.cd_sys = ClockDomain()

        # # #

        platform.add_extension([("sim_sys", 0, Subsignal("rst", Pins(1)))])
        self.comb += [
            self.cd_sys.clk.eq(ClockSignal("pcie")),
            # The soft reset held as the VC709's CRG holds it (targets/vc709.py).
            self.cd_sys.rst.eq(ResetSignal("pcie") | platform.request("sim_sys").rst | soft_reset_held(self, self.rst)),
        ]
        if dram_clk_freq is not None:
            self.cd_dram = ClockDomain()
            platform.add_extension([("sim_dram", 0, Subsignal("clk", Pins(1)), Subsignal("rst", Pins(1)))])
            pads = platform.request("sim_dram")
            self.comb += [
                self.cd_dram.clk.eq(pads.clk),
                self.cd_dram.rst.eq(pads.rst | self.rst),
            ]

# Simulation PHYs ----------------------------------------------------------------------------------

class SimS7PCIEPHY(S7PCIEPHY):
    """hostlink's S7PCIEPHY (cores/pcie/s7phy.py) whose `pcie_s7` hard block is replaced by top-level ports
    for the device model."""
    HARD_BLOCK_PREFIX = "pcie_s7"

    def do_finalize(self):
        self.hard_block_ports = expose_hard_block(self, self.platform, self.pcie_phy_params,
            prefix=self.HARD_BLOCK_PREFIX)

# Boards -------------------------------------------------------------------------------------------

@dataclass
class SimBoard:
    """A board of the registry (hostlink.targets.boards) as the PCIe simulation runs it."""
    name:           str
    soc_factory:    object   # (dma_channels, with_dram, user_core) -> SoC instance
    device:         str      # Device model: "s7" (sim/pcie/models/s7_device.py) or "us" (cocotbext-pcie's).
    link_speed:     int
    link_width:     int
    data_width:     int
    user_clk_freq:  float
    sys_clk_freq:   object   # Hz, or a function returning the target's default (kept in one place).
    hard_block_prefix: str = "pcie_s7"
    dram_clk_freq:  object = None   # Hz of the DRAM controller, or a function returning the target's.
    # The top-level port carrying the SoC's system clock: `sim_sys_clk`, which the bench drives, or the
    # hard block's user clock, which its model drives (a SoC clocked by its PCIe block).
    sys_clock:      str    = "sim_sys_clk"
    # Max Read Request Size the board's generated driver asks the kernel for (pcie_set_readrq(), which
    # Linux grants under its default bus configuration): the PHY's max_request_limit where that is over
    # 512 (software/driver/), else the firmware's usual 512, which the driver leaves alone.
    driver_read_request: int = 512

    def sys_clk_hz(self):
        return self.sys_clk_freq() if callable(self.sys_clk_freq) else self.sys_clk_freq

    def dram_clk_hz(self):
        return self.dram_clk_freq() if callable(self.dram_clk_freq) else self.dram_clk_freq


# What the simulation puts in place of each hard block: its device model, the prefix of its ports, the port
# that clocks the SoC. The `pcie3_7x` SoC (VC709) runs on the block's user clock (targets/vc709.py).
SIM_HARD_BLOCKS = {
    "pcie_7x":  dict(device="s7", hard_block_prefix="pcie_s7",  sys_clock="sim_sys_clk"),
    "pcie3_7x": dict(device="us", hard_block_prefix="pcie3_7x", sys_clock="pcie3_7x_user_clk"),
}


def sim_soc(board, dma_channels, with_dram=False, user_core=None):
    """The board's PCIe DMA SoC with its clocking and hard block replaced (the board's own BaseSoC).
    `user_core` ({"spec": "module:Class", "channel": n}) puts a user's core on that channel's user port, its
    clock from the top-level port `sim_<domain>_clk` (the bench drives it at the core's `clk_freq`)."""
    from hostlink.sim.pcie.dram import sim_dram_phy
    platform_module = board.platform_module()
    if board.pcie.phy == "pcie3_7x":
        from hostlink.sim.pcie.v7gen3 import make_v7gen3_sim_platform, SimV7Gen3PCIEPHY  # Builds on this module.
        platform = make_v7gen3_sim_platform(platform_module.Platform)()
        crg_cls, pcie_phy_cls = SimPCIeClockedCRG, SimV7Gen3PCIEPHY
    else:
        platform = make_sim_platform(platform_module.Platform)()
        crg_cls, pcie_phy_cls = SimCRG, SimS7PCIEPHY
    extra = {}
    if user_core is not None:
        extra = dict(user_core=user_core, user_core_clock=sim_user_clock)
    # The KC705's UDP core has no model on this side (./sim.py udp simulates it): PCIe alone.
    return board.pcie_soc(dma_channels, with_dram=with_dram, platform=platform, crg_cls=crg_cls,
        pcie_phy_cls=pcie_phy_cls, dram_phy=sim_dram_phy(platform_module), **extra)


def sim_user_clock(soc, core):
    """A user core's clock from the top-level port `sim_<domain>_clk` (the bench drives it), its reset the
    SoC's."""
    cd = ClockDomain(core.clock_domain)
    soc.clock_domains += cd
    soc.platform.add_extension([(f"sim_{core.clock_domain}", 0, Subsignal("clk", Pins(1)))])
    soc.comb += cd.clk.eq(soc.platform.request(f"sim_{core.clock_domain}").clk)
    soc.specials += AsyncResetSynchronizer(cd, ResetSignal("sys"))


def user_core_info(soc, user_core):
    """What the bench needs of the SoC's user core: its clock port and frequency, its CSR prefix, the
    settings and model of its simulation."""
    core = soc.user_core
    return {"spec": user_core["spec"], "channel": user_core["channel"],
            "clock_port": None if core.clock_domain == "sys" else f"sim_{core.clock_domain}_clk",
            "clk_hz": core.clk_freq, "data_width": core.data_width, "csr_prefix": "user_core",
            "settings": dict(getattr(core, "SIM_SETTINGS", {})),
            "start":    dict(getattr(core, "SIM_START", {})),
            "verilog_sources": list(getattr(core, "VERILOG_SOURCES", []))}


def _sim_board(board):
    pcie = board.pcie
    return SimBoard(board.name,
        soc_factory   = lambda dma_channels, with_dram=False, user_core=None: sim_soc(board, dma_channels,
                                                                                       with_dram, user_core),
        link_speed    = pcie.gen,
        link_width    = pcie.lanes,
        data_width    = pcie.data_width,
        user_clk_freq = pcie.user_clk_freq,
        # Read from the target when asked (the target is imported only then).
        sys_clk_freq  = board.pcie_sys_clk_freq,
        dram_clk_freq = board.dram_clk_freq if board.dram else None,
        **SIM_HARD_BLOCKS[pcie.phy])


BOARDS = {name: _sim_board(registry.BOARDS[name]) for name in registry.PCIE_BOARDS}
DEFAULT_BOARD = registry.DEFAULT_PCIE_BOARD


def get_board(name):
    """The PCIe board called `name`, as the simulation runs it (the registry checks the name)."""
    return BOARDS[registry.get_board(name, "pcie").name]

# Generation ---------------------------------------------------------------------------------------

HARD_BLOCK_JSON = "hard_block.json"   # Settings of the SoC's hard block that its model takes (generate_sim_soc).
USER_CORE_JSON  = "user_core.json"    # The SoC's user core, as the bench drives and checks it.


def generate_sim_soc(board, dma_channels, output_dir, with_dram=False, user_core=None):
    """Elaborate the simulated SoC: Verilog and csr.json in `output_dir`. Returns (verilog, csr.json)."""
    board = get_board(board) if isinstance(board, str) else board
    os.makedirs(output_dir, exist_ok=True)
    # LiteX reports its elaboration on the root logger and stdout: keep that in a file, not on the console.
    log_path = os.path.join(output_dir, "elaboration.log")
    root     = logging.getLogger()
    with open(log_path, "w") as log, contextlib.redirect_stdout(log):
        saved_handlers = root.handlers[:]
        root.handlers[:] = [logging.StreamHandler(log)]
        try:
            soc = board.soc_factory(dma_channels, with_dram=with_dram, user_core=user_core)
            builder = Builder(soc,
                output_dir       = output_dir,
                compile_software = False,
                compile_gateware = False,
                csr_json         = os.path.join(output_dir, "csr.json"),
            )
            builder.build(build_name="sim_top", run=False)
        finally:
            root.handlers[:] = saved_handlers
    # What the hard block's model must match in the generated SoC.
    with open(os.path.join(output_dir, HARD_BLOCK_JSON), "w") as f:
        json.dump({"rc_straddle": bool(getattr(soc.pcie_phy, "rc_straddle", False))}, f)
    with open(os.path.join(output_dir, USER_CORE_JSON), "w") as f:
        json.dump(user_core_info(soc, user_core) if user_core is not None else None, f)
    return os.path.join(builder.gateware_dir, "sim_top.v"), os.path.join(output_dir, "csr.json")
