# This file is part of hostlink.
# Copyright (c) 2026 hostlink developers
# SPDX-License-Identifier: BSD-2-Clause

"""./sim.py udp: arguments, the run (build, namespace, session, rows), the summary and the JSON report."""

import argparse
import ipaddress
import json
import logging
import math
import os
import signal
import sys
import tempfile

from hostlink import BUILD_ROOT
from hostlink.cores.udp.common import UDPAddresses, UDP_DEFAULTS, max_payload_for_mtu, DEFAULT_MTU, mac_to_int, ip_to_int
from hostlink.sim.build_lock import held
from hostlink.sim.netns import NetNamespace, unavailable_reason
from hostlink.sim.progress import Progress
from hostlink.sim.watchdog import OneLineArgumentParser, output_file
from hostlink.sim.udp.tool import build_tool
from hostlink.sim.udp.session import (Simulation, RowProgress, resolve_fpga_mac, run_generator, run_echo,
    TAP_MAC, TAP_NAME, CONTROL_PORT)

# Defaults -----------------------------------------------------------------------------------------

# The simulation's own addresses, used only inside its namespace; the port is the boards' default. The
# FPGA's MAC is the board's (soc.board_config), the host's the TAP device's (session.TAP_MAC).
DEFAULT_FPGA_IP   = "10.0.0.50"
DEFAULT_HOST_IP   = "10.0.0.1"
DEFAULT_PORT      = UDP_DEFAULTS.fpga_port
DEFAULT_PAYLOADS  = [18, 512, 1472]
DEFAULT_COUNT     = 1000
MAX_PAYLOAD       = max_payload_for_mtu(DEFAULT_MTU)

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
    from hostlink.sim.udp.soc import BOARDS
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
    p.add_argument("--json",    default=None, type=output_file, help="write the results as JSON to this path")
    p.add_argument("--build-dir", default=None,
                   help="build directory (default build/sim_udp/<board>_<mode> in the repository, or "
                        "under $HOSTLINK_BUILD_DIR); reused when the generated Verilog is unchanged")
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
    for r in results:
        counted = ", ".join(f"{k} {v}" for k, v in r["kernel_errors"].items() if v)
        if counted:
            print(f"kernel errors at {r['payload']} bytes: {counted}")
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
LOG_ROOTS           = [os.path.join(BUILD_ROOT, "sim_udp")]

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
    build_dir = os.path.abspath(args.build_dir or os.path.join(BUILD_ROOT, "sim_udp", f"{args.board}_{args.mode}"))
    # One run at a time per build folder: the SoC, the tool and sim.log are written there.
    with held(build_dir, lambda message: log(f"sim.py udp: {message}")):
        return _run(args, build_dir, log)


def _run(args, build_dir, log):
    from hostlink.sim.udp.soc import UDPSimSoC, WIRE_OVERHEAD, board_config, build

    progress = Progress("sim.py udp")
    if progress.enabled:
        def log(message, log=log):
            progress.clear()
            log(message)

    board        = board_config(args.board)
    sys_clk_freq = board["sys_clk_freq"]
    eth_clk_freq = board["eth_clk_freq"]
    fpga_mac     = board["fpga_mac"]
    os.makedirs(build_dir, exist_ok=True)
    tool = build_tool(os.path.join(build_dir, "tool"))

    # LiteX logs the whole SoC tree at INFO level; the build's own messages say what matters here.
    logging.disable(logging.INFO)
    try:
        addresses = UDPAddresses(
            fpga_mac  = fpga_mac,
            fpga_ip   = args.fpga_ip,
            host_mac  = TAP_MAC,
            host_ip   = args.host_ip,
            fpga_port = args.port,
            host_port = args.port,
        )
        soc = UDPSimSoC(sys_clk_freq, eth_clk_freq, addresses, mode=args.mode)
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
