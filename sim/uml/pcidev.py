# This file is part of hostlink.
# Copyright (c) 2026 hostlink developers
# SPDX-License-Identifier: BSD-2-Clause

"""The simulated PCIe function as a virtio-pcidev device of User-Mode Linux (include/uapi/linux/
virtio_pcidev.h), inside the cocotb process.

User-Mode Linux's `virt-pci` sends configuration and BAR accesses as messages on the `cmd` virtqueue and
expects interrupts as messages on the `irq` virtqueue. `PciDevBridge` serves them from the root complex
that enumerated the simulated SoC:

- configuration reads and writes become configuration TLPs to the function, except its BARs: those are
  shadowed, so the kernel sizes them and assigns its own addresses (in its PCI iomem window) while the
  function keeps the addresses the root complex gave it;
- a BAR access (BAR number and offset) becomes a memory read or write TLP at that offset of the
  function's BAR as the root complex assigned it; commands are served one at a time, in order, so posted
  writes keep their order and a read returns only after every earlier write;
- the kernel's physical memory (the vhost-user memory table) is a host memory region of the root complex
  at its physical addresses: under User-Mode Linux a DMA address is a physical address, so the device's
  DMA reads and writes land in the kernel's RAM;
- the device's MSI (a memory write to the address the kernel programmed, 0xa0000, whose data is the
  interrupt number) becomes an MSI message on the `irq` virtqueue.
"""

import glob
import logging
import struct
import time

from cocotbext.axi import MemoryRegion, Region

from hostlink.sim.pcie.triggers import FAST, Timer, get_sim_time
from hostlink.sim.uml.vhost_user import VhostUserBackend

# virtio_pcidev operations.
OP_CFG_READ, OP_CFG_WRITE, OP_MMIO_READ, OP_MMIO_WRITE, OP_MMIO_MEMSET, OP_INT, OP_MSI = 1, 2, 3, 4, 5, 6, 7
OP_NAMES = {OP_CFG_READ: "config read", OP_CFG_WRITE: "config write", OP_MMIO_READ: "register read",
            OP_MMIO_WRITE: "register write", OP_MMIO_MEMSET: "register memset"}
MSG = struct.Struct("<BBHIQ")   # op, bar, reserved, size, addr; then data.

MSI_ADDRESS = 0xa0000           # Where virt-pci composes its MSI messages (um_pci_compose_msi_msg).
BARS_START, BARS_END = 0x10, 0x28
ROM_BAR = 0x30
MMIO_TIMEOUT_US = 2000


class _MsiRegion(Region):
    """Memory writes to the kernel's MSI address: each one is an interrupt for the `irq` virtqueue."""
    def __init__(self, bridge):
        super().__init__(size=16)
        self.bridge = bridge

    async def _read(self, address, length, **kwargs):
        return bytes(length)

    async def _write(self, address, data, **kwargs):
        self.bridge.msi(bytes(data))


class _KernelMemory(MemoryRegion):
    """The kernel's RAM as the root complex's host memory. With `fault_at` (bytes), the 32-bit word
    the device writes at that many bytes into its DMA writes is corrupted (inverted) as it lands:
    a test-only fault, for checking that the data checks see it."""
    def __init__(self, size, mem, bridge):
        super().__init__(size, mem=mem)
        self.bridge = bridge

    async def _write(self, address, data, **kwargs):
        bridge = self.bridge
        before = bridge.dma_bytes_written
        bridge.dma_bytes_written += len(data)
        at = bridge.fault_at
        if at is not None and before <= at < bridge.dma_bytes_written:
            data = bytearray(data)
            word = (at - before) & ~3
            data[word:word + 4] = bytes(b ^ 0xff for b in data[word:word + 4])
            bridge.fault_at = None
            bridge.faults_injected += 1
        await super()._write(address, data, **kwargs)


class HostActivity:
    """Whether the User-Mode Linux kernel (`pid`) or one of its processes is running on the host's CPU.

    The simulated device runs thousands of times slower than real hardware, the kernel at the host's
    speed: left alone, the device's DMA would run on for microseconds of simulated time for every
    millisecond the kernel spends in an interrupt handler or copying a buffer, as if the host's CPU were
    thousands of times slower than a real one (LitePCIe's driver then reports buffers lost). The bridge
    holds simulated time while the kernel computes (a process in state R, or one that was a moment ago)
    and lets it run while the kernel sleeps: idle, or waiting for the device.
    """
    def __init__(self, pid, refresh_s=0.02, settle_s=0.002):
        self.pid       = pid
        self.pids      = [pid]
        # A process the kernel has just started counts only once the list is refreshed: until then the
        # device runs on while it computes (litepcie_test play filling its first buffers, say).
        self.refresh_s = refresh_s
        self.refreshed = 0.0
        # A process woken (by an MSI, by another's wake-up) is asleep until the host schedules it: the
        # kernel counts as busy until it has been asleep for `settle_s`.
        self.settle_s  = settle_s
        self.last_busy = 0.0
        self.running_pid = None   # The last process seen running (diagnostics).

    def busy(self):
        now = time.monotonic()
        if self._running(now):
            self.last_busy = now
        return now - self.last_busy < self.settle_s

    def woken(self):
        """The kernel was just given something to do (an answer, an interrupt): busy from now on."""
        self.last_busy = time.monotonic()

    def _running(self, now):
        if now - self.refreshed > self.refresh_s:
            self.refreshed = now
            pids = [self.pid]
            for path in glob.glob(f"/proc/{self.pid}/task/*/children"):
                try:
                    with open(path) as f:
                        pids += [int(p) for p in f.read().split()]
                except OSError:
                    pass
            self.pids = pids
        for pid in self.pids:
            try:
                with open(f"/proc/{pid}/stat") as f:
                    state = f.read().rsplit(")", 1)[1].split()[0]
            except (OSError, IndexError):
                continue
            if state == "R":
                self.running_pid = pid
                return True
        return False


class QueueServer:
    """What the bridges on virt-pci's queues share (this one and sim/zynq/uml_bench.py's PlatformBridge): a
    request gathered from a descriptor chain and an answer scattered into one, the commands served in order,
    and simulated time held while the kernel computes, in one main loop (run). Needs `backend`, `host`,
    `hold_cap_s`, `held_s`, `poll_ns`, `open`, `memory_registered`, `_register_memory()` (the kernel's memory
    table has come), `_send_interrupts(irq_vq)` and an async `_serve(head, chain)` returning the bytes
    written."""

    def close(self):
        self.open = False
        self.backend.close()

    async def run(self):
        cmd_vq, irq_vq = self.backend.queues
        while self.open and not self.backend.closed:
            self.backend.poll()
            if self.backend.memory.regions and not self.memory_registered:
                self._register_memory()
            self._watch()
            await self._serve_commands(cmd_vq)
            self._send_interrupts(irq_vq)
            self._hold(cmd_vq)
            await Timer(self.poll_ns, "ns")

    def _watch(self):
        """What the bridge watches on each turn of the main loop, before it serves the commands."""

    def _gather(self, chain):
        return b"".join(self.backend.memory.read(a, n) for a, n, w in chain if not w)

    def _scatter(self, chain, data):
        offset = 0
        for address, length, writable in chain:
            if writable and offset < len(data):
                part = data[offset:offset + length]
                self.backend.memory.write(address, part)
                offset += len(part)
        return offset

    async def _serve_commands(self, cmd_vq):
        if cmd_vq.ready:
            cmd_vq.drain_kicks()
            while True:
                item = cmd_vq.pop()
                if item is None:
                    break
                written = await self._serve(*item)
                cmd_vq.push(item[0], written)
                if self.host is not None:
                    self.host.woken()

    def _hold(self, cmd_vq):
        """Held while the kernel computes; a command it sends meanwhile is served at once (the same simulated
        time: none passes while held), rather than after the kernel has settled."""
        if self.host is not None and not cmd_vq.pending():
            start = time.monotonic()
            while self.host.busy() and not cmd_vq.pending() and time.monotonic() - start < self.hold_cap_s:
                time.sleep(0.0002)
            self.held_s += time.monotonic() - start


class PciDevBridge(QueueServer):
    def __init__(self, rc, function, socket_path, poll_ns=50, soft_reset=None, msi_ack=None,
            fault_at=None, host=None, hold_cap_s=0.05):
        self.rc        = rc
        self.function  = function
        self.backend   = VhostUserBackend(socket_path, num_queues=2)
        self.poll_ns   = poll_ns
        self.log       = logging.getLogger("hostlink.uml")
        self.pending_msis = []
        self.msis      = 0
        self.commands  = 0
        self.mmio_reads = self.mmio_writes = 0
        self.read_errors = 0
        # The command being served: (name, BAR or None, offset, wall-clock start), for the bench's progress
        # lines (a command the SoC never finishes shows there); None between commands.
        self.serving   = None
        self.memory_registered = False
        self.open      = True
        # (bar, offset, ns): the SoC's soft reset register (LitePCIe's ctrl_reset, which the probe writes before
        # it sleeps 10 ms) and the simulated time the SoC takes to come out of the reset (sim/pcie/soc.py,
        # SOFT_RESET_NS). The write is forwarded, then the bridge lets that time pass before the next
        # command, as the probe's sleep does on a board: the kernel's sleep lets no fixed simulated time pass.
        # Counted in `soft_resets`.
        self.soft_reset = soft_reset
        self.soft_resets = 0
        # (bar, offset) of the register whose write ends the kernel's interrupt handler (LitePCIe:
        # pcie_msi_clear). Until then, later MSIs are held and merged into one: the kernel takes
        # milliseconds of wall-clock time per handler, in which the device runs on for microseconds of
        # simulated time, and a device that interrupts faster than the kernel serves would starve it.
        self.msi_ack = msi_ack
        self.msi_in_service = False
        self.msis_merged = 0
        # Simulated time from an MSI's delivery to the kernel's acknowledgement.
        self.msi_sent_ns = 0
        self.msi_latency_max_ns = self.msi_latency_total_ns = 0
        self.dma_bytes_written = 0
        self.fault_at        = fault_at
        self.faults_injected = 0
        # Simulated time is held while the kernel computes (HostActivity), for at most `hold_cap_s` of
        # wall-clock time at a time: a kernel spinning on the device must not stop it.
        self.host       = host
        self.hold_cap_s = hold_cap_s
        self.held_s     = 0.0
        # BAR shadows: (size, flag bits, is 64-bit) per BAR, and the value the kernel wrote.
        self.bars   = {}
        index = 0
        while index < 6:
            size = function.bar_size[index]
            raw  = function.bar_raw[index] or 0
            if size:
                wide = (raw & 0x6) == 0x4
                self.bars[index] = (size, raw & 0xf, wide)
                index += 2 if wide else 1
            else:
                index += 1
        self.shadow = {i: 0 for i in range(6)}
        if FAST:
            # The compiled host hands over each MSI (a write to the address the kernel programmed) with its data.
            function.msi_handler = lambda data: self.msi(data.to_bytes(4, "little"))
        else:
            rc.mem_pool.register_region(_MsiRegion(self), MSI_ADDRESS, 16)

    def msi(self, data):
        """An MSI the device sent (its data), for the kernel's `irq` virtqueue."""
        self.pending_msis.append(data)
        self.msis += 1

    # Main loop (QueueServer.run) -------------------------------------------------------------------

    def _send_interrupts(self, irq_vq):
        if self.msi_in_service and len(self.pending_msis) > 1:
            self.msis_merged += len(self.pending_msis) - 1
            del self.pending_msis[1:]
        while self.pending_msis and not self.msi_in_service and irq_vq.ready and irq_vq.pending():
            head, chain = irq_vq.pop()
            data = self.pending_msis.pop(0)
            self.msi_in_service = self.msi_ack is not None
            self.msi_sent_ns = get_sim_time("ns")
            message = MSG.pack(OP_MSI, 0, 0, len(data), MSI_ADDRESS) + data
            self._scatter(chain, message)
            irq_vq.push(head, len(message))
            if self.host is not None:
                self.host.woken()

    def _register_memory(self):
        for guest_addr, size, _, view, _ in self.backend.memory.regions:
            if FAST:
                self.rc.mem_pool.lend(guest_addr, size, view, self.fault_at)
            else:
                self.rc.mem_pool.register_region(_KernelMemory(size, view, self), guest_addr, size)
            self.log.info("kernel memory 0x%x..0x%x registered as host memory", guest_addr, guest_addr + size)
        self.memory_registered = True

    # Commands --------------------------------------------------------------------------------------

    async def _serve(self, head, chain):
        request = self._gather(chain)
        op, bar, _, size, address = MSG.unpack_from(request)
        self.commands += 1
        self.serving = (OP_NAMES.get(op, str(op)), bar, address, time.monotonic())
        try:
            return await self._serve_request(op, bar, size, address, request[MSG.size:], chain)
        finally:
            self.serving = None

    def serving_for(self):
        """(what, seconds) of the command being served, or None."""
        if self.serving is None:
            return None
        name, bar, address, start = self.serving
        where = f"config space 0x{address:x}" if name.startswith("config") else f"BAR{bar} 0x{address:x}"
        return f"{name} at {where}", time.monotonic() - start

    async def _serve_request(self, op, bar, size, address, data, chain):
        if op == OP_CFG_READ:
            return self._scatter(chain, await self.config_read(address, size))
        if op == OP_CFG_WRITE:
            await self.config_write(address, data[:size])
            return 0
        if op == OP_MMIO_READ:
            self.mmio_reads += 1
            try:
                value = await self.function.bar_window[bar].read(address, size,
                    timeout=MMIO_TIMEOUT_US, timeout_unit="us")
            except Exception as error:
                self.read_errors += 1
                self.log.error("BAR%d read at 0x%x failed: %s", bar, address, error)
                value = b"\xff" * size
            return self._scatter(chain, bytes(value))
        if op in (OP_MMIO_WRITE, OP_MMIO_MEMSET):
            self.mmio_writes += 1
            payload = data[:size] if op == OP_MMIO_WRITE else data[:1] * size
            await self.function.bar_window[bar].write(address, payload)
            if self.soft_reset is not None and (bar, address) == self.soft_reset[:2]:
                self.soft_resets += 1
                # The probe's soft reset (ctrl_reset): a new driver begins. An MSI that a driver removed in
                # its handler's course never acknowledged is in service no more, or every later MSI would
                # be held for good and the new driver's waits would end only by their timeouts.
                self.msi_in_service = False
                del self.pending_msis[:]
                if self.soft_reset[2]:
                    await Timer(self.soft_reset[2], "ns")
                return 0
            if (bar, address) == self.msi_ack and self.msi_in_service:
                self.msi_in_service = False
                latency = get_sim_time("ns") - self.msi_sent_ns
                self.msi_latency_max_ns = max(self.msi_latency_max_ns, latency)
                self.msi_latency_total_ns += latency
            return 0
        self.log.error("virtio-pcidev operation %d is not supported", op)
        return 0

    # Configuration space ---------------------------------------------------------------------------

    def _shadow_dword(self, offset):
        index = (offset - BARS_START) // 4
        for base, (size, flags, wide) in self.bars.items():
            if index == base:
                return (self.shadow[base] & ~(size - 1) & 0xffffffff) | flags
            if wide and index == base + 1:
                return ((self.shadow[base] & ~(size - 1)) >> 32) & 0xffffffff
        return 0

    def _shadow_write(self, offset, value):
        index = (offset - BARS_START) // 4
        for base, (size, flags, wide) in self.bars.items():
            if index == base:
                self.shadow[base] = (self.shadow[base] & ~0xffffffff) | (value & ~0xf)
            elif wide and index == base + 1:
                self.shadow[base] = (self.shadow[base] & 0xffffffff) | (value << 32)

    @staticmethod
    def _shadowed(offset):
        return BARS_START <= offset < BARS_END or ROM_BAR <= offset < ROM_BAR + 4

    async def config_read(self, offset, size):
        words = bytearray()
        for dword in range(offset & ~3, offset + size, 4):
            if self._shadowed(dword):
                words += struct.pack("<I", self._shadow_dword(dword) if dword < BARS_END else 0)
            else:
                words += bytes(await self._config_access("read", offset, self.function.config_read(dword, 4,
                    timeout=MMIO_TIMEOUT_US, timeout_unit="us")))
        return bytes(words[offset % 4:offset % 4 + size])

    async def _config_access(self, what, offset, access):
        """Awaits a configuration request of the root complex, which gives up after MMIO_TIMEOUT_US (a
        read then returns all-ones, as a real root complex's completion timeout does): counted in
        read_errors and logged, rather than the kernel's command waiting for ever."""
        start = get_sim_time("us")
        result = await access
        if get_sim_time("us") - start >= MMIO_TIMEOUT_US:
            self.read_errors += 1
            self.log.error("configuration %s at 0x%x: no completion in %d us", what, offset, MMIO_TIMEOUT_US)
        return result

    async def config_write(self, offset, data):
        if self._shadowed(offset & ~3):
            if offset & ~3 < BARS_END:
                dword = bytearray(struct.pack("<I", self._shadow_dword(offset & ~3)))
                dword[offset % 4:offset % 4 + len(data)] = data
                self._shadow_write(offset & ~3, struct.unpack("<I", bytes(dword[:4]))[0])
            return
        await self._config_access("write", offset, self.function.config_write(offset, bytes(data),
            timeout=MMIO_TIMEOUT_US, timeout_unit="us"))
