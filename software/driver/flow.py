# This file is part of hostlink.
# Copyright (c) 2026 hostlink developers
# SPDX-License-Identifier: BSD-2-Clause

"""Flow modes in LitePCIe's Linux driver (hostlink.cores.pcie.flow), added to its copied sources when the
driver is generated (after polling.py).

    add_flow(kernel_dir)   patch main.c and litepcie.h; raise DriverPatchError naming the anchor when
                           LitePCIe's sources no longer have it.
    flow_offsets(csr, ...) the flow registers' offsets in a DMA channel's CSR region, for config.h.

LitePCIe's driver already keeps, per direction, the buffers the DMA has done (`hw_count`, from the loop
status) and those the program has served (`sw_count`: read, or written), and the program tells it with
read(), write() or the zero-copy update ioctls. What it lacks is telling the DMA: in loop mode the DMA
overwrites buffers not yet read, and reads buffers not yet written ("Reading/Writing too late, N buffers
lost"). What changes:

- LITEPCIE_IOCTL_DMA_FLOW {writer, reader} (new): a direction's flow mode, set by the holder of its lock
  while it is stopped, used from its next start; 0 loop (LitePCIe's, the default), 1 lossless, 2
  real-time (writer only: the channel's user port drops data between buffers and heads each buffer with
  what it dropped), 3 packets (lossless, each buffer headed by its data's length: a writer's ended early
  by the core's `last`, a reader's written so by the program and deframed by the user port). Releasing
  the file sets it back to 0.
- At the start of a gated direction the driver writes the mode and what the DMA may use: for a writer,
  half the ring (read() and the zero-copy path count a buffer as lost when the DMA is more than half the
  ring ahead, so the DMA never goes further), and the buffer size for framing (real-time, packets);
  for a reader, the buffers written before the start, and in packets flow the buffer size (in the
  writer's register, which the user port's deframer reads: one ring size both ways).
- Each time the program's count moves (read(), write(), the update ioctls), one register write gives
  the DMA the new count: writer, `sw_count` + half the ring; reader, `sw_count`. One write per call,
  however many buffers it served.

- A polled direction (polling.py) in a flow mode counts the buffers done from the flow gate's
  `done`, exactly (the loop status is one buffer behind): a program polling sees its last buffer.

So a program that falls behind makes the DMA wait instead of losing buffers; LitePCIe's own tools
(`litepcie_util dma_test`, `litepcie_test`) behave as before unless a program sets a flow mode.
"""

from hostlink.software.driver.patches import DriverPatchError, apply_patches, load_patches

__all__ = ["FLOW_PATCHES", "FLOW_REGISTERS", "add_flow", "flow_offsets", "DriverPatchError"]

# The flow registers the driver writes or reads, per direction (hostlink.cores.pcie.flow.DMAFlow's CSRs;
# STARTED and WAITS for the stats ioctl, stats.py).
FLOW_REGISTERS = [("WRITER", "MODE"), ("WRITER", "GIVEN"), ("WRITER", "DONE"), ("WRITER", "BUFFER_BYTES"),
                  ("WRITER", "STARTED"), ("WRITER", "WAITS"),
                  ("READER", "MODE"), ("READER", "GIVEN"), ("READER", "DONE"),
                  ("READER", "STARTED"), ("READER", "WAITS")]

def flow_offsets(csr_defines, csr_offset):
    """{PCIE_DMA_<ENGINE>_FLOW_<REG>_OFFSET: offset} from channel 0 of csr.h's defines (`csr_offset` reads
    an address define), or {} for a SoC without flow gates. The package's _check_dma_offsets then checks
    every channel against them."""
    if "CSR_PCIE_DMA0_WRITER_FLOW_MODE_ADDR" not in csr_defines:
        return {}
    base = csr_offset(csr_defines.get("CSR_PCIE_DMA0_BASE", ""))
    offsets = {}
    for engine, reg in FLOW_REGISTERS:
        addr = csr_offset(csr_defines.get(f"CSR_PCIE_DMA0_{engine}_FLOW_{reg}_ADDR", ""))
        if base is None or addr is None:
            raise ValueError(f"csr.h has a flow gate without a readable CSR_PCIE_DMA0_{engine}_FLOW_{reg}_ADDR")
        offsets[f"PCIE_DMA_{engine}_FLOW_{reg}_OFFSET"] = addr - base
    return offsets


# The changes, as C, in flow.patch.
FLOW_PATCHES, _ = load_patches("flow.patch")


def add_flow(kernel_dir, patches=None):
    """Apply FLOW_PATCHES to the (hardened, polled) LitePCIe sources in `kernel_dir`; all or nothing."""
    apply_patches(kernel_dir, FLOW_PATCHES if patches is None else patches, kind="flow change")
    return kernel_dir
