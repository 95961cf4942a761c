# This file is part of hostlink.
# Copyright (c) 2026 hostlink developers
# SPDX-License-Identifier: BSD-2-Clause

"""The host's DDR3 bring-up (software/dram) driving the simulated SoC: the same C code as on a board.

`build_bringup_library(soc, directory)` generates the bring-up for the simulated SoC, as `--driver`
does for a board (generated/csr.h, sdram_phy.h, ... from this SoC), and builds it as
`libhostlink_dram.so`. In the bench, `run_bringup` loads it with ctypes and runs its functions in a
thread. Every register access and wait of the C code becomes a request that a cocotb coroutine serves
through BAR0 (waits as simulated time) while the C thread blocks for the answer; the simulator does not
advance while the C code computes, so runs are repeatable. What the DRAM model receives on its DFI is
recorded next to the register trace.

Waits are shortened in simulation: the model needs none of DDR3's power-up times, and 500 us of
simulated time would cost minutes. Each wait is recorded as the C code asked for it and served as at
most `max_delay_ns` of simulated time.
"""

import ctypes
import os
import queue
import subprocess
import threading

import cocotb
from cocotb.triggers import Timer, First, RisingEdge, ReadOnly, ValueChange
from cocotb.utils import get_sim_time

from hostlink.sim.pcie.dram import DFI_PROBE_FIELDS

__all__ = ["build_bringup_library", "BringupLibrary", "run_bringup", "DFI_COMMANDS", "RESULT_CODES"]

# What the C library returns (software/dram/hostlink_dram.h).
RESULT_CODES = {0: "ok", -1: "no_dram", -2: "leveling", -3: "data", -4: "memtest", -5: "timeout", -6: "bad_request"}

# DDR3 commands by (ras_n, cas_n, we_n), with cs_n low.
DFI_COMMANDS = {
    (0, 0, 0): "MRS", (0, 0, 1): "REF", (0, 1, 0): "PRE", (0, 1, 1): "ACT",
    (1, 0, 0): "WR",  (1, 0, 1): "RD",  (1, 1, 0): "ZQC",
}

# Library ------------------------------------------------------------------------------------------

def build_bringup_library(soc, directory):
    """Generate the bring-up for `soc` in `directory` and build libhostlink_dram.so; return its path."""
    from hostlink.software.driver import generate_dram_tool
    generate_dram_tool(soc, directory)
    proc = subprocess.run(["make", "-C", directory, "lib"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
        text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"building libhostlink_dram.so failed:\n{proc.stdout}")
    return os.path.join(directory, "libhostlink_dram.so")


# struct hostlink_dram_io (software/dram/hostlink_dram.h).
_READ  = ctypes.CFUNCTYPE(ctypes.c_uint32, ctypes.c_void_p, ctypes.c_uint32)
_WRITE = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_uint32, ctypes.c_uint32)
_DELAY = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_uint32)
_PRINT = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_char_p)


class _IO(ctypes.Structure):
    _fields_ = [("read", _READ), ("write", _WRITE), ("delay", _DELAY), ("print", _PRINT), ("ctx", ctypes.c_void_p)]


class BringupLibrary:
    """libhostlink_dram.so behind Python callables: `read(addr)`, `write(addr, value)`, `delay(units)`
    and `print(text)` are called from the C code's thread."""
    def __init__(self, path):
        self.lib = ctypes.CDLL(os.path.abspath(path))
        for name in ("hostlink_dram_init", "hostlink_dram_level", "hostlink_dram_status",
                     "hostlink_dram_hardware_control", "hostlink_dram_present"):
            getattr(self.lib, name).restype = ctypes.c_int
        self.lib.hostlink_dram_memtest.restype  = ctypes.c_int
        self.lib.hostlink_dram_memtest.argtypes = [ctypes.POINTER(_IO), ctypes.c_uint64, ctypes.c_uint64,
            ctypes.c_uint32, ctypes.POINTER(ctypes.c_uint32)]
        self.lib.hostlink_dram_size.restype = ctypes.c_uint64

    def io(self, read, write, delay, print_):
        # The structure keeps the ctypes callbacks (and so the closures) alive as long as it lives.
        return _IO(
            read  = _READ(lambda ctx, addr: read(addr)),
            write = _WRITE(lambda ctx, addr, value: write(addr, value)),
            delay = _DELAY(lambda ctx, units: delay(units)),
            print = _PRINT(lambda ctx, text: print_(text.decode())),
            ctx   = None,
        )

    def call(self, step, io, memtest=None):
        """Run one step ("init", "level", "status", "hardware_control", "memtest") and return
        (code, extra): memtest's extra is the checker's error count."""
        if step == "memtest":
            errors = ctypes.c_uint32(0)
            code = self.lib.hostlink_dram_memtest(ctypes.byref(io), memtest["base"], memtest["length"],
                memtest.get("timeout_units", 10_000_000), ctypes.byref(errors))
            return code, errors.value
        return getattr(self.lib, f"hostlink_dram_{step}")(ctypes.byref(io)), None

# Bench side ---------------------------------------------------------------------------------------

class _RegisterNames:
    """CSR address -> register name (and word, for registers wider than 32 bits), from csr.json."""
    def __init__(self, csr_map):
        self.base  = csr_map.base
        self.names = {}
        for name, reg in csr_map.registers.items():
            for word in range(reg["size"]):
                self.names[reg["addr"] + 4 * word] = name if reg["size"] == 1 else f"{name}[{word}]"

    def __call__(self, addr):
        return self.names.get(addr, f"0x{addr:x}")


class DFIMonitor:
    """Every command the memory model receives through the DFI, with the number of DRAM clock cycles it
    was presented for (a command issued once lasts one cycle), and every change of RESET#/CKE/ODT."""
    def __init__(self, dut, nphases=4):
        self.dut      = dut
        self.nphases  = nphases
        self.commands = []    # [time_ns, phase, name, address, bank, cycles]
        self.control  = []    # [time_ns, reset_n, cke, odt]
        self.running  = True

    def _active(self):
        command = self.dut.sim_dram_dfi_command.value.to_unsigned()
        found = []
        width = len(DFI_PROBE_FIELDS)
        for phase in range(self.nphases):
            cs_n, ras_n, cas_n, we_n = [(command >> (width * phase + i)) & 1 for i in range(width)]
            if not cs_n and (ras_n, cas_n, we_n) in DFI_COMMANDS:
                found.append((phase, DFI_COMMANDS[(ras_n, cas_n, we_n)]))
        return found

    def _fields(self, phase):
        address = self.dut.sim_dram_dfi_address.value.to_unsigned()
        bank    = self.dut.sim_dram_dfi_bank.value.to_unsigned()
        abits   = len(self.dut.sim_dram_dfi_address) // self.nphases
        bbits   = len(self.dut.sim_dram_dfi_bank) // self.nphases
        return (address >> (abits * phase)) & ((1 << abits) - 1), (bank >> (bbits * phase)) & ((1 << bbits) - 1)

    def _sample_control(self):
        value = self.dut.sim_dram_dfi_control.value.to_unsigned()
        state = [value & 1, (value >> 1) & 1, (value >> 2) & 1]
        if not self.control or self.control[-1][1:] != state:
            self.control.append([get_sim_time("ns")] + state)

    async def run(self):
        self._sample_control()
        while self.running:
            await First(ValueChange(self.dut.sim_dram_dfi_command), ValueChange(self.dut.sim_dram_dfi_control))
            await ReadOnly()
            self._sample_control()
            active = self._active()
            if not active:
                continue
            now = get_sim_time("ns")
            entries = []
            for phase, name in active:
                address, bank = self._fields(phase)
                entries.append([now, phase, name, address, bank, 1])
            # A command held for more than one cycle would reach the DRAM more than once.
            while True:
                await RisingEdge(self.dut.sim_dram_clk)
                await ReadOnly()
                if self._active() != active:
                    break
                for entry in entries:
                    entry[5] += 1
            self.commands.extend(entries)
            self._sample_control()

    def stop(self):
        self.running = False


async def run_bringup(bench, job):
    """Bench job "bringup": the C library's steps against the simulated SoC (see module doc).

    job: {"library": path of libhostlink_dram.so, "steps": ["status", "init", "level", "memtest", ...],
          "memtest": {"base", "length"}, "max_delay_ns": int, "stuck_memtest": bool}
    """
    drv, dut = bench.driver, bench.dut
    names    = _RegisterNames(drv.csrs)
    library  = BringupLibrary(job["library"])
    max_delay_ns = job.get("max_delay_ns", 1000)
    requests  = queue.Queue()
    trace     = []            # [time_ns, "r"/"w"/"d", register, value]
    log       = []

    def blocking(request):
        answer = queue.Queue(maxsize=1)
        requests.put((request, answer))
        return answer.get()

    io = library.io(
        read   = lambda addr: blocking(("r", addr)),
        write  = lambda addr, value: blocking(("w", addr, value)),
        delay  = lambda units: blocking(("d", units)),
        print_ = log.append,
    )

    async def serve(step, memtest=None):
        outcome = {}
        def target():
            try:
                outcome["result"] = library.call(step, io, memtest)
            finally:
                requests.put((("done",), None))
        thread = threading.Thread(target=target, name=f"hostlink_dram {step}", daemon=True)
        log.append(f"### {step}\n")
        thread.start()
        while True:
            # Blocking here stops the simulator while the C code computes: repeatable timing.
            request, answer = requests.get(timeout=600)
            kind = request[0]
            if kind == "done":
                break
            now = get_sim_time("ns")
            if kind == "r":
                value = await drv.bar.read_dword(request[1] - names.base, timeout=200, timeout_unit="us")
                trace.append([now, "r", names(request[1]), value])
                answer.put(value)
            elif kind == "w":
                await drv.bar.write_dword(request[1] - names.base, request[2])
                trace.append([now, "w", names(request[1]), request[2]])
                answer.put(None)
            else:
                trace.append([now, "d", None, request[1]])
                await Timer(max(1, min(request[1] * 10, max_delay_ns)), "ns")
                answer.put(None)
        thread.join()
        return outcome["result"]

    # The DFI is watched until the controller has it back: its own traffic is not the bring-up's.
    monitor = DFIMonitor(dut)
    monitor_task = cocotb.start_soon(monitor.run())
    steps = []
    handback_ns = None
    for step in job["steps"]:
        code, extra = await serve(step, job.get("memtest"))
        steps.append({"step": step, "code": code, "result": RESULT_CODES.get(code, str(code)), "errors": extra})
        if step in ("level", "hardware_control") and monitor.running:
            monitor.stop()
            monitor_task.cancel()
            handback_ns = get_sim_time("ns")
    if monitor.running:
        monitor.stop()
        monitor_task.cancel()

    if job.get("stuck_memtest"):
        dut.sim_dram_stuck.value = 1
        code, extra = await serve("memtest", job["memtest"])
        dut.sim_dram_stuck.value = 0
        steps.append({"step": "memtest_stuck", "code": code, "result": RESULT_CODES.get(code, str(code)),
                      "errors": extra})

    return [{"target": "dram", "kind": "bringup", "steps": steps, "log": "".join(log), "trace": trace,
             "dfi_commands": monitor.commands, "dfi_control": monitor.control,
             "handback_ns": handback_ns,
             "present": library.lib.hostlink_dram_present(), "dram_size": library.lib.hostlink_dram_size()}]
