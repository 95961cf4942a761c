# This file is part of hostlink.
# Copyright (c) 2026 hostlink developers
# SPDX-License-Identifier: BSD-2-Clause

"""The DMA fences (cores/pcie/fence.py, write_fence.py, read_fence.py) and the interrupt serializer
(irq_serializer.py) in migen's simulator.

Held events are released only once every request issued before them is done, in order, merged but never
lost, and soon; a writer's interrupt and loop status wait for its writes to be in the block, a reader's for
its reads to be delivered; the S7 hand-off point counts memory writes on `s_axis_tx` and nothing else. The
host-profile matrix checks the whole SoC on every board (test_pcie_host_profiles.py: the last MSI reaches
the host after the data it reports, and after the host has read the data of the reads it reports).
"""

import random

import pytest

from migen import *
from migen.sim import passive

from litex.soc.interconnect import stream
from litex.soc.interconnect.csr import CSRStatus, CSRField

from hostlink.cores.pcie.fence import COUNT_WIDTH, QUIET_CYCLES, HeldEvents, HeldPulses, take_csr_status
from hostlink.cores.pcie.read_fence import ReadFence
from hostlink.cores.pcie.write_fence import WriteFence

from benches.tlps import TlpType, first_dw

MASK = 2**COUNT_WIDTH - 1

# Held events --------------------------------------------------------------------------------------

class _HeldBench(Module):
    def __init__(self):
        self.issued = Signal(COUNT_WIDTH)
        self.taken  = Signal(COUNT_WIDTH)
        self.submodules.held = HeldEvents(self.issued, self.taken, value_width=16)

@pytest.mark.parametrize("seed", [1, 2, 3])
def test_held_events_wait_for_their_writes_keep_order_and_lose_none(seed):
    """Random events while writes are issued and taken (the counters wrap several times): each release comes
    only once `taken` has reached the target of the events it carries, releases keep the events' order,
    the last event is always released, and none waits long once its writes are in."""
    rng   = random.Random(seed)
    bench = _HeldBench()
    events, releases = [], []   # (cycle, value, target), (cycle, value, taken)
    cycles = 3000

    def stimulus():
        issued = taken = 0
        value  = 0
        for cycle in range(cycles):
            if rng.random() < 0.4:
                issued += 1
            outstanding = issued - taken
            if outstanding and rng.random() < 0.35:
                taken += rng.randint(1, outstanding)
            if cycle > cycles - 200:      # Quiet end: every write goes in.
                taken = issued
            yield bench.issued.eq(issued & MASK)
            yield bench.taken.eq(taken & MASK)
            event = cycle < cycles - 200 and rng.random() < 0.15
            if event:
                value += 1
            yield bench.held.event.eq(event)
            yield bench.held.value.eq(value)
            yield
            if event:
                events.append((cycle, value, issued))
            if (yield bench.held.release):
                releases.append((cycle, (yield bench.held.released_value), taken))

    run_simulation(bench, [stimulus()])
    assert events and releases
    values = [v for _, v, _ in releases]
    assert values == sorted(values) and len(set(values)) == len(values)
    assert values[-1] == events[-1][1]
    targets = {v: t for _, v, t in events}
    for _, value, taken in releases:
        # Every event up to this value had all its writes taken.
        assert all(taken >= targets[v] for v in targets if v <= value), (value, taken)
    assert len(releases) >= len(events)//4

def test_a_held_event_is_released_as_soon_as_its_writes_are_taken():
    bench = _HeldBench()
    trace = []

    def stimulus():
        yield bench.issued.eq(5)
        yield bench.taken.eq(2)
        yield bench.held.event.eq(1)
        yield bench.held.value.eq(7)
        yield
        yield bench.held.event.eq(0)
        for taken in [2, 3, 4, 5, 5]:
            yield bench.taken.eq(taken)
            yield
            trace.append((taken, (yield bench.held.release)))

    run_simulation(bench, [stimulus()])
    assert trace == [(2, 0), (3, 0), (4, 0), (5, 1), (5, 0)]

def test_counts_compare_across_the_wrap():
    """A target just below the wrap is reached by a count just above it."""
    bench = _HeldBench()
    seen = []

    def stimulus():
        yield bench.issued.eq(MASK)
        yield bench.taken.eq(MASK - 3)
        yield bench.held.event.eq(1)
        yield
        yield bench.held.event.eq(0)
        for taken in [MASK - 1, 0, 1]:
            yield bench.taken.eq(taken)
            yield
            seen.append((yield bench.held.release))

    run_simulation(bench, [stimulus()])
    assert seen == [0, 1, 0]

# Held pulses --------------------------------------------------------------------------------------

class _PulseBench(Module):
    def __init__(self, depth=8):
        self.issued = Signal(COUNT_WIDTH)
        self.taken  = Signal(COUNT_WIDTH)
        self.submodules.held = HeldPulses(self.issued, self.taken, depth=depth)

def _run_pulses(bench, steps):
    """`steps`: per cycle (issued, taken, event). Returns the cycles a pulse was released."""
    releases = []

    def stimulus():
        for cycle, (issued, taken, event) in enumerate(steps):
            yield bench.issued.eq(issued & MASK)
            yield bench.taken.eq(taken & MASK)
            yield bench.held.event.eq(event)
            yield
            if (yield bench.held.release):
                releases.append(cycle)

    run_simulation(bench, [stimulus()])
    return releases

@pytest.mark.parametrize("seed", [1, 2, 3])
def test_held_pulses_leave_one_for_one_in_order_each_after_its_requests(seed):
    """Interrupts a few per round trip (as descriptors come), requests taken in bursts: every pulse is
    released, one for one, in order, and each only once `taken` has reached its target."""
    rng = random.Random(seed)
    steps, targets = [], []
    issued = taken = 0
    for cycle in range(3000):
        if rng.random() < 0.4:
            issued += 1
        if issued > taken and rng.random() < 0.3:
            taken += rng.randint(1, issued - taken)
        if cycle > 2800:
            taken = issued
        event = cycle < 2800 and rng.random() < 0.02 and issued - taken < 200
        steps.append((issued, taken, event))
        if event:
            targets.append((cycle, issued))
    releases = _run_pulses(_PulseBench(), steps)
    assert len(releases) == len(targets), (len(releases), len(targets))
    for (event_cycle, target), released in zip(targets, releases):
        assert released >= event_cycle
        assert steps[released][1] >= target, (target, released)

def test_held_pulses_past_the_depth_merge_but_never_leave_early():
    """Twelve interrupts with nothing taken (depth 8): eight leave one for one, the last four as one, and that
    one only once the last interrupt's requests are taken."""
    steps = [(i + 1, 0, 1) for i in range(12)] + [(12, 0, 0)]*10
    steps += [(12, t, 0) for t in range(1, 13) for _ in range(3)] + [(12, 12, 0)]*20
    releases = _run_pulses(_PulseBench(depth=8), steps)
    assert len(releases) == 9, releases
    last_taken_cycle = next(c for c, (_, taken, _) in enumerate(steps) if taken == 12)
    assert releases[-1] >= last_taken_cycle, (releases, last_taken_cycle)


# Writer fence -------------------------------------------------------------------------------------

class _FakePHY:
    def __init__(self):
        self.write_taken        = Signal()
        self.write_taken_domain = "sys"

class _ChannelBench(Module):
    """One DMA channel fenced by `fence` through its `add` method (add_writer, add_reader): its request
    stream, interrupt, enable, table reset and a loop-status CSR shaped like LitePCIe's."""
    def __init__(self, fence, add):
        self.request = stream.Endpoint([("dat", 8)])
        self.irq     = Signal()
        self.index   = Signal(16)
        self.loop_status = CSRStatus(fields=[
            CSRField("index", size=16),
            CSRField("count", size=16),
        ])
        self.comb += self.loop_status.fields.index.eq(self.index)
        self.enable  = Signal(reset=1)
        self.table_reset = Signal()
        self.submodules.fence = fence
        self.fenced_irq = getattr(fence, add)(self.request, self.irq, self.loop_status, self.enable,
            self.table_reset)
        self.loop_status.finalize(8, "big")
        self.submodules += self.loop_status

class _WriterBench(_ChannelBench):
    def __init__(self):
        self.phy = _FakePHY()
        _ChannelBench.__init__(self, WriteFence(self.phy), "add_writer")

def test_a_writer_tells_of_a_buffer_only_once_its_writes_are_taken():
    """Three write requests, the third the buffer's last (interrupt, then the loop status moves on): the
    interrupt and the new status wait until the block has taken all three."""
    bench = _WriterBench()
    trace = []

    def stimulus():
        for beat in range(3):
            yield bench.request.valid.eq(1)
            yield bench.request.ready.eq(1)
            yield bench.request.last.eq(1)
            yield bench.irq.eq(beat == 2)
            yield
        yield bench.request.valid.eq(0)
        yield bench.irq.eq(0)
        yield bench.index.eq(1)
        for cycle in range(12):
            yield bench.phy.write_taken.eq(cycle in (3, 6, 9))
            yield
            trace.append(((yield bench.fenced_irq), (yield bench.loop_status.status)))

    run_simulation(bench, [stimulus()])
    irqs   = [cycle for cycle, (irq, _) in enumerate(trace) if irq]
    status = [s for _, s in trace]
    assert len(irqs) == 1 and irqs[0] >= 10, trace
    first_new = status.index(1)
    assert first_new >= 10 and all(s == 1 for s in status[first_new:]), trace

def test_a_write_the_block_never_takes_is_forgotten_once_every_writer_is_off_and_quiet():
    """A dropped write leaves the block one short: the buffer's interrupt waits. Once the writer is off and
    the block quiet for QUIET_CYCLES, the fence releases it and starts again from what was taken: the next
    buffer's interrupt follows its own writes, not one more."""
    bench = _WriterBench()
    marks = {}
    irqs  = []

    def stimulus():
        def issue(count):
            for beat in range(count):
                yield bench.request.valid.eq(1)
                yield bench.request.ready.eq(1)
                yield bench.request.last.eq(1)
                yield bench.irq.eq(beat == count - 1)
                yield
            yield bench.request.valid.eq(0)
            yield bench.irq.eq(0)

        def take(count):
            for _ in range(count):
                yield bench.phy.write_taken.eq(1)
                yield
            yield bench.phy.write_taken.eq(0)

        yield from issue(2)
        yield from take(1)                       # The second write is dropped.
        for _ in range(20):
            yield
        marks["held"] = ((yield bench.fence.issued), (yield bench.fence.taken))
        yield bench.enable.eq(0)
        for _ in range(QUIET_CYCLES + 10):
            yield
        marks["enabled"] = len(irqs_cycles)
        yield bench.enable.eq(1)
        yield from issue(2)
        for _ in range(10):
            yield
        marks["taking"] = len(irqs_cycles)
        yield from take(2)
        for _ in range(10):
            yield

    irqs_cycles = []

    @passive
    def monitor():
        while True:
            irqs_cycles.append((yield bench.fenced_irq))
            yield

    run_simulation(bench, [stimulus(), monitor()])
    released = [cycle for cycle, irq in enumerate(irqs_cycles) if irq]
    assert marks["held"] == (2, 1)
    assert len(released) == 2, released
    assert QUIET_CYCLES < released[0] < marks["enabled"]
    assert released[1] > marks["taking"] + 1


# Read fence ---------------------------------------------------------------------------------------

class _FakeController:
    def __init__(self):
        self.read_delivered = Signal()

class _ReaderBench(_ChannelBench):
    def __init__(self):
        self.controller = _FakeController()
        _ChannelBench.__init__(self, ReadFence(self.controller), "add_reader")

def _run_reader(requests, irq_at, index_at, delivered_at, cycles):
    """Drives `requests` read requests from cycle 0 (one a cycle), the interrupt with request `irq_at`, the
    loop-status index to 1 at cycle `index_at`, and a delivery at each cycle of `delivered_at`. Returns the
    cycles the fenced interrupt pulsed and the loop status seen each cycle."""
    bench = _ReaderBench()
    trace = []

    def stimulus():
        for cycle in range(cycles):
            issue = cycle < requests
            yield bench.request.valid.eq(issue)
            yield bench.request.ready.eq(1)
            yield bench.request.last.eq(1)
            yield bench.irq.eq(issue and cycle == irq_at)
            yield bench.index.eq(int(cycle >= index_at))
            yield bench.controller.read_delivered.eq(cycle in delivered_at)
            yield
            trace.append(((yield bench.fenced_irq), (yield bench.loop_status.status)))

    run_simulation(bench, [stimulus()])
    return [c for c, (irq, _) in enumerate(trace) if irq], [s for _, s in trace]

def test_a_reader_tells_of_a_buffer_only_once_its_reads_are_delivered():
    """Three read requests, the third the buffer's last (interrupt, then the loop status moves on): the
    interrupt and the new status wait until the controller has delivered all three reads."""
    irqs, status = _run_reader(requests=3, irq_at=2, index_at=3, delivered_at=(20, 40, 60), cycles=80)
    assert len(irqs) == 1 and irqs[0] >= 60, irqs
    first_new = status.index(1)
    assert first_new >= 60 and all(s == 1 for s in status[first_new:]), status

def test_reads_issued_after_a_buffer_do_not_hold_its_interrupt():
    """The buffer's interrupt comes with its second read; a third read (the next buffer's) is issued after:
    two deliveries release the interrupt while the third read is still outstanding."""
    irqs, _ = _run_reader(requests=3, irq_at=1, index_at=100, delivered_at=(20, 40), cycles=80)
    assert len(irqs) == 1 and 40 <= irqs[0] < 45, irqs

def test_a_reader_interrupt_waits_for_earlier_reads_of_other_readers():
    """Reads are delivered in request order, whatever their channel: a reader's interrupt waits for every read
    issued before it, another reader's included (a second reader's requests here)."""
    bench = _ReaderBench()
    other_request = stream.Endpoint([("dat", 8)])
    other_status  = CSRStatus(fields=[CSRField("index", size=16)])
    bench.fence.add_reader(other_request, Signal(), other_status, Signal(reset=1))
    other_status.finalize(8, "big")
    bench.submodules += other_status
    trace = []

    def stimulus():
        for cycle in range(60):
            yield other_request.valid.eq(cycle < 4)      # 4 reads of the other reader first...
            yield other_request.ready.eq(1)
            yield other_request.last.eq(1)
            yield bench.request.valid.eq(cycle == 4)     # ...then this reader's one read, its buffer's last.
            yield bench.request.ready.eq(1)
            yield bench.request.last.eq(1)
            yield bench.irq.eq(cycle == 4)
            yield bench.controller.read_delivered.eq(cycle in (10, 20, 30, 40, 50))
            yield
            trace.append((yield bench.fenced_irq))

    run_simulation(bench, [stimulus()])
    irqs = [c for c, irq in enumerate(trace) if irq]
    assert len(irqs) == 1 and irqs[0] >= 50, irqs

def test_a_table_reset_shows_the_zeroed_loop_status_at_once_and_drops_what_was_held():
    """A reader's loop status reaches 3 (its two reads delivered), then moves to 5 with two more reads
    outstanding (held), then its table is reset (the driver restarting the channel): the status reads 0 two
    cycles later, not after the reads, and the held 5 is never shown, even once the reads are delivered."""
    bench = _ReaderBench()
    trace = []

    def stimulus():
        for cycle in range(60):
            yield bench.request.valid.eq(cycle in (0, 1, 12, 13))
            yield bench.request.ready.eq(1)
            yield bench.request.last.eq(1)
            # LitePCIe zeroes the loop status the cycle after the reset.
            yield bench.index.eq(3 if 3 <= cycle < 15 else 5 if 15 <= cycle < 21 else 0)
            yield bench.table_reset.eq(cycle == 20)
            yield bench.controller.read_delivered.eq(cycle in (6, 7, 30, 40))
            yield
            trace.append((yield bench.loop_status.status))

    run_simulation(bench, [stimulus()])
    assert 3 in trace[:20], trace
    assert 5 not in trace, trace
    assert all(s == 0 for s in trace[23:]), trace


class _FakePort:
    def __init__(self, channel, write_only=False, read_only=False):
        self.channel, self.write_only, self.read_only = channel, write_only, read_only

class _FakeCrossbar:
    def __init__(self, ports):
        self.user_masters = ports

def _fence_on(ports, fenced):
    fence = ReadFence(_FakeController(), _FakeCrossbar(ports))
    for channel in fenced:
        status = CSRStatus(fields=[CSRField("index", size=16)], name=f"status{channel}")
        fence.add_reader(stream.Endpoint([("dat", 8)]), Signal(), status,
            Signal(reset=1), channel=channel)
    return fence

def test_a_crossbar_port_that_reads_must_be_a_fenced_reader():
    """Its reads would count as delivered without having been counted as issued, and release events early:
    the SoC refuses to build. Write-only ports need no fence."""
    ports = [_FakePort(0, read_only=True), _FakePort(1, write_only=True)]
    _fence_on(ports, fenced=[0]).finalize()
    with pytest.raises(ValueError, match="PCIe crossbar port 2 reads but is not a fenced DMA reader"):
        _fence_on(ports + [_FakePort(2)], fenced=[0]).finalize()


def test_the_loop_status_csr_must_be_driven_by_fields():
    with pytest.raises(RuntimeError, match="no fields driving its status"):
        take_csr_status(CSRStatus(32, name="status"))

# S7 hand-off point --------------------------------------------------------------------------------

class _S7TX:
    def __init__(self, data_width):
        self.source = stream.Endpoint([("dat", data_width), ("be", data_width//8)])

class _S7PHY:
    def __init__(self, data_width):
        self.tx_datapath = _S7TX(data_width)

def _tlp_beats(dw0, dwords, data_width):
    """Beats (dat, last) of a TLP of `dwords` DWORDs whose first DWORD is `dw0`."""
    per_beat = data_width // 32
    words = [dw0] + [0xdead0000 + i for i in range(1, dwords)]
    beats = []
    for start in range(0, len(words), per_beat):
        dat = 0
        for i, w in enumerate(words[start:start + per_beat]):
            dat |= w << (32*i)
        beats.append((dat, start + per_beat >= len(words)))
    return beats

MWR32 = first_dw(TlpType.MEM_WRITE, 64)      # 3-DWORD header.
MWR64 = first_dw(TlpType.MEM_WRITE_64, 64)   # 4-DWORD header.
MRD32 = first_dw(TlpType.MEM_READ, 128)
CPLD  = first_dw(TlpType.CPL_DATA, 1)
# A completion whose payload's first DWORD looks like a memory write must not count: only first beats do.
TLPS = [(MWR32, 3 + 64), (MRD32, 3), (CPLD, 3 + 1), (MWR64, 4 + 1), (CPLD, 3 + 8), (MWR32, 3 + 1)]

@pytest.mark.parametrize("data_width", [64, 128])
def test_s7_handoff_counts_memory_writes_only(data_width):
    rng   = random.Random(data_width)
    phy   = _S7PHY(data_width)
    fence = WriteFence(phy)
    tx    = phy.tx_datapath.source
    beats = [b for dw0, n in TLPS for b in _tlp_beats(dw0, n, data_width)]
    # A DWORD 0 of a memory write inside a completion's payload, at a beat boundary.
    beats += _tlp_beats(CPLD, 3 + 2*data_width//32, data_width)
    beats[-1] = (beats[-1][0] & ~0xffffffff | MWR32, True)
    taken = []

    def stimulus():
        for dat, last in beats:
            yield tx.valid.eq(1)
            yield tx.dat.eq(dat)
            yield tx.last.eq(last)
            while True:
                ready = rng.random() < 0.7
                yield tx.ready.eq(ready)
                yield
                if ready:
                    break
            yield tx.valid.eq(0)
            if rng.random() < 0.3:
                yield
        yield tx.ready.eq(0)
        for _ in range(8):
            yield
        taken.append((yield fence.taken))

    run_simulation(fence, [stimulus()], clocks={"sys": 10, "pcie": 8})
    assert taken == [3]

# Interrupt serializer -----------------------------------------------------------------------------

def test_interrupts_of_one_cycle_leave_one_per_cycle_lowest_first():
    from hostlink.cores.pcie.irq_serializer import IRQSerializer
    dut = IRQSerializer(4)
    out = []

    def stimulus():
        for irqs in [0b1011, 0, 0b0100, 0, 0, 0, 0]:
            yield dut.irqs_in.eq(irqs)
            yield
            out.append((yield dut.irqs_out))

    run_simulation(dut, [stimulus()])
    # Each cycle's output is read after the edge: the input then is the next cycle's.
    assert [o for o in out if o] == [0b0001, 0b0010, 0b0100, 0b1000]
    assert all(bin(o).count("1") <= 1 for o in out)
