# This file is part of hostlink.
# Copyright (c) 2026 hostlink developers
# SPDX-License-Identifier: BSD-2-Clause

"""hostlink_bench (software/bench) and the driver changes it relies on (software/driver/polling.py).

Quick: the polling changes are in the generated driver and stop generation when LitePCIe's sources lose
an anchor; the tool is generated and its Makefile entry added; the plot command turns JSON into PNGs.
`uml`: the tool runs in User-Mode Linux on the simulated ZC706 and VC709 (every mode and completion
method, 1 and 2 channels, the four directions, every byte checked), as root and as a member of the
device's group (loopback; h2c refused cleanly), and a corrupted word in the device's DMA writes makes it
fail.
"""

import json
import os
import re

import pytest

from helpers import check_missing_anchor_is_refused, check_patched, generate_zc706_driver, ioctl_case, read

from hostlink.software.driver import polling as driver_polling
from hostlink.software.driver.hardening import harden_driver
from hostlink.software.driver.patches import DriverPatchError
from hostlink.software.driver.polling import add_polling
from reports import bench_plot

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


# Driver changes -----------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def generated(tmp_path_factory):
    return generate_zc706_driver(tmp_path_factory)


def test_generated_driver_polls_without_register_writes(generated):
    """Every polling change is in the generated driver; the new ioctls give no register write and no
    bus address to the caller: DMA_POLL only flips the lock holder's flags, CYCLES writes one fixed
    register (the latch), and a polled direction's counters come from a register read; the device's
    spinlock, which the MSI handler never takes, is taken with interrupts on."""
    main_c      = check_patched(os.path.join(generated, "kernel"), driver_polling.POLLING_PATCHES)
    poll_case   = ioctl_case(main_c, "LITEPCIE_IOCTL_DMA_POLL", "LITEPCIE_IOCTL_CYCLES")
    cycles_case = ioctl_case(main_c, "LITEPCIE_IOCTL_CYCLES", "LITEPCIE_IOCTL_LOCK")
    assert "litepcie_writel" not in poll_case and "litepcie_readl" not in poll_case
    # Each direction's flag is its lock holder's; a direction the caller does not hold is left as it is.
    assert "if (chan_priv->writer)\n\t\t\tchan->dma.writer_poll = m.writer;" in poll_case
    assert "if (chan_priv->reader)\n\t\t\tchan->dma.reader_poll = m.reader;" in poll_case
    assert poll_case.count("chan->dma.writer_poll = ") == poll_case.count("chan->dma.reader_poll = ") == 1
    assert re.findall(r"litepcie_writel\((\w+), (\w+),", cycles_case) == [("dev", "CSR_CYCLES_LATCH_ADDR")]
    for direction in ("writer", "reader"):
        refresh = main_c[main_c.index(f"static int hostlink_{direction}_refresh"):]
        refresh = refresh[:refresh.index("\n}\n")]
        assert "litepcie_writel" not in refresh
        assert "spin_lock(&s->lock);" in refresh
        # A failed read's all-ones is refused before any count changes, with the lock given back.
        refused = refresh[refresh.index("if ((loop_status & 0xffff) >= DMA_BUFFER_COUNT)"):]
        assert refused.index("spin_unlock(&s->lock);") < refused.index("return -EIO;") < refused.index("_hw_count")
    # The device's spinlock is taken with interrupts on, which is right only while LitePCIe's MSI
    # handler never takes it (it would deadlock on the CPU that holds it).
    handler = main_c[main_c.index("static irqreturn_t litepcie_interrupt("):]
    handler = handler[:handler.index("\n}\n")]
    assert "lock" not in handler and "litepcie_enable_interrupt" not in handler
    # (Nine: LitePCIe's, the refreshes', software/driver/removal.py's two, in release and remove, and
    # software/driver/wait.py's MSI switch for DMA_WAIT and its arming by poll(), both in process context.)
    assert "spin_lock_irqsave" not in main_c and main_c.count("spin_lock(&") == 9
    # The hardening still holds: register writes through REG need CAP_SYS_RAWIO.
    assert "if (m.is_write && !capable(CAP_SYS_RAWIO))" in main_c
    # The tool is generated next to LitePCIe's and built by their Makefile.
    user = os.path.join(generated, "user")
    assert os.path.isfile(os.path.join(user, "hostlink_bench.c"))
    makefile = read(os.path.join(user, "Makefile"))
    assert "PROGS=litepcie_util litepcie_test hostlink_bench\n" in makefile
    assert "hostlink_bench: liblitepcie/liblitepcie.a hostlink_bench.o" in makefile


@pytest.mark.parametrize("index", range(len(driver_polling.POLLING_PATCHES)))
def test_polling_refuses_when_an_anchor_is_missing(tmp_path, index):
    """A LitePCIe whose sources lost a line a polling change is anchored on stops generation, names
    the change, and leaves the sources untouched."""
    check_missing_anchor_is_refused(tmp_path, driver_polling.POLLING_PATCHES[index], add_polling, "polling change",
                                    (harden_driver,))


def test_bench_makefile_anchor_missing_is_refused(tmp_path):
    from hostlink.software import driver
    user = tmp_path / "user"
    user.mkdir()
    (user / "Makefile").write_text("PROGS=litepcie_util\n")
    with pytest.raises(DriverPatchError, match="'hostlink_bench among the user tools'.*found it 0 times "
                                               "\\('PROGS=litepcie_util litepcie_test'\\)"):
        driver._add_bench_tool(str(user))
    assert (user / "Makefile").read_text() == "PROGS=litepcie_util\n"   # Untouched.

# Plot ---------------------------------------------------------------------------------------------

def _stream(name, gbs, median_ns):
    stats = {"min": median_ns / 2, "median": median_ns, "p99": median_ns * 2}
    return {"stream": name, "transfers": 4, "bytes": 0, "bus_bytes": 0, "throughput_gbs_cycles": gbs,
            "throughput_gbs_wall": gbs / 1000, "latency_cycles": stats, "latency_ns_cycles": stats,
            "latency_ns_wall": stats}


def test_plot_one_line_per_mode_and_completion(tmp_path):
    runs = []
    for mode, completion, scale in [("zero-copy", "irq", 1.0), ("copy", "poll", 0.5)]:
        for size in (4096, 8192, 16384):
            runs.append({"mode": mode, "completion": completion, "channels": 1, "direction": "loopback",
                         "size": size, "streams": [_stream("loopback", scale * size / 16384, size / 4)]})
    data = {"tool": "hostlink_bench", "simulated": True, "runs": runs}
    lines = bench_plot.series(data)[("loopback", 1, "loopback")]
    assert sorted(lines) == ["copy poll", "zero-copy irq"]
    assert lines["copy poll"] == [(4096, 0.125, 1.024, 2.048), (8192, 0.25, 2.048, 4.096), (16384, 0.5, 4.096, 8.192)]
    path = tmp_path / "zc706.json"
    path.write_text(json.dumps(data))
    assert bench_plot.main([str(path), "--out", str(tmp_path / "png")]) == 0
    pngs = sorted(os.listdir(tmp_path / "png"))
    assert pngs == ["zc706_loopback_loopback_1ch_latency.png", "zc706_loopback_loopback_1ch_throughput.png"]
    for name in pngs:
        assert (tmp_path / "png" / name).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    bad = tmp_path / "other.json"
    bad.write_text(json.dumps({"steps": []}))
    assert bench_plot.main([str(bad), "--out", str(tmp_path / "png")]) == 1

# In User-Mode Linux -------------------------------------------------------------------------------

from hostlink.sim.uml.run import UML_KERNEL

needs_kernel = pytest.mark.skipif(not os.path.isfile(UML_KERNEL),
    reason="no User-Mode Linux kernel: `make uml-kernel`")

# Short: every mode x completion with 1 and 2 channels in loopback, and with 1 channel in each other
# direction; 8 KiB transfers (two buffers of the simulated SoC's ring, one on the VC709), 4 per channel and stream.
SHORT = ["sh", "-c",
    "hostlink_bench -m zero-copy,copy,double -c irq,poll -n 1,2 -d loopback -s 8K -t 4 -j loopback.json; "
    "a=$?; hostlink_bench -m zero-copy,copy,double -c irq,poll -d h2c,c2h,both -s 8K -t 4 -j directions.json; "
    "b=$?; exit $((a | b))"]


def _run(tmp_path, board, command, *extra):
    from hostlink.sim.driver import main as driver_main
    path = tmp_path / f"{board}.json"
    code = driver_main(["--board", board, "--json", str(path), "--command-timeout", "900", "--timeout", "1800", *extra,
                        "--", *command])
    with open(path) as f:
        result = json.load(f)
    shared = os.path.join(REPO, "build", "uml", "runs", f"{board}_dma2", "shared")
    return code, result, shared


@pytest.mark.uml
@needs_kernel
@pytest.mark.parametrize("board", ["zc706", "vc709"])
def test_bench_on_the_simulated_soc(tmp_path, board):
    code, result, shared = _run(tmp_path, board, SHORT)
    step = next(s for s in result["steps"] if "hostlink_bench" in s["command"])
    assert "simulated machine" in step["output"], step["output"][-2000:]
    runs = []
    for name in ("loopback.json", "directions.json"):
        with open(os.path.join(shared, name)) as f:
            bench = json.load(f)
        assert bench["simulated"] is True and bench["cycles_available"] is True
        assert bench["passed"] and bench["errors"] == 0
        runs += bench["runs"]
    assert len(runs) == 3 * 2 * 2 + 3 * 2 * 3
    for run in runs:
        assert run["errors"] == 0 and run["lost_buffers"] == 0 and run["failures"] == [], run
        assert run["bytes_checked"] >= run["bytes_expected"] > 0, run
        for stream in run["streams"]:
            assert stream["transfers"] == 4 * run["channels"]
            assert stream["throughput_gbs_cycles"] > 0
            assert 0 <= stream["latency_cycles"]["min"] <= stream["latency_cycles"]["median"] \
                <= stream["latency_cycles"]["p99"] < 1e9
    assert {(r["mode"], r["completion"], r["channels"]) for r in runs if r["direction"] == "loopback"} == \
        {(m, c, n) for m in ("zero-copy", "copy", "double") for c in ("irq", "poll") for n in (1, 2)}
    assert {(r["mode"], r["completion"], r["direction"]) for r in runs if r["direction"] != "loopback"} == \
        {(m, c, d) for m in ("zero-copy", "copy", "double") for c in ("irq", "poll") for d in ("h2c", "c2h", "both")}
    for run in runs:
        if run["direction"] in ("h2c", "both"):
            # The FPGA's checker judged every word of the transfers, none wrong (those the free-running reader
            # read after them, until the tool stopped it, are counted, not judged: a busy host stops it late).
            assert run["checker"][0]["errors"] == 0 and run["checker"][0]["words"] * 4 >= 4 * 8192, run
    assert result["kernel_warnings"] == []
    assert step["exit_status"] == 0 and code == 0 and result["passed"]


@pytest.mark.uml
@needs_kernel
def test_one_corrupted_word_fails_the_bench(tmp_path):
    # 20 KiB into the device's DMA writes: the loopback's sixth buffer, checked by the host.
    code, result, shared = _run(tmp_path, "zc706",
        ["hostlink_bench", "-m", "zero-copy", "-s", "8K", "-t", "4", "-j", "fault.json"],
        "--inject-fault", str(20 << 10))
    assert result["bench"]["faults_injected"] == 1
    with open(os.path.join(shared, "fault.json")) as f:
        bench = json.load(f)
    assert bench["errors"] == 1 and not bench["passed"]
    step = next(s for s in result["steps"] if "hostlink_bench" in s["command"])
    assert "c2h buffer 5, word 0" in step["output"]
    assert step["exit_status"] == 1 and code == 1 and not result["passed"]


# As a member of the group `hostlink`, not root: loopback with both completions, every mode; h2c (the
# checker's registers) refused; the channel usable again afterwards.
MEMBER = ["python3", os.path.join(REPO, "sim", "uml", "guest", "as_member.py"), "member", "--", "sh", "-c",
    "hostlink_bench -m zero-copy,copy,double -c poll,irq -s 8K -t 4 -j loopback.json; a=$?; "
    "timeout -s KILL 300 hostlink_bench -d h2c -s 8K:16K -t 4 -j h2c.json; b=$?; "
    "hostlink_bench -m zero-copy -c poll -s 4K -t 2 -j after.json; c=$?; "
    "echo \"exit: loopback $a, h2c $b, after $c\"; [ $a = 0 ] && [ $b = 1 ] && [ $c = 0 ]"]


@pytest.mark.uml
@needs_kernel
def test_bench_as_a_group_member(tmp_path):
    code, result, shared = _run(tmp_path, "zc706", MEMBER)
    step = next(s for s in result["steps"] if "as_member.py" in s["command"])
    output = step["output"]
    assert "group member (uid 1000, groups 4242, not root)" in output, output[-3000:]
    assert "exit: loopback 0, h2c 1, after 0" in output, output[-3000:]
    member = os.path.join(shared, "member")
    assert os.stat(member).st_uid == 1000
    with open(os.path.join(member, "loopback.json")) as f:
        loopback = json.load(f)
    assert loopback["passed"] and loopback["errors"] == 0 and loopback["cycles_available"] is True
    assert {(r["mode"], r["completion"]) for r in loopback["runs"]} == \
        {(m, c) for m in ("zero-copy", "copy", "double") for c in ("irq", "poll")}
    for run in loopback["runs"]:
        assert run["errors"] == 0 and run["bytes_checked"] >= run["bytes_expected"] > 0, run
    # h2c: the checker's clear is a register write, refused with EPERM; the sweep stops at its first run.
    with open(os.path.join(member, "h2c.json")) as f:
        h2c = json.load(f)
    assert not h2c["passed"] and [r["size"] for r in h2c["runs"]] == [8 << 10]
    assert "Operation not permitted" in h2c["runs"][0]["failures"][0]
    assert "CAP_SYS_RAWIO" in output and "stopping" in output
    with open(os.path.join(member, "after.json")) as f:
        assert json.load(f)["passed"]
    assert result["kernel_warnings"] == []
    assert step["exit_status"] == 0 and code == 0 and result["passed"]
