/* This file is part of hostlink.
 * Copyright (c) 2026 hostlink developers
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * hostlink_bench: how much each way of driving LitePCIe's DMA costs, through the driver hostlink
 * generates (litepcie.ko with software/driver/hardening.py and software/driver/polling.py).
 *
 * LitePCIe's driver streams each channel through a ring of buffers (their count and size chosen when the
 * module loads, read from the driver) in loop mode: the DMA never waits for software, software keeps at
 * most half a ring ahead of it (host -> FPGA) or behind it (FPGA -> host). A transfer of SIZE bytes is SIZE / (buffer size)
 * consecutive buffers of that stream (one buffer when SIZE is smaller: the driver moves whole buffers,
 * so a small transfer costs a buffer on the bus; both figures are reported).
 *
 *   modes       zero-copy  the driver's buffers mapped (mmap); data written and checked in place
 *               copy       read()/write(): the driver copies between the process and its buffers
 *               double     two halves of the driver's window (a quarter ring each): the process
 *                          prepares a half in its own memory and copies it into the mapped ring (or
 *                          copies a half out of it and checks the copy) while the DMA moves the other
 *   completion  irq        the process sleeps in poll() until the driver's MSI handler wakes it
 *               poll       the channel's MSI is off; the process asks the driver for the DMA's progress
 *                          (an ioctl that reads the loop status register, read-only) in a loop
 *   direction   loopback   host -> FPGA -> host through the DMA's loopback; every byte that returns is
 *                          compared with what was sent (a pattern that changes with every buffer)
 *               h2c        host -> FPGA into the channel's pattern checker (word i of the stream is i);
 *                          the checker counts the words and mismatches, read back at the end
 *               c2h        FPGA -> host from the channel's pattern generator (word i is i), every byte
 *                          checked by the host
 *               both       h2c and c2h at once, each checked as above
 *
 * Timing: host wall time (CLOCK_MONOTONIC) and device cycles (hostlink's cycle counter, through the
 * driver's CYCLES ioctl). Per transfer: from the moment it could start (its first buffer handed to the
 * driver, and the previous transfer of the stream done) to the moment the process sees it done (h2c:
 * the DMA has read it; c2h and loopback: its data is back and checked). In the simulated machine
 * (User-Mode Linux of ./sim.py driver) only device cycles are meaningful: the device runs thousands of
 * times slower than the host, and the tool says so.
 */

#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "csr.h"
#include "soc.h"
#include "config.h"
#include "litepcie.h"

#ifndef CONFIG_CLOCK_FREQUENCY
#error "soc.h has no CONFIG_CLOCK_FREQUENCY"
#endif
#ifndef LITEPCIE_IOCTL_DMA_POLL
#error "litepcie.h has no LITEPCIE_IOCTL_DMA_POLL: generate the driver with hostlink (software/driver/)"
#endif

/* The driver's ring, read from it at start (software/driver/ring.py: chosen when litepcie.ko loads;
 * config.h's values are only its defaults). */
static int ring_count = DMA_BUFFER_COUNT, ring_size = DMA_BUFFER_SIZE, ring_per_irq = DMA_BUFFER_PER_IRQ;

#define MAX_CHANNELS 8
#define B            ring_size
#define WORDS        (ring_size / 4)
#define RING_BYTES   ((size_t)ring_count * ring_size)
#define MAX_REPORTED 8   /* Mismatches printed per run. */
/* Double-buffered: the driver's window (half the ring ahead of the DMA) in two halves. LitePCIe's DMA
 * streams the ring without waiting for software, so a window smaller than the driver's would let the
 * reader overtake the process (measured: with two 4 KiB buffers it read buffers not yet written). */
#define HALF         (ring_count / 4 > 0 ? ring_count / 4 : 1)

/* Configuration ------------------------------------------------------------------------------- */

enum mode       { ZERO_COPY, COPY, DOUBLE };
enum completion { IRQ, POLL };
enum direction  { LOOPBACK, H2C, C2H, BOTH };

static const char *mode_names[]       = {"zero-copy", "copy", "double"};
static const char *completion_names[] = {"irq", "poll"};
static const char *direction_names[]  = {"loopback", "h2c", "c2h", "both"};

struct run_config {
    enum mode       mode;
    enum completion completion;
    enum direction  direction;
    int             channels;
    uint64_t        size;        /* Bytes per transfer. */
    uint64_t        transfers;   /* Per channel and stream. */
    uint32_t        seed;
};

static int      simulated;
static double   stall_s = 120.0;
static int      cycles_ok = 1;
static int      denied;      /* A register write was refused (EPERM): the sweep stops. */

/* Per-channel registers of hostlink's pattern generator and checker (csr.h, generated from the SoC). */
struct pattern_regs { uint32_t gen_control, gen_length, chk_clear, chk_words, chk_errors, chk_length; };
#define PATTERN_REGS(n) { CSR_PCIE_DMA##n##_GENERATOR_CONTROL_ADDR, CSR_PCIE_DMA##n##_GENERATOR_LENGTH_ADDR, \
    CSR_PCIE_DMA##n##_CHECKER_CLEAR_ADDR, CSR_PCIE_DMA##n##_CHECKER_WORDS_ADDR, CSR_PCIE_DMA##n##_CHECKER_ERRORS_ADDR, \
    CSR_PCIE_DMA##n##_CHECKER_LENGTH_ADDR }
static const struct pattern_regs pattern_regs[] = {
#ifdef CSR_PCIE_DMA0_CHECKER_CLEAR_ADDR
    PATTERN_REGS(0),
#endif
#ifdef CSR_PCIE_DMA1_CHECKER_CLEAR_ADDR
    PATTERN_REGS(1),
#endif
#ifdef CSR_PCIE_DMA2_CHECKER_CLEAR_ADDR
    PATTERN_REGS(2),
#endif
#ifdef CSR_PCIE_DMA3_CHECKER_CLEAR_ADDR
    PATTERN_REGS(3),
#endif
#ifdef CSR_PCIE_DMA4_CHECKER_CLEAR_ADDR
    PATTERN_REGS(4),
#endif
#ifdef CSR_PCIE_DMA5_CHECKER_CLEAR_ADDR
    PATTERN_REGS(5),
#endif
#ifdef CSR_PCIE_DMA6_CHECKER_CLEAR_ADDR
    PATTERN_REGS(6),
#endif
#ifdef CSR_PCIE_DMA7_CHECKER_CLEAR_ADDR
    PATTERN_REGS(7),
#endif
};
#define PATTERN_CHANNELS ((int)(sizeof(pattern_regs) / sizeof(pattern_regs[0])))

/* Patterns -------------------------------------------------------------------------------------- */

/* Loopback: word w of stream buffer g, different for every buffer, word and run. */
static inline uint32_t loop_word(uint32_t seed, uint64_t g, uint32_t w)
{
    uint32_t x = seed ^ (uint32_t)(g * 0x9e3779b1u) ^ (uint32_t)(g >> 32) ^ (w * 0x85ebca77u);
    x ^= x >> 16;
    x *= 0x7feb352du;
    x ^= x >> 15;
    return x;
}

/* Generator and checker: word i of the stream is i (hostlink.cores.pcie.dma_pattern). */
static inline uint32_t count_word(uint64_t g, uint32_t w)
{
    return (uint32_t)(g * WORDS + w);
}

/* Timing ---------------------------------------------------------------------------------------- */

struct stamp { uint64_t ns; uint64_t cycles; };

static uint64_t wall_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000ull + t.tv_nsec;
}

static struct stamp now(int fd)
{
    struct stamp s = {wall_ns(), 0};
    struct litepcie_ioctl_cycles m;
    if (cycles_ok) {
        if (ioctl(fd, LITEPCIE_IOCTL_CYCLES, &m) == 0)
            s.cycles = m.cycles;
        else
            cycles_ok = 0;   /* A SoC without the cycle counter: wall time only. */
    }
    return s;
}

/* Channel --------------------------------------------------------------------------------------- */

/* One timed stream of a channel: its transfers' completion times. */
struct stream {
    const char   *name;
    uint64_t      done;         /* Transfers completed. */
    struct stamp *submitted;    /* Per transfer: handed to the driver (h2c, loopback). */
    struct stamp *completed;
    struct stamp  start;
};

struct channel {
    int                index;
    struct run_config  cfg;
    pthread_barrier_t *barrier;
    int                fd;
    uint8_t           *tx_ring, *rx_ring;    /* mmap (zero-copy, double). */
    uint8_t           *tx_buf, *rx_buf;      /* The process's own buffers (copy, double). */
    uint64_t           n;                    /* Buffers per transfer. */
    uint64_t           total;                /* Buffers per stream. */
    int                tx, rx;               /* Directions used. */
    int64_t            tx_sent, tx_hw, rx_hw, rx_got;
    struct stream      tx_stream, rx_stream; /* tx_stream timed when the direction is h2c or both. */
    uint64_t           errors, lost, bytes_checked;
    uint64_t           checker_words, checker_errors;
    int                reported;
    char               failure[256];
};

static void fail(struct channel *c, const char *fmt, ...)
{
    va_list ap;
    if (c->failure[0])
        return;
    va_start(ap, fmt);
    vsnprintf(c->failure, sizeof(c->failure), fmt, ap);
    va_end(ap);
    c->errors++;
}

static int reg_read(struct channel *c, uint32_t addr, uint32_t *val)
{
    struct litepcie_ioctl_reg m = {.addr = addr, .val = 0, .is_write = 0};
    if (ioctl(c->fd, LITEPCIE_IOCTL_REG, &m) < 0)
        return -errno;
    *val = m.val;
    return 0;
}

static int reg_write(struct channel *c, uint32_t addr, uint32_t val)
{
    struct litepcie_ioctl_reg m = {.addr = addr, .val = val, .is_write = 1};
    if (ioctl(c->fd, LITEPCIE_IOCTL_REG, &m) < 0) {
        if (errno == EPERM) {
            /* The hardened driver: register writes need CAP_SYS_RAWIO. Not a DMA error: the sweep
             * stops, as every other run of a direction with the generator or checker would. */
            denied = 1;
            fail(c, "register write at 0x%x: %s: the pattern generator/checker of -d h2c, c2h and both "
                    "need CAP_SYS_RAWIO (root); run as root, or use -d loopback", addr, strerror(errno));
        } else
            fail(c, "register write at 0x%x: %s", addr, strerror(errno));
        return -1;
    }
    return 0;
}

static int dma_enable(struct channel *c, int writer, int enable, int64_t *hw)
{
    int ret;
    if (writer) {
        struct litepcie_ioctl_dma_writer m = {.enable = enable};
        ret = ioctl(c->fd, LITEPCIE_IOCTL_DMA_WRITER, &m);
        *hw = m.hw_count;
    } else {
        struct litepcie_ioctl_dma_reader m = {.enable = enable};
        ret = ioctl(c->fd, LITEPCIE_IOCTL_DMA_READER, &m);
        *hw = m.hw_count;
    }
    if (ret < 0)
        fail(c, "DMA %s ioctl: %s", writer ? "writer" : "reader", strerror(errno));
    return ret;
}

/* Checks buffer g of the c2h stream at p; counts and reports mismatches. */
static void check_buffer(struct channel *c, const uint8_t *p, uint64_t g)
{
    const uint32_t *words = (const uint32_t *)p;
    int loop = c->cfg.direction == LOOPBACK;
    uint64_t bad = 0;
    for (uint32_t w = 0; w < WORDS; w++) {
        uint32_t expected = loop ? loop_word(c->cfg.seed, g, w) : count_word(g, w);
        if (words[w] != expected) {
            bad++;
            if (c->reported++ < MAX_REPORTED)
                fprintf(stderr, "hostlink_bench: channel %d, c2h buffer %" PRIu64 ", word %u: 0x%08x, "
                        "expected 0x%08x\n", c->index, g, w, words[w], expected);
        }
    }
    c->errors += bad;
    c->bytes_checked += B;
}

static void fill_buffer(struct channel *c, uint8_t *p, uint64_t g)
{
    uint32_t *words = (uint32_t *)p;
    int loop = c->cfg.direction == LOOPBACK;
    for (uint32_t w = 0; w < WORDS; w++)
        words[w] = loop ? loop_word(c->cfg.seed, g, w) : count_word(g, w);
}

/* Tells the driver that software is done with one ring's buffers up to `sw_count` (the mmap modes):
 * `request` is the reader's (h2c) or the writer's (c2h) update. */
static void ring_update(struct channel *c, unsigned long request, const char *dma, int64_t sw_count)
{
    struct litepcie_ioctl_mmap_dma_update m = {.sw_count = sw_count};
    if (ioctl(c->fd, request, &m) < 0)
        fail(c, "%s update ioctl: %s", dma, strerror(errno));
}

/* Host -> FPGA: keeps the ring filled up to `lead` buffers ahead of the DMA (whole chunks in double
 * mode). Returns the buffers handed to the driver. */
static int64_t feed(struct channel *c)
{
    int64_t lead  = ring_count / 2;   /* The driver lets software run half a ring ahead. */
    int64_t chunk = HALF;
    int64_t space = lead - (c->tx_sent - c->tx_hw);
    int64_t before = c->tx_sent;
    if (space <= 0)
        return 0;
    if (c->cfg.mode == ZERO_COPY) {
        for (int64_t i = 0; i < space; i++, c->tx_sent++)
            fill_buffer(c, c->tx_ring + (c->tx_sent % ring_count) * B, c->tx_sent);
        ring_update(c, LITEPCIE_IOCTL_MMAP_DMA_READER_UPDATE, "reader", c->tx_sent);
    } else if (c->cfg.mode == COPY) {
        for (int64_t i = 0; i < space; i++)
            fill_buffer(c, c->tx_buf + i * B, c->tx_sent + i);
        ssize_t len = write(c->fd, c->tx_buf, space * B);
        if (len < 0 && errno != EAGAIN)
            fail(c, "write: %s", strerror(errno));
        else if (len > 0)
            c->tx_sent += len / B;
    } else {
        while (space >= chunk) {
            /* The process prepares a half in its own memory, then copies it into the ring. */
            for (int64_t i = 0; i < chunk; i++)
                fill_buffer(c, c->tx_buf + i * B, c->tx_sent + i);
            for (int64_t i = 0; i < chunk; i++, c->tx_sent++)
                memcpy(c->tx_ring + (c->tx_sent % ring_count) * B, c->tx_buf + i * B, B);
            space -= chunk;
        }
        if (c->tx_sent != before)
            ring_update(c, LITEPCIE_IOCTL_MMAP_DMA_READER_UPDATE, "reader", c->tx_sent);
    }
    return c->tx_sent - before;
}

/* FPGA -> host: takes and checks what the DMA has written, up to the stream's end. */
static int64_t drain(struct channel *c)
{
    int64_t before = c->rx_got;
    int64_t avail = c->rx_hw - c->rx_got;
    int64_t left  = (int64_t)c->total - c->rx_got;
    /* The stream is complete: the free-running writer goes on (with -d both, until h2c is done too)
     * into buffers no longer taken, which loses nothing of the stream. */
    if (left <= 0)
        return 0;
    if (avail > ring_count / 2 && c->cfg.mode != COPY) {
        /* The DMA may have overwritten buffers not yet taken (the driver's read() says "lost"). */
        c->lost += avail - ring_count / 2;
        fail(c, "c2h: %" PRId64 " buffers behind the DMA, data lost", avail);
    }
    if (avail > left)
        avail = left;
    if (avail <= 0)
        return 0;
    if (c->cfg.mode == ZERO_COPY) {
        for (int64_t i = 0; i < avail; i++, c->rx_got++)
            check_buffer(c, c->rx_ring + (c->rx_got % ring_count) * B, c->rx_got);
        ring_update(c, LITEPCIE_IOCTL_MMAP_DMA_WRITER_UPDATE, "writer", c->rx_got);
    } else if (c->cfg.mode == COPY) {
        if (avail > ring_count / 2)
            avail = ring_count / 2;
        ssize_t len = read(c->fd, c->rx_buf, avail * B);
        if (len < 0 && errno != EAGAIN) {
            fail(c, "read: %s", strerror(errno));
        } else if (len > 0) {
            for (int64_t i = 0; i < len / B; i++, c->rx_got++)
                check_buffer(c, c->rx_buf + i * B, c->rx_got);
        }
    } else {
        int64_t chunk = HALF;
        if (chunk > left)
            chunk = left;
        while (avail >= chunk) {
            /* A half is copied out of the ring (and the ring slot given back) while the DMA fills the
             * other; the copy is checked. */
            for (int64_t i = 0; i < chunk; i++)
                memcpy(c->rx_buf + i * B, c->rx_ring + ((c->rx_got + i) % ring_count) * B, B);
            ring_update(c, LITEPCIE_IOCTL_MMAP_DMA_WRITER_UPDATE, "writer", c->rx_got + chunk);
            for (int64_t i = 0; i < chunk; i++, c->rx_got++)
                check_buffer(c, c->rx_buf + i * B, c->rx_got);
            avail -= chunk;
            left  -= chunk;
            if (chunk > left)
                chunk = left;
            if (chunk <= 0)
                break;
        }
    }
    return c->rx_got - before;
}

/* Transfers of `s` whose last buffer is below `count` are done at `t`. */
static int complete(struct channel *c, struct stream *s, int64_t count, struct stamp t)
{
    int any = 0;
    while (s->done < c->cfg.transfers && count >= (int64_t)((s->done + 1) * c->n)) {
        s->completed[s->done++] = t;
        any = 1;
    }
    return any;
}

/* Stamps the transfers of `s` whose first buffer was handed to the driver in [before, after): from
 * then on the DMA can move them (a transfer larger than the driver's window is handed over piece by
 * piece while it moves). */
static void submitted(struct channel *c, struct stream *s, int64_t before, int64_t after, struct stamp t)
{
    for (uint64_t k = (before + c->n - 1) / c->n; k < c->cfg.transfers && (int64_t)(k * c->n) < after; k++)
        s->submitted[k] = t;
}

static int stream_done(struct channel *c)
{
    int done = 1;
    if (c->tx && c->cfg.direction != LOOPBACK)
        done &= c->tx_stream.done == c->cfg.transfers;
    if (c->rx)
        done &= c->rx_stream.done == c->cfg.transfers;
    return done;
}

/* The ring the driver was loaded with (MMAP_DMA_INFO); without the device, config.h's (the channels then
 * fail to open and say why). */
static void read_ring(const char *path)
{
    struct litepcie_ioctl_mmap_dma_info info;
    int fd = open(path, O_RDWR | O_CLOEXEC);

    if (fd < 0)
        return;
    if (ioctl(fd, LITEPCIE_IOCTL_MMAP_DMA_INFO, &info) == 0 && info.dma_tx_buf_count && info.dma_tx_buf_size) {
        ring_count   = (int)info.dma_tx_buf_count;
        ring_size    = (int)info.dma_tx_buf_size;
        /* The driver's MSI every max(1, min(DMA_BUFFER_PER_IRQ, count / 8)) buffers (software/driver/ring.py). */
        ring_per_irq = DMA_BUFFER_PER_IRQ < ring_count / 8 ? DMA_BUFFER_PER_IRQ : ring_count / 8;
        if (ring_per_irq < 1)
            ring_per_irq = 1;
    }
    close(fd);
}

static void *run_channel(void *arg)
{
    struct channel *c = arg;
    struct run_config *cfg = &c->cfg;
    char path[64];
    int64_t hw;
    int started = 0;
    const struct pattern_regs *pr = c->index < PATTERN_CHANNELS ? &pattern_regs[c->index] : NULL;
    int use_generator = c->rx && cfg->direction != LOOPBACK;
    int use_checker   = c->tx && cfg->direction != LOOPBACK;

    snprintf(path, sizeof(path), "/dev/" HOSTLINK_DRIVER_NAME "%d", c->index);
    c->fd = open(path, O_RDWR | O_CLOEXEC);
    if (c->fd < 0) {
        fail(c, "%s: %s", path, strerror(errno));
        pthread_barrier_wait(c->barrier);
        return NULL;
    }
    if ((use_generator || use_checker) && !pr) {
        fail(c, "channel %d has no pattern generator/checker in this SoC", c->index);
        goto barrier;
    }

    struct litepcie_ioctl_lock lock = {.dma_reader_request = c->tx, .dma_writer_request = c->rx};
    if (ioctl(c->fd, LITEPCIE_IOCTL_LOCK, &lock) < 0 || (c->tx && !lock.dma_reader_status) ||
        (c->rx && !lock.dma_writer_status)) {
        fail(c, "%s: DMA in use by another process", path);
        goto barrier;
    }
    struct litepcie_ioctl_dma loop = {.loopback_enable = cfg->direction == LOOPBACK};
    if (ioctl(c->fd, LITEPCIE_IOCTL_DMA, &loop) < 0) {
        fail(c, "loopback ioctl: %s", strerror(errno));
        goto barrier;
    }
    struct litepcie_ioctl_dma_poll poll_mode = {.writer = c->rx && cfg->completion == POLL,
                                                .reader = c->tx && cfg->completion == POLL};
    if (ioctl(c->fd, LITEPCIE_IOCTL_DMA_POLL, &poll_mode) < 0) {
        fail(c, "poll-mode ioctl: %s", strerror(errno));
        goto barrier;
    }
    if (cfg->mode != COPY) {
        if (c->tx) {
            c->tx_ring = mmap(NULL, RING_BYTES, PROT_READ | PROT_WRITE, MAP_SHARED, c->fd, 0);
            if (c->tx_ring == MAP_FAILED) {
                c->tx_ring = NULL;
                fail(c, "mmap of the h2c ring: %s", strerror(errno));
                goto barrier;
            }
        }
        if (c->rx) {
            c->rx_ring = mmap(NULL, RING_BYTES, PROT_READ | PROT_WRITE, MAP_SHARED, c->fd,
                              RING_BYTES);
            if (c->rx_ring == MAP_FAILED) {
                c->rx_ring = NULL;
                fail(c, "mmap of the c2h ring: %s", strerror(errno));
                goto barrier;
            }
        }
    }
    if (cfg->mode != ZERO_COPY) {
        c->tx_buf = aligned_alloc(4096, RING_BYTES);
        c->rx_buf = aligned_alloc(4096, RING_BYTES);
    }

    /* The writer (FPGA -> host) first, so that the loopback's data has somewhere to go. */
    if (use_generator && (reg_write(c, pr->gen_control, 0) || reg_write(c, pr->gen_length, 0)))
        goto barrier;
    /* The checker judges the stream's words only: in loop mode the reader goes on after the stream until
     * it is stopped below, through buffers this process no longer writes (a slow process, a busy host),
     * and those words are counted, not judged. 0 (every word) for a stream of 2**32 words or more. */
    uint64_t judged = c->total * WORDS;
    if (use_checker && (reg_write(c, pr->chk_length, judged > UINT32_MAX ? 0 : (uint32_t)judged) ||
                        reg_write(c, pr->chk_clear, 1)))
        goto barrier;
    if (c->rx && dma_enable(c, 1, 1, &c->rx_hw) < 0)
        goto barrier;
    /* The first half ring is written before the reader starts: it streams from buffer 0 at once. */
    if (c->tx)
        feed(c);
    started = 1;

barrier:
    pthread_barrier_wait(c->barrier);
    if (!started || c->failure[0])
        goto end;

    c->tx_stream.start = c->rx_stream.start = now(c->fd);
    for (uint64_t k = 0; k < cfg->transfers && k * c->n < (uint64_t)c->tx_sent; k++)
        c->tx_stream.submitted[k] = c->tx_stream.start;
    if (c->tx && dma_enable(c, 0, 1, &c->tx_hw) < 0)
        goto end;
    if (use_generator && reg_write(c, pr->gen_control, 1))
        goto end;

    uint64_t last_progress = wall_ns();
    while (!stream_done(c) && !c->failure[0]) {
        if (cfg->completion == IRQ) {
            struct pollfd p = {.fd = c->fd, .events = (c->tx ? POLLOUT : 0) | (c->rx ? POLLIN : 0)};
            if (poll(&p, 1, 1000) < 0 && errno != EINTR) {
                fail(c, "poll: %s", strerror(errno));
                break;
            }
        }
        /* The DMA's progress: updated by the MSI handler (irq), read from the loop status by the
         * driver for this ioctl (poll). */
        int64_t tx_hw0 = c->tx_hw, rx_got0 = c->rx_got;
        if (c->tx && dma_enable(c, 0, 1, &c->tx_hw) < 0)
            break;
        if (c->rx && dma_enable(c, 1, 1, &c->rx_hw) < 0)
            break;
        if (c->tx && c->tx_hw > c->tx_sent) {
            c->lost += c->tx_hw - c->tx_sent;
            fail(c, "h2c: the DMA read %" PRId64 " buffers not yet written", c->tx_hw - c->tx_sent);
            break;
        }
        if (c->rx)
            drain(c);
        int progress = c->tx_hw != tx_hw0 || c->rx_got != rx_got0;
        if (progress) {
            struct stamp t = now(c->fd);
            if (c->tx && cfg->direction != LOOPBACK)
                complete(c, &c->tx_stream, c->tx_hw, t);
            if (c->rx)
                complete(c, &c->rx_stream, c->rx_got, t);
            last_progress = t.ns;
        }
        if (c->tx) {
            int64_t before = c->tx_sent;
            if (feed(c) > 0)
                submitted(c, &c->tx_stream, before, c->tx_sent, now(c->fd));
        }
        if (!progress && (wall_ns() - last_progress) / 1e9 > stall_s) {
            fail(c, "no progress for %.0f s (h2c %" PRId64 "/%" PRIu64 " buffers read, c2h %" PRId64
                 "/%" PRIu64 " taken)", stall_s, c->tx_hw, c->total, c->rx_got, c->total);
            break;
        }
    }

end:
    if (c->fd >= 0) {
        if (use_generator && pr && started)
            reg_write(c, pr->gen_control, 0);
        if (c->tx)
            dma_enable(c, 0, 0, &hw);
        if (c->rx)
            dma_enable(c, 1, 0, &hw);
        if (use_checker && started && !c->failure[0]) {
            uint32_t words = 0, errors = 0;
            if (reg_read(c, pr->chk_words, &words) || reg_read(c, pr->chk_errors, &errors)) {
                fail(c, "reading the pattern checker: %s", strerror(errno));
            } else {
                /* The checker counted every buffer the DMA read (the transfers and what followed them) and
                 * judged the transfers' words. */
                c->checker_words  = words;
                c->checker_errors = errors;
                c->errors        += errors;
                /* Checked: the stream's words the checker judged, not those read after it. */
                c->bytes_checked += ((uint64_t)words < c->total * WORDS ? (uint64_t)words : c->total * WORDS) * 4;
                if ((uint64_t)words * 4 < c->total * B)
                    fail(c, "h2c: the checker received %u words, fewer than the %" PRIu64 " sent",
                         words, c->total * WORDS);
                if (errors)
                    fprintf(stderr, "hostlink_bench: channel %d: the FPGA's checker counted %u wrong words\n",
                            c->index, errors);
            }
        }
        if (c->tx_ring)
            munmap(c->tx_ring, RING_BYTES);
        if (c->rx_ring)
            munmap(c->rx_ring, RING_BYTES);
        close(c->fd);
    }
    free(c->tx_buf);
    free(c->rx_buf);
    return NULL;
}

/* Statistics ------------------------------------------------------------------------------------ */

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

struct summary {
    const char *name;
    uint64_t    bytes, bus_bytes, transfers;
    double      gbps_cycles, gbps_wall;           /* GB/s (1e9 bytes per second). */
    double      lat_cyc[3], lat_ns[3];            /* min, median, p99 */
};

static void percentiles(double *v, size_t n, double out[3])
{
    if (!n) {
        out[0] = out[1] = out[2] = 0;
        return;
    }
    qsort(v, n, sizeof(*v), cmp_double);
    out[0] = v[0];
    out[1] = v[n / 2];
    size_t i = (size_t)(0.99 * (n - 1) + 0.5);
    out[2] = v[i < n ? i : n - 1];
}

/* Across channels: throughput from the earliest start to the latest completion; latencies pooled. */
static void summarize(struct channel *ch, int channels, int use_tx, struct summary *s)
{
    size_t cap = channels * ch[0].cfg.transfers, n = 0;
    double *cyc = calloc(cap, sizeof(double)), *ns = calloc(cap, sizeof(double));
    uint64_t t0_ns = UINT64_MAX, t1_ns = 0, t0_c = UINT64_MAX, t1_c = 0;
    for (int i = 0; i < channels; i++) {
        struct channel *c = &ch[i];
        struct stream *st = use_tx ? &c->tx_stream : &c->rx_stream;
        if (st->done == 0)
            continue;
        if (st->start.ns < t0_ns) t0_ns = st->start.ns;
        if (st->start.cycles < t0_c) t0_c = st->start.cycles;
        struct stamp last = st->completed[st->done - 1];
        if (last.ns > t1_ns) t1_ns = last.ns;
        if (last.cycles > t1_c) t1_c = last.cycles;
        for (uint64_t k = 0; k < st->done; k++) {
            struct stamp from = k ? st->completed[k - 1] : st->start;
            if (use_tx || c->cfg.direction == LOOPBACK) {
                /* A transfer can start when handed to the driver and the previous one is done. */
                if (st->submitted[k].ns > from.ns) from.ns = st->submitted[k].ns;
                if (st->submitted[k].cycles > from.cycles) from.cycles = st->submitted[k].cycles;
            }
            cyc[n] = (double)(st->completed[k].cycles - from.cycles);
            ns[n]  = (double)(st->completed[k].ns - from.ns);
            n++;
        }
        s->transfers += st->done;
    }
    s->bytes     = s->transfers * ch[0].cfg.size;
    s->bus_bytes = s->transfers * ch[0].n * B;
    s->gbps_wall   = t1_ns > t0_ns ? s->bytes / (double)(t1_ns - t0_ns) : 0;
    s->gbps_cycles = cycles_ok && t1_c > t0_c ?
        s->bytes / ((t1_c - t0_c) * 1e9 / CONFIG_CLOCK_FREQUENCY) : 0;
    percentiles(cyc, n, s->lat_cyc);
    percentiles(ns, n, s->lat_ns);
    free(cyc);
    free(ns);
}

/* Main ------------------------------------------------------------------------------------------ */

static int detect_simulated(void)
{
    /* ./sim.py driver passes HOSTLINK_SIMULATED=1; without it, User-Mode Linux on the PCI-over-virtio
     * bus is recognised by its kernel command line (virtio_uml.device=) and its CPU ("User Mode Linux"). */
    const char *env = getenv("HOSTLINK_SIMULATED");
    if (env && *env)
        return atoi(env) != 0;
    char buf[4096];
    const char *files[] = {"/proc/cmdline", "/proc/cpuinfo"};
    const char *marks[] = {"virtio_uml.device=", "User Mode Linux"};
    for (int i = 0; i < 2; i++) {
        FILE *f = fopen(files[i], "r");
        if (!f)
            continue;
        size_t len = fread(buf, 1, sizeof(buf) - 1, f);
        fclose(f);
        buf[len] = 0;
        if (strstr(buf, marks[i]))
            return 1;
    }
    return 0;
}

static uint64_t parse_size(const char *s)
{
    char *end;
    uint64_t v = strtoull(s, &end, 0);
    switch (*end) {
    case 'k': case 'K': v <<= 10; end++; break;
    case 'm': case 'M': v <<= 20; end++; break;
    case 'g': case 'G': v <<= 30; end++; break;
    }
    if (*end || end == s || v == 0)
        return 0;
    return v;
}

static int parse_list(const char *arg, const char **names, int count, int *out)
{
    char copy[256];
    int n = 0;
    snprintf(copy, sizeof(copy), "%s", arg);
    for (char *tok = strtok(copy, ","); tok; tok = strtok(NULL, ",")) {
        int found = -1;
        for (int i = 0; i < count; i++)
            if (!strcmp(tok, names[i]))
                found = i;
        if (found < 0) {
            fprintf(stderr, "hostlink_bench: unknown value '%s' (one of:", tok);
            for (int i = 0; i < count; i++)
                fprintf(stderr, " %s", names[i]);
            fprintf(stderr, ")\n");
            exit(2);
        }
        out[n++] = found;
    }
    return n;
}

static void usage(void)
{
    printf("usage: hostlink_bench [options]\n"
           "  -m, --modes LIST        zero-copy,copy,double (default zero-copy,copy)\n"
           "  -c, --completion LIST   irq,poll (default irq)\n"
           "  -n, --channels LIST     channel counts run in threads, e.g. 1,2,4 (default 1)\n"
           "  -d, --direction LIST    loopback,h2c,c2h,both (default loopback)\n"
           "  -s, --sizes MIN[:MAX]   transfer sizes, powers of two from MIN to MAX (8 to 64M; default 64K)\n"
           "  -t, --transfers N       transfers per channel and size (default: 1 MiB worth, 4 to 64)\n"
           "  -j, --json PATH         write the results as JSON\n"
           "      --stall-timeout S   fail a run that makes no progress for S seconds (default 120)\n"
           "Transfers smaller than the driver's buffer (%d bytes unless litepcie.ko was loaded with another\n"
           "dma_buffer_size) move one whole buffer.\n"
           "h2c, c2h and both write the pattern generator/checker registers: root (CAP_SYS_RAWIO).\n",
           ring_size);
}

static void json_stats(FILE *f, const char *key, const double v[3], int last)
{
    fprintf(f, "\"%s\": {\"min\": %.1f, \"median\": %.1f, \"p99\": %.1f}%s", key, v[0], v[1], v[2], last ? "" : ", ");
}

int main(int argc, char **argv)
{
    int modes[3] = {ZERO_COPY, COPY}, n_modes = 2;
    int comps[2] = {IRQ}, n_comps = 1;
    int dirs[4] = {LOOPBACK}, n_dirs = 1;
    int chans[8] = {1}, n_chans = 1;
    uint64_t size_min = 64 << 10, size_max = 64 << 10, transfers = 0;   /* 0: by size. */
    const char *json_path = NULL;
    const char *comp_names[] = {"irq", "poll"};

    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
#define OPT(s, l) ((!strcmp(a, s) || !strcmp(a, l)) && (v || (fprintf(stderr, "hostlink_bench: %s needs a value\n", a), exit(2), 0)))
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            usage();
            return 0;
        } else if (OPT("-m", "--modes")) {
            n_modes = parse_list(v, mode_names, 3, modes); i++;
        } else if (OPT("-c", "--completion")) {
            n_comps = parse_list(v, comp_names, 2, comps); i++;
        } else if (OPT("-d", "--direction")) {
            n_dirs = parse_list(v, direction_names, 4, dirs); i++;
        } else if (OPT("-n", "--channels")) {
            char copy[64];
            n_chans = 0;
            snprintf(copy, sizeof(copy), "%s", v);
            for (char *tok = strtok(copy, ","); tok && n_chans < 8; tok = strtok(NULL, ",")) {
                chans[n_chans] = atoi(tok);
                if (chans[n_chans] < 1 || chans[n_chans] > DMA_CHANNELS) {
                    fprintf(stderr, "hostlink_bench: %s channels: this SoC has %d DMA channels\n", tok, DMA_CHANNELS);
                    return 2;
                }
                n_chans++;
            }
            i++;
        } else if (OPT("-s", "--sizes")) {
            char copy[64], *colon;
            snprintf(copy, sizeof(copy), "%s", v);
            colon = strchr(copy, ':');
            if (colon)
                *colon = 0;
            size_min = parse_size(copy);
            size_max = colon ? parse_size(colon + 1) : size_min;
            if (!size_min || !size_max || (size_min & (size_min - 1)) || (size_max & (size_max - 1)) ||
                size_min < 8 || size_max > (64 << 20) || size_min > size_max) {
                fprintf(stderr, "hostlink_bench: sizes '%s': powers of two from 8 to 64M, MIN[:MAX]\n", v);
                return 2;
            }
            i++;
        } else if (OPT("-t", "--transfers")) {
            transfers = strtoull(v, NULL, 0); i++;
            if (transfers < 1) {
                fprintf(stderr, "hostlink_bench: --transfers must be at least 1, not '%s'\n", v);
                return 2;
            }
        } else if (OPT("-j", "--json")) {
            json_path = v; i++;
        } else if (OPT("--stall-timeout", "--stall-timeout")) {
            stall_s = atof(v); i++;
        } else {
            fprintf(stderr, "hostlink_bench: unknown argument '%s' (--help)\n", a);
            return 2;
        }
    }

    setvbuf(stdout, NULL, _IOLBF, 0);   /* A run ended by a time limit still shows its lines. */
    read_ring("/dev/" HOSTLINK_DRIVER_NAME "0");
    simulated = detect_simulated();
    const char *timing_note = simulated ?
        "simulated machine (User-Mode Linux on the simulated SoC): device-cycle figures are meaningful, "
        "wall-time figures are not (the device runs thousands of times slower than the host)" :
        "hardware: device-cycle and wall-time figures are both meaningful";
    printf("hostlink_bench: %s\n", timing_note);
    printf("ring: %d buffers of %d bytes, an MSI every %d; device clock %.1f MHz\n",
           ring_count, ring_size, ring_per_irq, CONFIG_CLOCK_FREQUENCY / 1e6);
    printf("%-9s %-4s %2s %-8s %9s %6s %10s %10s %12s %12s %12s %10s %7s\n", "mode", "done", "ch", "dir",
           "size", "xfers", "GB/s(cyc)", "GB/s(wall)", "lat_min(cyc)", "lat_med(cyc)", "lat_p99(cyc)",
           "checked", "errors");

    FILE *json = NULL;
    if (json_path) {
        json = fopen(json_path, "w");
        if (!json) {
            fprintf(stderr, "hostlink_bench: %s: %s\n", json_path, strerror(errno));
            return 2;
        }
        fprintf(json, "{\n  \"tool\": \"hostlink_bench\",\n  \"simulated\": %s,\n  \"timing_note\": \"%s\",\n"
                "  \"sys_clk_hz\": %d,\n  \"dma_buffer_size\": %d,\n  \"dma_buffer_count\": %d,\n"
                "  \"dma_buffer_per_irq\": %d,\n  \"dma_channels\": %d,\n  \"runs\": [",
                simulated ? "true" : "false", timing_note, CONFIG_CLOCK_FREQUENCY, ring_size,
                ring_count, ring_per_irq, DMA_CHANNELS);
    }

    uint64_t total_errors = 0, total_checked = 0;
    int runs = 0, failed_runs = 0;
    for (int di = 0; di < n_dirs; di++)
    for (int ni = 0; ni < n_chans; ni++)
    for (int ci = 0; ci < n_comps; ci++)
    for (int mi = 0; mi < n_modes; mi++)
    for (uint64_t size = size_min; size <= size_max; size <<= 1) {
        /* By default 1 MiB per channel and stream, at least 4 and at most 64 transfers. */
        uint64_t count = transfers ? transfers : (1 << 20) / size;
        if (!transfers)
            count = count < 4 ? 4 : count > 64 ? 64 : count;
        struct run_config cfg = {.mode = modes[mi], .completion = comps[ci], .direction = dirs[di],
                                 .channels = chans[ni], .size = size, .transfers = count};
        struct channel ch[MAX_CHANNELS];
        pthread_t threads[MAX_CHANNELS];
        pthread_barrier_t barrier;
        memset(ch, 0, sizeof(ch));
        pthread_barrier_init(&barrier, NULL, cfg.channels);
        for (int i = 0; i < cfg.channels; i++) {
            struct channel *c = &ch[i];
            c->index = i;
            c->cfg = cfg;
            c->cfg.seed = 0x2545f491u * (runs + 1) + 0x9e37u * i;
            c->barrier = &barrier;
            c->fd = -1;
            c->n = size >= B ? size / B : 1;
            c->total = c->n * count;
            c->tx = cfg.direction != C2H;
            c->rx = cfg.direction != H2C;
            c->tx_stream.name = "h2c";
            c->rx_stream.name = cfg.direction == LOOPBACK ? "loopback" : "c2h";
            c->tx_stream.submitted = calloc(count, sizeof(struct stamp));
            c->tx_stream.completed = calloc(count, sizeof(struct stamp));
            c->rx_stream.submitted = c->tx_stream.submitted;   /* Loopback: sent by the h2c side. */
            c->rx_stream.completed = calloc(count, sizeof(struct stamp));
        }
        for (int i = 0; i < cfg.channels; i++)
            pthread_create(&threads[i], NULL, run_channel, &ch[i]);
        for (int i = 0; i < cfg.channels; i++)
            pthread_join(threads[i], NULL);
        pthread_barrier_destroy(&barrier);

        uint64_t errors = 0, lost = 0, checked = 0;
        for (int i = 0; i < cfg.channels; i++) {
            errors  += ch[i].errors;
            lost    += ch[i].lost;
            checked += ch[i].bytes_checked;
            if (ch[i].failure[0])
                fprintf(stderr, "hostlink_bench: channel %d: %s\n", i, ch[i].failure);
        }
        /* Every stream must have been checked to its end. */
        uint64_t expected = 0;
        for (int i = 0; i < cfg.channels; i++)
            expected += (ch[i].tx && cfg.direction != LOOPBACK ? ch[i].total * B : 0) + (ch[i].rx ? ch[i].total * B : 0);
        if (checked < expected && !errors) {
            fprintf(stderr, "hostlink_bench: %" PRIu64 " bytes checked of the %" PRIu64 " moved\n", checked, expected);
            errors = 1;
        }

        struct summary sums[2];
        int n_sums = 0;
        memset(sums, 0, sizeof(sums));
        if (cfg.direction == H2C || cfg.direction == BOTH) {
            sums[n_sums].name = "h2c";
            summarize(ch, cfg.channels, 1, &sums[n_sums++]);
        }
        if (cfg.direction != H2C) {
            sums[n_sums].name = cfg.direction == LOOPBACK ? "loopback" : "c2h";
            summarize(ch, cfg.channels, 0, &sums[n_sums++]);
        }
        for (int k = 0; k < n_sums; k++) {
            struct summary *s = &sums[k];
            printf("%-9s %-4s %2d %-8s %9" PRIu64 " %6" PRIu64 " %10.3f %10.4f %12.0f %12.0f %12.0f %10" PRIu64 " %7" PRIu64 "%s\n",
                   mode_names[cfg.mode], completion_names[cfg.completion], cfg.channels, s->name, size,
                   s->transfers, s->gbps_cycles, s->gbps_wall, s->lat_cyc[0], s->lat_cyc[1], s->lat_cyc[2],
                   checked, errors, errors ? "  FAIL" : "");
        }
        if (json) {
            fprintf(json, "%s\n    {\"mode\": \"%s\", \"completion\": \"%s\", \"channels\": %d, \"direction\": \"%s\", "
                    "\"size\": %" PRIu64 ", \"transfers_per_channel\": %" PRIu64 ", \"buffers_per_transfer\": %" PRIu64 ", "
                    "\"bytes_checked\": %" PRIu64 ", \"bytes_expected\": %" PRIu64 ", \"errors\": %" PRIu64 ", "
                    "\"lost_buffers\": %" PRIu64 ", \"failures\": [",
                    runs ? "," : "", mode_names[cfg.mode], completion_names[cfg.completion], cfg.channels,
                    direction_names[cfg.direction], size, count, ch[0].n, checked, expected, errors, lost);
            int first = 1;
            for (int i = 0; i < cfg.channels; i++)
                if (ch[i].failure[0]) {
                    fprintf(json, "%s\"channel %d: ", first ? "" : ", ", i);
                    for (const char *p = ch[i].failure; *p; p++)
                        fputc(*p == '"' || *p == '\\' ? '\'' : *p, json);
                    fputc('"', json);
                    first = 0;
                }
            fprintf(json, "], \"checker\": [");
            for (int i = 0; i < cfg.channels; i++)
                fprintf(json, "%s{\"words\": %" PRIu64 ", \"errors\": %" PRIu64 "}", i ? ", " : "",
                        ch[i].checker_words, ch[i].checker_errors);
            fprintf(json, "], \"streams\": [");
            for (int k = 0; k < n_sums; k++) {
                struct summary *s = &sums[k];
                double ns_per_cycle = 1e9 / CONFIG_CLOCK_FREQUENCY;
                double lat_cns[3] = {s->lat_cyc[0] * ns_per_cycle, s->lat_cyc[1] * ns_per_cycle, s->lat_cyc[2] * ns_per_cycle};
                fprintf(json, "%s{\"stream\": \"%s\", \"transfers\": %" PRIu64 ", \"bytes\": %" PRIu64 ", "
                        "\"bus_bytes\": %" PRIu64 ", \"throughput_gbs_cycles\": %.4f, \"throughput_gbs_wall\": %.6f, ",
                        k ? ", " : "", s->name, s->transfers, s->bytes, s->bus_bytes, s->gbps_cycles, s->gbps_wall);
                json_stats(json, "latency_cycles", s->lat_cyc, 0);
                json_stats(json, "latency_ns_cycles", lat_cns, 0);
                json_stats(json, "latency_ns_wall", s->lat_ns, 1);
                fprintf(json, "}");
            }
            fprintf(json, "]}");
            fflush(json);
        }
        total_errors  += errors;
        total_checked += checked;
        failed_runs   += errors != 0;
        runs++;
        for (int i = 0; i < cfg.channels; i++) {
            free(ch[i].tx_stream.submitted);
            free(ch[i].tx_stream.completed);
            free(ch[i].rx_stream.completed);
        }
        if (denied) {
            fprintf(stderr, "hostlink_bench: a register write was refused (not permitted): stopping\n");
            goto done;
        }
    }
done:
    if (!cycles_ok)
        printf("no device-cycle counter (LITEPCIE_IOCTL_CYCLES failed): wall time only\n");
    printf("%d runs, %" PRIu64 " bytes checked, %" PRIu64 " errors: %s\n", runs, total_checked, total_errors,
           failed_runs ? "FAILED" : "PASSED");
    if (json) {
        fprintf(json, "\n  ],\n  \"cycles_available\": %s,\n  \"bytes_checked\": %" PRIu64 ",\n"
                "  \"errors\": %" PRIu64 ",\n  \"passed\": %s\n}\n", cycles_ok ? "true" : "false",
                total_checked, total_errors, failed_runs ? "false" : "true");
        fclose(json);
    }
    return failed_runs ? 1 : 0;
}
