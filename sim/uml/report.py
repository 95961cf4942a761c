# This file is part of hostlink.
# Copyright (c) 2026 hostlink developers
# SPDX-License-Identifier: BSD-2-Clause

"""The end of a User-Mode Linux run, as both runs report it (./sim.py driver: sim/driver.py, the PCIe SoCs;
./sim.py driver --ps7: sim/zynq/linux.py, the Zynq): the kernel log's problems, and for a run that did not
end normally where its logs are, why it was ended and the end of each log."""

import re

__all__ = ["kernel_problems", "report_the_end"]

# Besides the kernel's own reports, LitePCIe's driver reports lost buffers ("Reading too late, N
# buffers lost"): the software fell behind the DMA's ring.
_KERNEL_PROBLEM = re.compile(r"WARNING:|BUG:|Oops|Call Trace|kmemleak|general protection|"
                             r"unreferenced object|Kernel panic|buffers lost|litepcie.*(error|fail)",
                             re.IGNORECASE)


def kernel_problems(dmesg):
    return [line for line in (dmesg or "").splitlines() if _KERNEL_PROBLEM.search(line)]


def report_the_end(result, rows, problems):
    """The kernel log's problems; for a run that did not end normally, where its logs are, why it was ended
    and the end of each log; the shared folder. `result` as run_driver_sim's (or run_zynq_linux's)."""
    bench = result["bench"]
    if problems:
        print("kernel log problems:\n    " + "\n    ".join(problems))
    if bench["timed_out"] or result["dmesg"] is None or any(r["timed_out"] for r in rows):
        print(f"the run did not end normally; kernel log (console): {result['console_log']}, "
              f"simulation log: {result['sim_log']}")
        if bench.get("kernel_stacks"):
            print(f"ended because {bench['ended_because']}; the kernel then:\n{bench['kernel_stacks']}")
        for path in (result["console_log"], result["sim_log"]):
            try:
                with open(path, errors="replace") as f:
                    tail = f.read()[-3000:]
            except OSError:
                continue
            print(f"--- {path} (end)\n{tail}")
    print(f"shared folder: {result['run_dir']}/shared")
