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

from hostlink.software.driver_patches import DriverPatchError, apply_patches

__all__ = ["MMAP_PATCHES", "REMAPPED_BUFFERS_PATCHES", "fix_mmap", "use_remapped_buffers", "DriverPatchError"]

_MMAP = "static int litepcie_mmap(struct file *file, struct vm_area_struct *vma)\n"

# LitePCIe's mapping of a whole buffer, after its #if/#else: kept for ARM only, moved into that branch.
_WHOLE_BUFFER = (
    "\t\t/*\n"
    "\t\t * Note: the memory is cached, so the user must explicitly\n"
    "\t\t * flush the CPU caches on architectures which require it.\n"
    "\t\t */\n"
    "\t\tif (remap_pfn_range(vma, vma->vm_start + i * DMA_BUFFER_SIZE, pfn,\n"
    "\t\t\t\t    DMA_BUFFER_SIZE, vma->vm_page_prot)) {\n"
    "\t\t\tdev_err(&s->dev->dev, \"mmap remap_pfn_range failed\\n\");\n"
    "\t\t\treturn -EAGAIN;\n"
    "\t\t}\n")

MMAP_PATCHES = [
    ("main.c", "mmap: vmalloc header",
     "#include <linux/mm.h>\n",
     "#include <linux/mm.h>\n#include <linux/vmalloc.h> /* hostlink: is_vmalloc_addr(), vmalloc_to_pfn(). */\n"),

    ("main.c", "mmap: a buffer page's frame",
     _MMAP,
     "/* hostlink: the page frame of a page of a DMA buffer, from the kernel's address of it. Behind an IOMMU\n"
     " * dma_alloc_coherent returns an address in the vmalloc area, where __pa() is wrong. */\n"
     "static unsigned long __maybe_unused hostlink_buffer_pfn(void *va)\n"
     "{\n"
     "\tif (is_vmalloc_addr(va))\n"
     "\t\treturn vmalloc_to_pfn(va);\n"
     "\treturn page_to_pfn(virt_to_page(va));\n"
     "}\n"
     "\n" + _MMAP),

    ("main.c", "mmap: page by page, by each page's frame",
     "#else\n"
     "\t\tif (is_tx)\n"
     "\t\t\tpfn = __pa(chan->dma.reader_addr[i]) >> PAGE_SHIFT;\n"
     "\t\telse\n"
     "\t\t\tpfn = __pa(chan->dma.writer_addr[i]) >> PAGE_SHIFT;\n"
     "#endif\n"
     + _WHOLE_BUFFER,
     _WHOLE_BUFFER +
     "#else\n"
     "\t\t/* hostlink: page by page, each page's frame from the kernel's address of the page\n"
     "\t\t * (hostlink_buffer_pfn), not __pa() of the buffer: right behind an IOMMU too. */\n"
     "\t\t{\n"
     "\t\t\tchar *va = (char *)(is_tx ? chan->dma.reader_addr[i] : chan->dma.writer_addr[i]);\n"
     "\t\t\tunsigned long offset;\n"
     "\n"
     "\t\t\tfor (offset = 0; offset < DMA_BUFFER_SIZE; offset += PAGE_SIZE) {\n"
     "\t\t\t\tpfn = hostlink_buffer_pfn(va + offset);\n"
     "\t\t\t\tif (remap_pfn_range(vma, vma->vm_start + i * DMA_BUFFER_SIZE + offset, pfn,\n"
     "\t\t\t\t\t\t    PAGE_SIZE, vma->vm_page_prot)) {\n"
     "\t\t\t\t\tdev_err(&s->dev->dev, \"mmap remap_pfn_range failed\\n\");\n"
     "\t\t\t\t\treturn -EAGAIN;\n"
     "\t\t\t\t}\n"
     "\t\t\t}\n"
     "\t\t}\n"
     "#endif\n"),
]

# Present in LitePCIe's sources and relied on: the ARM branch computes `pfn` for the whole buffer, which
# the patched code keeps mapping in one piece (the #else above becomes that branch's end).
REQUIRED = [
    ("main.c", "mmap: the ARM branch",
     "#if defined(__arm__) || defined(__aarch64__)\n\t\tvoid *va;\n"),
]


_ALLOCATION_CHECK = (
    "\t\t\tif (!dmachan->writer_addr[j]\n"
    "\t\t\t\t|| !dmachan->reader_addr[j]) {\n"
    "\t\t\t\tdev_err(&s->dev->dev, \"Failed to allocate dma buffers\\n\");\n"
    "\t\t\t\treturn -ENOMEM;\n"
    "\t\t\t}\n")

# For tests only (sim/uml/run.py): every coherent buffer used through a vmalloc-area alias of its pages,
# as behind an IOMMU. Needs MMAP_PATCHES' header. The alias is unmapped (devres, in reverse order) before
# the buffer is freed.
REMAPPED_BUFFERS_PATCHES = [
    ("main.c", "test: a vmalloc-area alias of a buffer",
     "static int litepcie_dma_init(struct litepcie_device *s)\n",
     "/* hostlink test build: the buffer's pages mapped a second time, in the vmalloc area, as behind an\n"
     " * IOMMU; the driver and its mmap use only that address. */\n"
     "static void hostlink_test_unmap_buffer(void *alias)\n"
     "{\n"
     "\tvunmap(alias);\n"
     "}\n"
     "\n"
     "static uint32_t *hostlink_test_remap_buffer(struct litepcie_device *s, uint32_t *buffer)\n"
     "{\n"
     "\tstruct page *pages[DMA_BUFFER_SIZE / PAGE_SIZE];\n"
     "\tvoid *alias;\n"
     "\tint k;\n"
     "\n"
     "\tfor (k = 0; k < DMA_BUFFER_SIZE / PAGE_SIZE; k++)\n"
     "\t\tpages[k] = virt_to_page((char *)buffer + k * PAGE_SIZE);\n"
     "\talias = vmap(pages, DMA_BUFFER_SIZE / PAGE_SIZE, VM_MAP, PAGE_KERNEL);\n"
     "\tif (!alias || devm_add_action_or_reset(&s->dev->dev, hostlink_test_unmap_buffer, alias))\n"
     "\t\treturn NULL;\n"
     "\treturn alias;\n"
     "}\n"
     "\n"
     "static int litepcie_dma_init(struct litepcie_device *s)\n"),

    ("main.c", "test: buffers used through their aliases",
     _ALLOCATION_CHECK,
     _ALLOCATION_CHECK +
     "\t\t\tdmachan->reader_addr[j] = hostlink_test_remap_buffer(s, dmachan->reader_addr[j]);\n"
     "\t\t\tdmachan->writer_addr[j] = hostlink_test_remap_buffer(s, dmachan->writer_addr[j]);\n"
     "\t\t\tif (!dmachan->writer_addr[j] || !dmachan->reader_addr[j]) {\n"
     "\t\t\t\tdev_err(&s->dev->dev, \"Failed to remap dma buffers\\n\");\n"
     "\t\t\t\treturn -ENOMEM;\n"
     "\t\t\t}\n"),
]


def fix_mmap(kernel_dir, patches=None):
    """Apply MMAP_PATCHES to LitePCIe's sources copied in `kernel_dir`."""
    apply_patches(kernel_dir, MMAP_PATCHES if patches is None else patches, REQUIRED, "zero-copy mmap")
    return kernel_dir


def use_remapped_buffers(kernel_dir):
    """Make the driver in `kernel_dir` (already fixed) use its DMA buffers through vmalloc-area aliases,
    as behind an IOMMU: for tests of the zero-copy mmap without one."""
    apply_patches(kernel_dir, REMAPPED_BUFFERS_PATCHES, (), "remapped buffers (test)")
    return kernel_dir
