# This file is part of hostlink.
# Copyright (c) 2026 hostlink developers
# SPDX-License-Identifier: BSD-2-Clause

"""The LitePCIe Linux driver and user tools of one SoC: generate them, then compile them.

    generate_driver(soc, driver_dir, name="litepcie")
                                       LitePCIe's kernel/ and user/ sources, with csr.h, soc.h and
                                       mem.h generated from this very SoC, hostlink's DDR3
                                       bring-up tool in dram/ (generate_dram_tool) and its PCIe fault
                                       counters tool in status/, and libhostlink (software/lib, with
                                       the C examples) in user/libhostlink; `name` names the driver, its
                                       module and device nodes (naming.py: one name per SoC in a host).
    build_driver(driver_dir)           NAME.ko (litepcie.ko) and liteuart.ko against installed kernel headers,
                                       then litepcie_util, litepcie_test, dram/hostlink_dram,
                                       status/hostlink_status and user/libhostlink.

    python -m hostlink.software.driver build DIR [--kernel-build-dir PATH]

The driver is LitePCIe's, changed by hostlink's change sets in the order of CHANGE_SETS: one module of this
package per set (hardening.py, mmap.py, ...), its C beside it (hardening.patch, ...), all applied by one
mechanism (patches.py).
"""

import argparse
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from typing import Callable, NamedTuple

import litepcie.software
from litepcie.software import generate_litepcie_software_headers

from hostlink import package_path
from hostlink.software.driver.patches import CONFIG_H_END, patch_file, read_defines
from hostlink.software.driver.hardening import harden_driver
from hostlink.software.driver.mmap import fix_mmap
from hostlink.software.driver.kernels import port_driver
from hostlink.software.driver.polling import add_polling
from hostlink.software.driver.flow import add_flow, flow_offsets
from hostlink.software.driver.stats import add_stats
from hostlink.software.driver.removal import add_removal
from hostlink.software.driver.wait import add_wait
from hostlink.software.driver.identity import refuse_other_socs, soc_identifier
from hostlink.software.driver.ring import choose_ring, refuse_another_ring
from hostlink.software.driver.naming import (DEFAULT_DRIVER_NAME, check_driver_name, driver_name, set_driver_name,
    use_driver_name)

__all__ = ["DriverBuildError", "DriverBuild", "ChangeSet", "CHANGE_SETS", "generate_driver", "generate_dram_tool",
    "soc_identifier", "DEFAULT_DRIVER_NAME", "check_driver_name", "driver_name", "find_kernel_build_dir", "kernel_build_dirs", "build_driver", "main"]

KERNEL_MODULES = ["litepcie.ko", "liteuart.ko"]   # A driver named NAME (naming.py) builds NAME.ko.
USER_TOOLS     = ["litepcie_util", "litepcie_test", "hostlink_bench"]
DRAM_TOOLS     = ["hostlink_dram"]   # In <driver_dir>/dram.
STATUS_TOOLS   = ["hostlink_status"] # In <driver_dir>/status.
LIBRARY_FILES  = ["libhostlink.so.0.2.0", "libhostlink.a", "hostlink.pc"]       # In <driver_dir>/user/libhostlink,
LIBRARY_TOOLS  = ["accelerator_host", "source_host", "threads_host", "packet_echo_host", "hostlink_errors",
                  "hostlink_threads"]        # with these programs.

DRAM_TOOL_SOURCES   = package_path("software", "dram")
STATUS_TOOL_SOURCES = package_path("software", "status")
BENCH_TOOL_SOURCES  = package_path("software", "bench")
LIBRARY_SOURCES     = package_path("software", "lib")
LIBRARY_EXAMPLES    = [package_path("examples", name) for name in ["accelerator_host.c", "source_host.c",
                                                                   "threads_host.c", "packet_echo_host.c"]]

# Change sets --------------------------------------------------------------------------------------

class ChangeSet(NamedTuple):
    """One of hostlink's change sets to LitePCIe's driver: its `name` (its module in this package and its C,
    <name>.patch, beside it), the function that `apply`s it to a copied kernel/ folder (DriverPatchError
    names a change LitePCIe's sources no longer take), and `why` it is there."""
    name  : str
    apply : Callable[[str], str]
    why   : str

# In the order generate_driver applies them: a set is written against the sources as the sets before it leave
# them (its module says which it follows), so the order is part of the sets.
CHANGE_SETS = [
    ChangeSet("hardening", harden_driver,     "a user with the device open cannot turn its DMA against the host"),
    ChangeSet("mmap",      fix_mmap,          "zero-copy mmap maps the DMA buffers' own pages, behind an IOMMU too"),
    ChangeSet("kernels",   port_driver,       "liteuart.ko builds against Linux 6.10+ (backports' 6.12), not only 6.1"),
    ChangeSet("polling",   add_polling,       "polling without register writes (DMA_POLL), cycle timing (CYCLES)"),
    ChangeSet("flow",      add_flow,          "flow modes (DMA_FLOW): the DMA waits for the program, no buffer lost"),
    ChangeSet("stats",     add_stats,         "a channel's counters, the driver's and the DMA's, in one call (STATS)"),
    ChangeSet("removal",   add_removal,       "calls on a removed board fail; it is freed at its channels' last close"),
    ChangeSet("wait",      add_wait,          "a program sleeps until its polled DMA has a buffer, woken by interrupt"),
    ChangeSet("identity",  refuse_other_socs, "the probe leaves a board of another SoC to that SoC's driver"),
    ChangeSet("ring",      choose_ring,       "the ring's buffer count and size chosen when the module loads"),
    ChangeSet("naming",    use_driver_name,   "the driver's name chosen when it is generated: drivers of several SoCs side by side"),
]

# Generation ---------------------------------------------------------------------------------------

def generate_driver(soc, driver_dir, name=DEFAULT_DRIVER_NAME):
    """Write `<driver_dir>/kernel` and `<driver_dir>/user` for `soc` and return `driver_dir`.

    `name` names the driver (naming.py): module NAME.ko, its class and device nodes /dev/NAME0, ..., and the
    user tools and libhostlink built with it open those nodes. LitePCIe's "litepcie" by default; a SoC of
    its own per name lets the drivers of several SoCs serve their boards in one host.

    The sources are LitePCIe's own: LitePCIe 2024.12 builds cleanly against Debian 12's 6.1 kernel headers.
    hostlink's change sets are applied to them in CHANGE_SETS' order: LitePCIe's liteuart.c is ported to Linux
    6.10+ behind version guards (kernels.port_driver) so that the modules also build against bookworm-backports'
    6.12. They are hardened (hardening.harden_driver: checked ioctl arguments, register writes for CAP_SYS_RAWIO
    only, device nodes 0660 for the group hostlink, with a udev rule); the zero-copy mmap maps the right pages
    behind an IOMMU (mmap.fix_mmap); a board removed while programs hold its channels fails their calls and is
    freed after their last close (removal.add_removal); a program sleeps until its polled DMA has a buffer for
    it, woken by an interrupt (wait.add_wait); a board of another SoC is not taken (identity.refuse_other_socs);
    the ring's count and size are module parameters (ring.choose_ring).
    One line is added when the SoC's DMA reads more than 512 bytes at a time (VC709): the probe asks for that
    Max Read Request Size (pcie_set_readrq). The register headers come from `soc`; the DMA register offsets that
    LitePCIe's config.h keeps by hand are checked against them, so a SoC whose DMA register layout differs from
    what the driver expects fails here, not on the board.
    """
    check_driver_name(name)
    if not getattr(soc, "finalized", False):
        # The CSR map only exists once the SoC is finalized (Builder.build does it too; it is idempotent).
        soc.finalize()
    if not getattr(soc, "csr_regions", None):
        raise ValueError(f"generate_driver needs a LiteX SoC with CSRs, got {type(soc).__name__} without any")
    if not any(name.startswith("pcie_dma") for name in soc.csr_regions):
        raise ValueError(f"generate_driver needs a SoC with LitePCIe DMA channels (pcie_dma*); "
                         f"{type(soc).__name__} has CSR regions {sorted(soc.csr_regions)}")

    driver_dir = os.path.abspath(driver_dir)
    src        = os.path.dirname(os.path.abspath(litepcie.software.__file__))
    for sub in ["kernel", "user"]:
        shutil.copytree(os.path.join(src, sub), os.path.join(driver_dir, sub),
            dirs_exist_ok = True,
            ignore        = shutil.ignore_patterns("__pycache__", "*.pyc", "*.o", "*.ko", "*.a"))
    kernel_dir = os.path.join(driver_dir, "kernel")
    generate_litepcie_software_headers(soc, kernel_dir)
    _add_flow_offsets(kernel_dir)
    _check_dma_offsets(kernel_dir)
    for change in CHANGE_SETS:
        change.apply(kernel_dir)
    set_driver_name(driver_dir, name)
    refuse_another_ring(os.path.join(driver_dir, "user"))
    _add_bench_tool(os.path.join(driver_dir, "user"))
    _add_library(os.path.join(driver_dir, "user", "libhostlink"), kernel_dir)
    max_request = getattr(getattr(soc, "pcie_phy", None), "max_request_limit", 512)
    if max_request > 512:
        _ask_for_read_request_size(kernel_dir, max_request)
    generate_dram_tool(soc, os.path.join(driver_dir, "dram"))
    # The fault counters tool reads the SoC's pcie_faults registers from kernel/csr.h.
    shutil.copytree(STATUS_TOOL_SOURCES, os.path.join(driver_dir, "status"), dirs_exist_ok=True,
        ignore=shutil.ignore_patterns("*.o", "hostlink_status"))
    return driver_dir


BENCH_MAKEFILE_ANCHOR = "PROGS=litepcie_util litepcie_test\n"

def _add_bench_tool(user_dir):
    """hostlink_bench (software/bench) next to LitePCIe's tools, built by their Makefile: it includes
    the same generated headers (csr.h, config.h, litepcie.h) and links liblitepcie."""
    shutil.copy(os.path.join(BENCH_TOOL_SOURCES, "hostlink_bench.c"), user_dir)
    path = os.path.join(user_dir, "Makefile")
    patch_file(path, BENCH_MAKEFILE_ANCHOR, "PROGS=litepcie_util litepcie_test hostlink_bench\n",
               "hostlink_bench among the user tools")
    with open(path, "a") as f:
        f.write("\n# hostlink: the transfer benchmark (software/bench).\n"
                "hostlink_bench: liblitepcie/liblitepcie.a hostlink_bench.o\n"
                "\t$(CC) $(LDFLAGS) -o $@ $^ -Lliblitepcie -llitepcie -lpthread -lm\n")


def _add_library(library_dir, kernel_dir):
    """libhostlink (software/lib) and its C examples in `library_dir`, with hostlink_registers.h: the SoC's
    CSR names, addresses and sizes from kernel/csr.h, for registers by name."""
    os.makedirs(library_dir, exist_ok=True)
    for name in ["hostlink.c", "hostlink.h", "hostlink.pc.in", "Makefile", "hostlink_errors.c", "hostlink_threads.c"]:
        shutil.copy(os.path.join(LIBRARY_SOURCES, name), library_dir)
    for path in LIBRARY_EXAMPLES:
        shutil.copy(path, library_dir)
    defines = read_defines(os.path.join(kernel_dir, "csr.h"))
    base = int(defines.get("CSR_BASE", "0x0L").rstrip("Ll"), 0)
    rows = []
    for key, value in sorted(defines.items()):
        if key.startswith("CSR_") and key.endswith("_ADDR"):
            name = key[len("CSR_"):-len("_ADDR")]
            offset, size = _csr_offset(value), defines.get(f"CSR_{name}_SIZE", "1")
            if offset is None or not size.isdigit():
                continue
            rows.append(f'\t{{"{name.lower()}", 0x{base + offset:x}, {int(size)}}},')
    if not rows:
        raise ValueError(f"{kernel_dir}/csr.h names no registers (CSR_<NAME>_ADDR): cannot build libhostlink")
    _write(os.path.join(library_dir, "hostlink_registers.h"), "\n".join([
        "/* The SoC's registers by CSR name: generated from kernel/csr.h by hostlink (software/driver/). */",
        "#ifndef HOSTLINK_REGISTERS_H",
        "#define HOSTLINK_REGISTERS_H",
        "static const struct { const char *name; uint32_t address; int words; } hostlink_registers[] = {",
        *rows,
        "};",
        "#endif",
        ""]))


READ_REQUEST_ANCHOR = "\tpci_set_master(dev);\n"

def _ask_for_read_request_size(kernel_dir, max_request):
    """Make the probe ask the kernel for `max_request` bytes of Max Read Request Size (Linux otherwise keeps
    the firmware's value, often 512), as drivers do with pcie_set_readrq(): for SoCs whose DMA reads more
    than 512 bytes at a time (VC709)."""
    patch_file(os.path.join(kernel_dir, "main.c"), READ_REQUEST_ANCHOR, READ_REQUEST_ANCHOR +
        f"\t/* hostlink: this SoC's DMA reads up to {max_request} bytes per request. */\n"
        f"\tif (pcie_set_readrq(dev, {max_request}) || pcie_get_readrq(dev) < {max_request})\n"
        f"\t\tdev_warn(&dev->dev, \"Max Read Request Size left at %d bytes\\n\", pcie_get_readrq(dev));\n",
        "probe: pcie_set_readrq() after pci_set_master()")


def generate_dram_tool(soc, dram_dir):
    """Write the DDR3 bring-up tool (software/dram) for `soc` into `dram_dir` and return `dram_dir`.

    Next to the sources, `generated/` holds what the tool is built against: csr.h with LiteX's access
    functions (the ones LiteDRAM's sdram_phy.h calls), soc.h, and, when the SoC has a DRAM controller,
    LiteDRAM's sdram_phy.h for this SoC's PHY and timings (the initialisation sequence, the
    levelling capabilities) and dram_settings.h (names for the tool's messages). A SoC without DRAM
    gets a tool that says so.
    """
    from litex.soc.integration.export import get_csr_header, get_soc_header
    if not getattr(soc, "finalized", False):
        soc.finalize()
    dram_dir = os.path.abspath(dram_dir)
    shutil.copytree(DRAM_TOOL_SOURCES, dram_dir, dirs_exist_ok=True,
        ignore=shutil.ignore_patterns("generated", "*.o", "*.so", "hostlink_dram"))
    generated = os.path.join(dram_dir, "generated")
    os.makedirs(generated, exist_ok=True)
    _write(os.path.join(generated, "csr.h"), get_csr_header(soc.csr_regions, soc.constants, with_access_functions=True))
    _write(os.path.join(generated, "soc.h"), get_soc_header(soc.constants, with_access_functions=False))
    for name in ("sdram_phy.h", "dram_settings.h"):
        path = os.path.join(generated, name)
        if os.path.exists(path):
            os.remove(path)   # A previous generation from a SoC with DRAM.
    sdram = getattr(soc, "sdram", None)
    if sdram is not None:
        from litedram.init import get_sdram_phy_c_header
        settings = sdram.controller.settings
        _write(os.path.join(generated, "sdram_phy.h"),
            get_sdram_phy_c_header(settings.phy, settings.timing, settings.geom))
        _write(os.path.join(generated, "dram_settings.h"), _dram_settings_header(settings.phy))
    return dram_dir


def _dram_settings_header(phy_settings):
    return "\n".join([
        "/* Generated by hostlink.software.driver from the SoC: names for hostlink_dram's messages. */",
        "#ifndef HOSTLINK_DRAM_SETTINGS_H",
        "#define HOSTLINK_DRAM_SETTINGS_H",
        f'#define HOSTLINK_DRAM_PHY "{phy_settings.phytype}"',
        f'#define HOSTLINK_DRAM_MEMTYPE "{phy_settings.memtype}"',
        "#endif",
        "",
    ])


def _write(path, text):
    with open(path, "w") as f:
        f.write(text)

def _csr_offset(value):
    m = re.fullmatch(r"\(CSR_BASE \+ (0x[0-9a-fA-F]+)L\)", value)
    return int(m.group(1), 16) if m else None

def _add_flow_offsets(kernel_dir):
    """The flow gates' register offsets (flow.py) into config.h, next to LitePCIe's own, where the
    SoC has them; _check_dma_offsets then checks them on every channel."""
    offsets = flow_offsets(read_defines(os.path.join(kernel_dir, "csr.h")), _csr_offset)
    if not offsets:
        return
    lines = "".join(f"#define {name:<41} 0x{offset:04x}\n" for name, offset in offsets.items())
    patch_file(os.path.join(kernel_dir, "config.h"), CONFIG_H_END,
               "/* hostlink: the flow gates (hostlink.cores.pcie.flow). */\n" + lines + "\n" + CONFIG_H_END,
               "the flow gates' offsets at the end of config.h")


def _check_dma_offsets(kernel_dir):
    config = read_defines(os.path.join(kernel_dir, "config.h"))
    csr    = read_defines(os.path.join(kernel_dir, "csr.h"))
    soc    = read_defines(os.path.join(kernel_dir, "soc.h"))
    channels = int(soc.get("DMA_CHANNELS", "0"))
    if channels < 1:
        raise ValueError(f"soc.h generated in {kernel_dir} declares no DMA channel (DMA_CHANNELS missing)")
    offsets = {k: int(v, 0) for k, v in config.items() if re.fullmatch(r"PCIE_DMA_\w+_OFFSET", k)}
    mismatches = []
    for i in range(channels):
        base = _csr_offset(csr.get(f"CSR_PCIE_DMA{i}_BASE", ""))
        if base is None:
            mismatches.append(f"CSR_PCIE_DMA{i}_BASE missing from csr.h")
            continue
        for name, offset in offsets.items():
            # config.h still calls the table reset "FLUSH"; the CSR is named TABLE_RESET.
            reg  = name[len("PCIE_DMA_"):-len("_OFFSET")].replace("TABLE_FLUSH", "TABLE_RESET")
            addr = _csr_offset(csr.get(f"CSR_PCIE_DMA{i}_{reg}_ADDR", ""))
            if addr is None or addr - base != offset:
                found = "missing" if addr is None else hex(addr - base)
                mismatches.append(f"{name}=0x{offset:04x} but CSR_PCIE_DMA{i}_{reg} is {found}")
    if mismatches:
        raise ValueError("LitePCIe driver's DMA register offsets (config.h) do not match this SoC's csr.h: "
                         + "; ".join(mismatches))

# Kernel headers -----------------------------------------------------------------------------------

def _version_key(text):
    return [int(p) if p.isdigit() else p for p in re.split(r"(\d+)", text)]

def _is_kernel_build_dir(path):
    # A configured tree that Kbuild can build external modules against: Debian's -common packages
    # have a Makefile but no .config and cannot be used alone.
    return all(os.path.exists(os.path.join(path, f)) for f in ["Makefile", ".config"])

def kernel_build_dirs():
    """Every installed kernel build tree (/lib/modules/*/build, /usr/src/linux-headers-*), oldest first."""
    candidates = set()
    if os.path.isdir("/lib/modules"):
        for release in os.listdir("/lib/modules"):
            path = os.path.join("/lib/modules", release, "build")
            if _is_kernel_build_dir(path):
                candidates.add(os.path.realpath(path))
    if os.path.isdir("/usr/src"):
        for name in os.listdir("/usr/src"):
            path = os.path.join("/usr/src", name)
            if name.startswith("linux-headers-") and _is_kernel_build_dir(path):
                candidates.add(os.path.realpath(path))
    return sorted(candidates, key=lambda p: _version_key(os.path.basename(p)))

def find_kernel_build_dir():
    """The kernel build tree to compile the module against, or None when no headers are installed.

    The running kernel's tree comes first (that is the kernel that will load the module); otherwise
    the newest installed one: in a container or CI the running kernel often has no headers at all.
    """
    running = os.path.join("/lib/modules", os.uname().release, "build")
    if _is_kernel_build_dir(running):
        return os.path.realpath(running)
    candidates = kernel_build_dirs()
    return candidates[-1] if candidates else None

# Build --------------------------------------------------------------------------------------------

class DriverBuildError(RuntimeError):
    """The driver or the user tools did not compile; the message carries the compiler output."""

@dataclass
class DriverBuild:
    driver_dir       : str
    kernel_build_dir : str
    kernel_modules   : list = field(default_factory=list)  # Paths of the built .ko files.
    user_tools       : list = field(default_factory=list)  # Paths of the built executables.
    libraries        : list = field(default_factory=list)  # libhostlink: .so, .a and hostlink.pc.
    warnings         : list = field(default_factory=list)  # Compiler/modpost warning lines.
    log              : str  = ""                            # Full output of both builds.

_WARNING = re.compile(r"\bwarning\b", re.IGNORECASE)

def _make(what, directory, args):
    cmd = ["make", "-C", directory] + args
    try:
        proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    except FileNotFoundError:
        raise DriverBuildError(f"building the {what} needs 'make' on PATH (Debian: apt-get install build-essential)")
    if proc.returncode != 0:
        raise DriverBuildError(f"building the {what} failed ({' '.join(cmd)}, exit code {proc.returncode}):\n"
                               f"{proc.stdout}")
    return proc.stdout

def build_driver(driver_dir, kernel_build_dir=None):
    """Compile `<driver_dir>/kernel` against `kernel_build_dir` (default: find_kernel_build_dir()) and
    `<driver_dir>/user`. Raise DriverBuildError with the compiler output on failure; return a DriverBuild
    whose `warnings` lists every warning line."""
    driver_dir = os.path.abspath(driver_dir)
    kernel_dir = os.path.join(driver_dir, "kernel")
    user_dir   = os.path.join(driver_dir, "user")
    for d in [kernel_dir, user_dir]:
        if not os.path.isfile(os.path.join(d, "Makefile")):
            raise DriverBuildError(f"{d} has no Makefile: generate the driver first "
                                   f"(./targets/<board>.py --driver, or generate_driver(soc, {driver_dir!r}))")
    if not os.path.isfile(os.path.join(kernel_dir, "csr.h")):
        raise DriverBuildError(f"{kernel_dir} has no csr.h: the driver was not generated from a SoC")

    if kernel_build_dir is None:
        kernel_build_dir = find_kernel_build_dir()
        if kernel_build_dir is None:
            raise DriverBuildError("no kernel headers installed (no /lib/modules/*/build nor "
                                   "/usr/src/linux-headers-* with a .config); "
                                   "Debian: apt-get install linux-headers-amd64")
    elif not _is_kernel_build_dir(kernel_build_dir):
        raise DriverBuildError(f"{kernel_build_dir} is not a configured kernel build tree (Makefile and .config)")

    # Kbuild derives ARCH from the host; the module Makefile's own `uname -m` default is kept.
    log  = _make("kernel module", kernel_dir, [f"KERNEL_PATH={os.path.abspath(kernel_build_dir)}"])
    log += _make("user tools",    user_dir,   [])
    dram_dir, status_dir = os.path.join(driver_dir, "dram"), os.path.join(driver_dir, "status")
    library_dir = os.path.join(user_dir, "libhostlink")
    for what, directory in [("DDR3 bring-up tool", dram_dir), ("fault counters tool", status_dir),
                            ("libhostlink", library_dir)]:
        if not os.path.isfile(os.path.join(directory, "Makefile")):
            raise DriverBuildError(f"{directory} has no Makefile (the {what}): this driver folder is not a "
                                   f"whole one of this hostlink's; generate it again (--driver)")
        log += _make(what, directory, [])

    result = DriverBuild(driver_dir=driver_dir, kernel_build_dir=os.path.abspath(kernel_build_dir), log=log)
    result.warnings = [line for line in log.splitlines() if _WARNING.search(line)]
    for name in [f"{driver_name(driver_dir)}.ko", *KERNEL_MODULES[1:]]:
        path = os.path.join(kernel_dir, name)
        if not os.path.isfile(path):
            raise DriverBuildError(f"make succeeded but {path} was not produced:\n{log}")
        result.kernel_modules.append(path)
    for path in [os.path.join(user_dir, n) for n in USER_TOOLS] + [os.path.join(dram_dir, n) for n in DRAM_TOOLS] \
            + [os.path.join(status_dir, n) for n in STATUS_TOOLS] \
            + [os.path.join(library_dir, n) for n in LIBRARY_TOOLS]:
        if not os.access(path, os.X_OK):
            raise DriverBuildError(f"make succeeded but {path} was not produced:\n{log}")
        result.user_tools.append(path)
    for path in [os.path.join(library_dir, n) for n in LIBRARY_FILES]:
        if not os.path.isfile(path):
            raise DriverBuildError(f"make succeeded but {path} was not produced:\n{log}")
        result.libraries.append(path)
    return result

# CLI ----------------------------------------------------------------------------------------------

def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m hostlink.software.driver",
        description=__doc__.strip().splitlines()[0])
    sub    = parser.add_subparsers(dest="command", required=True)
    build  = sub.add_parser("build", help="Compile a generated driver directory (kernel module and user tools).")
    build.add_argument("driver_dir",
        help="Directory holding kernel/ and user/ (e.g. build/<board>/driver).")
    build.add_argument("--kernel-build-dir", default=None,
        help="Kernel build tree (default: the running kernel's, else the newest installed).")
    args = parser.parse_args(argv)

    try:
        result = build_driver(args.driver_dir, kernel_build_dir=args.kernel_build_dir)
    except DriverBuildError as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    for line in result.warnings:
        print(line, file=sys.stderr)
    print(f"Kernel headers: {result.kernel_build_dir}")
    for path in result.kernel_modules + result.user_tools:
        print(f"Built {path}")
    print(f"{len(result.warnings)} warning(s)")
    return 0
