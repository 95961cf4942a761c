# This file is part of hostlink.
# Copyright (c) 2026 hostlink developers
# SPDX-License-Identifier: BSD-2-Clause

"""`add_pcie()`: LiteX's `SoC.add_pcie()` with hostlink's endpoint (`hostlink.cores.pcie.endpoint`).

Same module names, CSRs, constants and MSI numbering as LiteX's method, so LitePCIe's generated driver and
user tools work unchanged; only the endpoint's completion path differs. Covers what hostlink's targets use:
Wishbone access through BAR0, plain MSI, scatter-gather DMA channels with buffering and loopback. The DMA
is LitePCIe's, with hostlink's descriptor splitter (`hostlink.cores.pcie.splitter`: no gap between
descriptors, bad descriptors refused, no request across 4 KiB).

The completion path checks its completions (timeout, error/poisoned status, unexpected tags, other
requesters: `TLPController`, `ReadFaultGuard`), and `<name>_faults` (`PCIeFaults`) counts every fault in one
CSR block. Where the hard block takes error reports from the user logic, completion timeouts and unexpected
completions are reported to it: `cfg_err_cpl_timeout` / `cfg_err_cpl_unexpect` on `pcie_7x`,
`cfg_err_uncor_in` on `pcie3_7x`.
"""

from migen import *
from migen.genlib.cdc import PulseSynchronizer

from litepcie.core import LitePCIeMSI
from litepcie.frontend.dma import LitePCIeDMA
from litepcie.frontend.wishbone import LitePCIeWishboneMaster

from hostlink.cores.pcie.endpoint import PCIeEndpoint
from hostlink.cores.pcie.faults import PCIeFaults
from hostlink.cores.pcie.splitter import litepcie_with_descriptor_splitter

# Within the PCIe specification's completion timeout ranges (50 us to 50 ms; 10 ms is in range B).
COMPLETION_TIMEOUT_S = 10e-3


def add_pcie(soc, phy, ndmas, name="pcie", max_pending_requests=8, address_width=32,
    dma_buffering_depth  = 1024,
    with_dma_loopback    = True,
    msi_width            = 32,
    completion_timeout_s = COMPLETION_TIMEOUT_S):
    if soc.csr.data_width != 32:
        raise ValueError(f"LitePCIe needs 32-bit CSRs, not {soc.csr.data_width!r}-bit")
    if 2*ndmas > msi_width:
        raise ValueError(f"{ndmas} DMA channels need {2*ndmas} MSI sources, more than {msi_width}")
    # A hard block that times reads out itself (pcie3_7x) asks for a longer backstop.
    completion_timeout_s = getattr(phy, "completion_timeout_s", completion_timeout_s)
    timeout_cycles = round(completion_timeout_s*soc.sys_clk_freq)
    if not (0 < timeout_cycles < 2**32):
        raise ValueError(f"completion timeout must be a positive number of seconds that fits 2**32 cycles, "
            f"not {completion_timeout_s!r}")

    endpoint = PCIeEndpoint(phy,
        max_pending_requests = max_pending_requests,
        endianness           = phy.endianness,
        address_width        = address_width,
        completion_checks    = True,
        timeout_cycles       = timeout_cycles,
    )
    soc.add_module(name=f"{name}_endpoint", module=endpoint)

    mmap = LitePCIeWishboneMaster(endpoint, base_address=soc.mem_map["csr"])
    soc.add_module(name=f"{name}_mmap", module=mmap)
    soc.bus.add_master(name=f"{name}_mmap", master=mmap.wishbone)

    msi = LitePCIeMSI(width=msi_width)
    soc.add_module(name=f"{name}_msi", module=msi)
    soc.comb += msi.source.connect(phy.msi)

    msis = {}
    refused = []
    # LitePCIe sizes each DMA reader's data FIFO for 4 x `max_pending_requests` reads of the largest size.
    # Where the block's completion space keeps fewer reads in flight than there are tags (every board with
    # 32 tags), the FIFO is sized on the reads the space admits: 4x what can be in flight, as LitePCIe
    # means, not 4x the tags (64 KiB per channel at 32 tags, 14x what the ZC706 can have in flight).
    largest_read = endpoint.crossbar.max_request_bytes
    fifo_reads   = min(max_pending_requests,
        2**log2_int(-(-endpoint.reads_in_flight_bytes//largest_read), need_pow2=False))
    for i in range(ndmas):
        with litepcie_with_descriptor_splitter(word_bytes=phy.data_width//8):
            endpoint.max_pending_requests = fifo_reads   # Read by LitePCIeDMAReader for its FIFO only.
            try:
                dma = LitePCIeDMA(phy, endpoint,
                    with_buffering = True, buffering_depth=dma_buffering_depth,
                    with_loopback  = with_dma_loopback,
                    address_width  = address_width,
                )
            finally:
                endpoint.max_pending_requests = max_pending_requests
        soc.add_module(name=f"{name}_dma{i}", module=dma)
        msis[f"{name.upper()}_DMA{i}_WRITER"] = dma.writer.irq
        msis[f"{name.upper()}_DMA{i}_READER"] = dma.reader.irq
        endpoint.crossbar.guard.add_reader(dma.reader.port.channel, dma.reader.enable)
        refused += [dma.reader.splitter.refused, dma.writer.splitter.refused]

    # Fault counters, and the hard block's error reports.
    controller = endpoint.crossbar.controller
    faults = PCIeFaults(controller, endpoint.crossbar.guard, refused,
        msi_failed = getattr(phy, "msi_failed", None),
        msi_domain = "pcie",
    )
    soc.add_module(name=f"{name}_faults", module=faults)
    faults.add_csr()
    _report_errors_to_hard_block(soc, phy, controller.timeout_event, controller.unexpected_event)
    soc.add_constant("DMA_CHANNELS",   ndmas)
    soc.add_constant("DMA_ADDR_WIDTH", address_width)

    # MSI vectors in the order LiteX numbers them (sorted names): the generated driver relies on it.
    for i, (source, irq) in enumerate(sorted(msis.items())):
        soc.comb += msi.irqs[i].eq(irq)
        soc.add_constant(source + "_INTERRUPT", i)

    # A PHY whose streams are in its own `pcie` domain (VC709) runs the SoC on that clock: no false path then.
    if getattr(phy, "clock_domain", "sys") != "pcie":
        soc.platform.add_false_path_constraints(soc.crg.cd_sys.clk, phy.cd_pcie.clk)
    return endpoint


def _report_errors_to_hard_block(soc, phy, timeout, unexpected):
    """Completion timeouts and unexpected completions (sys-domain pulses) to the hard block's error inputs,
    which report them to the root complex (AER); a lost pulse (two within the synchronizer's few cycles)
    only loses a report, the counters have them all."""
    reports = []
    params  = getattr(phy, "pcie_phy_params", {})
    if "i_cfg_err_cpl_timeout" in params and "i_cfg_err_cpl_unexpect" in params:   # pcie_7x (PG054).
        reports = [(timeout, "i_cfg_err_cpl_timeout"), (unexpected, "i_cfg_err_cpl_unexpect")]
    elif hasattr(phy, "err_uncor"):                                                  # pcie3_7x (PG023).
        either = Signal()
        soc.comb += either.eq(timeout | unexpected)
        reports = [(either, None)]
    for pulse, param in reports:
        sync = PulseSynchronizer("sys", "pcie")
        soc.submodules += sync
        soc.comb += sync.i.eq(pulse)
        if param is None:
            soc.comb += phy.err_uncor.eq(sync.o)
        else:
            params[param] = sync.o
