# This file is part of hostlink.
# Copyright (c) 2026 hostlink developers
# SPDX-License-Identifier: BSD-2-Clause

"""Zero-copy mmap that maps the right pages behind an IOMMU, applied to LitePCIe's copied driver sources
when the driver is generated.

    fix_mmap(kernel_dir)   patch main.c; raise DriverPatchError naming the anchor when LitePCIe's sources
                           no longer have it.

LitePCIe 2024.12's mmap handler (the zero-copy path of `litepcie_util -z`, `hostlink_bench -m zero-copy`,
libhostlink's buffers) maps each DMA buffer with `remap_pfn_range(__pa(buffer))` on x86. That is right
only while `dma_alloc_coherent` returns an address of the kernel's linear map. Behind an IOMMU (VT-d,
AMD-Vi in translated mode) it returns an address in the vmalloc area, pages gathered and remapped to look
contiguous, and `__pa()` of it is a frame that belongs to someone else: the program reads and writes
unrelated memory while the device uses the buffers (LitePCIe issue #150, litex_m2sdr #77).

What changes: on all architectures but ARM (whose branch LitePCIe already derives from the DMA handle),
each buffer is mapped page by page, each page's frame taken from the kernel's address of that page:
`vmalloc_to_pfn()` in the vmalloc area, `virt_to_page()` in the linear map. The mapping is made on the
program's own VMA, so the flags `remap_pfn_range` sets (VM_IO, VM_PFNMAP, VM_DONTEXPAND, VM_DONTDUMP)
describe it; a copy of the VMA passed to `dma_mmap_coherent` per buffer would lose them (litex_m2sdr #136).
The length and offset checks are LitePCIe's, unchanged.

Tested without an IOMMU: REMAPPED_BUFFERS_PATCHES (for the simulated SoCs only, sim/uml/run.py) makes the
driver use each coherent buffer through a second, vmalloc-area mapping of its pages (`vmap`), which is
what an IOMMU's allocation hands the driver. The device still uses the buffer's bus address; the kernel's
copy paths and the mmap handler see only the vmalloc address. With LitePCIe's handler, zero-copy data is
then wrong; with this one it is checked equal.
"""

from hostlink.software.driver.patches import DriverPatchError, apply_patches, load_patches

__all__ = ["MMAP_PATCHES", "REMAPPED_BUFFERS_PATCHES", "fix_mmap", "use_remapped_buffers", "DriverPatchError"]

# The changes, as C, in mmap.patch. REQUIRED: the ARM branch computes `pfn` for the whole
# buffer, which the patched code keeps mapping in one piece (LitePCIe's #else becomes that branch's end).
MMAP_PATCHES, REQUIRED = load_patches("mmap.patch")

# For tests only (sim/uml/run.py), in remapped_buffers.patch: every coherent buffer used
# through a vmalloc-area alias of its pages, as behind an IOMMU. Needs MMAP_PATCHES' header. The alias is
# unmapped (devres, in reverse order) before the buffer is freed.
REMAPPED_BUFFERS_PATCHES, _ = load_patches("remapped_buffers.patch")


def fix_mmap(kernel_dir, patches=None):
    """Apply MMAP_PATCHES to LitePCIe's sources copied in `kernel_dir`."""
    apply_patches(kernel_dir, MMAP_PATCHES if patches is None else patches, REQUIRED, "zero-copy mmap")
    return kernel_dir


def use_remapped_buffers(kernel_dir):
    """Make the driver in `kernel_dir` (already fixed) use its DMA buffers through vmalloc-area aliases,
    as behind an IOMMU: for tests of the zero-copy mmap without one."""
    apply_patches(kernel_dir, REMAPPED_BUFFERS_PATCHES, (), "remapped buffers (test)")
    return kernel_dir
