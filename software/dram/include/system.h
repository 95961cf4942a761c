/*
 * This file is part of hostlink.
 * Copyright (c) 2026 hostlink developers
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * LiteX's generated csr.h includes the CPU's <system.h>; on the host there is no CPU to describe.
 */
