/*
 * This file is part of hostlink.
 * Copyright (c) 2026 hostlink developers
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * DDR3 bring-up of a CPU-less hostlink SoC from the host, through its CSRs.
 *
 * The SoC's DRAM controller (LiteDRAM) comes out of reset with its DFI injector in hardware control
 * and the DDR3 neither initialised nor levelled. These functions do what LiteX's BIOS does from a CPU,
 * from the host instead: the initialisation sequence that LiteDRAM generates for this SoC
 * (generated/sdram_phy.h), the 7-series PHY's levelling, hand-back to the controller, and the
 * board-side memory test. Every register access goes through `struct hostlink_dram_io`, so the same
 * code runs on a board (hostlink_dram_main.c, through the LitePCIe driver) and against the simulated
 * SoC (libhostlink_dram.so, loaded by hostlink.sim.pcie.dram_bringup).
 */

#ifndef HOSTLINK_DRAM_H
#define HOSTLINK_DRAM_H

#include <stdint.h>

struct hostlink_dram_io {
	/* A 32-bit CSR at `addr`, an address of this SoC's generated csr.h (CSR_..._ADDR). */
	uint32_t (*read)(void *ctx, uint32_t addr);
	void     (*write)(void *ctx, uint32_t addr, uint32_t value);
	/* Wait at least `units` x 10 ns. The generated initialisation sequence counts its waits in the
	 * BIOS's delay loop iterations; 10 ns each is longer than one iteration of any LiteX CPU, so its
	 * 50000 after releasing RESET# give the 500 us that JEDEC asks for before CKE. */
	void     (*delay)(void *ctx, uint32_t units);
	/* Progress and scan results, one or more whole lines. */
	void     (*print)(void *ctx, const char *text);
	void     *ctx;
};

enum {
	HOSTLINK_DRAM_OK          =  0,
	HOSTLINK_DRAM_NO_DRAM     = -1,  /* The SoC was generated without --with-dram. */
	HOSTLINK_DRAM_LEVELING    = -2,  /* A byte lane found no working delay. */
	HOSTLINK_DRAM_DATA        = -3,  /* Data written through the DFI injector read back wrong. */
	HOSTLINK_DRAM_MEMTEST     = -4,  /* The memory test counted errors. */
	HOSTLINK_DRAM_TIMEOUT     = -5,  /* A memory test engine never said done. */
	HOSTLINK_DRAM_BAD_REQUEST = -6,  /* A memory test range outside the DRAM or not aligned. */
};

/* One line saying what a return code means. */
const char *hostlink_dram_strerror(int code);

/* 1 when this SoC has a DRAM controller (the tool was generated from a SoC with --with-dram). */
int hostlink_dram_present(void);

/* The DRAM's size and its controller's native word, in bytes (0 without DRAM). */
uint64_t hostlink_dram_size(void);
uint32_t hostlink_dram_native_bytes(void);

/* DFI injector to software control, DDR3 held in reset, PHY reset, then LiteDRAM's generated
 * initialisation sequence (RESET# release, CKE, MR2, MR3, MR1, MR0, ZQCL). The controller stays
 * off the DFI (software control) until hostlink_dram_level() hands it back. */
int hostlink_dram_init(const struct hostlink_dram_io *io);

/* Write levelling and read levelling (bitslip and delay per byte lane, with the write latency),
 * where the PHY supports them, each scan printed; then a write/read check of every byte lane through
 * the DFI injector, and the DFI handed back to the controller (hardware control). */
int hostlink_dram_level(const struct hostlink_dram_io *io);

/* DFI injector back to the controller, without levelling. */
int hostlink_dram_hardware_control(const struct hostlink_dram_io *io);

/* The board-side memory test (LiteDRAM's BIST): write a pseudo-random pattern over
 * [base, base + length) and read it back. `errors` gets the checker's count. `timeout_units` bounds
 * the wait for each engine, in the units of io->delay. */
int hostlink_dram_memtest(const struct hostlink_dram_io *io, uint64_t base, uint64_t length,
	uint32_t timeout_units, uint32_t *errors);

/* Print the DRAM's settings and the DFI injector's state. */
int hostlink_dram_status(const struct hostlink_dram_io *io);

#endif /* HOSTLINK_DRAM_H */
