# This file is part of hostlink.
# Copyright (c) 2026 hostlink developers
# SPDX-License-Identifier: BSD-2-Clause

"""Register-level DMA driver for the simulation: what LitePCIe's Linux driver does, through BAR0.

Register addresses come from the SoC's generated csr.json, never from a hand-kept table. The sequences
follow litepcie/software/kernel/main.c: disable, flush the table, program descriptors in "prog" mode
(value = flags | length, then address LSB, then a write of the address MSB that pushes the descriptor),
enable. MSIs are single-vector: the handler reads `pcie_msi_vector`, then clears what it served.
"""

import json

from hostlink.cores.pcie.config import check_dma_length

# Descriptor flags (litepcie/frontend/dma.py: descriptor layout above the 24-bit length).
DMA_IRQ_DISABLE  = 1 << 24
DMA_LAST_DISABLE = 1 << 25
TABLE_DEPTH      = 256   # LitePCIeDMAScatterGather's default table depth.
MMIO_TIMEOUT_US  = 200


class CSRMap:
    def __init__(self, csr_json_path):
        with open(csr_json_path) as f:
            d = json.load(f)
        self.base      = d["memories"]["csr"]["base"]
        self.registers = d["csr_registers"]
        self.bases     = {name: base - self.base for name, base in d["csr_bases"].items()}
        self.constants = d["constants"]

    def offset(self, name):
        if name not in self.registers:
            raise KeyError(f"CSR {name!r} is not in this SoC's map")
        return self.registers[name]["addr"] - self.base

    def has(self, name):
        return name in self.registers


class DMADriver:
    def __init__(self, bar, csr_map):
        self.bar  = bar
        self.csrs = csr_map
        self.channels = csr_map.constants["dma_channels"]

    async def write(self, name, value, word=0):
        await self.bar.write_dword(self.csrs.offset(name) + 4*word, value & 0xffffffff)

    async def read(self, name, word=0):
        # A register read that never completes means the SoC stopped answering: fail, don't hang.
        return await self.bar.read_dword(self.csrs.offset(name) + 4*word, timeout=MMIO_TIMEOUT_US,
                                         timeout_unit="us")

    async def read64(self, name):
        """A 64-bit status register (two CSR words, most significant first), for counts that do not move
        while it is read."""
        return (await self.read(name) << 32) | await self.read(name, word=1)

    async def flush(self):
        """Wait until every register write issued so far has reached the SoC, as a driver does before it
        starts a clock: writes are posted, and a read request does not pass them (PCIe ordering), so its
        completion comes back only once they are done."""
        await self.read("ctrl_scratch")

    # Interrupts -----------------------------------------------------------------------------------

    def irq_bit(self, channel, direction):
        engine = "reader" if direction == "h2c" else "writer"
        return 1 << self.csrs.constants[f"pcie_dma{channel}_{engine}_interrupt"]

    async def enable_irqs(self, mask):
        await self.write("pcie_msi_enable", mask)

    async def service_irq(self):
        """The interrupt handler: which sources fired (masked by the enables); clear them."""
        vector = await self.read("pcie_msi_vector") & await self.read("pcie_msi_enable")
        await self.write("pcie_msi_clear", vector)
        return vector

    # Channel set-up -------------------------------------------------------------------------------

    async def set_loopback(self, channel, enable):
        await self.write(f"pcie_dma{channel}_loopback_enable", int(enable))

    async def set_generator_length(self, channel, length_bytes):
        """How much the channel's pattern generator sends once started (0: without end)."""
        await self.write(f"pcie_dma{channel}_generator_length", length_bytes // 4)

    async def set_generator(self, channel, enable, length_bytes=None):
        """Start (or stop) the channel's pattern generator, for `length_bytes` if given (else the length
        set before)."""
        if enable and length_bytes is not None:
            await self.set_generator_length(channel, length_bytes)
        await self.write(f"pcie_dma{channel}_generator_control", int(enable))

    async def clear_checker(self, channel):
        await self.write(f"pcie_dma{channel}_checker_clear", 1)

    async def checker_counts(self, channel):
        return (await self.read(f"pcie_dma{channel}_checker_words"),
                await self.read(f"pcie_dma{channel}_checker_errors"))

    async def program(self, channel, direction, descriptors, check=True):
        """Load (address, length, irq) descriptors in prog mode; the engine stays disabled. `check=False`
        lets through lengths the driver would refuse (to show the gateware refuses them)."""
        if len(descriptors) > TABLE_DEPTH:
            raise ValueError(f"at most {TABLE_DEPTH} descriptors fit the table, not {len(descriptors)}")
        engine = "reader" if direction == "h2c" else "writer"
        prefix = f"pcie_dma{channel}_{engine}"
        await self.write(f"{prefix}_enable", 0)
        await self.write(f"{prefix}_table_reset", 1)
        await self.write(f"{prefix}_table_loop_prog_n", 0)
        for address, length, irq in descriptors:
            if check:
                check_dma_length(length)
            flags = 0 if irq else DMA_IRQ_DISABLE
            await self.write(f"{prefix}_table_value", flags | length, word=0)
            await self.write(f"{prefix}_table_value", address & 0xffffffff, word=1)
            await self.write(f"{prefix}_table_we", address >> 32)

    # Faults ---------------------------------------------------------------------------------------

    async def fault_counters(self):
        """Every `pcie_faults_*` register of the SoC, by name (without the prefix)."""
        prefix = "pcie_faults_"
        return {name[len(prefix):]: await self.read(name) for name in self.csrs.registers
                if name.startswith(prefix)}

    async def start(self, channel, direction):
        engine = "reader" if direction == "h2c" else "writer"
        await self.write(f"pcie_dma{channel}_{engine}_enable", 1)

    async def stop(self, channel, direction):
        engine = "reader" if direction == "h2c" else "writer"
        await self.write(f"pcie_dma{channel}_{engine}_enable", 0)
        await self.write(f"pcie_dma{channel}_{engine}_table_reset", 1)


def split_descriptors(address, size, descriptor_size, irq_every=1, granularity=1):
    """Cut a host buffer into descriptors; every `irq_every`-th one (and the last) asks for an MSI."""
    check_dma_length(min(size, descriptor_size) if size else 0, granularity=granularity)
    check_dma_length(size, maximum=size, granularity=granularity)
    descriptors = []
    offset = 0
    index  = 0
    while offset < size:
        length = min(descriptor_size, size - offset)
        last   = offset + length == size
        descriptors.append((address + offset, length, last or (index % irq_every == irq_every - 1)))
        offset += length
        index  += 1
    return descriptors
