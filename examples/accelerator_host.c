/* This file is part of hostlink.
 * Copyright (c) 2026 hostlink developers
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * The host side of the example accelerator (examples/accelerator.py) in C, on libhostlink: samples out,
 * results back, every result checked (y = a*x + b on 16-bit samples). Copy it to start your program.
 *
 *     accelerator_host --setup                    once, as root: the channel to the core, a and b
 *     accelerator_host --size 1048576             as a member of the device's group
 *     accelerator_host --size 1048576 --zero-copy samples made and results checked in the driver's ring
 *
 * Built with the driver's user tools (<driver>/user/libhostlink); `pkg-config --cflags --libs hostlink`
 * once the library is installed.
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "hostlink.h"

/* The samples: a pseudo-random sequence, made again to check the results in order. */
static uint16_t next_sample(uint32_t *seed)
{
	*seed = *seed * 1103515245 + 12345;
	return *seed >> 16;
}

/* Zero-copy: samples written straight into the driver's h2c buffers, results checked in its c2h buffers.
 * Sends while there is room; waits for results only when it cannot send. Returns the wrong samples or
 * a negative errno. */
static long zero_copy(struct hostlink_channel *ch, size_t size, int a, int b)
{
	size_t total = size / hostlink_buffer_size(ch), sent = 0, got = 0, words = hostlink_buffer_size(ch) / 2;
	uint32_t made = 1, checked = 1;
	long wrong = 0;
	int ret;

	if ((ret = hostlink_start(ch, HOSTLINK_C2H)) < 0)   /* Armed first: it waits for results. */
		return ret;
	while (got < total) {
		uint16_t *p;
		ssize_t n = 0, m;
		if (sent < total) {
			n = hostlink_get_buffers(ch, HOSTLINK_H2C, (void **)&p, total - sent, 0);
			if (n < 0)
				return n;
			for (size_t i = 0; i < n * words; i++)
				p[i] = next_sample(&made);
			if ((ret = hostlink_put_buffers(ch, HOSTLINK_H2C, n)) < 0)
				return ret;
			sent += n;
		}
		m = hostlink_get_buffers(ch, HOSTLINK_C2H, (void **)&p, total - got, n && sent < total ? 0 : -1);
		if (m < 0)
			return m;
		for (size_t i = 0; i < m * words; i++)
			wrong += p[i] != (uint16_t)(a * (int16_t)next_sample(&checked) + b);
		if ((ret = hostlink_put_buffers(ch, HOSTLINK_C2H, m)) < 0)
			return ret;
		got += m;
	}
	return wrong;
}

int main(int argc, char **argv)
{
	struct hostlink_channel *ch;
	int channel = 0, setup = 0, zero = 0, a = 3, b = 0x1234, i, ret;
	size_t size = 1 << 20, wrong = 0;
	uint64_t c0 = 0, c1 = 0;
	uint16_t *samples, *results;
	uint32_t seed = 1;
	struct timespec t0, t1;
	char name[64];

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--setup"))
			setup = 1;
		else if (!strcmp(argv[i], "--size") && i + 1 < argc)
			size = strtoul(argv[++i], NULL, 0);
		else if (!strcmp(argv[i], "--channel") && i + 1 < argc)
			channel = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--zero-copy"))
			zero = 1;
		else {
			fprintf(stderr, "usage: accelerator_host [--setup] [--size BYTES] [--channel N] [--zero-copy]\n");
			return 2;
		}
	}
	if (setup) {
		ret = hostlink_open(&ch, channel, HOSTLINK_FLOW_LOOP, HOSTLINK_C2H, 5000);
		if (ret < 0) {
			fprintf(stderr, "accelerator_host: %s\n", hostlink_open_error());
			return 1;
		}
		/* The channel's number on its board: node numbers go on across boards. */
		snprintf(name, sizeof(name), "pcie_dma%d_user_select", hostlink_channel_index(ch));
		if ((ret = hostlink_register_write(ch, name, 1)) < 0 ||
		    (ret = hostlink_register_write(ch, "user_core_a", a)) < 0 ||
		    (ret = hostlink_register_write(ch, "user_core_b", b)) < 0 ||
		    (ret = hostlink_register_write(ch, "user_core_throttle", 0)) < 0)
			fprintf(stderr, "accelerator_host: %s\n", hostlink_error(ch));
		else
			printf("channel %d to the accelerator, a = %d, b = %d (%s%s%s)\n",
			       hostlink_channel_index(ch), a, b, hostlink_path(ch), *hostlink_board(ch) ? ", board " : "",
			       hostlink_board(ch));
		hostlink_close(ch);
		return ret < 0;
	}
	ret = hostlink_open(&ch, channel, HOSTLINK_FLOW_LOSSLESS, HOSTLINK_H2C | HOSTLINK_C2H, 120000);
	if (ret < 0) {
		fprintf(stderr, "accelerator_host: %s\n", hostlink_open_error());
		return 1;
	}
	samples = malloc(size);
	results = malloc(size);
	for (i = 0; i < (int)(size / 2); i++)
		samples[i] = next_sample(&seed);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	hostlink_cycles(ch, &c0);   /* Device time: the SoC's cycle counter (0 on a SoC without). */
	if (zero) {
		long n = zero_copy(ch, size, a, b);
		ret = n < 0 ? (int)n : 0;
		wrong = n < 0 ? 0 : (size_t)n;
	} else {
		ret = hostlink_transfer(ch, samples, size, results, size);
	}
	hostlink_cycles(ch, &c1);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	if (ret < 0) {
		fprintf(stderr, "accelerator_host: %s\n", hostlink_error(ch));
		hostlink_close(ch);
		return 1;
	}
	for (i = 0; !zero && i < (int)(size / 2); i++)
		wrong += results[i] != (uint16_t)(a * (int16_t)samples[i] + b);
	printf("%zu bytes through the accelerator and back%s in %.3f s, %llu device cycles (C): %zu samples wrong "
	       "(%s)\n", size, zero ? " zero-copy" : "",
	       (t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9, (unsigned long long)(c1 - c0), wrong,
	       hostlink_path(ch));
	hostlink_close(ch);
	free(samples);
	free(results);
	return wrong != 0;
}
