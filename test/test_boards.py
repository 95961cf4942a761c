# This file is part of hostlink.
# Copyright (c) 2026 hostlink developers
# SPDX-License-Identifier: BSD-2-Clause

"""The board registry (hostlink.targets.boards) against the targets it names: the link defaults, clocks and
DRAM of each entry are those of the target's BaseSoC and module constants."""

import pytest

from hostlink.targets import boards as registry
from hostlink.sim.pcie.soc import BOARDS as SIM_PCIE_BOARDS
from hostlink.sim.udp.soc import BOARDS as SIM_UDP_BOARDS, board_config


def test_every_consumer_reads_the_registry():
    assert sorted(SIM_PCIE_BOARDS) == sorted(registry.PCIE_BOARDS) == ["kc705", "vc709", "zc706"]
    assert SIM_UDP_BOARDS == sorted(registry.UDP_BOARDS) == ["colorlight_i5", "kc705"]
    assert registry.DRAM_BOARDS == ["zc706", "vc709", "kc705"]


@pytest.mark.parametrize("name", registry.PCIE_BOARDS)
def test_pcie_entry_matches_the_target(name):
    board  = registry.BOARDS[name]
    target = board.target()
    soc    = board.pcie_soc()
    phy    = soc.pcie_phy
    assert phy.data_width == board.pcie.data_width
    assert len(soc.platform.lookup_request(f"pcie_x{board.pcie.lanes}").tx_p) == board.pcie.lanes
    assert soc.sys_clk_freq == board.pcie_sys_clk_freq()
    assert board.dram_clk_freq() == target.DRAM_CLK_FREQ
    # The hard block's user clock carries the link: data width x clock >= lanes x lane rate after coding.
    lane_bits = {2: 5e9 * 8/10, 3: 8e9 * 128/130}[board.pcie.gen]
    assert board.pcie.data_width * board.pcie.user_clk_freq >= board.pcie.lanes * lane_bits


def test_sim_boards_take_the_registry_entries():
    for name, sim in SIM_PCIE_BOARDS.items():
        pcie = registry.BOARDS[name].pcie
        assert (sim.link_speed, sim.link_width, sim.data_width, sim.user_clk_freq) == \
            (pcie.gen, pcie.lanes, pcie.data_width, pcie.user_clk_freq)
        assert sim.sys_clk_hz() == registry.BOARDS[name].pcie_sys_clk_freq()


@pytest.mark.parametrize("name, sys_clk_freq, eth_clk_freq", [
    ("colorlight_i5", 50e6,  125e6),   # Two planes.
    ("kc705",         125e6, 125e6),   # The UDP core in the SoC's one clock.
])
def test_udp_clocks_are_the_targets_constants(name, sys_clk_freq, eth_clk_freq):
    assert registry.BOARDS[name].udp_clocks() == (sys_clk_freq, eth_clk_freq)
    config = board_config(name)
    assert (config["sys_clk_freq"], config["eth_clk_freq"]) == (sys_clk_freq, eth_clk_freq)
    assert config["source"] == f"hostlink.targets.{name}"


@pytest.mark.parametrize("call, message", [
    (lambda: registry.get_board("arty"),                 "board must be one of colorlight_i5, kc705, vc709, zc706, not 'arty'"),
    (lambda: registry.get_board("colorlight_i5", "pcie"), "board must be one of kc705, vc709, zc706, not 'colorlight_i5'"),
    (lambda: registry.BOARDS["colorlight_i5"].pcie_soc(), "board colorlight_i5 has no PCIe"),
    (lambda: registry.BOARDS["zc706"].udp_clocks(),      "board zc706 has no UDP core"),
    (lambda: registry.BOARDS["colorlight_i5"].dram_clk_freq(), "board colorlight_i5 has no DRAM"),
    (lambda: registry.PCIeLink(phy="pcie4", gen=4, lanes=8, data_width=256, user_clk_freq=250e6),
        "phy must be one of pcie_7x, pcie3_7x, not 'pcie4'"),
])
def test_registry_refuses_what_a_board_lacks(call, message):
    with pytest.raises(ValueError) as error:
        call()
    assert str(error.value) == message
