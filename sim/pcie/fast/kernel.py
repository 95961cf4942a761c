# This file is part of hostlink.
# Copyright (c) 2026 hostlink developers
# SPDX-License-Identifier: BSD-2-Clause

"""The fast path's scheduler: the bench's coroutines on the compiled simulation, without cocotb.

It offers the part of cocotb's interface that the bench and its jobs use (`Timer`, `Event`, `First`,
`RisingEdge` of a clock, `start_soon`, `get_sim_time`), so sim/pcie/bench.py and the job modules run on
either path unchanged (sim/pcie/triggers.py picks). Time is the compiled model's (`fs_now`, picoseconds).
Between two things Python waits for, the model runs in C++ (`fs_run(until)`), which returns early when
the host has something for Python (an MMIO read's completion, an MSI, a watched buffer complete); the
handler `on_event` given to `Kernel.run` takes those.
"""

import heapq
from collections import deque

_UNITS_PS = {"fs": 1e-3, "ps": 1, "ns": 1e3, "us": 1e6, "ms": 1e9, "sec": 1e12, "s": 1e12, "step": 1}

_kernel = None   # The one scheduler of this process (fast/run.py makes it).


def kernel():
    if _kernel is None:
        raise RuntimeError("the fast path's scheduler is not running (fast/run.py starts it)")
    return _kernel


def get_sim_time(unit="step"):
    """Simulated time in `unit` (cocotb's get_sim_time); during an event's handler, the event's time."""
    k = kernel()
    now = k.event_time if k.event_time is not None else k.lib.fs_now()
    return now / _UNITS_PS[unit] if unit not in ("step", "ps") else now


def start_soon(coro):
    return kernel().start_soon(coro)


# Triggers -----------------------------------------------------------------------------------------

class _Trigger:
    """Something a task awaits: `_subscribe(callback)` calls `callback()` once, when it fires."""
    def __await__(self):
        yield self
        return self

    def _subscribe(self, callback):
        raise NotImplementedError

    def _unsubscribe(self, handle):
        pass


class Timer(_Trigger):
    def __init__(self, time, unit="step"):
        self.ps = max(1, round(time * _UNITS_PS[unit]))

    def _subscribe(self, callback):
        return kernel().call_at(kernel().lib.fs_now() + self.ps, callback)

    def _unsubscribe(self, handle):
        handle[2] = None


class FastClock:
    """A clock of the compiled model, as `RisingEdge` sees it: rising edges at every multiple of its
    period (cocotb's Clock starts high at time 0)."""
    def __init__(self, period_ps):
        self.period_ps = period_ps


class RisingEdge(_Trigger):
    def __init__(self, clock):
        if not isinstance(clock, FastClock):
            raise TypeError("the fast path waits for the rising edges of a clock only (FastClock)")
        self.clock = clock

    def _subscribe(self, callback):
        now = kernel().lib.fs_now()
        period = self.clock.period_ps
        return kernel().call_at((now // period + 1) * period, callback)

    def _unsubscribe(self, handle):
        handle[2] = None


class Event:
    def __init__(self, name=None):
        self.name = name
        self._set = False
        self._waiters = []
        self.data = None

    def set(self, data=None):
        self._set = True
        self.data = data
        waiters, self._waiters = self._waiters, []
        for callback in waiters:
            if callback is not None:
                callback()

    def clear(self):
        self._set = False

    def is_set(self):
        return self._set

    def wait(self):
        return _EventWait(self)


class _EventWait(_Trigger):
    def __init__(self, event):
        self.event = event

    def _subscribe(self, callback):
        if self.event._set:
            kernel().ready.append(callback)
            return None
        self.event._waiters.append(callback)
        return callback

    def _unsubscribe(self, handle):
        if handle is not None and handle in self.event._waiters:
            self.event._waiters.remove(handle)


class First(_Trigger):
    """The first of several triggers to fire; the others are dropped."""
    def __init__(self, *triggers):
        self.triggers = triggers

    def _subscribe(self, callback):
        handles = []
        fired = [False]
        def fire():
            if fired[0]:
                return
            fired[0] = True
            for trigger, handle in zip(self.triggers, handles):
                trigger._unsubscribe(handle)
            callback()
        for trigger in self.triggers:
            if trigger.__class__ is not _EventWait and not isinstance(trigger, _Trigger):
                raise TypeError(f"First() of {trigger!r}")
            handles.append(trigger._subscribe(fire))
        return handles


# Tasks --------------------------------------------------------------------------------------------

class Task:
    def __init__(self, coro):
        self.coro = coro
        self._done = False
        self._result = None
        self._exception = None

    def done(self):
        return self._done

    def result(self):
        if self._exception:
            raise self._exception
        return self._result

    def kill(self):
        if not self._done:
            self._done = True
            self.coro.close()

    def _step(self):
        if self._done:
            return
        try:
            trigger = self.coro.send(None)
        except StopIteration as stop:
            self._done, self._result = True, stop.value
            return
        except BaseException as error:   # Kept for whoever waits on the task (the bench's main task).
            self._done, self._exception = True, error
            return
        if not isinstance(trigger, _Trigger):
            self._done = True
            self._exception = TypeError(f"a task awaited {trigger!r}, not a trigger of the fast path")
            return
        trigger._subscribe(lambda: kernel().ready.append(self._step))


# Scheduler ----------------------------------------------------------------------------------------

class Kernel:
    """Runs tasks on the compiled model `lib` (fast/run.py's ctypes handle)."""
    # How far the model runs when no task has asked to wake (only the model's events can then wake one).
    IDLE_STEP_PS = 1_000_000

    def __init__(self, lib):
        global _kernel
        self.lib = lib
        self.timers = []          # Heap of [time_ps, sequence, callback].
        self.sequence = 0
        self.ready = deque()
        self.event_time = None
        _kernel = self

    def call_at(self, time_ps, callback):
        entry = [time_ps, self.sequence, callback]
        self.sequence += 1
        heapq.heappush(self.timers, entry)
        return entry

    def start_soon(self, coro):
        task = Task(coro)
        self.ready.append(task._step)
        return task

    def run_now(self, coro, time_ps):
        """Runs `coro` (one that does not wait) at once, `get_sim_time` reading `time_ps`: an event's
        handler, as cocotb would have run it when the event happened."""
        self.event_time = time_ps
        try:
            task = Task(coro)
            task._step()
            task.result()
        finally:
            self.event_time = None

    def run(self, main, on_event, deadline_ps=None):
        """Runs `main` (a coroutine) to its end; `on_event(kind, a, b, time_ps)` takes each of the model's
        events. Returns its result, or raises what it raised."""
        task = self.start_soon(main)
        lib = self.lib
        a, b, t = lib.event_args()
        while True:
            while self.ready:
                self.ready.popleft()()
            if task.done():
                return task.result()
            while self.timers and self.timers[0][2] is None:
                heapq.heappop(self.timers)
            now = lib.fs_now()
            until = self.timers[0][0] if self.timers else now + self.IDLE_STEP_PS
            if deadline_ps is not None and until > deadline_ps:
                raise TimeoutError(f"the simulation passed its deadline ({deadline_ps / 1e6:.0f} us)")
            if lib.fs_run(until):
                while True:
                    kind = lib.fs_next_event(a, b, t)
                    if not kind:
                        break
                    on_event(kind, a.value, b.value, t.value)
                continue
            now = lib.fs_now()
            while self.timers and self.timers[0][0] <= now:
                entry = heapq.heappop(self.timers)
                if entry[2] is not None:
                    entry[2]()
