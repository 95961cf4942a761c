# This file is part of hostlink.
# Copyright (c) 2026 hostlink developers
# SPDX-License-Identifier: BSD-2-Clause

"""What the target tests share: elaborating a SoC without the vendor tool, and running a target's
command line as a user without Vivado would."""

import json
import re
import os
import subprocess
import sys

import pytest

from litex.soc.integration.builder import Builder

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# Elaboration --------------------------------------------------------------------------------------

def elaborate(soc_cls, output_dir, **kwargs):
    """Build `soc_cls(**kwargs)` without the vendor tool (gateware sources, csr.json, csr.csv in
    `output_dir`); return (soc, csr.json contents)."""
    output_dir = str(output_dir)
    soc        = soc_cls(**kwargs)
    builder    = Builder(soc, output_dir=output_dir, compile_gateware=False, compile_software=False,
        csr_json = os.path.join(output_dir, "csr.json"),
        csr_csv  = os.path.join(output_dir, "csr.csv"))
    builder.build(run=False)
    with open(os.path.join(output_dir, "csr.json")) as f:
        return soc, json.load(f)


def elaborate_fresh(tmp_path_factory, name, soc_cls, **kwargs):
    """elaborate() into a new temporary directory named after `name`, for a module's fixture: (soc, csr.json
    contents, output directory)."""
    output_dir = tmp_path_factory.mktemp(name)
    return (*elaborate(soc_cls, output_dir, **kwargs), output_dir)

# Command line -------------------------------------------------------------------------------------

def env_without_vivado():
    """The test environment with every PATH entry holding a `vivado` removed."""
    env  = dict(os.environ)
    keep = [d for d in env.get("PATH", "").split(os.pathsep)
            if d and not os.path.exists(os.path.join(d, "vivado"))]
    env["PATH"] = os.pathsep.join(keep)
    return env


def run_target(board, *args, timeout=300):
    """`targets/<board>.py args...` from the repository root, without Vivado on PATH."""
    target = os.path.join(REPO, "targets", f"{board}.py")
    return subprocess.run([sys.executable, target, *args], cwd=REPO, env=env_without_vivado(),
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=timeout)


def refusal(main, argv, capsys):
    """What `main(argv)` wrote to stderr as it refused its arguments, as argparse does (exit code 2)."""
    with pytest.raises(SystemExit) as exit:
        main(argv)
    assert exit.value.code == 2
    return capsys.readouterr().err


def sim_py_refusal(*argv):
    """What `./sim.py argv...` wrote to stderr as it refused its arguments (exit code 2), run as a user runs it."""
    result = subprocess.run([sys.executable, os.path.join(REPO, "sim.py"), *argv], cwd=REPO, capture_output=True,
                            text=True, timeout=120)
    assert result.returncode == 2, result.stderr
    return result.stderr


def target_refusal(board, *args):
    """The last line `targets/<board>.py args...` wrote to stderr as it refused its arguments (exit code 2)."""
    result = run_target(board, *args)
    assert result.returncode == 2, result.stderr[-2000:]
    return result.stderr.strip().splitlines()[-1]


def yowasp_missing():
    """Why the YoWASP tools cannot run (a skip reason), or None."""
    from hostlink.toolchain import find_yowasp
    try:
        find_yowasp()
    except OSError as e:
        return str(e)
    return None


# LitePCIe's driver sources as the package ships them, before hostlink changes them.
LITEPCIE_KERNEL = os.path.join(os.path.dirname(os.path.abspath(
    __import__("litepcie.software", fromlist=["software"]).__file__)), "kernel")


def read(path):
    with open(path) as f:
        return f.read()


def check_missing_anchor_is_refused(tmp_path, patch, apply, kind, applied_before=()):
    """A copy of LitePCIe's driver sources (with the patch sets `applied_before` applied) that lost the anchor
    of `patch` (file, what, anchor, replacement): `apply(kernel)` refuses it with DriverPatchError naming
    the `kind` of change and `what`, and leaves the sources as they were (nothing half-patched)."""
    import re
    import shutil
    import pytest
    from hostlink.software.driver.patches import DriverPatchError
    kernel = str(tmp_path / "kernel")
    shutil.copytree(LITEPCIE_KERNEL, kernel, ignore=shutil.ignore_patterns("__pycache__"))
    for before in applied_before:
        before(kernel)
    name, what, anchor, _ = patch
    path = os.path.join(kernel, name)
    changed = read(path).replace(anchor, "/* moved */\n")
    with open(path, "w") as f:
        f.write(changed)
    sources = {n: read(os.path.join(kernel, n)) for n in sorted(os.listdir(kernel)) if n.endswith((".c", ".h"))}
    with pytest.raises(DriverPatchError, match=rf"cannot apply {re.escape(kind)} '{re.escape(what)}'.*found it 0 "
                                               r"times.*LitePCIe's driver has changed"):
        apply(kernel)
    assert {n: read(os.path.join(kernel, n)) for n in sources} == sources


def generate_zc706_driver(tmp_path_factory):
    """The ZC706 SoC's generated driver (kernel/, user/, ...) in a fresh folder; returns the folder."""
    from hostlink.software.driver import generate_driver
    from hostlink.targets.zc706 import BaseSoC
    driver_dir = str(tmp_path_factory.mktemp("driver_zc706"))
    generate_driver(BaseSoC(), driver_dir)
    return driver_dir


def assemble_framed(words, word_bytes):
    """The buffers the DMA writer makes of the framer's output [(data, last)]: each buffer's data (and
    padding) up to a `last`, then its header's words up to a `last`, written at the buffer's start."""
    buffers, data, header, in_header = [], b"", b"", False
    for word, last in words:
        raw = word.to_bytes(word_bytes, "little")
        if in_header:
            header += raw
            if last:
                buffers.append(header + data)
                data, header, in_header = b"", b"", False
        else:
            data += raw
            in_header = bool(last)
    assert not data and not header, "output stopped within a buffer"
    return buffers


def check_enumeration(e, phy, gen, lanes, device_id=None):
    """What every simulated board reports once the host has enumerated it (a run's "enumeration"): Xilinx's
    vendor ID (and `device_id`), the 1 MiB BAR0, MSI and bus mastering on, the link up at Gen `gen` x `lanes`,
    MPS 256 and MRRS 512, and the identification/scratch register's reset value, then what the host wrote.

    The PHY's link_status register: bit 0 link up, then for LitePCIe's "s7" PHY (pcie_7x) the rate in bit 1
    (0: 2.5 GT/s, 1: 5.0) and log2 of the width in bits 2-3; for the "v7gen3" PHY (pcie3_7x) the rate one-hot
    in bits 4-6 (2.5, 5.0, 8.0 GT/s) and the width one-hot in bits 7-10 (x1, x2, x4, x8)."""
    assert e["vendor_id"] == 0x10ee
    if device_id is not None:
        assert e["device_id"] == device_id
    assert e["bar0_size"] == 1 << 20
    assert e["msi_enabled"] == 1 and e["bus_master"] == 1
    link = e["link_status"]
    assert link & 1 == 1
    assert phy in ("s7", "v7gen3"), phy
    if phy == "s7":
        assert ((link >> 1) & 1, (link >> 2) & 0b11) == (gen - 1, lanes.bit_length() - 1), bin(link)
    else:
        assert ((link >> 4) & 0b111, (link >> 7) & 0b1111) == (1 << (gen - 1), lanes), bin(link)
    assert e["max_payload_size"] == 256
    assert e["max_request_size"] == 512
    assert e["scratch"] == [0x12345678, 0xdeadbeef]


def xdc_ports(xdc, prop="LOC"):
    """{port: value} of one property that LiteX's .xdc sets on ports ("LOC": {"pcie_x8_rx_p[0]": "M6", ...})."""
    return {port: value for value, port in re.findall(rf"set_property {prop} (\S+) \[get_ports \{{([^}}]+)\}}\]", xdc)}


def bus_ports(name, values):
    """{port: value} for a bus, "ddram_ba" and "A B C" -> {"ddram_ba[0]": "A", ...}; one value, no index."""
    values = values.split()
    return {name + (f"[{i}]" if len(values) > 1 else ""): value for i, value in enumerate(values)}


PCIE_PHY_REGISTERS = ["link_status", "msi_enable", "bus_master_enable", "max_request_size", "max_payload_size"]
PCIE_DMA_REGISTERS = [f"{side}_{reg}" for side in ["writer", "reader"]
                      for reg in ["enable", "table_value", "table_we", "table_loop_prog_n", "table_loop_status",
                                  "table_level", "table_reset"]] + ["loopback_enable"]


def check_pcie_registers(csr, channels):
    """A PCIe DMA SoC's csr.json: the PHY's and the MSI's registers, each of `channels` DMA channels' registers
    and its two MSI vectors (one per direction), and no channel beyond."""
    registers = csr["csr_registers"]
    for reg in PCIE_PHY_REGISTERS:
        assert f"pcie_phy_phy_{reg}" in registers
    for reg in ["enable", "clear", "vector"]:
        assert f"pcie_msi_{reg}" in registers
    for channel in range(channels):
        for reg in PCIE_DMA_REGISTERS:
            assert f"pcie_dma{channel}_{reg}" in registers
        for side in ["reader", "writer"]:
            assert f"pcie_dma{channel}_{side}_interrupt" in csr["constants"]
    assert not any(name.startswith(f"pcie_dma{channels}_") for name in registers)
    assert csr["constants"]["dma_channels"] == channels


def check_every_row(run, jobs):
    """A simulated run of `jobs` (sim.pcie.run.run_jobs): a row for each, none timed out, not a byte wrong,
    and every MSI its descriptors asked for (at least one)."""
    rows = run["results"]
    assert len(rows) == len(jobs)
    for row in rows:
        assert not row["timed_out"], row
        assert row["errors"] == 0, row
        assert row["msis"] == row["msis_expected"] > 0, row


def check_patched(kernel_dir, patches):
    """Each change of a driver patch set (software/driver/patches.py's (file, what, anchor, replacement)) is
    in the generated kernel sources in `kernel_dir`: its replacement, or what it inserts next to its anchor
    (another set may insert next to the same LitePCIe line); returns main.c's text."""
    for name, what, anchor, replacement in patches:
        if replacement.startswith(anchor):
            replacement = replacement[len(anchor):]
        elif replacement.endswith(anchor):
            replacement = replacement[:-len(anchor)]
        assert replacement in read(os.path.join(kernel_dir, name)), what
    return read(os.path.join(kernel_dir, "main.c"))


def ioctl_case(main_c, ioctl, next_ioctl):
    """The text of main.c's `case <ioctl>:`, up to the case of `next_ioctl`."""
    return main_c[main_c.index(f"case {ioctl}:"):main_c.index(f"case {next_ioctl}:")]
