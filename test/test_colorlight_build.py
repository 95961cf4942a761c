# This file is part of hostlink.
# Copyright (c) 2026 hostlink developers
# SPDX-License-Identifier: BSD-2-Clause

"""ColorLight i5: the open flow (YoWASP Yosys, nextpnr-ecp5, ecppack) produces a bitstream that meets
timing in every clock, once."""

import os
import re
import subprocess
import sys

import pytest

from litex.soc.integration.builder import Builder

from hostlink.targets.colorlight_i5 import BaseSoC

from helpers import yowasp_missing

REPO   = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TARGET = os.path.join(REPO, "targets", "colorlight_i5.py")


FMAX_LINE = re.compile(r"Max frequency for clock\s+'([^']+)': ([\d.]+) MHz \((?:PASS|FAIL) at ([\d.]+) MHz\)")

def routed_fmax(log):
    """{clock net: (achieved MHz, constraint MHz)} from nextpnr's log: its last report per clock
    is the one after routing (earlier ones are estimates after placement)."""
    return {name: (float(achieved), float(constraint)) for name, achieved, constraint in FMAX_LINE.findall(log)}


def test_routed_fmax_keeps_the_last_report_per_clock():
    log = ("Info: Max frequency for clock '$glbnet$crg_clkout1': 94.76 MHz (FAIL at 125.00 MHz)\n"
           "Warning: Max frequency for clock                  '$glbnet$crg_clkout1': 131.20 MHz (PASS at 125.00 MHz)\n"
           "Info: Max frequency for clock '$glbnet$crg_clkout0': 99.45 MHz (PASS at 50.00 MHz)\n")
    assert routed_fmax(log) == {"$glbnet$crg_clkout1": (131.2, 125.0), "$glbnet$crg_clkout0": (99.45, 50.0)}


@pytest.mark.slow
@pytest.mark.skipif(yowasp_missing() is not None, reason=yowasp_missing() or "")
def test_build_produces_a_bitstream_that_meets_timing(tmp_path):
    """The one full build of the suite (about four minutes): every clock (sys 50 MHz, the eth data
    plane 125 MHz, the PHY's 125 MHz) meets its constraint after routing, and the bitstream has
    the right size. The target builds with nextpnr's strict timing, so a miss also fails the build."""
    result = subprocess.run([sys.executable, TARGET, "--build", "--output-dir", str(tmp_path)],
        capture_output=True, text=True, timeout=1200)
    log = result.stdout + result.stderr
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    fmax = routed_fmax(log)
    print(f"routed Fmax (MHz, achieved/constraint): {fmax}")
    constraints = sorted(constraint for _, constraint in fmax.values())
    assert constraints == [50.0, 125.0, 125.0], fmax
    for clock, (achieved, constraint) in fmax.items():
        assert achieved >= constraint, f"{clock}: {achieved} MHz < {constraint} MHz"
    bitstream = tmp_path / "gateware" / "colorlight_i5.bit"
    assert bitstream.exists()
    # An LFE5U-25F bitstream is about 580 KB uncompressed; a stub or an empty design is far smaller.
    assert bitstream.stat().st_size > 400_000
    with open(bitstream, "rb") as f:
        head = f.read(64)
    # ecppack's comment block names the device the bitstream is for.
    assert head.startswith(b"\xff\x00") and b"LFE5U-25F" in head


def test_soc_generates_with_udp_csrs(tmp_path):
    soc = BaseSoC()
    builder = Builder(soc, output_dir=str(tmp_path), compile_software=False, csr_csv=str(tmp_path / "csr.csv"))
    builder.build(run=False)
    assert "udp" in soc.csr.locs
    assert (tmp_path / "gateware" / "colorlight_i5.v").exists()
    # Two planes: the data plane in `eth`, the CSRs in `sys`; the MAC's own counters (which would
    # cross unsynchronised) are not in the CSR map.
    assert set(soc.crg.pll.clkouts[i][1] for i in range(2)) == {50e6, 125e6}
    csrs = (tmp_path / "csr.csv").read_text()
    assert "udp_tx_sent" in csrs and "udp_mac_" not in csrs


def test_cli_sources_are_the_same_from_build_to_build(tmp_path):
    """No build date in the identifier ROM: two generations give the same sources (and so the same
    placement and timing; with the date each build was a new design, and its thin eth margin moved)."""
    sources = []
    for name in ["a", "b"]:
        out = tmp_path / name
        result = subprocess.run([sys.executable, TARGET, "--output-dir", str(out)],
            capture_output=True, text=True, timeout=300)
        assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
        rom = bytes(int(x, 16) for x in (out / "gateware" / "colorlight_i5_mem.init").read_text().split())
        assert rom.rstrip(b"\0") == b"hostlink UDP/IPv4 on ColorLight I5 (hostlink)"
        # Without comments: the header has the date, and LiteX's module-tree comment lists siblings in
        # Python's (per-process) set order.
        verilog = re.sub(r"/\*.*?\*/", "", (out / "gateware" / "colorlight_i5.v").read_text(), flags=re.S)
        sources.append([line for line in verilog.splitlines() if not line.startswith("//")])
    assert sources[0] == sources[1]


@pytest.mark.parametrize("kwargs", [dict(udp_mode="echo"), dict(with_arp=False), dict(ethernet_stack="liteeth"),
                                    dict(eth_phy=1)])
def test_variants_elaborate(kwargs, tmp_path):
    soc = BaseSoC(**kwargs)
    Builder(soc, output_dir=str(tmp_path), compile_software=False).build(run=False)
    assert (tmp_path / "gateware" / "colorlight_i5.v").exists()


@pytest.mark.parametrize("kwargs,message", [
    (dict(board="i9"),               "board must be 'i5'"),
    (dict(eth_clk_freq=100e6),       "eth_clk_freq must be >= 125 MHz for Gigabit line rate, not 100 MHz"),
    (dict(sys_clk_freq=10e6),        "sys_clk_freq must be >= eth_clk_freq / 8 \\(15.625 MHz\\), not 10 MHz"),
    (dict(eth_phy=2),                "eth_phy must be 0 or 1"),
    (dict(ethernet_stack="lwip"),    "ethernet_stack must be one of \\['hostlink', 'liteeth'\\], not 'lwip'"),
])
def test_bad_parameters(kwargs, message):
    with pytest.raises(ValueError, match=message):
        BaseSoC(**kwargs)
