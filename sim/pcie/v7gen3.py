# This file is part of hostlink.
# Copyright (c) 2026 hostlink developers
# SPDX-License-Identifier: BSD-2-Clause

"""Simulation of the VC709 SoC: V7Gen3PCIEPHY with `pcie3_7x` replaced by cocotbext-pcie's UltraScale model.

The 7-series Gen3 block has the UltraScale Gen3 user interface (RQ/RC/CQ/CC AXI4-Stream with descriptors,
`cfg_*` status and MSI ports), which cocotbext-pcie's `UltraScalePcieDevice` models. Everything of the PHY
but the hard block is simulated: the clock-domain crossings, LitePCIe's UltraScale adapters (compiled
with the SoC), the MSI state machine and the configuration resynchronisation.

The block's model is `V7Gen3PcieDevice` (v7gen3_device.py), built by `make_v7gen3_device()`; this module
imports neither cocotb nor cocotbext-pcie, so that the SoC's build can import it.
"""

import os

from hostlink.cores.pcie.v7gen3phy import V7Gen3PCIEPHY
from hostlink.sim.pcie.hardblock import expose_hard_block
from hostlink.sim.pcie.sim_platform import make_sim_platform

HARD_BLOCK_PREFIX = "pcie3_7x"

# Simulation PHY -----------------------------------------------------------------------------------

class SimV7Gen3PCIEPHY(V7Gen3PCIEPHY):
    """V7Gen3PCIEPHY whose `pcie3_7x_0` hard block is replaced by top-level ports for the device model."""
    def do_finalize(self):
        self.add_adapter_sources(self.platform)
        self.hard_block_ports = expose_hard_block(self, self.platform, self.pcie_phy_params,
            prefix=HARD_BLOCK_PREFIX)

# Simulation platform ------------------------------------------------------------------------------

class WithSourcesAppended:
    """Put before SimVerilog (make_v7gen3_sim_platform()): the Verilog also carries the PHY's Verilog sources.

    The Verilator build compiles one file; LitePCIe's adapters are Verilog modules the PHY adds with
    `platform.add_source()`, so they are appended to it.
    """
    def build(self, fragment, build_dir, build_name, run=False, **kwargs):
        verilog = super().build(fragment, build_dir, build_name, run=run, **kwargs)
        with open(os.path.join(build_dir, build_name + ".v"), "a") as out:
            for source in self.sources:
                filename, language = source[0], source[1]
                if language not in ("verilog", "systemverilog"):
                    raise ValueError(f"simulation cannot compile {filename!r} ({language})")
                with open(filename) as f:
                    out.write(f"\n// From {os.path.basename(filename)}\n")
                    out.write(f.read())
        return verilog


def make_v7gen3_sim_platform(board_platform_cls):
    """The board's simulation platform, whose Verilog also carries the PHY's Verilog sources."""
    return make_sim_platform(board_platform_cls, WithSourcesAppended)

# Device model -------------------------------------------------------------------------------------

def make_v7gen3_device(dut, prefix=HARD_BLOCK_PREFIX, *, link_speed=3, link_width=8, data_width=256,
        device_speed=3, device_width=8, user_clk_freq=250e6, bar0_size=0x100000, msi_vectors=1,
        max_payload_size=512, backpressure=0.0, rc_straddle=False, seed=1, reference=False):
    """`pcie3_7x` user-interface model bound to the top-level ports `<prefix>_<port>` of the DUT.

    `device_speed`/`device_width` are the block's configuration (Gen3 x8 for 256 bits at 250 MHz),
    `link_speed`/`link_width` the host's; the link trains to the lower of each.

    `reference=True` runs cocotbext-pcie's configuration, status, completer-request and sequence-number
    logic as it is written, each a coroutine that wakes on every clock edge. Otherwise (the default)
    V7Gen3PcieDevice's overrides do the same work but sleep while nothing they watch can change
    (v7gen3_device.py's docstring, "Event-driven"); test_pcie_host_profiles.py requires both to give the
    same runs.
    """
    from hostlink.sim.pcie.models.v7gen3_device import V7Gen3PcieDevice   # Needs cocotb: at simulation time only.
    return V7Gen3PcieDevice(dut, prefix,
        link_speed       = link_speed,
        link_width       = link_width,
        data_width       = data_width,
        device_speed     = device_speed,
        device_width     = device_width,
        user_clk_freq    = user_clk_freq,
        bar0_size        = bar0_size,
        msi_vectors      = msi_vectors,
        max_payload_size = max_payload_size,
        backpressure     = backpressure,
        rc_straddle      = rc_straddle,
        seed             = seed,
        reference        = reference,
    )
