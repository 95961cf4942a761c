# This file is part of hostlink.
# Copyright (c) 2026 hostlink developers
# SPDX-License-Identifier: BSD-2-Clause

"""The models the Zynq SoC is simulated against, apart from its benches: the PS's DDR behind HP0
(`memory`) and the PS's defaults and register access (`ps_model`)."""
