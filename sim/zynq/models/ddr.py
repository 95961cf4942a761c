# This file is part of hostlink.
# Copyright (c) 2026 hostlink developers
# SPDX-License-Identifier: BSD-2-Clause

"""The PS's one DDR: reads and writes served one burst at a time from one budget, by an arbiter.

Plain Python, no simulator: `PSMemory` (memory.py) asks it when the DDR takes each burst of the HP port, and
the tests drive it directly. Its figures are ps_model.py's, with their sources there.
"""

import collections

__all__ = ["DDRArbiter", "Grant"]

DIRECTIONS = ("read", "write")
OTHER = {"read": "write", "write": "read"}

Grant = collections.namedtuple("Grant", "direction tag start_ns end_ns switched")


class DDRArbiter:
    """One DDR serving a read queue and a write queue, one burst at a time.

    Policy (UG585's DDRC, section 10.4, stage 3 "transaction state"): the DDR starts in reads and stays in its
    direction while that direction has bursts waiting. It switches when its direction has none left and the other
    has, or when the other's oldest burst has waited `starve_ns` (it has gone critical): then the critical direction
    is served `run_bursts` bursts before the first may take the DDR back the same way. Within a direction, bursts are
    served in the order they came (nothing reordered).

    Cost: a burst holds the DDR for its bytes at the peak rate times the direction's efficiency; a switch of
    direction leaves the data bus idle `read_to_write_ns` or `write_to_read_ns` after the last burst, unless the DDR
    has been idle that long already.

    Parameters
    ----------
    bytes_per_s : float
        The DDR's peak rate (its width times its transfer rate).
    read_efficiency, write_efficiency : float
        The share of the peak that bursts in one direction reach (0 to 1).
    read_to_write_ns, write_to_read_ns : float
        The data bus's idle time when the DDR turns around.
    starve_ns : float
        How long the other direction's oldest burst waits before it takes the DDR from a busy direction.
    run_bursts : int
        Bursts served in a direction that took the DDR that way before the other may take it back.

    Interface
    ---------
    push(direction, nbytes, now_ns, tag): a burst waits for the DDR from `now_ns`.
    grant(now_ns): the next burst the DDR serves, as a `Grant` (its `tag`, when the DDR starts and ends it, whether
        the DDR turned around for it), or None when nothing waits. Call it once the last grant has ended.
    waiting(direction): bursts waiting in that direction. `switches`, `critical_switches`, `bytes` count what it did.
    """
    def __init__(self, bytes_per_s, read_efficiency, write_efficiency, read_to_write_ns, write_to_read_ns,
            starve_ns, run_bursts):
        if not bytes_per_s > 0:
            raise ValueError(f"the DDR's rate must be a positive number of bytes per second, not {bytes_per_s!r}")
        for name, value in (("read_efficiency", read_efficiency), ("write_efficiency", write_efficiency)):
            if not 0 < value <= 1:
                raise ValueError(f"{name} must be above 0 and at most 1, not {value!r}")
        for name, value in (("read_to_write_ns", read_to_write_ns), ("write_to_read_ns", write_to_read_ns)):
            if not value >= 0:
                raise ValueError(f"{name} must be 0 or more, not {value!r}")
        if not starve_ns > 0:
            raise ValueError(f"starve_ns must be positive, not {starve_ns!r}")
        if not (isinstance(run_bursts, int) and run_bursts >= 1):
            raise ValueError(f"run_bursts must be a positive integer, not {run_bursts!r}")
        self.ns_per_byte = {"read": 1e9 / (bytes_per_s * read_efficiency),
                            "write": 1e9 / (bytes_per_s * write_efficiency)}
        self.turnaround_ns = {"write": read_to_write_ns, "read": write_to_read_ns}   # To turn towards the key.
        self.starve_ns, self.run_bursts = starve_ns, run_bursts
        self.queues = {direction: collections.deque() for direction in DIRECTIONS}   # (since ns, bytes, tag)
        self.direction = "read"
        self.free_ns = float("-inf")      # When the last burst ended: none yet, so no turnaround is owed.
        self.run_left = 0
        self.switches = self.critical_switches = 0
        self.bytes = {direction: 0 for direction in DIRECTIONS}

    def push(self, direction, nbytes, now_ns, tag=None):
        assert direction in DIRECTIONS, direction
        self.queues[direction].append((now_ns, nbytes, tag))

    def waiting(self, direction):
        return len(self.queues[direction])

    def _critical(self, direction, now_ns):
        queue = self.queues[direction]
        return bool(queue) and now_ns - queue[0][0] >= self.starve_ns

    def grant(self, now_ns):
        current, other = self.direction, OTHER[self.direction]
        if not self.queues[current] and not self.queues[other]:
            return None
        switched = False
        if not self.queues[current] or (self.run_left == 0 and self._critical(other, now_ns)):
            # The other direction takes the DDR: it was idle this way, or the other has waited too long.
            if self.queues[current]:
                self.critical_switches += 1
                self.run_left = self.run_bursts
            else:
                self.run_left = 0
            self.direction, switched = other, True
            self.switches += 1
        self.run_left = max(0, self.run_left - 1)
        since_ns, nbytes, tag = self.queues[self.direction].popleft()
        # The DDR's time runs on from where the last burst ended, not from when this call is made (the caller may
        # look a clock cycle later): its rate is exact whatever the caller's clock.
        start_ns = max(since_ns, self.free_ns + (self.turnaround_ns[self.direction] if switched else 0.0))
        end_ns = start_ns + nbytes * self.ns_per_byte[self.direction]
        self.free_ns = end_ns
        self.bytes[self.direction] += nbytes
        return Grant(self.direction, tag, start_ns, end_ns, switched)
