# This file is part of hostlink.
# Copyright (c) 2026 hostlink developers
# SPDX-License-Identifier: BSD-2-Clause

"""The VC709 target and its pcie3_7x PHY: platform pins, elaboration, CSR map, generated Vivado sources,
bad input, CLI, the 3-DW to 4-DW header expander, and a short DMA simulation against the UltraScale model."""

import os
import random

import pytest

from migen import *

from hostlink.targets import vc709, vc709_platform
from hostlink.cores.pcie.v7gen3phy import V7Gen3PCIEPHY
from hostlink.cores.pcie.tlp import TLPHeader4DWExpander

from helpers import check_enumeration, check_every_row, check_pcie_registers, elaborate, elaborate_fresh, run_target
from benches.migen_streams import IDLE_X_BACKPRESSURE_AS_IDLE, wait_for

# Helpers ------------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def default_build(tmp_path_factory):
    return elaborate_fresh(tmp_path_factory, "vc709_default", vc709.BaseSoC)

# Platform -----------------------------------------------------------------------------------------

def _io(name, number=0):
    for io in vc709_platform._io:
        if io[0] == name and io[1] == number:
            return io
    raise KeyError(name)

def _subsignal_pins(io, name):
    for sub in io[2:]:
        if getattr(sub, "name", None) == name:
            return next(c for c in sub.constraints if hasattr(c, "identifiers")).identifiers
    raise KeyError(name)

def test_platform_pcie_x8_pins():
    io = _io("pcie_x8")
    assert _subsignal_pins(io, "clk_p") == ["AB8"]
    assert _subsignal_pins(io, "clk_n") == ["AB7"]
    assert _subsignal_pins(io, "rst_n") == ["AV35"]
    assert _subsignal_pins(io, "rx_p") == ["Y4", "AA6", "AB4", "AC6", "AD4", "AE6", "AF4", "AG6"]
    assert _subsignal_pins(io, "tx_p") == ["W2", "AA2", "AC2", "AE2", "AG2", "AH4", "AJ2", "AK4"]
    # Narrower links use the first lanes of the same wiring.
    assert _subsignal_pins(_io("pcie_x4"), "rx_p") == ["Y4", "AA6", "AB4", "AC6"]
    assert all(len(set(_subsignal_pins(io, s))) == 8 for s in ["rx_p", "rx_n", "tx_p", "tx_n"])

def test_platform_clock_and_leds():
    assert _subsignal_pins(_io("clk200"), "p") == ["H19"]
    assert _subsignal_pins(_io("clk200"), "n") == ["G18"]
    leds = [_io("user_led", i)[2].identifiers[0] for i in range(8)]
    assert leds == ["AM39", "AN39", "AR37", "AT37", "AR35", "AP41", "AP42", "AU39"]
    assert vc709_platform.Platform().device == "xc7vx690t-ffg1761-2"

# Elaboration and CSR map --------------------------------------------------------------------------

def test_csr_map_has_phy_and_dma_registers(default_build):
    soc, csr, _ = default_build
    check_pcie_registers(csr, channels=2)
    assert soc.pcie_phy.data_width == 256 and soc.pcie_phy.nlanes == 8

@pytest.mark.slow
def test_reads_in_flight_fill_the_completion_bytes(default_build):
    """With RC straddling no completion headers are reserved: the block's 15,872 bytes bound the reads in
    flight (32 tags of 512 bytes would be 16 KiB). LitePCIe's reader FIFO is sized on that, rounded up to a
    power of two (4 x 32 reads of 512 bytes)."""
    soc = default_build[0]
    assert soc.pcie_phy.rc_straddle
    assert soc.pcie_endpoint.reads_in_flight_bytes == 15872
    assert soc.pcie_dma0.reader.data_fifo.depth*32 == 4*32*512


def test_without_rc_straddling_the_headers_bound_the_reads(tmp_path):
    """One completion per RC beat (LitePCIe's RC adapter): 64 headers of 64 bytes bound the reads in flight to
    4 KiB whatever the 32 tags allow, and the reader FIFO is sized on that (4 x 8 reads of 512 bytes)."""
    soc, _ = elaborate(vc709.BaseSoC, tmp_path, rc_straddle=False)
    assert soc.pcie_phy.completion_source is None
    assert soc.pcie_endpoint.reads_in_flight_bytes == 4096
    assert soc.pcie_dma0.reader.data_fifo.depth*32 == 4*8*512


def test_rc_straddling_needs_the_256_bit_interface_in_the_blocks_clock():
    from types import SimpleNamespace
    pads = SimpleNamespace(tx_p=Signal(8))
    with pytest.raises(ValueError, match="RC straddling needs the 256-bit interface at the block's clock"):
        V7Gen3PCIEPHY(vc709_platform.Platform(), pads, cd="sys", rc_straddle=True)


def test_eight_channels_elaborate(tmp_path):
    _, csr = elaborate(vc709.BaseSoC, tmp_path, dma_channels=8)
    assert "pcie_dma7_reader_enable" in csr["csr_registers"]
    assert csr["constants"]["dma_channels"] == 8

def test_generated_tcl_configures_pcie3_7x(default_build):
    _, _, output_dir = default_build
    with open(os.path.join(str(output_dir), "gateware", "vc709.tcl")) as f:
        tcl = f.read()
    assert "create_ip -vendor xilinx.com -name pcie3_7x -module_name pcie3_7x_0" in tcl
    for setting in ["PL_LINK_CAP_MAX_LINK_WIDTH {X8}", "PL_LINK_CAP_MAX_LINK_SPEED {8.0_GT/s}",
                    "axisten_if_width {256_bit}", "axisten_freq {250}", "PF0_DEVICE_ID {8038}",
                    "pf0_bar0_size {1}", "pf0_bar0_scale {Megabytes}", "PF0_INTERRUPT_PIN {NONE}",
                    "pcie_blk_locn {X0Y1}"]:
        assert f"CONFIG.{setting}" in tcl, setting
    for adapter in ["axis_iff.v", "s_axis_rq_adapt_256b.v", "m_axis_cq_adapt_256b.v", "s_axis_cc_adapt_256b.v"]:
        assert adapter in tcl
    # Straddled completions go to hostlink's depacketizer, not LitePCIe's RC adapter.
    assert "CONFIG.AXISTEN_IF_RC_STRADDLE {true}" in tcl
    assert "m_axis_rc_adapt_256b.v" not in tcl
    with open(os.path.join(str(output_dir), "gateware", "vc709.v")) as f:
        verilog = f.read()
    assert verilog.count("pcie3_7x_0 pcie3_7x_0(") == 1
    for port in ["pipe_pclk_in", "pipe_userclk1_in", "pipe_userclk2_in", "cfg_interrupt_msi_int",
                 "s_axis_rq_tuser", "m_axis_rc_tready"]:
        assert f".{port}" in verilog

def test_soc_runs_on_the_hard_blocks_user_clock(default_build):
    # One clock from the block's streams to the DMA: no asynchronous FIFO (LiteX's gray-code pointers),
    # and no false path between the system clock and the block's, which are one clock.
    soc, _, output_dir = default_build
    assert soc.pcie_phy.clock_domain == "pcie"
    with open(os.path.join(str(output_dir), "gateware", "vc709.v")) as f:
        verilog = f.read()
    assert "graycounter" not in verilog
    assert "assign sys_clk = pcie_clk;" in verilog
    with open(os.path.join(str(output_dir), "gateware", "vc709.xdc")) as f:
        assert "set_clock_groups" not in f.read()

@pytest.mark.slow
def test_dram_clock_comes_from_the_board_oscillator(tmp_path):
    soc, _ = elaborate(vc709.BaseSoC, tmp_path, with_dram=True)
    with open(os.path.join(str(tmp_path), "gateware", "vc709.xdc")) as f:
        xdc = f.read()
    assert "create_clock -name clk200_p -period 5.0" in xdc
    # The DRAM side crosses to the system clock through FIFOs: the two clocks are asynchronous groups.
    assert ("set_clock_groups -group [get_clocks -include_generated_clocks -of [get_nets sys_clk]] "
            "-group [get_clocks -include_generated_clocks -of [get_nets dram_clk]] -asynchronous") in xdc

# Bad parameters -----------------------------------------------------------------------------------

@pytest.mark.parametrize("kwargs, message", [
    ({"lanes": 3},         "PCIe lane count must be one of 1, 2, 4, 8, not 3"),
    ({"data_width": 128},  r"PCIe data width \(bits\) must be one of 256, not 128"),
    ({"dma_channels": 0},  "DMA channel count must be an integer from 1 to 8, not 0"),
    ({"dma_channels": 9},  "DMA channel count must be an integer from 1 to 8, not 9"),
    ({"sys_clk_freq": 200e6},
        "the VC709 SoC runs on pcie3_7x's 250 MHz user clock: the system clock cannot be 200 MHz"),
])
def test_target_rejects_bad_parameters(kwargs, message):
    with pytest.raises(ValueError, match=message):
        vc709.BaseSoC(**kwargs)

def _phy(**kwargs):
    platform = vc709_platform.Platform()
    return V7Gen3PCIEPHY(platform, platform.request("pcie_x8"), **kwargs)

@pytest.mark.parametrize("kwargs, message", [
    ({"speed": "gen4"},                    "PCIe speed must be one of gen1, gen2, gen3, not 'gen4'"),
    ({"data_width": 512},                  r"PCIe data width \(bits\) must be one of 64, 128, 256, not 512"),
    ({"pcie_data_width": 128},             "pcie3_7x at gen3 x8 and a 250 MHz user clock has a 256-bit interface, not 128"),
    ({"bar0_size": 0x1000},                "BAR0 size must be a power of two of at least 1 MiB, not 4096"),
    ({"bar0_size": 3 << 20},               "BAR0 size must be a power of two of at least 1 MiB, not 3145728"),
    ({"msi_vectors": 3},                   "MSI vector count must be one of 1, 2, 4, 8, 16, 32, not 3"),
])
def test_phy_rejects_bad_parameters(kwargs, message):
    with pytest.raises(ValueError, match=message):
        _phy(**kwargs)

def test_phy_lane_count_comes_from_the_pads():
    platform = vc709_platform.Platform()
    phy = V7Gen3PCIEPHY(platform, platform.request("pcie_x4"), data_width=128)
    assert phy.nlanes == 4 and phy.pcie_data_width == 128
    assert phy.ip_config()["PF0_DEVICE_ID"] == "8034"

# CLI ----------------------------------------------------------------------------------------------

def test_cli_build_without_vivado_fails_with_one_line(tmp_path):
    result = run_target("vc709", "--build", "--output-dir", str(tmp_path))
    assert result.returncode != 0
    errors = [l for l in result.stderr.splitlines() if l.strip()]
    assert len(errors) == 1
    assert "--build needs 'vivado' on PATH" in errors[0]
    assert os.path.exists(os.path.join(str(tmp_path), "gateware", "vc709.tcl"))

def test_cli_rejects_bad_channel_count(tmp_path):
    result = run_target("vc709", "--dma-channels", "9", "--output-dir", str(tmp_path))
    assert result.returncode == 2
    assert "DMA channel count must be an integer from 1 to 8, not 9" in result.stderr

# Header expander ----------------------------------------------------------------------------------

def _request(rng, write, ndw, four_dw):
    """A LitePCIe request as a list of DWs (header then payload)."""
    length = ndw if write else rng.randrange(1, 129)
    dw0 = (length & 0x3ff) | ((1 << 30) if write else 0) | ((1 << 29) if four_dw else 0)
    dw1 = rng.getrandbits(32)
    address = [rng.getrandbits(32) | 1, rng.getrandbits(30) << 2] if four_dw else [rng.getrandbits(30) << 2]
    payload = [rng.getrandbits(32) for _ in range(ndw if write else 0)]
    return [dw0, dw1] + address + payload

def _expanded(dws):
    if dws[0] & (1 << 29):
        return dws
    return [dws[0] | (1 << 29), dws[1], 0, dws[2]] + dws[3:]

def _beats(dws, n):
    beats = []
    for i in range(0, len(dws), n):
        chunk = dws[i:i + n]
        dat = sum(d << (32*k) for k, d in enumerate(chunk))
        be  = sum(0xf << (4*k) for k in range(len(chunk)))
        beats.append((dat, be, i == 0, i + n >= len(dws)))
    return beats

@pytest.mark.parametrize("data_width", [128, 256])
@pytest.mark.parametrize("idle, backpressure", IDLE_X_BACKPRESSURE_AS_IDLE)
def test_header_expander(data_width, idle, backpressure):
    rng  = random.Random(20260 + data_width)
    n    = data_width//32
    dut  = TLPHeader4DWExpander(data_width)
    # Reads (no payload), writes of 1 DW to 128 DWs (512 bytes, LitePCIe's largest), every payload length
    # around a beat boundary, both header sizes.
    packets = []
    for ndw in [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 15, 16, 17, 31, 63, 64, 127, 128]:
        for four_dw in (False, True):
            packets.append(_request(rng, write=ndw > 0, ndw=ndw, four_dw=four_dw))
    expected = [_expanded(p) for p in packets]
    received = []

    def source():
        for p in packets:
            for dat, be, first, last in _beats(p, n):
                while rng.random() < idle:
                    yield dut.sink.valid.eq(0)
                    yield
                yield dut.sink.valid.eq(1)
                yield dut.sink.dat.eq(dat)
                yield dut.sink.be.eq(be)
                yield dut.sink.first.eq(first)
                yield dut.sink.last.eq(last)
                yield
                yield from wait_for(dut.sink.ready)
            yield dut.sink.valid.eq(0)
        yield dut.sink.valid.eq(0)

    def sink():
        current = []
        timeout = 0
        while len(received) < len(packets) and timeout < 20000:
            timeout += 1
            ready = rng.random() >= backpressure
            yield dut.source.ready.eq(ready)
            yield
            if ready and (yield dut.source.valid):
                dat, be = (yield dut.source.dat), (yield dut.source.be)
                for k in range(n):
                    if (be >> (4*k)) & 0xf:
                        current.append((dat >> (32*k)) & 0xffffffff)
                if (yield dut.source.last):
                    received.append(current)
                    current = []
        assert current == []

    run_simulation(dut, [source(), sink()])
    assert received == expected

# Simulation ---------------------------------------------------------------------------------------

# LitePCIe's DMA moves whole datapath words: on the 256-bit VC709 datapath, transfer sizes are multiples of
# 32 bytes (one word, 129 words, 2051 words...). C2H jobs follow H2C ones, as the ZC706 tests order them.
def _jobs():
    jobs = []
    for size in [32, 4128, 65536 + 96, 1 << 20]:
        jobs.append({"kind": "bidir", "size": size, "channels": [0], "descriptor_size": 65536})
    jobs.append({"kind": "bidir", "size": 16384, "channels": [0], "descriptor_size": 4096, "irq_every": 2})
    jobs.append({"kind": "bidir", "size": 8192 + 64, "channels": [0, 1], "descriptor_size": 4096})
    for size in [32, 12320]:
        for kind in ("h2c", "c2h"):
            jobs.append({"kind": kind, "size": size, "channels": [0], "descriptor_size": 65536})
    return jobs

@pytest.fixture(scope="module")
def sim_run():
    from hostlink.sim.pcie.run import run_jobs
    from hostlink.sim.pcie.models.host import host_profile
    # MRRS 512: a host that kept the firmware's value (the VC709's own profile grants 4096, below).
    profile = host_profile("default", link_speed=3, link_width=8, seed=9)
    return run_jobs("vc709", _jobs(), profile, dma_channels=2)

@pytest.mark.sim
def test_sim_enumeration(sim_run):
    check_enumeration(sim_run["enumeration"], "v7gen3", gen=3, lanes=8, device_id=0x8038)

@pytest.mark.sim
def test_sim_transfers_every_byte_with_the_msis_asked_for(sim_run):
    check_every_row(sim_run, _jobs())
    # The 16 KiB job: 4 descriptors per direction, an MSI on the 2nd and the 4th: 2 per direction.
    (row,) = [r for r in sim_run["results"] if r["size"] == 16384]
    assert row["msis_expected"] == 4


# A host granting MRRS 4096 (some firmware does): the DMA still reads at most 512 bytes at a time, since the
# completion headers bound the reads in flight to 64 x 64 bytes and a larger read only holds more of them.
# The descriptors of the last job are smaller than a read, those of the others end on a partial request.
def _large_mrrs_jobs():
    jobs = [{"kind": "bidir", "size": size, "channels": [0], "descriptor_size": 65536}
            for size in [32, 4128, 65536 + 96, 1 << 18]]
    jobs.append({"kind": "h2c", "size": 12320, "channels": [0], "descriptor_size": 65536})
    jobs.append({"kind": "bidir", "size": 16384 + 32, "channels": [0, 1], "descriptor_size": 2048})
    return jobs

@pytest.fixture(scope="module")
def sim_run_large_mrrs():
    from hostlink.sim.pcie.run import run_jobs
    from hostlink.sim.pcie.models.host import host_profile
    profile = host_profile("default", link_speed=3, link_width=8, max_read_request=4096, seed=4)
    return run_jobs("vc709", _large_mrrs_jobs(), profile, dma_channels=2)

@pytest.mark.sim
def test_sim_reads_stay_at_512_bytes_when_the_host_grants_4096(sim_run_large_mrrs):
    assert sim_run_large_mrrs["enumeration"]["max_request_size"] == 512
    reads = sim_run_large_mrrs["host_reads"]
    assert reads["largest_bytes"] == 512
    assert reads["bad"] == 0                  # None over MRRS or across 4 KiB.
    rows = sim_run_large_mrrs["results"]
    assert len(rows) == len(_large_mrrs_jobs())
    for row in rows:
        assert not row["timed_out"], row
        assert row["errors"] == 0, row
        assert 0 < row["msis"] <= row["msis_expected"], row

def test_phy_reads_up_to_4096_bytes_from_128_bits():
    """Reads stop at 512 bytes unless asked. The dword count fix needs the whole RQ descriptor in the first
    beat: 128 and 256 bits take 4096; at 64 bits reads stop at 2048 bytes, whose count LitePCIe's adapter
    expresses."""
    assert _phy().max_request_limit == 512
    platform = vc709_platform.Platform()
    phy = V7Gen3PCIEPHY(platform, platform.request("pcie_x8"), max_read_bytes=4096)
    assert phy.max_request_limit == 4096
    platform = vc709_platform.Platform()
    with pytest.raises(ValueError, match="largest read request must be a power of two from 128 to 2048 "
                                         "bytes at 64 bits, not 4096"):
        V7Gen3PCIEPHY(platform, platform.request("pcie_x1"), data_width=64, max_read_bytes=4096)

# Write hand-off on RQ -----------------------------------------------------------------------------

def _rq_descriptor(request_type):
    """An RQ descriptor (128 bits) with `request_type` in bits 78:75 and a dword count of 4."""
    return (request_type << 75) | (4 << 64)

@pytest.mark.parametrize("data_width", [64, 128, 256])
def test_rq_write_handoff_counts_each_write_once_and_no_read(data_width):
    """A read then two writes enter RQ, back to back and with the block's tready low now and then: each write
    is taken once, a read never. At 128 and 256 bits a write leaves with sequence number 1 on its first beat
    (reads with 0) and is taken when the block gives the number back; at 64 bits (the request type in the
    second beat) with its last beat."""
    from hostlink.cores.pcie.v7gen3phy import RQWriteHandoff, RQ_MEMORY_WRITE, WRITE_SEQ_NUM
    from migen.sim import run_simulation
    dut  = RQWriteHandoff(data_width)
    read = 0b0000
    # Beats of each request: at 64 bits the descriptor takes two beats, then 16 bytes of data take two.
    def beats(request_type, data_beats):
        d = _rq_descriptor(request_type)
        if data_width == 64:
            return [d & (2**64 - 1), d >> 64] + [0]*data_beats
        return [d] + [0]*(data_beats if data_width == 128 else min(data_beats, 1))
    requests = [(read, beats(read, 0)), (RQ_MEMORY_WRITE, beats(RQ_MEMORY_WRITE, 2)),
                (RQ_MEMORY_WRITE, beats(RQ_MEMORY_WRITE, 2))]
    stream_beats = [(kind, data, i == len(b) - 1, i == 0) for kind, b in requests for i, data in enumerate(b)]
    seen = {"taken": 0, "seq": []}

    def driver():
        ready_pattern = [1, 0, 1, 1, 0]
        cycle = 0
        for kind, data, last, first in stream_beats:
            while True:
                ready = ready_pattern[cycle % len(ready_pattern)]
                yield dut.tdata.eq(data)
                yield dut.tvalid.eq(1)
                yield dut.tlast.eq(last)
                yield dut.tready.eq(ready)
                yield
                cycle += 1
                if ready:
                    break
        yield dut.tvalid.eq(0)
        yield dut.tready.eq(0)
        for _ in range(20):
            yield

    def block():
        # The block gives a request's sequence number (its first beat's) back a few cycles later.
        pending, first = [], True
        for cycle in range(60):
            if (yield dut.tvalid) and (yield dut.tready):
                if first:
                    seq = ((yield dut.tuser_out) >> 24) & 0xf
                    seen["seq"].append(seq)
                    pending.append((cycle + 3, seq))
                first = bool((yield dut.tlast))
            due = [p for p in pending if p[0] == cycle]
            if due and data_width >= 128:
                pending.remove(due[0])
                yield dut.seq_num.eq(due[0][1])
                yield dut.seq_num_vld.eq(1)
            else:
                yield dut.seq_num_vld.eq(0)
            if (yield dut.write_taken):
                seen["taken"] += 1
            yield

    run_simulation(dut, [driver(), block()])
    assert seen["taken"] == 2, seen
    if data_width >= 128:
        assert seen["seq"] == [0, WRITE_SEQ_NUM, WRITE_SEQ_NUM], seen
