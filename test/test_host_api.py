# This file is part of hostlink.
# Copyright (c) 2026 hostlink developers
# SPDX-License-Identifier: BSD-2-Clause

"""A program's side (hostlink.host) and the driver's flow modes (software/driver/flow.py).

Quick: the flow changes are in the generated driver, give no register write beyond the flow gate's own
and stop generation when LitePCIe's sources lose an anchor; hostlink.host's errors say what to do; it
imports with a Python that has none of the project's packages.
`uml`: in User-Mode Linux on the simulated ZC706 and VC709, the example accelerator's Python program
(setup as root, the stream as a member of the device's group), every result checked; a program that
stops reading for three ring-fills loses nothing in lossless flow and loses data in LitePCIe's loop mode;
on the ZC706, in real-time flow from the example source, each buffer's header says exactly what was
dropped before it (the framing itself on every board: test_flow_sim.py).
"""

import json
import os
import re
import shutil
import subprocess
import threading

import pytest

from helpers import (check_missing_anchor_is_refused, check_patched, generate_zc706_driver, ioctl_case, read,
    refusal)

from hostlink import REPO
from hostlink.protocol import HEADER, HEADER_MAGIC
from hostlink.sim.uml.kernel import UML_KERNEL
from hostlink.sim.uml.run import sim_dma_ring
from hostlink.software.driver import (flow as driver_flow, removal as driver_removal, stats as driver_stats,
    wait as driver_wait)
from hostlink.software.driver.flow import add_flow
from hostlink.software.driver.hardening import harden_driver
from hostlink.software.driver.kernels import port_driver
from hostlink.software.driver.polling import add_polling



# Driver -------------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def generated(tmp_path_factory):
    return generate_zc706_driver(tmp_path_factory)


def test_generated_driver_has_the_flow_modes(generated):
    """Every flow change is in the driver; DMA_FLOW only sets the lock holder's modes, and the writer's in
    its gate at once (a gated writer holds what reaches it while stopped: nothing else is written); the
    driver writes the flow gate's registers only (mode, size, given), and the offsets match the SoC on every
    channel."""
    kernel = os.path.join(generated, "kernel")
    main_c = check_patched(kernel, driver_flow.FLOW_PATCHES)
    case = ioctl_case(main_c, "LITEPCIE_IOCTL_DMA_FLOW", "LITEPCIE_IOCTL_MMAP_DMA_WRITER_UPDATE")
    assert "litepcie_readl" not in case and case.count("litepcie_writel") == 1
    writer = case[case.index("if (chan_priv->writer) {"):case.index("if (chan_priv->reader)\n\t\t\tchan->dma.reader")]
    assert "chan->dma.writer_flow = m.writer;" in writer
    assert "litepcie_writel(dev, chan->dma.base + PCIE_DMA_WRITER_FLOW_MODE_OFFSET, m.writer);" in writer
    assert "if (chan_priv->reader)\n\t\t\tchan->dma.reader_flow = m.reader;" in case
    assert case.count("chan->dma.writer_flow = ") == case.count("chan->dma.reader_flow = ") == 1
    # The stats ioctl (software/driver/stats.py) reads the gate's counts, writes nothing.
    stats = ioctl_case(main_c, "LITEPCIE_IOCTL_STATS", "LITEPCIE_IOCTL_DMA_FLOW")
    assert "litepcie_writel" not in stats and "hostlink_writer_refresh(dev, chan)" in stats
    flow_writes = set(re.findall(r"PCIE_DMA_(\w+_FLOW_\w+)_OFFSET", main_c.replace(stats, "")))
    assert flow_writes == {"WRITER_FLOW_MODE", "WRITER_FLOW_BUFFER_BYTES", "WRITER_FLOW_GIVEN",
                           "READER_FLOW_MODE", "READER_FLOW_GIVEN", "WRITER_FLOW_DONE", "READER_FLOW_DONE"}
    config = read(os.path.join(kernel, "config.h"))
    assert re.search(r"#define PCIE_DMA_WRITER_FLOW_GIVEN_OFFSET\s+0x006c", config)
    # Register writes through REG still need CAP_SYS_RAWIO: a group member gains nothing.
    assert "if (m.is_write && !capable(CAP_SYS_RAWIO))" in main_c


@pytest.mark.parametrize("index", range(len(driver_flow.FLOW_PATCHES)))
def test_flow_refuses_when_an_anchor_is_missing(tmp_path, index):
    check_missing_anchor_is_refused(tmp_path, driver_flow.FLOW_PATCHES[index], add_flow, "flow change",
                                    (harden_driver, port_driver, add_polling))


def test_generated_driver_has_the_stats_ioctl(generated):
    """Every stats change is in the driver; the ioctl only reads (any opener may call it). Its number and
    layout: test_protocol.py."""
    kernel = os.path.join(generated, "kernel")
    main_c = check_patched(kernel, driver_stats.STATS_PATCHES)
    case = ioctl_case(main_c, "LITEPCIE_IOCTL_STATS", "LITEPCIE_IOCTL_DMA_FLOW")
    assert "litepcie_writel" not in case and "chan_priv->" not in case
    assert set(re.findall(r"PCIE_DMA_(\w+_FLOW_\w+)_OFFSET", case)) == \
        {f"{d}_FLOW_{r}" for d in ("WRITER", "READER") for r in ("GIVEN", "STARTED", "DONE", "WAITS")}


@pytest.mark.parametrize("index", range(len(driver_stats.STATS_PATCHES)))
def test_stats_refuse_when_an_anchor_is_missing(tmp_path, index):
    check_missing_anchor_is_refused(tmp_path, driver_stats.STATS_PATCHES[index], driver_stats.add_stats,
                                    "stats change", (harden_driver, port_driver, add_polling, add_flow))


def test_generated_driver_survives_a_board_removed_under_its_programs(generated):
    """Every removal change is in the driver (software/driver/removal.py): each call checks the board is still
    there, sleepers wake on its removal, and the removal waits for the last close before the board's state
    is freed; each device node has its board as parent (list_boards())."""
    main_c = check_patched(os.path.join(generated, "kernel"), driver_removal.PATCHES)
    for function in ["litepcie_read", "litepcie_write", "litepcie_mmap", "litepcie_ioctl"]:
        body = main_c[main_c.index(f"\n{function}(") if f"\n{function}(" in main_c else main_c.index(f" {function}("):]
        body = body[:body.index("\n}\n")]
        assert "READ_ONCE(" in body and "->gone)" in body and "return -ENODEV;" in body, function
    remove = main_c[main_c.index("static void litepcie_pci_remove("):]
    remove = remove[:remove.index("\n}\n")]
    assert remove.index("WRITE_ONCE(litepcie_dev->gone, true)") < remove.index("litepcie_stop_dma(") < \
        remove.index("litepcie_free_chdev(") < remove.index("wait_event_timeout(litepcie_dev->users_gone")
    assert "device_create(litepcie_class, &s->dev->dev," in main_c


@pytest.mark.parametrize("index", range(len(driver_removal.PATCHES)))
def test_removal_refuses_when_an_anchor_is_missing(tmp_path, index):
    from hostlink.software.driver.mmap import fix_mmap
    check_missing_anchor_is_refused(tmp_path, driver_removal.PATCHES[index], driver_removal.add_removal,
        "removal change", (harden_driver, fix_mmap, port_driver, add_polling, add_flow, driver_stats.add_stats))

def test_generated_driver_waits_by_interrupt(generated):
    """Every wait change is in the driver (software/driver/wait.py): a polled direction's descriptors each
    raise the DMA's interrupt, its MSI is enabled only around a DMA_WAIT sleep (on before the first look at
    the counts, off after), the MSI handler only wakes a polled direction's waiter (its counts are the
    flow gate's). The ioctls' numbers and layouts: test_protocol.py."""
    kernel = os.path.join(generated, "kernel")
    main_c = check_patched(kernel, driver_wait.WAIT_PATCHES)
    for direction in ("writer", "reader"):
        assert f"(!(i%DMA_BUFFER_PER_IRQ == 0) && !dmachan->{direction}_poll) * DMA_IRQ_DISABLE" in main_c
        handler = main_c[main_c.index(f"if ((irq_vector & (1 << chan->dma.{direction}_interrupt)) && "
                                      f"chan->dma.{direction}_poll) {{"):]
        handler = handler[:handler.index("} else if")]
        assert "_hw_count" not in handler and "wake_up_interruptible(&chan->wait_rd);" in handler
    case = ioctl_case(main_c, "LITEPCIE_IOCTL_DMA_WAIT", "LITEPCIE_IOCTL_LOCK")
    assert case.index("hostlink_wait_msi(dev, chan, &m, true);") < case.index("wait_event_interruptible_timeout(") \
        < case.index("hostlink_wait_msi(dev, chan, &m, false);")
    assert "(m.writer && !chan_priv->writer) || (m.reader && !chan_priv->reader)" in case
    # Cancel (a program's other thread) and signals: the wait ends at once while the file's cancel count
    # differs from the caller's; a signal whose handler runs ends it with EINTR, even under SA_RESTART.
    assert "if (READ_ONCE(chan_priv->cancel) != m->cancel) {\n\t\t*err = -ECANCELED;" in main_c
    assert "ret = -ERESTARTNOHAND;" in case and "ERESTARTSYS" not in case
    # poll(): a polled direction is armed before its count is read, disarmed once ready; LitePCIe's own
    # readiness kept for its directions.
    poll = main_c[main_c.index("static unsigned int litepcie_poll("):]
    poll = poll[:poll.index("\n}\n")]
    for direction in ("writer", "reader"):
        arm = f"hostlink_poll_arm(chan->litepcie_dev, chan, {'true' if direction == 'writer' else 'false'}, true);"
        assert poll.index(arm) < poll.index(f"hostlink_{direction}_refresh(chan->litepcie_dev, chan)"), poll
    assert "} else if ((chan->dma.writer_hw_count - chan->dma.writer_sw_count) > 2)" in poll
    cancel = ioctl_case(main_c, "LITEPCIE_IOCTL_DMA_CANCEL", "LITEPCIE_IOCTL_LOCK")
    assert "WRITE_ONCE(chan_priv->cancel, count);" in cancel and "wake_up_interruptible(&chan->wait_rd);" in cancel


def test_generated_driver_takes_only_boards_of_its_soc(generated, tmp_path):
    """The probe compares the board's SoC identifier with the one the driver was generated for, without
    LiteX's build time, and refuses another SoC's board (ENODEV, one line that says which driver to load)."""
    from hostlink.software.driver import soc_identifier
    kernel = os.path.join(generated, "kernel")
    config = read(os.path.join(kernel, "config.h"))
    assert '#define HOSTLINK_SOC_IDENTIFIER "hostlink ZC706 PCIe Gen2 x4 DMA SoC"\n' in config
    main_c = read(os.path.join(kernel, "main.c"))
    probe = main_c[main_c.index('dev_info(&dev->dev, "Version %s\\n", fpga_identifier);'):]
    check = probe[:probe.index("pci_set_master(dev);")]
    assert "strncmp(fpga_identifier, HOSTLINK_SOC_IDENTIFIER" in check and "ret = -ENODEV;" in check
    assert check.index("ret = -ENODEV;") < check.index("goto fail1;")
    # The build time is left out; an identifier without it (--no-ident-version) is kept whole.
    soc_h = tmp_path / "soc.h"
    soc_h.write_text('#define CONFIG_IDENTIFIER "my SoC 2026-11-29 10:00:00"\n')
    assert soc_identifier(str(tmp_path)) == '"my SoC"'
    soc_h.write_text('#define CONFIG_BIOS_NO_BUILD_TIME\n#define CONFIG_IDENTIFIER "my SoC 2026-11-29 10:00:00"\n')
    assert soc_identifier(str(tmp_path)) == '"my SoC 2026-11-29 10:00:00"'
    soc_h.write_text("#define CONFIG_CLOCK_FREQUENCY 125000000\n")
    with pytest.raises(ValueError, match="no CONFIG_IDENTIFIER"):
        soc_identifier(str(tmp_path))


@pytest.mark.parametrize("index", range(len(driver_wait.WAIT_PATCHES)))
def test_wait_refuses_when_an_anchor_is_missing(tmp_path, index):
    from hostlink.software.driver.mmap import fix_mmap
    check_missing_anchor_is_refused(tmp_path, driver_wait.WAIT_PATCHES[index], driver_wait.add_wait, "wait change",
        (harden_driver, fix_mmap, port_driver, add_polling, add_flow, driver_stats.add_stats,
         driver_removal.add_removal))

# hostlink.host ------------------------------------------------------------------------------------

def test_the_api_imports_with_a_bare_python(tmp_path):
    """A program of the user's, run by the system's Python (no virtualenv, no LiteX), imports it."""
    program = tmp_path / "program.py"
    program.write_text(f"import sys; sys.path.insert(0, {REPO!r})\n"
                       "import hostlink.host as h\nprint(h.list_devices(), sys.prefix)\n")
    result = subprocess.run(["/usr/bin/python3", str(program)], capture_output=True, text=True,
                            env={"PATH": "/usr/bin:/bin"})
    assert result.returncode == 0, result.stderr
    assert result.stdout.split()[-1] == "/usr"
    # A machine with the package and no virtualenv at all, `python3 -c` too.
    shutil.copytree(os.path.join(REPO, "hostlink"), tmp_path / "bare" / "hostlink",
                    ignore=shutil.ignore_patterns("__pycache__"), symlinks=True)
    result = subprocess.run(["/usr/bin/python3", "-c", "import hostlink.host as h; print(h.FLOWS['lossless'])"],
                            capture_output=True, text=True, cwd=tmp_path / "bare", env={"PATH": "/usr/bin:/bin"})
    assert (result.returncode, result.stdout.strip()) == (0, "1"), result.stderr
    # `python3 host.py` lists the boards: run as a script, with hostlink.protocol beside it as its only import.
    result = subprocess.run(["/usr/bin/python3", str(tmp_path / "bare" / "hostlink" / "host.py")],
                            capture_output=True, text=True, cwd=tmp_path, env={"PATH": "/usr/bin:/bin"})
    assert (result.returncode, result.stdout.strip(), result.stderr) == \
        (1, "no /dev/litepcie* nor any hostlink driver's nodes: is the board there and its driver loaded?", "")


def test_errors_say_what_to_do():
    from hostlink.host import Channel, HostlinkError, Buffer
    with pytest.raises(HostlinkError) as error:
        Channel("/dev/litepcie99")
    assert error.value.errno == 19 and "is the board there and litepcie.ko loaded?" in str(error.value)
    with pytest.raises(ValueError, match="flow must be one of loop, lossless, realtime"):
        Channel(0, flow="fast")
    with pytest.raises(ValueError, match="realtime flow is FPGA to host"):
        Channel(0, flow="realtime")
    with pytest.raises(HostlinkError, match="is the board there"):   # Packets flow goes both ways.
        Channel("/dev/litepcie_none", flow="packets")
    with pytest.raises(HostlinkError, match="without hostlink's header"):
        Buffer(bytes(64))
    header = HEADER.pack(HEADER_MAGIC, 7, 1234, 64, 32, 0) + bytes(range(32))
    buffer = Buffer(header)
    assert (buffer.sequence, buffer.time, buffer.dropped, buffer.data, buffer.ended) == \
        (7, 1234, 64, bytes(range(32)), False)


def _framed(sequence, data, ended, dropped=0, size=128):
    raw = HEADER.pack(HEADER_MAGIC, sequence, 0, dropped, len(data), int(ended)) + data
    return raw + bytes(size - len(raw))


def test_list_boards_skips_a_node_whose_board_was_removed_meanwhile(monkeypatch, tmp_path):
    from hostlink import host
    present = tmp_path / "litepcie0"
    present.touch()
    monkeypatch.setattr(host, "list_devices", lambda: [str(present), str(tmp_path / "litepcie1")])
    # A plain file is not a node of hostlink's driver: its board is None, as with LitePCIe's own driver.
    assert host.list_boards() == {None: [str(present)]}


def test_read_packets_joins_buffers_up_to_each_end():
    """Packets flow: a packet over two buffers, one in a buffer, the padding after a packet's end not
    returned; a drop within a packet (real-time flow) is an error, not a silently shorter packet."""
    from hostlink.host import Buffer, Channel, HostlinkError
    raw = [_framed(0, b"a" * 96, False), _framed(1, b"b" * 10, True), _framed(2, b"c" * 40, True),
           _framed(3, b"d" * 96, False), _framed(4, b"e" * 8, True, dropped=64)]
    channel = Channel.__new__(Channel)
    channel.fd, channel.flow, channel.path = -1, "packets", "/dev/litepcie0"
    channel._calls = {"h2c": threading.RLock(), "c2h": threading.RLock()}
    channel.read_buffers = lambda count: [Buffer(raw.pop(0)) for _ in range(count)]
    assert channel.read_packets(2) == [b"a" * 96 + b"b" * 10, b"c" * 40]
    with pytest.raises(HostlinkError, match="64 bytes dropped within a packet"):
        channel.read_packets(1)
    channel.fd = None   # Nothing to close.


class _FakeDriver:
    """A driver that answers hostlink.host's ioctls from memory (a ring of `count` x `size`, every lock granted,
    the DMA never moving), over a plain file that records what the library write()s to it."""
    def __init__(self, tmp_path, size=4096, count=8):
        self.node, self.size, self.count, self.calls = str(tmp_path / "litepcie0"), size, count, []
        open(self.node, "wb").close()

    def ioctl(self, fd, request, argument=0, mutate=True):
        from hostlink.protocol import IOCTLS
        name = next(n for n, i in IOCTLS.items() if i.request == request)
        self.calls.append(name)
        layout = IOCTLS[name].layout
        if name == "MMAP_DMA_INFO":
            argument[:] = layout.pack(0, self.size, self.count, 0, self.size, self.count)
        elif name == "LOCK":
            fields = list(layout.unpack(argument))
            fields[4:6] = fields[0:2]   # Status: what was asked for.
            argument[:] = layout.pack(*fields)
        return 0 if isinstance(argument, bytearray) else argument

    def sent(self):
        """The bytes the library wrote into the driver's ring."""
        with open(self.node, "rb") as f:
            return f.read()


@pytest.fixture
def fake(tmp_path, monkeypatch):
    import fcntl
    driver = _FakeDriver(tmp_path)
    monkeypatch.setattr(fcntl, "ioctl", driver.ioctl)
    return driver


def _refused(call, code, *words):
    from hostlink.host import HostlinkError
    with pytest.raises(HostlinkError) as error:
        call()
    assert error.value.errno == code and all(w in str(error.value) for w in words), (error.value, words)
    return error.value


def test_a_channel_used_after_close_says_so_on_every_call(fake):
    """Each call on a closed channel raises one HostlinkError EBADF that says so (not a TypeError, not a
    silent return, not another error first); a second close() does nothing, as a file's does."""
    import errno
    from hostlink.host import Channel
    channel = Channel(fake.node, registers=None)
    channel.close()
    one = bytes(4096)
    for call in [lambda: channel.write(one), lambda: channel.read(4096), lambda: channel.read_into(bytearray(4096)),
                 lambda: channel.transfer(one), lambda: channel.drain(), lambda: channel.get_buffers("c2h"),
                 lambda: channel.put_buffers("h2c"), lambda: channel.wait(), lambda: channel.start(),
                 lambda: channel.cancel(), lambda: channel.fileno(), lambda: channel.register("ctrl_scratch"),
                 lambda: channel.register_word("ctrl_scratch", 0, 1), lambda: channel.cycles(),
                 lambda: channel.counts(), lambda: channel.stats(), lambda: channel.read_buffers(1),
                 lambda: channel.read_packets(1)]:
        _refused(call, errno.EBADF, "closed")
    channel.close()
    assert fake.sent() == b""


def test_bad_sizes_and_counts_are_refused_before_anything_moves(fake):
    """A size that is not whole buffers, a count that is not a positive whole number, a direction or flow that
    cannot carry the call: one HostlinkError EINVAL each, raised before the library writes a byte, starts a
    DMA or gives a buffer back (what the channel already took is not touched)."""
    import errno
    from hostlink.host import Channel
    channel = Channel(fake.node)
    size = channel.buffer_size
    assert (size, channel.buffer_count) == (4096, 8)
    before = list(fake.calls)
    for call, words in [
            (lambda: channel.write(bytes(100)), ["whole 4096-byte buffers", "100 bytes"]),
            (lambda: channel.write(bytes(size + 1)), ["whole 4096-byte buffers"]),
            (lambda: channel.write(b""), ["nothing to send or receive"]),
            (lambda: channel.read(0), ["nothing to send or receive"]),
            (lambda: channel.read(size // 2), ["whole 4096-byte buffers"]),
            (lambda: channel.read_into(bytearray(size + 8)), ["whole 4096-byte buffers"]),
            (lambda: channel.transfer(bytes(size), results=size // 2), ["reading moves whole"]),
            (lambda: channel.transfer(bytes(size), into=bytes(size)), ["must be writable"]),
            (lambda: channel.transfer(bytes(size), results=size, into=bytearray(2 * size)), ["holds 8192 bytes"]),
            (lambda: channel.get_buffers("h2c", 0), ["positive number of buffers"]),
            (lambda: channel.get_buffers("h2c", 1.5), ["positive number of buffers"]),
            (lambda: channel.get_buffers("sideways"), ["'h2c' or 'c2h'"]),
            (lambda: channel.put_buffers("h2c", 1), ["0 got and not yet put"]),
            (lambda: channel.put_buffers("h2c", -1), ["0 got and not yet put"]),
            (lambda: channel.put_buffers("h2c", 0.5), ["number of buffers"]),
            (lambda: channel.wait("sideways"), ["'h2c' or 'c2h'"]),
            (lambda: channel.read_buffers(1), ["realtime and packets flows only", "lossless"]),
            (lambda: channel.read_packets(1), ["realtime and packets flows only"])]:
        _refused(call, errno.EINVAL, *words)
    assert fake.sent() == b"" and fake.calls == before, fake.calls[len(before):]
    channel.close()
    # A real-time channel carries FPGA to host only: refused when opened, and a write on its c2h is refused.
    with pytest.raises(ValueError, match="realtime flow is FPGA to host"):
        Channel(fake.node, flow="realtime", directions=("h2c", "c2h"))
    with Channel(fake.node, flow="realtime", directions="c2h") as source:
        _refused(lambda: source.write(bytes(size)), errno.EINVAL, "opened for c2h only")
        _refused(lambda: source.read_buffers(0), errno.EINVAL, "positive number of buffers")
    assert fake.sent() == b""


_LIBRARY_REFUSALS = r"""
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "hostlink.h"

static int failed;

static void expect(const char *what, long ret, int code, const char *words)
{
	const char *message = hostlink_error(NULL);
	int ok = ret == -code && strstr(message, words);
	printf("%s: %s: %ld %s\n", ok ? "ok" : "FAIL", what, ret, message);
	failed |= !ok;
}

int main(void)
{
	struct hostlink_channel *ch = (struct hostlink_channel *)&failed, *closed;
	static unsigned char data[8192];
	struct hostlink_buffer_info info;
	struct hostlink_counts counts;
	struct hostlink_stats stats;
	uint64_t cycles;
	uint32_t value;
	void *first;

	/* Arguments refused before the device is opened (none here). */
	expect("a flow that does not exist", hostlink_open_path(&ch, "/dev/null", 9, HOSTLINK_C2H, 100), EINVAL,
	       "flow must be HOSTLINK_FLOW_LOOP");
	printf("%s: a failed open leaves NULL\n", ch == NULL ? "ok" : "FAIL");
	failed |= ch != NULL;
	expect("no direction", hostlink_open_path(&ch, "/dev/null", HOSTLINK_FLOW_LOSSLESS, 0, 100), EINVAL,
	       "directions are HOSTLINK_H2C and/or HOSTLINK_C2H, not 0");
	expect("a direction that does not exist", hostlink_open_path(&ch, "/dev/null", HOSTLINK_FLOW_LOSSLESS, 8, 100),
	       EINVAL, "not 8");
	expect("h2c in real-time flow", hostlink_open_path(&ch, "/dev/null", HOSTLINK_FLOW_REALTIME,
	       HOSTLINK_H2C | HOSTLINK_C2H, 100), EINVAL, "real-time flow is FPGA to host");
	expect("a timeout of -1 ms", hostlink_open_path(&ch, "/dev/null", HOSTLINK_FLOW_LOSSLESS, HOSTLINK_C2H, -1),
	       EINVAL, "positive number of milliseconds");

	/* A handle that is not open (closed: its memory freed; here one never opened): every call says so. */
	closed = (struct hostlink_channel *)data;
	expect("start", hostlink_start(closed, HOSTLINK_C2H), EBADF, "not an open channel");
	expect("write", hostlink_write(closed, data, 4096), EBADF, "not an open channel");
	expect("write_packet", hostlink_write_packet(closed, data, 10, 1), EBADF, "not an open channel");
	expect("read", hostlink_read(closed, data, 4096), EBADF, "not an open channel");
	expect("transfer", hostlink_transfer(closed, data, 4096, data, 4096), EBADF, "not an open channel");
	expect("wait", hostlink_wait(closed, HOSTLINK_C2H, 0), EBADF, "not an open channel");
	expect("get_buffers", hostlink_get_buffers(closed, HOSTLINK_C2H, &first, 1, 0), EBADF, "not an open channel");
	expect("put_buffers", hostlink_put_buffers(closed, HOSTLINK_C2H, 1), EBADF, "not an open channel");
	expect("read_buffer", hostlink_read_buffer(closed, data, sizeof(data), &info), EBADF, "not an open channel");
	expect("read_packet", hostlink_read_packet(closed, data, sizeof(data)), EBADF, "not an open channel");
	expect("register_read", hostlink_register_read(closed, "ctrl_scratch", &value), EBADF, "not an open channel");
	expect("register_write", hostlink_register_write(closed, "ctrl_scratch", 1), EBADF, "not an open channel");
	expect("register_word", hostlink_register_word(closed, "ctrl_scratch", 0, &value), EBADF, "not an open channel");
	expect("cycles", hostlink_cycles(closed, &cycles), EBADF, "not an open channel");
	expect("counts", hostlink_counts(closed, &counts), EBADF, "not an open channel");
	expect("stats", hostlink_stats(closed, &stats), EBADF, "not an open channel");
	expect("drain", hostlink_drain(closed, -1), EBADF, "not an open channel");
	expect("cancel", hostlink_cancel(closed), EBADF, "not an open channel");
	expect("fd", hostlink_fd(closed), EBADF, "not an open channel");
	expect("channel_index", hostlink_channel_index(closed), EBADF, "not an open channel");
	expect("close", hostlink_close(closed), EBADF, "not an open channel");
	printf("%s: buffer_size, buffer_count and board of a handle not open: %zu %zu '%s'\n",
	       !hostlink_buffer_size(closed) && !hostlink_buffer_count(closed) && !*hostlink_board(closed) ? "ok" : "FAIL",
	       hostlink_buffer_size(closed), hostlink_buffer_count(closed), hostlink_board(closed));
	failed |= hostlink_buffer_size(closed) || hostlink_buffer_count(closed) || *hostlink_board(closed);
	printf("%s: close(NULL) does nothing\n", hostlink_close(NULL) == 0 ? "ok" : "FAIL");
	failed |= hostlink_close(NULL) != 0;
	return failed;
}
"""


def test_libhostlink_refuses_bad_arguments_and_handles_not_open(generated, tmp_path):
    """libhostlink alone (no device): open's bad flow, directions (h2c in a flow that cannot carry it) and
    timeout each refused with EINVAL and a message before anything is opened; every call on a handle that is
    not open is EBADF "not an open channel", never a read of freed memory (the library keeps its open
    handles). The same on the real driver, with a handle closed: sim/uml/guest/library_errors.py."""
    library = os.path.join(generated, "user", "libhostlink")
    program = tmp_path / "refusals.c"
    program.write_text(_LIBRARY_REFUSALS)
    binary = tmp_path / "refusals"
    subprocess.run(["gcc", "-Wall", "-Werror", f"-I{library}", f"-I{os.path.join(generated, 'kernel')}", "-o",
                    str(binary), str(program), os.path.join(library, "hostlink.c"), "-lpthread"], check=True)
    run = subprocess.run([str(binary)], capture_output=True, text=True)
    assert run.returncode == 0 and "FAIL" not in run.stdout, run.stdout
    assert run.stdout.count("ok: ") == 29, run.stdout


def _writer(flow="packets", buffer_size=128):
    """A Channel that records what write() gives the driver, without a device."""
    from hostlink.host import Channel
    channel = Channel.__new__(Channel)
    # A file of its own (closed with the channel), never the driver's.
    channel.fd, channel.path = os.open(os.devnull, os.O_RDONLY), "/dev/test"
    channel.flow, channel.directions = flow, ("h2c", "c2h")
    channel.buffer_size, channel._held, channel._open_packet = buffer_size, {"h2c": 0, "c2h": 0}, b""
    channel._calls = {"h2c": threading.RLock(), "c2h": threading.RLock()}
    channel.sent = []
    channel._transfer = lambda data, results, into=None: channel.sent.append(bytes(data))
    return channel


def _unframe(raw, buffer_size=128):
    """[(data, end)] of the h2c buffers in `raw`."""
    out = []
    for i in range(0, len(raw), buffer_size):
        magic, _, _, _, length, flags = HEADER.unpack_from(raw, i)
        assert magic == HEADER_MAGIC and length <= buffer_size - 32
        assert (flags & 1) or length % 32 == 0, "a buffer without END holds whole 32-byte units"
        out.append((raw[i + 32:i + 32 + length], bool(flags & 1)))
    return out


@pytest.mark.parametrize("size", [1, 31, 32, 33, 96, 97, 3*128 + 7])
def test_a_packet_write_frames_any_length_with_end_on_its_last_buffer(size):
    data = bytes(range(256)) * 2
    data = data[:size]
    channel = _writer()
    channel.write(data)
    buffers = _unframe(b"".join(channel.sent))
    assert b"".join(d for d, _ in buffers) == data
    assert [e for _, e in buffers] == [False] * (len(buffers) - 1) + [True]
    assert len(buffers) == -(-size // 96) and channel._open_packet == b""


def test_a_packet_in_pieces_holds_back_a_tail_to_end_it_with():
    from hostlink.host import HostlinkError
    channel = _writer()
    pieces = [b"a" * 45, b"b", b"c" * 200, b"d" * 32]
    for piece in pieces:
        channel.write(piece, end=False)
        assert 1 <= len(channel._open_packet) <= 32
    channel.write(b"")
    buffers = _unframe(b"".join(channel.sent))
    assert b"".join(d for d, _ in buffers) == b"".join(pieces) and buffers[-1][1]
    assert [e for _, e in buffers].count(True) == 1
    sent = len(channel.sent)
    with pytest.raises(HostlinkError, match="at least one byte") as error:
        channel.write(b"")
    assert error.value.errno == 22 and len(channel.sent) == sent


def test_lossless_refuses_what_only_packets_flow_carries():
    from hostlink.host import HostlinkError
    channel = _writer(flow="lossless")
    channel._not_holding = lambda *args: None
    with pytest.raises(HostlinkError, match=r"100 bytes is not a positive multiple \(packets flow, "
                                            r"Channel\(flow='packets'\), writes any length\)"):
        channel.write(bytes(100))
    with pytest.raises(HostlinkError, match=r"end=False\) continues a packet: packets flow only"):
        channel.write(bytes(128), end=False)
    assert channel.sent == []


def test_register_names_from_the_drivers_header_and_the_csr_map(generated, tmp_path):
    from hostlink.host import _read_register_map
    from_header = _read_register_map(os.path.join(generated, "kernel", "csr.h"))
    assert from_header["pcie_dma0_writer_flow_given"] == 0x6c + from_header["pcie_dma0_writer_enable"]
    csr_json = tmp_path / "csr.json"
    csr_json.write_text(json.dumps({"csr_registers": {"ctrl_scratch": {"addr": 4, "size": 1}}}))
    assert _read_register_map(str(csr_json)) == {"ctrl_scratch": 4}

# User-Mode Linux ----------------------------------------------------------------------------------

needs_kernel = pytest.mark.skipif(not os.path.isfile(UML_KERNEL), reason="no User-Mode Linux kernel: `make uml-kernel`")
EXAMPLE = os.path.join(REPO, "examples", "accelerator_host.py")
SLOW    = os.path.join(REPO, "sim", "uml", "guest", "slow_reader.py")
ERRORS  = os.path.join(REPO, "sim", "uml", "guest", "library_errors.py")
THREADS = os.path.join(REPO, "sim", "uml", "guest", "library_threads.py")
ASYNCIO = os.path.join(REPO, "examples", "asyncio_host.py")
MEMBER  = os.path.join(REPO, "sim", "uml", "guest", "as_member.py")


def _run(tmp_path, board, user_core, command):
    from hostlink.sim.driver import main as driver_main
    path = tmp_path / f"{board}.json"
    code = driver_main(["--board", board, "--user-core", user_core, "--json", str(path), "--command-timeout",
                        "900", "--timeout", "2400", "--", "sh", "-c", command])
    with open(path) as f:
        return code, json.load(f)


def _output(result):
    return next(s for s in result["steps"] if s["name"] == "cmd0")["output"]


def _assert_accelerator_streams(output, python_bytes, c_bytes, zero_copy_bytes):
    """The accelerator's examples each said every result was right: Python's and C's copy streams, then both
    zero-copy."""
    for size, how, where in [(python_bytes, "", ": 0 bytes wrong"), (c_bytes, "", r" \(C\): 0 samples wrong"),
                             (zero_copy_bytes, " zero-copy", ": 0 bytes wrong"),
                             (zero_copy_bytes, " zero-copy", r" \(C\): 0 samples wrong")]:
        assert re.search(rf"{size} bytes through the accelerator and back{how} in [0-9.]+ s, [1-9]\d* device "
                         rf"cycles{where}", output), (size, how, where, output[-3000:])


@pytest.mark.uml
@needs_kernel
@pytest.mark.parametrize("board", ["zc706", "vc709"])
def test_the_accelerator_and_a_slow_reader_through_the_driver(tmp_path, board):
    """The Python example as a group member after its root set-up, and the C one (libhostlink); then, on
    the same SoC's channel 0 given back to its patterns, a reader that pauses for three ring-fills every 32
    buffers: lossless flow loses nothing, LitePCIe's loop mode loses data (and the driver logs it)."""
    command = (f"python3 {EXAMPLE} --setup --registers csr.json; "
               f"python3 {MEMBER} member -- python3 {EXAMPLE} --size 256K; "
               f"python3 {MEMBER} member -- accelerator_host --size 131072; "
               f"python3 {MEMBER} member -- python3 {EXAMPLE} --size 128K --zero-copy; "
               f"python3 {MEMBER} member -- accelerator_host --size 131072 --zero-copy; "
               f"python3 {ERRORS} csr.json; "
               f"python3 -c \"import sys; sys.path.insert(0, '{REPO}'); from hostlink.host import Channel; "
               f"Channel(0, directions=('c2h',), flow='loop', registers='csr.json').register('pcie_dma0_user_select', 0)\"; "
               f"python3 {SLOW} csr.json lossless 524288 32 3; python3 {SLOW} csr.json loop 524288 32 3; "
               # The channel back to the accelerator: threads, cancel, Ctrl-C, close (library_threads.py).
               f"python3 {EXAMPLE} --setup --registers csr.json; python3 {MEMBER} member -- threads_host --size 262144; "
               f"python3 {MEMBER} member -- python3 {ASYNCIO} --size 131072; "
               f"python3 {MEMBER} member -- python3 {THREADS} 0; "
               f"python3 {MEMBER} member -- python3 {THREADS} 0 stuck")
    code, result = _run(tmp_path, board, "examples.accelerator:Accelerator", command)
    output = _output(result)
    assert "channel 0 to the accelerator, a = 3, b = 4660" in output, output[-3000:]
    assert "group member (uid 1000" in output and "262144 bytes through the accelerator and back" in output
    # Python's example, the same from C (libhostlink's, linked statically), as a group member, and zero-copy
    # (get_buffers/put_buffers: samples made and results checked in the driver's ring, in place) from both.
    _assert_accelerator_streams(output, python_bytes=262144, c_bytes=131072, zero_copy_bytes=131072)
    # The library's failures under the real driver, each with its errno and advice (library_errors.py).
    for check in ["outside the group: open: EACCES", "a channel that does not exist: ENODEV",
                  "c2h held by another opener: EBUSY", "ok: h2c free while c2h is held",
                  "a write of part of a buffer: EINVAL", "a read on a channel opened h2c only: EINVAL",
                  "a bad direction: EINVAL", "a copy while zero-copy buffers are held: EBUSY",
                  "giving back more than was got: EINVAL", "a read with nothing coming: ETIMEDOUT",
                  "ok: a zero-copy get without waiting: 0 buffers", "a zero-copy get with nothing coming: ETIMEDOUT",
                  "ok: a wait without waiting: set()", "a wait with nothing coming: ETIMEDOUT",
                  "ok: the MSIs enabled after a wait are those before it", "a wait on a direction not opened: EINVAL",
                  "a register write: EPERM", "ok: room to send, found without sleeping",
                  "ok: one buffer through the core", "library errors: all as expected"]:
        assert check in output, (check, [line for line in output.splitlines() if "FAIL" in line] or output[-4000:])
    # The same from C, libhostlink's hostlink_errors, and what only C can get wrong.
    for check in ["outside the group: open: no permission", "a channel that does not exist: /dev/litepcie99",
                  "a flow that does not exist: flow must be", "a timeout of 0 ms: the timeout is a positive",
                  "c2h held by another opener: /dev/litepcie0: c2h held", "h2c free while c2h is held (C)",
                  "a write of part of a buffer: /dev/litepcie0: writing moves whole",
                  "a read on a channel opened h2c only: /dev/litepcie0: opened without HOSTLINK_C2H",
                  "a bad direction: /dev/litepcie0: hostlink_get_buffers: the direction",
                  "a copy while zero-copy buffers are held: /dev/litepcie0: hostlink_put_buffers()",
                  "giving back more than was got: /dev/litepcie0: hostlink_put_buffers: 3 buffers",
                  "a read with nothing coming: /dev/litepcie0: transfer: no progress for 500 ms",
                  "a zero-copy get without waiting: 0 buffers (C)",
                  "a zero-copy get with nothing coming: /dev/litepcie0: hostlink_get_buffers: no c2h buffer",
                  "a wait without waiting: 0 (C)",
                  "a wait with nothing coming: /dev/litepcie0: hostlink_wait: no c2h buffer for 300 ms",
                  "a wait on a direction not opened: /dev/litepcie0: hostlink_wait: opened without HOSTLINK_H2C",
                  "a register write: /dev/litepcie0: cannot write a register: register writes need CAP_SYS_RAWIO",
                  "a register that does not exist: /dev/litepcie0: no register 'no_such_register'",
                  "a handle used after close: not an open channel",
                  "a buffer read into less than it carries: /dev/litepcie0: hostlink_read_buffer: a buffer "
                  "carries up"]:
        assert re.search(r"^ok: " + re.escape(check.removesuffix(" (C)")) + r".*\(C\)$", output, re.M), \
            (check, output[-4000:])
    # The C example of a writer thread and a reader thread on one channel.
    assert re.search(r"^262144 bytes through the accelerator by a writer thread and a reader thread in [0-9.]+ s: "
                     r"262144 of 262144 bytes sent, 262144 received, 0 samples wrong", output, re.M), output[-3000:]
    # The asyncio example: the channel as one more file of the event loop, woken by the DMA's interrupt,
    # the loop's other task running meanwhile.
    turns = re.search(r"^131072 bytes through the accelerator from asyncio in [0-9.]+ s, (\d+) turns of the loop's "
                      r"other task meanwhile: 0 samples wrong", output, re.M)
    assert turns and int(turns.group(1)) > 0, output[-3000:]
    # Threads, cancel, signals, progress, close and poll(), from Python and from C (library_threads.py,
    # hostlink_threads.c).
    for check in ["a reader thread and a writer thread on one Channel", "cancel() ends another thread's read",
                  "a call begun after the cancel runs to its own end", "Ctrl-C ends a blocking read",
                  "a read that times out carries what it got", "close right after a write sends all of it",
                  "directions='c2h' and timeout=None", "read_into() an array of the program's",
                  "transfer(into=) a bytearray", "poll() on the channel", "a register map that does not exist", "a channel used after close", "a timeout of 0",
                  "a reader thread and a writer thread on one channel", "two threads that fail at once read their "
                  "own errors", "hostlink_cancel() ends another thread's read", "a signal ends a blocking read",
                  "a read that times out says what it got", "a close whose data the core cannot take fails after "
                  "its timeout", "the channel was released all the same", "library threads: all as expected",
                  "library threads (stuck): all as expected"]:
        assert re.search(r"^ok: " + re.escape(check), output, re.M) or check in output, \
            (check, [line for line in output.splitlines() if "FAIL" in line] or output[-4000:])
    assert "FAIL: " not in output, output[-4000:]
    # (Pauses: 3 with the ZC706's 4 KiB buffers, 1 with the VC709's 8 KiB.)
    assert re.search(r"524288 bytes read in flow lossless, [1-9] pauses of 3.0 ring-fills: 0 words wrong", output)
    lost = re.search(r"524288 bytes read in flow loop, [1-9] pauses of 3.0 ring-fills: (\d+) words wrong", output)
    assert lost and int(lost.group(1)) > 0
    # Only loop mode's losses in the kernel log.
    assert result["kernel_warnings"] and all("Reading too late" in w for w in result["kernel_warnings"])
    # The stats ioctl: lossless lost nothing, the program found at most half the ring waiting (the DMA may not
    # go further), the driver's counts agree with the DMA's own; loop mode counted exactly the buffers
    # the kernel log says were lost.
    ring = sim_dma_ring(board)
    stats = {flow: {k: int(v) for k, v in re.findall(r"(\w+) (-?\d+)", line)} for flow, line in
             re.findall(r"stats of the c2h direction in flow (\w+): (.*)", output)}
    lossless, loop = stats["lossless"], stats["loop"]
    assert lossless["lost"] == lossless["lost_events"] == 0, lossless
    assert ring["DMA_BUFFER_COUNT"] // 4 <= lossless["level_max"] <= ring["DMA_BUFFER_COUNT"] // 2, lossless
    assert lossless["sw_count"] == 524288 // ring["DMA_BUFFER_SIZE"] and lossless["enabled"] == 1, lossless
    # (The DMA may finish a buffer between the driver's refresh and its reading of the gate's counts.)
    assert lossless["sw_count"] <= lossless["hw_count"] <= lossless["fpga_done"] <= lossless["fpga_given"], lossless
    assert lossless["fpga_given"] == lossless["sw_count"] + ring["DMA_BUFFER_COUNT"] // 2, lossless
    assert lossless["fpga_waits"] > 0 and lossless["flow"] == 1, lossless
    logged = sum(int(n) for w in result["kernel_warnings"] for n in re.findall(r"Reading too late, (\d+) buffers", w))
    assert loop["lost"] == logged > 0 and loop["lost_events"] == len(result["kernel_warnings"]), (loop, logged)
    assert loop["level_max"] > ring["DMA_BUFFER_COUNT"] // 2 and loop["flow"] == 0 and loop["fpga_given"] == 0, loop


@pytest.mark.uml
@needs_kernel
@pytest.mark.parametrize("board", ["zc706"])   # The framing on every board: test_flow_sim.py.
def test_real_time_drops_and_packet_lengths_through_the_driver(tmp_path, board):
    """Real-time: a reader that pauses loses data exactly where the headers say. Packets: the source's
    packets (200 samples, over a buffer each) reach the program whole, with their lengths."""
    code, result = _run(tmp_path, board, "examples.stream_source:CountingSource",
                        f"python3 {SLOW} csr.json realtime 262144 16 3 32768; "
                        f"python3 {SLOW} csr.json packets 131072 4096 200; "
                        f"source_host realtime 32 32768 && source_host packets 8 4096 200")
    output = _output(result)
    # The same from C (libhostlink's example).
    assert re.search(r"32 real-time buffers, \d+ data bytes over \d+ cycles \(C\): \d+ bytes dropped in \d+ "
                     r"places by the headers, \d+ by the port's count, 0 core overruns: 0 things wrong", output), \
        output[-3000:]
    assert "8 packets, 51200 bytes in packets flow (C): 0 things wrong" in output
    # A packet longer than the room given is kept, whole, for the next call with room enough (then the same
    # packet, checked with the rest: nothing lost).
    assert "packet 0: longer than 1024 bytes, kept; room grown to 6400" in output, output[-3000:]
    # libhostlink's stats (the driver's stats ioctl), checked by the example against the DMA's own counts.
    served = [int(n) for n in re.findall(r"stats \(C\): (\d+) buffers served, \d+ done by the DMA, \d+ by its flow "
                                         r"gate, 0 lost, at most \d+ of 64 waiting", output)]
    assert served and served[0] == 32, output[-3000:]
    assert re.search(r"\d+ packets of 6400 bytes \(200 samples each\) in packets flow, 0 core overruns: "
                     r"0 things wrong", output), output[-3000:]
    match = re.search(r"(\d+) real-time buffers: (\d+) bytes dropped in (\d+) places by the headers, (\d+) by the "
                      r"port's count, 0 core overruns: 0 things wrong", output)
    assert match, output[-3000:]
    assert int(match.group(2)) > 0 and int(match.group(3)) > 0
    assert code == 0 and result["passed"]


ECHO = os.path.join(REPO, "sim", "uml", "guest", "packet_echo.py")


@pytest.mark.uml
@needs_kernel
@pytest.mark.parametrize("board", ["zc706", "vc709"])
def test_packets_of_any_length_both_ways_through_the_driver(tmp_path, board):
    """Packets flow host to FPGA and back through the example echo (a quarter of the DMA's width, so both
    width conversions cut final words): every length comes back identical, one at a time and all in
    flight, a packet in pieces too; bad input is refused with one clear error each, and a bad header is
    dropped by the FPGA and counted, with the packets after it whole (sim/uml/guest/packet_echo.py). Then
    the same from C (examples/packet_echo_host.c)."""
    code, result = _run(tmp_path, board, "examples.packet_echo:PacketEcho",
                        f"python3 {ECHO} csr.json && packet_echo_host")
    output = _output(result)
    assert re.search(r"9 packets of 1, 31, 32, 33, 1000, (\d+), (\d+), (\d+), 2 bytes echoed in packets flow: "
                     r"0 bytes wrong", output), output[-3000:]
    assert "the same 9 packets all in flight at once: 0 bytes wrong" in output, output[-3000:]
    assert "written in 6 pieces and ended by write(b''): right" in output, output[-3000:]
    assert "a buffer with a bad magic: 1 dropped by the FPGA, the 2 packets after it echoed with 0 bytes wrong" \
        in output, output[-3000:]
    assert output.count("(right)") == 7 and "WRONG" not in output, output[-3000:]
    assert "packets flow both ways: 0 things wrong" in output
    # The same from C (libhostlink's hostlink_write_packet, examples/packet_echo_host.c).
    assert re.search(r"9 packets, \d+ bytes echoed in packets flow \(C\): 0 bytes wrong", output), output[-3000:]
    assert "a packet of 3246 bytes in 4 pieces (C): 0 bytes wrong" in output
    assert output.count("(C): ") == 5 and "packets flow both ways (C): 0 things wrong" in output, output[-3000:]
    assert code == 0 and result["passed"]


RING = os.path.join(REPO, "sim", "uml", "guest", "ring_at_load.py")


@pytest.mark.uml
@needs_kernel
@pytest.mark.parametrize("board", ["zc706", "vc709"])
def test_a_ring_chosen_when_the_module_loads(tmp_path, board):
    """litepcie.ko loaded with dma_buffer_count=16 dma_buffer_size=16384 (software/driver/ring.py; the
    simulation's default ring is 64 x 4 KiB or 128 x 8 KiB): every impossible ring refused in one kernel log
    line, LitePCIe's own tool refusing a ring it was not built for, and the accelerator's examples, Python
    and C, copy and zero-copy, streaming on the chosen ring with every result right; then hostlink_bench's
    three modes on a ring of 64 x 16 KiB it reads from the driver, every buffer checked."""
    code, result = _run(tmp_path, board, "examples.accelerator:Accelerator",
                        f"python3 {RING} 16 16384 && python3 {EXAMPLE} --setup --registers csr.json && "
                        f"python3 {EXAMPLE} --size 256K && accelerator_host --size 262144 && "
                        f"python3 {EXAMPLE} --size 128K --zero-copy && accelerator_host --size 131072 --zero-copy && "
                        # LitePCIe's loop mode (hostlink_bench's) wants a longer ring (software/driver/ring.py).
                        f"python3 -c \"import sys; sys.path.insert(0, '{REPO}'); from hostlink.host import Channel; "
                        f"Channel(0, directions=('c2h',), flow='loop', registers='csr.json').register("
                        f"'pcie_dma0_user_select', 0)\" && rmmod litepcie && "
                        f"insmod $HOSTLINK_LITEPCIE_KO dma_buffer_count=64 dma_buffer_size=16384 && "
                        f"hostlink_bench -m zero-copy,copy,double -s 16K:32K -t 8")
    output = _output(result)
    for refused in ["dma_buffer_count=0 refused: litepcie: dma_buffer_count=0: a ring has a power of two from 2 "
                    "to 256 buffers", "dma_buffer_count=3 refused", "dma_buffer_count=512 refused",
                    "dma_buffer_size=1000 refused: litepcie: dma_buffer_size=1000: a buffer is a power of two from "
                    "4096 to 8388608 bytes", "dma_buffer_size=2048 refused", "dma_buffer_size=16777216 refused",
                    "dma_buffer_count=256 dma_buffer_size=8388608 refused: litepcie: dma_buffer_count=256 x "
                    "dma_buffer_size=8388608: a ring is at most 1024 MiB each way"]:
        assert f"ok: {refused}" in output, (refused, output[-3000:])
    assert "ok: loaded with a ring of 16 buffers of 16384 bytes; a channel's ring is 16 x 16384" in output, \
        output[-3000:]
    assert re.search(r"ok: litepcie_util refuses it: /dev/litepcie0: the driver's DMA ring is 16 buffers of 16384 "
                     r"bytes, this program was built for \d+ of \d+", output), output[-3000:]
    # hostlink_bench takes the ring from the driver: its three modes on it, every buffer checked.
    assert "ring: 64 buffers of 16384 bytes, an MSI every 8" in output, output[-3000:]
    for mode, size in [("zero-copy", 16384), ("copy", 32768), ("double", 32768)]:
        assert re.search(rf"^{mode} .* {size} .*\s0$", output, re.M), (mode, output[-3000:])
    _assert_accelerator_streams(output, python_bytes=262144, c_bytes=262144, zero_copy_bytes=131072)
    assert not result["kernel_warnings"], result["kernel_warnings"]
    assert code == 0 and result["passed"]


ROUND_TRIP = os.path.join(REPO, "sim", "uml", "guest", "round_trip.py")


@pytest.mark.uml
@needs_kernel
@pytest.mark.parametrize("board", ["zc706", "vc709"])
def test_round_trips_of_one_buffer_poll_and_interrupt(tmp_path, board):
    """sim/uml/guest/round_trip.py (the latency figures of doc/host_api.md): one buffer out and back through
    the DMA's loopback and through the accelerator, polled and woken by interrupt, every result right (the
    first message written before the c2h DMA runs: lossless flow holds what it returns, LitePCIe's writer
    dropped it and the program waited for nothing); each
    figure a positive number of device cycles, in order (min <= median <= max), and the timing's own cost
    below each. Not a check of how fast: the figures are printed, not compared."""
    code, result = _run(tmp_path, board, "examples.accelerator:Accelerator",
                        f"python3 {ROUND_TRIP} csr.json loopback,accelerator 20 round_trip.json")
    output = _output(result)
    ring = sim_dma_ring(board)
    runs = re.findall(r"^round trip (\w+) (\w+): (\d+) bytes, 20 times: min (\d+) median (\d+) max (\d+) cycles = "
                      r"[0-9.]+ / [0-9.]+ / [0-9.]+ us at \d+ MHz; (\d+) wrong$", output, re.M)
    assert [(path, completion) for path, completion, *_ in runs] == \
        [("loopback", "poll"), ("loopback", "irq"), ("accelerator", "poll"), ("accelerator", "irq")], output[-3000:]
    timing = re.search(r"^timing itself \(cycles\(\) twice\): (\d+) cycles", output, re.M)
    assert timing and int(timing.group(1)) > 0, output[-3000:]
    for path, completion, size, low, median, high, wrong in runs:
        assert int(size) == ring["DMA_BUFFER_SIZE"] and int(wrong) == 0, (path, completion, output[-3000:])
        assert int(timing.group(1)) < int(low) <= int(median) <= int(high), (path, completion, output[-3000:])
    shared = os.path.join(REPO, "build", "uml", "runs", f"{board}_dma2_accelerator-Accelerator-ch0", "shared")
    with open(os.path.join(shared, "round_trip.json")) as f:
        report = json.load(f)
    assert [len(run["samples"]) for run in report["runs"]] == [20] * 4 and report["message_bytes"] == int(size)
    assert code == 0 and result["passed"] and not result["kernel_warnings"], result["kernel_warnings"]


HOST_PY = os.path.join(REPO, "hostlink", "host.py")
GONE    = os.path.join(REPO, "sim", "uml", "guest", "device_gone.py")


def _driver_of_another_soc(tmp_path, board, user_core):
    """`board`'s driver for the simulated machine, rebuilt as if generated for another SoC (its identifier
    changed): the module's path and the identifier it is for."""
    from hostlink.sim.pcie.run import build_model
    from hostlink.sim.uml.kernel import UML_TREE
    from hostlink.sim.uml.run import build_uml_driver
    from hostlink.sim.pcie.soc import get_board
    model = build_model(board, 2, user_core=user_core, reference=False)
    driver_dir = build_uml_driver(get_board(board), 2, model["soc_dir"], user_core=user_core)
    kernel = tmp_path / "other_soc"
    shutil.copytree(os.path.join(driver_dir, "kernel"), kernel, ignore=shutil.ignore_patterns("*.o", "*.ko", ".*"))
    other = "hostlink VC709 PCIe Gen3 x8 DMA SoC" if board != "vc709" else "hostlink ZC706 PCIe Gen2 x4 DMA SoC"
    config = (kernel / "config.h").read_text()
    assert config.count("#define HOSTLINK_SOC_IDENTIFIER ") == 1
    (kernel / "config.h").write_text(re.sub(r"#define HOSTLINK_SOC_IDENTIFIER .*", f'#define HOSTLINK_SOC_IDENTIFIER "{other}"',
                                            config))
    subprocess.run(["make", "-C", UML_TREE, "ARCH=um", f"M={kernel}", "modules"], check=True, capture_output=True)
    return kernel / "litepcie.ko", other


@pytest.mark.uml
@needs_kernel
@pytest.mark.parametrize("board", ["zc706", "vc709"])
def test_two_boards_in_one_machine_stream_at_once(tmp_path, board):
    """Two boards of a kind on the machine's PCI bus, each simulated on its own: each board's channels are nodes of
    their own, named by board; the accelerator is set up on each board's channel 0 by its node (the
    register names use the channel's number on its board), then streams through both at once, Python on
    one board and C on the other, as a group member: every result checked, each board with its figures.
    Then the driver is taken away under a program streaming on the second board (module_gone.py). Last, a
    driver generated for another SoC leaves both boards alone (its probe compares the SoC's identifier)."""
    from hostlink.sim.driver import main as driver_main
    path = tmp_path / "two.json"
    other_module, other = _driver_of_another_soc(tmp_path, board, {"spec": "examples.accelerator:Accelerator",
                                                                   "channel": 0})
    other_soc = (f"rmmod litepcie && insmod {other_module} && echo nodes with the other SoC\\'s driver: "
                 f"$(ls /dev | grep -c ^litepcie), boards refused: $(dmesg | grep -c 'this driver is for .{other}.: "
                 f"not taken'); rmmod litepcie && insmod $HOSTLINK_LITEPCIE_KO && echo own driver back: $(ls /dev | "
                 f"grep -c ^litepcie) nodes")
    both = (f"python3 {EXAMPLE} --size 256K --channel 0 > python.out & "
            f"accelerator_host --size 262144 --channel 2 > c.out & wait; cat python.out c.out")
    code = driver_main(["--board", board, "--boards", "2", "--user-core", "examples.accelerator:Accelerator",
                        "--json", str(path), "--command-timeout", "900", "--timeout", "2400", "--", "sh", "-c",
                        f"python3 {HOST_PY}; python3 {EXAMPLE} --setup --registers csr.json --channel 0; "
                        f"accelerator_host --setup --channel 2; python3 {MEMBER} member -- sh -c '{both}'; "
                        f"python3 {GONE} 2 0; {other_soc}"])
    with open(path) as f:
        result = json.load(f)
    output = _output(result)
    boards = re.findall(r"^board (\S+): (.*)$", output, re.M)
    assert [nodes for _, nodes in boards] == ["/dev/litepcie0 /dev/litepcie1", "/dev/litepcie2 /dev/litepcie3"], output
    first, second = boards[0][0], boards[1][0]
    assert first != second and re.fullmatch(r"[0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]", first), boards
    assert f"channel 0 to the accelerator, a = 3, b = 4660 (/dev/litepcie0, board {first})" in output, output
    assert f"channel 0 to the accelerator, a = 3, b = 4660 (/dev/litepcie2, board {second})" in output, output
    assert re.search(r"262144 bytes through the accelerator and back in [0-9.]+ s, [1-9]\d* device cycles: "
                     r"0 bytes wrong \(/dev/litepcie0\)", output), output[-3000:]
    assert re.search(r"262144 bytes through the accelerator and back in [0-9.]+ s, [1-9]\d* device cycles \(C\): "
                     r"0 samples wrong \(/dev/litepcie2\)", output), output[-3000:]
    # The driver taken away under a program streaming on the second board (device_gone.py): refused while
    # the channel is open, the stream going on; once closed, gone, and the library says so.
    for check in ["ok: rmmod refused while the channel is open", "ok: 65536 bytes more after the refused rmmod, "
                  "0 bytes wrong in all", "ok: rmmod once the channel is closed", "ok: opening without the driver: "
                  "ENODEV: /dev/litepcie2 does not exist: is the board there and litepcie.ko loaded? (devices: none)",
                  "ok: no board listed without the driver", "boards: 2"]:
        assert check in output, (check, output[-3000:])
    # The board itself removed under the program (software/driver/removal.py): its calls fail with ENODEV, the
    # removal waits for its close, the other board streams on, a rescan brings the board back; no kernel warning.
    for check in [f"ok: 65536 bytes through board {second} before its removal, 0 bytes wrong; its c2h ring mapped",
                  f"ok: board {second} removed: its nodes are gone, the removal waits for the program",
                  "ok: a transfer on the removed board: ENODEV: /dev/litepcie2: ", "the board is gone (removed, "
                  "unplugged or its driver unbound): close the channel", "ok: a zero-copy get on the removed board: "
                  "ENODEV", "ok: the removal ended once the program closed the channel",
                  f"ok: 65536 bytes through the other board (/dev/litepcie0, board {first}), 0 bytes wrong",
                  f"ok: a rescan brought board {second} back as /dev/litepcie4 /dev/litepcie5 (new: True); 65536 "
                  f"bytes through it, 0 bytes wrong", "device gone: all as expected",
                  # A driver generated for another SoC takes neither board; the board's own takes both again.
                  "nodes with the other SoC's driver: 0, boards refused: 2", "own driver back: 4 nodes"]:
        assert check in output, (check, output[-3000:])
    assert not result["kernel_warnings"], result["kernel_warnings"]
    # Each board moved the data of its own program (256 KiB each way, in the DMA reads its host served).
    assert len(result["boards"]) == 2
    for each in result["boards"]:
        assert each["host_reads"]["served"] > 0 and each["dma_bytes_written"] >= 262144, each
        assert not each["mmio_read_errors"], each
    assert code == 0 and result["passed"]


@pytest.mark.parametrize("argv, message", [
    (["--boards", "5"],                                                "boards must be 1 to 4"),
    (["--user-core", "accelerator"],                                   "MODULE:CLASS, FILE.py:CLASS or FILE.v:MODULE"),
    (["--user-core", "examples.accelerator:Accelerator", "--user-channel", "2"],
                                                                       "one of the SoC's DMA channels 0..1, not 2"),
])
def test_sim_driver_refuses_a_bad_user_core_with_one_line(argv, message, capsys):
    from hostlink.sim.driver import main as driver_main
    assert message in refusal(driver_main, ["--board", "zc706", *argv, "--", "true"], capsys).strip().splitlines()[-1]
