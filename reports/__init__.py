# This file is part of hostlink.
# Copyright (c) 2026 hostlink developers
# SPDX-License-Identifier: BSD-2-Clause

"""Development reports that build designs and print figures (area, Fmax, simulation speed) and `make bench`,
which re-measures every published figure; they never assert. Not part of the installed package (nothing in
hostlink imports them): run them from the repository's root, `python -m reports.<name>`."""

# First: from a Python without the project's packages, this re-runs the report with the project's .venv.
import hostlink   # noqa: E402,F401
