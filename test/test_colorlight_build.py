# This file is part of hostlink.
# Copyright (c) 2026 hostlink developers
# SPDX-License-Identifier: BSD-2-Clause

"""ColorLight i5: the open flow (YoWASP Yosys, nextpnr-ecp5, ecppack) produces a bitstream, once."""

import os
import subprocess
import sys

import pytest

from litex.soc.integration.builder import Builder

from hostlink.targets.colorlight_i5 import BaseSoC, find_yowasp

REPO   = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TARGET = os.path.join(REPO, "targets", "colorlight_i5.py")


def yowasp_missing():
    try:
        find_yowasp()
    except OSError as e:
        return str(e)
    return None


@pytest.mark.skipif(yowasp_missing() is not None, reason=yowasp_missing() or "")
def test_build_produces_a_bitstream(tmp_path):
    """The one full build of the suite (about two minutes): a bitstream of the right size."""
    result = subprocess.run([sys.executable, TARGET, "--build", "--output-dir", str(tmp_path)],
        capture_output=True, text=True, timeout=1200)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
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
    builder = Builder(soc, output_dir=str(tmp_path), compile_software=False)
    builder.build(run=False)
    assert "udp" in soc.csr.locs
    verilog = (tmp_path / "gateware" / "colorlight_i5.v").read_text()
    assert "udp_tx" in verilog


@pytest.mark.parametrize("kwargs", [dict(udp_mode="echo"), dict(with_arp=False), dict(ethernet_stack="liteeth"),
                                    dict(eth_phy=1)])
def test_variants_elaborate(kwargs, tmp_path):
    soc = BaseSoC(**kwargs)
    Builder(soc, output_dir=str(tmp_path), compile_software=False).build(run=False)
    assert (tmp_path / "gateware" / "colorlight_i5.v").exists()


@pytest.mark.parametrize("kwargs,message", [
    (dict(board="i9"),               "board must be 'i5'"),
    (dict(eth_phy=2),                "eth_phy must be 0 or 1"),
    (dict(ethernet_stack="lwip"),    "ethernet_stack must be one of \\['hostlink', 'liteeth'\\], not 'lwip'"),
])
def test_bad_parameters(kwargs, message):
    with pytest.raises(ValueError, match=message):
        BaseSoC(**kwargs)
