# This file is part of hostlink.
# Copyright (c) 2026 hostlink developers
# SPDX-License-Identifier: BSD-2-Clause

"""Every board hostlink builds for, in one place: what the tests, `./sim.py`, the reports and the driver
builds read instead of keeping their own lists.

A board is its target module (`hostlink.targets.<name>`, a `BaseSoC` and `main()`), its FPGA, its links
(PCIe: hard block, generation, lanes, data width; UDP: the two plane clocks) and whether it has DRAM. The
clock frequencies stay in the target modules, which own them (module constants such as `SYS_CLK_FREQ`):
the registry names the constant and reads it when asked, so importing this module imports no gateware.
"""

import importlib
from dataclasses import dataclass, field

# Links --------------------------------------------------------------------------------------------

# The module each PCIe hard block is instantiated as: LitePCIe's S7PCIEPHY wraps `pcie_7x` as `pcie_s7`,
# hostlink's V7Gen3PCIEPHY instantiates the generated `pcie3_7x_0`.
HARD_BLOCK_INSTANCES = {"pcie_7x": "pcie_s7", "pcie3_7x": "pcie3_7x_0"}


@dataclass(frozen=True)
class PCIeLink:
    """A board's PCIe DMA SoC: the hard block (`phy`: "pcie_7x" or "pcie3_7x"), the link it trains to,
    the width and clock of the block's user interface, and how the target is made a PCIe DMA SoC."""
    phy:           str
    gen:           int
    lanes:         int
    data_width:    int
    user_clk_freq: float                  # Hz of the hard block's user clock at this link and width.
    sys_clk:       str = "SYS_CLK_FREQ"   # Target constant: the SoC's system clock with PCIe.
    # For a target whose SoC has other links too (KC705: the UDP core): the BaseSoC keyword arguments that
    # make it the PCIe DMA SoC alone, and the command-line flags that add PCIe (--no-ethernet then leaves
    # out the rest).
    soc_kwargs:    dict  = field(default_factory=dict)
    cli_flags:     tuple = ()

    def __post_init__(self):
        if self.phy not in HARD_BLOCK_INSTANCES:
            raise ValueError(f"phy must be one of {', '.join(HARD_BLOCK_INSTANCES)}, not {self.phy!r}")

    @property
    def hard_block_instance(self):
        return HARD_BLOCK_INSTANCES[self.phy]


@dataclass(frozen=True)
class UDPLink:
    """A board's UDP core: the target constants of its control plane (`sys`) and data plane (`eth`)
    clocks; the same constant when the core runs in one clock."""
    sys_clk: str = "SYS_CLK_FREQ"
    eth_clk: str = "SYS_CLK_FREQ"

# Boards -------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Board:
    name:     str
    fpga:     str                 # Part, as the area report's resource table names it.
    pcie:     PCIeLink = None
    udp:      UDPLink  = None
    dram:     bool     = False    # A DDR3 SODIMM the target adds with --with-dram.
    platform: str      = None     # hostlink.targets.<platform>, when the board's pins are hostlink's own.

    @property
    def module(self):
        return f"hostlink.targets.{self.name}"

    def target(self):
        """The target module (imports LiteX and the board's gateware)."""
        return importlib.import_module(self.module)

    def platform_module(self):
        if self.platform is None:
            raise ValueError(f"board {self.name} has no platform module of hostlink's")
        return importlib.import_module(f"hostlink.targets.{self.platform}")

    def clock(self, constant):
        """A clock frequency (Hz) the target exports as a module constant."""
        return float(getattr(self.target(), constant))

    def pcie_sys_clk_freq(self):
        return self.clock(self._pcie().sys_clk)

    def dram_clk_freq(self):
        if not self.dram:
            raise ValueError(f"board {self.name} has no DRAM")
        return self.clock("DRAM_CLK_FREQ")

    def udp_clocks(self):
        """(control plane, data plane) clock frequencies of the board's UDP core."""
        if self.udp is None:
            raise ValueError(f"board {self.name} has no UDP core")
        return self.clock(self.udp.sys_clk), self.clock(self.udp.eth_clk)

    def pcie_soc(self, dma_channels=None, with_dram=False, **kwargs):
        """The target's BaseSoC as its PCIe DMA SoC, at its PCIe system clock, with the target's default DMA
        channels unless `dma_channels`; `kwargs` replace the board's platform, clocking or hard block (the
        simulation) or set other BaseSoC parameters."""
        if dma_channels is not None:
            kwargs["dma_channels"] = dma_channels
        return self.target().BaseSoC(sys_clk_freq=self.pcie_sys_clk_freq(), with_dram=with_dram,
            **self._pcie().soc_kwargs, **kwargs)

    def _pcie(self):
        if self.pcie is None:
            raise ValueError(f"board {self.name} has no PCIe")
        return self.pcie


BOARDS = {board.name: board for board in [
    Board("zc706", fpga="XC7Z045", platform="zc706_platform", dram=True,
        pcie=PCIeLink(phy="pcie_7x", gen=2, lanes=4, data_width=128, user_clk_freq=125e6)),
    Board("vc709", fpga="XC7VX690T", platform="vc709_platform", dram=True,
        pcie=PCIeLink(phy="pcie3_7x", gen=3, lanes=8, data_width=256, user_clk_freq=250e6)),
    Board("kc705", fpga="XC7K325T", platform="kc705_platform", dram=True,
        pcie=PCIeLink(phy="pcie_7x", gen=2, lanes=8, data_width=128, user_clk_freq=250e6,
            sys_clk    = "PCIE_SYS_CLK_FREQ",
            soc_kwargs = dict(with_ethernet=False, with_pcie=True),
            cli_flags  = ("--with-pcie",)),
        udp=UDPLink()),
    Board("colorlight_i5", fpga="LFE5U-25F",
        udp=UDPLink(sys_clk="SYS_CLK_FREQ", eth_clk="ETH_CLK_FREQ")),
]}

PCIE_BOARDS = [name for name, board in BOARDS.items() if board.pcie is not None]
DEFAULT_PCIE_BOARD = "zc706"   # ./sim.py dma and driver without --board: the quickest to simulate.
UDP_BOARDS  = [name for name, board in BOARDS.items() if board.udp  is not None]
DRAM_BOARDS = [name for name, board in BOARDS.items() if board.dram]


def get_board(name, link=None):
    """The board called `name`; with `link` ("pcie", "udp"), one that has that link."""
    names = {None: list(BOARDS), "pcie": PCIE_BOARDS, "udp": UDP_BOARDS}[link]
    if name not in names:
        raise ValueError(f"board must be one of {', '.join(sorted(names))}, not {name!r}")
    return BOARDS[name]
