# This file is part of hostlink.
# Copyright (c) 2026 hostlink developers
# SPDX-License-Identifier: BSD-2-Clause

"""./sim.py driver --board zc706 --ps7: Linux on the simulated Zynq SoC (sim/zynq/linux.py, uml_bench.py).

Quick: the machine's device tree (the generated DMA node on virt-pci's platform bus, its interrupt controller,
the clock, the client), the init script, the option's one-line refusal on another board. `uml`: the kernel
boots on the simulated logic, Linux's unmodified xilinx_dma probes the DMA from the device tree, 1 MiB goes each
way through hostlink's dmaengine client by interrupt, single and double buffered, then through the user-level
driver by polling, every byte checked; the ARM's software charged in simulated time (sim/zynq/models/
ps_costs.py), and seed 003's three drivers at ~100 KB (single buffer Unique, Blocks single and double), ranked as
the cost table predicts. With --axi-dma-sg (the DMA in scatter-gather mode, one more boot):
xilinx_dma runs it with descriptors, the client's queued transfers and a short packet's residue, the
descriptors' error bits through the HP0 model's faults, clean transfers after each reset.
"""

import json
import os
import subprocess
import sys

import pytest

from hostlink.sim.uml.kernel import UML_KERNEL, UML_TREE
from hostlink.sim.uml.harness import DriverSimError
from hostlink.protocol import SIM_COST_CATEGORIES
from hostlink.sim.zynq.drivers import DRIVERS, calls, predict
from hostlink.sim.zynq.linux import device_tree_source, default_commands, init_script, compile_device_tree

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DTC = os.path.join(UML_TREE, "scripts", "dtc", "dtc")
needs_kernel = pytest.mark.skipif(not os.path.isfile(UML_KERNEL), reason="no User-Mode Linux kernel: `make uml-kernel`")


def test_the_device_tree_puts_the_generated_dma_node_on_the_platform_bus():
    tree = device_tree_source("/run/x/platform.sock")
    bus = tree[tree.index("platform: bus {"):]
    for line in ['compatible = "virtio,device4d2", "simple-bus";', "interrupt-controller;", "#interrupt-cells = <1>;",
                 'compatible = "xlnx,axi-dma-1.00.a";', "reg = <0x10400000 0x10000>;", "interrupt-parent = <&platform>;",
                 "interrupts = <0>, <1>;", "clocks = <&fclk0>, <&fclk0>, <&fclk0>;", "xlnx,sg-length-width = <26>;"]:
        assert line in bus, line
    assert "xlnx,include-sg" not in tree                                        # Direct register mode.
    assert 'socket-path = "/run/x/platform.sock";' in tree and "virtio-device-id = <1234>;" in tree
    assert 'compatible = "fixed-clock";' in tree and "clock-frequency = <150000000>;" in tree
    client = tree[tree.index("dma-client {"):]
    assert "dmas = <&axi_dma 0>, <&axi_dma 1>;" in client and 'dma-names = "tx", "rx";' in client


@pytest.mark.skipif(not os.path.isfile(DTC), reason="no dtc: it is built with the User-Mode Linux kernel")
def test_the_device_tree_compiles(tmp_path):
    path = compile_device_tree(device_tree_source(str(tmp_path / "platform.sock")), str(tmp_path / "machine.dtb"))
    assert open(path, "rb").read(4) == b"\xd0\x0d\xfe\xed"                       # The FDT magic.


def test_the_sg_build_s_tree_says_include_sg_and_runs_the_sg_steps(tmp_path):
    """--axi-dma-sg: the DMA's node has xlnx,include-sg (the binding's; xilinx_dma 6.12 itself reads DMASR's
    SGIncld), the rest as in direct register mode; the steps are the client's, queued and SG errors included."""
    tree = device_tree_source("/run/x/platform.sock", sg=True)
    assert tree.replace("\t\t\t\txlnx,include-sg;\n", "") == device_tree_source("/run/x/platform.sock")
    commands = default_commands(str(tmp_path / "software"), sg=True)
    assert [c[-1] for c in commands[1:]] == ["1", "2", "--queued", "--sg-errors"]
    if os.path.isfile(DTC):
        path = compile_device_tree(tree, str(tmp_path / "machine.dtb"))
        assert open(path, "rb").read(4) == b"\xd0\x0d\xfe\xed"


def test_axi_dma_sg_without_ps7_is_refused_in_one_line():
    result = subprocess.run([sys.executable, os.path.join(REPO, "sim.py"), "driver", "--board", "zc706",
                             "--axi-dma-sg"], capture_output=True, text=True, cwd=REPO)
    assert result.returncode == 2
    assert result.stderr.strip().splitlines()[-1].endswith(
        "--axi-dma-sg is the Zynq SoC's DMA in scatter-gather mode: use it with --board zc706 --ps7")


@pytest.mark.skipif(not os.path.isfile(DTC), reason="no dtc: it is built with the User-Mode Linux kernel")
def test_a_device_tree_warning_is_refused(tmp_path):
    """dtc runs without -q and its warnings fail the run: a channel node named with a unit address and no reg
    (the binding's example's form) is refused, naming dtc's check."""
    source = device_tree_source(str(tmp_path / "platform.sock")).replace("dma-channel-mm2s", "dma-channel@10400000")
    with pytest.raises(DriverSimError, match="unit_address_vs_reg"):
        compile_device_tree(source, str(tmp_path / "machine.dtb"))


def test_the_init_runs_each_command_and_saves_the_logs(tmp_path):
    commands = default_commands(str(tmp_path / "software"))
    script = init_script(str(tmp_path / "shared"), commands, 60)
    user = str(tmp_path / "software" / "dma_user_test")
    assert [c[0] for c in commands] == ["insmod", "python3", "python3", "python3", "python3", "sh", user, user, user,
                                        user, user]
    assert commands[3][-1] == commands[8][-1] == "--errors"
    assert commands[4][1].endswith("kernel_sweep.py") and commands[9][1] == "--sweep" and commands[10][1] == "--sched"
    for i in range(len(commands)):
        assert f"step cmd{i} " in script
    assert "cat /proc/interrupts > interrupts.txt" in script and "dmesg > dmesg.txt" in script


def test_ps7_on_another_board_is_refused_in_one_line():
    result = subprocess.run([sys.executable, os.path.join(REPO, "sim.py"), "driver", "--board", "vc709", "--ps7"],
                            capture_output=True, text=True, cwd=REPO)
    assert result.returncode == 2
    assert result.stderr.strip().splitlines()[-1].endswith(
        "--ps7 is the ZC706's Zynq SoC: use it with --board zc706, not vc709")


def test_ps7_refuses_the_pcie_options_in_one_line():
    result = subprocess.run([sys.executable, os.path.join(REPO, "sim.py"), "driver", "--board", "zc706", "--ps7",
                             "--with-dram", "--mps", "128"], capture_output=True, text=True, cwd=REPO)
    assert result.returncode == 2
    assert result.stderr.strip().splitlines()[-1].endswith(
        "--ps7 runs the Zynq SoC, where --with-dram, --mps (the PCIe SoC's and its host's) do not apply")


@pytest.mark.uml
@needs_kernel
def test_xilinx_dma_and_a_user_level_driver_move_data_through_the_simulated_zynq(tmp_path):
    json_path = tmp_path / "result.json"
    result = subprocess.run([sys.executable, os.path.join(REPO, "sim.py"), "driver", "--board", "zc706", "--ps7",
                             "--json", str(json_path)], capture_output=True, text=True, cwd=REPO, timeout=3000)
    print(result.stdout[-8000:])
    report = json.load(open(json_path))
    out = [step["output"] or "" for step in report["steps"]]
    log = report["kernel_log"]
    # Linux's own driver probed the DMA from the device tree, and the client got both channels.
    assert "Xilinx AXI DMA Engine Driver Probed" in log, log[-3000:]
    assert "/dev/hostlink_dma on dma0chan0 and dma0chan1" in log
    chunks = "1048576 bytes each way in 4 chunks of 262144, every byte checked;"
    assert f"ok: single buffering: {chunks} 8 completions by interrupt, 8 DMA interrupts taken" in out[1], out[1]
    assert f"ok: double buffering: {chunks} 8 completions by interrupt, 8 DMA interrupts taken" in out[2], out[2]
    for line in ["ok: a chunk of 2097152 bytes (the client's buffers hold 1048576): EINVAL",
                 "ok: a slave error on a read (MM2S): the call ended ETIMEDOUT, xilinx_dma logged the channel's errors "
                 "['0x20'] (DMASlvErr is 0x20); the next 65536 bytes each way were clean",
                 "ok: a slave error on a write (S2MM): the call ended ETIMEDOUT, xilinx_dma logged the channel's errors "
                 "['0x20'] (DMASlvErr is 0x20); the next 65536 bytes each way were clean"]:
        assert line in out[3], out[3]
    assert "10400000.dma: driven by hostlink_dma_user" in out[5], out[5]
    assert f"ok: single buffering: {chunks}" in out[6] and "no interrupt" in out[6], out[6]
    assert f"ok: double buffering: {chunks}" in out[7] and "no interrupt" in out[7], out[7]
    for line in ["ok: a chunk of 67108864 bytes, over the DMA's 26-bit LENGTH (at most 67108863): refused",
                 # DMASR's IRQThresholdSts reads 1 (PG021); MM2S has no DMAIntErr in direct register mode.
                 "ok: an address not aligned to the bus (MM2S_SA 4 bytes off): DMASR 0x00014001 (Err_Irq Halted)",
                 "ok: a LENGTH of 0: DMASR 0x00010000 (nothing started, nothing flagged)",
                 "ok: a LENGTH written while a transfer runs (S2MM): DMASR 0x00014011 (Err_Irq DMAIntErr Halted)",
                 "ok: a slave error on a read (HP0 answers SLVERR): DMASR 0x00014021 (Err_Irq DMASlvErr Halted)",
                 "ok: a slave error on a write (HP0 answers SLVERR): DMASR 0x00014021 (Err_Irq DMASlvErr Halted)",
                 "ok: an address outside the DDR (MM2S_SA 0xfff00000: DECERR): DMASR 0x00014041 (Err_Irq DMADecErr Halted)"]:
        assert line in out[8], out[8]
    assert out[8].count("after a reset, 65536 bytes each way clean") == 6
    # The interrupt-driven steps took the DMA's interrupts; the polling ones none.
    device = [step["device"] for step in report["steps"]]
    assert device[1]["interrupts"] >= 8 and device[2]["interrupts"] >= 8
    assert device[6]["interrupts"] == device[7]["interrupts"] == 0
    assert report["bench"]["hp0_errors_answered"] == {"SLVERR": 4, "DECERR": 1}
    assert report["bench"]["outside_accesses"] == 0 and report["kernel_warnings"] == []
    check_the_charges(report)
    check_the_drivers(report)
    assert result.returncode == 0 and report["passed"], result.stdout[-3000:]


def check_the_charges(report):
    """The bridge charged every register access and interrupt it saw; the drivers' reports arrived, as many as
    their transfers imply; a polling driver's call took exactly what its CPU was charged (it never waits)."""
    bench = report["bench"]
    assert bench["charges"]["gp0_read"] == bench["mmio_reads"] and bench["charges"]["gp0_write"] == bench["mmio_writes"]
    assert bench["charges"]["interrupt"] == sum(bench["interrupts"].values())
    for name in SIM_COST_CATEGORIES:
        assert bench["charged_ns"][name] == pytest.approx(bench["charges"][name] * bench["costs_ns"][name], abs=1)
    per_step = [{name: after["charges"][name] - before["charges"][name] for name in SIM_COST_CATEGORIES}
                for before, after in zip(bench["steps"], bench["steps"][1:])]
    mib, lines = 1 << 20, (1 << 20) // 32
    # Step 1 (the client, single buffer, 1 MiB in 4 chunks): one system call, 1 MiB copied each way between
    # cached buffers, every line cleaned once (MM2S's map), invalidated twice (S2MM's map and unmap); a chunk's
    # buffer need not start on a line (kmalloc's debugging red zone): at most one more line a chunk.
    kernel = per_step[0]
    assert (kernel["syscall"], kernel["copy_cached"]) == (1, 2 * mib)
    assert lines <= kernel["cache_clean"] <= lines + 4 and 2 * lines <= kernel["cache_invalidate"] <= 2 * lines + 8
    assert kernel["copy_to_coherent"] == kernel["copy_from_coherent"] == kernel["sched_yield"] == 0
    # Step 6 (the user-level driver, single buffer): 1 MiB into the coherent buffer and out, no system call.
    user = per_step[5]
    assert (user["copy_to_coherent"], user["copy_from_coherent"], user["syscall"], user["copy_cached"]) == \
        (mib, mib, 0, 0)
    assert user["gp0_read"] == bench["steps"][6]["mmio_reads"] - bench["steps"][5]["mmio_reads"]


def check_the_drivers(report):
    """Seed 003's calls at ~100 KB moved every byte, by each driver and mode; a polling call's time is its
    charges; the three drivers rank as the cost table's closed form predicts, within 5 % of it. Two drivers
    the closed form puts within 1 % of each other (polling's and the scheduled driver's TX, which end before
    any poll matters) are a tie: their order is where a wake-up falls on the bench's 50 ns step, not a
    ranking."""
    rows = calls(report["steps"], report["bench"])
    assert len(rows) == 9 and all(r["ok"] for r in rows), rows
    assert {(r["driver"], r["mode"], r["buffers"]) for r in rows} == \
        {(d, m, b) for d in DRIVERS for m, b in (("unique", 1), ("blocks", 1), ("blocks", 2))}
    for r in rows:
        if r["driver"] == "user_polling":
            assert r["rx_ns"] == pytest.approx(sum(r["charged_ns"].values()), rel=1e-3)
        if r["driver"] == "user_scheduled" and r["buffers"] == 1:     # (Double buffered, the copy outlasts
            assert r["counts"]["sched_yield"] > 0                     # the DMA: its first poll finds it done.)
    unique = {r["driver"]: r for r in rows if r["mode"] == "unique"}
    costs = report["bench"]["costs_ns"]
    for key, index in (("tx_ns", 0), ("rx_ns", 1)):
        predicted = {d: predict(d, 102400, costs)[index] for d in DRIVERS}
        measured = {d: unique[d][key] for d in DRIVERS}
        for a in DRIVERS:
            for b in DRIVERS:
                if predicted[a] < 0.99 * predicted[b]:
                    assert measured[a] < measured[b], (key, a, b, measured, predicted)
        for d in DRIVERS:
            assert measured[d] == pytest.approx(predicted[d], rel=0.05), (key, d, measured, predicted)


@pytest.mark.uml
@needs_kernel
def test_xilinx_dma_runs_the_sg_build_with_descriptors(tmp_path):
    """The DMA in scatter-gather mode: xilinx_dma chooses SG from DMASR's SGIncld (no LENGTH is ever written),
    the client's chunks, its queued transfers (each packet over two descriptors) and a short packet's residue,
    then SGSlvErr, SGDecErr (descriptor fetches) and DMASlvErr in xilinx_dma's log, each followed by a reset
    and clean queued transfers."""
    json_path = tmp_path / "result.json"
    result = subprocess.run([sys.executable, os.path.join(REPO, "sim.py"), "driver", "--board", "zc706", "--ps7",
                             "--axi-dma-sg", "--json", str(json_path)], capture_output=True, text=True, cwd=REPO,
                            timeout=3000)
    print(result.stdout[-8000:])
    report = json.load(open(json_path))
    out = [step["output"] or "" for step in report["steps"]]
    assert "Xilinx AXI DMA Engine Driver Probed" in report["kernel_log"]
    assert report["bench"]["transfers"] == []        # No LENGTH write: every transfer from descriptors.
    chunks = "1048576 bytes each way in 4 chunks of 262144, every byte checked;"
    assert f"ok: single buffering: {chunks} 8 completions by interrupt" in out[1], out[1]
    assert f"ok: double buffering: {chunks} 8 completions by interrupt" in out[2], out[2]
    for line in ["ok: queued: 8 packets of 4096 bytes into buffers of 4096, submitted before waiting, 0 packets "
                 "wrong; 16 completions by callback, 16 cookies DMA_COMPLETE; residues [0, 0, 0, 0, 0, 0, 0, 0]",
                 "ok: queued: 4 packets of 1000 bytes into buffers of 4096, submitted before waiting, 0 packets "
                 "wrong; 8 completions by callback, 8 cookies DMA_COMPLETE; residues [3096, 3096, 3096, 3096] "
                 "(received [1000, 1000, 1000, 1000] bytes)"]:
        assert line in out[3], out[3]
    for kind, bits, name in [("read", "0x200", "SGSlvErr"), ("read-decerr", "0x400", "SGDecErr"),
                             ("write", "0x20", "DMASlvErr")]:
        assert (f"ok: HP0 answering the next {kind} burst with an error: the call ended ETIMEDOUT, xilinx_dma "
                f"logged errors ['{bits}'] ({name} is {bits}); the next 4 queued packets were clean") in out[4], out[4]
    assert report["bench"]["hp0_errors_answered"] == {"SLVERR": 2, "DECERR": 1}
    assert report["bench"]["outside_accesses"] == 0 and report["kernel_warnings"] == []
    assert result.returncode == 0 and report["passed"], result.stdout[-3000:]
