# This file is part of hostlink.
# Copyright (c) 2026 hostlink developers
# SPDX-License-Identifier: BSD-2-Clause

"""Benches and models only the tests use (imported as `benches.*`; pytest puts test/ on sys.path): they
are not part of the installed hostlink package."""
