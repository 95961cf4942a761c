# This file is part of hostlink.
# Copyright (c) 2026 hostlink developers
# SPDX-License-Identifier: BSD-2-Clause

"""A simulation session: the Verilator model running in its namespace with its control connection, and
the rows it measures (generator: FPGA to host; echo: host to FPGA and back), each as one result record."""

import json
import os
import subprocess
import time

from hostlink.cores.udp.common import HEADER_LEN
from hostlink.sim.netns import kernel_error_counters
from hostlink.sim.udp.csr import CSRClient, connect_in_netns
from hostlink.sim.udp.tool import start_tool, finish_tool

# The simulator's TAP device and control port, inside the namespace.
TAP_MAC      = "aa:b6:24:69:77:21" # Fixed by LiteX's ethernet simulator module.
TAP_NAME     = "hltap0"
CONTROL_PORT = 2430                # serial2tcp, on the namespace's loopback.
# The generator's receiver asks for this much socket buffer. The simulator writes frames to the TAP
# whether or not the receiver runs: on a loaded machine (CI's parallel tests) the host's scheduler can
# leave it waiting long enough to fill the default buffer (about 90 frames of 1472 bytes), and the kernel
# drops the rest (Udp.RcvbufErrors). 32 MiB holds some 14,000 such frames.
RECEIVE_BUFFER_BYTES = 32 << 20

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


def row_start(sim, netns):
    """What a row's result is measured against: the host's and the SoC's error counters before it starts."""
    return {"before": snmp_errors(netns), "counters_before": sim.counters()}


def row_result(sim, netns, payload, eth_clk_freq, start, sent, received, bad_payload, extra):
    """A row's result record once it is over: the wire and the counters now, against `start` (row_start()).
    `sent` None: the frames the wire carried."""
    wire           = sim.wire()
    counters_after = sim.counters()
    after          = snmp_errors(netns)
    return result_record(payload,
        sent            = wire["frames"] if sent is None else sent,
        received        = received,
        bad_payload     = bad_payload,
        wire            = wire,
        eth_clk_freq    = eth_clk_freq,
        after           = after,
        counters_after  = counters_after,
        extra           = extra,
        **start,
    )


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
    from hostlink.sim.udp.soc import wire_cycles   # The SoC's module imports LiteX: only when measuring.
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
                              "--timeout", tool_timeout, "--rcvbuf", RECEIVE_BUFFER_BYTES, "--json", json_path])
    try:
        start = row_start(sim, netns)
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
    return row_result(sim, netns, payload, eth_clk_freq, start,
        sent        = None,   # What the wire carried.
        received    = recv["unique"],
        bad_payload = recv["bad_payload"],
        extra       = {"generated": sim.csr.read("udp_gen_sent"), "host": recv},
    )


def run_echo(sim, netns, tool, args, payload, eth_clk_freq, tmpdir):
    json_path = os.path.join(tmpdir, f"echo_{payload}.json")
    start = row_start(sim, netns)
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
    return row_result(sim, netns, payload, eth_clk_freq, start,
        sent        = echo["sent"],
        received    = echo["echoed_ok"] + echo["bad_payload"],
        bad_payload = echo["bad_payload"],
        extra       = {"echoed_ok": echo["echoed_ok"], "paced_by": "host", "host": echo},
    )
