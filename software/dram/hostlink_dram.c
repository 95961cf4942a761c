/*
 * This file is part of hostlink.
 * Copyright (c) 2026 hostlink developers
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * DDR3 bring-up from the host (see hostlink_dram.h). Built against the headers generated from one
 * SoC (generated/): csr.h with LiteX's access functions, soc.h, and, when the SoC has a DRAM,
 * LiteDRAM's sdram_phy.h (the initialisation sequence and the PHY's capabilities) and
 * dram_settings.h (names for the messages).
 *
 * Levelling, per byte lane ("module" in LiteDRAM's words: the DQ byte under one DQS):
 *
 * - Write levelling (PHYs with write-levelling delays): the DDR3 in write-levelling mode (MR1 bit 7)
 *   samples CK on each DQS strobe and returns the sample on DQ. DQS is delayed tap by tap; the
 *   strobe belongs at the start of the longest run of ones (CK seen high), i.e. where DQS meets the
 *   rising edge of CK. DQ keeps its offset to DQS (both are moved together).
 * - Read levelling with the write latency (PHYs with read delays and bitslips): for each write
 *   bitslip (one tCK apart) and each read bitslip, every read delay tap is tried with a write/read
 *   of pseudo-random data through the DFI injector, checked on the lane's bits only. The lane takes
 *   the bitslips with the widest run of error-free taps and the middle of that run.
 * - A final write/read check of every lane with the chosen settings, then the DFI goes back to the
 *   controller.
 *
 * A PHY without delays (LiteDRAM's simulation model) skips the scans, saying why, and still gets
 * the final check.
 */

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "hostlink_dram.h"

#include <generated/csr.h>
#include <generated/soc.h>
#ifdef CSR_SDRAM_BASE
#include <generated/sdram_phy.h>
#include <generated/dram_settings.h>
#endif

/* Register access ------------------------------------------------------------------------------ */

/* The bring-up being run: LiteX's generated accessors take no context. One bring-up at a time. */
static const struct hostlink_dram_io *current;

uint32_t hostlink_dram_csr_read(unsigned long addr)
{
	return current->read(current->ctx, (uint32_t)addr);
}

void hostlink_dram_csr_write(uint32_t value, unsigned long addr)
{
	current->write(current->ctx, (uint32_t)addr, value);
}

/* sdram_phy.h's waits. */
void cdelay(int units)
{
	if (units > 0)
		current->delay(current->ctx, (uint32_t)units);
}

const char *hostlink_dram_strerror(int code)
{
	switch (code) {
	case HOSTLINK_DRAM_OK:          return "success";
	case HOSTLINK_DRAM_NO_DRAM:     return "this SoC has no DRAM (it was generated without --with-dram)";
	case HOSTLINK_DRAM_LEVELING:    return "levelling failed: a byte lane has no working delay";
	case HOSTLINK_DRAM_DATA:        return "data written to the DRAM read back wrong";
	case HOSTLINK_DRAM_MEMTEST:     return "the memory test found errors";
	case HOSTLINK_DRAM_TIMEOUT:     return "the memory test did not finish in time";
	case HOSTLINK_DRAM_BAD_REQUEST: return "memory test range outside the DRAM or not a multiple of its native word";
	default:                        return "unknown error";
	}
}

#ifndef CSR_SDRAM_BASE

/* A SoC without DRAM --------------------------------------------------------------------------- */

int hostlink_dram_present(void) { return 0; }
uint64_t hostlink_dram_size(void) { return 0; }
uint32_t hostlink_dram_native_bytes(void) { return 0; }
int hostlink_dram_init(const struct hostlink_dram_io *io) { (void)io; return HOSTLINK_DRAM_NO_DRAM; }
int hostlink_dram_level(const struct hostlink_dram_io *io) { (void)io; return HOSTLINK_DRAM_NO_DRAM; }
int hostlink_dram_hardware_control(const struct hostlink_dram_io *io) { (void)io; return HOSTLINK_DRAM_NO_DRAM; }
int hostlink_dram_status(const struct hostlink_dram_io *io) { (void)io; return HOSTLINK_DRAM_NO_DRAM; }
int hostlink_dram_memtest(const struct hostlink_dram_io *io, uint64_t base, uint64_t length,
	uint32_t timeout_units, uint32_t *errors)
{
	(void)io; (void)base; (void)length; (void)timeout_units; (void)errors;
	return HOSTLINK_DRAM_NO_DRAM;
}

#else

int hostlink_dram_present(void) { return 1; }
uint64_t hostlink_dram_size(void) { return (uint64_t)DRAM_SIZE; }
uint32_t hostlink_dram_native_bytes(void) { return DRAM_NATIVE_BYTES; }

static void say(const char *format, ...)
{
	char line[512];
	va_list args;
	va_start(args, format);
	vsnprintf(line, sizeof(line), format, args);
	va_end(args);
	current->print(current->ctx, line);
}

/* DFI injector --------------------------------------------------------------------------------- */

#if SDRAM_PHY_PHASES != 1 && SDRAM_PHY_PHASES != 2 && SDRAM_PHY_PHASES != 4
#error "hostlink_dram supports DFI injectors with 1, 2 or 4 phases"
#endif

#define DFII_WORDS         CSR_SDRAM_DFII_PI0_WRDATA_SIZE   /* 32-bit CSR words per phase's data. */
#define DFII_CONTROL_SOFTWARE (DFII_CONTROL_CKE | DFII_CONTROL_ODT | DFII_CONTROL_RESET_N)
#define LANE_BITS          SDRAM_PHY_DQ_DQS_RATIO
#define LANES              SDRAM_PHY_MODULES
/* Helpers that only the levelling of a PHY with delays uses (not the simulation model's). */
#define LEVELING_ONLY      __attribute__((unused))

struct phase_registers {
	uint32_t command, issue, address, baddress, wrdata, rddata;
};

#define PHASE_REGISTERS(n) { CSR_SDRAM_DFII_PI##n##_COMMAND_ADDR, CSR_SDRAM_DFII_PI##n##_COMMAND_ISSUE_ADDR, \
	CSR_SDRAM_DFII_PI##n##_ADDRESS_ADDR, CSR_SDRAM_DFII_PI##n##_BADDRESS_ADDR, \
	CSR_SDRAM_DFII_PI##n##_WRDATA_ADDR, CSR_SDRAM_DFII_PI##n##_RDDATA_ADDR }

static const struct phase_registers phases[SDRAM_PHY_PHASES] = {
	PHASE_REGISTERS(0),
#if SDRAM_PHY_PHASES > 1
	PHASE_REGISTERS(1),
#endif
#if SDRAM_PHY_PHASES > 2
	PHASE_REGISTERS(2),
	PHASE_REGISTERS(3),
#endif
};

static void dfii_command(int phase, uint32_t address, uint32_t bank, uint32_t command)
{
	hostlink_dram_csr_write(address, phases[phase].address);
	hostlink_dram_csr_write(bank, phases[phase].baddress);
	hostlink_dram_csr_write(command, phases[phase].command);
	hostlink_dram_csr_write(1, phases[phase].issue);
}

static int read_phase(void)
{
#ifdef CSR_DDRPHY_RDPHASE_ADDR
	return (int)ddrphy_rdphase_read();
#else
	return SDRAM_PHY_RDPHASE;
#endif
}

static int write_phase(void)
{
#ifdef CSR_DDRPHY_WRPHASE_ADDR
	return (int)ddrphy_wrphase_read();
#else
	return SDRAM_PHY_WRPHASE;
#endif
}

LEVELING_ONLY static void mode_register(int reg, uint32_t value)
{
	dfii_command(0, value, (uint32_t)reg, DFII_COMMAND_RAS | DFII_COMMAND_CAS | DFII_COMMAND_WE | DFII_COMMAND_CS);
}

/* One lane's bits of one DFI phase's data: `edge` 0 is the low half of the phase's word (the first
 * DQ transfer), 1 the high half. CSR words come most significant first. */
static uint32_t lane_bits(const uint32_t *words, int lane, int edge)
{
	int offset = edge * SDRAM_PHY_DATABITS + lane * LANE_BITS;
	uint32_t word = words[DFII_WORDS - 1 - offset / 32];
	return (word >> (offset % 32)) & ((1u << LANE_BITS) - 1);
}

static int popcount32(uint32_t x)
{
	int n = 0;
	for (; x; x &= x - 1)
		n++;
	return n;
}

static uint32_t xorshift32(uint32_t *state)
{
	uint32_t x = *state;
	x ^= x << 13;
	x ^= x >> 17;
	x ^= x << 5;
	return *state = x;
}

/* Write pseudo-random data to row 0, bank 0, column 0 through the DFI injector, read it back, and add
 * each lane's wrong bits to errors[lane]: one write and one read check every lane at once. */
static void pattern_errors(uint32_t seed, int errors[LANES])
{
	uint32_t written[SDRAM_PHY_PHASES][DFII_WORDS];
	uint32_t read[SDRAM_PHY_PHASES][DFII_WORDS];
	uint32_t state = seed ? seed : 1;
	int p, w, lane;

	for (p = 0; p < SDRAM_PHY_PHASES; p++)
		for (w = 0; w < DFII_WORDS; w++) {
			written[p][w] = xorshift32(&state);
			hostlink_dram_csr_write(written[p][w], phases[p].wrdata + 4 * w);
		}
	dfii_command(0, 0, 0, DFII_COMMAND_RAS | DFII_COMMAND_CS);                              /* Activate. */
	cdelay(15);
	dfii_command(write_phase(), 0, 0, DFII_COMMAND_CAS | DFII_COMMAND_WE | DFII_COMMAND_CS | DFII_COMMAND_WRDATA);
	cdelay(15);
	dfii_command(read_phase(), 0, 0, DFII_COMMAND_CAS | DFII_COMMAND_CS | DFII_COMMAND_RDDATA);
	cdelay(15);
	dfii_command(0, 0, 0, DFII_COMMAND_RAS | DFII_COMMAND_WE | DFII_COMMAND_CS);             /* Precharge. */
	cdelay(15);

	for (p = 0; p < SDRAM_PHY_PHASES; p++)
		for (w = 0; w < DFII_WORDS; w++)
			read[p][w] = hostlink_dram_csr_read(phases[p].rddata + 4 * w);
	for (p = 0; p < SDRAM_PHY_PHASES; p++)
		for (lane = 0; lane < LANES; lane++)
			for (w = 0; w < 2; w++)
				errors[lane] += popcount32(lane_bits(written[p], lane, w) ^ lane_bits(read[p], lane, w));
}

/* Three different patterns: one could match a lane's data shifted by a bitslip by chance. */
static const uint32_t pattern_seeds[] = { 0x2a, 0x54, 0x24 };

static void lane_errors(int errors[LANES])
{
	unsigned i;
	memset(errors, 0, LANES * sizeof(errors[0]));
	for (i = 0; i < sizeof(pattern_seeds) / sizeof(pattern_seeds[0]); i++)
		pattern_errors(pattern_seeds[i], errors);
}

/* Longest run of ones in `bits[0..n)`: its start in *start, its length returned. */
LEVELING_ONLY static int longest_run(const unsigned char *bits, int n, int *start)
{
	int i, run = 0, best = 0;
	*start = -1;
	for (i = 0; i < n; i++) {
		run = bits[i] ? run + 1 : 0;
		if (run > best) {
			best  = run;
			*start = i - run + 1;
		}
	}
	return best;
}

LEVELING_ONLY static void scan_line(char *text, const unsigned char *bits, int n)
{
	int i;
	for (i = 0; i < n; i++)
		text[i] = bits[i] ? '1' : '0';
	text[n] = '\0';
}

/* Control -------------------------------------------------------------------------------------- */

static void software_control(void)
{
	sdram_dfii_control_write(DFII_CONTROL_SOFTWARE);
}

int hostlink_dram_hardware_control(const struct hostlink_dram_io *io)
{
	current = io;
	sdram_dfii_control_write(DFII_CONTROL_SEL);
	say("DFI handed to the controller (hardware control).\n");
	return HOSTLINK_DRAM_OK;
}

int hostlink_dram_init(const struct hostlink_dram_io *io)
{
	current = io;
	say("DDR3 initialisation (%s, %s, CL %d, CWL %d).\n", HOSTLINK_DRAM_PHY, HOSTLINK_DRAM_MEMTYPE,
		SDRAM_PHY_CL, SDRAM_PHY_CWL);
	/* Software control with RESET# and CKE low: JEDEC wants RESET# held for 200 us before the
	 * sequence releases it, whatever state an earlier run left the DRAM in. */
	sdram_dfii_control_write(0);
	cdelay(20000);
#ifdef CSR_DDRPHY_RST_ADDR
	ddrphy_rst_write(1);
	cdelay(1000);
	ddrphy_rst_write(0);
	cdelay(1000);
#endif
#ifdef CSR_DDRPHY_RDPHASE_ADDR
	ddrphy_rdphase_write(SDRAM_PHY_RDPHASE);
#endif
#ifdef CSR_DDRPHY_WRPHASE_ADDR
	ddrphy_wrphase_write(SDRAM_PHY_WRPHASE);
#endif
	init_sequence();
	software_control();
	say("Mode registers loaded and ZQ calibrated; the DFI stays in software control for levelling.\n");
	return HOSTLINK_DRAM_OK;
}

/* Delay and bitslip steps, on the lanes of a mask ---------------------------------------------- */

#define LANE(lane) (1u << (lane))
#define ALL_LANES  ((1u << LANES) - 1)

#if defined(SDRAM_PHY_READ_LEVELING_CAPABLE) && defined(CSR_DDRPHY_RDLY_DQ_RST_ADDR)
#define HAVE_READ_LEVELING 1
/* Resets one delay or bitslip of the lanes (its CSR `reset`), then moves it `steps` steps (`step`). */
static void lane_steps(uint32_t lanes, void (*reset)(uint32_t), void (*step)(uint32_t), int steps)
{
	int i;
	ddrphy_dly_sel_write(lanes);
	reset(1);
	for (i = 0; i < steps; i++)
		step(1);
	ddrphy_dly_sel_write(0);
}

static void read_delay(uint32_t lanes, int taps)
{
	lane_steps(lanes, ddrphy_rdly_dq_rst_write, ddrphy_rdly_dq_inc_write, taps);
}

static void read_bitslip(uint32_t lanes, int bitslip)
{
	lane_steps(lanes, ddrphy_rdly_dq_bitslip_rst_write, ddrphy_rdly_dq_bitslip_write, bitslip);
}
#endif

#if defined(HAVE_READ_LEVELING) && defined(SDRAM_PHY_WRITE_LATENCY_CALIBRATION_CAPABLE) \
	&& defined(CSR_DDRPHY_WDLY_DQ_BITSLIP_ADDR)
#define HAVE_WRITE_LATENCY 1
static void write_bitslip(uint32_t lanes, int bitslip)
{
	lane_steps(lanes, ddrphy_wdly_dq_bitslip_rst_write, ddrphy_wdly_dq_bitslip_write, bitslip);
}
#endif

#if defined(SDRAM_PHY_WRITE_LEVELING_CAPABLE) && defined(CSR_DDRPHY_WLEVEL_EN_ADDR) \
	&& defined(CSR_DDRPHY_WDLY_DQS_RST_ADDR)
#define HAVE_WRITE_LEVELING 1
/* DQ and DQS move together: DQ keeps its offset to its strobe. The output delays settle slower than
 * a register write, hence the waits. `dq` and `dqs` are both resets or both steps. */
static void write_delays(uint32_t lanes, void (*dq)(uint32_t), void (*dqs)(uint32_t))
{
	ddrphy_dly_sel_write(lanes);
	dq(1);
	dqs(1);
	ddrphy_dly_sel_write(0);
	cdelay(100);
}

static void write_delay_step(uint32_t lanes)
{
	write_delays(lanes, ddrphy_wdly_dq_inc_write, ddrphy_wdly_dqs_inc_write);
}

static void write_delay(uint32_t lanes, int taps)
{
	int i;
	write_delays(lanes, ddrphy_wdly_dq_rst_write, ddrphy_wdly_dqs_rst_write);
	for (i = 0; i < taps; i++)
		write_delay_step(lanes);
}
#endif

/* Write levelling ------------------------------------------------------------------------------ */

#define WRITE_LEVELING_SAMPLES 8

#ifdef HAVE_WRITE_LEVELING
static int write_leveling(void)
{
	unsigned char ones[LANES][SDRAM_PHY_DELAYS];
	char text[SDRAM_PHY_DELAYS + 1];
	int lane, tap, sample, failed = 0;

	say("Write levelling (DQS against CK, %d taps, %d samples per tap, all lanes at once):\n",
		SDRAM_PHY_DELAYS, WRITE_LEVELING_SAMPLES);
	mode_register(DDRX_MR_WRLVL_ADDRESS, DDRX_MR_WRLVL_RESET | (1u << DDRX_MR_WRLVL_BIT));
	ddrphy_wlevel_en_write(1);
	cdelay(100);
	write_delay(ALL_LANES, 0);
	for (tap = 0; tap < SDRAM_PHY_DELAYS; tap++) {
		int high[LANES] = { 0 };
		for (sample = 0; sample < WRITE_LEVELING_SAMPLES; sample++) {
			uint32_t words[DFII_WORDS];
			int w;
			ddrphy_wlevel_strobe_write(1);
			cdelay(100);
			for (w = 0; w < DFII_WORDS; w++)
				words[w] = hostlink_dram_csr_read(phases[0].rddata + 4 * w);
			for (lane = 0; lane < LANES; lane++)
				high[lane] += (lane_bits(words, lane, 0) | lane_bits(words, lane, 1)) != 0;
		}
		for (lane = 0; lane < LANES; lane++)
			ones[lane][tap] = 2 * high[lane] > WRITE_LEVELING_SAMPLES;
		write_delay_step(ALL_LANES);
	}
	for (lane = 0; lane < LANES; lane++) {
		int start, length = longest_run(ones[lane], SDRAM_PHY_DELAYS, &start);
		scan_line(text, ones[lane], SDRAM_PHY_DELAYS);
		/* The rising edge of CK is where a run of ones starts after a zero; a run from tap 0 only
		 * counts when it is long enough for the edge to lie just before it. */
		if (length == 0 || (start == 0 && length <= SDRAM_PHY_DELAYS / 4)) {
			say("  m%d: |%s| no CK rising edge found\n", lane, text);
			write_delay(LANE(lane), 0);
			failed = 1;
		} else {
			say("  m%d: |%s| DQS delay %d taps\n", lane, text, start);
			write_delay(LANE(lane), start);
		}
	}
	mode_register(DDRX_MR_WRLVL_ADDRESS, DDRX_MR_WRLVL_RESET);
	ddrphy_wlevel_en_write(0);
	cdelay(100);
	return failed ? HOSTLINK_DRAM_LEVELING : HOSTLINK_DRAM_OK;
}
#endif

/* Read levelling (with the write latency) ------------------------------------------------------ */

#ifdef HAVE_READ_LEVELING
#ifdef HAVE_WRITE_LATENCY
#define WRITE_BITSLIP_STEP 2   /* Write bitslips count DDR half-cycles: one tCK is two. */
#define WRITE_BITSLIPS     SDRAM_PHY_BITSLIPS
#else
#define WRITE_BITSLIP_STEP 1
#define WRITE_BITSLIPS     1
#endif

#define WRITE_STEPS ((WRITE_BITSLIPS + WRITE_BITSLIP_STEP - 1) / WRITE_BITSLIP_STEP)

/* Every scan, printed lane by lane once all lanes have been scanned together. */
static unsigned char read_scans[WRITE_STEPS][SDRAM_PHY_BITSLIPS][LANES][SDRAM_PHY_DELAYS];

static int read_leveling(void)
{
	char text[SDRAM_PHY_DELAYS + 1];
	int best_length[LANES], best_start[LANES], best_read[LANES], best_write[LANES];
	int lane, step, rslip, tap, failed = 0;

	say("Read levelling (%d read bitslips x %d delay taps%s, 3 patterns per tap, all lanes at once):\n",
		SDRAM_PHY_BITSLIPS, SDRAM_PHY_DELAYS, WRITE_STEPS > 1 ? ", for each write bitslip" : "");
	for (step = 0; step < WRITE_STEPS; step++) {
#ifdef HAVE_WRITE_LATENCY
		write_bitslip(ALL_LANES, step * WRITE_BITSLIP_STEP);
#endif
		for (rslip = 0; rslip < SDRAM_PHY_BITSLIPS; rslip++) {
			read_bitslip(ALL_LANES, rslip);
			read_delay(ALL_LANES, 0);
			for (tap = 0; tap < SDRAM_PHY_DELAYS; tap++) {
				int errors[LANES];
				lane_errors(errors);
				for (lane = 0; lane < LANES; lane++)
					read_scans[step][rslip][lane][tap] = errors[lane] == 0;
				ddrphy_dly_sel_write(ALL_LANES);
				ddrphy_rdly_dq_inc_write(1);
				ddrphy_dly_sel_write(0);
			}
		}
	}
	for (lane = 0; lane < LANES; lane++) {
		best_length[lane] = 0;
		best_start[lane] = best_read[lane] = best_write[lane] = 0;
		for (step = 0; step < WRITE_STEPS; step++)
			for (rslip = 0; rslip < SDRAM_PHY_BITSLIPS; rslip++) {
				int start, length = longest_run(read_scans[step][rslip][lane], SDRAM_PHY_DELAYS, &start);
				scan_line(text, read_scans[step][rslip][lane], SDRAM_PHY_DELAYS);
				if (length > 0)
					say("  m%d w%d b%d: |%s| taps %d..%d\n", lane, step * WRITE_BITSLIP_STEP, rslip, text,
						start, start + length - 1);
				else
					say("  m%d w%d b%d: |%s| -\n", lane, step * WRITE_BITSLIP_STEP, rslip, text);
				if (length > best_length[lane]) {
					best_length[lane] = length;
					best_start[lane]  = start;
					best_read[lane]   = rslip;
					best_write[lane]  = step * WRITE_BITSLIP_STEP;
				}
			}
		if (best_length[lane] == 0) {
			say("  m%d: no working read window\n", lane);
			failed = 1;
			continue;
		}
#ifdef HAVE_WRITE_LATENCY
		write_bitslip(LANE(lane), best_write[lane]);
#endif
		read_bitslip(LANE(lane), best_read[lane]);
		read_delay(LANE(lane), best_start[lane] + best_length[lane] / 2);
		say("  m%d: write bitslip %d, read bitslip %d, read delay %d (window %d..%d)\n", lane,
			best_write[lane], best_read[lane], best_start[lane] + best_length[lane] / 2, best_start[lane],
			best_start[lane] + best_length[lane] - 1);
	}
	return failed ? HOSTLINK_DRAM_LEVELING : HOSTLINK_DRAM_OK;
}
#endif

int hostlink_dram_level(const struct hostlink_dram_io *io)
{
	int lane, result = HOSTLINK_DRAM_OK, data_errors = 0;
	int errors[LANES];
	current = io;
	software_control();
#ifdef HAVE_WRITE_LEVELING
	result = write_leveling();
#elif defined(SDRAM_PHY_WRITE_LEVELING_CAPABLE)
	say("Write levelling: skipped: %s says it can, but this SoC has no ddrphy_wlevel_*/wdly_dqs_* registers.\n",
		HOSTLINK_DRAM_PHY);
#else
	say("Write levelling: skipped: the PHY (%s) has no write-levelling delays "
		"(SDRAM_PHY_WRITE_LEVELING_CAPABLE not set in its sdram_phy.h).\n", HOSTLINK_DRAM_PHY);
#endif
	if (result == HOSTLINK_DRAM_OK) {
#ifdef HAVE_READ_LEVELING
		result = read_leveling();
#elif defined(SDRAM_PHY_READ_LEVELING_CAPABLE)
		say("Read levelling: skipped: %s says it can, but this SoC has no ddrphy_rdly_* registers.\n",
			HOSTLINK_DRAM_PHY);
#else
		say("Read levelling: skipped: the PHY (%s) has no read delays or bitslips "
			"(SDRAM_PHY_READ_LEVELING_CAPABLE not set in its sdram_phy.h).\n", HOSTLINK_DRAM_PHY);
#endif
	}
	if (result != HOSTLINK_DRAM_OK) {
		say("Levelling failed: the DFI stays in software control.\n");
		return result;
	}

	lane_errors(errors);
	say("Write/read check through the DFI injector, bit errors per lane:");
	for (lane = 0; lane < LANES; lane++) {
		data_errors += errors[lane];
		say(" m%d %d", lane, errors[lane]);
	}
	say("\n");
	if (data_errors) {
		say("Data check failed: the DFI stays in software control.\n");
		return HOSTLINK_DRAM_DATA;
	}
	return hostlink_dram_hardware_control(io);
}

/* Memory test ---------------------------------------------------------------------------------- */

static int wait_done(uint32_t done_addr, uint32_t timeout_units)
{
	uint32_t waited = 0;
	while (!(hostlink_dram_csr_read(done_addr) & 1)) {
		if (waited >= timeout_units)
			return HOSTLINK_DRAM_TIMEOUT;
		cdelay(100);
		waited += 100;
	}
	return HOSTLINK_DRAM_OK;
}

int hostlink_dram_memtest(const struct hostlink_dram_io *io, uint64_t base, uint64_t length,
	uint32_t timeout_units, uint32_t *errors)
{
	int result;
	current = io;
	/* Compared without computing base + length, which wraps for a base near 2^64. */
	if (length == 0 || base % DRAM_NATIVE_BYTES || length % DRAM_NATIVE_BYTES
	    || length > (uint64_t)DRAM_SIZE || base > (uint64_t)DRAM_SIZE - length
	    || length > 0xffffffffull || base > 0xffffffffull - length)
		return HOSTLINK_DRAM_BAD_REQUEST;

	sdram_generator_reset_write(1);
	sdram_generator_base_write((uint32_t)base);
	sdram_generator_end_write((uint32_t)(base + length));
	sdram_generator_length_write((uint32_t)length);
	sdram_generator_random_write(1);   /* Pseudo-random data at consecutive addresses. */
	sdram_checker_reset_write(1);
	sdram_checker_base_write((uint32_t)base);
	sdram_checker_end_write((uint32_t)(base + length));
	sdram_checker_length_write((uint32_t)length);
	sdram_checker_random_write(1);

	sdram_generator_start_write(1);
	result = wait_done(CSR_SDRAM_GENERATOR_DONE_ADDR, timeout_units);
	if (result != HOSTLINK_DRAM_OK)
		return result;
	sdram_checker_start_write(1);
	result = wait_done(CSR_SDRAM_CHECKER_DONE_ADDR, timeout_units);
	if (result != HOSTLINK_DRAM_OK)
		return result;
	*errors = sdram_checker_errors_read();
	say("Memory test: 0x%llx..0x%llx (%llu bytes): %u errors\n", (unsigned long long)base,
		(unsigned long long)(base + length - 1), (unsigned long long)length, *errors);
	return *errors ? HOSTLINK_DRAM_MEMTEST : HOSTLINK_DRAM_OK;
}

/* Status --------------------------------------------------------------------------------------- */

int hostlink_dram_status(const struct hostlink_dram_io *io)
{
	uint32_t control;
	current = io;
	control = sdram_dfii_control_read();
	say("DRAM: %llu MiB %s, PHY %s, %d-bit, %d DFI phases, CL %d, CWL %d, read phase %d, write phase %d\n",
		(unsigned long long)DRAM_SIZE >> 20, HOSTLINK_DRAM_MEMTYPE, HOSTLINK_DRAM_PHY,
		SDRAM_PHY_DATABITS, SDRAM_PHY_PHASES, SDRAM_PHY_CL, SDRAM_PHY_CWL, read_phase(), write_phase());
	say("Levelling: write %s, read %s, write latency %s\n",
#ifdef HAVE_WRITE_LEVELING
		"yes",
#else
		"no",
#endif
#ifdef HAVE_READ_LEVELING
		"yes",
#else
		"no",
#endif
#ifdef HAVE_WRITE_LATENCY
		"yes"
#else
		"no"
#endif
	);
	if (control & DFII_CONTROL_SEL)
		say("DFI: hardware control (the controller owns the DRAM)\n");
	else
		say("DFI: software control (CKE %d, ODT %d, RESET# %s)\n", !!(control & DFII_CONTROL_CKE),
			!!(control & DFII_CONTROL_ODT), control & DFII_CONTROL_RESET_N ? "released" : "asserted");
	return HOSTLINK_DRAM_OK;
}

#endif /* CSR_SDRAM_BASE */
