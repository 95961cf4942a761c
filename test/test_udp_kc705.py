# This file is part of hostlink.
# Copyright (c) 2026 hostlink developers
# SPDX-License-Identifier: BSD-2-Clause

"""KC705 UDP target: sources and Vivado Tcl are generated; --build without Vivado fails with one
clear line."""

import os
import shutil
import subprocess
import sys

import pytest

from litex.soc.integration.builder import Builder

from hostlink.targets.kc705 import BaseSoC

REPO   = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TARGET = os.path.join(REPO, "targets", "kc705.py")


def test_generates_sources_and_tcl(tmp_path):
    soc = BaseSoC()
    Builder(soc, output_dir=str(tmp_path), compile_software=False).build(run=False)
    gateware = tmp_path / "gateware"
    verilog = (gateware / "xilinx_kc705.v").read_text()
    assert "udptransmitter" in verilog and "udpreceiver" in verilog
    assert (gateware / "xilinx_kc705.tcl").exists() and (gateware / "xilinx_kc705.xdc").exists()
    assert "udp" in soc.csr.locs


@pytest.mark.skipif(shutil.which("vivado") is not None, reason="Vivado is installed: --build would run it")
def test_build_without_vivado_fails_with_one_line(tmp_path):
    result = subprocess.run([sys.executable, TARGET, "--build", "--output-dir", str(tmp_path)],
        capture_output=True, text=True, timeout=300)
    assert result.returncode != 0
    errors = [l for l in result.stderr.splitlines() if l.startswith("error:")]
    assert len(errors) == 1
    assert "vivado" in errors[0].lower() and str(tmp_path / "gateware") in errors[0]
    assert (tmp_path / "gateware" / "xilinx_kc705.v").exists()


def test_echo_without_arp_elaborates(tmp_path):
    soc = BaseSoC(udp_mode="echo", with_arp=False)
    Builder(soc, output_dir=str(tmp_path), compile_software=False).build(run=False)
    assert not hasattr(soc.udp, "arp")
