# This file is part of hostlink.
# Copyright (c) 2026 hostlink developers
# SPDX-License-Identifier: BSD-2-Clause

"""The LitePCIe driver and user tools generated from each PCIe board's SoC compile against the installed
kernel headers. Errors fail; compiler warnings are reported as pytest warnings."""

import importlib
import os
import re
import shutil
import subprocess
import sys
import tempfile
import warnings

import pytest

from hostlink.software import driver
from hostlink.software.driver import (DriverBuildError, build_driver, find_kernel_build_dir, generate_driver,
    kernel_build_dirs)
from hostlink.software.driver import hardening as driver_hardening, kernels as driver_kernels, mmap as driver_mmap
from hostlink.software.driver.hardening import harden_driver
from hostlink.software.driver.patches import DriverPatchError
from hostlink.targets import boards as registry

from helpers import check_missing_anchor_is_refused, check_patched, ioctl_case, read, run_target


BOARDS = registry.PCIE_BOARDS

# A board's PCIe DMA SoC in Python is the PCIe DMA alone (registry.Board.pcie_soc); on the command line
# the KC705 (an Ethernet target by default) gets only the flag that adds PCIe and keeps its UDP core next
# to it, so both compositions are built.

KERNEL_BUILD_DIR  = find_kernel_build_dir()
KERNEL_BUILD_DIRS = kernel_build_dirs()
needs_headers = pytest.mark.skipif(KERNEL_BUILD_DIR is None,
    reason="no kernel headers installed (no /lib/modules/*/build nor /usr/src/linux-headers-*); "
           "`make test` installs linux-headers-amd64")

# Helpers ------------------------------------------------------------------------------------------

def show_warnings(result):
    for line in result.warnings:
        warnings.warn(f"driver build warning: {line}", UserWarning)

def defines(path):
    with open(path) as f:
        return dict(re.findall(r"^#define[ \t]+(\w+)[ \t]*(.*?)[ \t]*$", f.read(), re.MULTILINE))

def board_soc(board, **kwargs):
    return registry.BOARDS[board].pcie_soc(**kwargs)

# The ZC706's driver in the quick tier; the VC709's and KC705's (the same sources, other headers) in the
# slow one (pytest.ini).
@pytest.fixture(scope="module", params=[BOARDS[0]] + [pytest.param(b, marks=pytest.mark.slow) for b in BOARDS[1:]])
def generated(request, tmp_path_factory):
    """A driver generated from the board's default SoC (module-wide: generation and build are shared)."""
    driver_dir = str(tmp_path_factory.mktemp(f"driver_{request.param}"))
    soc = board_soc(request.param)
    generate_driver(soc, driver_dir)
    return request.param, soc, driver_dir

# Generation ---------------------------------------------------------------------------------------

def test_generated_tree_and_headers_from_this_soc(generated):
    board, soc, driver_dir = generated
    kernel = os.path.join(driver_dir, "kernel")
    user   = os.path.join(driver_dir, "user")
    for f in ["Makefile", "main.c", "litepcie.h", "config.h", "init.sh", "csr.h", "soc.h", "mem.h"]:
        assert os.path.isfile(os.path.join(kernel, f)), f
    for f in ["Makefile", "litepcie_util.c", "liblitepcie/litepcie_dma.c"]:
        assert os.path.isfile(os.path.join(user, f)), f
    assert not any(name == "__pycache__" or name.endswith(".py") for _, _, files in os.walk(driver_dir)
                   for name in files)

    soc_h = defines(os.path.join(kernel, "soc.h"))
    csr_h = defines(os.path.join(kernel, "csr.h"))
    channels = soc.constants["DMA_CHANNELS"]
    assert int(soc_h["DMA_CHANNELS"]) == channels
    assert soc_h["CONFIG_IDENTIFIER"].strip('"') == soc.constants["CONFIG_IDENTIFIER"]
    for i in range(channels):
        assert f"CSR_PCIE_DMA{i}_BASE" in csr_h
        assert f"CSR_PCIE_DMA{i}_LOOPBACK_ENABLE_ADDR" in csr_h
    assert f"CSR_PCIE_DMA{channels}_BASE" not in csr_h
    # Register addresses are this SoC's own.
    for i in range(channels):
        offset = int(re.fullmatch(r"\(CSR_BASE \+ 0x([0-9a-f]+)L\)", csr_h[f"CSR_PCIE_DMA{i}_BASE"]).group(1), 16)
        assert offset == soc.csr.locs[f"pcie_dma{i}"] * soc.csr.paging

@pytest.mark.slow
def test_generated_channel_count_follows_the_soc(tmp_path):
    board = BOARDS[0]
    generate_driver(board_soc(board, dma_channels=4), str(tmp_path))
    soc_h = defines(os.path.join(str(tmp_path), "kernel", "soc.h"))
    csr_h = defines(os.path.join(str(tmp_path), "kernel", "csr.h"))
    assert soc_h["DMA_CHANNELS"] == "4"
    assert "CSR_PCIE_DMA3_BASE" in csr_h and "CSR_PCIE_DMA4_BASE" not in csr_h

def test_generate_refuses_a_soc_without_dma(tmp_path):
    from litex.soc.integration.soc_core import SoCMini
    from hostlink.targets.zc706_platform import Platform
    with pytest.raises(ValueError, match=r"needs a SoC with LitePCIe DMA channels.*SoCMini has CSR regions \['ctrl'\]"):
        generate_driver(SoCMini(Platform(), 125e6), str(tmp_path / "driver"))
    assert not os.path.exists(tmp_path / "driver")

def test_dma_offsets_checked_against_csr_map(generated, tmp_path):
    _, _, driver_dir = generated
    kernel = str(tmp_path / "kernel")
    shutil.copytree(os.path.join(driver_dir, "kernel"), kernel)
    driver._check_dma_offsets(kernel)  # The genuine pair agrees.
    with open(os.path.join(kernel, "csr.h")) as f:
        csr = f.read()
    # Move one register of channel 0, as a SoC with a different DMA register layout would.
    csr = re.sub(r"(#define CSR_PCIE_DMA0_READER_ENABLE_ADDR \(CSR_BASE \+ )0x([0-9a-f]+)L\)",
        lambda m: f"{m.group(1)}{hex(int(m.group(2), 16) + 4)}L)", csr)
    with open(os.path.join(kernel, "csr.h"), "w") as f:
        f.write(csr)
    expected = r"PCIE_DMA_READER_ENABLE_OFFSET=0x0020 but CSR_PCIE_DMA0_READER_ENABLE is 0x24"
    with pytest.raises(ValueError, match=expected):
        driver._check_dma_offsets(kernel)

def test_probe_asks_for_the_read_request_size_the_dma_uses(generated, tmp_path):
    """A SoC whose DMA reads more than 512 bytes at a time has its probe ask for that MRRS. Every board's
    PHY stops at 512 bytes by default (the VC709's too: its completion headers bound the reads in flight),
    so their driver is LitePCIe's unchanged."""
    board, soc, driver_dir = generated
    with open(os.path.join(driver_dir, "kernel", "main.c")) as f:
        main_c = f.read()
    if getattr(soc.pcie_phy, "max_request_limit", 512) == 4096:
        assert "\tpci_set_master(dev);\n\t/* hostlink: this SoC's DMA reads up to 4096" in main_c
        assert "if (pcie_set_readrq(dev, 4096) || pcie_get_readrq(dev) < 4096)" in main_c
    else:
        assert "pcie_set_readrq" not in main_c
    # The simulated host of `./sim.py dma --board <board>` grants what this probe asks for, no more.
    from hostlink.sim.dma import board_profile_defaults
    from hostlink.sim.pcie.soc import get_board
    phy_limit = getattr(soc.pcie_phy, "max_request_limit", 512)
    assert board_profile_defaults(get_board(board))["max_read_request"] == max(512, phy_limit)
    # A LitePCIe whose probe no longer has the line to add it after is refused, not silently missed.
    (tmp_path / "main.c").write_text("static int probe(void) { return 0; }\n")
    with pytest.raises(DriverPatchError, match=r"pcie_set_readrq\(\) after pci_set_master\(\)'.*found it 0 times "
                                               r"\('pci_set_master\(dev\);'\).*LitePCIe's driver has changed"):
        driver._ask_for_read_request_size(str(tmp_path), 4096)

# Hardening ----------------------------------------------------------------------------------------

LITEPCIE_KERNEL = os.path.join(os.path.dirname(os.path.abspath(importlib.import_module("litepcie.software").__file__)),
    "kernel")

def test_generated_driver_is_hardened(generated):
    """Every hardening change is in the generated sources, the relied-on mmap checks are still there,
    nothing makes the nodes world-writable, and the udev rule gives them to the group."""
    _, _, driver_dir = generated
    kernel = os.path.join(driver_dir, "kernel")
    main_c = check_patched(kernel, driver_hardening.PATCHES)
    for name, what, anchor in driver_hardening.REQUIRED:
        assert anchor in read(os.path.join(kernel, name)), what
    assert "if (m.is_write && !capable(CAP_SYS_RAWIO)) {\n\t\t\tret = -EPERM;" in main_c
    assert "offset > bar0_len - 4) {\n\t\t\tret = -EINVAL;" in main_c
    assert "u64 bar0_len = pci_resource_len(dev->dev, 0);" in main_c
    # Register writes happen only after the checks: the one write in the REG case follows them.
    reg = ioctl_case(main_c, "LITEPCIE_IOCTL_REG", "LITEPCIE_IOCTL_DMA")
    assert reg.index("capable(CAP_SYS_RAWIO)") < reg.index("litepcie_writel(dev, m.addr, m.val)")
    init_sh = read(os.path.join(kernel, "init.sh"))
    assert "666" not in init_sh
    assert 'chgrp "$GROUP" "$dev" && chmod 660 "$dev"' in init_sh and "GROUP=hostlink" in init_sh
    rule = read(os.path.join(kernel, driver_hardening.UDEV_RULE_NAME))
    assert 'KERNEL=="litepcie[0-9]*", GROUP="hostlink", MODE="0660"' in rule
    # init.sh stays a valid shell script.
    assert subprocess.run(["sh", "-n", os.path.join(kernel, "init.sh")]).returncode == 0


def test_the_largest_ring_is_the_dmas_descriptor_table():
    """ring.patch sizes a channel's buffer tables, and bounds dma_buffer_count, by the DMA's descriptor table
    depth: LitePCIeDMA's table_depth, which cores/pcie/integration.py leaves at its default (loop mode holds
    the whole ring in the table)."""
    import inspect
    from litepcie.frontend.dma import LitePCIeDMA
    depth = inspect.signature(LitePCIeDMA).parameters["table_depth"].default
    from hostlink import package_path
    assert "table_depth" not in read(package_path("cores", "pcie", "integration.py"))
    text = "".join(replacement for _, _, _, replacement in driver.ring.RING_PATCHES)
    assert re.search(rf"HOSTLINK_DMA_TABLE_DEPTH\s*=\s*{depth},", text), depth


def test_every_anchor_is_litepcies_own():
    """Each change set's anchors: LitePCIe's text, once in its sources, never text a hostlink change wrote
    (a change next to another set's lines is anchored on LitePCIe's line beside them)."""
    sets = [driver.hardening.PATCHES, driver.mmap.MMAP_PATCHES, driver.kernels.PATCHES, driver.polling.POLLING_PATCHES,
            driver.flow.FLOW_PATCHES, driver.stats.STATS_PATCHES, driver.removal.PATCHES, driver.wait.WAIT_PATCHES,
            driver.identity.PATCHES, driver.ring.RING_PATCHES, driver.naming.PATCHES, driver.mmap.REMAPPED_BUFFERS_PATCHES]
    for patches in sets:
        for name, what, anchor, replacement in patches:
            assert read(os.path.join(LITEPCIE_KERNEL, name)).count(anchor) == 1, what


def test_the_change_sets_table_names_every_set_of_the_package():
    """CHANGE_SETS, which generate_driver walks, names each change set once, by its module (which holds its
    function) and its C beside it; every .patch file of the package is a set's, but for mmap.py's test-only
    remapped buffers."""
    from hostlink.software.driver.patches import PATCH_DIR
    names = [change.name for change in driver.CHANGE_SETS]
    assert len(set(names)) == len(names)
    for change in driver.CHANGE_SETS:
        assert change.apply.__module__ == f"hostlink.software.driver.{change.name}", change
        assert os.path.isfile(os.path.join(PATCH_DIR, f"{change.name}.patch")), change
        assert change.why and "\n" not in change.why, change
    patch_files = sorted(n[:-len(".patch")] for n in os.listdir(PATCH_DIR) if n.endswith(".patch"))
    assert patch_files == sorted(names + ["remapped_buffers"])


def _litepcie_kernel_copy(tmp_path):
    kernel = str(tmp_path / "kernel")
    shutil.copytree(LITEPCIE_KERNEL, kernel, ignore=shutil.ignore_patterns("__pycache__"))
    return kernel

@pytest.mark.parametrize("index", range(len(driver_hardening.PATCHES)))
def test_hardening_refuses_when_an_anchor_is_missing(tmp_path, index):
    """A LitePCIe whose sources lost the line a change is anchored on stops generation, names the
    change, and leaves the sources untouched (nothing half-patched)."""
    name, what, anchor, _ = driver_hardening.PATCHES[index]
    kernel = _litepcie_kernel_copy(tmp_path)
    path = os.path.join(kernel, name)
    changed = read(path).replace(anchor, "/* moved */\n" if name == "main.c" else "# moved\n")
    with open(path, "w") as f:
        f.write(changed)
    before = {n: read(os.path.join(kernel, n)) for n in ["main.c", "init.sh"]}
    with pytest.raises(DriverPatchError, match=rf"cannot apply hardening '{re.escape(what)}'.*found it 0 times"
                                               r".*LitePCIe's driver has changed"):
        harden_driver(kernel)
    assert {n: read(os.path.join(kernel, n)) for n in ["main.c", "init.sh"]} == before
    assert not os.path.exists(os.path.join(kernel, driver_hardening.UDEV_RULE_NAME))

@pytest.mark.parametrize("index", range(len(driver_hardening.REQUIRED)))
def test_hardening_refuses_when_the_mmap_checks_change(tmp_path, index):
    name, what, anchor = driver_hardening.REQUIRED[index]
    kernel = _litepcie_kernel_copy(tmp_path)
    path = os.path.join(kernel, name)
    changed = read(path).replace(anchor, "")
    with open(path, "w") as f:
        f.write(changed)
    with pytest.raises(DriverPatchError, match=rf"relies on '{re.escape(what)}'"):
        harden_driver(kernel)

def test_hardening_refuses_an_anchor_found_twice(tmp_path):
    kernel = _litepcie_kernel_copy(tmp_path)
    with open(os.path.join(kernel, "main.c"), "a") as f:
        f.write("\n#include <linux/ioctl.h>\n")
    with pytest.raises(DriverPatchError, match="capability header.*found it 2 times"):
        harden_driver(kernel)

def test_generation_stops_when_litepcie_changes_under_it(generated, tmp_path, monkeypatch):
    _, soc, _ = generated
    patches = list(driver_hardening.PATCHES) + [("main.c", "an anchor LitePCIe lost", "no such line\n", "x")]
    monkeypatch.setattr(driver_hardening, "PATCHES", patches)
    with pytest.raises(DriverPatchError, match="cannot apply hardening 'an anchor LitePCIe lost'"):
        generate_driver(soc, str(tmp_path / "driver"))

# Build --------------------------------------------------------------------------------------------

def test_kernel_build_dir_is_a_configured_tree():
    if KERNEL_BUILD_DIR is None:
        pytest.skip("no kernel headers installed")
    assert os.path.isfile(os.path.join(KERNEL_BUILD_DIR, "Makefile"))
    assert os.path.isfile(os.path.join(KERNEL_BUILD_DIR, ".config"))

@needs_headers
def test_build_kernel_module_and_user_tools(generated):
    board, soc, driver_dir = generated
    result = build_driver(driver_dir)
    show_warnings(result)
    print(f"{board}: built against {result.kernel_build_dir}, {len(result.warnings)} warning(s)")
    assert os.path.isfile(os.path.join(driver_dir, "kernel", "litepcie.ko"))
    for tool in ["litepcie_util", "litepcie_test"]:
        assert os.access(os.path.join(driver_dir, "user", tool), os.X_OK)
    assert result.kernel_build_dir == os.path.realpath(KERNEL_BUILD_DIR)
    # The module was built for that kernel and binds the PCIe IDs the SoC's PHY announces.
    modinfo = shutil.which("modinfo") or "/usr/sbin/modinfo"
    if os.path.exists(modinfo):
        info = subprocess.run([modinfo, os.path.join(driver_dir, "kernel", "litepcie.ko")],
            stdout=subprocess.PIPE, text=True, check=True).stdout
        release = os.path.basename(result.kernel_build_dir).replace("linux-headers-", "")
        assert re.search(rf"^vermagic:\s+{re.escape(release)}\b", info, re.MULTILINE), info
        assert "pci:v000010EE" in info
    assert os.access(os.path.join(driver_dir, "status", "hostlink_status"), os.X_OK)
    check_libhostlink(os.path.join(driver_dir, "user", "libhostlink"), result)
    # litepcie_util runs on this machine (no board: its usage text only).
    usage = subprocess.run([os.path.join(driver_dir, "user", "litepcie_util")],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    assert "dma_test" in usage.stdout

def check_libhostlink(library_dir, result):
    """libhostlink: shared with its soname, static, hostlink.pc; installed, a program of the user's builds
    against it with pkg-config and runs (no board here: the clear error of a missing device); the SoC's
    registers by name are compiled in."""
    assert sorted(os.path.basename(p) for p in result.libraries) == \
        ["hostlink.pc", "libhostlink.a", "libhostlink.so.0.2.0"]
    soname = subprocess.run(["readelf", "-d", os.path.join(library_dir, "libhostlink.so.0.2.0")],
                            capture_output=True, text=True, check=True).stdout
    assert "Library soname: [libhostlink.so.0]" in soname
    exported = subprocess.run(["nm", "-D", "--defined-only", os.path.join(library_dir, "libhostlink.so.0.2.0")],
                              capture_output=True, text=True, check=True).stdout
    assert all(f" hostlink_{name}\n" in exported for name in
               ["open", "close", "transfer", "read_buffer", "read_packet", "write_packet", "register_read", "cycles",
                "stats", "error"])
    registers = open(os.path.join(library_dir, "hostlink_registers.h")).read()
    assert '"pcie_dma0_writer_flow_given"' in registers and '"ctrl_scratch", 0x4, 1' in registers
    with tempfile.TemporaryDirectory() as prefix:
        subprocess.run(["make", "-C", library_dir, "install", f"PREFIX={prefix}"], capture_output=True, check=True)
        program = os.path.join(prefix, "program.c")
        with open(program, "w") as f:
            f.write('#include <stdio.h>\n#include <hostlink.h>\nint main(void) {\n'
                    '\tstruct hostlink_channel *ch;\n'
                    '\tint ret = hostlink_open(&ch, 7, HOSTLINK_FLOW_LOSSLESS, HOSTLINK_C2H, 100);\n'
                    '\tprintf("%d %s\\n", ret, hostlink_open_error());\n\treturn ret == 0;\n}\n')
        env = dict(os.environ, PKG_CONFIG_PATH=os.path.join(prefix, "lib", "pkgconfig"))
        flags = subprocess.run(["pkg-config", "--cflags", "--libs", "hostlink"], capture_output=True, text=True,
                               env=env, check=True).stdout.split()
        subprocess.run(["gcc", "-Wall", "-Werror", "-o", os.path.join(prefix, "program"), program, *flags],
                       capture_output=True, text=True, check=True)
        run = subprocess.run([os.path.join(prefix, "program")], capture_output=True, text=True,
                             env=dict(env, LD_LIBRARY_PATH=os.path.join(prefix, "lib")))
        assert run.returncode == 0
        assert run.stdout.startswith("-19 /dev/litepcie7 does not exist: is the board there and litepcie.ko "
                                     "loaded?"), run.stdout
    # The examples say what is wrong in one line.
    run = subprocess.run([os.path.join(library_dir, "accelerator_host"), "--bad"], capture_output=True, text=True)
    assert run.returncode == 2 and run.stderr.startswith("usage: accelerator_host")
    check_library_portability(library_dir)


def check_library_portability(library_dir):
    """Issue 49: the library builds with the user's CFLAGS and LDFLAGS (its own flags kept: `make CFLAGS=-O3`
    used to drop -fPIC and the include paths) and needs nothing newer than glibc 2.28 (Debian 10, Ubuntu
    20.04, RHEL 8): no strerrorname_np (2.32), no fstat (2.33)."""
    with tempfile.TemporaryDirectory() as copy:
        shutil.copytree(library_dir, os.path.join(copy, "user", "libhostlink"))
        shutil.copytree(os.path.join(library_dir, "..", "..", "kernel"), os.path.join(copy, "kernel"),
                        ignore=shutil.ignore_patterns("*.o", "*.ko", "*.mod*", ".*"))
        build = os.path.join(copy, "user", "libhostlink")
        subprocess.run(["make", "-C", build, "clean"], capture_output=True, check=True)
        made = subprocess.run(["make", "-C", build, "CFLAGS=-O1", "LDFLAGS=-Wl,-z,now"], capture_output=True,
                              text=True, check=True).stdout
        assert re.search(r"gcc -c .*-fPIC .*-O1 -o hostlink.o hostlink.c", made), made
        library = os.path.join(build, "libhostlink.so.0.2.0")
        dynamic = subprocess.run(["readelf", "-d", library], capture_output=True, text=True, check=True).stdout
        assert "BIND_NOW" in dynamic or "Flags: NOW" in dynamic, dynamic
        symbols = subprocess.run(["objdump", "-T", library], capture_output=True, text=True, check=True).stdout
        versions = {tuple(int(n) for n in v.split(".")) for v in re.findall(r"GLIBC_(\d+(?:\.\d+)+)", symbols)}
        assert versions and max(versions) <= (2, 28), sorted(versions)


@pytest.mark.slow
@needs_headers
def test_build_errors_carry_the_compiler_output(generated, tmp_path):
    _, _, driver_dir = generated
    broken = str(tmp_path / "driver")
    shutil.copytree(driver_dir, broken, ignore=shutil.ignore_patterns("*.o", "*.ko", "*.mod*", ".*.cmd"))
    with open(os.path.join(broken, "kernel", "main.c"), "a") as f:
        f.write("\nstatic int hostlink_deliberate_error = undeclared_symbol;\n")
    with pytest.raises(DriverBuildError) as error:
        build_driver(broken)
    message = str(error.value)
    assert "kernel module failed" in message
    assert "undeclared_symbol" in message and "error" in message

def test_build_refuses_an_empty_directory(tmp_path):
    with pytest.raises(DriverBuildError, match="has no Makefile: generate the driver first"):
        build_driver(str(tmp_path))

def test_build_refuses_a_bad_kernel_tree(generated, tmp_path):
    _, _, driver_dir = generated
    with pytest.raises(DriverBuildError, match="is not a configured kernel build tree"):
        build_driver(driver_dir, kernel_build_dir=str(tmp_path))

# Zero-copy mmap -----------------------------------------------------------------------------------

def test_zero_copy_mmap_maps_each_page_by_its_own_frame(generated):
    """The generated mmap handler maps every page of a buffer by the frame of its kernel address
    (vmalloc_to_pfn in the vmalloc area, where an IOMMU's coherent buffers live): no frame from __pa() is left;
    the ARM branch and LitePCIe's length and offset checks are kept; the test-only aliases are not there."""
    _, _, driver_dir = generated
    main_c = check_patched(os.path.join(driver_dir, "kernel"), driver_mmap.MMAP_PATCHES)
    assert "= __pa(" not in main_c
    mmap = main_c[main_c.index("static int litepcie_mmap("):main_c.index("static unsigned int litepcie_poll(")]
    assert mmap.count("remap_pfn_range(") == 2   # ARM: a buffer at a time; the others: a page at a time.
    assert "if (is_vmalloc_addr(va))\n\t\treturn vmalloc_to_pfn(va);" in main_c
    for _, what, text in driver_hardening.REQUIRED + driver_mmap.REQUIRED:
        assert text in mmap, what
    assert "hostlink_test_remap_buffer" not in main_c

@pytest.mark.parametrize("index", range(len(driver_mmap.MMAP_PATCHES)))
def test_mmap_fix_refuses_when_an_anchor_is_missing(tmp_path, index):
    check_missing_anchor_is_refused(tmp_path, driver_mmap.MMAP_PATCHES[index], driver_mmap.fix_mmap, "zero-copy mmap")

def test_remapped_buffers_for_tests_apply_to_the_generated_driver(generated, tmp_path):
    """The test-only change (sim/uml/run.py, the VC709's simulated driver) places both its parts: each buffer
    used through a vmap() alias, unmapped by devres before the buffer is freed."""
    _, _, driver_dir = generated
    kernel = str(tmp_path / "kernel")
    shutil.copytree(os.path.join(driver_dir, "kernel"), kernel)
    driver_mmap.use_remapped_buffers(kernel)
    main_c = read(os.path.join(kernel, "main.c"))
    assert "dmachan->reader_addr[j] = hostlink_test_remap_buffer(s, dmachan->reader_addr[j]);" in main_c
    assert "devm_add_action_or_reset(&s->dev->dev, hostlink_test_unmap_buffer, alias)" in main_c

# Kernels ------------------------------------------------------------------------------------------

@pytest.mark.parametrize("index", range(len(driver_kernels.PATCHES)))
def test_kernel_port_refuses_when_an_anchor_is_missing(tmp_path, index):
    """A LitePCIe whose liteuart.c lost the code a compatibility change is anchored on stops generation,
    names the change, and leaves the source untouched."""
    check_missing_anchor_is_refused(tmp_path, driver_kernels.PATCHES[index], driver_kernels.port_driver,
                                    "kernel compatibility change")

def preprocess_versions(text, version):
    """`text` as the C preprocessor leaves it for kernel `version` (major, minor), for the conditions the
    port adds only (LINUX_VERSION_CODE against 6.10 and 6.11); every other line kept as is."""
    out, stack = [], []   # stack: per open #if, whether it is ours and whether its branch is kept.
    for line in text.splitlines(keepends=True):
        m = re.fullmatch(r"#if LINUX_VERSION_CODE (>=|<) KERNEL_VERSION\(6, (10|11), 0\)\n", line)
        if m:
            holds = version >= (6, int(m.group(2)))
            stack.append((True, holds if m.group(1) == ">=" else not holds))
            continue
        if line.startswith("#if"):
            stack.append((False, True))
        elif line == "#else\n" and stack[-1][0]:
            stack[-1] = (True, not stack[-1][1])
            continue
        elif line == "#endif\n" and stack.pop()[0]:
            continue
        if all(kept for ours, kept in stack if ours):
            out.append(line)
    return "".join(out)

def test_kernel_port_keeps_litepcies_code_for_older_kernels(tmp_path):
    """The changes only add LINUX_VERSION_CODE branches: what Linux 6.1 compiles is LitePCIe's own code, what
    6.12 compiles no longer touches the old transmit buffer."""
    kernel = _litepcie_kernel_copy(tmp_path)
    original = read(os.path.join(kernel, "liteuart.c"))
    driver_kernels.port_driver(kernel)
    ported = read(os.path.join(kernel, "liteuart.c"))
    assert preprocess_versions(ported, (6, 1)) == original
    new = preprocess_versions(ported, (6, 12))
    assert "state->xmit;" not in new and "uart_fifo_get(port, &ch)" in new
    assert "static void liteuart_remove(" in new and "static int liteuart_remove(" not in new

def kernel_release(kernel_build_dir):
    return os.path.basename(kernel_build_dir).replace("linux-headers-", "")

def debian_codename():
    try:
        with open("/etc/os-release") as f:
            return dict(re.findall(r"^(\w+)=\"?([^\"\n]*)", f.read(), re.MULTILINE)).get("VERSION_CODENAME")
    except OSError:
        return None

@pytest.mark.skipif(debian_codename() != "bookworm", reason="the Makefile installs both kernels' headers on Debian 12")
def test_headers_of_debian_12_and_its_backports_kernel_are_installed():
    releases = [kernel_release(path) for path in KERNEL_BUILD_DIRS]
    assert any(re.match(r"6\.1\.\d", r) for r in releases), f"no Linux 6.1 headers among {releases}: make install"
    assert any(re.match(r"6\.12\.\d", r) for r in releases), \
        f"no Linux 6.12 headers (bookworm-backports) among {releases}: make install"

@pytest.mark.slow
@pytest.mark.parametrize("kernel_build_dir", KERNEL_BUILD_DIRS, ids=kernel_release)
def test_kernel_module_builds_against_each_installed_kernel(generated, kernel_build_dir, tmp_path, record_property):
    """Each board's generated module compiles against every kernel whose headers are installed (Debian 12's
    6.1 and bookworm-backports' 6.12 after `make install`), for that kernel; the warnings are counted and shown
    at the end of the run."""
    board, _, driver_dir = generated
    copy = str(tmp_path / "driver")
    shutil.copytree(driver_dir, copy, ignore=shutil.ignore_patterns("*.o", "*.ko", "*.mod*", ".*.cmd", "Module.symvers",
        "modules.order"))
    result = build_driver(copy, kernel_build_dir=kernel_build_dir)
    release = kernel_release(kernel_build_dir)
    record_property("kernel_module_warnings", (f"{board} on {release}", list(result.warnings)))
    show_warnings(result)
    modinfo = shutil.which("modinfo") or "/usr/sbin/modinfo"
    if os.path.exists(modinfo):
        info = subprocess.run([modinfo, os.path.join(copy, "kernel", "litepcie.ko")],
            stdout=subprocess.PIPE, text=True, check=True).stdout
        assert re.search(rf"^vermagic:\s+{re.escape(release)}\b", info, re.MULTILINE), info

# Command line -------------------------------------------------------------------------------------

@pytest.mark.slow
@needs_headers
@pytest.mark.parametrize("board", BOARDS)
def test_cli_driver_flag_then_build(board, tmp_path):
    target = run_target(board, *registry.BOARDS[board].pcie.cli_flags, "--driver", "--dma-channels", "4",
        "--output-dir", str(tmp_path))
    assert target.returncode == 0, target.stderr
    driver_dir = os.path.join(str(tmp_path), "driver")
    assert defines(os.path.join(driver_dir, "kernel", "soc.h"))["DMA_CHANNELS"] == "4"

    build = subprocess.run([sys.executable, "-m", "hostlink.software.driver", "build", driver_dir],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=300)
    assert build.returncode == 0, build.stderr
    for line in build.stderr.splitlines():
        warnings.warn(f"driver build warning: {line}", UserWarning)
    assert f"Built {os.path.join(driver_dir, 'kernel', 'litepcie.ko')}" in build.stdout
    assert os.access(os.path.join(driver_dir, "user", "litepcie_util"), os.X_OK)

def test_cli_build_error_exit_code(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "hostlink.software.driver", "build", str(tmp_path)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert proc.returncode == 1
    assert proc.stderr.startswith("error: ") and "has no Makefile" in proc.stderr


# Fault counters tool ------------------------------------------------------------------------------

def test_status_tool_shows_every_fault_counter_of_this_soc(generated):
    """hostlink_status builds against the SoC's csr.h (no kernel headers needed) and knows every register
    of its pcie_faults block; without a device it says which one it could not open."""
    board, soc, driver_dir = generated
    status = os.path.join(driver_dir, "status")
    subprocess.run(["make", "-C", status], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, check=True)
    tool = os.path.join(status, "hostlink_status")
    listed = subprocess.run([tool, "-l"], stdout=subprocess.PIPE, text=True, check=True).stdout.split("\n")
    names = [line.split()[0] for line in listed if line.strip()]
    registers = sorted(name[len("CSR_PCIE_FAULTS_"):-len("_ADDR")].lower()
        for name in defines(os.path.join(driver_dir, "kernel", "csr.h"))
        if name.startswith("CSR_PCIE_FAULTS_") and name.endswith("_ADDR"))
    assert sorted(names) == registers
    assert f"reader{soc.constants['DMA_CHANNELS'] - 1}_errors" in names
    # The tool counts the readers' registers from reader0_errors to reader_errored, 32 bits each.
    csr = defines(os.path.join(driver_dir, "kernel", "csr.h"))
    offset = lambda name: int(re.search(r"0x([0-9a-f]+)", csr[f"CSR_PCIE_FAULTS_{name}_ADDR"]).group(1), 16)
    channels = soc.constants["DMA_CHANNELS"]
    assert [offset(f"READER{i}_ERRORS") for i in range(channels)] + [offset("READER_ERRORED")] == \
        [offset("READER0_ERRORS") + 4 * i for i in range(channels + 1)]
    missing = subprocess.run([tool, "-c", "/dev/litepcie-missing"], stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True)
    assert missing.returncode == 1
    assert "cannot open /dev/litepcie-missing" in missing.stderr
    bad = subprocess.run([tool, "extra"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert bad.returncode == 2 and "unexpected argument 'extra'" in bad.stderr


# Change-set files ---------------------------------------------------------------------------------

def test_change_set_files_read_back_as_written(tmp_path):
    from hostlink.software.driver.patches import load_patches
    path = tmp_path / "example.patch"
    path.write_text("# A comment, then a required text and two changes.\n"
                    "@@ required main.c: the ioctl switch\n\tswitch (cmd) {\n"
                    "@@ change main.c: a define\n#include <a.h>\n@@ becomes\n#include <a.h>\n#define B 1\n"
                    "@@ change init.sh: no final newline\nchmod 666\n@@ no newline at end\n@@ becomes\n"
                    "chmod 660\n@@ no newline at end\n")
    patches, required = load_patches(str(path))
    assert required == [("main.c", "the ioctl switch", "\tswitch (cmd) {\n")]
    assert patches == [("main.c", "a define", "#include <a.h>\n", "#include <a.h>\n#define B 1\n"),
                       ("init.sh", "no final newline", "chmod 666", "chmod 660")]


@pytest.mark.parametrize("text, message", [
    ("@@ change main.c a define\nx\n@@ becomes\ny\n", r"example.patch:1: expected '@@ change <file>: <what>'"),
    ("@@ change main.c: a define\nx\n",              r"change 'a define' has no '@@ becomes'"),
    ("stray text\n",                                   r"example.patch:1: unexpected line 'stray text'"),
    ("@@ change main.c: a\nx\n@@ becomse\ny\n",        r"example.patch:3: unexpected line '@@ becomse'"),
])
def test_a_malformed_change_set_file_is_refused_naming_the_line(tmp_path, text, message):
    from hostlink.software.driver.patches import load_patches
    path = tmp_path / "example.patch"
    path.write_text(text)
    with pytest.raises(DriverPatchError, match=message):
        load_patches(str(path))
