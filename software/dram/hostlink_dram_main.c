/*
 * This file is part of hostlink.
 * Copyright (c) 2026 hostlink developers
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * hostlink_dram: DDR3 bring-up of a CPU-less hostlink SoC (--with-dram) from the host, through the
 * LitePCIe driver (/dev/litepcieN). Built for one SoC by `./targets/<board>.py --with-dram --driver`.
 *
 *   init      DDR3 initialisation: reset, mode registers, ZQ calibration (LiteDRAM's generated
 *             sequence for this SoC); the DFI stays in software control.
 *   level     write and read levelling where the PHY supports them, a write/read check of every
 *             byte lane, then the DFI back to the controller.
 *   memtest   the board-side memory test (LiteDRAM's BIST) over a DRAM range.
 *   status    the DRAM's settings and who controls the DFI.
 *   bringup   init, level and memtest, in that order (what a board needs after loading a bitstream).
 */

#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "liblitepcie.h"

#include "hostlink_dram.h"

/* Register access through the driver ---------------------------------------------------------- */

static uint32_t device_read(void *ctx, uint32_t addr)
{
	return litepcie_readl(*(int *)ctx, addr);
}

static void device_write(void *ctx, uint32_t addr, uint32_t value)
{
	litepcie_writel(*(int *)ctx, addr, value);
}

static void host_delay(void *ctx, uint32_t units)
{
	struct timespec start, now;
	uint64_t ns = (uint64_t)units * 10, elapsed;
	(void)ctx;
	/* Short waits spin: a sleep costs tens of microseconds more than the 150 ns it was asked for,
	 * and levelling asks for thousands of them. */
	if (ns >= 100000) {
		struct timespec wait = { (time_t)(ns / 1000000000u), (long)(ns % 1000000000u) };
		while (nanosleep(&wait, &wait) != 0 && errno == EINTR)
			;
		return;
	}
	clock_gettime(CLOCK_MONOTONIC, &start);
	do {
		clock_gettime(CLOCK_MONOTONIC, &now);
		elapsed = (uint64_t)(now.tv_sec - start.tv_sec) * 1000000000u + (uint64_t)(now.tv_nsec - start.tv_nsec);
	} while (elapsed < ns);
}

static void print_stdout(void *ctx, const char *text)
{
	(void)ctx;
	fputs(text, stdout);
	fflush(stdout);
}

/* Command line -------------------------------------------------------------------------------- */

static void usage(FILE *out)
{
	fprintf(out,
		"usage: hostlink_dram [-c DEVICE] COMMAND [-b BASE] [-l LENGTH]\n"
		"DDR3 bring-up of this SoC's DRAM from the host, through the LitePCIe driver.\n"
		"\n"
		"commands:\n"
		"  init      DDR3 initialisation: reset, mode registers, ZQ calibration (the DFI stays in\n"
		"            software control)\n"
		"  level     write/read levelling where the PHY supports them, a write/read check of every\n"
		"            byte lane, then the DFI back to the controller (hardware control)\n"
		"  memtest   write a pseudo-random pattern over [BASE, BASE+LENGTH) and read it back\n"
		"  status    the DRAM's settings and who controls the DFI\n"
		"  bringup   init, level and memtest, in that order\n"
		"\n"
		"options:\n"
		"  -c DEVICE  LitePCIe device (default /dev/" HOSTLINK_DRIVER_NAME "0)\n"
		"  -b BASE    memory test start, bytes (default 0)\n"
		"  -l LENGTH  memory test length, bytes (default: the whole DRAM, at most 2 GiB)\n"
		"  -h, --help this help\n"
		"BASE and LENGTH are multiples of the DRAM's native word (%u bytes); K, M and G suffixes work.\n",
		hostlink_dram_native_bytes());
}

static int parse_size(const char *text, uint64_t *value)
{
	char *end;
	unsigned long long v;
	unsigned shift = 0;
	errno = 0;
	v = strtoull(text, &end, 0);
	if (errno || end == text || text[0] == '-')
		return -1;
	switch (*end) {
	case 'K': case 'k': shift = 10; end++; break;
	case 'M': case 'm': shift = 20; end++; break;
	case 'G': case 'g': shift = 30; end++; break;
	default: break;
	}
	if (*end || v > (ULLONG_MAX >> shift))   /* A suffix must not push the value past 64 bits. */
		return -1;
	v <<= shift;
	*value = v;
	return 0;
}

int main(int argc, char **argv)
{
	const char *device = "/dev/" HOSTLINK_DRIVER_NAME "0";   /* The driver it is built with (config.h). */
	const char *command;
	uint64_t base = 0, length = 0;
	int have_length = 0, opt, fd, result = HOSTLINK_DRAM_OK;
	struct hostlink_dram_io io;

	/* glibc's getopt moves the options after the command to the front: both orders work. */
	static const struct option long_options[] = {
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	while ((opt = getopt_long(argc, argv, "c:b:l:h", long_options, NULL)) != -1) {
		switch (opt) {
		case 'c': device = optarg; break;
		case 'b':
			if (parse_size(optarg, &base)) {
				fprintf(stderr, "error: -b needs a size in bytes (e.g. 0x1000, 64K), not '%s'\n", optarg);
				return 2;
			}
			break;
		case 'l':
			if (parse_size(optarg, &length)) {
				fprintf(stderr, "error: -l needs a size in bytes (e.g. 4096, 16M), not '%s'\n", optarg);
				return 2;
			}
			have_length = 1;
			break;
		case 'h': usage(stdout); return 0;
		default:  usage(stderr); return 2;
		}
	}
	if (optind >= argc) {
		fprintf(stderr, "error: a command is needed (init, level, memtest, status, bringup; -h for help)\n");
		return 2;
	}
	command = argv[optind++];
	if (optind < argc) {
		fprintf(stderr, "error: unexpected argument '%s'\n", argv[optind]);
		return 2;
	}
	if (strcmp(command, "init") && strcmp(command, "level") && strcmp(command, "memtest")
	    && strcmp(command, "status") && strcmp(command, "bringup")) {
		fprintf(stderr, "error: unknown command '%s' (init, level, memtest, status, bringup; -h for help)\n", command);
		return 2;
	}
	if (!hostlink_dram_present()) {
		fprintf(stderr, "error: %s; regenerate the driver with ./targets/<board>.py --with-dram --driver\n",
			hostlink_dram_strerror(HOSTLINK_DRAM_NO_DRAM));
		return 1;
	}
	if (!have_length) {
		uint64_t whole = hostlink_dram_size();
		length = whole > (2ull << 30) ? (2ull << 30) : whole;
		length = length > base ? length - base : 0;
	}

	fd = open(device, O_RDWR | O_CLOEXEC);
	if (fd < 0) {
		fprintf(stderr, "error: cannot open %s: %s (is the litepcie module loaded? see doc/dram.md)\n",
			device, strerror(errno));
		return 1;
	}
	io.read  = device_read;
	io.write = device_write;
	io.delay = host_delay;
	io.print = print_stdout;
	io.ctx   = &fd;

	if (!strcmp(command, "status")) {
		result = hostlink_dram_status(&io);
	} else {
		if (!strcmp(command, "init") || !strcmp(command, "bringup"))
			result = hostlink_dram_init(&io);
		if (result == HOSTLINK_DRAM_OK && (!strcmp(command, "level") || !strcmp(command, "bringup")))
			result = hostlink_dram_level(&io);
		if (result == HOSTLINK_DRAM_OK && (!strcmp(command, "memtest") || !strcmp(command, "bringup"))) {
			uint32_t errors = 0;
			/* About 100 MB/s or better, plus a second: in units of 10 ns, capped to what fits. */
			uint64_t timeout = (length / 100000000u + 1) * 100000000u;
			result = hostlink_dram_memtest(&io, base, length, timeout > UINT32_MAX ? UINT32_MAX : (uint32_t)timeout,
				&errors);
		}
	}
	close(fd);
	if (result != HOSTLINK_DRAM_OK) {
		fprintf(stderr, "error: %s: %s\n", command, hostlink_dram_strerror(result));
		return 1;
	}
	return 0;
}
