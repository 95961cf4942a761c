# This file is part of hostlink.
# Copyright (c) 2026 hostlink developers
# SPDX-License-Identifier: BSD-2-Clause

"""Whether a run on the fast path agrees with the same run on the reference path (issue 48).

The same data, errors, MSIs, counts and enumeration; cycles within 1 % of the reference for a row of
1 MiB or more, 3 % below (doc/pcie_sim.md explains each difference over 0.1 %). `differences(fast,
reference)` lists where two bench results (sim/pcie/bench.py's results file) differ beyond that.
"""

# Figures that come from timing: held to the tolerance of their row's size (cycles), or only to their sign
# (how far an MSI was ahead of the data or reads it reports, which must not be), or not compared: derived
# from the cycles (GB/s), or a part of them whose value the random draws move by more than the tolerance
# (the block's high-water marks; the cycles a user core waited, which under a stalling host take one of two
# values about 800 cycles apart on either path, as the seed falls: doc/pcie_sim.md).
TIMED      = ("cycles",)
SIGN_ONLY  = ("msi_ahead_of_data_ns", "msi_ahead_of_reads_ns")
DERIVED    = ("gbytes_per_s", "most_headers_held", "rc_wait_cycles", "c2h_waits", "h2c_waits")


def tolerance(row):
    return 0.01 if row.get("bytes", row.get("size", 0)) >= 1048576 else 0.03


def differences(fast, reference, path="run", row=None):
    """Where the fast path's results differ from the reference's beyond what the two paths may."""
    found = []
    if isinstance(fast, dict) and isinstance(reference, dict):
        if "direction" in reference or "kind" in reference or "fault" in reference:
            row = reference
        for key in sorted(set(fast) | set(reference)):
            a, b = fast.get(key), reference.get(key)
            where = f"{path}.{key}"
            if key in DERIVED:
                continue
            if key in SIGN_ONLY:
                if (a is None) != (b is None) or (a is not None and (a <= 0) != (b <= 0)):
                    found.append((where, a, b))
            elif key in TIMED and isinstance(b, (int, float)) and isinstance(a, (int, float)):
                if abs(a - b) > tolerance(row or {}) * max(abs(b), 1):
                    found.append((where, a, b))
            else:
                found += differences(a, b, where, row)
    elif isinstance(fast, list) and isinstance(reference, list) and len(fast) == len(reference):
        for index, (a, b) in enumerate(zip(fast, reference)):
            found += differences(a, b, f"{path}[{index}]", row)
    elif fast != reference:
        found.append((path, fast, reference))
    return found


# The agreement matrix (issue 48): the host profiles that change what the hard block and the host do per
# TLP, each as (named profile, overrides); h2c, c2h and bidir of each of SIZES.
MATRIX = {
    "default": ("default", {}),
    "worst":   ("worst",   {}),                                            # 64-byte completions only.
    "stalls":  ("default", {"backpressure": 0.25, "rx_gaps": 0.25}),       # Transmit stalls, receive gaps.
    "mps512":  ("default", {"max_payload_size": 512, "max_read_request": 512}),
}
SIZES = (65536, 1048576)
# The KC705's block is configured for MPS 256 whatever the host allows: its "mps512" is its "default" run.
SKIPPED = {("kc705", "mps512")}


def matrix_profile(board, name):
    """The host profile of the matrix's entry `name` for `board` (its link's defaults, then the entry's)."""
    from hostlink.sim.dma import board_profile_defaults
    from hostlink.sim.pcie.models.host import host_profile
    from hostlink.sim.pcie.soc import get_board
    base, overrides = MATRIX[name]
    settings = board_profile_defaults(get_board(board))
    settings.update(overrides)
    return host_profile(base, **settings)


def run_both(board, name, sizes=SIZES):
    """The matrix's entry `name` on `board`, on the fast path and on the reference path: (fast, reference)
    bench results."""
    from hostlink.sim.dma import make_jobs
    from hostlink.sim.pcie.run import run_jobs
    from hostlink.sim.pcie.soc import get_board
    profile = matrix_profile(board, name)
    jobs = make_jobs(list(sizes), ["h2c", "c2h", "bidir"], 1, 65536, granularity=get_board(board).data_width // 8)
    return (run_jobs(board, jobs, profile, dma_channels=2, fast=True),
            run_jobs(board, jobs, profile, dma_channels=2, reference=True))
