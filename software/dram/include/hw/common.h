/*
 * This file is part of hostlink.
 * Copyright (c) 2026 hostlink developers
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * What LiteX's generated csr.h (with access functions) and LiteDRAM's generated sdram_phy.h expect
 * from <hw/common.h>, for a program on the host instead of a CPU in the SoC: every register access
 * leaves through the callbacks of the bring-up being run (hostlink_dram.c), which reach BAR0
 * through the LitePCIe driver on a board, or the simulated SoC in the simulation.
 */

#ifndef HOSTLINK_DRAM_HW_COMMON_H
#define HOSTLINK_DRAM_HW_COMMON_H

#include <stdint.h>

#define CSR_ACCESSORS_DEFINED

uint32_t hostlink_dram_csr_read(unsigned long addr);
void hostlink_dram_csr_write(uint32_t value, unsigned long addr);

static inline void csr_write_simple(unsigned long v, unsigned long a)
{
	hostlink_dram_csr_write((uint32_t)v, a);
}

static inline unsigned long csr_read_simple(unsigned long a)
{
	return hostlink_dram_csr_read(a);
}

#endif /* HOSTLINK_DRAM_HW_COMMON_H */
