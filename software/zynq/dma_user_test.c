// SPDX-License-Identifier: BSD-2-Clause
/*
 * This file is part of hostlink.
 * Copyright (c) 2026 hostlink developers
 *
 * dma_user_test: a user-level driver of the Zynq SoC's AXI DMA (PG021's direct register mode), seed 003's
 * polling variant, and its test. It programs the DMA itself and polls its status; the kernel only gives it
 * the registers and a DMA buffer (/dev/hostlink_dma_user, hostlink_dma_user.c). No interrupt is enabled.
 *
 *     dma_user_test [--sched] BYTES CHUNK BUFFERS [BUFFERS ...]
 *     dma_user_test [--sched] --sweep BLOCK SIZE [SIZE ...]
 *     dma_user_test --errors
 *
 * For each BUFFERS (1: single buffering, 2: double), sends BYTES from the program's memory out through MM2S
 * while S2MM takes them back (the SoC's streams loop MM2S into S2MM), CHUNK bytes per transfer through the
 * DMA buffer: copy in, start S2MM then MM2S, poll both status registers until the transfer's end, copy out.
 * Double buffering copies the next chunk in while one is in flight. Every byte received must be the byte
 * sent. Prints one "ok:" line per run with the register reads (status polls among them) and writes, or a
 * "FAIL:" line; exits 1 if any run failed.
 *
 * --sched: seed 003's scheduled user-level driver: between two status polls the program gives the CPU to the
 * scheduler (sched_yield), where the polling driver (the default) polls without pause.
 *
 * --sweep: seed 003's loop-back figures, one call per size and mode: single buffer Unique (the whole size in one
 * transfer, or in the fewest the DMA buffer holds), and for sizes over BLOCK up to 16 blocks, Blocks (BLOCK bytes
 * a transfer) single and double buffered. One "call:" line each, in the order of the calls.
 *
 * In the simulation the program reports its copies into and out of the DMA buffer and its yields to the
 * simulation's cost device (hostlink_sim_cost.h, through /dev/hostlink_dma_user), and marks where each call
 * begins and where its data is in the program's buffer; on a board those reports are skipped.
 *
 * --errors: what the DMA says of a bad request and of a failing bus, and that the next transfer after a reset
 * is clean: an address not aligned to the bus, a LENGTH written while a transfer runs, a slave error on a read
 * and on a write (the simulation's HP0 model answers the next burst SLVERR when the file hp0_fault in the
 * current folder says "read" or "write"), an address outside the DDR (DECERR); and a LENGTH of 0, which PG021
 * makes no error: only a non-zero LENGTH starts a transfer, so the channel stays running, not idle, with
 * nothing flagged. One "ok:" or "FAIL:" line each.
 */

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sched.h>
#include <sys/mman.h>
#include <unistd.h>

#include "hostlink_dma_user.h"
#include "hostlink_sim_cost.h"

enum {
	MM2S_DMACR = 0x00, MM2S_DMASR = 0x04, MM2S_SA = 0x18, MM2S_LENGTH = 0x28,
	S2MM_DMACR = 0x30, S2MM_DMASR = 0x34, S2MM_DA = 0x48, S2MM_LENGTH = 0x58,
};
#define DMACR_RS      0x1
#define DMACR_RESET   0x4
#define DMASR_HALTED  0x1
#define DMASR_IDLE    0x2
#define DMASR_INT_ERR 0x10
#define DMASR_SLV_ERR 0x20
#define DMASR_DEC_ERR 0x40
#define DMASR_ERRORS  0x70     /* DMAIntErr, DMASlvErr, DMADecErr */
#define DMASR_IOC_IRQ 0x1000
#define DMASR_ERR_IRQ 0x4000
#define POLL_LIMIT    10000000
#define MAX_LENGTH    ((1u << 26) - 1)   /* LENGTH's 26 bits (xlnx,sg-length-width) */
#define BLOCKS_UP_TO  16   /* --sweep: Blocks modes up to 16 blocks (beyond, the same per byte, at length) */

static int fd;
static uint64_t buffer_size;
static unsigned long reads, writes, polls, yields;
static int scheduled;       /* --sched: yield between polls */
static int costs = 1;       /* the simulation's cost device is there (until it answers ENODEV) */

/* Report `count` of a cost category to the simulation (hostlink_sim_cost.h); nothing on a board. */
static void charge(unsigned int category, uint32_t count)
{
	if (costs && count && pwrite(fd, &count, 4, HOSTLINK_DMA_USER_COST_OFFSET + HOSTLINK_SIM_COST_CHARGE +
				      4 * category) != 4)
		costs = 0;
}

/* A mark, then a read (writes are posted: the read makes sure the mark has arrived before the program goes on). */
static void mark(uint32_t value)
{
	uint32_t now;

	if (costs && (pwrite(fd, &value, 4, HOSTLINK_DMA_USER_COST_OFFSET + HOSTLINK_SIM_COST_MARK) != 4 ||
		      pread(fd, &now, 4, HOSTLINK_DMA_USER_COST_OFFSET + HOSTLINK_SIM_COST_TIME_LO) != 4))
		costs = 0;
}

/* memcpy into or out of the DMA buffer, reported. */
static void copy_to_dma(void *to, const void *from, size_t n)
{
	memcpy(to, from, n);
	charge(HOSTLINK_SIM_COST_COPY_TO_COHERENT, n);
}

static void copy_from_dma(void *to, const void *from, size_t n)
{
	memcpy(to, from, n);
	charge(HOSTLINK_SIM_COST_COPY_FROM_COHERENT, n);
}

static int read_register(uint32_t offset, uint32_t *value)
{
	reads++;
	if (pread(fd, value, 4, offset) != 4) {
		fprintf(stderr, "register read at 0x%02x: %s\n", offset, strerror(errno));
		return -1;
	}
	return 0;
}

static int write_register(uint32_t offset, uint32_t value)
{
	writes++;
	if (pwrite(fd, &value, 4, offset) != 4) {
		fprintf(stderr, "register write at 0x%02x: %s\n", offset, strerror(errno));
		return -1;
	}
	return 0;
}

/* Reset both channels (the bit reads 1 until done), then run them, interrupts off. */
static int start_dma(void)
{
	uint32_t control = DMACR_RESET;
	long i;

	if (write_register(MM2S_DMACR, DMACR_RESET))
		return -1;
	for (i = 0; i < POLL_LIMIT && (control & DMACR_RESET); i++)
		if (read_register(MM2S_DMACR, &control))
			return -1;
	if (control & DMACR_RESET) {
		fprintf(stderr, "the DMA did not come out of its reset\n");
		return -1;
	}
	return write_register(MM2S_DMACR, DMACR_RS) || write_register(S2MM_DMACR, DMACR_RS);
}

/* One transfer: S2MM first (the loopback's data has somewhere to go), then MM2S. */
static int start_chunk(uint64_t tx, uint64_t rx, uint32_t length)
{
	return write_register(S2MM_DA, (uint32_t)rx) || write_register(S2MM_LENGTH, length) ||
	       write_register(MM2S_SA, (uint32_t)tx) || write_register(MM2S_LENGTH, length);
}

/* Poll a channel's status until its transfer ends; clear it. */
static int wait_channel(uint32_t status_register, const char *name)
{
	uint32_t status = 0;
	long i;

	for (i = 0; i < POLL_LIMIT && !(status & (DMASR_IOC_IRQ | DMASR_ERR_IRQ)); i++) {
		polls++;
		if (read_register(status_register, &status))
			return -1;
		if (scheduled && !(status & (DMASR_IOC_IRQ | DMASR_ERR_IRQ))) {
			yields++;
			charge(HOSTLINK_SIM_COST_SCHED_YIELD, 1);
			sched_yield();
		}
	}
	if (!(status & (DMASR_IOC_IRQ | DMASR_ERR_IRQ))) {
		fprintf(stderr, "%s: no end of transfer after %d status reads\n", name, POLL_LIMIT);
		return -1;
	}
	if (write_register(status_register, status & (DMASR_IOC_IRQ | DMASR_ERR_IRQ)))
		return -1;
	if (status & (DMASR_ERR_IRQ | DMASR_ERRORS)) {
		fprintf(stderr, "%s: the DMA reports an error, status 0x%08x\n", name, status);
		return -1;
	}
	return 0;
}

static int wait_chunk(uint32_t length)
{
	uint32_t received;

	if (wait_channel(MM2S_DMASR, "MM2S") || wait_channel(S2MM_DMASR, "S2MM") ||
	    read_register(S2MM_LENGTH, &received))
		return -1;
	if (received != length) {
		fprintf(stderr, "S2MM received a packet of %u bytes, not %u\n", received, length);
		return -1;
	}
	return 0;
}

static void fill(uint8_t *data, size_t size, uint32_t seed)
{
	size_t i;

	for (i = 0; i < size; i += 4) {
		uint32_t word = (uint32_t)((i / 4) * 2654435761u + seed);
		memcpy(data + i, &word, size - i < 4 ? size - i : 4);
	}
}

static int loop(size_t size, uint32_t chunk, int buffers, uint8_t *window, uint64_t bus, uint32_t seed)
{
	uint8_t *sent = malloc(size), *received = calloc(1, size);
	/* The DMA buffer: `buffers` chunks to send, then as many to receive into. */
	uint8_t *tx[2] = { window, window + chunk }, *rx[2] = { window + buffers * chunk, window + (buffers + 1) * chunk };
	uint64_t tx_bus[2] = { bus, bus + chunk }, rx_bus[2] = { bus + buffers * chunk, bus + (buffers + 1) * chunk };
	size_t chunks = (size + chunk - 1) / chunk, i, wrong = 0;
	int err = -1;

	if (!sent || !received)
		goto out;
	fill(sent, size, seed);
	if (start_dma())
		goto out;
	mark(HOSTLINK_SIM_COST_MARK_BEGIN);
	if (buffers == 1) {
		for (i = 0; i < chunks; i++) {
			uint32_t n = size - i * chunk < chunk ? size - i * chunk : chunk;

			copy_to_dma(tx[0], sent + i * chunk, n);
			if (start_chunk(tx_bus[0], rx_bus[0], n) || wait_chunk(n))
				goto out;
			copy_from_dma(received + i * chunk, rx[0], n);
		}
	} else {
		/* The next chunk is copied in while one is in flight; its transfer starts as soon as that one ends. */
		uint32_t n = size < chunk ? size : chunk;

		copy_to_dma(tx[0], sent, n);
		if (start_chunk(tx_bus[0], rx_bus[0], n))
			goto out;
		for (i = 0; i < chunks; i++) {
			uint32_t next = i + 1 < chunks ? (size - (i + 1) * chunk < chunk ? size - (i + 1) * chunk : chunk) : 0;

			if (next)
				copy_to_dma(tx[(i + 1) % 2], sent + (i + 1) * chunk, next);
			if (wait_chunk(n))
				goto out;
			if (next && start_chunk(tx_bus[(i + 1) % 2], rx_bus[(i + 1) % 2], next))
				goto out;
			copy_from_dma(received + i * chunk, rx[i % 2], n);
			n = next;
		}
	}
	mark(HOSTLINK_SIM_COST_MARK_END);
	if (memcmp(sent, received, size))
		for (i = 0; i < size; i++)
			wrong += sent[i] != received[i];
	if (wrong)
		fprintf(stderr, "%zu of %zu bytes received wrong\n", wrong, size);
	err = wrong ? -1 : 0;
out:
	free(sent);
	free(received);
	return err;
}

/* Poll a channel until its transfer ends; its status, or 0 if it never ended. */
static uint32_t end_status(uint32_t status_register)
{
	uint32_t status = 0;
	long i;

	for (i = 0; i < POLL_LIMIT && !(status & (DMASR_IOC_IRQ | DMASR_ERR_IRQ)); i++)
		if (read_register(status_register, &status))
			return 0;
	return status & (DMASR_IOC_IRQ | DMASR_ERR_IRQ) ? status : 0;
}

/* Ask the simulation's HP0 model to answer the next `kind` ("read" or "write") burst SLVERR; wait until armed. */
static int arm_fault(const char *kind)
{
	FILE *f = fopen("hp0_fault", "w");
	int i;

	if (!f || fputs(kind, f) < 0 || fclose(f)) {
		fprintf(stderr, "hp0_fault: %s (this needs the simulation)\n", strerror(errno));
		return -1;
	}
	for (i = 0; i < 60000 && access("hp0_fault", F_OK) == 0; i++)
		usleep(1000);
	if (access("hp0_fault", F_OK) == 0) {
		fprintf(stderr, "hp0_fault: the simulation did not take it\n");
		return -1;
	}
	return 0;
}

static const char *bits(uint32_t status, char *text, size_t size)
{
	snprintf(text, size, "%s%s%s%s%s%s", status & DMASR_ERR_IRQ ? " Err_Irq" : "", status & DMASR_IOC_IRQ ? " IOC_Irq" : "",
		 status & DMASR_INT_ERR ? " DMAIntErr" : "", status & DMASR_SLV_ERR ? " DMASlvErr" : "",
		 status & DMASR_DEC_ERR ? " DMADecErr" : "", status & DMASR_HALTED ? " Halted" : "");
	return text;
}

enum error_case { UNALIGNED, ZERO_LENGTH, LENGTH_WHILE_RUNNING, READ_SLVERR, WRITE_SLVERR, OUTSIDE_DDR, CASES };

#define DMASR_FLAGS (DMASR_ERR_IRQ | DMASR_IOC_IRQ | DMASR_ERRORS)

static const struct {
	const char *name;
	uint32_t status_register;     /* the channel that must report */
	uint32_t expected;            /* its DMASR_FLAGS, exactly */
} error_cases[CASES] = {
	/* MM2S's DMAIntErr is fixed at 0 in direct register mode (PG021): Err_Irq alone. */
	[UNALIGNED]            = { "an address not aligned to the bus (MM2S_SA 4 bytes off)", MM2S_DMASR, DMASR_ERR_IRQ },
	[ZERO_LENGTH]          = { "a LENGTH of 0", MM2S_DMASR, 0 },
	[LENGTH_WHILE_RUNNING] = { "a LENGTH written while a transfer runs (S2MM)", S2MM_DMASR, DMASR_ERR_IRQ | DMASR_INT_ERR },
	[READ_SLVERR]          = { "a slave error on a read (HP0 answers SLVERR)", MM2S_DMASR, DMASR_ERR_IRQ | DMASR_SLV_ERR },
	[WRITE_SLVERR]         = { "a slave error on a write (HP0 answers SLVERR)", S2MM_DMASR, DMASR_ERR_IRQ | DMASR_SLV_ERR },
	[OUTSIDE_DDR]          = { "an address outside the DDR (MM2S_SA 0xfff00000: DECERR)", MM2S_DMASR,
				   DMASR_ERR_IRQ | DMASR_DEC_ERR },
};

/* One bad request or failing bus; returns the status of the channel that must report it (0: it never ended). */
static uint32_t provoke(enum error_case c, uint64_t tx, uint64_t rx)
{
	const uint32_t n = 4096;

	if (start_dma())
		return 0;
	switch (c) {
	case UNALIGNED:
		if (write_register(MM2S_SA, (uint32_t)tx + 4) || write_register(MM2S_LENGTH, 64))
			return 0;
		break;
	case ZERO_LENGTH: {
		/* Nothing to wait for: the channel must stay as it is over these reads. */
		uint32_t status = 0;
		int i;

		if (write_register(MM2S_SA, (uint32_t)tx) || write_register(MM2S_LENGTH, 0))
			return 0;
		for (i = 0; i < 100; i++)
			if (read_register(MM2S_DMASR, &status) || (status & (DMASR_FLAGS | DMASR_HALTED | DMASR_IDLE)))
				break;
		return status | (i < 100 ? DMASR_ERR_IRQ : 0);   /* If the DMA moved, a status the check refuses. */
	}
	case LENGTH_WHILE_RUNNING:
		/* S2MM runs, waiting for its stream; the second LENGTH is refused, the running transfer goes on. */
		if (write_register(S2MM_DA, (uint32_t)rx) || write_register(S2MM_LENGTH, n) ||
		    write_register(S2MM_LENGTH, n) || write_register(MM2S_SA, (uint32_t)tx) || write_register(MM2S_LENGTH, n))
			return 0;
		if (!(end_status(MM2S_DMASR) & DMASR_IOC_IRQ))
			return 0;
		break;
	case READ_SLVERR:
	case WRITE_SLVERR:
		if (arm_fault(c == READ_SLVERR ? "read" : "write") || start_chunk(tx, rx, n))
			return 0;
		/* The failing channel still moves all its data; the other one ends cleanly. */
		if (!(end_status(c == READ_SLVERR ? S2MM_DMASR : MM2S_DMASR) & DMASR_IOC_IRQ))
			return 0;
		break;
	case OUTSIDE_DDR:
		/* MM2S still hands its (zero) data to the stream: S2MM takes it. */
		if (write_register(S2MM_DA, (uint32_t)rx) || write_register(S2MM_LENGTH, 64) ||
		    write_register(MM2S_SA, 0xfff00000u) || write_register(MM2S_LENGTH, 64))
			return 0;
		if (!(end_status(S2MM_DMASR) & DMASR_IOC_IRQ))
			return 0;
		break;
	default:
		return 0;
	}
	return end_status(error_cases[c].status_register);
}

/* Whether the program can send `size` bytes in chunks of `chunk`: the DMA's LENGTH, the buffer's four parts. */
static int chunk_allowed(size_t size, uint64_t chunk, int buffers)
{
	return size && chunk && chunk % 8 == 0 && chunk <= MAX_LENGTH && 2 * buffers * chunk <= buffer_size;
}

static int errors(uint8_t *window, uint64_t bus)
{
	const uint32_t clean = 64 << 10;
	int failed = 0, c;

	if (chunk_allowed(1 << 20, 1u << 26, 1)) {
		printf("FAIL: a chunk of %u bytes, over the DMA's 26-bit LENGTH, was allowed\n", 1u << 26);
		failed = 1;
	} else {
		printf("ok: a chunk of %u bytes, over the DMA's 26-bit LENGTH (at most %u): refused\n", 1u << 26, MAX_LENGTH);
	}

	for (c = 0; c < CASES; c++) {
		uint32_t status = provoke(c, bus, bus + 2 * clean);
		uint32_t halted;
		char text[128], wanted[128];

		/* (A DMASR of 0 is no answer: IRQThresholdSts reads 1.) */
		if (!status || (c != ZERO_LENGTH ? (status & DMASR_FLAGS) != error_cases[c].expected :
					       (status & (DMASR_FLAGS | DMASR_HALTED | DMASR_IDLE)) != 0)) {
			printf("FAIL: %s: DMASR 0x%08x (%s), expected%s\n", error_cases[c].name, status,
			       status ? bits(status, text, sizeof(text)) : "the transfer never ended",
			       c == ZERO_LENGTH ? " nothing (running, not idle)" :
						  bits(error_cases[c].expected, wanted, sizeof(wanted)));
			failed = 1;
			continue;
		}
		/* The channel stopped (RS cleared): it says Halted. (A LENGTH of 0 leaves it running.) */
		if (c != ZERO_LENGTH &&
		    (read_register(error_cases[c].status_register, &halted) || !(halted & DMASR_HALTED))) {
			printf("FAIL: %s: the channel did not halt (DMASR 0x%08x)\n", error_cases[c].name, halted);
			failed = 1;
			continue;
		}
		/* start_dma() resets the DMA; then a clean transfer. */
		if (loop(clean, clean, 1, window, bus, 100 + c)) {
			printf("FAIL: %s: the next transfer (%u bytes after a reset) was not clean\n", error_cases[c].name, clean);
			failed = 1;
			continue;
		}
		printf("ok: %s: DMASR 0x%08x (%s); after a reset, %u bytes each way clean\n", error_cases[c].name, status,
		       c == ZERO_LENGTH ? "nothing started, nothing flagged" : bits(status, text, sizeof(text)) + 1, clean);
	}
	return failed;
}

/* The largest chunk `buffers` buffers of the DMA buffer hold, in whole 8-byte beats, at most `want`. */
static uint32_t fitting_chunk(uint64_t want, int buffers)
{
	uint64_t most = buffer_size / (2 * buffers) & ~(uint64_t)7;

	if (most > MAX_LENGTH)
		most = MAX_LENGTH & ~7u;
	return want < most ? want : most;
}

/* One call, timed by the simulation between its marks: its "call:" line, 0 or -1. */
static int sweep_call(const char *driver, size_t size, const char *mode, uint32_t chunk, int buffers,
		      uint8_t *window, uint64_t bus, uint32_t seed)
{
	int err;

	reads = writes = polls = yields = 0;
	err = loop(size, chunk, buffers, window, bus, seed);
	printf("call: driver=%s size=%zu mode=%s chunk=%u buffers=%d reads=%lu polls=%lu writes=%lu yields=%lu %s\n",
	       driver, size, mode, chunk, buffers, reads, polls, writes, yields, err ? "FAIL" : "ok");
	return err;
}

static int sweep(int argc, char **argv, uint8_t *window, uint64_t bus)
{
	const char *driver = scheduled ? "user_scheduled" : "user_polling";
	uint32_t block = strtoul(argv[0], NULL, 0);
	int failed = 0, i;

	if (!block || block % 8 || fitting_chunk(block, 2) != block) {
		fprintf(stderr, "BLOCK must be a multiple of 8 bytes that two buffers of the DMA buffer hold, not %u\n",
			block);
		return 2;
	}
	for (i = 1; i < argc; i++) {
		size_t size = strtoull(argv[i], NULL, 0);

		if (!size || size % 8) {
			fprintf(stderr, "SIZE must be a positive multiple of 8 bytes, not %s\n", argv[i]);
			return 2;
		}
		failed |= sweep_call(driver, size, "unique", fitting_chunk(size, 1), 1, window, bus, i);
		if (size > block && size <= BLOCKS_UP_TO * block) {
			failed |= sweep_call(driver, size, "blocks", block, 1, window, bus, 1000 + i);
			failed |= sweep_call(driver, size, "blocks", block, 2, window, bus, 2000 + i);
		}
	}
	return failed;
}

int main(int argc, char **argv)
{
	struct hostlink_dma_user_buffer buffer;
	size_t size = 0;
	uint32_t chunk = 0;
	uint8_t *window;
	int failed = 0, i, check_errors, sweeping;

	setvbuf(stdout, NULL, _IOLBF, 0);     /* Each line as it comes, also into a file. */
	if (argc > 1 && !strcmp(argv[1], "--sched")) {
		scheduled = 1;
		argv++;
		argc--;
	}
	check_errors = argc == 2 && !strcmp(argv[1], "--errors");
	sweeping = argc >= 4 && !strcmp(argv[1], "--sweep");
	if (argc < 4 && !check_errors) {
		fprintf(stderr, "usage: %s [--sched] BYTES CHUNK BUFFERS [BUFFERS ...] | [--sched] --sweep BLOCK SIZE "
			"[SIZE ...] | --errors\n", argv[0]);
		return 2;
	}
	if (!check_errors && !sweeping) {
		size = strtoull(argv[1], NULL, 0);
		chunk = strtoul(argv[2], NULL, 0);
	}
	fd = open("/dev/hostlink_dma_user", O_RDWR);
	if (fd < 0) {
		fprintf(stderr, "/dev/hostlink_dma_user: %s (is hostlink_dma_user.ko bound to the DMA?)\n", strerror(errno));
		return 1;
	}
	if (ioctl(fd, HOSTLINK_DMA_USER_BUFFER, &buffer)) {
		fprintf(stderr, "HOSTLINK_DMA_USER_BUFFER: %s\n", strerror(errno));
		return 1;
	}
	buffer_size = buffer.size;
	if (!check_errors && !sweeping && !chunk_allowed(size, chunk, 2)) {
		fprintf(stderr, "CHUNK must be a multiple of 8 bytes, at most %u (the DMA's 26-bit LENGTH) and a quarter of "
			"the %llu-byte DMA buffer, not %u\n", MAX_LENGTH, (unsigned long long)buffer.size, chunk);
		return 2;
	}
	window = mmap(NULL, buffer.size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (window == MAP_FAILED) {
		fprintf(stderr, "mmap of the DMA buffer: %s\n", strerror(errno));
		return 1;
	}
	if (check_errors)
		failed = errors(window, buffer.bus_address);
	else if (sweeping)
		failed = sweep(argc - 2, argv + 2, window, buffer.bus_address);
	for (i = 3; i < argc && !check_errors && !sweeping; i++) {
		int buffers = atoi(argv[i]);
		const char *name = buffers == 1 ? "single" : "double";
		size_t chunks = (size + chunk - 1) / chunk;

		reads = writes = polls = yields = 0;
		if ((buffers != 1 && buffers != 2) || loop(size, chunk, buffers, window, buffer.bus_address, i)) {
			printf("FAIL: %s buffering, %zu bytes in chunks of %u\n", name, size, chunk);
			failed = 1;
			continue;
		}
		printf("ok: %s buffering: %zu bytes each way in %zu chunks of %u, every byte checked; %lu register reads "
		       "(%lu status polls) and %lu writes, no interrupt%s\n", name, size, chunks, chunk, reads, polls, writes,
		       scheduled ? "; yielded between polls" : "");
	}
	munmap(window, buffer.size);
	close(fd);
	return failed;
}
