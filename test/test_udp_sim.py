# This file is part of hostlink.
# Copyright (c) 2026 hostlink developers
# SPDX-License-Identifier: BSD-2-Clause

"""./sim.py udp: the UDP core's Verilator model against the Linux network stack.

One Verilator model per mode (generator, echo) is built for the whole module and reused; every
run happens in a private network namespace that the run creates and deletes. The kernel is the
judge: every frame must reach the socket (no IP/UDP error counter moves), every payload must carry
the generator's pattern, and every echo must come back intact.
"""

import json
import os
import signal
import subprocess
import sys
import time

import pytest

from hostlink.cores.udp.common import HEADER_LEN
from hostlink.sim import udp
from hostlink.sim.netns import NetNamespace, unavailable_reason
from hostlink.sim.udp.soc import WIRE_OVERHEAD, wire_cycles

from helpers import refusal

GEN_PAYLOADS  = [0, 1, 3, 4, 17, 18, 512, 1471, 1472]
GEN_COUNT     = 40
ECHO_PAYLOADS = [0, 1, 18, 1472]
SIM_PY        = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "sim.py")
ECHO_COUNT    = 20
# Not the defaults, to show the addresses reach the gateware and the namespace.
ECHO_ADDRESSES = ["--fpga-ip", "192.168.77.20", "--host-ip", "192.168.77.1", "--port", "40000"]

REQUIRED_FIELDS = ["sent", "received", "lost", "bad_payload", "cycles_per_packet", "goodput_mbytes_per_s",
                   "kernel_counters_before", "kernel_counters_after"]
KERNEL_COUNTERS = ["Ip.InHdrErrors", "Ip.InAddrErrors", "Udp.InCsumErrors", "Udp.NoPorts", "Udp.RcvbufErrors"]

# Fixtures -----------------------------------------------------------------------------------------

def needs_tap():
    reason = unavailable_reason()
    if reason is not None:
        pytest.skip(reason)


def run_sim(tmp_dir, name, args):
    """Runs ./sim.py udp in its own process, as a user would; returns (exit code, report, stdout).

    A fresh process also generates the same Verilog every time (migen's automatic names depend on
    what a process elaborated before), which is what lets later runs reuse the compiled model.
    """
    json_path = os.path.join(tmp_dir, f"{name}.json")
    r = subprocess.run([sys.executable, SIM_PY, "udp"] + args +
                       ["--build-dir", os.path.join(tmp_dir, "build"), "--json", json_path, "--timeout", "60"],
                       capture_output=True, text=True, timeout=600)
    assert os.path.exists(json_path), r.stdout + r.stderr
    with open(json_path) as f:
        report = json.load(f)
    if r.returncode != 0:
        print(r.stdout + r.stderr)  # Shown by pytest when an assertion on the run fails.
    return r.returncode, report, r.stdout


@pytest.fixture(scope="module")
def sim_dirs(tmp_path_factory):
    """Each mode's directory for the module's runs, which keeps its compiled model."""
    needs_tap()
    return {mode: str(tmp_path_factory.mktemp(f"sim_udp_{mode}")) for mode in ("generator", "echo")}


@pytest.fixture(scope="module")
def gen(sim_dirs):
    return run_sim(sim_dirs["generator"], "generator", ["--payload", ",".join(map(str, GEN_PAYLOADS)),
                                                        "--count", str(GEN_COUNT)])


@pytest.fixture(scope="module")
def echo(sim_dirs):
    # Eight requests in flight: they reach the core back to back at wire pace (payloads under
    # 4 bytes carry no sequence number, so the run sends those one at a time).
    return run_sim(sim_dirs["echo"], "echo", ["--mode", "echo", "--payload", ",".join(map(str, ECHO_PAYLOADS)),
                                              "--count", str(ECHO_COUNT), "--window", "8"] + ECHO_ADDRESSES)

# Generator ----------------------------------------------------------------------------------------

@pytest.mark.sim
def test_generator_run_succeeds_and_reports_every_size(gen):
    rc, report, _ = gen
    assert rc == 0
    assert report["mode"] == "generator" and report["board"] == "colorlight_i5"
    assert [r["payload"] for r in report["results"]] == GEN_PAYLOADS
    for r in report["results"]:
        for field in REQUIRED_FIELDS:
            assert field in r, field
        assert sorted(r["kernel_counters_before"]) == sorted(KERNEL_COUNTERS)


@pytest.mark.sim
def test_generator_every_packet_received_with_its_pattern(gen):
    _, report, _ = gen
    for r in report["results"]:
        host = r["host"]
        assert r["sent"] == r["received"] == GEN_COUNT, r["payload"]
        assert r["lost"] == 0 and r["bad_payload"] == 0
        assert host["payload_checked"] is True
        assert host["min_payload"] == host["max_payload"] == r["payload"]
        assert host["duplicates"] == host["reordered"] == host["gaps"] == host["out_of_range"] == 0
        assert r["core_counters"]["tx_sent"] == GEN_COUNT
        assert r["core_counters"]["tx_refused"] == r["core_counters"]["tx_mismatch"] == 0
        # A receiver the host's scheduler leaves waiting must not lose frames to a full socket buffer.
        assert host["receive_buffer_bytes"] >= udp.session.RECEIVE_BUFFER_BYTES


@pytest.mark.sim
def test_generator_kernel_accepts_every_frame(gen):
    _, report, _ = gen
    for r in report["results"]:
        assert all(v == 0 for v in r["kernel_errors"].values()), (r["payload"], r["kernel_errors"])
        assert r["kernel_counters_after"] == r["kernel_counters_before"]


@pytest.mark.sim
def test_generator_runs_at_line_rate(gen):
    _, report, _ = gen
    # Cycles are the data plane's (the clock that paces the frames); CSRs run at the board's sys clock.
    eth_clk_freq = report["eth_clk_freq"]
    assert report["sys_clk_freq"] < eth_clk_freq
    assert report["wire_overhead_bytes"] == WIRE_OVERHEAD == 24
    for r in report["results"]:
        # Back to back: each frame takes exactly its wire time, padding included, no bubble.
        assert r["cycles_per_packet"] == wire_cycles(HEADER_LEN + r["payload"]), r["payload"]
        assert r["wire_bubbles"] == 0 and r["model_rx_overflows"] == 0
        assert r["frames_on_wire"] == GEN_COUNT
        assert r["wire_bytes"] == GEN_COUNT * max(HEADER_LEN + r["payload"], 60)
    big = report["results"][-1]
    assert big["payload"] == 1472 and eth_clk_freq == 125e6
    assert big["cycles_per_packet"] == 1538
    assert big["goodput_mbytes_per_s"] == pytest.approx(119.636, abs=1e-3)


@pytest.mark.sim
def test_generator_model_is_reused(gen, sim_dirs):
    assert "compiling the Verilator model" in gen[2]
    rc, report, out = run_sim(sim_dirs["generator"], "again", ["--payload", "1472", "--count", "5"])
    assert "reusing the Verilator model" in out and "compiling" not in out
    assert rc == 0 and report["results"][0]["received"] == 5

# Echo ---------------------------------------------------------------------------------------------

@pytest.mark.sim
def test_echo_run_succeeds_with_arp_from_the_core(echo):
    rc, report, _ = echo
    assert rc == 0
    assert report["fpga_ip"] == "192.168.77.20" and report["port"] == 40000
    # The host had no static ARP entry: it learnt the FPGA's MAC from the core's responder.
    assert report["arp"]["ok"] is True
    assert report["arp"]["learnt"] == report["arp"]["fpga_mac"]


@pytest.mark.sim
def test_echo_every_echo_correct(echo):
    _, report, _ = echo
    assert [r["payload"] for r in report["results"]] == ECHO_PAYLOADS
    for r in report["results"]:
        assert r["sent"] == r["received"] == r["echoed_ok"] == ECHO_COUNT, r["payload"]
        assert r["lost"] == r["bad_payload"] == 0
        assert r["host"]["duplicates"] == r["host"]["unexpected"] == 0
        assert r["core_counters"]["rx_received"] == r["core_counters"]["tx_sent"] == ECHO_COUNT
        assert r["wire_bubbles"] == 0 and r["model_rx_overflows"] == 0
        assert all(v == 0 for v in r["kernel_errors"].values()), (r["payload"], r["kernel_errors"])


@pytest.mark.sim
def test_echo_one_request_at_a_time(echo, sim_dirs):
    rc, report, out = run_sim(sim_dirs["echo"], "window", ["--mode", "echo", "--payload", "18,1472", "--count", "30",
                                                           "--window", "1"] + ECHO_ADDRESSES)
    assert rc == 0 and "reusing the Verilator model" in out
    for r in report["results"]:
        assert r["echoed_ok"] == 30 and r["lost"] == 0
        assert all(v == 0 for v in r["kernel_errors"].values())

# Namespaces ---------------------------------------------------------------------------------------

def netns_names():
    out = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True, check=True).stdout
    return [l.split()[0] for l in out.splitlines() if l.strip()]


def processes_under(directory):
    """Running processes whose command line names a file under `directory` (simulator, tool)."""
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                cmdline = f.read().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if directory in cmdline and "sim.py" not in cmdline:
            found.append(cmdline)
    return found


def endless_run(gen_dir):
    """The command of a ./sim.py udp run far too long to finish, on the generator's model."""
    return [sys.executable, SIM_PY, "udp", "--payload", "1472", "--count", "10000000",
            "--build-dir", os.path.join(gen_dir, "build")]


def namespace_once_flowing(p):
    """The network namespace of the run `p` (started with endless_run()), read once its traffic flows."""
    out = ""
    while "packets of 1472 bytes" not in out:
        line = p.stdout.readline()
        assert line, out
        out += line
    return out.split("namespace ")[1].split(",")[0]


def wait_for_children_under(directory, names, timeout=120):
    """Waits until processes_under(directory) are exactly one process each of `names` (by the program's
    file name), every one past `ip netns exec` and `setpriv`."""
    deadline = time.monotonic() + timeout
    while True:
        programs = sorted(os.path.basename(cmdline.split()[0]) for cmdline in processes_under(directory))
        if programs == sorted(names):
            return
        assert time.monotonic() < deadline, f"after {timeout} s, the processes under {directory} are {programs}"
        time.sleep(0.05)


@pytest.mark.sim
def test_runs_leave_no_namespace(gen, echo):
    for _, report, _ in (gen, echo):
        assert report["namespace"].startswith("hlsimudp-")
        assert report["namespace"] not in netns_names()


def test_processes_in_a_deleted_namespace_are_ended():
    needs_tap()
    with NetNamespace("hlsimudp") as ns:
        sleeper = ns.popen(["sleep", "600"])
        # `ip netns exec` enters the namespace, then becomes `sleep`: on a loaded machine that takes a while.
        deadline = time.monotonic() + 30
        while ns.pids() != [sleeper.pid] and time.monotonic() < deadline:
            time.sleep(0.05)
        assert ns.pids() == [sleeper.pid]
    assert sleeper.wait(timeout=5) == -signal.SIGTERM


@pytest.mark.sim
@pytest.mark.parametrize("signame", ["SIGINT", "SIGTERM"])
def test_interrupted_run_stops_the_simulator_and_deletes_its_namespace(gen, sim_dirs, signame):
    gen_dir = sim_dirs["generator"]
    # A run far too long to finish, stopped once traffic flows; as Ctrl-C does, SIGINT goes to the
    # whole process group (simulator and host tool included).
    # A shell without job control starts background commands with SIGINT ignored, and children inherit
    # that (e.g. `make test &` in a script): restore the default, as an interactive terminal has it.
    p = subprocess.Popen(endless_run(gen_dir), start_new_session=True, stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT, text=True,
                         preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        name = namespace_once_flowing(p)
        assert name in netns_names()
        if signame == "SIGINT":
            os.killpg(p.pid, signal.SIGINT)
        else:
            p.terminate()
        rest, _ = p.communicate(timeout=60)
    finally:
        if p.poll() is None:
            os.killpg(p.pid, signal.SIGKILL)
            p.wait()
    assert p.returncode == (130 if signame == "SIGINT" else 128 + signal.SIGTERM)
    assert name not in netns_names()
    assert processes_under(gen_dir) == []


@pytest.mark.sim
def test_killed_run_leaves_no_process(gen, sim_dirs):
    gen_dir = sim_dirs["generator"]
    # SIGKILL leaves no chance to clean up: the simulator and the tool die with their parent, and
    # only the namespace's name remains, empty, for the next cleanup.
    p = subprocess.Popen(endless_run(gen_dir), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    name = namespace_once_flowing(p)
    # The line comes just before the host tool starts, and a child only dies with its parent once setpriv
    # has set its parent-death signal and become the child (`ip netns exec ... setpriv ... hostlink-udp`).
    # A busy machine can delay that past any fixed wait: wait until both children are themselves.
    wait_for_children_under(gen_dir, ("Vsim", "hostlink-udp"))
    p.kill()
    p.wait()
    try:
        deadline = time.monotonic() + 30
        while processes_under(gen_dir) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert processes_under(gen_dir) == []
        assert subprocess.run(["ip", "netns", "pids", name], capture_output=True, text=True).stdout == ""
    finally:
        subprocess.run(["ip", "netns", "del", name], capture_output=True)


def test_namespace_is_deleted_on_error():
    needs_tap()
    with pytest.raises(RuntimeError, match="boom"):
        with NetNamespace("hlsimudp") as ns:
            name = ns.name
            assert name in netns_names()
            raise RuntimeError("boom")
    assert name not in netns_names()

# Arguments ----------------------------------------------------------------------------------------

def test_summary_names_the_kernel_counters_that_moved(capsys):
    row = {"payload": 1472, "sent": 100, "received": 93, "lost": 7, "bad_payload": 0, "cycles_per_packet": 1538.0,
           "goodput_mbytes_per_s": 119.6, "line_limit_mbytes_per_s": 119.6,
           "kernel_errors": {"Udp.RcvbufErrors": 7, "Udp.InCsumErrors": 0}}
    udp.cli.print_summary([row], "colorlight_i5", 125e6, 50e6, "generator")
    assert "kernel errors at 1472 bytes: Udp.RcvbufErrors 7\n" in capsys.readouterr().out


@pytest.mark.parametrize("args, message", [
    (["--payload", "1473"],             "payload size must be in 0..1472 (MTU 1500 - 28), not 1473"),
    (["--payload", "18,x"],             "payload sizes must be integers, not 'x'"),
    (["--count", "0"],                  "must be in 1..10000000, not 0"),
    (["--port", "70000"],               "must be in 1..65535, not 70000"),
    (["--board", "arty"],               "invalid choice: 'arty'"),
    (["--mode", "loopback"],            "invalid choice: 'loopback'"),
])
def test_bad_arguments_are_refused(capsys, args, message):
    assert message in refusal(udp.main, args, capsys)


@pytest.mark.parametrize("args, message", [
    (["--fpga-ip", "10.0.0.1"],                          "--fpga-ip and --host-ip must differ"),
    (["--fpga-ip", "10.0.1.50"],                         "must be in the TAP's network 10.0.0.0/24"),
    (["--fpga-ip", "10.0.0.255"],                        "network or broadcast address"),
    (["--fpga-ip", "224.0.0.5", "--host-ip", "224.0.0.1"], "--fpga-ip must be a unicast IPv4 address"),
    (["--host-ip", "10.0.0"],                            "--host-ip must be a dotted IPv4 address"),
    (["--timeout", "0"],                                 "--timeout must be positive"),
])
def test_bad_addresses_are_refused(capsys, args, message):
    assert udp.main(args) == 2
    assert message in capsys.readouterr().err
