# This file is part of hostlink.
# Copyright (c) 2026 hostlink developers
# SPDX-License-Identifier: BSD-2-Clause

"""./sim.py udp: the UDP core in a Verilator model, against the Linux network stack.

The Ethernet SoC (hostlink's UDPCore on LiteX's simulated Ethernet) runs inside a network
namespace created for the run; its PHY is a TAP device in that namespace, and `hostlink-udp`
receives (or echoes) through a real kernel UDP socket there. The namespace is deleted at the end,
also on errors and Ctrl-C, and holds only `lo` and the TAP device: no frame can leave it.

Time is simulated time: the SoC counts the cycles its frames occupy on a 1 Gb/s wire (preamble,
SFD, FCS, inter-frame gap and padding included), and goodput is payload bytes per simulated second
at the board's clock. Wall-clock figures of the host tool are not used.
"""

import argparse
import ipaddress
import json
import logging
import math
import os
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

from hostlink.cores.udp.common import HEADER_LEN, max_payload_for_mtu, DEFAULT_MTU, mac_to_int, ip_to_int
from hostlink.sim.netns import NetNamespace, unavailable_reason, kernel_error_counters
from hostlink.sim.progress import Progress
from hostlink.sim.watchdog import OneLineArgumentParser

# Defaults -----------------------------------------------------------------------------------------

REPO_DIR      = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TOOL_SRC_DIR  = os.path.join(REPO_DIR, "software", "udp")

DEFAULT_FPGA_IP   = "10.0.0.50"
DEFAULT_HOST_IP   = "10.0.0.1"
DEFAULT_PORT      = 1234
DEFAULT_PAYLOADS  = [18, 512, 1472]
DEFAULT_COUNT     = 1000
TAP_MAC           = "aa:b6:24:69:77:21" # Fixed by LiteX's ethernet simulator module.
TAP_NAME          = "hltap0"
CONTROL_PORT      = 2430                # serial2tcp, on the namespace's loopback.
MAX_PAYLOAD       = max_payload_for_mtu(DEFAULT_MTU)

# Control (UARTBone over serial2tcp) ---------------------------------------------------------------

CLONE_NEWNET = 0x40000000


def connect_in_netns(netns, port, timeout):
    """A TCP connection to 127.0.0.1:port inside `netns`, made from a helper thread.

    setns() moves only the calling thread, so the thread enters the namespace, connects and ends;
    the socket stays in the namespace it was created in and is used from the main thread.
    """
    import ctypes
    libc   = ctypes.CDLL(None, use_errno=True)
    result = {}

    def worker():
        try:
            fd = os.open(f"/run/netns/{netns.name}", os.O_RDONLY)
            try:
                if libc.setns(fd, CLONE_NEWNET) != 0:
                    raise OSError(ctypes.get_errno(), "setns into the simulation's namespace failed")
            finally:
                os.close(fd)
            deadline = time.monotonic() + timeout
            while True:
                try:
                    result["sock"] = socket.create_connection(("127.0.0.1", port), timeout=timeout)
                    return
                except ConnectionRefusedError:
                    if time.monotonic() > deadline:
                        raise
                    time.sleep(0.05)
        except BaseException as e:
            result["error"] = e

    t = threading.Thread(target=worker)
    t.start()
    t.join()
    if "error" in result:
        raise RuntimeError(f"cannot reach the simulation's control port {port}: {result['error']}")
    return result["sock"]


class CSRClient:
    """CSR reads and writes through LiteX's UARTBone protocol."""
    CMD_WRITE = 0x01
    CMD_READ  = 0x02

    def __init__(self, sock, csrs, timeout):
        self.sock = sock
        self.csrs = csrs
        self.sock.settimeout(timeout)

    def _addr(self, name):
        if name not in self.csrs:
            raise KeyError(f"the simulated SoC has no CSR {name!r}")
        return self.csrs[name]

    def write(self, name, value):
        addr, size = self._addr(name)
        words = [(value >> (32 * (size - 1 - i))) & 0xffffffff for i in range(size)]
        msg = bytes([self.CMD_WRITE, size]) + (addr // 4).to_bytes(4, "big")
        msg += b"".join(w.to_bytes(4, "big") for w in words)
        self.sock.sendall(msg)

    def read(self, name):
        addr, size = self._addr(name)
        self.sock.sendall(bytes([self.CMD_READ, size]) + (addr // 4).to_bytes(4, "big"))
        data = b""
        while len(data) < 4 * size:
            chunk = self.sock.recv(4 * size - len(data))
            if not chunk:
                raise RuntimeError("the simulation closed its control connection")
            data += chunk
        value = 0
        for i in range(size):
            value = (value << 32) | int.from_bytes(data[4 * i:4 * i + 4], "big")
        return value

# Host tool ----------------------------------------------------------------------------------------

def build_tool(out_dir):
    r = subprocess.run(["make", "-s", "-C", TOOL_SRC_DIR, f"O={out_dir}"], capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"building hostlink-udp failed:\n{r.stdout}{r.stderr}")
    return os.path.join(out_dir, "hostlink-udp")


def start_tool(netns, argv):
    """Starts hostlink-udp in the namespace; returns once its socket is bound."""
    r, w = os.pipe()
    proc = netns.popen(list(argv) + ["--ready-fd", w, "--quiet"], pass_fds=(w,),
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    os.close(w)
    try:
        with os.fdopen(r) as ready:
            line = ready.readline()
    except BaseException:
        # Interrupted before the tool was handed over: nobody else would stop it.
        proc.kill()
        proc.wait()
        raise
    if line != "ready\n":
        out, err = proc.communicate()
        raise RuntimeError(f"hostlink-udp did not start: {err.strip() or out.strip()}")
    return proc


def finish_tool(proc, json_path, timeout):
    try:
        _, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        raise RuntimeError("hostlink-udp did not stop by itself")
    if proc.returncode not in (0, 1):
        raise RuntimeError(f"hostlink-udp failed ({proc.returncode}): {err.strip()}")
    with open(json_path) as f:
        return json.load(f)

# Simulation session -------------------------------------------------------------------------------

class Simulation:
    """The Verilator model running in a namespace, with its control connection."""
    def __init__(self, netns, gateware, csrs, host_ip, log_path, timeout):
        self.netns    = netns
        self.gateware = gateware
        self.host_ip  = host_ip
        self.log      = open(log_path, "w")
        self.proc     = None
        self.csr      = None
        self.timeout  = timeout
        self.csrs     = csrs

    def start(self):
        # No IPv6 on the TAP: router solicitations would only be dropped by the FPGA.
        for key in ("net.ipv6.conf.all.disable_ipv6", "net.ipv6.conf.default.disable_ipv6"):
            self.netns.run(["sysctl", "-q", "-w", f"{key}=1"])
        self.proc = self.netns.popen([os.path.join(self.gateware, "obj_dir", "Vsim")], cwd=self.gateware,
                                     stdin=subprocess.DEVNULL, stdout=self.log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + self.timeout
        while True:
            if self.proc.poll() is not None:
                raise RuntimeError(f"the simulator exited ({self.proc.returncode}); see {self.log.name}")
            r = self.netns.run(["ip", "-4", "-o", "addr", "show", "dev", TAP_NAME])
            if self.host_ip in r.stdout:
                break
            if time.monotonic() > deadline:
                raise RuntimeError(f"the simulator's TAP device did not come up; see {self.log.name}")
            time.sleep(0.05)
        sock = connect_in_netns(self.netns, CONTROL_PORT, self.timeout)
        self.csr = CSRClient(sock, self.csrs, self.timeout)
        if self.csr.read("ctrl_scratch") != 0x12345678:
            raise RuntimeError("the simulated SoC's control bus answers wrongly (ctrl_scratch)")

    def stop(self):
        if self.csr is not None:
            self.csr.sock.close()
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.log.close()

    def counters(self):
        """UDPCore's event counters (frames sent, refused, received, dropped by reason, ...)."""
        names = [n for n in self.csrs if n.startswith("udp_") and
                 n[4:].startswith(("tx_", "rx_", "arp_"))]
        return {name[4:]: self.csr.read(name) for name in names}

    def wire(self):
        return {
            "frames":  self.csr.read("ethphy_frames"),
            "bytes":   self.csr.read("ethphy_bytes"),
            "cycles":  self.csr.read("ethphy_cycles"),
            "bubbles": self.csr.read("ethphy_bubbles"),
            "rx_overflows": self.csr.read("ethphy_rx_overflows"),
        }

    def wire_idle(self):
        return self.csr.read("ethphy_status") & 1 == 0

    def wait_until(self, what, predicate, timeout, on_poll=None):
        deadline = time.monotonic() + timeout
        while not predicate():
            if on_poll is not None:
                on_poll()
            if self.proc.poll() is not None:
                raise RuntimeError(f"the simulator exited while waiting for {what}; see {self.log.name}")
            if time.monotonic() > deadline:
                raise RuntimeError(f"timed out after {timeout} s waiting for {what}")
            time.sleep(0.02)


def snmp_errors(netns):
    return kernel_error_counters(netns.snmp())


def resolve_fpga_mac(netns, tool, fpga_ip, port, timeout):
    """Lets the kernel ARP for the FPGA (the core's responder answers) and returns the MAC it learnt.

    The datagram that triggers the request goes to a port the FPGA does not serve, so it is
    dropped there and nothing comes back.
    """
    netns.run([tool, "send", "--dest", fpga_ip, "--port", port, "--count", 1, "--payload", 0, "--quiet"])
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        out = netns.run(["ip", "neigh", "show", fpga_ip, "dev", TAP_NAME]).stdout.split()
        if "lladdr" in out:
            return out[out.index("lladdr") + 1]
        time.sleep(0.05)
    return None


def result_record(payload, sent, received, bad_payload, wire, eth_clk_freq, before, after,
                  counters_before, counters_after, extra):
    frames = wire["frames"]
    cpp    = wire["cycles"] / frames if frames else None
    record = {
        "payload":              payload,
        "sent":                 sent,
        "received":             received,
        "lost":                 sent - received,
        "bad_payload":          bad_payload,
        "frames_on_wire":       frames,
        "wire_bytes":           wire["bytes"],
        "wire_cycles":          wire["cycles"],
        "wire_bubbles":         wire["bubbles"],
        "model_rx_overflows":   wire["rx_overflows"],
        "cycles_per_packet":    cpp,
        "goodput_mbytes_per_s": payload * eth_clk_freq / cpp / 1e6 if cpp else 0.0,
        "line_limit_mbytes_per_s": payload * eth_clk_freq / wire_cycles_for(payload) / 1e6,
        "kernel_counters_before": before,
        "kernel_counters_after":  after,
        "kernel_errors":        {k: after[k] - before[k] for k in before},
        "core_counters":        {k: counters_after[k] - counters_before[k] for k in counters_before},
    }
    record.update(extra)
    return record


def wire_cycles_for(payload):
    from hostlink.sim.udp_soc import wire_cycles
    return wire_cycles(HEADER_LEN + payload)


class RowProgress:
    """The status line of a generator row on a terminal (sim/progress.py): frames on the wire against the
    row's count, simulated cycles per wall-clock second, and the time left for this row and the rows after it
    at that speed, from the monitor's counters."""
    def __init__(self, progress, row, rows, payloads_after, count):
        self.progress = progress
        self.row, self.rows = row, rows
        self.payloads_after = payloads_after
        self.count = count
        self.first = None

    def __call__(self, sim, payload):
        if not self.progress.due():
            return
        frames, cycles = sim.csr.read("ethphy_frames"), sim.csr.read("ethphy_cycles")
        now  = time.monotonic()
        rate = left = None
        if self.first is None or cycles < self.first[1]:
            self.first = (now, cycles)
        elif now > self.first[0] and cycles > self.first[1]:
            rate = (cycles - self.first[1]) / (now - self.first[0])
            remaining = (max(self.count - frames, 0) * wire_cycles_for(payload) +
                         sum(self.count * wire_cycles_for(p) for p in self.payloads_after))
            left = remaining / rate
        self.progress.show(f"row {self.row}/{self.rows} ({payload}-byte payload, frame {frames}/{self.count})",
            rate, left)


def run_generator(sim, netns, tool, args, payload, eth_clk_freq, tmpdir, row_progress=None):
    json_path = os.path.join(tmpdir, f"recv_{payload}.json")
    tool_timeout = args.timeout
    proc = start_tool(netns, [tool, "recv", "--port", args.port, "--expect", args.count,
                              "--timeout", tool_timeout, "--json", json_path])
    try:
        before          = snmp_errors(netns)
        counters_before = sim.counters()
        sim.csr.write("ethphy_control", 1)
        sim.csr.write("udp_gen_count",  args.count)
        sim.csr.write("udp_gen_length", payload)
        sim.csr.write("udp_gen_gap",    0)
        sim.csr.write("udp_gen_control", 1)
        # Done once the generator is idle and the last frame's wire time is over.
        sim.wait_until(f"{args.count} frames of {payload} bytes on the wire",
                       lambda: sim.csr.read("udp_gen_status") & 1 == 0 and sim.wire_idle() and
                               sim.csr.read("ethphy_frames") >= args.count,
                       args.timeout, on_poll=row_progress and (lambda: row_progress(sim, payload)))
        recv = finish_tool(proc, json_path, tool_timeout + 10)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    wire            = sim.wire()
    counters_after  = sim.counters()
    after           = snmp_errors(netns)
    return result_record(payload,
        sent            = wire["frames"],
        received        = recv["unique"],
        bad_payload     = recv["bad_payload"],
        wire            = wire,
        eth_clk_freq    = eth_clk_freq,
        before          = before,
        after           = after,
        counters_before = counters_before,
        counters_after  = counters_after,
        extra           = {"generated": sim.csr.read("udp_gen_sent"), "host": recv},
    )


def run_echo(sim, netns, tool, args, payload, eth_clk_freq, tmpdir):
    json_path = os.path.join(tmpdir, f"echo_{payload}.json")
    before          = snmp_errors(netns)
    counters_before = sim.counters()
    sim.csr.write("ethphy_control", 1)
    # Short payloads carry no sequence number: one at a time keeps their echoes in order.
    window = 1 if payload < 4 else args.window
    r = netns.run([tool, "echo-client", "--dest", args.fpga_ip, "--port", args.port,
                   "--count", args.count, "--payload", payload, "--window", window,
                   # The model never drops on its own, but a loaded machine may run it slowly:
                   # an echo counts as lost only when the whole run's time is up.
                   "--echo-wait", args.timeout,
                   "--timeout", args.timeout, "--json", json_path, "--quiet"],
                  timeout=args.timeout + 10)
    if r.returncode not in (0, 1):
        raise RuntimeError(f"hostlink-udp echo-client failed ({r.returncode}): {r.stderr.strip()}")
    with open(json_path) as f:
        echo = json.load(f)
    sim.wait_until("the end of the last echo's wire time", sim.wire_idle, args.timeout)
    wire           = sim.wire()
    counters_after = sim.counters()
    after          = snmp_errors(netns)
    return result_record(payload,
        sent            = echo["sent"],
        received        = echo["echoed_ok"] + echo["bad_payload"],
        bad_payload     = echo["bad_payload"],
        wire            = wire,
        eth_clk_freq    = eth_clk_freq,
        before          = before,
        after           = after,
        counters_before = counters_before,
        counters_after  = counters_after,
        extra           = {"echoed_ok": echo["echoed_ok"], "paced_by": "host", "host": echo},
    )

# Arguments ----------------------------------------------------------------------------------------

def payload_list(text):
    sizes = []
    for item in text.split(","):
        item = item.strip()
        try:
            size = int(item)
        except ValueError:
            raise argparse.ArgumentTypeError(f"payload sizes must be integers, not {item!r}") from None
        if not 0 <= size <= MAX_PAYLOAD:
            raise argparse.ArgumentTypeError(
                f"payload size must be in 0..{MAX_PAYLOAD} (MTU {DEFAULT_MTU} - 28), not {size}")
        sizes.append(size)
    if not sizes:
        raise argparse.ArgumentTypeError("give at least one payload size")
    return sizes


def positive_int(limit):
    def parse(text):
        try:
            v = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"must be an integer, not {text!r}") from None
        if not 1 <= v <= limit:
            raise argparse.ArgumentTypeError(f"must be in 1..{limit}, not {v}")
        return v
    return parse


def parser():
    from hostlink.sim.udp_soc import BOARDS
    p = OneLineArgumentParser(prog="./sim.py udp",
        description="Verilator model of the UDP core against the Linux network stack, in a private "
                    "network namespace (needs root, /dev/net/tun and iproute2).")
    p.add_argument("--board",   default="colorlight_i5", choices=BOARDS,
                   help="board whose clock and core configuration to simulate (the PHY is the sim model)")
    p.add_argument("--fpga-ip", default=DEFAULT_FPGA_IP, help="FPGA address (inside the namespace only)")
    p.add_argument("--host-ip", default=DEFAULT_HOST_IP, help="host (TAP) address, same /24 as --fpga-ip")
    p.add_argument("--port",    default=DEFAULT_PORT, type=positive_int(65535),
                   help="UDP port of the FPGA and of the host")
    p.add_argument("--payload", default=DEFAULT_PAYLOADS, type=payload_list,
                   help=f"comma-separated payload sizes (0..{MAX_PAYLOAD}, default 18,512,1472)")
    p.add_argument("--count",   default=DEFAULT_COUNT, type=positive_int(10**7),
                   help=f"packets per payload size (default {DEFAULT_COUNT})")
    p.add_argument("--mode",    default="generator", choices=["generator", "echo"],
                   help="generator: FPGA to host rate test; echo: host sends, FPGA echoes")
    p.add_argument("--window",  default=8, type=positive_int(4096),
                   help="echo mode: packets in flight (default 8)")
    p.add_argument("--timeout", default=120.0, type=float,
                   help="seconds of wall-clock time allowed per payload size (default 120); the whole "
                        "run is stopped after RUN_BUILD_ALLOWANCE + timeout x (payload sizes + 2) seconds")
    p.add_argument("--json",    default=None, help="write the results as JSON to this path")
    p.add_argument("--build-dir", default=None,
                   help="build directory (default build/sim_udp/<board>_<mode>); reused when the "
                        "generated Verilog is unchanged")
    return p


def check_addresses(args):
    ip_to_int(args.fpga_ip, "--fpga-ip")
    ip_to_int(args.host_ip, "--host-ip")
    fpga = ipaddress.IPv4Address(args.fpga_ip)
    host = ipaddress.IPv4Address(args.host_ip)
    net  = ipaddress.IPv4Network(f"{host}/24", strict=False)
    if fpga == host:
        raise ValueError(f"--fpga-ip and --host-ip must differ, both are {fpga}")
    if fpga not in net:
        raise ValueError(f"--fpga-ip {fpga} must be in the TAP's network {net} (--host-ip/24)")
    if fpga in (net.network_address, net.broadcast_address):
        raise ValueError(f"--fpga-ip {fpga} is the network or broadcast address of {net}")

# Main ---------------------------------------------------------------------------------------------

def print_summary(results, board, eth_clk_freq, sys_clk_freq, mode):
    print(f"\nhostlink UDP simulation: board {board}, data plane clock {eth_clk_freq / 1e6:.3f} MHz "
          f"(cycles below), control plane clock {sys_clk_freq / 1e6:.3f} MHz, mode {mode}")
    print(f"{'payload':>8} {'sent':>8} {'recv':>8} {'lost':>6} {'bad':>5} {'cycles/pkt':>11} "
          f"{'MB/s':>8} {'line MB/s':>10} {'kernel errors':>14}")
    for r in results:
        errors = sum(r["kernel_errors"].values())
        cpp    = f"{r['cycles_per_packet']:.1f}" if r["cycles_per_packet"] else "-"
        print(f"{r['payload']:>8} {r['sent']:>8} {r['received']:>8} {r['lost']:>6} {r['bad_payload']:>5} "
              f"{cpp:>11} {r['goodput_mbytes_per_s']:>8.2f} {r['line_limit_mbytes_per_s']:>10.2f} {errors:>14}")
    if mode == "echo":
        print("(echo mode: the host paces the traffic, so cycles/packet measure the host, not the core)")


def _exit_on_signal(signum, frame):
    # SIGTERM/SIGHUP would otherwise end the process without its cleanup: the simulator and
    # the namespace would outlive it.
    raise SystemExit(128 + signum)


def check_args(args):
    """The error message for arguments argparse cannot check alone, or None."""
    try:
        check_addresses(args)
    except ValueError as e:
        return str(e)
    if not math.isfinite(args.timeout) or args.timeout <= 0:
        return f"--timeout must be positive and finite, not {args.timeout}"
    return None


# Wall-clock limit of a whole run (./sim.py): building the model, then each payload size and the
# set-up/tear-down around them, each bounded by --timeout.
RUN_BUILD_ALLOWANCE = 900
LOG_ROOTS           = [os.path.join("build", "sim_udp")]

def run_limit(args):
    return RUN_BUILD_ALLOWANCE + args.timeout * (len(args.payload) + 2)


def main(argv=None):
    args = parser().parse_args(argv)
    error = check_args(args)
    if error is not None:
        print(f"sim.py udp: {error}", file=sys.stderr)
        return 2
    reason = unavailable_reason()
    if reason is not None:
        print(f"sim.py udp: cannot run: {reason}", file=sys.stderr)
        return 2
    handled  = (signal.SIGTERM, signal.SIGHUP)
    previous = {sig: signal.signal(sig, _exit_on_signal) for sig in handled}
    try:
        return run(args)
    except KeyboardInterrupt:
        print("sim.py udp: interrupted; simulator stopped and namespace deleted", file=sys.stderr)
        return 130
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def run(args, log=print):
    from hostlink.sim.udp_soc import UDPSimSoC, WIRE_OVERHEAD, board_config, build

    progress = Progress("sim.py udp")
    if progress.enabled:
        def log(message, log=log):
            progress.clear()
            log(message)

    board        = board_config(args.board)
    sys_clk_freq = board["sys_clk_freq"]
    eth_clk_freq = board["eth_clk_freq"]
    fpga_mac     = board["fpga_mac"]
    build_dir = os.path.abspath(args.build_dir or os.path.join("build", "sim_udp", f"{args.board}_{args.mode}"))
    os.makedirs(build_dir, exist_ok=True)
    tool = build_tool(os.path.join(build_dir, "tool"))

    # LiteX logs the whole SoC tree at INFO level; the build's own messages say what matters here.
    logging.disable(logging.INFO)
    try:
        soc = UDPSimSoC(sys_clk_freq, eth_clk_freq,
            fpga_mac  = fpga_mac,
            fpga_ip   = args.fpga_ip,
            host_mac  = TAP_MAC,
            host_ip   = args.host_ip,
            fpga_port = args.port,
            host_port = args.port,
            mode      = args.mode,
        )
        gateware, csrs = build(soc, build_dir, TAP_NAME, args.host_ip, CONTROL_PORT, log=log)
    finally:
        logging.disable(logging.NOTSET)

    results = []
    report  = {
        "board":          args.board,
        "mode":           args.mode,
        "sys_clk_freq":   sys_clk_freq,
        "eth_clk_freq":   eth_clk_freq,
        "board_config_source": board["source"],
        "fpga_mac":       fpga_mac,
        "fpga_ip":        args.fpga_ip,
        "host_ip":        args.host_ip,
        "port":           args.port,
        "count":          args.count,
        "wire_overhead_bytes": WIRE_OVERHEAD,
        "results":        results,
    }
    with NetNamespace("hlsimudp") as netns, tempfile.TemporaryDirectory() as tmpdir:
        report["namespace"] = netns.name
        log(f"sim.py udp: namespace {netns.name}, TAP {TAP_NAME} {args.host_ip}/24, FPGA {args.fpga_ip}:{args.port}")
        sim = Simulation(netns, gateware, csrs, args.host_ip, os.path.join(build_dir, "sim.log"), args.timeout)
        try:
            sim.start()
            if args.mode == "echo":
                learnt = resolve_fpga_mac(netns, tool, args.fpga_ip, args.port % 65535 + 1, args.timeout)
                report["arp"] = {"fpga_mac": fpga_mac, "learnt": learnt,
                                 "ok": learnt is not None and mac_to_int(learnt) == mac_to_int(fpga_mac)}
            for row, payload in enumerate(args.payload, start=1):
                log(f"sim.py udp: {args.count} packets of {payload} bytes ({args.mode})")
                if args.mode == "generator":
                    row_progress = RowProgress(progress, row, len(args.payload), args.payload[row:], args.count)
                    results.append(run_generator(sim, netns, tool, args, payload, eth_clk_freq, tmpdir,
                        row_progress if progress.enabled else None))
                else:
                    results.append(run_echo(sim, netns, tool, args, payload, eth_clk_freq, tmpdir))
        finally:
            progress.clear()
            sim.stop()

    print_summary(results, args.board, eth_clk_freq, sys_clk_freq, args.mode)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(report, f, indent=2)
        log(f"sim.py udp: results written to {args.json}")
    ok = all(r["lost"] == 0 and r["bad_payload"] == 0 and r["wire_bubbles"] == 0 and
             r["model_rx_overflows"] == 0 and
             not any(r["kernel_errors"].values()) for r in results)
    if args.mode == "echo":
        ok = ok and report["arp"]["ok"]
    return 0 if ok else 1
