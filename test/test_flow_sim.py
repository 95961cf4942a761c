# This file is part of hostlink.
# Copyright (c) 2026 hostlink developers
# SPDX-License-Identifier: BSD-2-Clause

"""Flow modes on every PCIe board in simulation, with a host that runs a ring of buffers as a program does
(sim/pcie/stream_jobs.py) and stalls (the host profile's stall options).

- Lossless, through the example accelerator: a host that stalls for over 10 times its ring's drain time
  every 2 buffers; every result checked against the core's model (nothing lost, nothing stale), and both
  engines seen waiting for the host. (The same through the loopback runs in the host-profile matrix,
  test_pcie_host_profiles.py.) LitePCIe's loop mode, for contrast, loses data under the same host.
- Real-time, from the example source: at 110 % of what the stalling host consumes, data is dropped and
  each buffer's header says exactly how much was dropped before its data (the counts' gaps, word for word);
  at 90 % of what a host that keeps up consumes, nothing is dropped. What the host consumes is measured
  first, on the same SoC, with the channel's patterns in lossless flow.
"""

import json

import pytest

from hostlink.sim.dma import main as dma_main, board_profile_defaults
from hostlink.sim.pcie.models.host import host_profile
from hostlink.sim.pcie.soc import get_board
from hostlink.targets import boards as registry

pytestmark = pytest.mark.sim

ACCELERATOR = "examples.accelerator:Accelerator"
SOURCE      = "examples.stream_source:CountingSource"

STALL_RING        = (2, 4096)     # Buffers, bytes each, of the stalling host's ring.
STALL_EVERY       = 2             # Buffers served between two stalls.
KEEPING_UP_RING   = (8, 16384)


def link_bytes_per_ns(board):
    """The link's data rate after line coding: 0.5 bytes/ns per lane at Gen2, 0.985 at Gen3."""
    return board.link_width * {1: 0.25, 2: 0.5, 3: 128/130}[board.link_speed]


def stall_ns(board, ring=STALL_RING):
    """12 times the ring's drain time at the link's data rate: over 10 times at the rate the DMA reaches."""
    return round(12 * ring[0] * ring[1] / link_bytes_per_ns(board))


def stream_args(board, ring, stall=True):
    args = ["--board", board.name, "--ring", str(ring[0]), "--buffer-size", str(ring[1])]
    if stall:
        args += ["--stall-ns", str(stall_ns(board)), "--stall-every", str(STALL_EVERY)]
    return args


def run(argv, tmp_path, name):
    path = tmp_path / f"{name}.json"
    code = dma_main([*argv, "--json", str(path)])
    return code, json.loads(path.read_text())["results"]


@pytest.mark.parametrize("board", registry.PCIE_BOARDS)
def test_lossless_through_the_accelerator_with_a_stalling_host(board, tmp_path):
    board = get_board(board)
    argv = stream_args(board, STALL_RING) + ["--user-core", ACCELERATOR, "--sizes", "64K"]
    code, rows = run(argv + ["--flow", "lossless"], tmp_path, "lossless")
    assert code == 0
    [row] = rows
    assert (row["errors"], row["timed_out"], row["direction"]) == (0, False, "h2c+c2h")
    assert row["stalls"] >= 7   # 16 buffers: a stall after every 2 but the last.
    assert row["h2c_waits"] > 0 and row["c2h_waits"] > 0   # Both engines held for the host.
    # LitePCIe's loop mode under the same host reads buffers not yet refilled and overwrites unread ones.
    code, rows = run(argv + ["--flow", "loop"], tmp_path, "loop")
    assert code == 1 and rows[0]["errors"] > 0


@pytest.mark.parametrize("board", registry.PCIE_BOARDS)
def test_real_time_drops_are_counted_exactly_and_only_when_the_host_falls_behind(board, tmp_path):
    board = get_board(board)
    from hostlink.examples.stream_source import CountingSource, RATE_ONE
    source = CountingSource(board.data_width, board.sys_clk_hz())
    source_bytes_per_s = source.data_width / 8 * source.clk_freq   # At rate RATE_ONE.

    # What the host consumes, stalling and keeping up: the channel's patterns in lossless flow.
    _, stalling = run(stream_args(board, STALL_RING) + ["--flow", "lossless", "--directions", "c2h",
                                                         "--sizes", "128K"], tmp_path, "stalling")
    _, keeping  = run(stream_args(board, KEEPING_UP_RING, stall=False) + ["--flow", "lossless",
                      "--directions", "c2h", "--sizes", "512K"], tmp_path, "keeping")
    assert stalling[0]["errors"] == 0 and keeping[0]["errors"] == 0

    def rate(fraction, row):
        return round(RATE_ONE * fraction * row["gbytes_per_s"] * 1e9 / source_bytes_per_s)

    code, [over] = run(stream_args(board, STALL_RING) + ["--flow", "realtime", "--user-core", SOURCE,
        "--user-setting", f"rate={rate(1.10, stalling[0])}", "--sizes", "256K"], tmp_path, "over")
    assert code == 0 and over["errors"] == 0        # Every header says exactly what its buffer lacks.
    assert over["header_dropped_bytes"] > 0 and over["drop_event_count"] > 0
    assert over["port_dropped_bytes"] >= over["header_dropped_bytes"]
    assert over["core_overruns"] == 0                # All loss is where the headers say.

    code, [under] = run(stream_args(board, KEEPING_UP_RING, stall=False) + ["--flow", "realtime",
        "--user-core", SOURCE, "--user-setting", f"rate={rate(0.90, keeping[0])}", "--sizes", "512K"],
        tmp_path, "under")
    assert code == 0 and under["errors"] == 0
    assert under["header_dropped_bytes"] == 0 and under["core_overruns"] == 0


@pytest.mark.parametrize("board", registry.PCIE_BOARDS)
def test_packets_end_buffers_at_the_cores_last_with_their_lengths(board, tmp_path):
    """Packets flow from the example source, a packet every 1.5 buffers' worth of data: each packet
    reaches the host whole and in order, its end marked in the header of the buffer it ends in with the
    data's exact length (the rest of that buffer unused), nothing dropped."""
    board = get_board(board)
    from hostlink.examples.stream_source import CountingSource
    sample_bytes = CountingSource(board.data_width, board.sys_clk_hz()).data_width // 8
    buffers, buffer_bytes = KEEPING_UP_RING
    packet = -(-3 * (buffer_bytes - 32) // (2 * sample_bytes))   # Samples per packet.
    code, [row] = run(stream_args(board, KEEPING_UP_RING, stall=False) + ["--flow", "packets",
        "--user-core", SOURCE, "--user-setting", f"packet={packet}", "--sizes", "256K"], tmp_path, "packets")
    assert code == 0 and row["errors"] == 0
    assert row["packet_bytes"] == [packet * sample_bytes] and row["packet_count"] >= 8
    assert row["header_dropped_bytes"] == row["port_dropped_bytes"] == row["core_overruns"] == 0
    # Every buffer a packet ends in is short: 16 buffers carry less than 16 buffers' worth of data.
    assert row["bytes"] < 16 * (buffer_bytes - 32)
