/* This file is part of hostlink.
 * Copyright (c) 2026 hostlink developers
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * libhostlink's failures under the real driver: each call that must fail, its negative errno and the
 * words its message must have. Built with the library, not installed; sim/uml/guest/library_errors.py
 * runs it in the simulation (User-Mode Linux) with a user's credentials, on a channel given to a core that
 * gives nothing unless sent something (the example accelerator). Nothing is sent to the core.
 *
 *     hostlink_errors outsider [CHANNEL]    a user outside the device's group
 *     hostlink_errors member [CHANNEL]      a member of the group, not root
 *
 * Prints one line per check ("ok: ... (C)" or "FAIL: ...") and exits 1 if any fails.
 */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hostlink.h"

static int failed;

/* `ret` must be -`code`, and `message` must have `words`. */
static void expect(const char *what, long ret, int code, const char *message, const char *words)
{
	if (ret == -code && strstr(message, words)) {
		printf("ok: %s: %s (C)\n", what, message);
	} else {
		printf("FAIL: %s (C): %ld, not -%d with '%s': %s\n", what, ret, code, words, message);
		failed = 1;
	}
	fflush(stdout);
}

static void outsider(int channel)
{
	struct hostlink_channel *ch;
	expect("outside the group: open", hostlink_open(&ch, channel, HOSTLINK_FLOW_LOSSLESS, HOSTLINK_C2H, 500),
	       EACCES, hostlink_open_error(), "be a member");
	expect("a channel that does not exist", hostlink_open(&ch, 99, HOSTLINK_FLOW_LOSSLESS, HOSTLINK_C2H, 500),
	       ENODEV, hostlink_open_error(), "loaded?");
}

static void member(int channel)
{
	struct hostlink_channel *holder, *other, *ch;
	static unsigned char data[1 << 16];
	void *first;
	ssize_t n;

	expect("a flow that does not exist", hostlink_open(&ch, channel, 7, HOSTLINK_C2H, 500), EINVAL,
	       hostlink_open_error(), "HOSTLINK_FLOW_LOOP");
	expect("a timeout of 0 ms", hostlink_open(&ch, channel, HOSTLINK_FLOW_LOSSLESS, HOSTLINK_C2H, 0), EINVAL,
	       hostlink_open_error(), "positive number of milliseconds");
	if (hostlink_open(&holder, channel, HOSTLINK_FLOW_LOSSLESS, HOSTLINK_C2H, 500) < 0) {
		printf("FAIL: open c2h (C): %s\n", hostlink_open_error());
		failed = 1;
		return;
	}
	expect("c2h held by another opener", hostlink_open(&ch, channel, HOSTLINK_FLOW_LOSSLESS, HOSTLINK_C2H, 500),
	       EBUSY, hostlink_open_error(), "c2h held by another program");
	if (hostlink_open(&other, channel, HOSTLINK_FLOW_LOSSLESS, HOSTLINK_H2C, 500) < 0) {
		printf("FAIL: h2c while c2h is held (C): %s\n", hostlink_open_error());
		failed = 1;
	} else {
		size_t size = hostlink_buffer_size(other);
		printf("ok: h2c free while c2h is held (C)\n");
		expect("a write of part of a buffer", hostlink_write(other, data, 100), EINVAL, hostlink_error(other),
		       "whole");
		expect("a read on a channel opened h2c only", hostlink_read(other, data, size), EINVAL,
		       hostlink_error(other), "opened without HOSTLINK_C2H");
		expect("a bad direction", hostlink_get_buffers(other, 5, &first, 1, 0), EINVAL, hostlink_error(other),
		       "HOSTLINK_H2C or HOSTLINK_C2H");
		n = hostlink_get_buffers(other, HOSTLINK_H2C, &first, 2, 0);
		if (n != 2) {
			printf("FAIL: 2 free h2c buffers (C): %zd: %s\n", n, hostlink_error(other));
			failed = 1;
		}
		expect("a copy while zero-copy buffers are held", hostlink_write(other, data, size), EBUSY,
		       hostlink_error(other), "hostlink_put_buffers()");
		expect("giving back more than was got", hostlink_put_buffers(other, HOSTLINK_H2C, 3), EINVAL,
		       hostlink_error(other), "got and not yet put");
		hostlink_close(other);   /* Never given back: the core is sent nothing. */
		expect("a handle used after close", hostlink_read(other, data, 4096), EBADF, hostlink_error(NULL),
		       "not an open channel");
	}
	expect("a read with nothing coming", hostlink_read(holder, data, hostlink_buffer_size(holder)), ETIMEDOUT,
	       hostlink_error(holder), "no progress for 500 ms");
	n = hostlink_get_buffers(holder, HOSTLINK_C2H, &first, 1, 0);
	printf("%s: a zero-copy get without waiting: %zd buffers (C)\n", n == 0 ? "ok" : "FAIL", n);
	failed |= n != 0;
	expect("a zero-copy get with nothing coming", hostlink_get_buffers(holder, HOSTLINK_C2H, &first, 1, 300),
	       ETIMEDOUT, hostlink_error(holder), "no c2h buffer for 300 ms");
	n = hostlink_wait(holder, HOSTLINK_C2H, 0);
	printf("%s: a wait without waiting: %zd (C)\n", n == 0 ? "ok" : "FAIL", n);
	failed |= n != 0;
	expect("a wait with nothing coming", hostlink_wait(holder, HOSTLINK_C2H, 300), ETIMEDOUT,
	       hostlink_error(holder), "hostlink_wait: no c2h buffer for 300 ms");
	expect("a wait on a direction not opened", hostlink_wait(holder, HOSTLINK_H2C, 0), EINVAL,
	       hostlink_error(holder), "opened without HOSTLINK_H2C");
	expect("a register write", hostlink_register_write(holder, "user_core_throttle", 0), EPERM,
	       hostlink_error(holder), "CAP_SYS_RAWIO");
	{
		uint32_t value;
		expect("a register that does not exist", hostlink_register_read(holder, "no_such_register", &value),
		       EINVAL, hostlink_error(holder), "no register 'no_such_register'");
	}
	hostlink_close(holder);
	/* Real-time flow (nothing started: the core is sent nothing and gives nothing). */
	if (hostlink_open(&ch, channel, HOSTLINK_FLOW_REALTIME, HOSTLINK_C2H, 500) < 0) {
		printf("FAIL: open c2h in real-time flow (C): %s\n", hostlink_open_error());
		failed = 1;
		return;
	}
	{
		struct hostlink_buffer_info info;
		expect("a buffer read into less than it carries", hostlink_read_buffer(ch, data, 16, &info), EINVAL,
		       hostlink_error(ch), "hostlink_read_buffer: a buffer carries up to");
	}
	hostlink_close(ch);
}

int main(int argc, char **argv)
{
	int channel = argc == 3 ? atoi(argv[2]) : 0;

	if ((argc != 2 && argc != 3) || (strcmp(argv[1], "outsider") && strcmp(argv[1], "member"))) {
		fprintf(stderr, "usage: hostlink_errors outsider|member [CHANNEL]\n");
		return 2;
	}
	if (!strcmp(argv[1], "outsider"))
		outsider(channel);
	else
		member(channel);
	return failed;
}
