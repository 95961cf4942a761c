# This file is part of hostlink.
# Copyright (c) 2026 hostlink developers
# SPDX-License-Identifier: BSD-2-Clause

"""`add_pcie()`: LiteX's `SoC.add_pcie()` with hostlink's endpoint (`hostlink.cores.pcie.endpoint`).

Same module names, CSRs, constants and MSI numbering as LiteX's method, so LitePCIe's generated driver and
user tools work unchanged; only the endpoint's completion path differs. Covers what hostlink's targets use:
Wishbone access through BAR0, plain MSI, scatter-gather DMA channels with buffering and loopback. The DMA
is LitePCIe's, with hostlink's descriptor splitter (`hostlink.cores.pcie.splitter`: no gap between
descriptors).
"""

from litepcie.core import LitePCIeMSI
from litepcie.frontend.dma import LitePCIeDMA
from litepcie.frontend.wishbone import LitePCIeWishboneMaster

from hostlink.cores.pcie.endpoint import PCIeEndpoint
from hostlink.cores.pcie.splitter import litepcie_with_descriptor_splitter


def add_pcie(soc, phy, ndmas, name="pcie", max_pending_requests=8, address_width=32,
    dma_buffering_depth = 1024,
    with_dma_loopback   = True,
    msi_width           = 32):
    if soc.csr.data_width != 32:
        raise ValueError(f"LitePCIe needs 32-bit CSRs, not {soc.csr.data_width!r}-bit")
    if 2*ndmas > msi_width:
        raise ValueError(f"{ndmas} DMA channels need {2*ndmas} MSI sources, more than {msi_width}")

    endpoint = PCIeEndpoint(phy,
        max_pending_requests = max_pending_requests,
        endianness           = phy.endianness,
        address_width        = address_width,
    )
    soc.add_module(name=f"{name}_endpoint", module=endpoint)

    mmap = LitePCIeWishboneMaster(endpoint, base_address=soc.mem_map["csr"])
    soc.add_module(name=f"{name}_mmap", module=mmap)
    soc.bus.add_master(name=f"{name}_mmap", master=mmap.wishbone)

    msi = LitePCIeMSI(width=msi_width)
    soc.add_module(name=f"{name}_msi", module=msi)
    soc.comb += msi.source.connect(phy.msi)

    msis = {}
    for i in range(ndmas):
        with litepcie_with_descriptor_splitter():
            dma = LitePCIeDMA(phy, endpoint,
                with_buffering = True, buffering_depth=dma_buffering_depth,
                with_loopback  = with_dma_loopback,
                address_width  = address_width,
            )
        soc.add_module(name=f"{name}_dma{i}", module=dma)
        msis[f"{name.upper()}_DMA{i}_WRITER"] = dma.writer.irq
        msis[f"{name.upper()}_DMA{i}_READER"] = dma.reader.irq
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
