# This file is part of hostlink.
# Copyright (c) 2026 hostlink developers
# SPDX-License-Identifier: BSD-2-Clause

"""The `hostlink-udp` host tool (software/udp) as the simulation runs it: built into the build directory,
started inside the namespace, its JSON read when it ends."""

import json
import os
import subprocess

from hostlink import package_path

TOOL_SRC_DIR = package_path("software", "udp")

# Host tool ----------------------------------------------------------------------------------------

def build_tool(out_dir):
    r = subprocess.run(["make", "-s", "-C", TOOL_SRC_DIR, f"O={out_dir}"], capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"building hostlink-udp failed:\n{r.stdout}{r.stderr}")
    return os.path.join(out_dir, "hostlink-udp")


def start_tool(netns, argv):
    """Starts hostlink-udp in the namespace; returns once its socket is bound."""
    r, w = os.pipe()
    proc = netns.popen(list(argv) + ["--ready-fd", w, "--quiet"], pass_fds=(w,),
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    os.close(w)
    try:
        with os.fdopen(r) as ready:
            line = ready.readline()
    except BaseException:
        # Interrupted before the tool was handed over: nobody else would stop it.
        proc.kill()
        proc.wait()
        raise
    if line != "ready\n":
        out, err = proc.communicate()
        raise RuntimeError(f"hostlink-udp did not start: {err.strip() or out.strip()}")
    return proc


def finish_tool(proc, json_path, timeout):
    try:
        _, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        raise RuntimeError("hostlink-udp did not stop by itself")
    if proc.returncode not in (0, 1):
        raise RuntimeError(f"hostlink-udp failed ({proc.returncode}): {err.strip()}")
    with open(json_path) as f:
        return json.load(f)
