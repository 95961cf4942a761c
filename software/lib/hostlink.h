/* This file is part of hostlink.
 * Copyright (c) 2026 hostlink developers
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * libhostlink: your program's side of a hostlink PCIe SoC, in C, through its generated Linux driver
 * (the same calls as Python's hostlink.host; doc/host_api.md).
 *
 *     struct hostlink_channel *ch;
 *     int ret = hostlink_open(&ch, 0, HOSTLINK_FLOW_LOSSLESS, HOSTLINK_H2C | HOSTLINK_C2H, 5000);
 *     if (ret < 0) { fprintf(stderr, "%s\n", hostlink_open_error()); return 1; }
 *     ret = hostlink_transfer(ch, samples, size, results, size);   // out and back, overlapped
 *     if (ret < 0) fprintf(stderr, "%s\n", hostlink_error(ch));
 *     if (hostlink_close(ch) < 0) fprintf(stderr, "%s\n", hostlink_error(NULL));   // data not sent
 *
 * Every call returns 0 (or a count) on success and a negative errno on failure; hostlink_error() then
 * says what happened and what to do. A blocking call ends with -ETIMEDOUT after the channel's timeout
 * without progress, -EINTR when a signal's handler runs during it (even one installed with SA_RESTART),
 * -ECANCELED when another thread calls hostlink_cancel(); hostlink_moved() then says how much it moved.
 *
 * Threads: a channel may be used from several threads at once. A reader thread and a writer thread never
 * wait on each other (each direction's calls are serialized apart; a call sleeps holding only its own
 * direction's turn), hostlink_wait() takes neither, and error texts are per thread. Sizes are whole
 * buffers of the driver's ring (hostlink_buffer_size()), but for hostlink_write_packet (packets flow).
 */

#ifndef HOSTLINK_H
#define HOSTLINK_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

#define HOSTLINK_VERSION_MAJOR 0
#define HOSTLINK_VERSION_MINOR 2
#define HOSTLINK_VERSION_PATCH 0

/* Flow modes (doc/user_cores.md). REALTIME: FPGA to host only. */
enum hostlink_flow {
	HOSTLINK_FLOW_LOOP     = 0,   /* LitePCIe's loop mode: loses data when the program falls behind. */
	HOSTLINK_FLOW_LOSSLESS = 1,   /* The DMA moves only buffers the program has written or read.     */
	HOSTLINK_FLOW_REALTIME = 2,   /* Drops between buffers, each buffer headed by what was dropped.  */
	HOSTLINK_FLOW_PACKETS  = 3,   /* Lossless packets of any length, both ways (hostlink_write_packet,
	                               * hostlink_read_packet), each buffer headed by its data's length. */
};

/* Directions, or-ed. */
#define HOSTLINK_H2C 1   /* host to FPGA: the channel's DMA reader */
#define HOSTLINK_C2H 2   /* FPGA to host: the channel's DMA writer */

/* A framed buffer's header (real-time and packets flows), 32 bytes at the buffer's start, little-endian:
 * each field's byte offset (hostlink.protocol's HEADER_FIELDS; test/test_protocol.py compares the two). */
#define HOSTLINK_HEADER_BYTES           32
#define HOSTLINK_HEADER_MAGIC           0x314b4c48u   /* "HLK1" */
#define HOSTLINK_HEADER_FLAG_END        1u            /* the buffer's data ends a packet */
#define HOSTLINK_HEADER_MAGIC_OFFSET    0             /* uint32_t: HOSTLINK_HEADER_MAGIC */
#define HOSTLINK_HEADER_SEQUENCE_OFFSET 4             /* uint32_t */
#define HOSTLINK_HEADER_TIME_OFFSET     8             /* uint64_t */
#define HOSTLINK_HEADER_DROPPED_OFFSET  16            /* uint64_t */
#define HOSTLINK_HEADER_LENGTH_OFFSET   24            /* uint32_t */
#define HOSTLINK_HEADER_FLAGS_OFFSET    28            /* uint32_t: HOSTLINK_HEADER_FLAG_END */

struct hostlink_buffer_info {
	uint32_t sequence;   /* buffers begun since the writer's start, from 0 */
	uint64_t time;       /* the SoC's cycle counter when the buffer began */
	uint64_t dropped;    /* bytes dropped just before this buffer's data (real-time flow) */
	uint32_t length;     /* bytes of data (after the header) */
	int      ended;      /* 1: a `last` from the core ended it (a packet's end) */
};

struct hostlink_channel;

/* The DMA channels' device nodes of the driver this library is built with, /dev/litepcie0, ... (a driver
 * generated with --driver-name NAME: /dev/NAME0, ...): writes up to `max` paths of up to 32 bytes each into
 * `paths` and returns how many there are (possibly more than `max`). */
int hostlink_list(char paths[][32], int max);

/* Open DMA channel `channel` (/dev/litepcie<channel>, or /dev/NAME<channel> for a driver named NAME) for
 * `directions` in `flow`, with `timeout_ms` milliseconds without progress before a call gives up. Locks the
 * directions (another program holding one: -EBUSY). A board of another SoC than the one this library is built
 * for (its register map) is refused: -ENODEV. On failure *ch is NULL and hostlink_open_error() says why. */
int hostlink_open(struct hostlink_channel **ch, int channel, enum hostlink_flow flow, int directions,
		  int timeout_ms);
/* The same on a device node's path. */
int hostlink_open_path(struct hostlink_channel **ch, const char *path, enum hostlink_flow flow,
		       int directions, int timeout_ms);
/* Waits until everything written has been taken by the FPGA (the h2c DMA has read every buffer written),
 * up to `timeout_ms` (-1: the channel's timeout). Returns 0, or -ETIMEDOUT saying how many bytes were
 * written but not taken (-EINTR, -ECANCELED as every blocking call). */
int hostlink_drain(struct hostlink_channel *ch, int timeout_ms);
/* Drains (as hostlink_drain, with the channel's timeout), stops what the channel started and releases
 * it, whatever the drain's outcome: 0, or the drain's failure (hostlink_error(NULL) says how many bytes
 * were not sent). Do not use `ch` afterwards. */
int hostlink_close(struct hostlink_channel *ch);

/* Ends the blocking calls on `ch` that other threads are in (now, or asleep in the driver) with
 * -ECANCELED; calls begun afterwards are not affected. Safe from any thread, not from a signal handler. */
int hostlink_cancel(struct hostlink_channel *ch);

/* Every call on a handle already closed (or never opened) fails with -EBADF; the size calls return 0. */

/* The calling thread's last failure, with what to do (any channel: `ch` may be NULL or already closed). */
const char *hostlink_error(struct hostlink_channel *ch);
const char *hostlink_open_error(void);

/* The bytes the calling thread's last hostlink_write, _read, _transfer, _read_buffer or _read_packet
 * moved: sent host to FPGA (into the driver's ring) and received, also when it failed (a timeout, a
 * signal, hostlink_cancel()). Either pointer may be NULL. */
void hostlink_moved(size_t *sent, size_t *received);

/* The channel's board: its PCI address ("" when the driver does not name it, as LitePCIe's own), and the
 * channel's number on that board, the N of its registers' names (pcie_dma<N>_...). Device nodes are numbered
 * across boards: with two boards of 2 channels, /dev/litepcie2 is the second board's channel 0. */
const char *hostlink_board(struct hostlink_channel *ch);
int hostlink_channel_index(struct hostlink_channel *ch);
/* The channel's device node ("" for a handle not open). */
const char *hostlink_path(struct hostlink_channel *ch);

/* The channel's file descriptor, for poll(), select() and epoll (level-triggered, not EPOLLET): POLLIN when
 * a c2h buffer is filled for you, POLLOUT when an h2c buffer is free; the DMA's interrupt wakes the poller
 * (start c2h first: hostlink_start). Then read or write one buffer: it does not wait. Do not read(),
 * write() or close() it yourself. */
int hostlink_fd(struct hostlink_channel *ch);

/* The driver's ring: bytes per buffer, buffers. */
size_t hostlink_buffer_size(struct hostlink_channel *ch);
size_t hostlink_buffer_count(struct hostlink_channel *ch);

/* Arm the DMA of `directions` now (reads and writes arm what they use themselves): before you start a
 * source that cannot wait. */
int hostlink_start(struct hostlink_channel *ch, int directions);

/* Copy transfers, whole buffers. write: host to FPGA, returns once all of it is in the driver's ring; read:
 * FPGA to host; transfer: both at once, overlapped (an accelerator: samples out, results back). They
 * return the bytes moved (read: `size`; transfer: `out_size`) or a negative errno. */
ssize_t hostlink_write(struct hostlink_channel *ch, const void *data, size_t size);
ssize_t hostlink_read(struct hostlink_channel *ch, void *data, size_t size);
ssize_t hostlink_transfer(struct hostlink_channel *ch, const void *in, size_t in_size, void *out,
			  size_t out_size);

/* Zero-copy: buffers of the driver's ring, in place. HOSTLINK_C2H: buffers the DMA has filled, to read;
 * HOSTLINK_H2C: free buffers, to fill. Waits up to `timeout_ms` (-1: the channel's timeout; 0: returns 0
 * at once if none is ready) for at least one, after any got before and not yet put; sets *first to the
 * first and returns how many there are that follow it in memory (up to `max` and to the ring's end: call
 * again for those after the wrap). Loop flow: buffers the DMA wrote
 * again before you got them are -EOVERFLOW (the next call goes on from the newest). The copy calls
 * refuse (-EBUSY) while you hold buffers. */
ssize_t hostlink_get_buffers(struct hostlink_channel *ch, int direction, void **first, size_t max,
			     int timeout_ms);
/* Give back the oldest `count` buffers got: HOSTLINK_C2H, read, the DMA may fill them again;
 * HOSTLINK_H2C, filled, the DMA sends them. */
int hostlink_put_buffers(struct hostlink_channel *ch, int direction, size_t count);

/* Sleep until a direction of `directions` has a buffer for you (HOSTLINK_C2H: filled, to read; HOSTLINK_H2C:
 * free, to fill), beyond those you hold by zero-copy; woken by the DMA's interrupt, no polling. Returns the
 * directions ready (a mask); 0 when `timeout_ms` is 0 and none is; -ETIMEDOUT after `timeout_ms` (-1: the
 * channel's). Arms c2h, as a read does. The copy and zero-copy calls wait the same way themselves: this is
 * for a program that waits on both directions at once, or waits before it decides what to do. */
int hostlink_wait(struct hostlink_channel *ch, int directions, int timeout_ms);

/* Real-time and packets flows: the next buffer's data and its header. Returns the data's length. `capacity`
 * is at least what a buffer carries, hostlink_buffer_size() - HOSTLINK_HEADER_BYTES (less is -EINVAL, before
 * anything is read). */
ssize_t hostlink_read_buffer(struct hostlink_channel *ch, void *data, size_t capacity,
			     struct hostlink_buffer_info *info);
/* Packets flow: the core's next packet, from as many buffers as it takes. Returns its length; a drop within
 * it (real-time flow) is -EPROTO. A packet longer than `capacity` is -EMSGSIZE and is kept, whole: the next
 * call with at least hostlink_kept_packet_length() bytes returns it (one longer than HOSTLINK_KEPT_PACKET_MAX
 * is read to its end and lost, and the message says so). */
ssize_t hostlink_read_packet(struct hostlink_channel *ch, void *data, size_t capacity);
/* The length of the packet hostlink_read_packet() kept for want of room, 0 if none. */
size_t hostlink_kept_packet_length(struct hostlink_channel *ch);
#define HOSTLINK_KEPT_PACKET_MAX (64u << 20)

/* Packets flow, host to FPGA: send `size` bytes of a packet of any length, which the core gets with `last`
 * on its final byte (and `bytes`, that word's bytes of data: doc/user_cores.md), in as many buffers as it
 * takes, each headed by its length. `end` 0 leaves the packet open: the next call continues it with no
 * boundary between (up to 32 bytes stay back until the call that ends it, or hostlink_close()); a call
 * with `size` 0 and `end` 1 ends an open packet. Returns `size` once all of it is in the driver's ring
 * (hostlink_moved(): ring bytes sent); an empty packet (nothing open, `size` 0, `end` 1) is -EINVAL, as
 * are hostlink_write()/_transfer() with data and zero-copy HOSTLINK_H2C in packets flow. */
ssize_t hostlink_write_packet(struct hostlink_channel *ch, const void *data, size_t size, int end);

/* Registers by their CSR names (the SoC's map, compiled in: e.g. "user_core_a"); the first 32-bit word,
 * or word `word` of a wider one (most significant first). Writes need CAP_SYS_RAWIO (root): -EPERM. */
int hostlink_register_read(struct hostlink_channel *ch, const char *name, uint32_t *value);
int hostlink_register_write(struct hostlink_channel *ch, const char *name, uint32_t value);
int hostlink_register_word(struct hostlink_channel *ch, const char *name, int word, uint32_t *value);

/* The SoC's cycle counter (its system clock): device time. */
int hostlink_cycles(struct hostlink_channel *ch, uint64_t *cycles);

/* Per direction: buffers done by the DMA and served by this program. */
struct hostlink_counts {
	int64_t h2c_done, h2c_served;
	int64_t c2h_done, c2h_served;
};
int hostlink_counts(struct hostlink_channel *ch, struct hostlink_counts *counts);

/* The driver's and the DMA's counters for the channel, per direction, since its last start (the driver's
 * stats ioctl; hostlink.host's Channel.stats() has the same names). */
struct hostlink_direction_stats {
	int64_t  hw_count;      /* buffers the DMA has done */
	int64_t  sw_count;      /* buffers programs have served (read, written) */
	uint64_t lost;          /* loop mode: buffers read() or write() found lost */
	uint64_t lost_events;   /* the calls that found them */
	uint32_t level;         /* buffers waiting for the program now */
	uint32_t level_max;     /* the most it found waiting when it came */
	uint32_t flow;          /* HOSTLINK_FLOW_* */
	uint32_t enabled;
	uint32_t fpga_given;    /* the DMA's flow gate (0 on a SoC without): buffers given (flow modes), */
	uint32_t fpga_started;  /* begun, */
	uint32_t fpga_done;     /* finished, */
	uint32_t fpga_waits;    /* cycles a buffer waited for the host */
};
struct hostlink_stats {
	struct hostlink_direction_stats h2c, c2h;
	uint32_t buffer_count, buffer_size;   /* the ring */
};
int hostlink_stats(struct hostlink_channel *ch, struct hostlink_stats *stats);

#ifdef __cplusplus
}
#endif

#endif /* HOSTLINK_H */
