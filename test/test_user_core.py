# This file is part of hostlink.
# Copyright (c) 2026 hostlink developers
# SPDX-License-Identifier: BSD-2-Clause

"""A user's core on a DMA channel (cores/pcie/user_core.py, ./sim.py dma --user-core): finding it, checking
its ports, every bad input refused with one line (exit 2) before anything is built; and, in simulation,
the example accelerator on every PCIe board, both directions at once, every result checked against its
model."""

import json
import os
import re
import textwrap

import pytest

from hostlink import REPO
from hostlink.cores.pcie.user_core import load_user_core, build_user_core, port_bandwidth_note
from hostlink.examples.accelerator import Accelerator
from hostlink.sim.dma import main as dma_main
from hostlink.targets import boards as registry

from helpers import refusal, run_target, target_refusal

ACCELERATOR = "hostlink.examples.accelerator:Accelerator"


def test_the_example_loads_by_module_and_by_file():
    assert load_user_core(ACCELERATOR) is Accelerator
    by_file = load_user_core(os.path.join(REPO, "examples", "accelerator.py") + ":Accelerator")
    assert by_file.__name__ == "Accelerator" and callable(by_file.model)


def test_a_core_file_named_from_another_folder_loads_with_its_source(tmp_path, monkeypatch):
    """`--user-core core.py:Class` from the user's folder: the path made absolute for the simulator (which
    runs in a folder of its own), and the class's source found (the model's digest reads it)."""
    import inspect
    import shutil
    from hostlink.cores.pcie.user_core import absolute_spec
    shutil.copy(os.path.join(REPO, "examples", "accelerator.py"), tmp_path / "my_core.py")
    monkeypatch.chdir(tmp_path)
    spec = absolute_spec("my_core.py:Accelerator")
    assert spec == f"{tmp_path}/my_core.py:Accelerator"
    assert absolute_spec("examples.accelerator:Accelerator") == "examples.accelerator:Accelerator"
    assert inspect.getsourcefile(load_user_core(spec)) == str(tmp_path / "my_core.py")


@pytest.mark.parametrize("spec, message", [
    ("accelerator",                       r"MODULE:CLASS, FILE\.py:CLASS or FILE\.v:MODULE, not 'accelerator'"),
    ("hostlink.examples.accelerator:",    r"MODULE:CLASS, FILE\.py:CLASS"),
    ("no_such_module_here:Core",          r"user core module no_such_module_here not found"),
    ("hostlink.examples.accelerator:Nope", r"has no class Nope"),
    ("/nonexistent/core.py:Core",         r"user core file /nonexistent/core\.py does not exist"),
])
def test_bad_specs_say_what_is_wrong(spec, message):
    with pytest.raises(ValueError, match=message):
        load_user_core(spec)


def _core_file(tmp_path, body):
    path = tmp_path / "mycore.py"
    path.write_text(textwrap.dedent('''\
        from migen import *
        from litex.soc.interconnect import stream
        class Core(Module):
            def __init__(self, dma_data_width, sys_clk_freq):
                self.data_width, self.clock_domain, self.clk_freq = 64, "sys", sys_clk_freq
                self.sink   = stream.Endpoint([("data", 64)])
                self.source = stream.Endpoint([("data", 64)])
        ''') + textwrap.dedent(body))
    return f"{path}:Core"


@pytest.mark.parametrize("body, message", [
    ("Core.__init__ = lambda self, *a: setattr(self, 'x', 1)\n",     r"has no `data_width`"),
    ("_init = Core.__init__\n"
     "def _bad(self, *a):\n    _init(self, *a); del self.source\nCore.__init__ = _bad\n", r"has no `source`"),
    ("_init = Core.__init__\n"
     "def _bad(self, *a):\n    _init(self, *a); self.data_width = 48\nCore.__init__ = _bad\n",
     r"divide the DMA's 128 bits or be a multiple of them .* not 48"),
    ("_init = Core.__init__\n"
     "def _bad(self, *a):\n    _init(self, *a); self.clk_freq = 0\nCore.__init__ = _bad\n", r"clk_freq must be a frequency"),
    ("_init = Core.__init__\n"
     "def _bad(self, *a):\n    _init(self, *a); self.clock_domain = 'my clock'\nCore.__init__ = _bad\n",
     r"clock_domain must be a clock domain's name"),
])
def test_a_core_that_breaks_the_contract_is_refused(tmp_path, body, message):
    cls = load_user_core(_core_file(tmp_path, body))
    with pytest.raises(ValueError, match=message):
        build_user_core(cls, 128, 150e6)


def test_a_core_built_otherwise_is_refused(tmp_path):
    cls = load_user_core(_core_file(tmp_path, "Core.__init__ = lambda self: None\n"))
    with pytest.raises(ValueError, match=r"must be built as Core\(dma_data_width, sys_clk_freq\)"):
        build_user_core(cls, 128, 150e6)


def test_a_narrow_slow_core_says_where_the_channel_will_cap():
    core = Accelerator(128, 150e6)
    assert port_bandwidth_note(core, 128, 150e6) is None
    core.clk_freq = 50e6
    assert "3.200 GB/s each way, less than the DMA's 2.400" not in port_bandwidth_note(core, 128, 150e6)
    assert "1.600 GB/s each way, less than the DMA's 2.400" in port_bandwidth_note(core, 128, 150e6)


@pytest.mark.parametrize("argv, message", [
    (["--user-core", "accelerator"],                       "MODULE:CLASS"),
    (["--user-core", "no_such_module_here:Core"],          "not found"),
    (["--user-core", ACCELERATOR, "--directions", "h2c"],  "no --directions"),
    (["--user-core", ACCELERATOR, "--channels", "2"],      "no --directions, --channels"),
    (["--user-core", ACCELERATOR, "--user-channel", "2"],  "user channel must be one of the SoC's DMA channels 0..1, not 2"),
])
def test_sim_dma_refuses_bad_user_core_input_with_one_line(argv, message, capsys):
    assert message in refusal(dma_main, ["--board", "zc706", "--sizes", "4K", *argv], capsys).strip().splitlines()[-1]


def test_sim_dma_refuses_a_size_that_ends_inside_a_core_word(capsys):
    """The accelerator takes words of twice the DMA's width (64 bytes on the VC709): 2,080 bytes would leave
    half a word in the port's width converter and never end; refused before anything is built."""
    message = refusal(dma_main, ["--board", "vc709", "--sizes", "2080", "--user-core", ACCELERATOR], capsys)
    assert "2080 bytes is not a whole number of the user core's 512-bit words: a transfer through Accelerator " \
           "moves a multiple of 64 bytes" in message


def test_sim_dma_refuses_a_core_without_a_model(tmp_path, capsys):
    with pytest.raises(SystemExit):
        dma_main(["--board", "zc706", "--sizes", "4K", "--user-core", _core_file(tmp_path, "")])
    assert "has no `model(data, settings)`" in capsys.readouterr().err

def test_the_docs_python_example_builds(tmp_path):
    """The Python example of doc/user_cores.md, run as written, then generated."""
    from litex.soc.integration.builder import Builder
    with open(os.path.join(REPO, "doc", "user_cores.md")) as f:
        code = re.search(r"```python\n(.*?)```", f.read(), re.DOTALL).group(1)
    scope = {"__name__": "doc_user_cores"}   # migen names signals after their module.
    exec(code, scope)
    soc = scope["soc"]
    Builder(soc, output_dir=str(tmp_path), compile_gateware=False, compile_software=False,
            csr_json=str(tmp_path / "csr.json")).build(run=False)
    registers = json.loads((tmp_path / "csr.json").read_text())["csr_registers"]
    assert {"user_core_a", "user_core_b", "user_core_throttle", "pcie_dma0_user_select"} <= set(registers)

# Targets ------------------------------------------------------------------------------------------

TARGET_FLAGS = {"zc706": [], "vc709": [], "kc705": ["--with-pcie", "--no-ethernet"]}


@pytest.mark.parametrize("board", [pytest.param(b, marks=[] if b == "zc706" else pytest.mark.slow)
                                   for b in registry.PCIE_BOARDS])
def test_every_pcie_target_generates_with_a_user_core(board, tmp_path):
    result = run_target(board, *TARGET_FLAGS[board], "--user-core", "examples.accelerator:Accelerator",
                        "--user-channel", "1", "--output-dir", str(tmp_path), "--csr-json", str(tmp_path / "csr.json"))
    assert result.returncode == 0, result.stderr[-2000:]
    registers = json.loads((tmp_path / "csr.json").read_text())["csr_registers"]
    assert {"user_core_a", "pcie_dma1_user_select"} <= set(registers)
    assert "pcie_dma0_user_select" not in registers
    verilog = open(next((tmp_path / "gateware").glob("*.v"))).read()
    assert "accel_clk" in verilog   # The core's own clock, from the MMCM on the SoC's.


def test_a_target_generates_with_the_streaming_source(tmp_path):
    """The real-time example: its CSRs, the writer's flow gate and the port's drop count in the map."""
    result = run_target("zc706", "--user-core", "examples.stream_source:CountingSource", "--output-dir",
                        str(tmp_path), "--csr-json", str(tmp_path / "csr.json"))
    assert result.returncode == 0, result.stderr[-2000:]
    registers = json.loads((tmp_path / "csr.json").read_text())["csr_registers"]
    assert {"user_core_enable", "user_core_rate", "user_core_overruns", "pcie_dma0_user_c2h_dropped",
            "pcie_dma0_writer_flow_mode", "pcie_dma0_writer_flow_given", "pcie_dma0_writer_flow_done",
            "pcie_dma0_writer_flow_buffer_bytes", "pcie_dma0_reader_flow_given"} <= set(registers)
    assert "adc_clk" in open(next((tmp_path / "gateware").glob("*.v"))).read()


def test_a_clock_no_mmcm_can_make_is_refused_with_one_line(tmp_path):
    path = _core_file(tmp_path, "_init = Core.__init__\n"
        "def _fast(self, *a):\n    _init(self, *a); self.clock_domain, self.clk_freq = 'fast', 3e9\n"
        "Core.__init__ = _fast\n")
    assert "no MMCM setting makes 3000 MHz from the SoC's 150 MHz clock" in \
        target_refusal("zc706", "--user-core", path, "--output-dir", str(tmp_path / "out"))


@pytest.mark.parametrize("argv, message", [
    (["--user-core", "accelerator"],                                "MODULE:CLASS, FILE.py:CLASS or FILE.v:MODULE"),
    (["--user-core", "/nonexistent/core.py:Core"],                  "does not exist"),
    (["--user-core", "examples.accelerator:Accelerator", "--user-channel", "3"],
                                                                    "one of the SoC's DMA channels 0..1, not 3"),
])
def test_a_target_refuses_a_bad_user_core_with_one_line(argv, message, tmp_path):
    assert message in target_refusal("zc706", *argv, "--output-dir", str(tmp_path))

# Simulation ---------------------------------------------------------------------------------------

@pytest.mark.sim
@pytest.mark.parametrize("board", registry.PCIE_BOARDS)
def test_the_accelerator_on_every_board(board, tmp_path):
    path = tmp_path / "user.json"
    code = dma_main(["--board", board, "--user-core", ACCELERATOR, "--sizes", "64K", "--json", str(path)])
    rows = json.loads(path.read_text())["results"]
    assert code == 0
    assert [(r["direction"], r["errors"], r["timed_out"]) for r in rows] == [("user", 0, False)]
    counters = rows[0]["user_counters"]
    words = 64 * 1024 * 8 // registry.BOARDS[board].pcie.data_width
    assert counters["h2c_words"] == words and counters["c2h_words"] == words


@pytest.mark.parametrize("device, grade", [("xc7vx690t-ffg1761-2", -2), ("xc7z045ffg900-2", -2),
    ("xc7k325t-ffg900-1", -1), ("xc7a100t-csg324-1L", -1), ("xc7k325t-ffg900-3", -3)])
def test_the_user_clocks_mmcm_takes_the_parts_speed_grade(device, grade):
    """The MMCM of a core's clock is checked against the board's part, not a fixed -2 (issue 51)."""
    from hostlink.cores.pcie.config import speed_grade
    assert speed_grade(device) == grade


def test_every_pcie_boards_part_has_a_speed_grade():
    from litex_boards.platforms.xilinx_kc705 import Platform as KC705Platform
    from hostlink.cores.pcie.config import speed_grade
    from hostlink.targets.vc709_platform import Platform as VC709Platform
    from hostlink.targets.zc706_platform import Platform as ZC706Platform
    for platform in (ZC706Platform(), VC709Platform(), KC705Platform()):
        assert speed_grade(platform.device) == -2, platform.device


def test_a_part_name_without_a_speed_grade_is_refused_in_one_line():
    from hostlink.cores.pcie.config import speed_grade
    with pytest.raises(ValueError, match="no speed grade at the end of the part name 'xc7k325t'"):
        speed_grade("xc7k325t")
