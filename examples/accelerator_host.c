/* This file is part of hostlink.
 * Copyright (c) 2026 hostlink developers
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * The host side of the example accelerator (examples/accelerator.py) in C, on libhostlink: samples out,
 * results back, every result checked (y = a*x + b on 16-bit samples). Copy it to start your program.
 *
 *     accelerator_host --setup            once, as root: the channel to the core, a and b
 *     accelerator_host --size 1048576     as a member of the device's group
 *
 * Built with the driver's user tools (<driver>/user/libhostlink); `pkg-config --cflags --libs hostlink`
 * once the library is installed.
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "hostlink.h"

int main(int argc, char **argv)
{
	struct hostlink_channel *ch;
	int channel = 0, setup = 0, a = 3, b = 0x1234, i, ret;
	size_t size = 1 << 20, wrong = 0;
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
		else {
			fprintf(stderr, "usage: accelerator_host [--setup] [--size BYTES] [--channel N]\n");
			return 2;
		}
	}
	if (setup) {
		ret = hostlink_open(&ch, channel, HOSTLINK_FLOW_LOOP, HOSTLINK_C2H, 5000);
		if (ret < 0) {
			fprintf(stderr, "accelerator_host: %s\n", hostlink_open_error());
			return 1;
		}
		snprintf(name, sizeof(name), "pcie_dma%d_user_select", channel);
		if ((ret = hostlink_register_write(ch, name, 1)) < 0 ||
		    (ret = hostlink_register_write(ch, "user_core_a", a)) < 0 ||
		    (ret = hostlink_register_write(ch, "user_core_b", b)) < 0 ||
		    (ret = hostlink_register_write(ch, "user_core_throttle", 0)) < 0)
			fprintf(stderr, "accelerator_host: %s\n", hostlink_error(ch));
		else
			printf("channel %d to the accelerator, a = %d, b = %d\n", channel, a, b);
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
	for (i = 0; i < (int)(size / 2); i++) {
		seed = seed * 1103515245 + 12345;
		samples[i] = seed >> 16;
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	ret = hostlink_transfer(ch, samples, size, results, size);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	if (ret < 0) {
		fprintf(stderr, "accelerator_host: %s\n", hostlink_error(ch));
		hostlink_close(ch);
		return 1;
	}
	for (i = 0; i < (int)(size / 2); i++)
		wrong += results[i] != (uint16_t)(a * (int16_t)samples[i] + b);
	printf("%zu bytes through the accelerator and back in %.3f s (C): %zu samples wrong\n", size,
	       (t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9, wrong);
	hostlink_close(ch);
	free(samples);
	free(results);
	return wrong != 0;
}
