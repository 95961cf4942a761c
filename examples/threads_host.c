/* This file is part of hostlink.
 * Copyright (c) 2026 hostlink developers
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * The example accelerator (examples/accelerator.py, y = 3x + 0x1234 on 16-bit samples; a and b set by
 * `accelerator_host --setup`) driven by two threads on one channel: a writer thread sends samples, a
 * reader thread receives and checks the results, each at its own pace; Ctrl-C ends both at once
 * (hostlink_cancel) and says how far each got. Copy it to start a streaming program.
 *
 *     threads_host --size 1048576 [--channel 0]     as a member of the device's group
 *
 * The pattern: block the signals in every thread, wait for them in main (sigwait), and cancel the
 * channel's calls from there; the library's calls are never made from a signal handler.
 */

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "hostlink.h"

struct stream {
	struct hostlink_channel *ch;
	size_t size, chunk;      /* bytes in all, per call */
	size_t done, wrong;      /* bytes moved, results wrong (reader) */
	int error;               /* 0 or the negative errno that ended it */
	char message[256];
};

static uint16_t next_sample(uint32_t *seed)
{
	*seed = *seed * 1103515245 + 12345;
	return *seed >> 16;
}

static void *writer(void *arg)
{
	struct stream *s = arg;
	uint16_t *samples = malloc(s->chunk);
	uint32_t seed = 1;

	while (s->done < s->size) {
		for (size_t i = 0; i < s->chunk / 2; i++)
			samples[i] = next_sample(&seed);
		ssize_t ret = hostlink_write(s->ch, samples, s->chunk);
		if (ret < 0) {
			size_t sent;
			hostlink_moved(&sent, NULL);
			s->done += sent;
			s->error = ret;
			snprintf(s->message, sizeof(s->message), "%s", hostlink_error(s->ch));
			break;
		}
		s->done += ret;
	}
	free(samples);
	return NULL;
}

static void *reader(void *arg)
{
	struct stream *s = arg;
	uint16_t *results = malloc(s->chunk);
	uint32_t seed = 1;

	while (s->done < s->size) {
		ssize_t ret = hostlink_read(s->ch, results, s->chunk);
		if (ret < 0) {
			size_t received;
			hostlink_moved(NULL, &received);
			s->done += received;
			s->error = ret;
			snprintf(s->message, sizeof(s->message), "%s", hostlink_error(s->ch));
			break;
		}
		for (size_t i = 0; i < s->chunk / 2; i++)
			s->wrong += results[i] != (uint16_t)(3 * (int16_t)next_sample(&seed) + 0x1234);
		s->done += ret;
	}
	free(results);
	return NULL;
}

/* Waits for SIGINT or SIGTERM (blocked in every thread): cancels the channel's calls. Ended by SIGUSR1
 * once both streams are done. */
static void *signals(void *arg)
{
	struct hostlink_channel *ch = arg;
	sigset_t set;
	int sig;

	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGUSR1);
	if (sigwait(&set, &sig) == 0 && sig != SIGUSR1) {
		fprintf(stderr, "threads_host: %s: cancelling\n", strsignal(sig));
		hostlink_cancel(ch);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	struct hostlink_channel *ch;
	struct stream out = {0}, in = {0};
	pthread_t wt, rt, st;
	sigset_t set;
	size_t size = 1 << 20;
	int channel = 0, ret;
	struct timespec t0, t1;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--size") && i + 1 < argc)
			size = strtoull(argv[++i], NULL, 0);
		else if (!strcmp(argv[i], "--channel") && i + 1 < argc)
			channel = atoi(argv[++i]);
		else {
			fprintf(stderr, "usage: threads_host [--size BYTES] [--channel N]\n");
			return 2;
		}
	}
	/* Blocked here, before any thread starts: every thread inherits it, and only `signals` takes them. */
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGUSR1);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	if (hostlink_open(&ch, channel, HOSTLINK_FLOW_LOSSLESS, HOSTLINK_H2C | HOSTLINK_C2H, 5000) < 0) {
		fprintf(stderr, "threads_host: %s\n", hostlink_open_error());
		return 1;
	}
	out.chunk = in.chunk = 16 * hostlink_buffer_size(ch);
	if (size == 0 || size % out.chunk) {
		fprintf(stderr, "threads_host: --size must be a positive multiple of %zu bytes\n", out.chunk);
		hostlink_close(ch);
		return 2;
	}
	out.ch = in.ch = ch;
	out.size = in.size = size;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	pthread_create(&st, NULL, signals, ch);
	pthread_create(&rt, NULL, reader, &in);
	pthread_create(&wt, NULL, writer, &out);
	pthread_join(wt, NULL);
	pthread_join(rt, NULL);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	pthread_kill(st, SIGUSR1);
	pthread_join(st, NULL);
	if (out.error)
		fprintf(stderr, "threads_host: writer: %s\n", out.message);
	if (in.error)
		fprintf(stderr, "threads_host: reader: %s\n", in.message);
	printf("%zu bytes through the accelerator by a writer thread and a reader thread in %.2f s: %zu of %zu bytes "
	       "sent, %zu received, %zu samples wrong (%s)\n", size, (t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec)
	       / 1e9, out.done, size, in.done, in.wrong, hostlink_board(ch)[0] ? hostlink_board(ch) : "board not named");
	ret = hostlink_close(ch);
	if (ret < 0)
		fprintf(stderr, "threads_host: %s\n", hostlink_error(NULL));
	return out.error || in.error || in.wrong || ret < 0;
}
