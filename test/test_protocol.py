# This file is part of hostlink.
# Copyright (c) 2026 hostlink developers
# SPDX-License-Identifier: BSD-2-Clause

"""hostlink.protocol against the C side: every flow mode, header field, ioctl (number, size, each field's
offset) and AXI DMA register as the C compiler sees them in libhostlink's hostlink.h, the generated
driver's litepcie.h and software/zynq/dma_user_test.c.

Python defines each of these once (hostlink.protocol: the gateware, hostlink.host and the benches import it);
C spells them in its own headers; a one-field difference on either side fails here (the last tests change
one field on each side and check that the comparison names it).
"""

import os
import re
import subprocess

import pytest

from helpers import generate_zc706_driver, read

from hostlink import REPO, protocol
from hostlink.cores.pcie import flow, splitter, user_port
from hostlink.cores.zynq import axi_dma

LIBRARY = os.path.join(REPO, "software", "lib")
ZYNQ    = os.path.join(REPO, "software", "zynq")


@pytest.fixture(scope="module")
def kernel(tmp_path_factory):
    return os.path.join(generate_zc706_driver(tmp_path_factory), "kernel")


def compiled_values(tmp_path, source, include_dirs, prints):
    """{name: integer} printed by a C program that includes `source` (a header's text) and prints each of
    `prints` [(name, C expression)]."""
    program = tmp_path / "facts.c"
    program.write_text("#include <stddef.h>\n#include <stdint.h>\n#include <stdio.h>\n#include <sys/ioctl.h>\n" +
                       source + "\nint main(void)\n{\n" +
                       "".join(f'\tprintf("%s %llu\\n", "{name}", (unsigned long long)({expr}));\n'
                               for name, expr in prints) + "\treturn 0;\n}\n")
    binary = tmp_path / "facts"
    subprocess.run(["gcc", "-Wall", "-Werror", *(f"-I{d}" for d in include_dirs), "-o", str(binary),
                    str(program)], check=True)
    out = subprocess.run([str(binary)], capture_output=True, text=True, check=True).stdout
    return {name: int(value) for name, value in (line.split() for line in out.splitlines())}


def library_facts():
    """[(name, C expression, hostlink.protocol's value)] for hostlink.h and litepcie.h."""
    facts = []
    for name, number in protocol.FLOW_MODES.items():
        facts += [(f"HOSTLINK_FLOW_{name.upper()}", number), (f"LITEPCIE_FLOW_{name.upper()}", number)]
    facts += [("HOSTLINK_HEADER_BYTES", protocol.HEADER_BYTES), ("HOSTLINK_HEADER_MAGIC", protocol.HEADER_MAGIC),
              ("HOSTLINK_HEADER_FLAG_END", protocol.HEADER_FLAG_END)]
    facts += [(f"HOSTLINK_HEADER_{name.upper()}_OFFSET", offset) for name, offset, _ in protocol.HEADER_FIELDS]
    facts = [(name, name, value) for name, value in facts]
    for ioctl in protocol.IOCTLS.values():
        facts.append((f"IOCTL_{ioctl.name}", f"LITEPCIE_IOCTL_{ioctl.name}", ioctl.request))
        if ioctl.struct_name is None:
            continue
        struct = f"struct litepcie_ioctl_{ioctl.struct_name}"
        facts.append((f"sizeof_{ioctl.struct_name}", f"sizeof({struct})", ioctl.layout.size))
        facts += [(f"{ioctl.name}.{field}", f"offsetof({struct}, {field})", offset)
                  for field, offset in ioctl.offsets.items()]
    return facts


def differences(expected, compiled):
    """The names whose compiled value differs from hostlink.protocol's: {name: (Python, C)}."""
    return {name: (value, compiled.get(name)) for name, value in expected.items() if compiled.get(name) != value}


def library_differences(tmp_path, kernel, hostlink_h=None, litepcie_h=None):
    facts = library_facts()
    headers = tmp_path / "headers"
    headers.mkdir(exist_ok=True)
    (headers / "hostlink.h").write_text(hostlink_h or read(os.path.join(LIBRARY, "hostlink.h")))
    (headers / "litepcie.h").write_text(litepcie_h or read(os.path.join(kernel, "litepcie.h")))
    compiled = compiled_values(tmp_path, "#include \"hostlink.h\"\n#include \"litepcie.h\"\n", [str(headers), kernel],
                               [(name, expr) for name, expr, _ in facts])
    return differences({name: value for name, _, value in facts}, compiled)


def test_the_library_and_the_driver_agree_with_the_protocol(tmp_path, kernel):
    """Flow modes (hostlink.h, litepcie.h), the header's size, magic, flag and each field's offset, and every
    ioctl hostlink uses: its request number (direction, size, number) and each field's offset."""
    assert library_differences(tmp_path, kernel) == {}


def test_the_axi_dma_user_program_agrees_with_the_protocol(tmp_path):
    """software/zynq/dma_user_test.c's register offsets and bits are PG021's as hostlink.protocol has them."""
    names = ["MM2S_DMACR", "MM2S_DMASR", "MM2S_SA", "MM2S_LENGTH", "S2MM_DMACR", "S2MM_DMASR", "S2MM_DA",
             "S2MM_LENGTH"]
    expected = {name: protocol.AXI_DMA_REGISTERS[name] for name in names}
    expected.update({name: getattr(protocol, name) for name in
                     ["DMACR_RS", "DMACR_RESET", "DMASR_HALTED", "DMASR_IDLE", "DMASR_INT_ERR", "DMASR_SLV_ERR",
                      "DMASR_DEC_ERR", "DMASR_IOC_IRQ", "DMASR_ERR_IRQ"]})
    expected["MAX_LENGTH"] = (1 << protocol.AXI_DMA_LENGTH_BITS) - 1
    source = f'#define main dma_user_test_main\n#include "{os.path.join(ZYNQ, "dma_user_test.c")}"\n#undef main\n'
    compiled = compiled_values(tmp_path, source, [ZYNQ], [(name, name) for name in expected])
    assert differences(expected, compiled) == {}


def test_the_zynq_dma_clients_ioctls_agree_with_the_protocol(tmp_path):
    """software/zynq/hostlink_dma_client.h (the kernel module's and C programs' view of /dev/hostlink_dma) against
    hostlink.protocol's (the guest programs' view): each ioctl's request number, its struct's size and every
    field's offset, and the queue's length."""
    expected = {"HOSTLINK_DMA_QUEUE_MAX": protocol.AXI_DMA_CLIENT_QUEUE_MAX}
    prints = [("HOSTLINK_DMA_QUEUE_MAX", "HOSTLINK_DMA_QUEUE_MAX")]
    for ioctl in protocol.AXI_DMA_CLIENT_IOCTLS.values():
        struct = f"struct {ioctl.struct_name}"
        facts = [(ioctl.name, f"HOSTLINK_DMA_{ioctl.name}", ioctl.request),
                 (f"sizeof_{ioctl.name}", f"sizeof({struct})", ioctl.layout.size)]
        facts += [(f"{ioctl.name}.{field}", f"offsetof({struct}, {field})", offset)
                  for field, offset in ioctl.offsets.items()]
        expected.update({name: value for name, _, value in facts})
        prints += [(name, expr) for name, expr, _ in facts]
    source = "#include <stddef.h>\n#include \"hostlink_dma_client.h\"\n"
    assert differences(expected, compiled_values(tmp_path, source, [ZYNQ], prints)) == {}


def test_python_takes_the_protocol_from_one_place():
    """The gateware, hostlink.host and the benches hold no copy of their own: the names they use are the
    protocol module's objects."""
    from hostlink import host
    from hostlink.sim.pcie import stream_jobs
    assert host.FLOWS is protocol.FLOW_MODES and host.HEADER is protocol.HEADER
    assert host.IOCTLS is protocol.IOCTLS
    assert stream_jobs.FLOW_MODES is protocol.FLOW_MODES and stream_jobs.HEADER is protocol.HEADER
    assert flow.FLOW_PACKETS is protocol.FLOW_PACKETS
    assert splitter.HEADER_BYTES is user_port.HEADER_BYTES is protocol.HEADER_BYTES
    assert axi_dma.AXI_DMA_CHANNEL is protocol.AXI_DMA_CHANNEL
    # No module keeps a literal of the header's magic or the ioctls' type besides the protocol module.
    for folder in ["cores", "sim", "software", "hostlink"]:
        for root, _, files in os.walk(os.path.join(REPO, folder)):
            for name in files:
                if name.endswith(".py") and name != "protocol.py":
                    text = read(os.path.join(root, name))
                    assert "0x314b4c48" not in text and 'ord("S")' not in text, os.path.join(root, name)


# A one-field change is caught -------------------------------------------------------------------------

def test_a_header_offset_changed_in_c_is_named(tmp_path, kernel):
    hostlink_h = read(os.path.join(LIBRARY, "hostlink.h"))
    changed = re.sub(r"(#define HOSTLINK_HEADER_LENGTH_OFFSET\s+)24", r"\g<1>20", hostlink_h)
    assert changed != hostlink_h
    assert library_differences(tmp_path, kernel, hostlink_h=changed) == {"HOSTLINK_HEADER_LENGTH_OFFSET": (24, 20)}


def test_an_ioctl_number_or_field_changed_in_the_driver_is_named(tmp_path, kernel):
    litepcie_h = read(os.path.join(kernel, "litepcie.h"))
    renumbered = litepcie_h.replace("_IOWR(LITEPCIE_IOCTL, 44,", "_IOWR(LITEPCIE_IOCTL, 46,")
    assert set(library_differences(tmp_path, kernel, litepcie_h=renumbered)) == {"IOCTL_DMA_WAIT"}
    # The wait's cancel count made 64-bit: its size (so its request) and the fields after it move.
    widened = litepcie_h.replace("\tuint32_t cancel;", "\tuint64_t cancel;")
    assert widened != litepcie_h
    assert set(library_differences(tmp_path, kernel, litepcie_h=widened)) >= \
        {"IOCTL_DMA_WAIT", "sizeof_dma_wait", "DMA_WAIT.writer", "DMA_WAIT.reader_ready"}
    flows = litepcie_h.replace("#define LITEPCIE_FLOW_PACKETS  3", "#define LITEPCIE_FLOW_PACKETS  4")
    assert flows != litepcie_h
    assert library_differences(tmp_path, kernel, litepcie_h=flows) == {"LITEPCIE_FLOW_PACKETS": (3, 4)}


def test_a_field_changed_in_python_is_named(tmp_path, kernel, monkeypatch):
    """The same comparison with the Python side changed: a flow mode renumbered, an ioctl field reordered."""
    monkeypatch.setitem(protocol.FLOW_MODES, "realtime", 5)
    wait = protocol.IOCTLS["DMA_WAIT"]
    fields = list(wait.fields)
    fields[4], fields[5] = fields[5], fields[4]    # reader before writer
    monkeypatch.setitem(protocol.IOCTLS, "DMA_WAIT", protocol.Ioctl(wait.name, wait.number, wait.direction,
                                                                    wait.struct_name, fields))
    assert library_differences(tmp_path, kernel) == {
        "HOSTLINK_FLOW_REALTIME": (5, 2), "LITEPCIE_FLOW_REALTIME": (5, 2),
        "DMA_WAIT.writer": (17, 16), "DMA_WAIT.reader": (16, 17)}
