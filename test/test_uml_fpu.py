# This file is part of hostlink.
# Copyright (c) 2026 hostlink developers
# SPDX-License-Identifier: BSD-2-Clause

"""The User-Mode Linux kernel of ./sim.py driver runs whatever the size of the host's XSAVE area.

Linux 6.1's UML, and Debian's 6.12, save each process's extended FPU state in a fixed 2,696-byte
buffer; the host's PTRACE_SETREGSET takes only the whole area, so on an AMX host (11,008 bytes) the first
process died and every driver test failed. hostlink's sim/uml/linux/fpu-state-size.patch sizes the buffer at boot. Here:

- the host's rule itself, on this host: a shorter write of the area fails with EFAULT, the whole area
  (or more) is taken;
- the kernel saves exactly the host's area, as CPUID leaf 0xD gives its size (the old kernel prints no
  size and used 2,696 bytes: this fails on it);
- the kernel boots and keeps floating-point results right across switches, signals and fork on hosts
  with larger areas (AVX-512, AMX, a larger future one), emulated by an LD_PRELOAD shim that applies the
  host kernel's rule to a larger area (test/benches/xstate_size_shim.c; the old kernel dies under it
  with AMX's 11,008 bytes exactly as on an AMX host);
- the preflight of ./sim.py driver turns a kernel that cannot boot into one line naming the cause.

Each boot takes about a second; the tests need `make uml-kernel` (make check and make test build it).
"""

import os
import re
import subprocess

import pytest

from hostlink.sim.uml import kernel as uml
from hostlink.sim.uml.kernel import FP_STATE_LINE, KernelError, UML_KERNEL, boot_failure_cause, \
    boot_to_trivial_init, preflight

BENCHES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "benches")

needs_kernel = pytest.mark.skipif(not os.path.isfile(UML_KERNEL),
    reason="no User-Mode Linux kernel: `make uml-kernel`")

# AVX-512's area (what Linux 6.1's UML assumed), AMX's (current Xeons), and one larger still.
LARGER_AREAS = [2696, 11008, 16384]


@pytest.fixture(scope="module")
def tools(tmp_path_factory):
    out = tmp_path_factory.mktemp("xstate")
    probe, shim = str(out / "xstate_probe"), str(out / "xstate_size_shim.so")
    subprocess.run(["gcc", "-O2", "-Wall", "-Werror", "-o", probe, os.path.join(BENCHES, "xstate_probe.c")],
                   check=True)
    subprocess.run(["gcc", "-O2", "-Wall", "-Werror", "-shared", "-fPIC", "-o", shim,
                    os.path.join(BENCHES, "xstate_size_shim.c"), "-ldl"], check=True)
    return {"probe": probe, "shim": shim}


def host_xsave_size(tools):
    """The XSAVE area for the features this host's kernel enabled (CPUID 0xD EBX); 0 without XSAVE."""
    ebx, _ = map(int, subprocess.run([tools["probe"], "cpuid"], capture_output=True, text=True,
                                     check=True).stdout.split())
    return ebx


def ptrace_write(tools, size, env=None):
    out = subprocess.run([tools["probe"], "set", str(size)], capture_output=True, text=True, check=True,
                         env=env).stdout
    get, _, error = map(int, re.fullmatch(r"get (\d+) set (\d+) errno (\d+)\s*", out).group(1, 2, 3))
    return get, error


def shim_env(tools, size):
    return dict(os.environ, LD_PRELOAD=tools["shim"], HOSTLINK_XSTATE_SIZE=str(size))

# The host's rule ----------------------------------------------------------------------------------

def test_the_hosts_ptrace_takes_only_the_whole_xsave_area(tools):
    size = host_xsave_size(tools)
    if size == 0:
        pytest.skip("this CPU has no XSAVE: the kernel uses PTRACE_GETFPREGS")
    assert ptrace_write(tools, size) == (size, 0)
    assert ptrace_write(tools, size - 8) == (size, 14)     # EFAULT
    assert ptrace_write(tools, size + 4096) == (size, 0)   # Cut to the area.


@pytest.mark.parametrize("area", LARGER_AREAS)
def test_the_shim_applies_the_same_rule_to_a_larger_area(tools, area):
    if host_xsave_size(tools) > area:
        pytest.skip(f"this host's area is larger than {area} bytes")
    env = shim_env(tools, area)
    assert ptrace_write(tools, area, env) == (area, 0)
    assert ptrace_write(tools, 2696 if area > 2696 else area - 8, env) == (area, 14)
    assert ptrace_write(tools, area + 4096, env) == (area, 0)

# The kernel ---------------------------------------------------------------------------------------

@needs_kernel
def test_the_kernel_saves_the_whole_xsave_area_of_this_host(tools, tmp_path):
    booted, output = boot_to_trivial_init(UML_KERNEL, str(tmp_path))
    assert booted, boot_failure_cause(output)
    match = FP_STATE_LINE.search(output)
    assert match, "the kernel does not report the size of the FPU state it saves: not fpu-state-size.patch"
    assert int(match.group(1)) == (host_xsave_size(tools) or 512)


@needs_kernel
@pytest.mark.parametrize("area", LARGER_AREAS)
def test_the_kernel_runs_on_a_host_with_a_larger_xsave_area(tools, tmp_path, area):
    if host_xsave_size(tools) > area:
        pytest.skip(f"this host's area is larger than {area} bytes")
    workload = os.path.join(BENCHES, "fpu_workload.py")
    booted, output = boot_to_trivial_init(UML_KERNEL, str(tmp_path), env=shim_env(tools, area),
                                          commands=[f"python3 {workload}"])
    assert booted, boot_failure_cause(output)
    assert f"Host FP state for ptrace: {area} bytes" in output
    assert re.search(r"fpu workload: ok \(4 processes, \d+ signals\)", output), output[-2000:]

# Preflight ----------------------------------------------------------------------------------------

OLD_KERNEL_ON_AMX = """\
Run /tmp/x/init.sh as init process
userspace - ptrace set fp regs failed, errno = 14
Kernel panic - not syncing: Attempted to kill init! exitcode=0x0000000b
"""


def test_the_old_kernels_death_on_amx_is_named_with_what_to_do():
    cause = boot_failure_cause(OLD_KERNEL_ON_AMX)
    assert "smaller than this CPU's XSAVE area" in cause and "make uml-kernel" in cause
    assert "\n" not in cause


def test_other_deaths_quote_the_kernel():
    assert boot_failure_cause("a\nKernel panic - not syncing: VFS: Unable to mount root fs\n") == \
        'it stopped with "Kernel panic - not syncing: VFS: Unable to mount root fs"'
    assert boot_failure_cause("booting\nsomething odd\n") == \
        'it ended without running its init; its last words: "something odd"'


def test_preflight_stops_with_one_line_and_boots_once(tmp_path, monkeypatch):
    monkeypatch.setattr(uml, "PREFLIGHT_DIR", str(tmp_path / "preflight"))
    dying = tmp_path / "dying-linux"
    dying.write_text("#!/bin/sh\nprintf '%s' '" + OLD_KERNEL_ON_AMX + "'\nexit 1\n")
    dying.chmod(0o755)
    with pytest.raises(KernelError) as error:
        preflight(str(dying))
    message = str(error.value)
    assert "\n" not in message and "cannot run on this host" in message and "make uml-kernel" in message
    # A kernel that boots is booted once per build and host.
    booting, boots = tmp_path / "booting-linux", tmp_path / "boots"
    booting.write_text(f"#!/bin/sh\necho boot >> {boots}\necho 'Host FP state for ptrace: 832 bytes'\n"
                       f"echo '{uml.PREFLIGHT_MARK}'\n")
    booting.chmod(0o755)
    assert preflight(str(booting)) == 832
    assert preflight(str(booting)) == 832
    assert boots.read_text() == "boot\n"
