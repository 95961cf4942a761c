# This file is part of hostlink.
# Copyright (c) 2026 hostlink developers
# SPDX-License-Identifier: BSD-2-Clause

"""Every PCIe board's DMA SoC with a user port (cores/pcie/user_port.py, add_pcie_dma(user_ports=...)):
generated with a core of the user's in a clock of its own on channel 0, the port's CSRs in the map next to
the channel's own, the other channel unchanged; bad channel numbers refused."""

import json
import os

import pytest

from migen import *

from litex.soc.integration.builder import Builder

from hostlink.targets import boards as registry

USER_PORT_REGISTERS = ["select", "h2c_words", "h2c_waits", "c2h_words", "c2h_waits"]


def soc_with_user_core(board, **port):
    """The board's PCIe SoC with a user port on channel 0, in a `user` clock domain, and a core on it that
    sends back what it receives (the simplest user core)."""
    soc = registry.BOARDS[board].pcie_soc(user_ports={0: dict(clock_domain="user", **port)})
    soc.cd_user = ClockDomain()
    soc.comb += soc.cd_user.clk.eq(ClockSignal("sys"))   # A clock of its own on a board; any clock here.
    soc.comb += soc.pcie_dma0_user.source.connect(soc.pcie_dma0_user.sink)
    return soc


def elaborate(soc, output_dir):
    builder = Builder(soc, output_dir=str(output_dir), compile_gateware=False, compile_software=False,
                      csr_json=os.path.join(output_dir, "csr.json"))
    builder.build(run=False)
    with open(os.path.join(output_dir, "csr.json")) as f:
        return json.load(f)


@pytest.mark.parametrize("board", [pytest.param(b, marks=[] if b == "zc706" else pytest.mark.slow)
                                   for b in registry.PCIE_BOARDS])
def test_a_user_core_on_channel_0(board, tmp_path):
    soc = soc_with_user_core(board, data_width=64, fifo_depth=256)
    registers = elaborate(soc, tmp_path)["csr_registers"]
    for name in USER_PORT_REGISTERS:
        assert f"pcie_dma0_user_{name}" in registers
    assert not any(name.startswith("pcie_dma1_user") for name in registers)
    # The channel keeps its patterns and loopback, for dma_test and hostlink_bench.
    for name in ["pcie_dma0_loopback_enable", "pcie_dma0_generator_control", "pcie_dma0_checker_words",
                 "pcie_dma1_generator_control"]:
        assert name in registers
    assert soc.pcie_dma0_user.dma_data_width == registry.BOARDS[board].pcie.data_width


@pytest.mark.parametrize("channel", [2, -1, "0", True])
def test_a_user_port_on_a_channel_the_soc_does_not_have(channel):
    with pytest.raises(ValueError, match=rf"one of the SoC's DMA channels 0\.\.1, not {channel!r}"):
        registry.BOARDS["zc706"].pcie_soc(user_ports={channel: {}})


def test_a_bad_port_width_is_refused_before_anything_is_built():
    with pytest.raises(ValueError, match=r"divide the DMA's 128 bits or be a multiple of them .* not 48"):
        registry.BOARDS["zc706"].pcie_soc(user_ports={0: dict(data_width=48)})
