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

Software in simulated time (sim/zynq/models/ps_costs.py): the bridge keeps the CPU's own clock, `cpu_ns`, the
simulated time the ARM has reached. Each GP0 access starts at that time (at once if simulated time is already
past it) and is answered no earlier than its cost later; each interrupt moves the CPU's clock to the interrupt's
time (if it was behind: it waited) plus the interrupt's cost; each charge the drivers write to the simulation-only
cost device (hostlink,sim-cost, at COST_OFFSET) moves it on by the charge. While the CPU's clock is ahead of
simulated time, the DMA runs on: a charge delays the CPU's next access, never the device. When the kernel
sleeps (nothing for it to compute, HostActivity), its clock catches up with simulated time at its next command.
A status poll thus costs exactly gp0_read's simulated time, whatever the host's load: between two accesses of
a busy CPU only the charges count, not how long the host took. A MARK written to the cost device is recorded
with the CPU's time (the drivers' calls: when a call began, when its data was in the program's buffer). While
the device has nothing in flight, the CPU's stretches are skipped rather than simulated cycle by cycle (nothing
in the logic changes meanwhile): the bench's times are the simulator's plus those stretches (`now()`).
"""

import json
import logging
import math
import os
import struct
import time

import cocotb
from cocotb.clock import Clock
from cocotb.triggers import RisingEdge, Timer
from cocotb.utils import get_sim_time

from cocotbext.axi import AxiLiteBus, AxiLiteMaster

from hostlink.protocol import AXI_DMA_REGISTERS as REGISTERS
from hostlink.protocol import SIM_COST_CATEGORIES, SIM_COST_REGISTERS, SIM_COST_SIZE
from hostlink.sim.uml.bench import end_hung_kernel, start_kernel
from hostlink.sim.uml.pcidev import MSG, OP_INT, OP_MMIO_READ, OP_MMIO_WRITE, OP_NAMES, HostActivity, QueueServer
from hostlink.sim.uml.vhost_user import VhostUserBackend
from hostlink.sim.zynq.models.memory import PSMemory
from hostlink.sim.zynq.models.ps_model import DDR_KEYS

# The DMA's registers in the platform bus's window (0x10000000 + DMA_OFFSET), as at 0x4040_0000 on the Zynq.
DMA_OFFSET = 0x40_0000
DMA_WINDOW = 0x1_0000
LENGTH_REGISTERS = {REGISTERS["MM2S_LENGTH"]: "mm2s", REGISTERS["S2MM_LENGTH"]: "s2mm"}
STATUS_REGISTERS = {REGISTERS["MM2S_DMASR"]: 0, REGISTERS["S2MM_DMASR"]: 1}   # -> the channel's interrupt line
# The simulation-only cost device (hostlink.protocol.SIM_COST_*), beside the DMA's window.
COST_OFFSET = 0x50_0000


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
    def __init__(self, dut, ctrl, memory, socket_path, shared, costs, poll_ns=50, hold_cap_s=0.05):
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
        self.pending_irqs = []        # (line number, when it rose) to send.
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
        self._init_costs(costs)
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

    def _init_costs(self, costs):
        unknown = set(costs) - set(SIM_COST_CATEGORIES)
        if unknown:
            raise ValueError(f"costs for unknown categories {sorted(unknown)}; known: {SIM_COST_CATEGORIES}")
        self.costs = {name: float(costs.get(name, 0.0)) for name in SIM_COST_CATEGORIES}
        self.charges = {name: 0 for name in SIM_COST_CATEGORIES}      # Counts (accesses, bytes, lines...).
        self.charged_ns = {name: 0.0 for name in SIM_COST_CATEGORIES}
        self.cpu_ns = 0.0             # The CPU's clock: the simulated time the ARM has reached.
        self.skipped_ns = 0           # Simulated time skipped while the device was idle (_until).
        self.cpu_idle = False         # The kernel slept since its last command: its clock catches up.
        self.rise_ns = [None, None]   # When each interrupt line last rose.
        self.marks = []               # Each MARK written to the cost device: [value, the CPU's time in ns, charges].
        self.time_hi = 0
        self.cost_accesses = 0
        for number, line in enumerate(self.lines):
            cocotb.start_soon(self._time_rises(number, line))

    async def _time_rises(self, number, line):
        while True:
            await RisingEdge(line)
            self.rise_ns[number] = self.now()

    def charge(self, category, count=1):
        """The CPU spent `count` of `category`: its clock moves on (the device does not wait for it)."""
        self._wake()
        ns = count * self.costs[category]
        self.charges[category] += count
        self.charged_ns[category] += ns
        self.cpu_ns += ns

    def _wake(self):
        if self.cpu_idle:
            self.cpu_ns = max(self.cpu_ns, self.now())
            self.cpu_idle = False

    async def _reach_cpu_time(self):
        """Wait until simulated time reaches the CPU's clock (the charges before this access)."""
        self._wake()
        await self._until(self.cpu_ns)

    def now(self):
        """The machine's time in ns: the simulator's, and the stretches skipped while the device was idle."""
        return get_sim_time("ns") + self.skipped_ns

    def _device_idle(self):
        return all(t["done_ns"] is not None for t in self.running.values()) and not self.pending_irqs

    async def _until(self, at_ns):
        """Let the machine's time reach `at_ns`: simulated, or skipped at once when the device has nothing in
        flight (no transfer running, no interrupt to send): then nothing in the logic changes meanwhile, and the
        Verilator model need not run the CPU's long copies cycle by cycle."""
        delay = math.ceil(at_ns - self.now())
        if delay <= 0:
            return
        if self._device_idle():
            self.skipped_ns += delay
        else:
            await Timer(delay, "ns")

    def _hold(self, cmd_vq):
        super()._hold(cmd_vq)
        if self.host is not None and not cmd_vq.pending() and not self.host.busy():
            self.cpu_idle = True

    def _watch_lines(self, status_written=None):
        """A line's rise is an interrupt; so is a line still high after the kernel wrote its channel's status
        (`status_written`: the line's number), as a level-triggered controller interrupts again after the
        handler's clear. (Not after any other write: with the CPU's time charged, a write can come while an
        interrupt is still on its way to the CPU.)"""
        for number, line in enumerate(self.lines):
            level = int(line.value)
            again = status_written == number and all(n != number for n, _ in self.pending_irqs)
            if level and (not self.levels[number] or again):
                rose = self.rise_ns[number]
                self.pending_irqs.append((number, rose if rose is not None and not again else self.now()))
            self.levels[number] = level

    async def _time_ends(self, channel, signal, key):
        """Each rise of `signal` ends the channel's running transfer's `key` (its status bit, its line)."""
        while True:
            await RisingEdge(signal)
            transfer = self.running.get(channel)
            if transfer is not None and transfer[key] is None:
                transfer[key] = self.now()

    # Main loop (QueueServer.run) -------------------------------------------------------------------

    def _watch(self):
        self._watch_lines()

    def _send_interrupts(self, irq_vq):
        while self.pending_irqs and irq_vq.ready and irq_vq.pending():
            number, at_ns = self.pending_irqs.pop(0)
            self.note_steps()
            # The CPU takes it once it has done what it was charged for, or when it rose if it was waiting.
            self.cpu_idle = False
            self.cpu_ns = max(self.cpu_ns, at_ns)
            self.charge("interrupt")
            head, chain = irq_vq.pop()
            message = MSG.pack(OP_INT, 0, 0, 4, 0) + struct.pack("<I", number)
            self._scatter(chain, message)
            irq_vq.push(head, len(message))
            self.interrupts[number] += 1
            if self.host is not None:
                self.host.woken()

    def note_steps(self):
        while os.path.exists(os.path.join(self.shared, f"cmd{len(self.steps)}.rc")):
            self.steps.append({"sim_ns": self.now(), "mmio_reads": self.mmio_reads,
                               "mmio_writes": self.mmio_writes, "interrupts": sum(self.interrupts),
                               "transfers": len(self.transfers), "marks": len(self.marks),
                               "charges": dict(self.charges), "charged_ns": dict(self.charged_ns)})

    async def _serve(self, head, chain):
        self.note_steps()
        request = self._gather(chain)
        op, bar, _, size, address = MSG.unpack_from(request)
        data = request[MSG.size:]
        self.commands += 1
        if 0 <= address - COST_OFFSET < SIM_COST_SIZE:
            return await self._serve_cost(op, size, address - COST_OFFSET, data, chain)
        register = address - DMA_OFFSET
        inside = 0 <= register < DMA_WINDOW and size == 4 and register % 4 == 0
        if op == OP_MMIO_READ:
            self.mmio_reads += 1
            if not inside:
                self.outside += 1
                self.log.error("register read of %d bytes at 0x%x: not one of the DMA's registers", size, address)
                return self._scatter(chain, b"\xff" * size)
            start = await self._access_starts()
            value = await self.ctrl.read_dword(register)
            await self._access_ends(start, "gp0_read")
            return self._scatter(chain, struct.pack("<I", value))
        if op == OP_MMIO_WRITE:
            self.mmio_writes += 1
            if not inside:
                self.outside += 1
                self.log.error("register write of %d bytes at 0x%x: not one of the DMA's registers", size, address)
                return 0
            value = struct.unpack_from("<I", data)[0]
            start = await self._access_starts()
            if register in LENGTH_REGISTERS:
                channel = LENGTH_REGISTERS[register]
                transfer = {"channel": channel, "length": value, "start_ns": self.now(), "done_ns": None,
                            "irq_ns": None}
                self.transfers.append(transfer)
                self.running[channel] = transfer
            await self.ctrl.write_dword(register, value)
            await self._access_ends(start, "gp0_write")
            self._watch_lines(STATUS_REGISTERS.get(register))
            return 0
        self.log.error("virtio-pcidev operation %s is not served on the platform bus",
                       OP_NAMES.get(op, str(op)))
        return 0


    async def _access_starts(self):
        """A GP0 access starts when the CPU reaches it; returns that time."""
        await self._reach_cpu_time()
        return self.cpu_ns

    async def _access_ends(self, start, category):
        """Answered no earlier than its cost after it started (the AXI-Lite access runs within that cost)."""
        self.cpu_ns = start
        self.charge(category)
        await self._until(self.cpu_ns)
        self.cpu_ns = max(self.cpu_ns, self.now())

    async def _serve_cost(self, op, size, register, data, chain):
        """The simulation-only cost device: charges (written counts), marks, the CPU's time."""
        self.cost_accesses += 1
        charges_end = SIM_COST_REGISTERS["CHARGE"] + 4 * len(SIM_COST_CATEGORIES)
        if size != 4 or register % 4:
            self.log.error("cost device: access of %d bytes at 0x%x", size, register)
            return self._scatter(chain, b"\xff" * size) if op == OP_MMIO_READ else 0
        if op == OP_MMIO_WRITE:
            value = struct.unpack_from("<I", data)[0]
            if SIM_COST_REGISTERS["CHARGE"] <= register < charges_end:
                self.charge(SIM_COST_CATEGORIES[(register - SIM_COST_REGISTERS["CHARGE"]) // 4], value)
            elif register == SIM_COST_REGISTERS["MARK"]:
                await self._reach_cpu_time()
                self.marks.append([value, self.cpu_ns, dict(self.charged_ns), dict(self.charges)])
            else:
                self.log.error("cost device: write of 0x%x at 0x%x, not a register", value, register)
            return 0
        if op == OP_MMIO_READ:
            value = 0xffffffff
            if register == SIM_COST_REGISTERS["TIME_LO"]:
                await self._reach_cpu_time()
                now = int(self.cpu_ns)
                value, self.time_hi = now & 0xffffffff, now >> 32
            elif register == SIM_COST_REGISTERS["TIME_HI"]:
                value = self.time_hi
            return self._scatter(chain, struct.pack("<I", value))
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
    bridge = PlatformBridge(dut, ctrl, memory, uml["socket"], shared, config["costs_ns"])
    cocotb.start_soon(bridge.run())

    kernel = start_kernel(uml)
    bridge.host = HostActivity(kernel.pid)
    fault_file = os.path.join(shared, "hp0_fault")
    started, sim_start = time.monotonic(), bridge.now()
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
                (bridge.now() - sim_start) / 1e6, bridge.mmio_reads, bridge.mmio_writes, *bridge.interrupts,
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
        "sim_ns":        bridge.now() - sim_start,
        "skipped_ns":    bridge.skipped_ns,
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
        "costs_ns":      bridge.costs,
        "charges":       bridge.charges,
        "charged_ns":    {name: round(ns, 1) for name, ns in bridge.charged_ns.items()},
        "cost_accesses": bridge.cost_accesses,
        # Each MARK: its value, the CPU's time (simulated ns, as the transfers'), the charges so far (ns, counts).
        "marks":         bridge.marks,
    }
    with open(config["results"], "w") as f:
        json.dump(results, f, indent=2)
