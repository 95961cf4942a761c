# This file is part of hostlink.
# Copyright (c) 2026 hostlink developers
# SPDX-License-Identifier: BSD-2-Clause

"""cocotb bench of ./sim.py driver --board zc706 --ps7: Linux (User-Mode Linux) on the simulated Zynq SoC.

The Zynq SoC's logic (sim/zynq/top.py, the AXI DMA with its streams looped back) with the PS7 replaced, as in
./sim.py zynq, by models, but the PS is now a Linux kernel (sim/zynq/linux.py starts it):

- GP0: the kernel's register accesses. User-Mode Linux's virt-pci is a platform bus here (the device tree's
  `virtio,uml` node): a readl or writel at 0x10000000 + offset comes as a vhost-user command (sim/uml/
  vhost_user.py), and becomes an AXI-Lite access by cocotbext-axi's AxiLiteMaster on the DMA's registers
  (offset - DMA_OFFSET); one at a time, in order, as the PS's GP0 port issues a core's accesses.
- HP0: the PS's DDR is the kernel's own memory (the vhost-user memory table: a DMA address is a physical
  address), behind the same model as ./sim.py zynq's (sim/zynq/models/memory.py: latency, bursts in flight, rate).
- The interrupts: the DMA's two lines are lines 0 (MM2S) and 1 (S2MM) of the platform bus's interrupt
  controller (sim/uml/linux/virt-pci-platform-irq.patch). A line's rise is one VIRTIO_PCIDEV_OP_INT message;
  a line still high after a register write (the kernel cleared some of the status, not all) is another,
  as a level-triggered controller would interrupt again.

Simulated time is held while the kernel computes (sim/uml/pcidev.py's HostActivity), as for the PCIe boards.
For each transfer the bench records the time of the LENGTH write that starts it, of the status bit that ends
it and of its interrupt: the hardware's part, in simulated time. When a step of the machine's init ends (its
exit-status file appears in the shared folder, before the next step starts) the bench notes its counts, so
that each step's register accesses, interrupts and simulated time can be told apart. A file `hp0_fault`
written there by a program ("read" or "write") makes the next such burst on HP0 answer SLVERR ("read-decerr",
"write-decerr": DECERR; the bench removes the file once armed): the tests of the drivers' error paths. The summary goes to the file named by
"results".
"""

import json
import logging
import os
import struct
import time

import cocotb
from cocotb.clock import Clock
from cocotb.triggers import RisingEdge, Timer
from cocotb.utils import get_sim_time

from cocotbext.axi import AxiLiteBus, AxiLiteMaster

from hostlink.protocol import AXI_DMA_REGISTERS as REGISTERS
from hostlink.sim.uml.bench import end_hung_kernel, start_kernel
from hostlink.sim.uml.pcidev import MSG, OP_INT, OP_MMIO_READ, OP_MMIO_WRITE, OP_NAMES, HostActivity, QueueServer
from hostlink.sim.uml.vhost_user import VhostUserBackend
from hostlink.sim.zynq.models.memory import PSMemory
from hostlink.sim.zynq.models.ps_model import DDR_KEYS

# The DMA's registers in the platform bus's window (0x10000000 + DMA_OFFSET), as at 0x4040_0000 on the Zynq.
DMA_OFFSET = 0x40_0000
DMA_WINDOW = 0x1_0000
LENGTH_REGISTERS = {REGISTERS["MM2S_LENGTH"]: "mm2s", REGISTERS["S2MM_LENGTH"]: "s2mm"}


class KernelMemory:
    """The kernel's memory (one vhost-user region: `view` from physical address `base` on) as PSMemory's byte
    array, indexed by physical address: what lies below `base` (the kernel's image) is not there."""
    def __init__(self, view, base):
        self.view, self.base = view, base

    def __len__(self):
        return self.base + len(self.view)

    def _index(self, index):
        if isinstance(index, slice):
            start, stop = index.start - self.base, index.stop - self.base
            if start < 0:
                raise IndexError(f"DMA at 0x{index.start:x}: below the kernel's memory (0x{self.base:x})")
            return slice(start, stop)
        if index < self.base:
            raise IndexError(f"DMA at 0x{index:x}: below the kernel's memory (0x{self.base:x})")
        return index - self.base

    def __getitem__(self, index):
        return self.view[self._index(index)]

    def __setitem__(self, index, value):
        self.view[self._index(index)] = value


class PlatformBridge(QueueServer):
    """The vhost-user device of virt-pci's platform bus, on the Zynq SoC's GP0, HP0 and interrupts."""
    def __init__(self, dut, ctrl, memory, socket_path, shared, poll_ns=50, hold_cap_s=0.05):
        self.dut, self.ctrl, self.memory = dut, ctrl, memory
        # The counts when each step of the machine's init ended: its exit-status file (cmdN.rc) is written
        # before the next step starts, so a check before each command and interrupt puts each in its step.
        self.shared = shared
        self.steps = []
        self.backend = VhostUserBackend(socket_path, num_queues=2)
        self.poll_ns = poll_ns
        self.log = logging.getLogger("hostlink.uml")
        self.lines = [dut.mm2s_irq, dut.s2mm_irq]
        self.levels = [0, 0]
        self.pending_irqs = []        # Line numbers to send.
        self.interrupts = [0, 0]
        self.commands = self.mmio_reads = self.mmio_writes = 0
        self.outside = 0              # Accesses outside the DMA's registers (answered with all-ones, dropped).
        self.memory_registered = False
        self.kernel_memory = None     # [physical address, bytes] of the kernel's memory: the DDR behind HP0
        self.open = True
        self.host = None
        self.hold_cap_s = hold_cap_s
        self.held_s = 0.0
        # Each transfer: its LENGTH write, the rise of its status bit (IOC_Irq or Err_Irq: its end) and of its
        # interrupt line (None with the interrupt off), in simulated ns.
        self.transfers = []           # {"channel", "length", "start_ns", "done_ns", "irq_ns"}
        self.running = {}             # channel -> its last transfer
        for channel in ("mm2s", "s2mm"):
            cocotb.start_soon(self._time_ends(channel, getattr(dut, f"{channel}_done"), "done_ns"))
            cocotb.start_soon(self._time_ends(channel, getattr(dut, f"{channel}_irq"), "irq_ns"))

    def _register_memory(self):
        regions = self.backend.memory.regions
        if len(regions) != 1:
            raise RuntimeError(f"the kernel's memory table has {len(regions)} regions, not one: "
                               f"{[(hex(r[0]), hex(r[1])) for r in regions]}")
        base, size, _, view, _ = regions[0]
        self.memory.memory = KernelMemory(view, base)
        self.kernel_memory = [base, size]
        self.log.info("kernel memory 0x%x..0x%x is the PS's DDR behind HP0", base, base + size)
        self.memory_registered = True

    def _watch_lines(self, after_write=False):
        for number, line in enumerate(self.lines):
            level = int(line.value)
            if level and (not self.levels[number] or after_write):
                self.pending_irqs.append(number)
            self.levels[number] = level

    async def _time_ends(self, channel, signal, key):
        """Each rise of `signal` ends the channel's running transfer's `key` (its status bit, its line)."""
        while True:
            await RisingEdge(signal)
            transfer = self.running.get(channel)
            if transfer is not None and transfer[key] is None:
                transfer[key] = get_sim_time("ns")

    # Main loop (QueueServer.run) -------------------------------------------------------------------

    def _watch(self):
        self._watch_lines()

    def _send_interrupts(self, irq_vq):
        while self.pending_irqs and irq_vq.ready and irq_vq.pending():
            number = self.pending_irqs.pop(0)
            self.note_steps()
            head, chain = irq_vq.pop()
            message = MSG.pack(OP_INT, 0, 0, 4, 0) + struct.pack("<I", number)
            self._scatter(chain, message)
            irq_vq.push(head, len(message))
            self.interrupts[number] += 1
            if self.host is not None:
                self.host.woken()

    def note_steps(self):
        while os.path.exists(os.path.join(self.shared, f"cmd{len(self.steps)}.rc")):
            self.steps.append({"sim_ns": get_sim_time("ns"), "mmio_reads": self.mmio_reads,
                               "mmio_writes": self.mmio_writes, "interrupts": sum(self.interrupts),
                               "transfers": len(self.transfers)})

    async def _serve(self, head, chain):
        self.note_steps()
        request = self._gather(chain)
        op, bar, _, size, address = MSG.unpack_from(request)
        data = request[MSG.size:]
        self.commands += 1
        register = address - DMA_OFFSET
        inside = 0 <= register < DMA_WINDOW and size == 4 and register % 4 == 0
        if op == OP_MMIO_READ:
            self.mmio_reads += 1
            if not inside:
                self.outside += 1
                self.log.error("register read of %d bytes at 0x%x: not one of the DMA's registers", size, address)
                return self._scatter(chain, b"\xff" * size)
            value = await self.ctrl.read_dword(register)
            return self._scatter(chain, struct.pack("<I", value))
        if op == OP_MMIO_WRITE:
            self.mmio_writes += 1
            if not inside:
                self.outside += 1
                self.log.error("register write of %d bytes at 0x%x: not one of the DMA's registers", size, address)
                return 0
            value = struct.unpack_from("<I", data)[0]
            if register in LENGTH_REGISTERS:
                channel = LENGTH_REGISTERS[register]
                transfer = {"channel": channel, "length": value, "start_ns": get_sim_time("ns"), "done_ns": None,
                            "irq_ns": None}
                self.transfers.append(transfer)
                self.running[channel] = transfer
            await self.ctrl.write_dword(register, value)
            self._watch_lines(after_write=True)
            return 0
        self.log.error("virtio-pcidev operation %s is not served on the platform bus",
                       OP_NAMES.get(op, str(op)))
        return 0


FAULTS = {"read": "SLVERR", "write": "SLVERR", "read-decerr": "DECERR", "write-decerr": "DECERR"}


def arm_fault(fault_file, memory, log):
    """The program's hp0_fault file, if there: the next burst of its kind answered with its error."""
    if not os.path.exists(fault_file):
        return
    with open(fault_file) as f:
        kind = f.read().strip()
    if kind in FAULTS:
        memory.fault = kind
        log.warning("the next %s burst on HP0 is answered %s", kind.split("-")[0], FAULTS[kind])
    else:
        log.error("hp0_fault: %r is none of %s", kind, ", ".join(FAULTS))
    os.remove(fault_file)


@cocotb.test()
async def zynq_linux_bench(dut):
    with open(os.environ["HOSTLINK_SIM_CONFIG"]) as f:
        config = json.load(f)
    uml = config["uml"]
    log = logging.getLogger("hostlink.uml")
    period_ps = 2 * round(1e12 / config["clock_hz"] / 2)
    cocotb.start_soon(Clock(dut.clk, period_ps, "ps").start())
    for name in ("mode", "generate_enable", "generate_words", "check_clear"):
        getattr(dut, name).value = 0      # Mode 0: MM2S looped back into S2MM.
    dut.rst.value = 1
    ctrl = AxiLiteMaster(AxiLiteBus.from_prefix(dut, "ctrl"), dut.clk, dut.rst)
    memory = PSMemory(dut, "hp0", dut.clk, dut.rst, 4096, config["clock_hz"],
        read_latency_ns=config["read_latency_ns"], write_latency_ns=config["write_latency_ns"],
        max_reads=config["max_reads"], max_writes=config["max_writes"], rate_bytes_per_s=config["rate_bytes_per_s"],
        ddr={key: config[key] for key in DDR_KEYS})
    for _ in range(8):
        await RisingEdge(dut.clk)
    dut.rst.value = 0
    shared = uml["shared"]
    bridge = PlatformBridge(dut, ctrl, memory, uml["socket"], shared)
    cocotb.start_soon(bridge.run())

    kernel = start_kernel(uml)
    bridge.host = HostActivity(kernel.pid)
    fault_file = os.path.join(shared, "hp0_fault")
    started, sim_start = time.monotonic(), get_sim_time("ns")
    report = started
    watch = (started, bridge.commands, bridge.held_s)
    why = stacks = None
    while kernel.poll() is None:
        bridge.note_steps()
        arm_fault(fault_file, memory, log)
        now = time.monotonic()
        stuck = False
        if now - watch[0] >= uml["stuck_s"]:
            stuck = bridge.commands == watch[1] and bridge.held_s - watch[2] > 0.8 * (now - watch[0])
            watch = (now, bridge.commands, bridge.held_s)
        if now - report >= 10:
            report = now
            log.warning("progress: %.0f s wall, %.3f ms simulated, %d register reads, %d register writes, "
                "interrupts %d (MM2S) and %d (S2MM), simulation held %.0f s", now - started,
                (get_sim_time("ns") - sim_start) / 1e6, bridge.mmio_reads, bridge.mmio_writes, *bridge.interrupts,
                bridge.held_s)
        if stuck or now - started > uml["timeout_s"]:
            why, stacks = end_hung_kernel(kernel, bridge.host, uml, stuck, log)
            break
        await Timer(20_000, "ns")
    os.remove(uml["pid_file"])
    bridge.note_steps()       # The last step's, which no command follows.
    bridge.close()
    results = {
        "kernel_exit":   kernel.returncode,
        "timed_out":     why is not None,
        "ended_because": why,
        "kernel_stacks": stacks,
        "wall_s":        round(time.monotonic() - started, 1),
        "sim_ns":        get_sim_time("ns") - sim_start,
        "clock_hz":      config["clock_hz"],
        "connected":     bridge.backend.connected,
        "commands":      bridge.commands,
        "mmio_reads":    bridge.mmio_reads,
        "mmio_writes":   bridge.mmio_writes,
        "outside_accesses": bridge.outside,
        "interrupts":    {"mm2s": bridge.interrupts[0], "s2mm": bridge.interrupts[1]},
        "held_s":        round(bridge.held_s, 1),
        "transfers":     bridge.transfers,
        "most_reads_in_flight":  memory.most_reads,
        "most_writes_in_flight": memory.most_writes,
        "bursts":        memory.bursts,
        "hp0_errors_answered": memory.errors_answered,
        "kernel_memory": bridge.kernel_memory,
        "steps":         [dict(step, sim_ns=step["sim_ns"] - sim_start) for step in bridge.steps],
    }
    with open(config["results"], "w") as f:
        json.dump(results, f, indent=2)
