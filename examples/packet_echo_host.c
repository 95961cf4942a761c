/* This file is part of hostlink.
 * Copyright (c) 2026 hostlink developers
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * The host side of the example packet echo (examples/packet_echo.py) in C, on libhostlink: send packets of
 * any length in packets flow (hostlink_write_packet) and check that each comes back whole and identical
 * (hostlink_read_packet). Run as root (it selects the channel's user port). Copy it to start your program.
 *
 *     packet_echo_host
 *
 * The lengths cross every edge: 1 byte, a 32-byte unit's edges, 1000, a buffer's data and one past it,
 * several buffers and a few bytes; then a packet written in pieces and ended by an empty call, and an
 * empty packet, which is refused. Exits 1 if anything is wrong.
 */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hostlink.h"

static long echo(struct hostlink_channel *ch, const unsigned char *packet, size_t size, unsigned char *back,
		 size_t capacity)
{
	ssize_t got = hostlink_read_packet(ch, back, capacity);
	long wrong = 0;

	if (got < 0)
		return -1;
	for (size_t i = 0; i < size && i < (size_t)got; i++)
		wrong += packet[i] != back[i];
	return wrong + labs((long)got - (long)size);
}

int main(void)
{
	struct hostlink_channel *ch;
	size_t size, data, lengths[9], capacity, total = 0;
	unsigned char *packet, *back;
	long wrong = 0, bad;
	unsigned seed = 49;

	if (hostlink_open(&ch, 0, HOSTLINK_FLOW_PACKETS, HOSTLINK_H2C | HOSTLINK_C2H, 300000) < 0) {
		fprintf(stderr, "packet_echo_host: %s\n", hostlink_open_error());
		return 1;
	}
	size = hostlink_buffer_size(ch);
	data = size - HOSTLINK_HEADER_BYTES;
	size_t each[9] = {1, 31, 32, 33, 1000, data, data + 1, 3 * size + 7, 2};
	memcpy(lengths, each, sizeof(each));
	capacity = 4 * size;
	packet = malloc(capacity);
	back = malloc(capacity);
	if (!packet || !back)
		return 1;
	if (hostlink_register_write(ch, "pcie_dma0_user_select", 1) < 0 || hostlink_start(ch, HOSTLINK_C2H) < 0)
		goto error;
	for (int k = 0; k < 9; k++) {
		for (size_t i = 0; i < lengths[k]; i++)
			packet[i] = (unsigned char)rand_r(&seed);
		if (hostlink_write_packet(ch, packet, lengths[k], 1) < 0 ||
		    (bad = echo(ch, packet, lengths[k], back, capacity)) < 0)
			goto error;
		wrong += bad;
		total += lengths[k];
	}
	printf("9 packets, %zu bytes echoed in packets flow (C): %ld bytes wrong\n", total, wrong);

	/* A packet in pieces: 45, 1, 200 and 3000 bytes, then an empty call that ends it. */
	size_t pieces[4] = {45, 1, 200, 3000}, at = 0;
	for (size_t i = 0; i < 3246; i++)
		packet[i] = (unsigned char)rand_r(&seed);
	for (int k = 0; k < 4; k++) {
		if (hostlink_write_packet(ch, packet + at, pieces[k], 0) < 0)
			goto error;
		at += pieces[k];
	}
	if (hostlink_write_packet(ch, NULL, 0, 1) < 0 || (bad = echo(ch, packet, at, back, capacity)) < 0)
		goto error;
	printf("a packet of %zu bytes in 4 pieces (C): %ld bytes wrong\n", at, bad);
	wrong += bad;

	bad = hostlink_write_packet(ch, NULL, 0, 1) != -EINVAL;
	printf("an empty packet (C): %s (%s)\n", hostlink_error(ch), bad ? "WRONG" : "right");
	wrong += bad;
	bad = hostlink_write(ch, packet, size) != -EINVAL;
	printf("hostlink_write in packets flow (C): %s (%s)\n", hostlink_error(ch), bad ? "WRONG" : "right");
	wrong += bad;

	if (hostlink_register_write(ch, "pcie_dma0_user_select", 0) < 0)
		goto error;
	if (hostlink_close(ch) < 0) {
		fprintf(stderr, "packet_echo_host: %s\n", hostlink_error(NULL));
		return 1;
	}
	printf("packets flow both ways (C): %ld things wrong\n", wrong);
	free(packet);
	free(back);
	return wrong ? 1 : 0;
error:
	fprintf(stderr, "packet_echo_host: %s\n", hostlink_error(ch));
	hostlink_close(ch);
	return 1;
}
