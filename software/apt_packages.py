#!/usr/bin/env python3
# This file is part of hostlink.
# Copyright (c) 2026 hostlink developers
# SPDX-License-Identifier: BSD-2-Clause

"""Install the Debian packages a Makefile target needs, with apt (the Makefile runs this with the
system's python3, before .venv exists: the standard library only).

    python3 software/apt_packages.py sim     what ./sim.py needs: a C++ compiler for Verilator's
                                             models, python3-venv for .venv
    python3 software/apt_packages.py test    also the kernel headers, the User-Mode Linux kernel's
                                             source and build tools, the network and debug tools

On Debian 12, `test` also installs Linux 6.12's headers from bookworm-backports. When no apt source names
bookworm-backports, one is added beside the machine's own Debian 12 source, with the same mirror and
keyring (hostlink names no package host of its own). When the machine has no Debian 12 source to derive it
from, this says so and goes on without the 6.12 headers.
"""

import glob
import os
import subprocess
import sys

SIM_PACKAGES  = ["build-essential", "python3-venv"]
TEST_PACKAGES = SIM_PACKAGES + [
    "linux-headers-amd64", "kmod",          # The generated driver, built against the running kernel's headers.
    "libevent-dev", "libjson-c-dev", "zlib1g-dev", "iproute2",  # ./sim.py udp: LiteX's TAP, network namespaces.
    "linux-source-6.12", "flex", "bison", "bc",  # The User-Mode Linux kernel of ./sim.py driver (Debian 12's
                                                 # security updates carry 6.12; bookworm-backports too).
    "gdb",                                  # The kernel's stacks when a run of it hangs (sim/uml/bench.py).
    "pkgconf",                              # libhostlink's hostlink.pc, as a user's build finds it.
    "gcc-arm-linux-gnueabihf", "libc6-dev-armhf-cross",  # The Zynq's ARM: its kernel (make arm-kernel),
                                                         # modules and user-level driver.
]
# Debian's headers package depends on its kernel image, which is installed with it but never booted here.
BACKPORTS_PACKAGES = ["linux-headers-6.12-amd64"]

SOURCES_LIST   = "/etc/apt/sources.list"
SOURCES_DIR    = "/etc/apt/sources.list.d"
BACKPORTS_FILE = os.path.join(SOURCES_DIR, "hostlink-bookworm-backports.sources")

# apt sources --------------------------------------------------------------------------------------

def parse_one_line(text):
    """Entries of a one-line-style sources.list, as deb822-like dicts."""
    entries = []
    for line in text.splitlines():
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        fields = line.split()
        options = {}
        if len(fields) > 1 and fields[1].startswith("["):
            end = next(i for i, f in enumerate(fields) if f.endswith("]"))
            for option in " ".join(fields[1:end + 1]).strip("[]").split():
                key, _, value = option.partition("=")
                options[key.lower()] = value
            fields = [fields[0]] + fields[end + 1:]
        if len(fields) < 4:
            continue
        entries.append({"types": [fields[0]], "uris": [fields[1]], "suites": [fields[2]],
                        "components": fields[3:], "signed-by": options.get("signed-by")})
    return entries


def parse_deb822(text):
    """Stanzas of a deb822 .sources file, as dicts of lowercased keys (Signed-By may be a path or an
    inline key: it is kept as written)."""
    entries = []
    for stanza in text.split("\n\n"):
        fields, key = {}, None
        for line in stanza.splitlines():
            if line.startswith("#"):
                continue
            if line[:1] in (" ", "\t") and key:
                fields[key] += "\n" + line
                continue
            key, sep, value = line.partition(":")
            if not sep:
                key = None
                continue
            key = key.strip().lower()
            fields[key] = value.strip()
        if not fields or fields.get("enabled", "yes").lower() == "no":
            continue
        entries.append({"types": fields.get("types", "").split(), "uris": fields.get("uris", "").split(),
                        "suites": fields.get("suites", "").split(),
                        "components": fields.get("components", "").split(),
                        "signed-by": fields.get("signed-by")})
    return entries


def read_sources(root="/"):
    """Every apt source entry of the machine (sources.list and sources.list.d/)."""
    entries = []
    paths = [os.path.join(root, SOURCES_LIST.lstrip("/"))]
    paths += sorted(glob.glob(os.path.join(root, SOURCES_DIR.lstrip("/"), "*.list")))
    paths += sorted(glob.glob(os.path.join(root, SOURCES_DIR.lstrip("/"), "*.sources")))
    for path in paths:
        try:
            with open(path) as f:
                text = f.read()
        except OSError:
            continue
        entries += parse_deb822(text) if path.endswith(".sources") else parse_one_line(text)
    return entries


def backports_source(entries):
    """The deb822 text of a bookworm-backports source on the mirror (and keyring) of the machine's own
    Debian 12 source; None if some source names bookworm-backports already ("" then), or if there is no
    Debian 12 source to derive it from."""
    if any("bookworm-backports" in e["suites"] for e in entries):
        return ""
    for entry in entries:
        if "deb" in entry["types"] and "bookworm" in entry["suites"] and "main" in entry["components"]:
            lines = ["# Added by hostlink (software/apt_packages.py) for Linux 6.12's headers: the machine's own",
                     "# Debian 12 source, suite bookworm-backports.",
                     "Types: deb", f"URIs: {' '.join(entry['uris'])}", "Suites: bookworm-backports",
                     "Components: main"]
            if entry["signed-by"]:
                lines.append(f"Signed-By: {entry['signed-by']}")
            return "\n".join(lines) + "\n"
    return None

# Install ------------------------------------------------------------------------------------------

def installed(package):
    status = subprocess.run(["dpkg-query", "-W", "-f=${Status}", package], capture_output=True, text=True)
    return status.returncode == 0 and "install ok installed" in status.stdout


def is_bookworm():
    try:
        with open("/etc/os-release") as f:
            return "VERSION_CODENAME=bookworm" in f.read().split()
    except OSError:
        return False


def main(argv):
    if len(argv) != 1 or argv[0] not in ("sim", "test"):
        print("usage: apt_packages.py sim|test", file=sys.stderr)
        return 2
    packages = list(SIM_PACKAGES if argv[0] == "sim" else TEST_PACKAGES)
    sudo = [] if os.geteuid() == 0 else ["sudo"]
    if argv[0] == "test" and is_bookworm():
        source = backports_source(read_sources())
        if source is None:
            print(f"apt_packages.py: no Debian 12 (bookworm, main) source in {SOURCES_LIST} or {SOURCES_DIR}/ "
                  f"to add bookworm-backports beside: Linux 6.12's headers are left out, the driver builds "
                  f"against the installed headers only", file=sys.stderr)
        else:
            packages += BACKPORTS_PACKAGES
            if source:
                print(f"apt_packages.py: adding bookworm-backports, on this machine's Debian mirror, to apt's "
                      f"sources ({BACKPORTS_FILE}) for Linux 6.12's headers")
                subprocess.run(sudo + ["tee", BACKPORTS_FILE], input=source, text=True,
                               stdout=subprocess.DEVNULL, check=True)
    missing = [p for p in packages if not installed(p)]
    if not missing:
        return 0
    print(f"apt_packages.py: installing Debian packages: {' '.join(missing)}")
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    subprocess.run(sudo + ["apt-get", "update", "-qq"], check=True, env=env)
    subprocess.run(sudo + ["apt-get", "install", "-y", "-qq", *missing], check=True, env=env)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
