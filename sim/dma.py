# This file is part of hostlink.
# Copyright (c) 2026 hostlink developers
# SPDX-License-Identifier: BSD-2-Clause

"""./sim.py dma: a PCIe DMA SoC in cycle-level simulation against a modelled host.

Throughput is in simulated time at the SoC's system clock: it does not depend on this machine's speed.
"""

import argparse
import json
import sys

from hostlink.cores.pcie.config import DMA_DESCRIPTOR_MAX_BYTES, check_dma_channels, check_dma_length
from hostlink.protocol import FLOW_MODES, FRAMED_FLOWS
from hostlink.sim import plots
from hostlink.sim.pcie import latency_sweep
from hostlink.sim.pcie.models.host import host_profile
from hostlink.sim.pcie.soc import BOARDS, DEFAULT_BOARD, get_board
from hostlink.sim.pcie.driver import TABLE_DEPTH
from hostlink.sim.watchdog import OneLineArgumentParser, finite_float, number_list, output_file

DIRECTIONS  = ("h2c", "c2h", "bidir")
DEFAULT_RING        = 8
DEFAULT_BUFFER_SIZE = 16 * 1024
DEFAULT_SIZES = ("4K", "64K", "1M")
LATENCY_SWEEP_SIZE = "256K"
SWEEP_SIZES   = ("4K", "16K", "64K", "256K", "1M", "4M", "16M", "64M")

# Argument parsing ---------------------------------------------------------------------------------

def parse_size(text):
    """'4096', '4K', '64K', '1M', '1.5M' -> bytes (K = 1024)."""
    text = text.strip()
    scale = {"K": 1024, "M": 1024**2, "G": 1024**3}.get(text[-1:].upper(), 1)
    number = text[:-1] if scale != 1 else text
    try:
        value = float(number) * scale
    except ValueError:
        raise argparse.ArgumentTypeError(f"size {text!r} is not a number of bytes (e.g. 4096, 4K, 1M)")
    if value != int(value) or value < 1:
        raise argparse.ArgumentTypeError(f"size {text!r} must be a whole number of bytes >= 1")
    return int(value)


def parse_sizes(text):
    return [parse_size(t) for t in text.split(",") if t.strip()]


def parse_directions(text):
    directions = [t.strip() for t in text.split(",") if t.strip()]
    for d in directions:
        if d not in DIRECTIONS:
            raise argparse.ArgumentTypeError(f"direction must be among {', '.join(DIRECTIONS)}, not {d!r}")
    return directions


parse_channel_counts = number_list(int, "channel counts must be integers like 1 or 1,2,4", lambda count: count >= 1,
                                   "channel counts must be >= 1")


def parse_stream_names(text):
    names = [t.strip() for t in str(text).split(",") if t.strip()]
    bad = [n for n in names if not n.replace("_", "").isalnum()]
    if not names or bad:
        raise argparse.ArgumentTypeError(f"stream names are Verilog identifiers separated by commas, "
            f"not {text!r}")
    return names


def parse_setting(text):
    name, sep, value = str(text).partition("=")
    try:
        number = int(value, 0)
    except ValueError:
        number = None
    if not sep or not name.isidentifier() or number is None or not 0 <= number < 2**32:
        raise argparse.ArgumentTypeError(f"a user setting is NAME=VALUE with a 32-bit value (e.g. rate=4096), "
                                         f"not {text!r}")
    return name, number


def probability(text):
    value = finite_float()(text)
    if not 0 <= value < 1:
        raise argparse.ArgumentTypeError(f"probability must be in [0, 1), not {text!r}")
    return value


def build_parser():
    p = OneLineArgumentParser(prog="sim.py dma", description=__doc__.strip().splitlines()[0])
    p.add_argument("--board",        default=DEFAULT_BOARD,
        help=f"Board: {', '.join(sorted(BOARDS))} (default {DEFAULT_BOARD}).")
    p.add_argument("--sweep", action="store_true",
        help=f"Throughput against transfer size: total sizes {','.join(SWEEP_SIZES)} (unless --sizes) moved by "
             "1, 2 and 4 channels (unless --channels), each channel moving an equal share.")
    p.add_argument("--sweep-latency", action="store_true",
        help=f"Host-to-FPGA throughput against the host's read latency: one h2c run of --sizes (default "
             f"{LATENCY_SWEEP_SIZE}) per read latency (--latencies) and MRRS (--mrrs-list); a table, and a PNG "
             "with --plot.")
    p.add_argument("--latencies", type=latency_sweep.parse_latencies, metavar="NS",
        help=f"Read latencies of --sweep-latency in ns (default "
             f"{','.join(str(v) for v in latency_sweep.DEFAULT_LATENCIES_NS)}).")
    p.add_argument("--mrrs-list", type=latency_sweep.parse_mrrs_list, metavar="BYTES",
        help=f"MRRS values of --sweep-latency (default {','.join(str(v) for v in latency_sweep.DEFAULT_MRRS)}).")
    p.add_argument("--split", action="store_true",
        help="Sizes are totals, split evenly across the running channels (default: each channel moves a size).")
    p.add_argument("--plot", metavar="PNG", type=output_file, help="Plot throughput against total bytes moved into PNG.")
    p.add_argument("--sizes",        type=parse_sizes,
        help=f"Transfer sizes, e.g. 4K,64K,1M (default {','.join(DEFAULT_SIZES)}).")
    p.add_argument("--directions",   default=None, type=parse_directions,
        help="h2c (host to FPGA), c2h (FPGA to host), bidir (both at once, through the loopback).")
    p.add_argument("--dma-channels", type=int,
        help="DMA channels in the SoC (1 to 8; default 2, or the most channels a --sweep runs).")
    p.add_argument("--channels",     type=parse_channel_counts,
        help="Channels running at once, or a list of counts (e.g. 1,2,4); each <= --dma-channels (default 1).")
    p.add_argument("--descriptor-size", default="64K", type=parse_size,
        help="Bytes per descriptor (grown if a transfer needs more than the 256-entry table).")
    p.add_argument("--with-dram",    action="store_true",
        help="SoC with the board's DRAM (simulated): adds host -> DRAM and DRAM -> host rows per size.")
    p.add_argument("--dram-address", default=4096, type=parse_size,
        help="DRAM byte address of the DRAM rows' window (default 4K: windows straddle DRAM rows).")
    p.add_argument("--user-core",    metavar="MODULE:CLASS",
        help="Put your core (MODULE:CLASS, FILE.py:CLASS or FILE.v:MODULE; see examples/accelerator.py) on a DMA channel's user "
             "port and run each size through it, both directions at once, every result checked against the "
             "core's model (e.g. examples.accelerator:Accelerator).")
    p.add_argument("--user-channel", type=int, default=0, metavar="N",
        help="The DMA channel the user core takes (default 0).")
    p.add_argument("--user-setting", action="append", type=parse_setting, default=[], metavar="NAME=VALUE",
        help="A CSR value of the user core (its name without the core's prefix, e.g. rate=4096) written before "
             "the transfer, over the core's SIM_SETTINGS; may be repeated.")
    p.add_argument("--flow",         choices=list(FLOW_MODES),
        help="Stream each size through a ring of --ring buffers of --buffer-size bytes, as a program does, in "
             "this flow mode: lossless (the DMA moves only buffers the host has given it), realtime (FPGA to "
             "host through a --user-core source: drops between buffers, counted in each buffer's header), "
             "packets (FPGA to host through a --user-core source, lossless: the core's `last` ends a buffer, "
             "its length in the buffer's header), loop (LitePCIe's, never waits: what a slow host loses). Use --stall-ns/--stall-every for a slow "
             "host. Directions: h2c and c2h (patterns), bidir (loopback); with --user-core, through the core.")
    p.add_argument("--ring",         type=int, default=DEFAULT_RING, metavar="N",
        help=f"Buffers in a --flow ring (1 to 256, default {DEFAULT_RING}).")
    p.add_argument("--buffer-size",  type=parse_size, default=DEFAULT_BUFFER_SIZE, metavar="BYTES",
        help=f"Bytes per --flow buffer (default {DEFAULT_BUFFER_SIZE // 1024}K); sizes are whole buffers.")
    p.add_argument("--json",         metavar="PATH", type=output_file, help="Write the results as JSON to PATH.")
    p.add_argument("--verbose",      action="store_true", help="Show the simulator's output.")
    p.add_argument("--timeout",      type=finite_float(positive=True), metavar="SECONDS",
        help=f"Wall-clock limit of the whole run, model build included (default {RUN_BASE_SECONDS} s "
             f"+ {RUN_SECONDS_PER_MIB} s per MiB the jobs move).")
    p.add_argument("--profile-streams", metavar="NAMES", type=parse_stream_names,
        help="Debugging: per job, count the cycles each named stream (a prefix of NAME_valid/NAME_ready "
             "in the SoC's Verilog) transfers, stalls and idles; builds a slower model with every signal "
             "visible.")
    p.add_argument("--reference",    action="store_true",
        help="Run on the reference path: cocotb, cocotbext-pcie's root complex and link, and the hard block "
             "models as written (VC709: every per-cycle coroutine as cocotbext-pcie writes it). Slower; the "
             "default agrees with it (doc/pcie_sim.md).")
    p.add_argument("--fast",         action="store_true",
        help="Require the compiled fast path (sim/pcie/fast/: the SoC, the hard block, the link and the host "
             "in C++), which every board takes by default: refused where it cannot run (--profile-streams).")
    add_host_profile_arguments(p)
    return p


def add_host_profile_arguments(parser, extended_tag=True):
    """The host-profile options of ./sim.py dma, on `parser` (also ./sim.py driver's, without
    --no-extended-tag: its Linux kernel sets the bit itself)."""
    host = parser.add_argument_group(
        "host profile (defaults: the board's link, MPS 256, the MRRS its driver sets, 1 us reads)")
    host.add_argument("--profile",   default="default", choices=["default", "worst", "ideal"],
        help="default: completions up to MPS on 64-byte boundaries, reordered, random back-pressure; "
             "worst: 64-byte completions only; ideal: no stalls, in order.")
    host.add_argument("--mps",             type=int,   help="Max payload size in bytes (default 256).")
    host.add_argument("--mrrs",            type=int,
        help="Max read request size in bytes (default: what the board's driver asks for: 4096 on the VC709, "
             "512 on the others).")
    host.add_argument("--read-latency-ns", type=finite_float(minimum=0),
        help="Read request to first completion (default 1000).")
    host.add_argument("--completion-size", choices=["mps", "64"], help="Completion split (default mps).")
    host.add_argument("--no-reorder",      action="store_true", help="Keep completions of different tags in order.")
    if extended_tag:
        host.add_argument("--no-extended-tag", action="store_true",
            help="A host that leaves Extended Tag Field Enable clear: the device may use tags 0-31 only.")
    host.add_argument("--backpressure",    type=probability,
        help="P(hard block holds a TX beat) (default 0.02 on pcie_7x boards, 0 on VC709).")
    host.add_argument("--rx-gaps",         type=probability, help="P(idle cycle between RX beats) (default 0.05).")
    host.add_argument("--seed",            type=int, help="Random seed of the host model (default 1).")
    host.add_argument("--stall-ns",        type=finite_float(minimum=0), metavar="NS",
        help="A --flow host that stalls this long (reads, refills and gives back nothing) ...")
    host.add_argument("--stall-every",     type=int, metavar="BUFFERS",
        help="... every this many buffers it serves (both or neither).")
    return host


def board_profile_defaults(board):
    """What a host profile takes from the board: its link, the MRRS its driver sets, and the hard block's own
    TX back-pressure.

    A driver whose DMA reads more than 512 bytes at a time asks the kernel for that MRRS, and its host grants
    it; every board's DMA reads 512 bytes at most today, so its driver leaves the firmware's 512.

    `pcie_7x` (Gen2) sends its own completions and messages on the same TX interface as the user's TLPs, so
    it holds off user beats now and then (2% by default). `pcie3_7x`'s requester interface (RQ) carries only
    the user's requests: it holds off only when the link is busy, which the link model already does.
    """
    defaults = dict(link_speed=board.link_speed, link_width=board.link_width,
                    max_read_request=board.driver_read_request)
    if board.device == "us":
        defaults["backpressure"] = 0.0
    return defaults


def profile_from_args(args, board):
    defaults = board_profile_defaults(board)
    if args.backpressure is not None:
        defaults["backpressure"] = args.backpressure
    if args.mrrs is not None:
        defaults["max_read_request"] = args.mrrs
    return host_profile(args.profile,
        max_payload_size    = args.mps,
        read_latency_ns     = args.read_latency_ns,
        completion_size     = args.completion_size,
        reorder_completions = False if args.no_reorder else None,
        extended_tag        = False if getattr(args, "no_extended_tag", False) else None,   # `./sim.py dma` only.
        rx_gaps             = args.rx_gaps,
        stall_ns            = getattr(args, "stall_ns", None),
        stall_every         = getattr(args, "stall_every", None),
        seed                = args.seed,
        **defaults,
    )

# Jobs ---------------------------------------------------------------------------------------------

def make_jobs(sizes, directions, channels, descriptor_size, granularity=1, split=False):
    """One job per size, channel count and direction. `channels` is a count or a list of counts; each running
    channel moves `size` bytes, or `size / count` when `split` (sizes are then totals)."""
    counts = [channels] if isinstance(channels, int) else list(channels)
    jobs = []
    for total in sizes:
        for count in counts:
            size = total // count if split else total
            if split and size * count != total:
                raise ValueError(f"a {total}-byte total does not split evenly across {count} channels")
            check_dma_length(size, maximum=max(size, 1), granularity=granularity)
            # The table holds 256 descriptors: larger transfers get larger descriptors.
            per_descriptor = max(descriptor_size, -(-size // TABLE_DEPTH))
            per_descriptor += -per_descriptor % granularity
            if per_descriptor > DMA_DESCRIPTOR_MAX_BYTES:
                raise ValueError(f"a {size}-byte transfer needs descriptors over the "
                                 f"{DMA_DESCRIPTOR_MAX_BYTES}-byte limit")
            for d in directions:
                jobs.append({"kind": d, "size": size, "channels": list(range(count)),
                             "descriptor_size": per_descriptor})
    return jobs


def make_stream_jobs(sizes, directions, flow, ring, buffer_size, granularity, user_core=None):
    """One stream job (sim/pcie/stream_jobs.py) per size and direction: h2c and c2h through the patterns,
    bidir through the loopback; with `user_core` ({"spec", "channel", "model": bool}) one per size through the
    core (both directions for a core with a model, FPGA to host for a source)."""
    check_dma_length(buffer_size, granularity=granularity)
    if not 1 <= ring <= TABLE_DEPTH:
        raise ValueError(f"a ring has 1 to {TABLE_DEPTH} buffers (the descriptor table's depth), not {ring}")
    if flow in FRAMED_FLOWS and (user_core is None or user_core["model"]):
        raise ValueError(f"--flow {flow} streams FPGA to host from a --user-core that produces data "
                         "(e.g. examples.stream_source:CountingSource)")
    jobs = []
    for size in sizes:
        if size % buffer_size:
            raise ValueError(f"a --flow stream moves whole buffers: {size} bytes is not a multiple of the "
                             f"{buffer_size}-byte --buffer-size")
        base = {"kind": "stream", "size": size, "flow": flow, "buffers": ring, "buffer_bytes": buffer_size}
        if user_core is not None:
            jobs.append(dict(base, target="user", channels=[user_core["channel"]],
                             directions=["h2c", "c2h"] if user_core["model"] else ["c2h"]))
            continue
        for d in directions:
            jobs.append(dict(base, channels=[0], target="loopback" if d == "bidir" else "patterns",
                             directions=["h2c", "c2h"] if d == "bidir" else [d]))
    return jobs


def make_dram_jobs(sizes, descriptor_size, granularity, dram_address):
    """Per size, one job writing a DRAM window from the host then reading it back (see dram_jobs.py)."""
    jobs = []
    for job in make_jobs(sizes, ["h2c"], 1, descriptor_size, granularity):
        jobs.append(dict(job, target="dram", kind="dram", dram_address=dram_address))
    return jobs


def format_table(results):
    lines = []
    host = results["host"]
    lines.append(f"board {results['board']}, sys_clk {results['sys_clk_hz']/1e6:.1f} MHz, "
                 f"Gen{host['link_speed']} x{host['link_width']}, MPS {host['max_payload_size']}, "
                 f"MRRS {host['max_read_request']}, read latency {host['read_latency_ns']:.0f} ns, "
                 f"completions {host['completion_size']}, reorder {host['reorder_completions']}, "
                 f"back-pressure {host['backpressure']}, rx gaps {host['rx_gaps']}"
                 + ("" if host.get("extended_tag", True) else ", Extended Tag off"))
    lines.append("figures in simulated time (cycles at sys_clk)")
    lines.append(f"{'size':>10} {'direction':>9} {'ch':>3} {'bytes':>10} {'cycles':>10} {'GB/s':>7} {'errors':>6} {'MSI':>7}")
    for r in results["results"]:
        cycles = r["cycles"] if r["cycles"] is not None else "timeout"
        direction = r["direction"] if r.get("target") != "dram" else f"{r['direction']}-dram"
        lines.append(f"{r['size']:>10} {direction:>9} {r['channels']:>3} {r['bytes']:>10} {cycles:>10} "
                     f"{r['gbytes_per_s']:>7.3f} {r['errors']:>6} {r['msis']:>3}/{r['msis_expected']:<3}")
    for r in results["results"]:
        if r.get("kind") == "stream":
            line = (f"stream {r['size']} bytes {r['direction']} ({r['target']}), flow {r['flow']}: "
                    f"{r['buffers']} x {r['buffer_bytes']}-byte buffers, {r['stalls']} host stalls of "
                    f"{r['stall_ns']:.0f} ns, errors {r['errors']}")
            waits = [f"{d} waited {r[d + '_waits']} cycles for buffers" for d in ("h2c", "c2h") if d + "_waits" in r]
            line += "; " + ", ".join(waits) if waits else ""
            if "header_dropped_bytes" in r:
                line += (f"; dropped {r['header_dropped_bytes']} bytes in {r['drop_event_count']} places by the "
                         f"headers ({r['port_dropped_bytes']} by the port's count, core overruns "
                         f"{r.get('core_overruns')})")
            if r.get("packet_count"):
                sizes = ", ".join(str(n) for n in r["packet_bytes"])
                line += f"; {r['packet_count']} packets ended by the core's last, of {sizes} bytes"
            lines.append(line)
    for r in results["results"]:
        if "user_counters" in r:
            counters = ", ".join(f"{name} {value}" for name, value in r["user_counters"].items())
            lines.append(f"user port, {r['size']} bytes through {r['user_core']}: {counters}")
    return "\n".join(lines)

def plot_throughput(results, path):
    """Throughput against total bytes moved, one line per direction and channel count."""
    series = {}
    for r in results["results"]:
        if r["cycles"] is not None:
            series.setdefault((r["direction"], r["channels"]), []).append((r["bytes"], r["gbytes_per_s"]))
    styles = {"h2c": "-o", "c2h": "-s", "bidir": "-^"}
    with plots.png(path) as axes:
        for (direction, channels), points in sorted(series.items()):
            points.sort()
            axes.plot([p[0] for p in points], [p[1] for p in points], styles.get(direction, "-"),
                label=f"{direction}, {channels} channel{'s' if channels > 1 else ''}")
        axes.set_xscale("log", base=2)
        axes.set_xlabel("bytes moved per direction (all channels)")
        axes.set_ylabel("GB/s per direction (simulated time)")
        host = results["host"]
        axes.set_title(f"{results['board']}: Gen{host['link_speed']} x{host['link_width']}, MPS "
            f"{host['max_payload_size']}, MRRS {host['max_read_request']}, {host['read_latency_ns']:.0f} ns reads, "
            f"sys_clk {results['sys_clk_hz']/1e6:.0f} MHz", fontsize=9)

# Main ---------------------------------------------------------------------------------------------

def run(board_name, sizes, directions=DIRECTIONS, dma_channels=2, channels=1, descriptor_size=65536,
        profile=None, verbose=False, split=False, with_dram=False, dram_address=4096, profile_streams=None,
        user_core=None, flow=None, ring=DEFAULT_RING, buffer_size=DEFAULT_BUFFER_SIZE, reference=False,
        fast=None):
    """`fast`: None runs the compiled fast path where it models the board (every PCIe board) and nothing
    asked needs the reference (`reference`, `profile_streams`); True requires it (refused in one line
    where it cannot run); False runs the reference path."""
    from hostlink.sim.pcie.run import run_jobs
    from hostlink.sim.pcie.fast.run import check_fast
    board = get_board(board_name)
    if fast:
        check_fast(board, reference=reference, profile_streams=profile_streams)
    check_dma_channels(dma_channels)
    for count in [channels] if isinstance(channels, int) else channels:
        if not 1 <= count <= dma_channels:
            raise ValueError(f"channels running at once must be from 1 to {dma_channels}, not {count!r}")
    profile = profile or host_profile("default", **board_profile_defaults(board))
    if user_core is not None:
        if not 0 <= user_core["channel"] < dma_channels:
            raise ValueError(f"user channel must be one of the SoC's DMA channels 0..{dma_channels - 1}, "
                             f"not {user_core['channel']!r}")
        from hostlink.cores.pcie.user_core import absolute_spec, load_user_core, build_user_core, port_bandwidth_note
        user_core = dict(user_core, spec=absolute_spec(user_core["spec"]))
        # A wrong module, class or port: one line, before anything is built.
        core = build_user_core(load_user_core(user_core["spec"]), board.data_width, board.sys_clk_hz())
        has_model = callable(getattr(core, "model", None))
        if not has_model and flow is None:
            raise ValueError(f"user core {type(core).__name__} has no `model(data, settings)`: the simulation "
                             f"checks every result against it (a source without one streams with --flow; a "
                             f"Verilog core gets one from a few lines of Python, see examples/verilog_increment.py)")
        note = port_bandwidth_note(core, board.data_width, board.sys_clk_hz())
        if note:
            print(f"sim.py dma: {note}", file=sys.stderr)
        settings = dict(user_core.get("settings", {}))
        csrs    = {csr.name for csr in core.get_csrs()} if hasattr(core, "get_csrs") else set()
        unknown = sorted(name for name in settings if name not in csrs)
        if unknown:
            raise ValueError(f"user core {type(core).__name__} has no CSR {unknown[0]!r} to set")
        if flow is not None:
            jobs = make_stream_jobs(sizes, None, flow, ring, buffer_size, board.data_width // 8,
                                    dict(user_core, model=has_model))
        else:
            # A core wider than the DMA takes whole words of its own: a transfer ending inside one would leave
            # its tail in the port's width converter, and the transfer would never end.
            word = max(core.data_width, board.data_width) // 8
            odd = [size for size in sizes if size % word]
            if odd:
                raise ValueError(f"{odd[0]} bytes is not a whole number of the user core's {core.data_width}-bit "
                                 f"words: a transfer through {type(core).__name__} moves a multiple of {word} bytes")
            jobs = [dict(job, channels=[user_core["channel"]]) for job in
                    make_jobs(sizes, ["user"], 1, descriptor_size, granularity=board.data_width // 8)]
        jobs = [dict(job, settings=settings) for job in jobs]
        user_core = {"spec": user_core["spec"], "channel": user_core["channel"]}   # What the model is built of.
    elif flow is not None:
        jobs = make_stream_jobs(sizes, directions, flow, ring, buffer_size, board.data_width // 8)
    else:
        jobs = make_jobs(sizes, directions, channels, descriptor_size, granularity=board.data_width // 8, split=split)
    if with_dram:
        jobs += make_dram_jobs(sizes, descriptor_size, board.data_width // 8, dram_address)
    return run_jobs(board.name, jobs, profile, dma_channels=dma_channels, verbose=verbose, with_dram=with_dram,
        profile_streams=profile_streams, user_core=user_core, reference=reference, fast=fast)


def main_latency_sweep(args, parser):
    board = get_board(args.board)
    if len(args.sizes) != 1 or args.channels != [1]:
        parser.error("--sweep-latency runs one size on one channel: give at most one --sizes and no --channels")
    if args.mrrs is not None or args.read_latency_ns is not None:
        parser.error("--sweep-latency sets the MRRS and the read latency itself: use --mrrs-list and --latencies")

    def profile_for(mrrs, latency_ns):
        return profile_from_args(argparse.Namespace(**{**vars(args), "mrrs": mrrs,
            "read_latency_ns": latency_ns}), board)

    def run_one(profile):
        return run(board.name, args.sizes, ["h2c"], args.dma_channels, 1, args.descriptor_size, profile,
            args.verbose, reference=args.reference, fast=args.fast or None)

    try:
        rows = latency_sweep.sweep(run_one, profile_for, args.latencies, args.mrrs_list,
            progress=lambda text: print(f"sweep: {text}", flush=True))
    except ValueError as error:
        parser.error(str(error))
    print(latency_sweep.format_table(board.name, rows))
    document = dict(board=board.name, kind="latency_sweep", direction="h2c", bytes=args.sizes[0], rows=rows)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(document, f, indent=2)
        print(f"results written to {args.json}")
    if args.plot:
        latency_sweep.plot(board.name, rows, args.plot)
        print(f"plot written to {args.plot}")
    return 0 if all(r["errors"] == 0 and r["cycles"] is not None for r in rows) else 1


def main(argv=None):
    parser = build_parser()
    args = parse_args(argv, parser)
    if args.sweep_latency:
        return main_latency_sweep(args, parser)
    try:
        board   = get_board(args.board)
        profile = profile_from_args(args, board)
        results = run(board.name, args.sizes, args.directions, args.dma_channels, args.channels,
            args.descriptor_size, profile, args.verbose, split=args.split,
            with_dram=args.with_dram, dram_address=args.dram_address, profile_streams=args.profile_streams,
            user_core={"spec": args.user_core, "channel": args.user_channel,
                       "settings": dict(args.user_setting)} if args.user_core else None,
            flow=args.flow, ring=args.ring, buffer_size=args.buffer_size, reference=args.reference,
            fast=args.fast or None)
    except ValueError as error:
        parser.error(str(error))
    print(format_table(results))
    if args.profile_streams:
        from hostlink.sim.pcie.stream_profile import format_profile
        for row in results["results"]:
            if "stream_profile" in row:
                label = ", ".join(f"{key} {row[key]}" for key in
                    ("target", "kind", "direction", "bytes", "channels") if key in row)
                print(f"\n{label}: cycles per stream")
                print(format_profile(row["stream_profile"]))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=2)
        print(f"results written to {args.json}")
    if args.plot:
        plot_throughput(results, args.plot)
        print(f"plot written to {args.plot}")
    return 0 if all(r["errors"] == 0 for r in results["results"]) else 1


# Wall-clock limit of a whole run (./sim.py): generous, the simulated bytes dominate.
RUN_BASE_SECONDS    = 1800
RUN_SECONDS_PER_MIB = 300
LOG_ROOTS           = []   # The simulator writes its log in the run's temporary directory.

def parse_args(argv, parser=None):
    """The arguments of a run with the defaults `main` fills in (sizes, channels); `parser`: build_parser()'s."""
    parser = parser or build_parser()
    args = parser.parse_args(argv)
    if args.sweep and args.sweep_latency:
        parser.error("--sweep and --sweep-latency are two different runs: choose one")
    if (args.latencies or args.mrrs_list) and not args.sweep_latency:
        parser.error("--latencies and --mrrs-list go with --sweep-latency")
    if args.user_core and (args.directions or args.sweep or args.sweep_latency or args.with_dram or args.channels):
        parser.error("--user-core runs its channel through the core (both directions at once, or FPGA to host "
                     "for a source): no --directions, --channels, --sweep, --sweep-latency or --with-dram with it")
    if args.user_setting and not args.user_core:
        parser.error("--user-setting sets a CSR of a --user-core: give --user-core with it")
    if args.flow and (args.sweep or args.sweep_latency or args.with_dram or args.channels):
        parser.error("--flow streams one channel through a ring: no --sweep, --sweep-latency, --with-dram or "
                     "--channels with it")
    if (args.stall_ns is not None or args.stall_every is not None) and not args.flow:
        parser.error("--stall-ns and --stall-every are a --flow host's: give --flow with them")
    if args.flow:
        args.directions = args.directions or list(DIRECTIONS)
    args.directions = ["user"] if args.user_core and not args.flow else args.directions or list(DIRECTIONS)
    if args.sweep_latency:
        args.sizes      = args.sizes or [parse_size(LATENCY_SWEEP_SIZE)]
        args.directions = ["h2c"]
        args.latencies  = args.latencies or list(latency_sweep.DEFAULT_LATENCIES_NS)
        args.mrrs_list  = args.mrrs_list or list(latency_sweep.DEFAULT_MRRS)
    if args.sweep:
        args.split    = True
        args.sizes    = args.sizes or parse_sizes(",".join(SWEEP_SIZES))
        args.channels = args.channels or [1, 2, 4]
    args.sizes        = args.sizes or parse_sizes(",".join(DEFAULT_SIZES))
    args.channels     = args.channels or [1]
    args.dma_channels = args.dma_channels or (max(2, *args.channels) if args.sweep else 2)
    return args


def run_limit(args):
    """Seconds of wall-clock time the run may take: --timeout, or scaled from the bytes it moves."""
    if args.timeout is not None:
        return args.timeout
    moved = sum(args.sizes) * len(args.directions) * sum(args.channels) * (2 if args.with_dram else 1)
    runs  = len(args.latencies) * len(args.mrrs_list) if args.sweep_latency else 1
    return runs * (RUN_BASE_SECONDS + RUN_SECONDS_PER_MIB * moved / 2**20)


# ./sim.py with no arguments (sim.py): a DMA loopback at a few sizes on the default board.
DEMO_ARGS = ["--board", DEFAULT_BOARD, "--sizes", "4K,64K,256K", "--directions", "bidir,h2c,c2h"]
