# This file is part of hostlink.
# Copyright (c) 2026 hostlink developers
# SPDX-License-Identifier: BSD-2-Clause

"""The PS model's defaults, once: what `./sim.py zynq`, the Linux run (`./sim.py driver --board zc706 --ps7`)
and sim/zynq/models/memory.py's PSMemory take unless told otherwise.

The logic and its HP port:
- 150 MHz logic (the PS's FCLK0);
- 200 ns from the DDR taking a read burst to its first beat, 100 ns from the DDR taking a write burst to its
  response (latencies as seen through the port; ours, not measured);
- 8 bursts in flight each way (the port's acceptance; ours);
- 1,200 MB/s each way through the port: 64 bits at 150 MHz, UG585's figure for one HP port (AMD, Zynq 7000 SoC
  Technical Reference Manual, UG585, chapter 22.3, table "Theoretical Bandwidth of PS Interconnect").

The DDR behind the port, one for reads and writes (sim/zynq/models/ddr.py):
- 4,264 MB/s peak: the ZC706's PS DDR3, 32 bits wide at 1,066 MT/s (issue 50's figure; not checked here
  against the board's PS7 preset);
- 97 % of that for reads and 90 % for writes in sequential bursts: UG585 22.3.2 "DDR Efficiency", table of
  efficiency by access type (measured with DDR3 at 1,050 Mb/s and PL AXI at 150 MHz, close to ours: sequential
  reads 97 %, sequential writes 90 %, sequential reads and writes 87 %, random 79 to 92 %);
- the turnaround, the data bus's idle time when the DDR changes direction, from DDR3's command spacing as a DDR
  scheduler's registers state it (Intel's Stratix 10 HPS `DdrTiming`: read to write (RL - WL + 2) x tCK, write to
  read WL x tCK + tWTR, from the command; on the data bus that leaves 2 tCK after a read, and tWTR + RL after a
  write) with JEDEC's DDR3-1066F timing (tCK 1.875 ns, RL = CL = 7, WL = CWL = 6, tWTR 7.5 ns): 3.75 ns read to
  write, 20.6 ns write to read. The CAS latencies are an assumption: DDR3-1066F's, not read off the ZC706's preset.
  As a check, with 128-byte bursts the model gives UG585's 87 % for reads and writes together when it turns
  around every 5 to 6 bursts each way;
- the arbiter's policy is UG585's DDRC (10.4.5 to 10.4.7, "Stage 3, transaction state"): stay in a direction
  while it has bursts, switch when it has none or the other has gone critical (waited `*_max_starve_x32` x 32
  DDR clocks), then serve the critical direction `*_xact_run_length` transactions. Those registers' values on
  the ZC706 are not known here: 960 ns (16 x 32 clocks of 533 MHz) and 8 bursts are assumptions, chosen so that a
  starved direction waits about as long as the port's 8 bursts in flight take to drain.
"""

PS_MODEL = {
    "clock_hz":               150e6,
    "read_latency_ns":        200.0,
    "write_latency_ns":       100.0,
    "max_reads":              8,
    "max_writes":             8,
    "rate_bytes_per_s":       1200e6,     # The HP port's, each way.
    "ddr_bytes_per_s":        4264e6,     # The DDR's peak, reads and writes together.
    "ddr_read_efficiency":    0.97,
    "ddr_write_efficiency":   0.90,
    "ddr_read_to_write_ns":   3.75,
    "ddr_write_to_read_ns":   20.6,
    "ddr_starve_ns":          960.0,
    "ddr_run_bursts":         8,
}

DDR_KEYS = ("ddr_bytes_per_s", "ddr_read_efficiency", "ddr_write_efficiency", "ddr_read_to_write_ns",
            "ddr_write_to_read_ns", "ddr_starve_ns", "ddr_run_bursts")
