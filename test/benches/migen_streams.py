# This file is part of hostlink.
# Copyright (c) 2026 hostlink developers
# SPDX-License-Identifier: BSD-2-Clause

"""Stream drivers and monitors for gateware tests in migen's simulator (run_simulation generators), shared
so that every bench waits, drains and fails the same way:

    send(endpoint, packets, rng, valid_probability, stalls=None)      drive packets of (dat, be) beats
    monitor(endpoint, fields, done, rng, ready_probability, on_beat)  take beats until done(), then drain
    collect(endpoint, fields, count, rng, ready_probability, out)     receive `count` packets, then drain
    sample(endpoint, cycles, rng, ready_probability, out)             take beats' data for `cycles`, no drain
    Readiness(rng, ready_probability)                                 a monitor's ready, with the drain
    wait_for(signal, on_wait=None)                                    a bounded handshake wait
    pulse(signal, after=0)                                            high for one cycle, `after` cycles on
    stuck(what)                                                       the error of a bench loop that ran out
    IDLE_X_BACKPRESSURE                                               (valid, ready) probabilities, crossed
    IDLE_X_BACKPRESSURE_AS_IDLE                                       the same as (idle, back-pressure)
    StreamBench(dut, sink, valid_probability, ready_probability)      the above for a design with one input
                                                                      stream and one or more outputs, with
                                                                      the end check (nothing lost or extra)

A design that stops answering fails its test after MAX_CYCLES instead of hanging the run; a monitor stays
ready DRAIN_CYCLES after the output it expects and keeps whatever else comes, so a test that compares
counts sees output missing, extra or cut short.
"""

import random

from migen.sim import run_simulation

MAX_CYCLES   = 20_000   # A bench that has not finished by then has lost data: the assertions say what.
DRAIN_CYCLES = 64       # After the output a bench expects, cycles ready for more: nothing more may come.

# {no idle, idle cycles on the input} x {no back-pressure, back-pressure on the output}: every stream bench's
# matrix, as (valid, ready) probabilities, and the same as (idle, back-pressure) probabilities for the benches
# that take those (benches/udp_models.py's StreamSource and StreamSink).
IDLE_X_BACKPRESSURE = [(1.0, 1.0), (0.6, 1.0), (1.0, 0.7), (0.6, 0.7)]
IDLE_X_BACKPRESSURE_AS_IDLE = [(round(1 - valid, 2), round(1 - ready, 2)) for valid, ready in IDLE_X_BACKPRESSURE]


def wait_for(signal, on_wait=None):
    """Yields cycles until `signal` is high (checked before each), calling `on_wait` for each cycle waited;
    fails after MAX_CYCLES: a design that never answers fails its test instead of hanging the run."""
    for _ in range(MAX_CYCLES):
        if (yield signal):
            return
        if on_wait is not None:
            on_wait()
        yield
    raise AssertionError(f"waited {MAX_CYCLES} cycles for a handshake: the design is stuck")


def pulse(signal, after=0):
    """`after` cycles, then `signal` high for one cycle (a strobe: a CSR's write, a start, a stop)."""
    for _ in range(after):
        yield
    yield signal.eq(1)
    yield
    yield signal.eq(0)


def stuck(what):
    return AssertionError(f"{what} not done after {MAX_CYCLES} steps: the design is stuck")


def drive(endpoint, words, rng, valid_p, marks=None):
    """Send `words` one per handshake (with `marks[i]` = (first, last) when given), idle with probability
    1 - valid_p; each handshake bounded by MAX_CYCLES."""
    for i, word in enumerate(words):
        while rng.random() > valid_p:
            yield endpoint.valid.eq(0)
            yield
        yield endpoint.valid.eq(1)
        yield endpoint.data.eq(word)
        if marks is not None:
            yield endpoint.first.eq(marks[i][0])
            yield endpoint.last.eq(marks[i][1])
        yield
        for _ in range(MAX_CYCLES):
            if (yield endpoint.ready):
                break
            yield
        else:
            raise AssertionError(f"input stuck at word {i} of {len(words)}")
    yield endpoint.valid.eq(0)


def send(endpoint, packets, rng, valid_probability, stalls=None):
    """Drives `packets` (lists of (dat, be)) on `endpoint`, idle before a beat with probability
    1 - `valid_probability`; appends to `stalls` a 1 per cycle where valid waited on ready."""
    for packet in packets:
        for i, (dat, be) in enumerate(packet):
            while rng.random() > valid_probability:
                yield endpoint.valid.eq(0)
                yield
            yield endpoint.valid.eq(1)
            yield endpoint.first.eq(i == 0)
            yield endpoint.last.eq(i == len(packet) - 1)
            yield endpoint.dat.eq(dat)
            yield endpoint.be.eq(be)
            yield
            yield from wait_for(endpoint.ready, None if stalls is None else lambda: stalls.append(1))
    yield endpoint.valid.eq(0)


class Readiness:
    """A monitor's ready: high with probability `probability` until the output it expects is in, then high
    for DRAIN_CYCLES, then over. `next(expected_in)` gives each cycle's ready, None once over."""

    def __init__(self, rng, probability):
        self.rng, self.probability, self.drained = rng, probability, 0

    def next(self, expected_in):
        if not expected_in:
            return self.rng.random() < self.probability
        if self.drained == DRAIN_CYCLES:
            return None
        self.drained += 1
        return True


def monitor(endpoint, fields, done, rng, ready_probability, on_beat):
    """Takes beats from `endpoint` (ready with probability `ready_probability`) until `done()`, then for
    DRAIN_CYCLES more; `on_beat` is given each beat as a dict of `fields`."""
    readiness = Readiness(rng, ready_probability)
    for _ in range(MAX_CYCLES):
        ready = readiness.next(done())
        if ready is None:
            break
        yield endpoint.ready.eq(ready)
        yield
        if ready and (yield endpoint.valid):
            beat = {}
            for f in fields:
                beat[f] = (yield getattr(endpoint, f))
            on_beat(beat)


def sample(endpoint, cycles, rng, ready_probability, out):
    """`cycles` cycles of `endpoint` (ready with probability `ready_probability`): the data of each beat taken
    appended to `out`. No drain: for a test of what comes within a time, or while something else changes."""
    for _ in range(cycles):
        ready = rng.random() < ready_probability
        yield endpoint.ready.eq(ready)
        yield
        if ready and (yield endpoint.valid):
            out.append((yield endpoint.data))


def collect(endpoint, fields, count, rng, ready_probability, packets):
    """Receives `count` packets on `endpoint` (ready with probability `ready_probability`): for each, the
    list of beats as dicts of `fields` and first/last. Then stays ready for DRAIN_CYCLES and keeps whatever
    else comes, an unfinished packet too."""
    current = []

    def on_beat(beat):
        current.append(beat)
        if beat["last"]:
            packets.append(current[:])
            current.clear()

    yield from monitor(endpoint, fields + ["first", "last"], lambda: len(packets) >= count, rng, ready_probability,
                       on_beat)
    if current:
        packets.append(current)


class StreamBench:
    """A design with one input stream and one or more output streams, in migen's simulator, in the manner of
    corundum's testbench classes: `outputs` are named with their fields and the packets each must give;
    run(packets) drives the input (idle before a beat with probability 1 - `valid_probability`), collects
    every output (ready with probability `ready_probability`, then DRAIN_CYCLES more) and ends with the end
    check: each output gave exactly the packets expected of it, none missing, none extra, none cut short.

        bench = StreamBench(dut, dut.sink, valid_probability, ready_probability)
        bench.output("completions", dut.source, ["dat", "tag"], expected=len(packets))
        received = bench.run(packets)["completions"]
    """

    def __init__(self, dut, sink, valid_probability=1.0, ready_probability=1.0, seed=1):
        self.dut, self.sink, self.seed = dut, sink, seed
        self.valid_probability, self.ready_probability = valid_probability, ready_probability
        self.outputs = {}   # name: (endpoint, fields, expected)
        self.stalls  = []   # A 1 per cycle the input waited on ready.

    def output(self, name, endpoint, fields, expected):
        self.outputs[name] = (endpoint, fields, expected)

    def run(self, packets):
        received = {name: [] for name in self.outputs}
        generators = [send(self.sink, packets, random.Random(self.seed), self.valid_probability, self.stalls)]
        for k, (name, (endpoint, fields, expected)) in enumerate(self.outputs.items()):
            generators.append(collect(endpoint, fields, expected, random.Random(self.seed + 1 + k),
                                      self.ready_probability, received[name]))
        run_simulation(self.dut, generators)
        for name, (_, _, expected) in self.outputs.items():
            got, whole = received[name], [p for p in received[name] if p[-1]["last"]]
            assert len(got) == len(whole) == expected, \
                f"{name}: {len(packets)} packets in, {expected} expected out, {len(whole)} whole and " \
                f"{len(got) - len(whole)} cut short came out"
        return received
