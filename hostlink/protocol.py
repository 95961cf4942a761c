# This file is part of hostlink.
# Copyright (c) 2026 hostlink developers
# SPDX-License-Identifier: BSD-2-Clause

"""hostlink.protocol: every number the gateware, the driver and the host side must agree on, defined once.

    from hostlink.protocol import FLOW_MODES, HEADER, IOCTLS, AXI_DMA_REGISTERS

- the PCIe DMA's flow modes (the flow gate's `mode` CSR, the driver's DMA_FLOW ioctl, libhostlink's
  `enum hostlink_flow`);
- the header of a framed buffer (real-time and packets flows): each field's offset and size, as the
  gateware writes it (cores/pcie/user_port.py, BufferFramer) and the host parses it;
- the generated driver's ioctls that hostlink uses: number, direction and argument layout (LitePCIe's own
  and hostlink's, software/driver/*.patch);
- the AXI DMA's registers and bits (Xilinx PG021, direct register and scatter-gather modes:
  cores/zynq/axi_dma.py, axi_dma_sg.py), and its scatter-gather descriptor.

Python takes these from here (cores/, hostlink.host, the benches). The C side keeps its own spelling
(software/lib/hostlink.h, the driver's litepcie.h, software/zynq/dma_user_test.c), and
test/test_protocol.py compiles it and compares every value, offset and size with this module, so that a
one-field change on either side fails the quick tier. Standard library only: hostlink.host imports it on
machines without the project's dependencies.
"""

import struct

__all__ = ["FLOW_MODES", "FLOW_LOOP", "FLOW_LOSSLESS", "FLOW_REALTIME", "FLOW_PACKETS", "FRAMED_FLOWS",
           "HEADER", "HEADER_FIELDS", "HEADER_BYTES", "HEADER_MAGIC", "HEADER_FLAG_END",
           "frame_packet",
           "Ioctl", "IOCTLS", "AXI_DMA_CHANNEL", "AXI_DMA_MM2S", "AXI_DMA_S2MM", "AXI_DMA_REGISTERS",
           "AXI_DMA_LENGTH_BITS", "AXI_DMA_SG_CHANNEL", "AXI_DMA_SG_REGISTERS", "AXI_DMA_DESCRIPTOR",
           "AXI_DMA_DESCRIPTOR_ALIGN"]

# Flow modes ---------------------------------------------------------------------------------------

FLOW_LOOP     = 0   # LitePCIe's loop mode: the DMA runs round the ring whatever the program does.
FLOW_LOSSLESS = 1   # The DMA moves only buffers the program has written or read.
FLOW_REALTIME = 2   # FPGA to host: drops between buffers, each buffer headed by what was dropped.
FLOW_PACKETS  = 3   # Lossless, each buffer headed by its data's length: packets with exact lengths, both ways.
FLOW_MODES    = {"loop": FLOW_LOOP, "lossless": FLOW_LOSSLESS, "realtime": FLOW_REALTIME, "packets": FLOW_PACKETS}
FRAMED_FLOWS  = ("realtime", "packets")   # Each buffer starts with the header below (real-time: FPGA to host).

# Framed buffer header -----------------------------------------------------------------------------

# (field, offset in bytes, struct format), little-endian, at the buffer's start.
HEADER_FIELDS = (
    ("magic",     0, "I"),   # HEADER_MAGIC
    ("sequence",  4, "I"),   # buffers begun since the table's reset, from 0
    ("time",      8, "Q"),   # the SoC's cycle counter when the buffer began
    ("dropped",  16, "Q"),   # bytes dropped just before this buffer's data (0 in packets flow)
    ("length",   24, "I"),   # data bytes after the header
    ("flags",    28, "I"),   # HEADER_FLAG_END
)
HEADER          = struct.Struct("<" + "".join(code for _, _, code in HEADER_FIELDS))
HEADER_BYTES    = 32
HEADER_MAGIC    = 0x314b4c48   # "HLK1": little-endian bytes 'H' 'L' 'K' '1'
HEADER_FLAG_END = 1            # flags bit 0: the buffer's data ends a packet (FPGA to host: a `last` ended it)


def frame_packet(data, buffer_bytes, end=True):
    """Host-to-FPGA packets flow: `data` as whole ring buffers of `buffer_bytes`, each the header (magic,
    length, END on the packet's last buffer; the other fields 0), the data, zeros to the buffer's end.
    Returns (buffers, rest): with `end` every byte is framed and the last buffer has END; without, a
    buffer holds a whole number of HEADER_BYTES (so that the packet stays contiguous at every DMA width:
    cores/pcie/deframer.py) and `rest` is the tail held back (1 to HEADER_BYTES bytes of a non-empty
    `data`: there is always a byte left to end the packet with) for the packet's next bytes. A packet has
    at least one byte: `data` empty with `end` frames nothing."""
    data = memoryview(data).cast("B")
    capacity = buffer_bytes - HEADER_BYTES
    if capacity < HEADER_BYTES or buffer_bytes % HEADER_BYTES:
        raise ValueError(f"packets flow needs buffers of a multiple of {HEADER_BYTES} bytes holding data "
                         f"after the header, not {buffer_bytes!r}")
    whole = len(data) if end else len(data) - ((len(data) - 1) % HEADER_BYTES + 1) if len(data) else 0
    count = -(-whole // capacity)
    buffers = bytearray(count * buffer_bytes)
    for i in range(count):
        chunk = data[i*capacity:min(whole, (i + 1)*capacity)]
        flags = HEADER_FLAG_END if end and i == count - 1 else 0
        HEADER.pack_into(buffers, i*buffer_bytes, HEADER_MAGIC, 0, 0, 0, len(chunk), flags)
        buffers[i*buffer_bytes + HEADER_BYTES:i*buffer_bytes + HEADER_BYTES + len(chunk)] = chunk
    return buffers, bytes(data[whole:])


def _check_header():
    offset = 0
    for name, at, code in HEADER_FIELDS:
        assert at == offset, f"header field {name} at {at}, packed at {offset}"
        offset += struct.calcsize("<" + code)
    assert offset == HEADER.size == HEADER_BYTES


_check_header()

# The driver's ioctls ------------------------------------------------------------------------------

IOC_WRITE, IOC_READ = 1, 2   # Linux's _IOC direction bits: the caller writes / reads the argument.
IOCTL_TYPE = ord("S")        # LITEPCIE_IOCTL


class Ioctl:
    """One ioctl of the generated driver (litepcie.h): `name` (LITEPCIE_IOCTL_<name>), `number`,
    `direction` (IOC_WRITE | IOC_READ) and its argument's fields [(name, struct format)] laid out as C does
    (each field aligned to its size, the whole to its largest); `struct` is C's name for the argument
    (None: a bare integer). Gives `layout` (a struct.Struct with C's padding), `offsets` ({field: byte})
    and `request` (the number ioctl() takes)."""
    def __init__(self, name, number, direction, struct_name, fields, ioctl_type=IOCTL_TYPE):
        self.name, self.number, self.direction, self.struct_name = name, number, direction, struct_name
        self.fields = tuple(fields)
        self.offsets, code, offset, widest = {}, "<", 0, 1
        for field, field_code in self.fields:
            size = struct.calcsize("<" + field_code)
            align = struct.calcsize("<" + field_code.lstrip("0123456789"))   # An array: its element's.
            padding = -offset % align
            code += f"{padding}x" * bool(padding) + field_code
            self.offsets[field] = offset + padding
            offset += padding + size
            widest = max(widest, align)
        code += f"{-offset % widest}x" * bool(offset % widest)
        self.layout  = struct.Struct(code)
        self.request = (direction << 30) | (self.layout.size << 16) | (ioctl_type << 8) | number

    def __repr__(self):
        return f"Ioctl({self.name}, {self.number}, size {self.layout.size})"


_RW = IOC_WRITE | IOC_READ
_COUNTS = [("enable", "B"), ("hw_count", "q"), ("sw_count", "q")]
_STATS_DIRECTION = [("hw_count", "q"), ("sw_count", "q"), ("lost", "Q"), ("lost_events", "Q"), ("level", "I"),
                    ("level_max", "I"), ("flow", "I"), ("enabled", "I"), ("fpga_given", "I"),
                    ("fpga_started", "I"), ("fpga_done", "I"), ("fpga_waits", "I")]
_UPDATE = [("sw_count", "q")]

IOCTLS = {ioctl.name: ioctl for ioctl in [
    # LitePCIe's own.
    Ioctl("REG",                     0, _RW,       "reg",             [("addr", "I"), ("val", "I"), ("is_write", "B")]),
    Ioctl("DMA",                    20, IOC_WRITE, "dma",             [("loopback_enable", "B")]),
    Ioctl("DMA_WRITER",             21, _RW,       "dma_writer",      _COUNTS),
    Ioctl("DMA_READER",             22, _RW,       "dma_reader",      _COUNTS),
    Ioctl("MMAP_DMA_INFO",          24, IOC_READ,  "mmap_dma_info",
          [(f"dma_{d}_buf_{f}", "Q") for d in ("tx", "rx") for f in ("offset", "size", "count")]),
    Ioctl("LOCK",                   25, _RW,       "lock",
          [(f"dma_{d}_{what}", "B") for what in ("request", "release", "status") for d in ("reader", "writer")]),
    Ioctl("MMAP_DMA_WRITER_UPDATE", 26, IOC_WRITE, "mmap_dma_update", _UPDATE),
    Ioctl("MMAP_DMA_READER_UPDATE", 27, IOC_WRITE, "mmap_dma_update", _UPDATE),
    # hostlink's (software/driver/: polling, flow, stats, wait).
    Ioctl("DMA_POLL",               40, IOC_WRITE, "dma_poll",        [("writer", "B"), ("reader", "B")]),
    Ioctl("CYCLES",                 41, IOC_READ,  "cycles",          [("cycles", "Q")]),
    Ioctl("DMA_FLOW",               42, IOC_WRITE, "dma_flow",        [("writer", "B"), ("reader", "B")]),
    Ioctl("STATS",                  43, IOC_READ,  "stats",
          [(f"{d}.{f}", code) for d in ("writer", "reader") for f, code in _STATS_DIRECTION] +
          [("buffer_count", "I"), ("buffer_size", "I")]),
    Ioctl("DMA_WAIT",               44, _RW,       "dma_wait",
          [("timeout_ms", "I"), ("writer_held", "I"), ("reader_held", "I"), ("cancel", "I"),
           ("writer", "B"), ("reader", "B"), ("writer_ready", "B"), ("reader_ready", "B")]),
    Ioctl("DMA_CANCEL",             45, IOC_WRITE, None,              [("count", "I")]),
]}
STATS_DIRECTION_FIELDS = tuple(f for f, _ in _STATS_DIRECTION)

# AXI DMA (PG021, direct register mode) -----------------------------------------------------------

AXI_DMA_LENGTH_BITS = 26   # LENGTH's width (xlnx,sg-length-width): transfers of 1 to 2**26 - 1 bytes.
# Register offsets (bytes) within a channel, PG021 table 2-5 (SA / DA: the transfer's address).
AXI_DMA_CHANNEL = {"DMACR": 0x00, "DMASR": 0x04, "ADDRESS": 0x18, "ADDRESS_MSB": 0x1C, "LENGTH": 0x28}
AXI_DMA_MM2S, AXI_DMA_S2MM = 0x00, 0x30   # Each channel's registers begin here.
AXI_DMA_REGISTERS = {   # {"MM2S_DMACR": 0x00, ..., "S2MM_DA": 0x48, ...}
    f"{channel}_{name.replace('ADDRESS', address)}": base + offset
    for channel, base, address in (("MM2S", AXI_DMA_MM2S, "SA"), ("S2MM", AXI_DMA_S2MM, "DA"))
    for name, offset in AXI_DMA_CHANNEL.items()}
# DMACR bits and fields (PG021's MM2S_DMACR / S2MM_DMACR tables; cores/zynq/axi_dma.py says which act in
# direct register mode).
DMACR_RS, DMACR_ONE, DMACR_RESET, DMACR_KEYHOLE, DMACR_CYCLIC_BD = 1 << 0, 1 << 1, 1 << 2, 1 << 3, 1 << 4
DMACR_IOC_IRQ_EN, DMACR_DLY_IRQ_EN, DMACR_ERR_IRQ_EN = 1 << 12, 1 << 13, 1 << 14
DMACR_IRQ_THRESHOLD_SHIFT, DMACR_IRQ_DELAY_SHIFT = 16, 24   # 8-bit fields.
# DMASR bits and fields.
DMASR_HALTED, DMASR_IDLE, DMASR_SG_INCLD = 1 << 0, 1 << 1, 1 << 3
DMASR_INT_ERR, DMASR_SLV_ERR, DMASR_DEC_ERR = 1 << 4, 1 << 5, 1 << 6
DMASR_SG_INT_ERR, DMASR_SG_SLV_ERR, DMASR_SG_DEC_ERR = 1 << 8, 1 << 9, 1 << 10
DMASR_IOC_IRQ, DMASR_DLY_IRQ, DMASR_ERR_IRQ = 1 << 12, 1 << 13, 1 << 14
DMASR_IRQ_THRESHOLD_STS_SHIFT, DMASR_IRQ_DELAY_STS_SHIFT = 16, 24   # 8-bit fields.

# AXI DMA, scatter-gather (PG021, C_INCLUDE_SG = 1; cores/zynq/axi_dma_sg.py) --------------------------

# The descriptor pointers within a channel (PG021's MM2S_CURDESC ... S2MM_TAILDESC_MSB; SA/DA and LENGTH are
# reserved in this mode).
AXI_DMA_SG_CHANNEL = {"CURDESC": 0x08, "CURDESC_MSB": 0x0C, "TAILDESC": 0x10, "TAILDESC_MSB": 0x14}
AXI_DMA_SG_REGISTERS = {f"{channel}_{name}": base + offset
    for channel, base in (("MM2S", AXI_DMA_MM2S), ("S2MM", AXI_DMA_S2MM))
    for name, offset in AXI_DMA_SG_CHANNEL.items()}
# The descriptor (PG021 "Scatter Gather Descriptor"; Linux's struct xilinx_axidma_desc_hw): each field's byte
# offset; 16 words, aligned to AXI_DMA_DESCRIPTOR_ALIGN. APP0-4 are the application's (not read here).
AXI_DMA_DESCRIPTOR = {"NXTDESC": 0x00, "NXTDESC_MSB": 0x04, "BUFFER_ADDRESS": 0x08, "BUFFER_ADDRESS_MSB": 0x0C,
                      "CONTROL": 0x18, "STATUS": 0x1C, "APP0": 0x20, "APP1": 0x24, "APP2": 0x28, "APP3": 0x2C,
                      "APP4": 0x30}
AXI_DMA_DESCRIPTOR_ALIGN = 0x40
# CONTROL: 25:0 the buffer's length; MM2S's start and end of frame (S2MM's CONTROL has the length only).
DESC_CONTROL_TXSOF, DESC_CONTROL_TXEOF = 1 << 27, 1 << 26
# STATUS, written back by the DMA: 25:0 the bytes transferred; S2MM's start and end of frame; the errors; Cmplt.
DESC_STATUS_RXSOF, DESC_STATUS_RXEOF = 1 << 27, 1 << 26
DESC_STATUS_INT_ERR, DESC_STATUS_SLV_ERR, DESC_STATUS_DEC_ERR, DESC_STATUS_CMPLT = 1 << 28, 1 << 29, 1 << 30, 1 << 31

# The Zynq's dmaengine client (software/zynq/hostlink_dma_client.h: /dev/hostlink_dma) -----------------

AXI_DMA_CLIENT_IOCTL_TYPE = ord("h")
AXI_DMA_CLIENT_QUEUE_MAX = 16     # HOSTLINK_DMA_QUEUE_MAX: packets per queued call.
AXI_DMA_CLIENT_IOCTLS = {ioctl.name: ioctl for ioctl in [
    Ioctl("TRANSFER", 0x40, _RW, "hostlink_dma_transfer",
          [("tx", "Q"), ("rx", "Q"), ("length", "Q"), ("chunk", "I"), ("buffers", "I"), ("timeout_ms", "I"),
           ("reserved", "I"), ("chunks", "Q"), ("interrupts_waited", "Q"), ("copies", "Q")],
          AXI_DMA_CLIENT_IOCTL_TYPE),
    Ioctl("QUEUE", 0x41, _RW, "hostlink_dma_queue",
          [("tx", "Q"), ("rx", "Q"), ("tx_length", "I"), ("rx_length", "I"), ("count", "I"), ("timeout_ms", "I"),
           ("completions", "I"), ("complete", "I"), ("residue", f"{AXI_DMA_CLIENT_QUEUE_MAX}I")],
          AXI_DMA_CLIENT_IOCTL_TYPE),
]}

# The simulated Zynq's software costs (sim/zynq/models/ps_costs.py) ---------------------------------------
# A simulation-only device beside the AXI DMA on the simulated Zynq's platform bus (device tree: compatible
# SIM_COST_COMPATIBLE; absent on a board). The drivers write there what the ARM's software did (counts of
# system calls, bytes copied, cache lines maintained, yields); the bench charges each count in simulated time.
# The bridge charges by itself what it sees: register reads and writes (GP0) and interrupts.
__all__ += ["SIM_COST_COMPATIBLE", "SIM_COST_CATEGORIES", "SIM_COST_REGISTERS", "SIM_COST_SIZE",
            "SIM_COST_LINE_BYTES", "SIM_COST_MARK_BEGIN", "SIM_COST_MARK_END"]

SIM_COST_COMPATIBLE = "hostlink,sim-cost"
# Category i is charged by writing a count to CHARGE + 4 i. Counts: accesses, interrupts, calls, bytes
# (copy_*), cache lines (cache_*), yields.
SIM_COST_CATEGORIES = ("gp0_read", "gp0_write", "interrupt", "syscall", "copy_cached", "copy_to_coherent",
                       "copy_from_coherent", "cache_clean", "cache_invalidate", "sched_yield")
SIM_COST_REGISTERS = {
    "CHARGE":  0x00,   # + 4 x category: write a count.
    "MARK":    0x40,   # Write a value: the bench records it with the simulated time the CPU reached it.
    "TIME_LO": 0x48,   # Read: the simulated time in ns the CPU reached it (low 32 bits; latches TIME_HI).
    "TIME_HI": 0x4C,
}
SIM_COST_SIZE = 0x100
SIM_COST_LINE_BYTES = 32                   # The Cortex-A9's L1 and the PL310's (L2) cache lines.
SIM_COST_MARK_BEGIN, SIM_COST_MARK_END = 1, 2   # A driver's call begins; its data is in the program's buffer.
