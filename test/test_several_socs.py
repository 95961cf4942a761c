# This file is part of hostlink.
# Copyright (c) 2026 hostlink developers
# SPDX-License-Identifier: BSD-2-Clause

"""Several SoCs in one host (doc/driver.md, "Several SoCs in one host"): each SoC's driver generated with a
name of its own (module, PCI driver, class, device nodes), the tools and libhostlink built with it opening its
nodes and refusing a board of another SoC, hostlink.host listing every hostlink driver's boards; then a ZC706
and a VC709 on one simulated machine, each with its driver, streaming at once."""

import errno
import json
import os
import re
import shutil
import subprocess

import pytest

from hostlink import host
from hostlink.software.driver import build_driver, driver_name, find_kernel_build_dir, generate_driver
from hostlink.software.driver import naming
from hostlink.software.driver.naming import DRIVER_NAME_MAX, check_driver_name
from hostlink.software.driver.patches import read_defines
from hostlink.targets import boards as registry

from helpers import check_missing_anchor_is_refused, read, refusal, run_target, target_refusal

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
NAME = "zc706_litepcie"

needs_headers = pytest.mark.skipif(find_kernel_build_dir() is None, reason="no kernel headers installed")


@pytest.fixture(scope="module")
def named(tmp_path_factory):
    """The ZC706 SoC's driver generated with the name zc706_litepcie."""
    driver_dir = str(tmp_path_factory.mktemp("named_driver"))
    generate_driver(registry.BOARDS["zc706"].pcie_soc(), driver_dir, name=NAME)
    return driver_dir

# Names --------------------------------------------------------------------------------------------

@pytest.mark.parametrize("name, message", [
    ("zc706-pcie",         "a driver name is a C identifier (letters, digits, '_'; not a digit first), not 'zc706-pcie'"),
    ("7series",            "a driver name is a C identifier (letters, digits, '_'; not a digit first), not '7series'"),
    ("",                   "a driver name is a C identifier (letters, digits, '_'; not a digit first), not ''"),
    (None,                 "a driver name is a C identifier (letters, digits, '_'; not a digit first), not None"),
    ("hostlink_zc706",     "a driver name cannot end with a digit: its device nodes are NAME0, NAME1, ... "
                           "('hostlink_zc706' would give /dev/hostlink_zc7060)"),
    ("x" * (DRIVER_NAME_MAX + 1), f"a driver name has at most {DRIVER_NAME_MAX} characters, not {DRIVER_NAME_MAX + 1}"),
    ("liteuart",           "a driver name cannot be 'liteuart': LitePCIe's UART module has it"),
])
def test_a_bad_driver_name_is_refused_with_one_line(name, message, tmp_path):
    with pytest.raises(ValueError) as error:
        check_driver_name(name)
    assert str(error.value).startswith(message) and "\n" not in str(error.value)
    # Before anything is written.
    with pytest.raises(ValueError, match=re.escape(message)):
        generate_driver(registry.BOARDS["zc706"].pcie_soc(), str(tmp_path / "driver"), name=name)
    assert not os.path.exists(tmp_path / "driver")


def test_the_targets_refuse_a_bad_driver_name_with_one_line():
    assert target_refusal("zc706", "--driver-name", "zc706-pcie") == (
        "zc706.py: error: argument --driver-name: a driver name is a C identifier (letters, digits, '_'; not a "
        "digit first), not 'zc706-pcie'")


@pytest.mark.parametrize("board", ["vc709", "kc705"])
def test_a_target_generates_a_named_driver(board, tmp_path):
    target = run_target(board, *registry.BOARDS[board].pcie.cli_flags, "--driver-name", f"{board}_litepcie",
                        "--output-dir", str(tmp_path))
    assert target.returncode == 0, target.stderr[-2000:]
    driver_dir = os.path.join(str(tmp_path), "driver")
    assert f"Driver {board}_litepcie and user tools for this SoC generated in {driver_dir}" in target.stdout
    assert driver_name(driver_dir) == f"{board}_litepcie"
    assert f"obj-m = {board}_litepcie.o" in read(os.path.join(driver_dir, "kernel", "Makefile"))


def test_a_named_driver_takes_every_name_from_its_own(named):
    """Module, PCI driver, class, character device region, interrupt and nodes: HOSTLINK_DRIVER_NAME; the
    module's file, init.sh, the udev rule and LitePCIe's tools follow; nothing says litepcie where a name is."""
    kernel, user = os.path.join(named, "kernel"), os.path.join(named, "user")
    assert driver_name(named) == NAME
    assert read_defines(os.path.join(kernel, "config.h"))["HOSTLINK_DRIVER_NAME"] == f'"{NAME}"'
    main_c = read(os.path.join(kernel, "main.c"))
    assert "#define LITEPCIE_NAME HOSTLINK_DRIVER_NAME\n" in main_c
    for use in [".name = LITEPCIE_NAME", "class_create(LITEPCIE_NAME)", "LITEPCIE_MINOR_COUNT, LITEPCIE_NAME)",
                'NULL, LITEPCIE_NAME "%d", index)', '"Creating /dev/" LITEPCIE_NAME "%d\\n"',
                "module_param_string(soc_identifier, ", 'platform_device_register_simple("liteuart", PLATFORM_DEVID_AUTO, tty_res, 1)']:
        assert use in main_c, use
    # No name, node or log prefix of LitePCIe's left (its header keeps its name).
    assert re.findall(r'"litepcie[^"]*"', main_c) == ['"litepcie.h"']
    makefile = read(os.path.join(kernel, "Makefile"))
    assert f"obj-m = {NAME}.o liteuart.o" in makefile and f"{NAME}-objs = main.o" in makefile
    assert not re.search(r"\blitepcie\.(o|ko)\b", makefile), makefile
    init = read(os.path.join(kernel, "init.sh"))
    assert f"insmod {NAME}.ko" in init and not re.search(r"\blitepcie\.ko|/dev/litepcie", init), init
    assert read(os.path.join(kernel, f"99-hostlink-{NAME}.rules")).splitlines()[-1] == \
        f'KERNEL=="{NAME}[0-9]*", GROUP="hostlink", MODE="0660"'
    assert not os.path.exists(os.path.join(kernel, "99-hostlink-litepcie.rules"))
    for tool in ["litepcie_util.c", "litepcie_test.c"]:
        assert '"/dev/" HOSTLINK_DRIVER_NAME "%d"' in read(os.path.join(user, tool)) and \
            "/dev/litepcie" not in read(os.path.join(user, tool)), tool
    for path in ["user/hostlink_bench.c", "user/libhostlink/hostlink.c", "status/hostlink_status.c",
                 "dram/hostlink_dram_main.c"]:
        assert '"/dev/litepcie' not in read(os.path.join(named, path)), path


@pytest.mark.parametrize("index", range(len(naming.PATCHES)))
def test_naming_refuses_when_an_anchor_is_missing(tmp_path, index):
    check_missing_anchor_is_refused(tmp_path, naming.PATCHES[index], naming.use_driver_name, "naming change")


@needs_headers
def test_a_named_driver_builds_its_own_module(named):
    """NAME.ko, named NAME inside (a second driver of another name loads beside it) and showing its SoC, the
    mark of a hostlink driver; the tools open /dev/NAMEn."""
    result = build_driver(named)
    module = os.path.join(named, "kernel", f"{NAME}.ko")
    assert result.kernel_modules == [module, os.path.join(named, "kernel", "liteuart.ko")]
    info = subprocess.run(["modinfo", module], capture_output=True, text=True, check=True).stdout
    assert re.search(rf"^name:\s+{NAME}$", info, re.M), info
    assert re.search(r"^parm:\s+soc_identifier:", info, re.M), info
    for tool in ["user/litepcie_util", "user/litepcie_test", "user/hostlink_bench", "user/libhostlink/accelerator_host",
                 "status/hostlink_status", "dram/hostlink_dram"]:
        strings = subprocess.run(["strings", os.path.join(named, tool)], capture_output=True, text=True).stdout
        assert f"/dev/{NAME}" in strings and "/dev/litepcie" not in strings, tool

# libhostlink alone --------------------------------------------------------------------------------

# An ioctl() that answers the register reads of LiteX's identifier memory with $SOC_IDENTIFIER and nothing
# else (ENOTTY): libhostlink opens a plain file as its device node and meets the board's SoC first.
FAKE_DRIVER = r"""
#define _GNU_SOURCE
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include "litepcie.h"

int ioctl(int fd, unsigned long request, ...)
{
	va_list ap;
	struct litepcie_ioctl_reg *m;
	const char *id = getenv("SOC_IDENTIFIER");
	size_t i;

	va_start(ap, request);
	m = va_arg(ap, struct litepcie_ioctl_reg *);
	va_end(ap);
	(void)fd;
	if (request != LITEPCIE_IOCTL_REG || m->is_write || m->addr < CSR_IDENTIFIER_MEM_BASE) {
		errno = ENOTTY;
		return -1;
	}
	i = (m->addr - CSR_IDENTIFIER_MEM_BASE) / 4;
	m->val = i < strlen(id) ? (unsigned char)id[i] : 0;
	return 0;
}
"""

OPEN = r"""
#include <stdio.h>
#include "hostlink.h"

int main(int argc, char **argv)
{
	struct hostlink_channel *ch;
	int ret = hostlink_open_path(&ch, argv[1], HOSTLINK_FLOW_LOOP, HOSTLINK_H2C | HOSTLINK_C2H, 1000);
	printf("%d %s\n", ret, ret < 0 ? hostlink_open_error() : "opened");
	return 0;
}
"""


@pytest.fixture(scope="module")
def opener(named, tmp_path_factory):
    """A program that opens a node with the named driver's libhostlink, under FAKE_DRIVER; returns
    run(identifier) -> (the return value, the error line)."""
    work = tmp_path_factory.mktemp("libhostlink_alone")
    library, kernel = os.path.join(named, "user", "libhostlink"), os.path.join(named, "kernel")
    subprocess.run(["make", "-C", library, "libhostlink.a"], check=True, capture_output=True)
    (work / "fake.c").write_text(FAKE_DRIVER)
    (work / "open.c").write_text(OPEN)
    subprocess.run(["gcc", "-shared", "-fPIC", "-Wall", "-Werror", f"-I{kernel}", "-o", str(work / "fake.so"),
                    str(work / "fake.c")], check=True, capture_output=True)
    subprocess.run(["gcc", "-Wall", "-Werror", f"-I{library}", "-o", str(work / "open"), str(work / "open.c"),
                    os.path.join(library, "libhostlink.a"), "-lpthread"], check=True, capture_output=True)
    node = work / f"{NAME}0"
    node.write_bytes(b"")

    def run(identifier):
        env = dict(os.environ, LD_PRELOAD=str(work / "fake.so"), SOC_IDENTIFIER=identifier)
        out = subprocess.run([str(work / "open"), str(node)], env=env, capture_output=True, text=True,
                             check=True).stdout
        ret, line = out.rstrip("\n").split(" ", 1)
        assert "\n" not in line
        return int(ret), line
    run.node = str(node)
    return run


def test_libhostlink_refuses_a_board_of_another_soc_with_one_line(named, opener):
    ours = read_defines(os.path.join(named, "kernel", "config.h"))["HOSTLINK_SOC_IDENTIFIER"].strip('"')
    other = "hostlink VC709 PCIe Gen3 x8 DMA SoC"
    for theirs in [other, f"{other} 2026-12-06 16:00:00", f"{ours}x", ours[:-1]]:
        ret, line = opener(theirs)
        shown = theirs.split(" 2026")[0]
        assert ret == -errno.ENODEV and line == (
            f'{opener.node} is a board of SoC "{shown}"; this libhostlink is built for "{ours}": use the libhostlink '
            f"built with its SoC's driver (<driver>/user/libhostlink) (ENODEV)"), (theirs, ret, line)
    # Its own SoC, with LiteX's build time or without: past the check, to the driver's next call.
    for theirs in [ours, f"{ours} 2026-12-06 16:00:00"]:
        ret, line = opener(theirs)
        assert ret == -errno.ENOTTY and "cannot read the ring's geometry" in line, (theirs, ret, line)

# hostlink.host ------------------------------------------------------------------------------------

def test_every_hostlink_drivers_boards_are_listed(monkeypatch, tmp_path):
    """list_drivers() finds the hostlink drivers by their soc_identifier parameter; list_devices() and
    list_boards() cover each one's nodes (and LitePCIe's own), driver_of() says whose a node is."""
    sys_modules, devices = tmp_path / "module", tmp_path / "dev"
    for name, soc in [("zc706_litepcie", "hostlink ZC706 PCIe Gen2 x4 DMA SoC"),
                      ("vc709_litepcie", "hostlink VC709 PCIe Gen3 x8 DMA SoC")]:
        (sys_modules / name / "parameters").mkdir(parents=True)
        (sys_modules / name / "parameters" / "soc_identifier").write_text(soc + "\n")
    (sys_modules / "snd" / "parameters").mkdir(parents=True)   # Another module: not a hostlink driver.
    devices.mkdir()
    for node in ["litepcie0", "zc706_litepcie10", "zc706_litepcie2", "vc709_litepcie0", "snd0", "zc706_litepcie_x0"]:
        (devices / node).write_text("")
    monkeypatch.setattr(host, "SYS_MODULES", str(sys_modules))
    monkeypatch.setattr(host, "DEVICES", str(devices))
    assert host.list_drivers() == {"vc709_litepcie": "hostlink VC709 PCIe Gen3 x8 DMA SoC",
                                   "zc706_litepcie": "hostlink ZC706 PCIe Gen2 x4 DMA SoC"}
    nodes = [str(devices / n) for n in ["litepcie0", "vc709_litepcie0", "zc706_litepcie2", "zc706_litepcie10"]]
    assert host.list_devices() == nodes
    # Plain files name no board: every node under None, or only the driver's.
    assert host.list_boards() == {None: nodes}
    assert host.list_boards("zc706_litepcie") == {None: nodes[2:]}
    assert host.driver_of(nodes[1]) == ("vc709_litepcie", "hostlink VC709 PCIe Gen3 x8 DMA SoC")
    assert host.driver_of(nodes[0]) == ("litepcie", None)   # LitePCIe's own says no SoC.


def test_a_missing_node_names_its_drivers_module(monkeypatch, tmp_path):
    monkeypatch.setattr(host, "SYS_MODULES", str(tmp_path))
    monkeypatch.setattr(host, "DEVICES", str(tmp_path))
    with pytest.raises(host.HostlinkError) as error:
        host.Channel(str(tmp_path / "zc706_litepcie3"))
    assert error.value.errno == errno.ENODEV
    assert error.value.strerror == (f"{tmp_path}/zc706_litepcie3 does not exist: is the board there and "
                                f"zc706_litepcie.ko loaded? (devices: none) (ENODEV)")


def _fake_board(soc):
    """A Channel (not opened) whose register ioctl answers LiteX's identifier memory with `soc`."""
    channel = host.Channel.__new__(host.Channel)
    channel.path, channel.fd = "/dev/vc709_litepcie0", None

    def ioctl(name, values, what, messages=None):
        assert name == "REG" and values[2] == 0, (name, values)      # Reads only.
        i = (values[0] - 0x1000) // 4
        return values[0], ord(soc[i]) if i < len(soc) else 0, 0
    channel._ioctl = ioctl
    return channel


def test_a_register_map_of_another_soc_is_refused(named, tmp_path):
    """hostlink.host, as libhostlink: Channel(registers=...) reads the board's SoC identifier and refuses a map
    of another SoC (its registers' names would reach other registers), from a csr.json or a driver's csr.h
    (its soc.h beside it); LiteX's build time on either side is left out."""
    zc706, vc709 = "hostlink ZC706 PCIe Gen2 x4 DMA SoC", "hostlink VC709 PCIe Gen3 x8 DMA SoC"
    csr_json = tmp_path / "csr.json"
    csr_json.write_text(json.dumps({"csr_bases": {"identifier_mem": 0x1000}, "csr_registers": {},
                                    "constants": {"config_identifier": zc706.lower() + " 2026-12-06 16:00:00"}}))
    csr_h = os.path.join(named, "kernel", "csr.h")
    assert host._map_identity(csr_h) == (zc706, 0x1000)
    for registers in [str(csr_json), csr_h]:
        with pytest.raises(host.HostlinkError) as error:
            _fake_board(vc709 + " 2026-12-06 17:00:00")._check_soc(registers)
        assert error.value.errno == errno.ENODEV
        assert str(error.value.strerror).startswith(f'/dev/vc709_litepcie0 is a board of SoC "{vc709}"; the register '
                                                    f'map {registers} is SoC "'), error.value.strerror
        _fake_board(zc706)._check_soc(registers)                         # Its own SoC: no complaint.
        _fake_board(zc706 + " 2026-12-06 17:00:00")._check_soc(registers)

# ./sim.py driver ----------------------------------------------------------------------------------

@pytest.mark.parametrize("argv, message", [
    (["--board", "zc706,vc709", "--boards", "2", "--", "true"], "--boards N copies one SoC; --board zc706,vc709 puts "
                                                                "one board of each SoC"),
    (["--board", "zc706,zc706", "--", "true"],                  "--board names each SoC once (--boards N copies one), "
                                                                "not 'zc706,zc706'"),
    (["--board", "zc706,vc709"],                                "--board zc706,vc709: give the commands to run "
                                                                "(-- CMD ...); LitePCIe's default tests are one SoC's"),
    (["--board", "zc706,nope", "--", "true"],                   "nope"),
])
def test_sim_driver_refuses_bad_several_socs_with_one_line(argv, message, capsys):
    from hostlink.sim.driver import main as driver_main
    err = refusal(driver_main, argv, capsys).strip().splitlines()
    assert message in err[-1], err

# In User-Mode Linux -------------------------------------------------------------------------------

UML_KERNEL = os.path.join(REPO, "build", "uml", "linux")
EXAMPLE    = os.path.join(REPO, "examples", "several_socs_host.py")
HOST_PY    = os.path.join(REPO, "hostlink", "host.py")
SOCS       = {"zc706": "hostlink ZC706 PCIe Gen2 x4 DMA SoC", "vc709": "hostlink VC709 PCIe Gen3 x8 DMA SoC"}


@pytest.mark.uml
@pytest.mark.skipif(not os.path.isfile(UML_KERNEL), reason="no User-Mode Linux kernel: `make uml-kernel`")
def test_a_zc706_and_a_vc709_in_one_machine_stream_at_once(tmp_path):
    """A ZC706 and a VC709 on one machine's PCI bus, each served by its own SoC's driver (zc706_litepcie.ko,
    vc709_litepcie.ko, both loaded): both listed with their SoCs; the example streams through both at once
    (Python, every byte checked), then each SoC's hostlink_bench (C, liblitepcie) at once; the ZC706's
    libhostlink refuses the VC709's board, reached by a node named as its own."""
    from hostlink.sim.driver import main as driver_main
    path = tmp_path / "two.json"
    benches = " & ".join(f"( ${board.upper()}_BENCH -m copy -s 64K -t 4 > {board}.out 2>&1; echo \"{board} bench: exit "
                         f"$?\" >> {board}.out )" for board in SOCS)
    benches = benches.replace("$ZC706_BENCH", "$HOSTLINK_ZC706_DRIVER/user/hostlink_bench") \
                     .replace("$VC709_BENCH", "$HOSTLINK_VC709_DRIVER/user/hostlink_bench")
    code = driver_main(["--board", ",".join(SOCS), "--json", str(path), "--command-timeout", "900", "--timeout", "2400",
                        "--", "sh", "-c",
                        f"python3 {HOST_PY}; python3 {EXAMPLE} --size 256K; {benches} & wait; cat zc706.out vc709.out; "
                        "mknod /dev/zc706_litepcie9 c $(tr : ' ' < /sys/class/vc709_litepcie/vc709_litepcie0/dev) && "
                        "$HOSTLINK_ZC706_DRIVER/user/libhostlink/accelerator_host --size 65536 --channel 9; "
                        "echo refused: exit $?"])
    with open(path) as f:
        result = json.load(f)
    output = next(s for s in result["steps"] if s["name"] == "cmd0")["output"]
    # Both drivers loaded, their nodes apart; each names its SoC.
    steps = {s["name"]: s for s in result["steps"]}
    assert steps["insmod_zc706"]["exit_status"] == 0 and steps["insmod_vc709"]["exit_status"] == 0, steps
    boards = re.findall(r"^board (\S+): (.*)$", output, re.M)
    assert [nodes for _, nodes in boards] == ["/dev/vc709_litepcie0 /dev/vc709_litepcie1",
                                              "/dev/zc706_litepcie0 /dev/zc706_litepcie1"], output
    for board, soc in SOCS.items():
        assert re.search(rf'^driver {board}_litepcie: SoC "{soc}", boards [0-9a-f:.]+$', output, re.M | re.I), output
        assert re.search(rf"^262144 bytes through /dev/{board}_litepcie0 \(driver {board}_litepcie, SoC \"{soc}\"\) "
                         r"and back in [0-9.]+ s, [1-9]\d* device cycles: 0 bytes wrong$", output, re.M | re.I), output
        assert f"{board} bench: exit 0" in output, output
    assert "2 boards of 2 SoCs at once: all right" in output, output
    # The ZC706's library on the VC709's board: refused, one line.
    assert re.search(r'^accelerator_host: /dev/zc706_litepcie9 is a board of SoC "hostlink VC709 PCIe Gen3 x8 DMA SoC'
                     r'[^"]*"; this libhostlink is built for "hostlink ZC706 PCIe Gen2 x4 DMA SoC": use the libhostlink '
                     r"built with its SoC's driver \(<driver>/user/libhostlink\) \(ENODEV\)$", output, re.M | re.I), output
    assert "refused: exit 1" in output, output
    assert not result["kernel_warnings"], result["kernel_warnings"]
    assert len(result["boards"]) == 2
    for each in result["boards"]:
        assert each["host_reads"]["served"] > 0 and each["dma_bytes_written"] >= 262144, each
        assert not each["mmio_read_errors"], each
    assert code == 0 and result["passed"]
