# This file is part of hostlink.
# Copyright (c) 2026 hostlink developers
# SPDX-License-Identifier: BSD-2-Clause

"""./sim.py driver: LitePCIe's real Linux driver and tools against the simulated SoC, in User-Mode Linux.

The kernel (built by `make uml-kernel`) sees the simulated SoC on its PCI bus (sim/uml/), loads the
litepcie.ko generated for that SoC and runs commands: by default LitePCIe's own tests; with
`-- CMD ...` yours. The host's filesystem is visible read-only inside; the current directory of each
command is a writable folder shared with the host (printed at the end). SIGTERM or SIGINT ends the
simulation and the kernel with every process of the machine, and exits with 128 + the signal's number.
"""

import argparse
import contextlib
import json
import os
import re
import signal
import sys
import threading

from hostlink import package_path
from hostlink.sim.dma import parse_size, profile_from_args, add_host_profile_arguments
from hostlink.sim.uml.report import kernel_problems, report_the_end
from hostlink.sim.watchdog import OneLineArgumentParser, output_file
from hostlink.sim.pcie.soc import BOARDS, DEFAULT_BOARD, get_board

# dma_test ---------------------------------------------------------------------------------------

_ANSI = re.compile(r"\x1b\[[0-9;]*m")


def parse_dma_test(output, ring, skip_loops):
    """LitePCIe's dma_test prints, every 200 ms: speed, TX buffers, RX buffers, difference, errors in
    that period. It checks data only once the writer has gone `skip_loops` times round the ring; before
    that a period's errors are 0 whatever the data. Returns the RX buffers seen, the bytes checked and
    the errors."""
    rows = []
    for line in _ANSI.sub("", output or "").splitlines():
        fields = line.split()
        if len(fields) == 5 and all(re.fullmatch(r"-?[0-9.]+", f) for f in fields):
            rows.append((int(fields[2]), int(fields[4])))
    skipped = skip_loops * ring["DMA_BUFFER_COUNT"]
    rx_buffers = rows[-1][0] if rows else 0
    checked = max(0, rx_buffers - skipped) * ring["DMA_BUFFER_SIZE"]
    return {"rx_buffers": rx_buffers, "bytes_checked": checked, "errors": sum(r[1] for r in rows)}

def parse_status(output):
    """hostlink_status's "name value" lines, as a dict."""
    return {m.group(1): int(m.group(2)) for m in re.finditer(r"^(\w+)\s+(\d+)\s*$", output or "", re.MULTILINE)}

# Default commands ---------------------------------------------------------------------------------

UML_TOOLS      = package_path("sim", "uml", "guest")
DMA_TEST_UNTIL = os.path.join(UML_TOOLS, "dma_test_until.py")
PATTERN_RECORD = os.path.join(UML_TOOLS, "pattern_record.py")
DRIVER_ACCESS  = os.path.join(UML_TOOLS, "driver_access.py")
RMMOD_BUSY     = os.path.join(UML_TOOLS, "rmmod_busy.py")


DRAM_BRINGUP_BYTES = 64 << 10   # The memory test's range: LiteDRAM's BIST at the model's speed.


def default_commands(check_bytes, ring, skip_loops, with_dram=False):
    """LitePCIe's tests; each dma_test runs until it has checked `check_bytes` (dma_test_until.py).
    Then hostlink's: the pattern generator recorded with LitePCIe's litepcie_test, what a local user
    may do with the hardened driver (dma_test as a member of the device's group), rmmod while dma_test
    streams."""
    until = ["python3", DMA_TEST_UNTIL, str(check_bytes), str(skip_loops * ring["DMA_BUFFER_COUNT"]),
             str(ring["DMA_BUFFER_SIZE"]), "--"]
    return [
        ["litepcie_util", "info"],
        ["litepcie_util", "scratch_test"],
        [*until, "litepcie_util", "dma_test"],
        [*until, "litepcie_util", "-z", "dma_test"],
        ["python3", PATTERN_RECORD, "csr.json", str(check_bytes)],
        # The SoC's PCIe fault counters, read through the driver's register ioctl: all 0 after clean runs.
        ["hostlink_status"],
        ["python3", DRIVER_ACCESS, "csr.json", "--", *until, "litepcie_util", "dma_test"],
        ["python3", RMMOD_BUSY, "csr.json"],
    ] + ([["hostlink_dram", "bringup", "-l", str(DRAM_BRINGUP_BYTES)]] if with_dram else [])

# Kernel log ---------------------------------------------------------------------------------------

# Main ---------------------------------------------------------------------------------------------

def build_parser():
    p = OneLineArgumentParser(prog="sim.py driver", description=__doc__.strip().splitlines()[0],
        epilog="Example: ./sim.py driver --board vc709 -- litepcie_util info")
    p.add_argument("--board",        default=DEFAULT_BOARD,
        help=f"Board: {', '.join(sorted(BOARDS))} (default {DEFAULT_BOARD}); several, comma-separated "
             "(zc706,vc709), put one board of each SoC on the machine's PCI bus, each served by a driver of its "
             "own named after it (zc706_litepcie: /dev/zc706_litepcie0, ...; doc/driver.md), whose folder is "
             "$HOSTLINK_<BOARD>_DRIVER inside (its user tools in user/, libhostlink's in user/libhostlink); "
             "the first's tools are on PATH. Give the commands to run (-- CMD ...).")
    p.add_argument("--dma-channels", type=int, default=2, help="DMA channels in the SoC (1 to 8; default 2).")
    p.add_argument("--dma-check", default="2M", type=parse_size,
        help="Each default dma_test runs until it has checked this much data, after its unchecked "
             "loops of the ring (default 2M).")
    p.add_argument("--command-timeout", type=int, default=600,
        help="A command still running after this many seconds is ended (default 600).")
    p.add_argument("--timeout",      type=int, default=3600,
        help="The whole run is ended after this many seconds (default 3600).")
    p.add_argument("--with-dram",    action="store_true",
        help="The SoC with the board's DDR3 (LiteDRAM's model): the default tests then also bring the "
             "DRAM up from the host with hostlink_dram (init, levelling, memory test).")
    p.add_argument("--user-core",    metavar="MODULE:CLASS",
        help="Put your core (MODULE:CLASS, FILE.py:CLASS or FILE.v:MODULE) on a DMA channel's user port, as "
             "./sim.py dma --user-core does; programs then reach it through the driver (doc/host_api.md).")
    p.add_argument("--user-channel", type=int, default=0, metavar="N",
        help="The DMA channel the user core takes (default 0).")
    p.add_argument("--boards",       type=int, default=1, metavar="N",
        help="Copies of the SoC on the machine's PCI bus (1 to 4, default 1), each simulated on its own: one "
             "driver serves them all, each board's channels are device nodes of their own (/dev/litepcie0 "
             "and 1 for the first board of 2 channels, 2 and 3 for the second).")
    p.add_argument("--ps7",          action="store_true",
        help="With --board zc706: Linux on the Zynq's own ARM cores (the PS) instead of a PCIe host, moving data "
             "through the SoC's AXI DMA by Linux's xilinx_dma driver and by a user-level driver that polls "
             "(doc/zynq.md); the PCIe options do not apply.")
    p.add_argument("--axi-dma-sg",   action="store_true",
        help="With --ps7: the AXI DMA in PG021's scatter-gather mode; xilinx_dma runs it with descriptors, and the "
             "client's queued transfers, residues and the descriptors' error paths are run (doc/zynq.md).")
    p.add_argument("--json",         metavar="PATH", type=output_file, help="Write the results as JSON to PATH.")
    p.add_argument("--inject-fault", metavar="BYTES", type=int,
        help="Testing the checks: corrupt the 32-bit word the device writes to host memory at this many "
             "bytes into its DMA writes.")
    p.add_argument("--verbose",      action="store_true", help="Show the simulator's output.")
    p.add_argument("--reference",    action="store_true",
        help="Run the SoC under cocotb against cocotbext-pcie's root complex and the reference hard-block "
             "model (doc/pcie_sim.md), instead of the compiled fast path: several times slower.")
    add_host_profile_arguments(p, extended_tag=False)
    p.add_argument("command", nargs=argparse.REMAINDER,
        help="-- CMD ...: run CMD instead of the default tests (the driver's user tools are on PATH).")
    return p


def evaluate(result, commands, ring, skip_loops):
    """Per step: passed or not, and for dma_test the bytes checked and errors. Returns (rows, ok)."""
    # A register or configuration read the SoC never answered fails the run, whatever the kernel made of
    # the all-ones it was given.
    ok = not result["bench"]["timed_out"] and not result["bench"].get("mmio_read_errors")
    rows = []
    for step in result["steps"]:
        row = dict(step)
        passed = step["exit_status"] == 0
        if step["name"].startswith("cmd") and "dma_test" in step["command"]:
            row.update(parse_dma_test(step["output"], ring, skip_loops))
            passed = passed and row["bytes_checked"] > 0 and row["errors"] == 0
        if step["name"].startswith("cmd") and "pattern_record" in step["command"]:
            match = re.search(r"(\d+) bytes recorded .* 0 errors", step["output"] or "")
            row.update(bytes_checked=int(match.group(1)) if match else 0, errors=0 if match else 1)
            passed = passed and match is not None
        if step["name"].startswith("cmd") and step["command"] == "hostlink_status":
            counters = parse_status(step["output"])
            row["fault_counters"] = counters
            passed = passed and bool(counters) and not any(v for k, v in counters.items()
                                                           if k != "completion_timeout")
        if step["name"].startswith("cmd") and "scratch_test" in step["command"]:
            passed = passed and "KO" not in (step["output"] or "")
        row["passed"] = passed
        ok = ok and passed
        rows.append(row)
    return rows, ok


class Interrupted(Exception):
    """./sim.py driver was sent SIGTERM or SIGINT."""

    def __init__(self, signum):
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


@contextlib.contextmanager
def interrupted_by_signals(signums=(signal.SIGTERM, signal.SIGINT)):
    """SIGTERM and SIGINT raise Interrupted, so that what ./sim.py driver started is ended on the way
    out (the simulator by the runner's subprocess call, the kernel by run_driver_sim); by default
    SIGTERM ends Python at once and leaves both running. Outside the main thread: nothing changes."""
    def raise_interrupted(signum, frame):
        for other in signums:   # A second signal must not interrupt the clean-up.
            signal.signal(other, signal.SIG_IGN)
        raise Interrupted(signum)
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = {signum: signal.signal(signum, raise_interrupted) for signum in signums}
    try:
        yield
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)


def main(argv=None):
    parser = build_parser()
    args = parser.parse_args(argv)
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if args.axi_dma_sg and not args.ps7:
        parser.error("--axi-dma-sg is the Zynq SoC's DMA in scatter-gather mode: use it with --board zc706 --ps7")
    if args.ps7:
        if args.board != "zc706":
            parser.error(f"--ps7 is the ZC706's Zynq SoC: use it with --board zc706, not {args.board}")
        # The PCIe SoC's and host's options: refused rather than silently ignored.
        ps7_options = {"board", "command_timeout", "timeout", "json", "verbose", "ps7", "command", "axi_dma_sg"}
        defaults = vars(parser.parse_args([]))
        ignored = [action.option_strings[0] for action in parser._actions if action.option_strings
                   and action.dest in defaults and action.dest not in ps7_options
                   and getattr(args, action.dest) != defaults[action.dest]]
        if ignored:
            parser.error(f"--ps7 runs the Zynq SoC, where {', '.join(ignored)} (the PCIe SoC's and its host's) "
                         "do not apply")
        from hostlink.sim.zynq.linux import main as ps7_main
        with interrupted_by_signals():
            try:
                return ps7_main(args, command)
            except Interrupted as error:
                print(f"sim.py driver: {error}: the simulation and the User-Mode Linux kernel were ended",
                      file=sys.stderr)
                return 128 + error.signum
    from hostlink.sim.uml.run import run_driver_sim, DriverSimError, sim_dma_ring, SIM_DMA_TEST_SKIP_LOOPS
    try:
        names    = args.board.split(",")
        socs     = [get_board(name) for name in names]
        board    = socs[0]
        if len(socs) > 1 and len(set(names)) != len(names):
            raise ValueError(f"--board names each SoC once (--boards N copies one), not {args.board!r}")
        if len(socs) > 1 and args.boards != 1:
            raise ValueError(f"--boards N copies one SoC; --board {args.board} puts one board of each SoC")
        if len(socs) > 1 and not command:
            raise ValueError(f"--board {args.board}: give the commands to run (-- CMD ...); LitePCIe's default "
                             "tests are one SoC's")
        profile  = [profile_from_args(args, each) for each in socs]
        user_core = None
        if args.user_core:
            from hostlink.cores.pcie.user_core import load_user_core, build_user_core
            if not 0 <= args.user_channel < args.dma_channels:
                raise ValueError(f"user channel must be one of the SoC's DMA channels 0..{args.dma_channels - 1}, "
                                 f"not {args.user_channel!r}")
            build_user_core(load_user_core(args.user_core), board.data_width, board.sys_clk_hz())   # One line if wrong.
            user_core = {"spec": args.user_core, "channel": args.user_channel}
        commands = [command] if command else default_commands(args.dma_check, sim_dma_ring(board),
            SIM_DMA_TEST_SKIP_LOOPS, with_dram=args.with_dram)
        with interrupted_by_signals():
            result = run_driver_sim(names if len(socs) > 1 else board.name, commands, args.command_timeout,
                profile if len(socs) > 1 else profile[0],
                dma_channels=args.dma_channels, timeout_s=args.timeout, verbose=args.verbose,
                fault_at=args.inject_fault, with_dram=args.with_dram, user_core=user_core, boards=args.boards,
                reference=args.reference)
    except ValueError as error:
        parser.error(str(error))
    except DriverSimError as error:
        print(f"sim.py driver: {error}", file=sys.stderr)
        return 1
    except Interrupted as error:
        print(f"sim.py driver: {error}: the simulation and the User-Mode Linux kernel were ended",
              file=sys.stderr)
        return 128 + error.signum
    rows, ok = evaluate(result, commands, sim_dma_ring(board), SIM_DMA_TEST_SKIP_LOOPS)
    problems = kernel_problems(result["dmesg"])
    ok = ok and not problems and result["dmesg"] is not None
    for row in rows:
        extra = ""
        if "bytes_checked" in row:
            extra = f"  ({row['bytes_checked']} bytes checked, {row['errors']} errors)"
        status = "timed out" if row["timed_out"] else f"exit {row['exit_status']}"
        print(f"{'PASS' if row['passed'] else 'FAIL'}  {row['command']}: {status}{extra}")
        if command or not row["passed"]:
            lines = (row["output"] or "(no output)").rstrip().splitlines()
            if len(lines) > 40 and not command:
                lines = ["..."] + lines[-40:]
            print("    " + "\n    ".join(lines))
    bench = result["bench"]
    for i, each in enumerate(result["boards"]):
        print(f"{f'board {i}: ' if len(result['boards']) > 1 else ''}simulated {each['sim_ns'] / 1e6:.1f} ms in "
              f"{each['wall_s']} s: {each['mmio_reads']} BAR reads, {each['mmio_writes']} BAR writes, "
              f"{each['msis']} MSIs, {each['host_reads']['served']} DMA reads")
        ok = ok and not each.get("mmio_read_errors")
    if bench.get("mmio_read_errors"):
        print(f"{bench['mmio_read_errors']} register or configuration requests the SoC never answered "
              f"(see {result['sim_log']})")
    report_the_end(result, rows, problems)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"board": args.board, "with_dram": args.with_dram, "dma_ring": sim_dma_ring(board),
                       "dma_test_skip_loops": SIM_DMA_TEST_SKIP_LOOPS, "host": profile[0].as_dict(),
                       "steps": rows, "kernel_warnings": problems, "bench": bench, "boards": result["boards"],
                       "passed": ok}, f, indent=2)
        print(f"results written to {args.json}")
    print("PASSED" if ok else "FAILED")
    return 0 if ok else 1
