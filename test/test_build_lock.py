# This file is part of hostlink.
# Copyright (c) 2026 hostlink developers
# SPDX-License-Identifier: BSD-2-Clause

"""Two runs that share a build folder (two shells, two test workers) take turns: the second waits for the
first to finish with it and says so; a run that dies does not leave the folder locked."""

import os
import signal
import subprocess
import sys

from hostlink.sim.build_lock import held


def hold_in_child(folder, finished_file):
    """A process that holds the folder's lock until told to finish, then writes `finished_file` before
    letting go."""
    script = (f"import sys\nfrom hostlink.sim.build_lock import held\n"
              f"with held({folder!r}):\n"
              f"    print('held', flush=True)\n"
              f"    sys.stdin.readline()\n"
              f"    open({finished_file!r}, 'w').write('done')\n")
    child = subprocess.Popen([sys.executable, "-c", script], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
        text=True)
    assert child.stdout.readline() == "held\n"
    return child


def test_a_second_run_waits_for_the_first_and_says_so(tmp_path):
    folder, finished = str(tmp_path / "soc"), str(tmp_path / "finished")
    first = hold_in_child(folder, finished)
    said = []

    def say(message):
        said.append(message)
        first.stdin.write("go\n")       # the first finishes only once the second has said it waits
        first.stdin.flush()

    with held(folder, say):
        assert os.path.exists(finished)
    assert said == [f"waiting for another run using {folder} to finish with it"]
    assert first.wait(timeout=30) == 0


def test_a_run_that_dies_leaves_the_folder_free(tmp_path):
    folder = str(tmp_path / "soc")
    first = hold_in_child(folder, str(tmp_path / "finished"))
    first.send_signal(signal.SIGKILL)
    first.wait(timeout=30)
    said = []
    with held(folder, said.append):
        pass
    assert said == []
