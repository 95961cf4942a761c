/* This file is part of hostlink.
 * Copyright (c) 2026 hostlink developers
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * libhostlink with threads, signals and close under the real driver: built with the library, not
 * installed; sim/uml/guest/library_threads.py runs it in the simulation (User-Mode Linux) as a member of
 * the device's group, on a channel given to the example accelerator (y = 3x + 0x1234 on 16-bit samples).
 *
 *     hostlink_threads CHANNEL          every check that leaves the core as it found it
 *     hostlink_threads CHANNEL stuck    a close whose data the core cannot take (its results unread):
 *                                       last, since what was taken stays in the core
 *
 * Prints one line per check ("ok: ... (C)" or "FAIL: ...") and exits 1 if any fails.
 */

#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "hostlink.h"

static int failed;

static double now_s(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

static void check(int ok, const char *format, ...)
{
	va_list args;
	printf("%s: ", ok ? "ok" : "FAIL");
	va_start(args, format);
	vprintf(format, args);
	va_end(args);
	printf(" (C)\n");
	fflush(stdout);
	failed |= !ok;
}

/* Opens the channel in lossless flow; a failure is a failed check. */
static int opened(struct hostlink_channel **ch, int channel, int directions, int timeout_ms)
{
	if (hostlink_open(ch, channel, HOSTLINK_FLOW_LOSSLESS, directions, timeout_ms) == 0)
		return 0;
	check(0, "open: %s", hostlink_open_error());
	return -1;
}

/* `size` bytes of 16-bit samples, newly allocated, which `seed` tells apart from another test's. */
static uint16_t *samples(size_t size, unsigned seed)
{
	uint16_t *x = malloc(size);

	for (size_t i = 0; i < size / 2; i++)
		x[i] = (uint16_t)(i * 7 + seed * 131);
	return x;
}

/* Results that are not the accelerator's y = 3x + 0x1234 of the samples. */
static size_t wrong(const uint16_t *x, const uint16_t *y, size_t count)
{
	size_t n = 0;
	for (size_t i = 0; i < count; i++)
		n += y[i] != (uint16_t)(3 * x[i] + 0x1234);
	return n;
}

/* A reader thread and a writer thread --------------------------------------------------------------- */

struct call {
	struct hostlink_channel *ch;
	void *data;
	size_t size;
	ssize_t ret;
	double began, took;
	char error[256];
	size_t sent, received;
};

/* A read (HOSTLINK_C2H) or a write (HOSTLINK_H2C) of `c`, with what it returned, took, said and moved. */
static void *timed_call(struct call *c, int direction)
{
	c->began = now_s();
	c->ret = direction == HOSTLINK_C2H ? hostlink_read(c->ch, c->data, c->size) :
					     hostlink_write(c->ch, c->data, c->size);
	c->took = now_s() - c->began;
	snprintf(c->error, sizeof(c->error), "%s", c->ret < 0 ? hostlink_error(c->ch) : "");
	hostlink_moved(&c->sent, &c->received);
	return NULL;
}

static void *reader(void *arg)
{
	return timed_call(arg, HOSTLINK_C2H);
}

static void *writer(void *arg)
{
	return timed_call(arg, HOSTLINK_H2C);
}

static void *delayed_writer(void *arg)
{
	usleep(300000);
	return writer(arg);
}

/* The read begins first and sleeps for results; the write, 100 ms later, must not wait for the read's
 * timeout (10 s) to begin: the read gets every result. */
static void reader_and_writer(int channel)
{
	struct hostlink_channel *ch;
	struct call r = {0}, w = {0};
	pthread_t rt, wt;
	size_t size, count;
	uint16_t *x, *y;

	if (opened(&ch, channel, HOSTLINK_H2C | HOSTLINK_C2H, 10000) < 0)
		return;
	size = 16 * hostlink_buffer_size(ch);
	count = size / 2;
	x = samples(size, 1);
	y = calloc(1, size);
	r = (struct call){.ch = ch, .data = y, .size = size};
	w = (struct call){.ch = ch, .data = x, .size = size};
	pthread_create(&rt, NULL, reader, &r);
	usleep(100000);
	pthread_create(&wt, NULL, writer, &w);
	pthread_join(wt, NULL);
	pthread_join(rt, NULL);
	check(r.ret == (ssize_t)size && w.ret == (ssize_t)size && w.took < 5 && !wrong(x, y, count),
	      "a reader thread and a writer thread on one channel: %zu bytes each way, the write took %.1f s, "
	      "the read %.1f s, %zu samples wrong%s%s%s", size, w.took, r.took, wrong(x, y, count),
	      r.ret < 0 ? ": " : "", r.error, w.error);
	hostlink_close(ch);
	free(x);
	free(y);
}

/* Two threads that fail at once ---------------------------------------------------------------------- */

struct failing {
	struct hostlink_channel *ch;
	pthread_barrier_t *barrier;
	int kind;
	int mixed;
};

static void *fail_in_turn(void *arg)
{
	struct failing *f = arg;
	static unsigned char data[100];
	void *first;

	for (int i = 0; i < 50; i++) {
		/* Both fail, then both read their message: each must read its own. */
		if (f->kind == 0)
			hostlink_write(f->ch, data, sizeof(data));
		else
			hostlink_get_buffers(f->ch, 5, &first, 1, 0);
		pthread_barrier_wait(f->barrier);
		f->mixed += !strstr(hostlink_error(f->ch), f->kind == 0 ? "moves whole" : "the direction is");
		pthread_barrier_wait(f->barrier);
	}
	return NULL;
}

static void errors_per_thread(int channel)
{
	struct hostlink_channel *ch;
	pthread_barrier_t barrier;
	struct failing a, b;
	pthread_t at, bt;

	if (opened(&ch, channel, HOSTLINK_H2C, 1000) < 0)
		return;
	pthread_barrier_init(&barrier, NULL, 2);
	a = (struct failing){.ch = ch, .barrier = &barrier, .kind = 0};
	b = (struct failing){.ch = ch, .barrier = &barrier, .kind = 1};
	pthread_create(&at, NULL, fail_in_turn, &a);
	pthread_create(&bt, NULL, fail_in_turn, &b);
	pthread_join(at, NULL);
	pthread_join(bt, NULL);
	check(!a.mixed && !b.mixed, "two threads that fail at once read their own errors: %d and %d of 50 read "
	      "the other's", a.mixed, b.mixed);
	pthread_barrier_destroy(&barrier);
	hostlink_close(ch);
}

/* Cancel, a signal, progress ---------------------------------------------------------------------- */

static void on_alarm(int signal)
{
	(void)signal;
}

static void cancel_and_signal(int channel)
{
	struct hostlink_channel *ch;
	struct sigaction action = {0};
	struct itimerval timer = {0};
	struct call r;
	pthread_t rt;
	static uint16_t y[1 << 16];
	ssize_t ret;
	double began;

	if (opened(&ch, channel, HOSTLINK_C2H, 10000) < 0)
		return;
	/* A read with nothing coming, cancelled by another thread 300 ms later. */
	r = (struct call){.ch = ch, .data = y, .size = hostlink_buffer_size(ch)};
	pthread_create(&rt, NULL, reader, &r);
	usleep(300000);
	hostlink_cancel(ch);
	pthread_join(rt, NULL);
	check(r.ret == -ECANCELED && r.took < 5 && strstr(r.error, "cancelled") && r.received == 0,
	      "hostlink_cancel() ends another thread's read: %zd after %.1f s, %zu bytes moved: %s", r.ret, r.took,
	      r.received, r.error);
	/* A call begun after the cancel is not cancelled by it. */
	ret = hostlink_get_buffers(ch, HOSTLINK_C2H, (void **)&r.data, 1, 200);
	check(ret == -ETIMEDOUT, "a call begun after the cancel runs to its own end: %zd: %s", ret,
	      hostlink_error(ch));
	/* A signal whose handler was installed with SA_RESTART ends a blocking read with EINTR. */
	action.sa_handler = on_alarm;
	action.sa_flags = SA_RESTART;
	sigaction(SIGALRM, &action, NULL);
	timer.it_value.tv_usec = 300000;
	setitimer(ITIMER_REAL, &timer, NULL);
	began = now_s();
	ret = hostlink_read(ch, y, hostlink_buffer_size(ch));
	check(ret == -EINTR && now_s() - began < 5 && strstr(hostlink_error(ch), "interrupted by a signal"),
	      "a signal ends a blocking read: %zd after %.1f s: %s", ret, now_s() - began, hostlink_error(ch));
	signal(SIGALRM, SIG_DFL);
	hostlink_close(ch);
}

/* Two buffers sent, four asked for: the read times out with the two buffers' results, and says so. */
static void progress(int channel)
{
	struct hostlink_channel *ch;
	size_t size, sent = 1, received = 0;
	uint16_t *x, *y;
	ssize_t ret;

	if (opened(&ch, channel, HOSTLINK_H2C | HOSTLINK_C2H, 1000) < 0)
		return;
	size = 2 * hostlink_buffer_size(ch);
	x = samples(size, 2);
	y = calloc(1, 2 * size);
	hostlink_start(ch, HOSTLINK_C2H);   /* Armed first: the results have somewhere to go. */
	ret = hostlink_write(ch, x, size);
	if (ret == (ssize_t)size)
		ret = hostlink_read(ch, y, 2 * size);
	hostlink_moved(&sent, &received);
	check(ret == -ETIMEDOUT && sent == 0 && received == size && !wrong(x, y, size / 2) &&
	      strstr(hostlink_error(ch), "no progress"),
	      "a read that times out says what it got: %zd, %zu bytes sent, %zu received of %zu asked, %zu samples "
	      "wrong: %s", ret, sent, received, 2 * size, wrong(x, y, size / 2), hostlink_error(ch));
	hostlink_close(ch);
	free(x);
	free(y);
}

/* Close loses nothing: what a program wrote just before closing reaches the core (its results read by
 * another opener of the channel). */
static void close_sends_everything(int channel)
{
	struct hostlink_channel *out, *in;
	size_t size, count;
	uint16_t *x, *y;
	ssize_t ret;
	int closed;

	if (opened(&in, channel, HOSTLINK_C2H, 10000) < 0 || opened(&out, channel, HOSTLINK_H2C, 10000) < 0)
		return;
	size = 32 * hostlink_buffer_size(out);
	count = size / 2;
	x = samples(size, 3);
	y = calloc(1, size);
	hostlink_start(in, HOSTLINK_C2H);
	ret = hostlink_write(out, x, size);
	closed = hostlink_close(out);   /* At once: most of it still in the ring. */
	if (ret == (ssize_t)size && closed == 0)
		ret = hostlink_read(in, y, size);
	check(ret == (ssize_t)size && closed == 0 && !wrong(x, y, count),
	      "close right after a write sends all of it: %zu bytes, close %d, %zu samples wrong%s%s", size,
	      closed, wrong(x, y, count), ret < 0 || closed < 0 ? ": " : "", ret < 0 || closed < 0 ?
	      hostlink_error(NULL) : "");
	hostlink_close(in);
	free(x);
	free(y);
}

/* A close whose data the core cannot take (its results' direction started and never read: once that ring
 * is full, the core stops taking samples): it fails after the timeout, saying how much was not sent, and
 * the channel is released all the same. */
static void close_stuck(int channel)
{
	struct hostlink_channel *ch, *results;
	size_t size;
	unsigned char *x;
	ssize_t ret;
	int closed;
	double began;

	if (opened(&results, channel, HOSTLINK_C2H, 500) < 0 || opened(&ch, channel, HOSTLINK_H2C, 500) < 0)
		return;
	hostlink_start(results, HOSTLINK_C2H);
	size = hostlink_buffer_count(ch) * hostlink_buffer_size(ch);
	x = calloc(1, size);
	ret = hostlink_write(ch, x, size);
	began = now_s();
	closed = hostlink_close(ch);
	check(ret == (ssize_t)size && closed == -ETIMEDOUT && strstr(hostlink_error(NULL), "bytes written but not "
	      "taken by the FPGA") && now_s() - began < 5, "a close whose data the core cannot take fails after "
	      "its timeout: %d after %.1f s: %s", closed, now_s() - began, hostlink_error(NULL));
	ret = hostlink_open(&ch, channel, HOSTLINK_FLOW_LOSSLESS, HOSTLINK_H2C, 500);
	check(ret == 0, "the channel was released all the same: open %zd", ret);
	if (ret == 0)
		hostlink_close(ch);
	hostlink_close(results);
	free(x);
}

/* poll() on the channel's file: POLLOUT at once for h2c's free ring; for c2h, nothing while nothing is
 * sent, then POLLIN once a buffer sent (by a thread, 300 ms into the wait) comes back through the core. */
static void events(int channel)
{
	struct hostlink_channel *in, *out;
	struct pollfd room, data;
	struct call w;
	pthread_t wt;
	uint16_t *x, *y;
	size_t size;
	int writable, quiet, woke;
	double began, took;
	ssize_t ret = -1;

	if (opened(&in, channel, HOSTLINK_C2H, 10000) < 0 || opened(&out, channel, HOSTLINK_H2C, 10000) < 0)
		return;
	size = hostlink_buffer_size(out);
	x = samples(size, 5);
	y = calloc(1, size);
	hostlink_start(in, HOSTLINK_C2H);
	room = (struct pollfd){.fd = hostlink_fd(out), .events = POLLOUT};
	writable = poll(&room, 1, 0);
	data = (struct pollfd){.fd = hostlink_fd(in), .events = POLLIN};
	quiet = poll(&data, 1, 300);
	w = (struct call){.ch = out, .data = x, .size = size};
	pthread_create(&wt, NULL, delayed_writer, &w);
	began = now_s();
	woke = poll(&data, 1, 10000);
	took = now_s() - began;
	pthread_join(wt, NULL);
	if (woke == 1 && (data.revents & POLLIN))
		ret = hostlink_read(in, y, size);
	check(writable == 1 && (room.revents & POLLOUT) && quiet == 0 && woke == 1 && (data.revents & POLLIN) &&
	      took < 5 && ret == (ssize_t)size && !wrong(x, y, size / 2), "poll() on the channel: h2c %d (0x%x), c2h "
	      "with nothing sent %d, then woken by the DMA %d (0x%x) after %.1f s, %zu samples wrong", writable,
	      room.revents, quiet, woke, data.revents, took, ret == (ssize_t)size ? wrong(x, y, size / 2) : size / 2);
	hostlink_close(out);
	hostlink_close(in);
	free(x);
	free(y);
}

int main(int argc, char **argv)
{
	int channel;

	if (argc < 2 || argc > 3 || (argc == 3 && strcmp(argv[2], "stuck"))) {
		fprintf(stderr, "usage: hostlink_threads CHANNEL [stuck]\n");
		return 2;
	}
	channel = atoi(argv[1]);
	if (argc == 3) {
		close_stuck(channel);
	} else {
		reader_and_writer(channel);
		errors_per_thread(channel);
		cancel_and_signal(channel);
		progress(channel);
		close_sends_everything(channel);
		events(channel);
	}
	return failed;
}
