# This file is part of hostlink.
# Copyright (c) 2026 hostlink developers
# SPDX-License-Identifier: BSD-2-Clause

"""`python -m hostlink.software.driver build DIR`: compile a generated driver (hostlink.software.driver.main)."""

import sys

from hostlink.software.driver import main

if __name__ == "__main__":
    sys.exit(main())
