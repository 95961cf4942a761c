# This file is part of hostlink.
# Copyright (c) 2026 hostlink developers
# SPDX-License-Identifier: BSD-2-Clause

"""DDR3 bring-up from the host (software/dram, doc/dram.md "Bring-up on a board").

- The tool generated for a SoC: LiteDRAM's sdram_phy.h for this SoC, the tool compiles through the
  LitePCIe user library, its help and its errors (no DRAM in the SoC, no device, bad arguments).
- The DFI/PHY action registers cross into the `dram` clock domain as exactly one pulse per write,
  with the DRAM clock faster and slower than `sys`.
- The levelling algorithm, built for the ZC706's K7DDRPHY (the real register map), against a register
  model of the PHY and DRAM whose right answers are known: chosen bitslips and delays, the scans,
  refusal when a lane has no window.
- The same C code, built for the simulated ZC706 SoC (SDRAMPHYModel), driving the Verilator model
  through the ctypes bridge: the DFI commands the memory receives (reset, CKE, MR2/MR3/MR1/MR0 with
  this SoC's values, ZQCL, in order, each once), the write/read check, the hand-back, then a host ->
  DRAM -> host DMA round trip and the memory test (clean, then with a stuck bit).
"""

import ctypes
import os
import re
import subprocess

import pytest

from migen import *

from helpers import elaborate

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# Fixtures -----------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def zc706_dram(tmp_path_factory):
    """The ZC706 SoC with DRAM, elaborated, and its bring-up library (K7DDRPHY registers)."""
    from hostlink.targets import zc706
    from hostlink.sim.pcie.dram_bringup import build_bringup_library
    out = tmp_path_factory.mktemp("zc706_dram")
    soc, csr = elaborate(zc706.BaseSoC, out / "soc", with_dram=True)
    library = build_bringup_library(soc, str(out / "dram"))
    return soc, csr, str(out / "dram"), library


def _defines(path):
    with open(path) as f:
        return dict(re.findall(r"^#define[ \t]+(\w+)[ \t]*(.*?)[ \t]*$", f.read(), re.MULTILINE))

# Generated tool -----------------------------------------------------------------------------------

def test_generated_headers_come_from_this_soc(zc706_dram):
    from litedram.init import get_sdram_phy_init_sequence
    soc, csr, dram_dir, _ = zc706_dram
    generated = os.path.join(dram_dir, "generated")
    phy_h     = open(os.path.join(generated, "sdram_phy.h")).read()
    settings  = soc.sdram.controller.settings
    sequence, _ = get_sdram_phy_init_sequence(settings.phy, settings.timing)
    # The initialisation sequence the tool runs is LiteDRAM's for this SoC, value for value.
    for comment, address, bank, command, delay in sequence:
        assert f"sdram_dfii_pi0_address_write({address:#x});" in phy_h, comment
    assert "#define SDRAM_PHY_K7DDRPHY" in phy_h
    assert "#define SDRAM_PHY_READ_LEVELING_CAPABLE" in phy_h
    assert "#define SDRAM_PHY_WRITE_LEVELING_CAPABLE" in phy_h
    # Every register address of the tool's csr.h is the SoC's.
    csr_h = _defines(os.path.join(generated, "csr.h"))
    for name, reg in csr["csr_registers"].items():
        assert int(re.search(r"0x[0-9a-f]+", csr_h[f"CSR_{name.upper()}_ADDR"]).group(0), 16) == reg["addr"], name
    settings_h = _defines(os.path.join(generated, "dram_settings.h"))
    assert settings_h["HOSTLINK_DRAM_PHY"] == '"K7DDRPHY"'


def _build_tool(driver_dir):
    subprocess.run(["make", "-C", os.path.join(driver_dir, "user"), "liblitepcie/liblitepcie.a"], check=True,
        stdout=subprocess.DEVNULL)
    result = subprocess.run(["make", "-C", os.path.join(driver_dir, "dram")], stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT, text=True)
    assert result.returncode == 0, result.stdout
    return os.path.join(driver_dir, "dram", "hostlink_dram")


@pytest.mark.slow
@pytest.mark.parametrize("board,with_dram", [("zc706", True), ("zc706", False), ("vc709", True)])
def test_tool_compiles_and_explains(tmp_path, board, with_dram):
    import importlib
    from hostlink.software.driver import generate_driver
    target = importlib.import_module(f"hostlink.targets.{board}")
    generate_driver(target.BaseSoC(with_dram=with_dram), str(tmp_path))
    tool = _build_tool(str(tmp_path))

    def run(*args):
        return subprocess.run([tool, *args], capture_output=True, text=True, timeout=30)

    help_ = run("--help")
    assert help_.returncode == 0 and run("-h").stdout == help_.stdout
    for command in ("init", "level", "memtest", "status", "bringup"):
        assert f"  {command} " in help_.stdout
    bad = run("calibrate")
    assert bad.returncode == 2 and "unknown command 'calibrate'" in bad.stderr
    assert run().returncode == 2
    assert run("memtest", "-l", "lots").returncode == 2
    # A suffix that pushes a size past 64 bits is refused, not wrapped.
    for size in ("0x400000000000000G", "18446744073709551615K", "17179869184G"):
        overflow = run("memtest", "-l", size)
        assert overflow.returncode == 2 and f"-l needs a size in bytes" in overflow.stderr, size
    assert run("memtest", "-b", "0x4000000000000000M").returncode == 2

    status = run("status", "-c", str(tmp_path / "no_such_device"))
    assert status.returncode == 1
    [line] = status.stderr.strip().splitlines()
    if with_dram:
        assert line.startswith(f"error: cannot open {tmp_path / 'no_such_device'}")
    else:
        assert line.startswith("error: this SoC has no DRAM (it was generated without --with-dram)")
        assert not os.path.exists(os.path.join(str(tmp_path), "dram", "generated", "sdram_phy.h"))

def test_memtest_range_check_cannot_wrap(zc706_dram):
    """base + length is never computed before it is known to fit: a base near 2^64 whose sum with the
    length wraps to a small number is refused before any register is written."""
    from hostlink.sim.pcie.dram_bringup import BringupLibrary
    library = BringupLibrary(zc706_dram[3])
    size    = library.lib.hostlink_dram_size()
    native  = library.lib.hostlink_dram_native_bytes()
    writes = []
    io = library.io(read=lambda addr: 0, write=lambda addr, value: writes.append(addr),
                    delay=lambda units: None, print_=lambda text: None)
    bad_request = -6
    for base, length in [(2**64 - native, 2 * native), (2**64 - size, size), (size, native),
                         (size - native, 2 * native), (0, size + native), (native, 2**64 - native)]:
        assert library.call("memtest", io, {"base": base, "length": length})[0] == bad_request, (base, length)
    assert writes == []


@pytest.mark.slow
def test_each_soc_keeps_its_own_dram_settings():
    # LiteDRAM's controller shares one default settings object between instances; add_dram gives each
    # SoC its own, or the driver generated for the first SoC would carry the last one's CL/CWL.
    from hostlink.targets import vc709, zc706
    first  = zc706.BaseSoC(with_dram=True)
    second = vc709.BaseSoC(with_dram=True)
    assert first.sdram.controller.settings.phy.cwl == 8
    assert second.sdram.controller.settings.phy.cwl == 9

# Action registers across clock domains ------------------------------------------------------------

class _Actions(Module):
    """A module in `dram` that counts the pulses of its action register and keeps the last value."""
    def __init__(self):
        from litex.soc.interconnect.csr import CSR, AutoCSR
        class Owner(Module, AutoCSR):
            def __init__(self):
                self._strobe = CSR(8)
        self.owner  = owner = Owner()
        self.count  = Signal(8)
        self.value  = Signal(8)
        self.sync.dram += If(owner._strobe.re, self.count.eq(self.count + 1), self.value.eq(owner._strobe.r))


@pytest.mark.parametrize("dram_period", [7, 13])   # DRAM clock faster, then slower, than sys (10).
def test_action_registers_cross_once(dram_period):
    from hostlink.cores.dram.csr_crossing import CSRActionCrossing
    dut = _Actions()
    dut.submodules.crossing = CSRActionCrossing([dut.owner], "sys", "dram")
    assert dut.crossing.registers == ["strobe"]
    twin = dut.owner._strobe          # What the CSR bank now sees.
    seen = []

    def host():
        for value in (0x11, 0x22, 0x33, 0x44, 0x55):
            yield twin.r.eq(value)
            yield twin.re.eq(1)
            yield
            yield twin.re.eq(0)
            for _ in range(12):
                yield
            seen.append(((yield dut.count), (yield dut.value)))

    run_simulation(dut, {"sys": host()}, clocks={"sys": 10, "dram": dram_period})
    assert seen == [(1, 0x11), (2, 0x22), (3, 0x33), (4, 0x44), (5, 0x55)]


def test_action_crossing_keeps_the_register_map(zc706_dram):
    soc, csr, _, _ = zc706_dram
    crossed = soc.dram_csr_crossing.registers
    assert crossed.count("command_issue") == 4 and "rdly_dq_inc" in crossed and "wlevel_strobe" in crossed
    assert len(crossed) == 17                                         # 13 K7DDRPHY + 4 DFI phases.
    names = [n for n in csr["csr_registers"] if n.startswith("ddrphy_")]
    # LiteDRAM's order, action registers (rdly_dq_inc, ...) in their own places.
    assert names.index("ddrphy_rdly_dq_rst") < names.index("ddrphy_rdly_dq_inc") < names.index("ddrphy_rdphase")
    assert "sdram_dfii_pi0_command_issue" in csr["csr_registers"]

# Levelling against a register model ---------------------------------------------------------------

class FakeK7:
    """The ZC706's DFI injector and K7DDRPHY registers over a one-burst DRAM, with known right answers:
    lane l reads back right only with write bitslip `wslip[l]`, read bitslip `rslip[l]` and a read
    delay inside `window[l]`; in write-levelling mode it returns ones once its DQS delay reaches
    `edge[l]` (and for the next 12 taps, then zeros: the next CK low phase)."""
    LANES = 8

    def __init__(self, csr, wslip, rslip, window, edge):
        self.regs   = {}
        self.names  = {}
        for name, reg in csr["csr_registers"].items():
            for w in range(reg["size"]):
                self.names[reg["addr"] + 4 * w] = (name, w)
        self.wslip, self.rslip, self.window, self.edge = wslip, rslip, window, edge
        self.state  = {k: [0] * self.LANES for k in ("rdly", "rbit", "wbit", "wdq", "wdqs")}
        self.stored = None
        self.control = [1]
        self.commands = []   # (phase, command bits, address, bank)
        self.delays  = []
        self.log     = []

    def lanes(self):
        sel = self.regs.get("ddrphy_dly_sel", 0)
        return [l for l in range(self.LANES) if sel >> l & 1]

    def step(self, key, reset, modulo=None):
        for l in self.lanes():
            v = 0 if reset else self.state[key][l] + 1
            self.state[key][l] = v % modulo if modulo else v

    def data(self, phase):
        return [self.regs.get((f"sdram_dfii_pi{phase}_wrdata", w), 0) for w in range(4)]

    @staticmethod
    def flip_lane(words, lane, mask=0xff):
        words = list(words)
        for edge in range(2):
            offset = edge * 64 + lane * 8
            words[3 - offset // 32] ^= mask << (offset % 32)
        return words

    def write(self, addr, value):
        name, word = self.names[addr]
        actions = {
            "ddrphy_rdly_dq_rst": ("rdly", True, 32), "ddrphy_rdly_dq_inc": ("rdly", False, 32),
            "ddrphy_rdly_dq_bitslip_rst": ("rbit", True, 8), "ddrphy_rdly_dq_bitslip": ("rbit", False, 8),
            "ddrphy_wdly_dq_bitslip_rst": ("wbit", True, 8), "ddrphy_wdly_dq_bitslip": ("wbit", False, 8),
            "ddrphy_wdly_dq_rst": ("wdq", True, 32), "ddrphy_wdly_dq_inc": ("wdq", False, 32),
            "ddrphy_wdly_dqs_rst": ("wdqs", True, 32), "ddrphy_wdly_dqs_inc": ("wdqs", False, 32),
        }
        if name in actions:
            self.step(*actions[name])
        elif name == "ddrphy_wlevel_strobe":
            words = [0, 0, 0, 0]
            for l in range(self.LANES):
                if self.edge[l] <= self.state["wdqs"][l] < self.edge[l] + 12:
                    words = self.flip_lane(words, l)
            for w in range(4):
                self.regs[("sdram_dfii_pi0_rddata", w)] = words[w]
        elif name.endswith("_command_issue"):
            phase = int(name[len("sdram_dfii_pi")])
            command = self.regs.get(f"sdram_dfii_pi{phase}_command", 0)
            self.commands.append((phase, command, self.regs.get(f"sdram_dfii_pi{phase}_address", 0),
                                  self.regs.get(f"sdram_dfii_pi{phase}_baddress", 0)))
            if command & 0x10:   # Write.
                stored = [self.data(p) for p in range(4)]
                for l in range(self.LANES):
                    if self.state["wbit"][l] != self.wslip[l]:
                        # Not the read side's mask: a wrong write and a wrong read must not cancel.
                        stored = [self.flip_lane(d, l, 0x0f) for d in stored]
                self.stored = stored
            if command & 0x20:   # Read.
                result = [list(d) for d in self.stored]
                for l in range(self.LANES):
                    lo, hi = self.window[l]
                    if self.state["rbit"][l] != self.rslip[l] or not lo <= self.state["rdly"][l] <= hi:
                        result = [self.flip_lane(d, l) for d in result]
                for p in range(4):
                    for w in range(4):
                        self.regs[(f"sdram_dfii_pi{p}_rddata", w)] = result[p][w]
        elif word or name.endswith(("_wrdata",)):
            self.regs[(name, word)] = value
        else:
            if name == "sdram_dfii_control":
                self.control.append(value)
            self.regs[name] = value

    def read(self, addr):
        name, word = self.names[addr]
        if name.endswith("_rddata"):
            return self.regs.get((name, word), 0)
        if name == "ddrphy_rdphase":
            return self.regs.get(name, 1)
        return self.regs.get(name, 0)


def _run(library, fake, step):
    from hostlink.sim.pcie.dram_bringup import BringupLibrary
    lib = BringupLibrary(library)
    io  = lib.io(read=fake.read, write=fake.write, delay=fake.delays.append, print_=fake.log.append)
    code, _ = lib.call(step, io)
    return code


WSLIP  = [0, 2, 0, 4, 0, 0, 6, 2]
RSLIP  = [3, 3, 4, 2, 3, 5, 0, 7]
WINDOW = [(4, 19), (0, 9), (12, 31), (7, 8), (10, 20), (20, 29), (1, 30), (15, 15)]
EDGE   = [5, 9, 14, 3, 20, 8, 11, 17]


def test_leveling_finds_the_known_settings(zc706_dram):
    _, csr, _, library = zc706_dram
    fake = FakeK7(csr, WSLIP, RSLIP, WINDOW, EDGE)
    assert _run(library, fake, "level") == 0
    text = "".join(fake.log)
    assert fake.state["rbit"] == RSLIP
    assert fake.state["wbit"] == WSLIP
    assert fake.state["rdly"] == [lo + (hi - lo + 1) // 2 for lo, hi in WINDOW]   # Middle of the window.
    assert fake.state["wdqs"] == EDGE and fake.state["wdq"] == EDGE    # DQ moves with DQS.
    for lane, (lo, hi) in enumerate(WINDOW):
        assert f"m{lane}: write bitslip {WSLIP[lane]}, read bitslip {RSLIP[lane]}" in text
        assert f"(window {lo}..{hi})" in text
        assert f"  m{lane}: |{'0' * EDGE[lane]}{'1' * 12}{'0' * (32 - EDGE[lane] - 12)}| DQS delay {EDGE[lane]} taps" in text
    # Write levelling: MR1 with its write-levelling bit, then MR1 as the initialisation left it.
    mrs = [(a, b) for p, c, a, b in fake.commands if c == 0b1111]
    assert mrs[0] == (6 | 1 << 7, 1) and mrs[1] == (6, 1)
    assert fake.control[-1] == 1       # Handed back to the controller.
    assert "bit errors per lane: m0 0 m1 0 m2 0 m3 0 m4 0 m5 0 m6 0 m7 0" in text


def test_leveling_refuses_a_dead_lane(zc706_dram):
    _, csr, _, library = zc706_dram
    window = list(WINDOW)
    window[5] = (40, 40)               # Never inside the 32 taps.
    fake = FakeK7(csr, WSLIP, RSLIP, window, EDGE)
    assert _run(library, fake, "level") == -2
    text = "".join(fake.log)
    assert "m5: no working read window" in text
    assert "Levelling failed: the DFI stays in software control." in text
    assert fake.control[-1] != 1


def test_write_leveling_refuses_a_lane_without_edge(zc706_dram):
    _, csr, _, library = zc706_dram
    edge = list(EDGE)
    edge[2] = 64                       # Never reached: only zeros.
    fake = FakeK7(csr, WSLIP, RSLIP, WINDOW, edge)
    assert _run(library, fake, "level") == -2
    assert "m2: |" + "0" * 32 + "| no CK rising edge found" in "".join(fake.log)


def test_init_runs_the_generated_sequence(zc706_dram):
    soc, csr, _, library = zc706_dram
    from litedram.init import get_sdram_phy_init_sequence
    fake = FakeK7(csr, WSLIP, RSLIP, WINDOW, EDGE)
    assert _run(library, fake, "init") == 0
    settings = soc.sdram.controller.settings
    sequence, _ = get_sdram_phy_init_sequence(settings.phy, settings.timing)
    expected = [(a, b) for _, a, b, cmd, _ in sequence if not cmd.startswith("DFII_CONTROL")]
    assert [(a, b) for _, _, a, b in fake.commands] == expected
    # Software control with RESET# low first, then RESET# released (ODT), CKE, software control kept.
    assert fake.control == [1, 0, 0b1100, 0b1110, 0b1110]
    assert fake.delays[:3] == [20000, 1000, 1000]   # 200 us of RESET#, then the PHY reset.
    assert 50000 in fake.delays and 10000 in fake.delays

# Simulation: the C code against the simulated SoC -------------------------------------------------

@pytest.fixture(scope="module")
def sim_bringup(tmp_path_factory):
    from hostlink.sim.pcie.dram_bringup import build_bringup_library
    from hostlink.sim.pcie.models.host import host_profile
    from hostlink.sim.pcie.run import run_jobs
    from hostlink.sim.pcie.soc import get_board
    out = tmp_path_factory.mktemp("sim_bringup")
    soc = get_board("zc706").soc_factory(2, with_dram=True)
    library = build_bringup_library(soc, str(out))
    jobs = [
        {"target": "dram", "kind": "bringup", "library": library,
         "steps": ["status", "init", "status", "level", "status", "memtest"],
         "memtest": {"base": 65536, "length": 16384}, "stuck_memtest": True},
        {"target": "dram", "kind": "dram", "size": 3 * 4096 + 64 * 5, "dram_address": 65536 - 4096,
         "channels": [0], "descriptor_size": 65536},
    ]
    profile = host_profile("default", link_speed=2, link_width=4)
    results = run_jobs("zc706", jobs, profile, with_dram=True)["results"]
    return soc, out, results


@pytest.mark.sim
def test_sim_bringup_steps(sim_bringup):
    _, _, results = sim_bringup
    [row] = [r for r in results if r.get("kind") == "bringup"]
    assert [(s["step"], s["result"]) for s in row["steps"]] == [
        ("status", "ok"), ("init", "ok"), ("status", "ok"), ("level", "ok"), ("status", "ok"),
        ("memtest", "ok"), ("memtest_stuck", "memtest")]
    assert row["steps"][5]["errors"] == 0 and row["steps"][6]["errors"] > 0
    log = row["log"]
    assert log.count("DFI: hardware control") == 2 and "DFI: software control (CKE 1, ODT 1, RESET# released)" in log
    # The model has no delays: both scans say so, from sdram_phy.h.
    assert "Write levelling: skipped: the PHY (SDRAMPHYModel) has no write-levelling delays" in log
    assert "Read levelling: skipped: the PHY (SDRAMPHYModel) has no read delays or bitslips" in log
    assert "bit errors per lane: m0 0 m1 0 m2 0 m3 0 m4 0 m5 0 m6 0 m7 0" in log


@pytest.mark.sim
def test_sim_dfi_sees_the_init_sequence(sim_bringup):
    from litedram.init import get_sdram_phy_init_sequence
    soc, _, results = sim_bringup
    [row] = [r for r in results if r.get("kind") == "bringup"]
    settings = soc.sdram.controller.settings
    sequence, _ = get_sdram_phy_init_sequence(settings.phy, settings.timing)
    commands = row["dfi_commands"]
    # Every command reached the DRAM exactly once (one DRAM clock cycle), on phase 0 except reads.
    assert all(c[5] == 1 for c in commands), commands
    expected = [("MRS" if "Mode Register" in comment else "ZQC", a, b)
                for comment, a, b, cmd, _ in sequence if not cmd.startswith("DFII_CONTROL")]
    assert [(c[2], c[3], c[4]) for c in commands[:len(expected)]] == expected
    mr = {b: a for name, a, b in expected if name == "MRS"}
    phy = settings.phy
    assert (mr[2] >> 3) & 0b111 == phy.cwl - 5                       # MR2: CWL.
    cl_bits = ((mr[0] >> 4) & 0b111) << 1 | (mr[0] >> 2) & 1          # MR0: CL (A6:A4, A2).
    assert cl_bits == {5: 0b0010, 6: 0b0100, 7: 0b0110, 8: 0b1000, 9: 0b1010, 10: 0b1100, 11: 0b1110}[phy.cl]
    assert mr[0] >> 8 & 1                                             # MR0: DLL reset.
    assert expected[-1] == ("ZQC", 0x400, 0)                          # ZQCL (A10 high).
    # Then the write/read check: activate, write on the write phase, read on the read phase, precharge.
    check = commands[len(expected):]
    assert len(check) == 3 * 4                                        # Three patterns, nothing else.
    assert [(c[2], c[1]) for c in check[:4]] == [("ACT", 0), ("WR", phy.wrphase), ("RD", phy.rdphase), ("PRE", 0)]
    assert all(c[0] < row["handback_ns"] for c in commands)
    # RESET# low with CKE low, then RESET# released, then CKE, before the first MRS.
    control = row["dfi_control"]
    states = [tuple(c[1:]) for c in control]
    assert states[states.index((0, 0, 0)):][:3] == [(0, 0, 0), (1, 0, 1), (1, 1, 1)]
    released = [c[0] for c in control if tuple(c[1:]) == (1, 1, 1)][-1]
    assert released < commands[0][0]


@pytest.mark.sim
def test_sim_register_trace(sim_bringup):
    _, _, results = sim_bringup
    [row] = [r for r in results if r.get("kind") == "bringup"]
    writes = [(name, value) for _, kind, name, value in row["trace"] if kind == "w"]
    controls = [v for n, v in writes if n == "sdram_dfii_control"]
    assert controls[:3] == [0, 0b1100, 0b1110] and controls[-1] == 1
    # The requested waits are recorded as asked (the model is served shorter ones).
    delays = [value for _, kind, _, value in row["trace"] if kind == "d"]
    assert delays[:2] == [20000, 50000] and 10000 in delays


@pytest.mark.sim
def test_sim_dma_round_trip_after_bringup(sim_bringup):
    _, _, results = sim_bringup
    rows = [r for r in results if r.get("target") == "dram" and "direction" in r]
    assert [r["direction"] for r in rows] == ["h2c", "c2h"]
    for r in rows:
        assert r["errors"] == 0 and not r["timed_out"], r
