# This file is part of hostlink.
# Copyright (c) 2026 hostlink developers
# SPDX-License-Identifier: BSD-2-Clause

"""The Zynq SoC's software built for the board's ARM, as a user builds it (software/zynq/Makefile), against
the Zynq kernel `make arm-kernel` builds from Debian's linux-source-6.12 with Debian's cross compiler: the two
modules and the user-level driver, without a warning."""

import os
import shutil
import struct
import subprocess

import pytest

from helpers import REPO

ARM_TREE = os.path.join(os.environ.get("HOSTLINK_BUILD_DIR", os.path.join(REPO, "build")), "arm",
                        "linux-source-6.12")
SOFTWARE = os.path.join(REPO, "software", "zynq")
EM_ARM   = 40   # The ELF header's e_machine of a 32-bit ARM file.


def elf_machine(path):
    """The ELF class (1: 32-bit) and e_machine of the file at `path`."""
    with open(path, "rb") as f:
        header = f.read(20)
    assert header[:4] == b"\x7fELF", f"{path} is not an ELF file"
    return header[4], struct.unpack("<H", header[18:20])[0]


@pytest.fixture(scope="module")
def arm_build(tmp_path_factory):
    """software/zynq copied and built with its Makefile for ARM: (the directory, make's output)."""
    if not os.path.isfile(os.path.join(ARM_TREE, "Module.symvers")):
        pytest.fail(f"no ARM kernel built in {ARM_TREE}: run `make arm-kernel` (make test and make check do)")
    directory = tmp_path_factory.mktemp("zynq_arm") / "zynq"
    shutil.copytree(SOFTWARE, directory, ignore=shutil.ignore_patterns("*.o", "*.ko", "dma_user_test"))
    result = subprocess.run(["make", f"KDIR={ARM_TREE}", "ARCH=arm", "CROSS_COMPILE=arm-linux-gnueabihf-"],
                            cwd=directory, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    assert result.returncode == 0, result.stdout[-4000:]
    return directory, result.stdout


@pytest.mark.slow
def test_the_zynq_software_builds_for_arm_without_a_warning(arm_build):
    """Both modules and dma_user_test are 32-bit ARM files, built without a compiler or modpost warning
    (modpost found every symbol the modules use in the kernel's Module.symvers)."""
    directory, output = arm_build
    warnings = [line for line in output.splitlines() if "warning" in line.lower()]
    assert not warnings, "\n".join(warnings)
    for name in ("hostlink_dma_client.ko", "hostlink_dma_user.ko", "dma_user_test"):
        assert elf_machine(directory / name) == (1, EM_ARM), name


@pytest.mark.slow
def test_the_arm_modules_are_for_the_zynq_kernel(arm_build):
    """The modules' vermagic is the ARM kernel's: Linux 6.12 for ARMv7, so they load only into such a kernel."""
    directory, _ = arm_build
    with open(os.path.join(ARM_TREE, "include", "config", "kernel.release")) as f:
        release = f.read().strip()
    for name in ("hostlink_dma_client.ko", "hostlink_dma_user.ko"):
        vermagic = subprocess.run(["modinfo", "-F", "vermagic", str(directory / name)], stdout=subprocess.PIPE,
                                  text=True, check=True).stdout.strip()
        assert vermagic.startswith(release + " ") and "ARMv7" in vermagic, (name, vermagic)
