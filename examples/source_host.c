/* This file is part of hostlink.
 * Copyright (c) 2026 hostlink developers
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * The host side of the example streaming source (examples/stream_source.py) in C, on libhostlink: receive
 * its counts in real-time or packets flow and report the rate, the drops and where they were. Run as root
 * (it sets the source's registers). Copy it to start your program.
 *
 *     source_host realtime BUFFERS RATE          BUFFERS buffers at RATE (the source's `rate` CSR)
 *     source_host packets PACKETS RATE SAMPLES   PACKETS packets of SAMPLES samples each
 *
 * Every count is checked: the data counts 32-bit words up from 0, so a gap is data lost, and it must be
 * exactly where and as much as a header says. Exits 1 if anything is wrong.
 */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hostlink.h"

static int setup(struct hostlink_channel *ch, uint32_t rate, uint32_t packet)
{
	if (hostlink_register_write(ch, "pcie_dma0_user_select", 1) < 0 ||
	    hostlink_register_write(ch, "user_core_rate", rate) < 0 ||
	    hostlink_register_write(ch, "user_core_packet", packet) < 0)
		return -1;
	return 0;
}

int main(int argc, char **argv)
{
	struct hostlink_channel *ch;
	struct hostlink_buffer_info info;
	struct hostlink_stats stats;
	int packets = argc == 5 && !strcmp(argv[1], "packets");
	long count, i, places = 0, wrong = 0;
	uint32_t expected = 0, overruns = 0, *data;
	uint64_t dropped = 0, bytes = 0, first_time = 0, last_time = 0, port_dropped = 0;
	uint32_t port_hi = 0, port_lo = 0, samples = 0;
	size_t capacity;

	if (!(argc == 4 && !strcmp(argv[1], "realtime")) && !packets) {
		fprintf(stderr, "usage: source_host realtime BUFFERS RATE | source_host packets PACKETS RATE SAMPLES\n");
		return 2;
	}
	count = atol(argv[2]);
	if (packets)
		samples = atoi(argv[4]);
	if (hostlink_open(&ch, 0, packets ? HOSTLINK_FLOW_PACKETS : HOSTLINK_FLOW_REALTIME, HOSTLINK_C2H,
			  300000) < 0) {
		fprintf(stderr, "source_host: %s\n", hostlink_open_error());
		return 1;
	}
	/* Packets: room for a small one to start with; a longer packet is kept by the library, and the room
	 * grows to take it (below). */
	capacity = packets ? 1024 : 64 * hostlink_buffer_size(ch);
	data = malloc(capacity);
	if (setup(ch, strtoul(argv[3], NULL, 0), samples) < 0)
		goto error;
	/* The DMA armed first, then the source. */
	if (hostlink_start(ch, HOSTLINK_C2H) < 0 || hostlink_register_write(ch, "user_core_enable", 1) < 0)
		goto error;
	for (i = 0; i < count; i++) {
		ssize_t n;
		uint32_t k;
		if (packets) {
			n = hostlink_read_packet(ch, data, capacity);
			if (n == -EMSGSIZE && hostlink_kept_packet_length(ch)) {
				uint32_t *more = realloc(data, hostlink_kept_packet_length(ch));
				if (!more)
					goto error;
				printf("  packet %ld: longer than %zu bytes, kept; room grown to %zu\n", i, capacity,
				       hostlink_kept_packet_length(ch));
				data = more;
				capacity = hostlink_kept_packet_length(ch);
				n = hostlink_read_packet(ch, data, capacity);
			}
		} else
			n = hostlink_read_buffer(ch, data, capacity, &info);
		if (n < 0)
			goto error;
		if (!packets) {
			uint32_t gap = (data[0] - expected) * 4u;
			if (info.sequence != (uint32_t)i || gap != info.dropped)
				wrong++;
			if (info.dropped) {
				if (places < 8)
					printf("  %llu bytes dropped before buffer %u (cycle %llu)\n",
					       (unsigned long long)info.dropped, info.sequence,
					       (unsigned long long)info.time);
				places++;
				dropped += info.dropped;
			}
			if (i == 0)
				first_time = info.time;
			last_time = info.time;
		} else if (data[0] != expected || (n % (samples ? samples : 1)) != 0) {
			wrong++;
		}
		for (k = 1; k < n / 4; k++)
			wrong += data[k] != data[k - 1] + 1;
		expected = data[n / 4 - 1] + 1;
		bytes += n;
		if (packets && i < 3)
			printf("  packet %ld: %zd bytes\n", i, n);
	}
	/* The driver's and the DMA's counters, before the stop clears the driver's. */
	if (hostlink_stats(ch, &stats) < 0)
		goto error;
	printf("stats (C): %lld buffers served, %lld done by the DMA, %u by its flow gate, %llu lost, "
	       "at most %u of %u waiting\n", (long long)stats.c2h.sw_count, (long long)stats.c2h.hw_count,
	       stats.c2h.fpga_done, (unsigned long long)stats.c2h.lost, stats.c2h.level_max, stats.buffer_count);
	wrong += stats.c2h.lost != 0 || stats.c2h.hw_count < stats.c2h.sw_count ||
		 stats.c2h.fpga_done < (uint32_t)stats.c2h.hw_count || stats.c2h.flow != (packets ? 3u : 2u);
	if (hostlink_register_write(ch, "user_core_enable", 0) < 0 ||
	    hostlink_register_read(ch, "user_core_overruns", &overruns) < 0 ||
	    hostlink_register_word(ch, "pcie_dma0_user_c2h_dropped", 0, &port_hi) < 0 ||
	    hostlink_register_word(ch, "pcie_dma0_user_c2h_dropped", 1, &port_lo) < 0 ||
	    hostlink_register_write(ch, "user_core_packet", 0) < 0 ||
	    hostlink_register_write(ch, "pcie_dma0_user_select", 0) < 0)
		goto error;
	port_dropped = ((uint64_t)port_hi << 32) | port_lo;
	wrong += overruns != 0 || port_dropped < dropped;
	if (packets)
		printf("%ld packets, %llu bytes in packets flow (C): %ld things wrong\n", count,
		       (unsigned long long)bytes, wrong);
	else
		printf("%ld real-time buffers, %llu data bytes over %llu cycles (C): %llu bytes dropped in %ld places "
		       "by the headers, %llu by the port's count, %u core overruns: %ld things wrong\n", count,
		       (unsigned long long)bytes, (unsigned long long)(last_time - first_time),
		       (unsigned long long)dropped, places, (unsigned long long)port_dropped, overruns, wrong);
	hostlink_close(ch);
	free(data);
	return wrong != 0;
error:
	fprintf(stderr, "source_host: %s\n", hostlink_error(ch));
	hostlink_close(ch);
	return 1;
}
