/* This file is part of hostlink.
 * Copyright (c) 2026 hostlink developers
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * libhostlink (hostlink.h): the driver's device node, read(), write() and ioctl(), as hostlink/host.py
 * does them. Built per SoC beside LitePCIe's user tools: litepcie.h is the generated driver's (its ioctls,
 * with hostlink's polling and flow modes; its config.h the driver's name, HOSTLINK_DRIVER_NAME, and its
 * SoC's identifier, HOSTLINK_SOC_IDENTIFIER) and hostlink_registers.h the SoC's CSR names (software/driver/).
 * A channel opens only on a board of that SoC (check_soc): another SoC's registers are elsewhere.
 *
 * Threads: each direction's data calls are serialized by that direction's lock (calls[0] h2c, calls[1]
 * c2h), held while the call sleeps, so a reader and a writer never wait on each other; `state` guards
 * the little the directions share (started, held, the rings' mappings) and is never held while sleeping.
 * A call that takes both directions (hostlink_transfer) takes h2c's lock, then c2h's. Error texts and the
 * bytes a call moved are the calling thread's (thread-local), so two threads that fail at once each read
 * their own.
 */

#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "hostlink.h"
#include "litepcie.h"
#include "hostlink_registers.h"

/* The device nodes of the driver this library was built with: /dev/<name>0, /dev/<name>1, ... */
#define NODE_PREFIX "/dev/" HOSTLINK_DRIVER_NAME

struct hostlink_channel {
	int fd;
	char path[PATH_MAX];
	int directions, flow;
	int started;                     /* directions armed (under state; read with __atomic_load_n) */
	int timeout_ms;
	size_t buffer_size, buffer_count;
	unsigned char *scratch;          /* one buffer, for read_buffer (under calls[1]) */
	unsigned char *kept;             /* read_packet: a packet longer than the caller's room (under calls[1]) */
	size_t kept_length, kept_size;
	unsigned char *frames;           /* packets flow: buffers framed for write_packet (under calls[0]) */
	unsigned char open_packet[HOSTLINK_HEADER_BYTES];   /* an open packet's tail, held back to end it */
	size_t open_length;              /* (under calls[0]) */
	unsigned char *ring[2];          /* zero-copy: the h2c [0] and c2h [1] rings, mapped (under state) */
	off_t ring_offset[2];
	size_t held[2];                  /* zero-copy: buffers got and not yet put (under state) */
	char board[32];                  /* the board's PCI address ("" if the driver does not say) */
	int index;                       /* the channel's number on its board */
	int no_wait;                     /* the driver has no DMA_WAIT (generated before it): poll */
	uint32_t cancel;                 /* hostlink_cancel()'s count (__atomic): calls begun before end */
	pthread_mutex_t state;
	pthread_mutex_t calls[2];
};

/* The calling thread's last failure, and the bytes its last data call moved (hostlink_moved). */
static __thread char error_text[512];
static __thread size_t moved_sent, moved_received;

/* errno's name, as strerrorname_np (glibc 2.32) gives it, for the codes a call can fail with. */
static const char *errno_name(int err)
{
	switch (err) {
	case EPERM: return "EPERM";         case ENOENT: return "ENOENT";       case EINTR: return "EINTR";
	case EIO: return "EIO";             case ENOMEM: return "ENOMEM";       case EACCES: return "EACCES";
	case EFAULT: return "EFAULT";       case EBUSY: return "EBUSY";         case ENODEV: return "ENODEV";
	case EINVAL: return "EINVAL";       case ENOTTY: return "ENOTTY";       case EAGAIN: return "EAGAIN";
	case EPROTO: return "EPROTO";       case EMSGSIZE: return "EMSGSIZE";   case EOPNOTSUPP: return "EOPNOTSUPP";
	case EOVERFLOW: return "EOVERFLOW"; case ETIMEDOUT: return "ETIMEDOUT"; case ECANCELED: return "ECANCELED";
	case EBADF: return "EBADF";         case ENXIO: return "ENXIO";         case ENOSPC: return "ENOSPC";
	default: return "?";
	}
}

static int fail(struct hostlink_channel *ch, int err, const char *format, ...)
{
	va_list args;
	int n;

	n = ch ? snprintf(error_text, sizeof(error_text), "%s: ", ch->path) : 0;
	va_start(args, format);
	vsnprintf(error_text + n, sizeof(error_text) - n, format, args);
	va_end(args);
	n = strlen(error_text);
	snprintf(error_text + n, sizeof(error_text) - n, " (%s)", errno_name(err));
	return -err;
}

/* The open handles: a call on one that was closed (or never opened) fails with EBADF rather than reading
 * freed memory. Only the pointer is compared; a handle closed while another thread's call is in progress
 * is the program's error (cancel, join, then close). */
static pthread_mutex_t handles_lock = PTHREAD_MUTEX_INITIALIZER;
static struct hostlink_channel **handles;
static size_t handles_count, handles_room;

static int handle_add(struct hostlink_channel *ch)
{
	int ret = 0;
	pthread_mutex_lock(&handles_lock);
	if (handles_count == handles_room) {
		size_t room = handles_room ? 2 * handles_room : 16;
		struct hostlink_channel **more = realloc(handles, room * sizeof(*handles));
		if (more) {
			handles = more;
			handles_room = room;
		} else {
			ret = -ENOMEM;
		}
	}
	if (ret == 0)
		handles[handles_count++] = ch;
	pthread_mutex_unlock(&handles_lock);
	return ret;
}

static void handle_remove(struct hostlink_channel *ch)
{
	pthread_mutex_lock(&handles_lock);
	for (size_t i = 0; i < handles_count; i++)
		if (handles[i] == ch) {
			handles[i] = handles[--handles_count];
			break;
		}
	pthread_mutex_unlock(&handles_lock);
}

static int is_open(struct hostlink_channel *ch)
{
	int found = 0;
	pthread_mutex_lock(&handles_lock);
	for (size_t i = 0; i < handles_count && !found; i++)
		found = handles[i] == ch;
	pthread_mutex_unlock(&handles_lock);
	return found;
}

static int not_open(void)
{
	return fail(NULL, EBADF, "not an open channel: closed already, or never opened (hostlink_open)");
}

static uint32_t cancel_count(struct hostlink_channel *ch)
{
	return __atomic_load_n(&ch->cancel, __ATOMIC_SEQ_CST);
}

static int started(struct hostlink_channel *ch, int direction)
{
	return __atomic_load_n(&ch->started, __ATOMIC_SEQ_CST) & direction;
}

/* The end of a call stopped by a signal (EINTR) or hostlink_cancel() (ECANCELED), with what it had moved. */
static int stopped(struct hostlink_channel *ch, int err, const char *what, size_t done, size_t total)
{
	return fail(ch, err, "%s: %s after %zu of %zu bytes", what, err == EINTR ? "interrupted by a signal" :
		    "cancelled (hostlink_cancel)", done, total);
}

static const char *advice(int err)
{
	switch (err) {
	case ENOTTY: return "the driver lacks this call: rebuild it with hostlink (--driver)";
	case EPERM:  return "not permitted for your user";
	case EIO:    return "the device does not answer: is it still there?";
	case ENODEV: return "the board is gone (removed, unplugged or its driver unbound): close the channel";
	default:     return strerror(err);
	}
}

static int do_ioctl(struct hostlink_channel *ch, unsigned long request, void *arg, const char *what)
{
	if (ioctl(ch->fd, request, arg) < 0) {
		int err = errno;
		if (request == LITEPCIE_IOCTL_DMA_FLOW && err == EOPNOTSUPP)
			return fail(ch, err, "cannot %s: this SoC has no flow gates: regenerate it with hostlink", what);
		if (request == LITEPCIE_IOCTL_REG && err == EPERM)
			return fail(ch, err, "cannot %s: register writes need CAP_SYS_RAWIO (root)", what);
		return fail(ch, err, "cannot %s: %s", what, advice(err));
	}
	return 0;
}

static int64_t now_ms(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (int64_t)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

/* Devices ---------------------------------------------------------------------------------------- */

int hostlink_list(char paths[][32], int max)
{
	glob_t g;
	int count = 0;
	size_t i, j;

	if (glob(NODE_PREFIX "[0-9]*", 0, NULL, &g) != 0)
		return 0;
	/* In channel order: /dev/litepcie2 before /dev/litepcie10. */
	for (i = 0; i < g.gl_pathc; i++)
		for (j = i + 1; j < g.gl_pathc; j++)
			if (atoi(g.gl_pathv[j] + strlen(NODE_PREFIX)) < atoi(g.gl_pathv[i] + strlen(NODE_PREFIX))) {
				char *t = g.gl_pathv[i];
				g.gl_pathv[i] = g.gl_pathv[j];
				g.gl_pathv[j] = t;
			}
	for (i = 0; i < g.gl_pathc; i++, count++)
		if (count < max)
			snprintf(paths[count], 32, "%s", g.gl_pathv[i]);
	globfree(&g);
	return count;
}

/* The channel's board and its number there, from sysfs: hostlink's driver makes each board's PCI device
 * the parent of its channels' nodes (/sys/dev/char/M:m/device -> the PCI device, whose <driver name>/ folder
 * lists them). Without that: no board, and the node's minor number. */
static void find_board(struct hostlink_channel *ch)
{
	struct statx st;
	char node[64], link[PATH_MAX], pattern[PATH_MAX + 32];
	const char *name, *address;
	glob_t g;
	size_t i;
	int mine, below = 0;
	ssize_t n;

	ch->board[0] = 0;
	ch->index = 0;
	/* statx (glibc 2.28), not fstat: glibc 2.33 gave fstat a symbol of its own, which a library built on a
	 * newer system would need. */
	if (statx(ch->fd, "", AT_EMPTY_PATH, STATX_TYPE, &st) < 0)
		return;
	ch->index = st.stx_rdev_minor;
	snprintf(node, sizeof(node), "/sys/dev/char/%u:%u", st.stx_rdev_major, st.stx_rdev_minor);
	n = readlink(node, link, sizeof(link) - 1);
	if (n < 0)
		return;
	link[n] = 0;
	name = strrchr(link, '/');
	mine = name ? atoi(name + 1 + strlen(HOSTLINK_DRIVER_NAME)) : -1;
	snprintf(pattern, sizeof(pattern), "%s/device", node);
	n = readlink(pattern, link, sizeof(link) - 1);
	if (n < 0 || mine < 0)
		return;
	link[n] = 0;
	address = strrchr(link, '/') ? strrchr(link, '/') + 1 : link;
	snprintf(pattern, sizeof(pattern), "%s/device/" HOSTLINK_DRIVER_NAME "/" HOSTLINK_DRIVER_NAME "[0-9]*", node);
	if (glob(pattern, 0, NULL, &g) != 0)
		return;
	/* Its number on the board: how many of the board's nodes come before it. */
	for (i = 0; i < g.gl_pathc; i++)
		below += atoi(strrchr(g.gl_pathv[i], '/') + 1 + strlen(HOSTLINK_DRIVER_NAME)) < mine;
	globfree(&g);
	snprintf(ch->board, sizeof(ch->board), "%.*s", (int)sizeof(ch->board) - 1, address);
	ch->index = below;
}

static int is_open(struct hostlink_channel *ch);
static int not_open(void);

const char *hostlink_board(struct hostlink_channel *ch)
{
	return is_open(ch) ? ch->board : "";
}

const char *hostlink_path(struct hostlink_channel *ch)
{
	return is_open(ch) ? ch->path : "";
}

/* The board's SoC, from LiteX's identifier memory (a character a word) as the driver's probe reads it, must
 * be the one this library's register map is for: the identifier, then its end or a space (LiteX's build
 * time). A driver of another name or an older one may have taken a board of another SoC. */
static int check_soc(struct hostlink_channel *ch)
{
	static const char mine[] = HOSTLINK_SOC_IDENTIFIER;
	char theirs[128];
	size_t i;

	for (i = 0; i < sizeof(theirs) - 1; i++) {
		struct litepcie_ioctl_reg m = {.addr = CSR_IDENTIFIER_MEM_BASE + 4 * i};
		int ret = do_ioctl(ch, LITEPCIE_IOCTL_REG, &m, "read the board's SoC identifier");
		if (ret < 0)
			return ret;
		theirs[i] = (char)m.val;
		if (!theirs[i] || (i >= sizeof(mine) - 1 && theirs[i] == ' '))
			break;
	}
	theirs[i] = 0;
	if (strcmp(theirs, mine) == 0)
		return 0;
	return fail(NULL, ENODEV, "%s is a board of SoC \"%s\"; this libhostlink is built for \"%s\": use the "
		    "libhostlink built with its SoC's driver (<driver>/user/libhostlink)", ch->path, theirs, mine);
}

int hostlink_channel_index(struct hostlink_channel *ch)
{
	return is_open(ch) ? ch->index : not_open();
}

static void hostlink_free(struct hostlink_channel *ch)
{
	pthread_mutex_destroy(&ch->state);
	pthread_mutex_destroy(&ch->calls[0]);
	pthread_mutex_destroy(&ch->calls[1]);
	free(ch->scratch);
	free(ch->kept);
	free(ch->frames);
	free(ch);
}

int hostlink_open(struct hostlink_channel **ch, int channel, enum hostlink_flow flow, int directions,
		  int timeout_ms)
{
	char path[PATH_MAX];
	snprintf(path, sizeof(path), NODE_PREFIX "%d", channel);
	return hostlink_open_path(ch, path, flow, directions, timeout_ms);
}

int hostlink_open_path(struct hostlink_channel **out, const char *path, enum hostlink_flow flow,
		       int directions, int timeout_ms)
{
	struct hostlink_channel *ch;
	struct litepcie_ioctl_mmap_dma_info info;
	struct litepcie_ioctl_lock lock = {0};
	struct litepcie_ioctl_dma_poll poll_mode = {0};
	struct litepcie_ioctl_dma_flow flow_mode = {0};
	int reader = !!(directions & HOSTLINK_H2C), writer = !!(directions & HOSTLINK_C2H);
	int ret;

	*out = NULL;
	if (flow < HOSTLINK_FLOW_LOOP || flow > HOSTLINK_FLOW_PACKETS)
		return fail(NULL, EINVAL, "flow must be HOSTLINK_FLOW_LOOP, _LOSSLESS, _REALTIME or _PACKETS, not %d",
			    flow);
	if (!directions || (directions & ~(HOSTLINK_H2C | HOSTLINK_C2H)))
		return fail(NULL, EINVAL, "directions are HOSTLINK_H2C and/or HOSTLINK_C2H, not %d", directions);
	if (flow == HOSTLINK_FLOW_REALTIME && reader)
		return fail(NULL, EINVAL, "real-time flow is FPGA to host: directions HOSTLINK_C2H");
	if (timeout_ms <= 0)
		return fail(NULL, EINVAL, "the timeout is a positive number of milliseconds, not %d", timeout_ms);
	ch = calloc(1, sizeof(*ch));
	if (!ch)
		return fail(NULL, ENOMEM, "out of memory");
	snprintf(ch->path, sizeof(ch->path), "%s", path);
	ch->directions = directions;
	ch->flow = flow;
	ch->timeout_ms = timeout_ms;
	pthread_mutex_init(&ch->state, NULL);
	pthread_mutex_init(&ch->calls[0], NULL);
	pthread_mutex_init(&ch->calls[1], NULL);
	ch->fd = open(path, O_RDWR | O_NONBLOCK | O_CLOEXEC);
	if (ch->fd < 0) {
		int err = errno;
		char devices[4][32];
		int n = hostlink_list(devices, 4);
		hostlink_free(ch);
		if (err == ENOENT)
			return fail(NULL, ENODEV, "%s does not exist: is the board there and " HOSTLINK_DRIVER_NAME
				    ".ko loaded? "
				    "(devices: %s%s)", path, n ? devices[0] : "none", n > 1 ? ", ..." : "");
		if (err == EACCES)
			return fail(NULL, err, "no permission to open %s: be a member of its group (hostlink, see "
				    "doc/driver.md)", path);
		return fail(NULL, err, "cannot open %s: %s", path, strerror(err));
	}
	ret = check_soc(ch);
	if (ret < 0)
		goto error;
	ret = do_ioctl(ch, LITEPCIE_IOCTL_MMAP_DMA_INFO, &info, "read the ring's geometry");
	if (ret < 0)
		goto error;
	ch->buffer_size = info.dma_tx_buf_size;
	ch->buffer_count = info.dma_tx_buf_count;
	ch->ring_offset[0] = info.dma_tx_buf_offset;
	ch->ring_offset[1] = info.dma_rx_buf_offset;
	lock.dma_reader_request = reader;
	lock.dma_writer_request = writer;
	ret = do_ioctl(ch, LITEPCIE_IOCTL_LOCK, &lock, "lock");
	if (ret < 0)
		goto error;
	if ((reader && !lock.dma_reader_status) || (writer && !lock.dma_writer_status)) {
		ret = fail(ch, EBUSY, "%s held by another program",
			   reader && !lock.dma_reader_status ? (writer && !lock.dma_writer_status ? "h2c and c2h" : "h2c")
							     : "c2h");
		goto error;
	}
	poll_mode.writer = writer;
	poll_mode.reader = reader;
	ret = do_ioctl(ch, LITEPCIE_IOCTL_DMA_POLL, &poll_mode, "poll");
	if (ret < 0)
		goto error;
	flow_mode.writer = writer ? flow : 0;
	flow_mode.reader = reader ? (flow == HOSTLINK_FLOW_PACKETS ? flow : flow ? 1 : 0) : 0;
	ret = do_ioctl(ch, LITEPCIE_IOCTL_DMA_FLOW, &flow_mode, "set the flow mode");
	if (ret < 0)
		goto error;
	find_board(ch);
	ch->scratch = malloc(ch->buffer_size);
	if (!ch->scratch || handle_add(ch) < 0) {
		ret = fail(ch, ENOMEM, "out of memory");
		goto error;
	}
	*out = ch;
	return 0;
error:
	close(ch->fd);   /* The driver releases the locks, polling and flow mode with the file. */
	hostlink_free(ch);
	return ret;
}

static int engine(struct hostlink_channel *ch, int direction, int enable, int64_t *hw, int64_t *sw)
{
	int ret;
	if (direction == HOSTLINK_H2C) {
		struct litepcie_ioctl_dma_reader m = {.enable = enable};
		ret = do_ioctl(ch, LITEPCIE_IOCTL_DMA_READER, &m, "run the h2c DMA");
		if (hw) *hw = m.hw_count;
		if (sw) *sw = m.sw_count;
	} else {
		struct litepcie_ioctl_dma_writer m = {.enable = enable};
		ret = do_ioctl(ch, LITEPCIE_IOCTL_DMA_WRITER, &m, "run the c2h DMA");
		if (hw) *hw = m.hw_count;
		if (sw) *sw = m.sw_count;
	}
	return ret;
}

/* The DMA's and the program's counts of a direction, leaving it as it is. */
static int dma_counts(struct hostlink_channel *ch, int direction, int64_t *hw, int64_t *sw)
{
	return engine(ch, direction, started(ch, direction) ? 1 : 0, hw, sw);
}

static size_t held(struct hostlink_channel *ch, int d)
{
	size_t n;
	pthread_mutex_lock(&ch->state);
	n = ch->held[d];
	pthread_mutex_unlock(&ch->state);
	return n;
}

/* Sleeps until a started direction of `directions` has a buffer for the program (woken by the DMA's
 * interrupt: driver/wait.py), `ms` milliseconds pass, a signal's handler runs (-EINTR) or the call that
 * began at cancel count `cancel` is cancelled (-ECANCELED); otherwise returns 0 (the caller counts again),
 * or a failure's negative errno. `drain`: h2c only, wake when the DMA has sent every buffer written
 * (hostlink_drain), not at the first free one. A driver without DMA_WAIT is polled every 200 µs. */
static int wait_dma(struct hostlink_channel *ch, int directions, int64_t ms, uint32_t cancel, int drain)
{
	struct litepcie_ioctl_dma_wait w = {0};

	if (cancel_count(ch) != cancel)
		return -ECANCELED;
	directions &= __atomic_load_n(&ch->started, __ATOMIC_SEQ_CST);
	if (!directions || ch->no_wait) {
		usleep(200);
		return 0;
	}
	w.timeout_ms = ms < 1 ? 1 : ms > INT32_MAX ? INT32_MAX : (uint32_t)ms;
	w.writer = !!(directions & HOSTLINK_C2H);
	w.reader = !!(directions & HOSTLINK_H2C);
	w.writer_held = held(ch, 1);
	/* The reader is ready when (sw + reader_held) - hw < count / 2: with count / 2 - 1, when hw >= sw. */
	w.reader_held = drain ? ch->buffer_count / 2 - 1 : held(ch, 0);
	w.cancel = cancel;
	if (ioctl(ch->fd, LITEPCIE_IOCTL_DMA_WAIT, &w) == 0 || errno == ETIMEDOUT)
		return 0;
	if (errno == EINTR || errno == ECANCELED)
		return -errno;
	if (errno == ENOTTY) {
		ch->no_wait = 1;
		usleep(200);
		return 0;
	}
	return fail(ch, errno, "wait for the DMA: %s", advice(errno));
}

static int start(struct hostlink_channel *ch, int direction)
{
	int ret = 0;
	pthread_mutex_lock(&ch->state);
	if (!(ch->started & direction)) {
		ret = engine(ch, direction, 1, NULL, NULL);
		if (ret == 0)
			__atomic_or_fetch(&ch->started, direction, __ATOMIC_SEQ_CST);
	}
	pthread_mutex_unlock(&ch->state);
	return ret;
}

int hostlink_start(struct hostlink_channel *ch, int directions)
{
	if (!is_open(ch))
		return not_open();
	int ret = 0;
	if (directions & ~ch->directions)
		return fail(ch, EINVAL, "opened without %s", (directions & ~ch->directions) & HOSTLINK_H2C ?
			    "HOSTLINK_H2C" : "HOSTLINK_C2H");
	if (directions & HOSTLINK_C2H)
		ret = start(ch, HOSTLINK_C2H);
	if (ret == 0 && (directions & HOSTLINK_H2C))
		ret = start(ch, HOSTLINK_H2C);
	return ret;
}

int hostlink_cancel(struct hostlink_channel *ch)
{
	if (!is_open(ch))
		return not_open();
	uint32_t count = __atomic_add_fetch(&ch->cancel, 1, __ATOMIC_SEQ_CST);
	/* Wakes a call asleep in the driver; a driver without DMA_CANCEL: the calls see the count within their
	 * 200 µs polls. */
	if (ioctl(ch->fd, LITEPCIE_IOCTL_DMA_CANCEL, &count) < 0 && errno != ENOTTY)
		return fail(ch, errno, "cancel: %s", advice(errno));
	return 0;
}

static int drain(struct hostlink_channel *ch, int timeout_ms)
{
	uint32_t cancel = cancel_count(ch);
	int64_t hw, sw, deadline = now_ms() + timeout_ms;
	int ret;

	if (!started(ch, HOSTLINK_H2C))
		return 0;   /* Nothing written yet (the h2c DMA starts after the first buffers). */
	for (;;) {
		if ((ret = dma_counts(ch, HOSTLINK_H2C, &hw, &sw)) < 0)
			return ret;
		if (hw >= sw)
			return 0;
		if (now_ms() > deadline)
			return fail(ch, ETIMEDOUT, "%" PRId64 " bytes written but not taken by the FPGA in %d ms (is "
				    "the core taking data, its channel selected?)", (sw - hw) * (int64_t)ch->buffer_size,
				    timeout_ms);
		if ((ret = wait_dma(ch, HOSTLINK_H2C, deadline - now_ms(), cancel, 1)) < 0) {
			if (ret == -EINTR || ret == -ECANCELED)
				return fail(ch, -ret, "drain: %s with %" PRId64 " bytes not yet taken by the FPGA",
					    ret == -EINTR ? "interrupted by a signal" : "cancelled (hostlink_cancel)",
					    (sw - hw) * (int64_t)ch->buffer_size);
			return ret;
		}
	}
}

int hostlink_drain(struct hostlink_channel *ch, int timeout_ms)
{
	if (!is_open(ch))
		return not_open();
	int ret;
	if (!(ch->directions & HOSTLINK_H2C))
		return 0;
	pthread_mutex_lock(&ch->calls[0]);
	ret = drain(ch, timeout_ms < 0 ? ch->timeout_ms : timeout_ms);
	pthread_mutex_unlock(&ch->calls[0]);
	return ret;
}

int hostlink_close(struct hostlink_channel *ch)
{
	int ret = 0;
	if (!ch)
		return 0;
	if (!is_open(ch))
		return not_open();
	/* What was written goes to the FPGA first (or the failure says how much did not); a packet left open
	 * ends with its held-back tail. */
	if (ch->open_length)
		ret = hostlink_write_packet(ch, NULL, 0, 1);
	if ((ch->directions & HOSTLINK_H2C) && ret >= 0)
		ret = drain(ch, ch->timeout_ms);
	if (ch->started & HOSTLINK_C2H)
		engine(ch, HOSTLINK_C2H, 0, NULL, NULL);
	if (ch->started & HOSTLINK_H2C)
		engine(ch, HOSTLINK_H2C, 0, NULL, NULL);
	for (int i = 0; i < 2; i++)
		if (ch->ring[i])
			munmap(ch->ring[i], ch->buffer_size * ch->buffer_count);
	handle_remove(ch);
	close(ch->fd);
	hostlink_free(ch);
	return ret;
}

const char *hostlink_error(struct hostlink_channel *ch) { (void)ch; return error_text; }
const char *hostlink_open_error(void) { return error_text; }
int hostlink_fd(struct hostlink_channel *ch) { return is_open(ch) ? ch->fd : not_open(); }
size_t hostlink_buffer_size(struct hostlink_channel *ch) { return is_open(ch) ? ch->buffer_size : 0; }
size_t hostlink_buffer_count(struct hostlink_channel *ch) { return is_open(ch) ? ch->buffer_count : 0; }

void hostlink_moved(size_t *sent, size_t *received)
{
	if (sent)
		*sent = moved_sent;
	if (received)
		*received = moved_received;
}

/* Data ------------------------------------------------------------------------------------------- */

static int whole(struct hostlink_channel *ch, size_t size, const char *what)
{
	if (size == 0 || size % ch->buffer_size)
		return fail(ch, EINVAL, "%s moves whole %zu-byte buffers: %zu bytes is not a positive multiple%s",
			    what, ch->buffer_size, size, strcmp(what, "writing") ? "" :
			    " (packets flow, HOSTLINK_FLOW_PACKETS with hostlink_write_packet(), writes any length)");
	return 0;
}

static int holding(struct hostlink_channel *ch, int directions)
{
	int d = -1;
	pthread_mutex_lock(&ch->state);
	if ((directions & HOSTLINK_H2C) && ch->held[0])
		d = 0;
	else if ((directions & HOSTLINK_C2H) && ch->held[1])
		d = 1;
	pthread_mutex_unlock(&ch->state);
	return d < 0 ? 0 : fail(ch, EBUSY, "hostlink_put_buffers() the zero-copy buffers of %s first", d ? "c2h" : "h2c");
}

/* One write() (HOSTLINK_H2C, from `src`) or read() (HOSTLINK_C2H, into `dst`) of at most `batch` of the `size`
 * bytes not yet moved; `*done` and `*done_out` count what moved. Returns 1 if it moved any, 0 if the driver
 * had no room or no data yet, or fails. */
static int move_batch(struct hostlink_channel *ch, int direction, const unsigned char *src, unsigned char *dst,
		      size_t size, size_t batch, size_t *done, size_t *done_out)
{
	size_t n = size - *done < batch ? size - *done : batch;
	ssize_t m = direction == HOSTLINK_H2C ? write(ch->fd, src + *done, n) : read(ch->fd, dst + *done, n);

	if (m < 0 && errno != EAGAIN && errno != EWOULDBLOCK)
		return fail(ch, errno, "%s: %s", direction == HOSTLINK_H2C ? "write" : "read", advice(errno));
	if (m <= 0)
		return 0;
	*done += m;
	*done_out = *done;
	return 1;
}

/* Under the locks of the directions it moves (transfer_locked). Counts what it moved into `*sent` and
 * `*got` as it goes, for the caller's hostlink_moved(). */
static ssize_t transfer(struct hostlink_channel *ch, const void *in, size_t in_size, void *out, size_t out_size,
			size_t *sent_out, size_t *got_out)
{
	const unsigned char *src = in;
	unsigned char *dst = out;
	size_t sent = 0, got = 0, batch = ch->buffer_size * (ch->buffer_count / 2);
	uint32_t cancel = cancel_count(ch);
	int64_t deadline;
	int ret;

	*sent_out = *got_out = 0;
	if ((ret = holding(ch, (in_size ? HOSTLINK_H2C : 0) | (out_size ? HOSTLINK_C2H : 0))) < 0)
		return ret;
	if (in_size) {
		if (!(ch->directions & HOSTLINK_H2C))
			return fail(ch, EINVAL, "opened without HOSTLINK_H2C");
		if ((ret = whole(ch, in_size, "writing")) < 0)
			return ret;
	}
	if (out_size) {
		if (!(ch->directions & HOSTLINK_C2H))
			return fail(ch, EINVAL, "opened without HOSTLINK_C2H");
		if ((ret = whole(ch, out_size, "reading")) < 0)
			return ret;
		if ((ret = start(ch, HOSTLINK_C2H)) < 0)   /* Armed first: it waits for data. */
			return ret;
	}
	deadline = now_ms() + ch->timeout_ms;
	while (sent < in_size || got < out_size) {
		int moved = 0;
		if (sent < in_size) {
			if ((ret = move_batch(ch, HOSTLINK_H2C, src, NULL, in_size, batch, &sent, sent_out)) < 0)
				return ret;
			moved |= ret;
			if ((ret = start(ch, HOSTLINK_H2C)) < 0)   /* After the first buffers: none is read stale. */
				return ret;
		}
		if (got < out_size) {
			if ((ret = move_batch(ch, HOSTLINK_C2H, NULL, dst, out_size, batch, &got, got_out)) < 0)
				return ret;
			moved |= ret;
		}
		if (sent == in_size && got == out_size)
			break;
		if (moved)
			deadline = now_ms() + ch->timeout_ms;
		else if (now_ms() > deadline)
			return fail(ch, ETIMEDOUT, "transfer: no progress for %d ms after %zu of %zu bytes (is the "
				    "core taking and giving data, its channel selected?)", ch->timeout_ms,
				    sent + got, in_size + out_size);
		else if ((ret = wait_dma(ch, (sent < in_size ? HOSTLINK_H2C : 0) | (got < out_size ? HOSTLINK_C2H : 0),
					 deadline - now_ms(), cancel, 0)) < 0)
			return ret == -EINTR || ret == -ECANCELED ?
			       stopped(ch, -ret, "transfer", sent + got, in_size + out_size) : ret;
	}
	return out_size ? (ssize_t)out_size : (ssize_t)in_size;
}

static void lock_directions(struct hostlink_channel *ch, int directions)
{
	if (directions & HOSTLINK_H2C)
		pthread_mutex_lock(&ch->calls[0]);
	if (directions & HOSTLINK_C2H)
		pthread_mutex_lock(&ch->calls[1]);
}

static void unlock_directions(struct hostlink_channel *ch, int directions)
{
	if (directions & HOSTLINK_C2H)
		pthread_mutex_unlock(&ch->calls[1]);
	if (directions & HOSTLINK_H2C)
		pthread_mutex_unlock(&ch->calls[0]);
}

ssize_t hostlink_transfer(struct hostlink_channel *ch, const void *in, size_t in_size, void *out, size_t out_size)
{
	if (!is_open(ch))
		return not_open();
	int directions = (in_size ? HOSTLINK_H2C : 0) | (out_size ? HOSTLINK_C2H : 0);
	ssize_t ret;

	moved_sent = moved_received = 0;
	if (!directions)
		return fail(ch, EINVAL, "transfer: nothing to send or receive (both sizes are 0)");
	if (in_size && ch->flow == HOSTLINK_FLOW_PACKETS)
		return fail(ch, EINVAL, "packets flow host to FPGA sends with hostlink_write_packet() (it heads each "
			    "buffer with its length); hostlink_read_packet() receives");
	lock_directions(ch, directions);
	ret = transfer(ch, in, in_size, out, out_size, &moved_sent, &moved_received);
	unlock_directions(ch, directions);
	return ret;
}

ssize_t hostlink_write(struct hostlink_channel *ch, const void *data, size_t size)
{
	if (!is_open(ch))
		return not_open();
	if (size == 0)
		return fail(ch, EINVAL, "writing moves whole %zu-byte buffers: 0 bytes is not a positive multiple",
			    ch->buffer_size);
	return hostlink_transfer(ch, data, size, NULL, 0);
}

ssize_t hostlink_read(struct hostlink_channel *ch, void *data, size_t size)
{
	if (!is_open(ch))
		return not_open();
	if (size == 0)
		return fail(ch, EINVAL, "reading moves whole %zu-byte buffers: 0 bytes is not a positive multiple",
			    ch->buffer_size);
	return hostlink_transfer(ch, NULL, 0, data, size);
}

/* Packets flow host to FPGA ---------------------------------------------------------------------- */

/* `n` bytes from offset `at` of the packet's bytes: the open tail `open` (`open_length`), then `data`. */
static void packet_bytes(unsigned char *dst, const unsigned char *open, size_t open_length,
			 const unsigned char *data, size_t at, size_t n)
{
	while (n) {
		size_t k;
		if (at < open_length) {
			k = open_length - at < n ? open_length - at : n;
			memcpy(dst, open + at, k);
		} else {
			k = n;
			memcpy(dst, data + (at - open_length), k);
		}
		dst += k;
		at += k;
		n -= k;
	}
}

/* Under the h2c lock: hostlink.protocol's frame_packet, written batch by batch into the driver's ring. */
static ssize_t write_packet(struct hostlink_channel *ch, const unsigned char *data, size_t size, int end)
{
	size_t bs = ch->buffer_size, capacity = bs - HOSTLINK_HEADER_BYTES, batch = ch->buffer_count / 2;
	size_t total = ch->open_length + size, whole, at = 0, sent, got;
	unsigned char tail[HOSTLINK_HEADER_BYTES];
	int ret;

	if (!(ch->directions & HOSTLINK_H2C))
		return fail(ch, EINVAL, "opened without HOSTLINK_H2C");
	if (ch->flow != HOSTLINK_FLOW_PACKETS)
		return fail(ch, EINVAL, "hostlink_write_packet: packets flow only (HOSTLINK_FLOW_PACKETS); use "
			    "hostlink_write() for whole buffers");
	if ((ret = holding(ch, HOSTLINK_H2C)) < 0)
		return ret;
	if (end && total == 0)
		return fail(ch, EINVAL, "an empty packet: a packet has at least one byte (a core's stream has no "
			    "empty packet), and no packet is open to end");
	/* A buffer without END holds whole 32-byte units: the packet stays contiguous at every DMA width, and
	 * 1 to 32 bytes stay back to end it with. */
	whole = end ? total : total ? total - ((total - 1) % HOSTLINK_HEADER_BYTES + 1) : 0;
	if (whole && !ch->frames && !(ch->frames = malloc(bs * batch)))
		return fail(ch, ENOMEM, "out of memory");
	while (at < whole) {
		size_t n = 0;
		for (; n < batch && at < whole; n++) {
			unsigned char *b = ch->frames + n * bs;
			uint32_t magic = HOSTLINK_HEADER_MAGIC, length, flags;
			length = (uint32_t)(whole - at < capacity ? whole - at : capacity);
			flags = end && at + length == whole ? HOSTLINK_HEADER_FLAG_END : 0;
			memset(b, 0, bs);
			memcpy(b + HOSTLINK_HEADER_MAGIC_OFFSET, &magic, 4);
			memcpy(b + HOSTLINK_HEADER_LENGTH_OFFSET, &length, 4);
			memcpy(b + HOSTLINK_HEADER_FLAGS_OFFSET, &flags, 4);
			packet_bytes(b + HOSTLINK_HEADER_BYTES, ch->open_packet, ch->open_length, data, at, length);
			at += length;
		}
		ret = transfer(ch, ch->frames, n * bs, NULL, 0, &sent, &got);
		moved_sent += sent;
		if (ret < 0)
			return ret;
	}
	packet_bytes(tail, ch->open_packet, ch->open_length, data, whole, total - whole);
	memcpy(ch->open_packet, tail, total - whole);
	ch->open_length = total - whole;
	return size;
}

ssize_t hostlink_write_packet(struct hostlink_channel *ch, const void *data, size_t size, int end)
{
	if (!is_open(ch))
		return not_open();
	ssize_t ret;
	moved_sent = moved_received = 0;
	lock_directions(ch, HOSTLINK_H2C);
	ret = write_packet(ch, data, size, end);
	unlock_directions(ch, HOSTLINK_H2C);
	return ret;
}

/* Zero-copy -------------------------------------------------------------------------------------- */

static int direction_index(struct hostlink_channel *ch, int direction, const char *what)
{
	if (direction != HOSTLINK_H2C && direction != HOSTLINK_C2H)
		return fail(ch, EINVAL, "%s: the direction is HOSTLINK_H2C or HOSTLINK_C2H, not %d", what, direction);
	if (!(ch->directions & direction))
		return fail(ch, EINVAL, "%s: opened without %s", what,
			    direction == HOSTLINK_H2C ? "HOSTLINK_H2C" : "HOSTLINK_C2H");
	return direction == HOSTLINK_C2H;
}

static int update(struct hostlink_channel *ch, int direction, int64_t sw_count)
{
	struct litepcie_ioctl_mmap_dma_update m = {.sw_count = sw_count};
	return do_ioctl(ch, direction == HOSTLINK_H2C ? LITEPCIE_IOCTL_MMAP_DMA_READER_UPDATE :
			LITEPCIE_IOCTL_MMAP_DMA_WRITER_UPDATE, &m, "give the buffers back");
}

/* Buffers ready for the program in a direction whose DMA has done `hw` and the program served `sw`, after
 * the `held` it holds: c2h, filled and not yet got; h2c, free (the driver lets a program run half a ring
 * ahead). */
static int64_t buffers_ready(struct hostlink_channel *ch, int direction, int64_t hw, int64_t sw, size_t held)
{
	int64_t next = sw + (int64_t)held;
	return direction == HOSTLINK_C2H ? hw - next : (int64_t)ch->buffer_count / 2 - (next - hw);
}

static int map_ring(struct hostlink_channel *ch, int d)
{
	int ret = 0;
	pthread_mutex_lock(&ch->state);
	if (!ch->ring[d]) {
		void *ring = mmap(NULL, ch->buffer_size * ch->buffer_count, PROT_READ | PROT_WRITE, MAP_SHARED,
				  ch->fd, ch->ring_offset[d]);
		if (ring == MAP_FAILED)
			ret = fail(ch, errno, "cannot map the %s ring: %s", d ? "c2h" : "h2c", advice(errno));
		else
			ch->ring[d] = ring;
	}
	pthread_mutex_unlock(&ch->state);
	return ret;
}

/* Under the direction's lock: held[d] changes only here and in put_buffers. */
static ssize_t get_buffers(struct hostlink_channel *ch, int direction, void **first, size_t max, int timeout_ms)
{
	int d = direction_index(ch, direction, "hostlink_get_buffers");
	int64_t half = ch->buffer_count / 2, hw, sw, next, ready, deadline;
	uint32_t cancel = cancel_count(ch);
	size_t slot, mine;
	int ret;

	if (d < 0)
		return d;
	if (max == 0)
		return fail(ch, EINVAL, "hostlink_get_buffers: max is a positive number of buffers");
	if ((ret = map_ring(ch, d)) < 0)
		return ret;
	if (direction == HOSTLINK_C2H && (ret = start(ch, HOSTLINK_C2H)) < 0)
		return ret;
	if (timeout_ms < 0)
		timeout_ms = ch->timeout_ms;
	deadline = now_ms() + timeout_ms;
	for (;;) {
		if ((ret = dma_counts(ch, direction, &hw, &sw)) < 0)
			return ret;
		mine = held(ch, d);
		next = sw + (int64_t)mine;
		ready = buffers_ready(ch, direction, hw, sw, mine);
		if (direction == HOSTLINK_C2H && ch->flow == HOSTLINK_FLOW_LOOP && hw - sw > half) {
			/* (LitePCIe's read() counts these as lost.) Loop flow loses data: lossless or real-time do not. */
			if (mine)
				return fail(ch, EOVERFLOW, "the DMA is %" PRId64 " buffers ahead: those you hold may "
					    "be written again (loop flow: use lossless or real-time)", hw - sw);
			if ((ret = update(ch, direction, hw - half)) < 0)
				return ret;
			return fail(ch, EOVERFLOW, "%" PRId64 " buffers written again by the DMA before you got "
				    "them (loop flow: use lossless or real-time)", hw - half - sw);
		}
		if (ready > 0)
			break;
		if (timeout_ms == 0)
			return 0;
		if (now_ms() > deadline)
			return fail(ch, ETIMEDOUT, "hostlink_get_buffers: no %s buffer for %d ms (is the core taking and "
				    "giving data, its channel selected?)", d ? "c2h" : "h2c", timeout_ms);
		if ((ret = wait_dma(ch, direction, deadline - now_ms(), cancel, 0)) < 0)
			return ret == -EINTR || ret == -ECANCELED ? stopped(ch, -ret, "hostlink_get_buffers", 0, 0) : ret;
	}
	slot = (size_t)(next % (int64_t)ch->buffer_count);
	if ((size_t)ready > ch->buffer_count - slot)
		ready = ch->buffer_count - slot;   /* They follow each other in memory up to the ring's end. */
	if ((size_t)ready > max)
		ready = max;
	pthread_mutex_lock(&ch->state);
	ch->held[d] += ready;
	pthread_mutex_unlock(&ch->state);
	*first = ch->ring[d] + slot * ch->buffer_size;
	return ready;
}

/* The directions of `directions` that have a buffer for the program now (as get_buffers counts). */
static int ready_directions(struct hostlink_channel *ch, int directions)
{
	int64_t hw, sw;
	int ready = 0, ret;

	for (int direction = HOSTLINK_H2C; direction <= HOSTLINK_C2H; direction <<= 1) {
		if (!(directions & direction))
			continue;
		if ((ret = dma_counts(ch, direction, &hw, &sw)) < 0)
			return ret;
		if (buffers_ready(ch, direction, hw, sw, held(ch, direction == HOSTLINK_C2H)) > 0)
			ready |= direction;
	}
	return ready;
}

/* Takes no direction's lock: a thread may wait while others read and write. */
int hostlink_wait(struct hostlink_channel *ch, int directions, int timeout_ms)
{
	if (!is_open(ch))
		return not_open();
	uint32_t cancel = cancel_count(ch);
	int64_t deadline;
	int ret;

	if (!directions || (directions & ~(HOSTLINK_H2C | HOSTLINK_C2H)))
		return fail(ch, EINVAL, "hostlink_wait: directions are HOSTLINK_H2C and/or HOSTLINK_C2H, not %d",
			    directions);
	if (directions & ~ch->directions)
		return fail(ch, EINVAL, "hostlink_wait: opened without %s",
			    (directions & ~ch->directions) & HOSTLINK_H2C ? "HOSTLINK_H2C" : "HOSTLINK_C2H");
	if (timeout_ms < 0)
		timeout_ms = ch->timeout_ms;
	ret = directions & HOSTLINK_C2H ? start(ch, HOSTLINK_C2H) : 0;   /* Armed: it waits for data. */
	deadline = now_ms() + timeout_ms;
	while (ret == 0) {
		if ((ret = ready_directions(ch, directions)) != 0 || timeout_ms == 0)
			break;
		if (now_ms() > deadline) {
			ret = fail(ch, ETIMEDOUT, "hostlink_wait: no %s buffer for %d ms (is the core taking and giving "
				   "data, its channel selected?)", directions == HOSTLINK_H2C ? "h2c" :
				   directions == HOSTLINK_C2H ? "c2h" : "h2c or c2h", timeout_ms);
			break;
		}
		ret = wait_dma(ch, directions, deadline - now_ms(), cancel, 0);
		if (ret == -EINTR || ret == -ECANCELED)
			ret = stopped(ch, -ret, "hostlink_wait", 0, 0);
	}
	return ret;
}

ssize_t hostlink_get_buffers(struct hostlink_channel *ch, int direction, void **first, size_t max, int timeout_ms)
{
	if (!is_open(ch))
		return not_open();
	ssize_t ret;
	if (direction != HOSTLINK_H2C && direction != HOSTLINK_C2H)
		return direction_index(ch, direction, "hostlink_get_buffers");
	if (direction == HOSTLINK_H2C && ch->flow == HOSTLINK_FLOW_PACKETS)
		return fail(ch, EINVAL, "hostlink_get_buffers(HOSTLINK_H2C): no zero-copy host to FPGA in packets flow "
			    "(each buffer needs its header): use hostlink_write_packet()");
	lock_directions(ch, direction);
	ret = get_buffers(ch, direction, first, max, timeout_ms);
	unlock_directions(ch, direction);
	return ret;
}

static int put_buffers(struct hostlink_channel *ch, int direction, size_t count)
{
	int d = direction_index(ch, direction, "hostlink_put_buffers");
	size_t mine;
	int64_t sw;
	int ret;

	if (d < 0)
		return d;
	mine = held(ch, d);
	if (count > mine)
		return fail(ch, EINVAL, "hostlink_put_buffers: %zu buffers, of %zu got and not yet put", count, mine);
	if (count == 0)
		return 0;
	if ((ret = dma_counts(ch, direction, NULL, &sw)) < 0)
		return ret;
	if ((ret = update(ch, direction, sw + (int64_t)count)) < 0)
		return ret;
	pthread_mutex_lock(&ch->state);
	ch->held[d] -= count;
	pthread_mutex_unlock(&ch->state);
	if (direction == HOSTLINK_H2C)
		return start(ch, HOSTLINK_H2C);   /* After the first buffers: none is read stale. */
	return 0;
}

int hostlink_put_buffers(struct hostlink_channel *ch, int direction, size_t count)
{
	if (!is_open(ch))
		return not_open();
	int ret;
	if (direction != HOSTLINK_H2C && direction != HOSTLINK_C2H)
		return direction_index(ch, direction, "hostlink_put_buffers");
	lock_directions(ch, direction);
	ret = put_buffers(ch, direction, count);
	unlock_directions(ch, direction);
	return ret;
}

/* Under the c2h lock. */
static ssize_t read_buffer(struct hostlink_channel *ch, void *data, size_t capacity,
			   struct hostlink_buffer_info *info)
{
	const unsigned char *b = ch->scratch;
	uint32_t magic, length, flags;
	size_t sent, got;
	ssize_t ret;

	if (ch->flow != HOSTLINK_FLOW_REALTIME && ch->flow != HOSTLINK_FLOW_PACKETS)
		return fail(ch, EINVAL, "buffers have headers in real-time and packets flows only");
	ret = transfer(ch, NULL, 0, ch->scratch, ch->buffer_size, &sent, &got);
	if (ret < 0)
		return ret;
	memcpy(&magic, b + HOSTLINK_HEADER_MAGIC_OFFSET, 4);
	memcpy(&info->sequence, b + HOSTLINK_HEADER_SEQUENCE_OFFSET, 4);
	memcpy(&info->time, b + HOSTLINK_HEADER_TIME_OFFSET, 8);
	memcpy(&info->dropped, b + HOSTLINK_HEADER_DROPPED_OFFSET, 8);
	memcpy(&length, b + HOSTLINK_HEADER_LENGTH_OFFSET, 4);
	memcpy(&flags, b + HOSTLINK_HEADER_FLAGS_OFFSET, 4);
	if (magic != HOSTLINK_HEADER_MAGIC || length > ch->buffer_size - HOSTLINK_HEADER_BYTES)
		return fail(ch, EPROTO, "a buffer without hostlink's header: is the channel's writer in real-time "
			    "or packets flow, through a user port?");
	info->length = length;
	info->ended = !!(flags & HOSTLINK_HEADER_FLAG_END);
	if (length > capacity)
		return fail(ch, EMSGSIZE, "a buffer of %u data bytes does not fit in %zu", length, capacity);
	if (data)           /* NULL: the data stays in the scratch buffer (a packet read to be dropped). */
		memcpy(data, b + HOSTLINK_HEADER_BYTES, length);
	return length;
}

ssize_t hostlink_read_buffer(struct hostlink_channel *ch, void *data, size_t capacity,
			     struct hostlink_buffer_info *info)
{
	if (!is_open(ch))
		return not_open();
	ssize_t ret;
	size_t most = ch->buffer_size - HOSTLINK_HEADER_BYTES;
	moved_sent = moved_received = 0;
	/* Refused before anything is read: a buffer that did not fit would be lost (read_packet's own calls
	 * consume a packet too long for the caller's room, and say so). */
	if ((ch->flow == HOSTLINK_FLOW_REALTIME || ch->flow == HOSTLINK_FLOW_PACKETS) && capacity < most)
		return fail(ch, EINVAL, "hostlink_read_buffer: a buffer carries up to %zu bytes of data: a capacity of "
			    "%zu could lose one (give at least hostlink_buffer_size() - HOSTLINK_HEADER_BYTES)",
			    most, capacity);
	lock_directions(ch, HOSTLINK_C2H);
	ret = read_buffer(ch, data, capacity, info);
	unlock_directions(ch, HOSTLINK_C2H);
	if (ret > 0)
		moved_received = ret;
	return ret;
}

/* Makes room in ch->kept for `more` bytes after its `kept_length`; 0, or -1 past HOSTLINK_KEPT_PACKET_MAX or
 * when memory runs out. */
static int keep_room(struct hostlink_channel *ch, size_t more)
{
	size_t size = ch->kept_size ? ch->kept_size : ch->buffer_size;
	unsigned char *kept;
	if (ch->kept_length + more > HOSTLINK_KEPT_PACKET_MAX)
		return -1;
	while (size < ch->kept_length + more)
		size *= 2;
	if (size == ch->kept_size)
		return 0;
	kept = realloc(ch->kept, size);
	if (!kept)
		return -1;
	ch->kept = kept;
	ch->kept_size = size;
	return 0;
}

/* A packet longer than the caller's room: what was read of it (`length` bytes in `data`, then the buffer that
 * did not fit, in the scratch buffer) and the rest of it go into ch->kept, for the next call with room
 * enough. Returns -EMSGSIZE, or -EPROTO/-ENOMEM/a read's error (the packet then lost, and said so). */
static ssize_t keep_packet(struct hostlink_channel *ch, const unsigned char *data, size_t length,
			   struct hostlink_buffer_info *info, size_t capacity)
{
	size_t most = ch->buffer_size - HOSTLINK_HEADER_BYTES;
	int lost = 0;
	ssize_t ret;

	ch->kept_length = 0;
	if (keep_room(ch, length + info->length) < 0) {
		lost = 1;
	} else {
		memcpy(ch->kept, data, length);
		memcpy(ch->kept + length, ch->scratch + HOSTLINK_HEADER_BYTES, info->length);
		ch->kept_length = length + info->length;
	}
	while (!info->ended) {
		if (!lost && keep_room(ch, most) < 0)
			lost = 1;
		ret = read_buffer(ch, lost ? NULL : ch->kept + ch->kept_length, most, info);
		if (ret < 0) {
			ch->kept_length = 0;
			return ret;
		}
		if (info->dropped) {
			ch->kept_length = 0;
			return fail(ch, EPROTO, "%llu bytes dropped within a packet (buffer %u): real-time flow loses "
				    "data, packets flow does not", (unsigned long long)info->dropped, info->sequence);
		}
		length += ret;
		if (!lost)
			ch->kept_length += ret;
	}
	if (lost) {
		ch->kept_length = 0;
		return fail(ch, length > HOSTLINK_KEPT_PACKET_MAX ? EMSGSIZE : ENOMEM,
			    "a packet of %zu bytes does not fit in %zu, and could not be kept (%s): it is lost", length,
			    capacity, length > HOSTLINK_KEPT_PACKET_MAX ? "longer than HOSTLINK_KEPT_PACKET_MAX" :
			    "out of memory");
	}
	return fail(ch, EMSGSIZE, "a packet of %zu bytes does not fit in %zu: it is kept; call again with at least "
		    "hostlink_kept_packet_length() bytes", ch->kept_length, capacity);
}

ssize_t hostlink_read_packet(struct hostlink_channel *ch, void *data, size_t capacity)
{
	if (!is_open(ch))
		return not_open();
	struct hostlink_buffer_info info = {0};
	unsigned char *dst = data;
	size_t length = 0;
	ssize_t ret = 0;

	moved_sent = moved_received = 0;
	lock_directions(ch, HOSTLINK_C2H);
	if (ch->kept_length) {          /* The packet an earlier call had no room for. */
		if (ch->kept_length > capacity) {
			ret = fail(ch, EMSGSIZE, "the kept packet of %zu bytes does not fit in %zu: call again with at "
				   "least hostlink_kept_packet_length() bytes", ch->kept_length, capacity);
		} else {
			memcpy(data, ch->kept, ch->kept_length);
			ret = moved_received = ch->kept_length;
			ch->kept_length = 0;
		}
		unlock_directions(ch, HOSTLINK_C2H);
		return ret;
	}
	for (;;) {
		ret = read_buffer(ch, dst + length, capacity - length, &info);
		if (ret == -EMSGSIZE) {
			ret = keep_packet(ch, dst, length, &info, capacity);
			break;
		}
		if (ret < 0)
			break;
		if (info.dropped && length) {
			ret = fail(ch, EPROTO, "%llu bytes dropped within a packet (buffer %u): real-time flow loses "
				   "data, packets flow does not", (unsigned long long)info.dropped, info.sequence);
			break;
		}
		length += ret;
		moved_received = length;
		if (info.ended)
			break;
	}
	if (ret >= 0)
		ret = length;
	unlock_directions(ch, HOSTLINK_C2H);
	return ret;
}

size_t hostlink_kept_packet_length(struct hostlink_channel *ch)
{
	size_t length;
	if (!is_open(ch))
		return 0;
	lock_directions(ch, HOSTLINK_C2H);
	length = ch->kept_length;
	unlock_directions(ch, HOSTLINK_C2H);
	return length;
}

/* Registers and state ---------------------------------------------------------------------------- */

static int register_access(struct hostlink_channel *ch, const char *name, int word, uint32_t *value, int write)
{
	struct litepcie_ioctl_reg m = {0};
	size_t i;
	int ret;

	if (!is_open(ch))
		return not_open();
	for (i = 0; i < sizeof(hostlink_registers) / sizeof(hostlink_registers[0]); i++)
		if (strcmp(hostlink_registers[i].name, name) == 0)
			break;
	if (i == sizeof(hostlink_registers) / sizeof(hostlink_registers[0]))
		return fail(ch, EINVAL, "no register '%s' in this SoC's map", name);
	if (word < 0 || word >= hostlink_registers[i].words)
		return fail(ch, EINVAL, "register '%s' has %d 32-bit words, not a word %d", name,
			    hostlink_registers[i].words, word);
	m.addr = hostlink_registers[i].address + 4 * word;
	m.val = write ? *value : 0;
	m.is_write = write;
	ret = do_ioctl(ch, LITEPCIE_IOCTL_REG, &m, write ? "write a register" : "read a register");
	if (ret == 0 && !write)
		*value = m.val;
	return ret;
}

int hostlink_register_read(struct hostlink_channel *ch, const char *name, uint32_t *value)
{
	return register_access(ch, name, 0, value, 0);
}

int hostlink_register_write(struct hostlink_channel *ch, const char *name, uint32_t value)
{
	return register_access(ch, name, 0, &value, 1);
}

int hostlink_register_word(struct hostlink_channel *ch, const char *name, int word, uint32_t *value)
{
	return register_access(ch, name, word, value, 0);
}

int hostlink_cycles(struct hostlink_channel *ch, uint64_t *cycles)
{
	if (!is_open(ch))
		return not_open();
	struct litepcie_ioctl_cycles m = {0};
	int ret;
	ret = do_ioctl(ch, LITEPCIE_IOCTL_CYCLES, &m, "read the cycle counter");
	*cycles = m.cycles;
	return ret;
}

static void direction_stats(struct hostlink_direction_stats *to, const struct litepcie_ioctl_stats_direction *from)
{
	to->hw_count     = from->hw_count;
	to->sw_count     = from->sw_count;
	to->lost         = from->lost;
	to->lost_events  = from->lost_events;
	to->level        = from->level;
	to->level_max    = from->level_max;
	to->flow         = from->flow;
	to->enabled      = from->enabled;
	to->fpga_given   = from->fpga_given;
	to->fpga_started = from->fpga_started;
	to->fpga_done    = from->fpga_done;
	to->fpga_waits   = from->fpga_waits;
}

int hostlink_stats(struct hostlink_channel *ch, struct hostlink_stats *stats)
{
	if (!is_open(ch))
		return not_open();
	struct litepcie_ioctl_stats m = {0};
	int ret;
	memset(stats, 0, sizeof(*stats));
	ret = do_ioctl(ch, LITEPCIE_IOCTL_STATS, &m, "read the channel's stats");
	if (ret < 0)
		return ret;
	direction_stats(&stats->c2h, &m.writer);
	direction_stats(&stats->h2c, &m.reader);
	stats->buffer_count = m.buffer_count;
	stats->buffer_size  = m.buffer_size;
	return 0;
}

int hostlink_counts(struct hostlink_channel *ch, struct hostlink_counts *counts)
{
	if (!is_open(ch))
		return not_open();
	int ret = 0;
	memset(counts, 0, sizeof(*counts));
	if (ch->directions & HOSTLINK_H2C)
		ret = dma_counts(ch, HOSTLINK_H2C, &counts->h2c_done, &counts->h2c_served);
	if (ret == 0 && (ch->directions & HOSTLINK_C2H))
		ret = dma_counts(ch, HOSTLINK_C2H, &counts->c2h_done, &counts->c2h_served);
	return ret;
}
