# This file is part of hostlink.
# Copyright (c) 2026 hostlink developers
# SPDX-License-Identifier: BSD-2-Clause

"""PipelinedMACCore: LiteEth's MAC stages with a register stage between each, for 125 MHz on ECP5."""

from migen import *

from litex.gen import *

from litex.soc.interconnect import stream

from liteeth.common import eth_phy_description, eth_min_frame_length, eth_fcs_length
from liteeth.mac import crc, gap, padding, preamble

# Helpers ------------------------------------------------------------------------------------------

class _StageBuffer(LiteXModule):
    """A stage boundary for timing, without bubbles: `sink.ready` comes from a register (a skid
    buffer), `source.valid` and the data from registers too."""
    def __init__(self):
        self.pipe_ready = stream.PipeReady(eth_phy_description(8))
        self.pipe_valid = stream.PipeValid(eth_phy_description(8))
        self.sink   = self.pipe_ready.sink
        self.source = self.pipe_valid.source

        # # #

        self.comb += self.pipe_ready.source.connect(self.pipe_valid.sink)

# Pipelined MAC Core -------------------------------------------------------------------------------

class PipelinedMACCore(LiteXModule):
    """The datapath of LiteEth's `LiteEthMACCore(dw=8, with_sys_datapath=True)`, built from the same
    LiteEth stages (padding, CRC32, preamble, inter-frame gap, clock domain crossings) with a register
    stage (`_StageBuffer`) between every two stages that run in `sys`.

    In `LiteEthMACCore` each stage's `ready` depends combinationally on the next one's, so one path
    runs from the TX crossing's full flag through the preamble and CRC inserters and the padding
    into whatever feeds the MAC; on ECP5 that alone misses 125 MHz. Here no `ready` (nor `valid`)
    path crosses more than one stage. The buffers add latency, not bubbles: frames still leave
    back to back.

    TX: sink (`sys`) -> padding -> CRC -> preamble -> crossing -> gap (`eth_tx`) -> PHY.
    RX: PHY -> crossing (`eth_rx` -> `sys`) -> preamble check -> CRC check -> padding -> source.
    A PHY that declares `with_preamble_crc = False` (a simulation model) gets neither preamble nor
    CRC stages, one with `with_padding = False` no padding, one with `integrated_ifg_inserter`
    no gap inserter, as with `LiteEthMACCore`. Frames with a bad preamble or CRC are flagged on
    `source.error` at their last byte. The error counters of `LiteEthMACCore` are left out.
    """
    def __init__(self, phy, cdc_depth=16):
        if getattr(phy, "dw", None) != 8:
            raise ValueError(f"PipelinedMACCore needs an 8-bit PHY, not dw={getattr(phy, 'dw', None)!r}")
        if not isinstance(cdc_depth, int) or cdc_depth < 4 or cdc_depth & (cdc_depth - 1):
            raise ValueError(f"cdc_depth must be a power of 2 >= 4, not {cdc_depth!r}")
        self.sink   = stream.Endpoint(eth_phy_description(8))
        self.source = stream.Endpoint(eth_phy_description(8))

        # # #

        with_preamble_crc = getattr(phy, "with_preamble_crc", True)
        with_padding      = getattr(phy, "with_padding", True)

        def buffered(name, stages):
            """The stages, each behind a _StageBuffer, registered as submodules."""
            pipeline = []
            for i, stage in enumerate(stages):
                buffer = _StageBuffer()
                self.add_module(f"{name}_buffer{i}", buffer)
                self.add_module(f"{name}_stage{i}", stage)
                pipeline += [buffer, stage]
            return pipeline

        # TX Data-Path.
        # -------------
        tx_stages = []
        if with_padding:
            tx_stages.append(padding.LiteEthMACPaddingInserter(8, eth_min_frame_length - eth_fcs_length))
        if with_preamble_crc:
            tx_stages.append(crc.LiteEthMACCRC32Inserter(eth_phy_description(8)))
            tx_stages.append(preamble.LiteEthMACPreambleInserter(8))
        tx_stages.append(stream.ClockDomainCrossing(eth_phy_description(8),
            cd_from = "sys",
            cd_to   = "eth_tx",
            depth   = cdc_depth,
        ))
        tx_pipeline = buffered("tx", tx_stages)
        # The gap is counted in the PHY's clock, so that it is exact on the wire.
        if not getattr(phy, "integrated_ifg_inserter", False):
            self.tx_gap = ClockDomainsRenamer("eth_tx")(gap.LiteEthMACGap(8))
            tx_pipeline.append(self.tx_gap)
        self.tx_pipeline = stream.Pipeline(self.sink, *tx_pipeline, phy)

        # RX Data-Path.
        # -------------
        self.rx_cdc = stream.ClockDomainCrossing(eth_phy_description(8),
            cd_from = "eth_rx",
            cd_to   = "sys",
            depth   = cdc_depth,
        )
        rx_stages = []
        if with_preamble_crc:
            rx_stages.append(preamble.LiteEthMACPreambleChecker(8))
            rx_stages.append(crc.LiteEthMACCRC32Checker(eth_phy_description(8)))
        if with_padding:
            rx_stages.append(padding.LiteEthMACPaddingChecker(8, eth_min_frame_length - eth_fcs_length))
        self.rx_buffer_out = _StageBuffer()
        self.rx_pipeline = stream.Pipeline(phy, self.rx_cdc, *buffered("rx", rx_stages), self.rx_buffer_out,
            self.source)
