# This file is part of hostlink.
# Copyright (c) 2026 hostlink developers
# SPDX-License-Identifier: BSD-2-Clause

"""What the judge costs: wall time per TLP of cocotbext-pcie's link, root complex and our host model alone.

Every `./sim.py dma` figure is measured against cocotbext-pcie's root complex and fabric (its `SimPort`
link with the link's rate, the root port's switch, the root complex) with hostlink's host model on top
(doc/pcie_sim.md). They run in Python, once per TLP, whatever drives the device side. This bench runs
them with no SoC at all: a bare cocotbext-pcie `Device` on the host's link writes `count` TLPs of the
host's MPS into host memory, back to back, as fast as the link takes them (c2h), or reads as much in
requests of the host's MRRS (h2c), and the bench reports the wall time per TLP. That time bounds the
simulated cycles per wall second any faster device side can reach: a device that moves one MPS TLP every
`cycles_per_tlp` cycles runs at most `cycles_per_tlp / wall_per_tlp` cycles per second (issue 34).

    python -m hostlink.sim.pcie.fabric_cost --board vc709 --count 4096

The Verilated top is an empty module: the bench needs a simulator for cocotb's timers only.
"""

import argparse
import json
import os
import tempfile
import time

import cocotb

TOP = "fabric_top"


async def _run(config):
    from cocotb.utils import get_sim_time
    from cocotbext.pcie.core import Device, Endpoint
    from cocotbext.pcie.core.tlp import Tlp, TlpType
    from hostlink.sim.pcie.bench import mps_code
    from hostlink.sim.pcie.models.host import HostProfile, HostRootComplex

    profile = HostProfile(**config["host"]).check()
    rc = HostRootComplex(profile)
    rc.max_payload_size      = mps_code(profile.max_payload_size)
    rc.max_read_request_size = mps_code(profile.max_read_request)
    function = Endpoint()
    function.configure_bar(0, 1 << 20)
    function.pcie_cap.max_payload_size_supported = 5
    dev = Device(function)
    dev.upstream_port.max_link_speed = profile.link_speed
    dev.upstream_port.max_link_width = profile.link_width
    rc.make_port().connect(dev)
    await rc.enumerate()

    count, direction = config["count"], config["direction"]
    size   = profile.max_payload_size if direction == "c2h" else profile.max_read_request
    region = rc.mem_pool.alloc_region(count * size)
    base   = region.get_absolute_address(0)
    data   = bytes(range(256)) * (size // 256 or 1)
    start_wall, start_ns = time.perf_counter(), get_sim_time("ns")
    if direction == "c2h":
        landed = cocotb.triggers.Event()
        writes = [0]
        original = rc.handle_mem_write_tlp
        async def handle(tlp):
            await original(tlp)
            writes[0] += 1
            if writes[0] == count:
                landed.set()
        rc.register_rx_tlp_handler(TlpType.MEM_WRITE,    handle)
        rc.register_rx_tlp_handler(TlpType.MEM_WRITE_64, handle)
        for i in range(count):
            tlp = Tlp()
            tlp.fmt_type = TlpType.MEM_WRITE_64
            tlp.requester_id = function.pcie_id
            tlp.set_addr_be_data(base + i * size, data[:size])
            await function.upstream_send(tlp)
        await landed.wait()
        tlps = count
    else:
        reads = [cocotb.start_soon(function.mem_read(base + i * size, size)) for i in range(count)]
        for read in reads:
            await read
        tlps = count * -(-size // profile.max_payload_size)   # Completions, at most MPS each.
    wall = time.perf_counter() - start_wall
    ns   = get_sim_time("ns") - start_ns
    with open(config["results"], "w") as f:
        json.dump({"direction": direction, "tlps": tlps, "bytes": count * size, "wall_s": wall, "sim_ns": ns,
            "wall_us_per_tlp": 1e6 * wall / tlps, "gbytes_per_s": count * size / ns}, f)


@cocotb.test()
async def fabric_cost(dut):
    with open(os.environ["HOSTLINK_SIM_CONFIG"]) as f:
        await _run(json.load(f))


def measure(board_name, count=4096, direction="c2h", profile=None):
    """{"wall_us_per_tlp", "tlps", "wall_s", "sim_ns", "gbytes_per_s"} of `count` MPS writes (c2h) or MRRS
    reads (h2c) between a bare device and the host model, on the board's link and host profile."""
    from hostlink.sim.dma import board_profile_defaults
    from hostlink.sim.pcie.models.host import host_profile
    from hostlink.sim.pcie.run import BUILD_ROOT, run_bench
    from hostlink.sim.verilator import compile_model
    from hostlink.sim.pcie.soc import get_board
    from hostlink.sim.build_lock import held
    board   = get_board(board_name)
    profile = profile or host_profile("default", **board_profile_defaults(board))
    model_dir = os.path.join(BUILD_ROOT, "fabric_cost")
    with held(model_dir + ".lock"):
        if not os.path.exists(os.path.join(model_dir, TOP)):
            os.makedirs(model_dir, exist_ok=True)
            source = os.path.join(model_dir, TOP + ".v")
            with open(source, "w") as f:
                f.write(f"module {TOP}(input wire clk);\nendmodule\n")
            compile_model(model_dir, TOP, [source], os.path.join(model_dir, "build.log"))
    with tempfile.TemporaryDirectory(prefix="hostlink-fabric-") as tmp:
        config = {"host": profile.as_dict(), "count": count, "direction": direction,
                  "results": os.path.join(tmp, "results.json")}
        path = os.path.join(tmp, "config.json")
        with open(path, "w") as f:
            json.dump(config, f)
        run_bench("hostlink.sim.pcie.fabric_cost", {"model_dir": model_dir}, tmp, path,
            log_file=os.path.join(tmp, "sim.log"), top=TOP)
        if not os.path.exists(config["results"]):
            raise RuntimeError("the fabric bench ended without results:\n" +
                open(os.path.join(tmp, "sim.log")).read()[-3000:])
        with open(config["results"]) as f:
            return json.load(f)


def main(argv=None):
    from hostlink.targets import boards as registry
    p = argparse.ArgumentParser(description=__doc__.strip().splitlines()[0])
    p.add_argument("--board", default="vc709", choices=registry.PCIE_BOARDS)
    p.add_argument("--count", type=int, default=4096, help="TLPs to move (default 4096)")
    p.add_argument("--direction", choices=["c2h", "h2c"], default="c2h")
    args = p.parse_args(argv)
    print(json.dumps(measure(args.board, args.count, args.direction), indent=2))


if __name__ == "__main__":
    main()
