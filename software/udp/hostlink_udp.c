/*
 * This file is part of hostlink.
 * Copyright (c) 2026 hostlink developers
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * hostlink-udp: host side of the hostlink UDP/IPv4 core.
 *
 *   recv         receive the FPGA generator's stream: packets, bytes, goodput, sequence gaps,
 *                duplicates, reordering, received ratio against --expect, payload check.
 *   send         send --count payloads carrying the generator's pattern to the FPGA.
 *   echo-client  send --count payloads and check that every echo comes back intact.
 *
 * Payload pattern (shared with the gateware generator): bytes 0..3 hold the 32-bit big-endian
 * sequence number (counting from 0), byte i >= 4 holds (seq + i) & 0xff. A payload shorter than
 * 4 bytes carries only the first (most significant) bytes of the sequence number, so its sequence
 * number cannot be read back: such payloads are checked against their arrival order instead.
 *
 * Every mode stops by itself: when the count is reached or when --timeout expires.
 */

#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

/* Limits ---------------------------------------------------------------------------------------- */

#define MAX_PAYLOAD    65507u    /* Largest UDP/IPv4 payload; the gateware's limit is lower (MTU-28). */
#define MAX_COUNT      100000000u /* Bounds the sequence bitmap to 12.5 MB. */
#define RECV_BATCH     64
#define DEFAULT_PORT   1234
#define DEFAULT_TIMEOUT 10.0

/* Exit codes: 0 all expected traffic correct, 1 loss/corruption/timeout/system error, 2 usage. */
#define EXIT_CHECK_FAILED 1
#define EXIT_USAGE        2

/* Options --------------------------------------------------------------------------------------- */

enum mode { MODE_RECV, MODE_SEND, MODE_ECHO };

struct options {
    enum mode   mode;
    const char *mode_name;
    const char *bind_ip;
    const char *dest_ip;
    unsigned    port;
    unsigned    local_port;
    int         local_port_set;
    uint64_t    count;
    int         count_set;
    uint64_t    expect;
    int         expect_set;
    unsigned    payload;
    int         payload_set;
    double      timeout;
    double      rate_pps;
    unsigned    window;
    int         echo_opts_set;
    double      echo_wait;
    int         check;
    int         rcvbuf;
    const char *json_path;
    int         quiet;
    int         ready_fd;
};

static volatile sig_atomic_t interrupted;

static void on_signal(int sig)
{
    (void)sig;
    interrupted = 1;
}

static void usage(FILE *f)
{
    fprintf(f,
        "usage: hostlink-udp recv        [--port P] [--bind IP] [--expect N] [--count N] [--timeout S]\n"
        "                                [--no-check] [--rcvbuf BYTES] [--json PATH] [--quiet]\n"
        "       hostlink-udp send        --dest IP [--port P] [--local-port P] --count N --payload BYTES\n"
        "                                [--rate PPS] [--timeout S] [--json PATH] [--quiet]\n"
        "       hostlink-udp echo-client --dest IP [--port P] [--local-port P] --count N --payload BYTES\n"
        "                                [--window W] [--echo-wait S] [--timeout S]\n"
        "                                [--rcvbuf BYTES] [--json PATH] [--quiet]\n"
        "\n"
        "  --port P        recv: local port to listen on; send/echo-client: the FPGA's port (default %d)\n"
        "  --local-port P  send/echo-client: local source port (send: any free port by default); the FPGA\n"
        "                  echoes to its configured host port, so echo-client binds there\n"
        "                  (default: same as --port)\n"
        "  --bind IP       local address to bind (default 0.0.0.0)\n"
        "  --dest IP       the FPGA's IPv4 address\n"
        "  --count N       recv: stop after N packets; send/echo-client: packets to send (1..%u)\n"
        "  --expect N      recv: packets the sender sends; stops when all arrived, reports the ratio\n"
        "  --payload B     payload bytes per packet (0..%u)\n"
        "  --timeout S     stop after S seconds in total whatever happened (default %.0f)\n"
        "  --rate PPS      send: packets per second (default: as fast as the socket accepts)\n"
        "  --window W      echo-client: packets in flight (default 8)\n"
        "  --echo-wait S   echo-client: an echo not back after S seconds is lost (default 1)\n"
        "  --no-check      recv: do not check the payload pattern\n"
        "  --rcvbuf BYTES  recv/echo-client: receive buffer to request (beyond net.core.rmem_max with\n"
        "                  CAP_NET_ADMIN)\n"
        "  --json PATH     also write the summary as JSON to PATH\n"
        "  --ready-fd FD   write one line to FD once the socket is bound (for scripts)\n"
        "  --quiet         no readable summary on stdout\n",
        DEFAULT_PORT, MAX_COUNT, MAX_PAYLOAD, DEFAULT_TIMEOUT);
}

static void die_usage(const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "hostlink-udp: ");
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\n(run 'hostlink-udp --help' for usage)\n");
    exit(EXIT_USAGE);
}

static uint64_t parse_uint(const char *opt, const char *s, uint64_t min, uint64_t max)
{
    char *end;
    unsigned long long v;
    if (s == NULL)
        die_usage("%s needs a value", opt);
    errno = 0;
    v = strtoull(s, &end, 0);
    if (s[0] == '-' || s[0] == '\0' || *end != '\0' || errno)
        die_usage("%s must be an integer, not '%s'", opt, s);
    if (v < min || v > max)
        die_usage("%s must be in %" PRIu64 "..%" PRIu64 ", not %llu", opt, min, max, v);
    return v;
}

static double parse_seconds(const char *opt, const char *s)
{
    char *end;
    double v;
    if (s == NULL)
        die_usage("%s needs a value", opt);
    errno = 0;
    v = strtod(s, &end);
    if (s[0] == '\0' || *end != '\0' || errno || !(v > 0.0) || v > 86400.0)
        die_usage("%s must be a number of seconds in (0, 86400], not '%s'", opt, s);
    return v;
}

static const char *parse_ip(const char *opt, const char *s)
{
    struct in_addr a;
    if (s == NULL)
        die_usage("%s needs a value", opt);
    if (inet_pton(AF_INET, s, &a) != 1)
        die_usage("%s must be a dotted IPv4 address, not '%s'", opt, s);
    return s;
}

/* The tool writes to and then closes --ready-fd: on stdin/stdout/stderr that would lose the
 * summary or errors, and on a descriptor that is not open (or opened later by the tool itself, such
 * as its socket) it would write to and close the wrong file. So both are refused up front. */
static void check_ready_fd(int fd)
{
    if (fd <= 2) {
        fprintf(stderr, "hostlink-udp: --ready-fd must be 3 or more (0, 1, 2 are stdin, stdout, stderr), not %d\n", fd);
        exit(EXIT_USAGE);
    }
    if (fcntl(fd, F_GETFD) == -1) {
        fprintf(stderr, "hostlink-udp: --ready-fd %d is not an open descriptor (pass it to the tool open)\n", fd);
        exit(EXIT_USAGE);
    }
}

static void parse_args(int argc, char **argv, struct options *o)
{
    int i;

    memset(o, 0, sizeof(*o));
    o->bind_ip  = "0.0.0.0";
    o->port     = DEFAULT_PORT;
    o->timeout  = DEFAULT_TIMEOUT;
    o->window   = 8;
    o->echo_wait = 1.0;
    o->check    = 1;
    o->ready_fd = -1;

    if (argc < 2)
        die_usage("missing mode: expected recv, send or echo-client");
    if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
        usage(stdout);
        exit(0);
    }
    o->mode_name = argv[1];
    if (!strcmp(argv[1], "recv"))
        o->mode = MODE_RECV;
    else if (!strcmp(argv[1], "send"))
        o->mode = MODE_SEND;
    else if (!strcmp(argv[1], "echo-client"))
        o->mode = MODE_ECHO;
    else
        die_usage("unknown mode '%s': expected recv, send or echo-client", argv[1]);

    for (i = 2; i < argc; i++) {
        const char *a = argv[i];
        const char *v = (i + 1 < argc) ? argv[i + 1] : NULL;
        int takes_value = 1;
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            usage(stdout);
            exit(0);
        } else if (!strcmp(a, "--port")) {
            o->port = (unsigned)parse_uint(a, v, 1, 65535);
        } else if (!strcmp(a, "--local-port")) {
            o->local_port = (unsigned)parse_uint(a, v, 1, 65535);
            o->local_port_set = 1;
        } else if (!strcmp(a, "--bind")) {
            o->bind_ip = parse_ip(a, v);
        } else if (!strcmp(a, "--dest")) {
            o->dest_ip = parse_ip(a, v);
        } else if (!strcmp(a, "--count")) {
            o->count = parse_uint(a, v, 1, MAX_COUNT);
            o->count_set = 1;
        } else if (!strcmp(a, "--expect")) {
            o->expect = parse_uint(a, v, 1, MAX_COUNT);
            o->expect_set = 1;
        } else if (!strcmp(a, "--payload")) {
            o->payload = (unsigned)parse_uint(a, v, 0, MAX_PAYLOAD);
            o->payload_set = 1;
        } else if (!strcmp(a, "--timeout")) {
            o->timeout = parse_seconds(a, v);
        } else if (!strcmp(a, "--rate")) {
            o->rate_pps = (double)parse_uint(a, v, 1, 100000000);
        } else if (!strcmp(a, "--window")) {
            o->window = (unsigned)parse_uint(a, v, 1, 65536);
            o->echo_opts_set = 1;
        } else if (!strcmp(a, "--echo-wait")) {
            o->echo_wait = parse_seconds(a, v);
            o->echo_opts_set = 1;
        } else if (!strcmp(a, "--rcvbuf")) {
            o->rcvbuf = (int)parse_uint(a, v, 4096, INT_MAX / 2);
        } else if (!strcmp(a, "--json")) {
            if (v == NULL || v[0] == '\0')
                die_usage("--json needs a path");
            o->json_path = v;
        } else if (!strcmp(a, "--ready-fd")) {
            o->ready_fd = (int)parse_uint(a, v, 0, 1024);
            check_ready_fd(o->ready_fd);
        } else if (!strcmp(a, "--no-check")) {
            o->check = 0;
            takes_value = 0;
        } else if (!strcmp(a, "--quiet")) {
            o->quiet = 1;
            takes_value = 0;
        } else {
            die_usage("unknown option '%s' for mode %s", a, o->mode_name);
        }
        i += takes_value;
    }

    /* Options that mean nothing in a mode are refused rather than silently ignored. */
    if (o->mode == MODE_RECV) {
        if (o->dest_ip || o->payload_set || o->rate_pps > 0 || o->local_port_set || o->echo_opts_set)
            die_usage("recv takes no --dest, --payload, --rate, --local-port, --window or --echo-wait "
                      "(it listens on --port and learns sizes from the packets)");
        if (o->count_set && o->expect_set && o->count < o->expect)
            die_usage("--count %" PRIu64 " is smaller than --expect %" PRIu64 ": "
                      "the expected packets could never all arrive", o->count, o->expect);
    } else {
        if (o->dest_ip == NULL)
            die_usage("%s needs --dest IP (the FPGA's address)", o->mode_name);
        if (!o->count_set)
            die_usage("%s needs --count N", o->mode_name);
        if (!o->payload_set)
            die_usage("%s needs --payload BYTES", o->mode_name);
        if (o->expect_set || !o->check)
            die_usage("--expect and --no-check belong to recv");
        if (o->mode == MODE_SEND && o->rcvbuf)
            die_usage("send takes no --rcvbuf");
        if (o->mode == MODE_SEND && o->echo_opts_set)
            die_usage("--window and --echo-wait belong to echo-client");
        if (o->mode != MODE_SEND && o->rate_pps > 0)
            die_usage("--rate belongs to send; echo-client paces itself with --window");
        /* The FPGA echoes to its configured host port, which the sim sets equal to its own port. */
        if (!o->local_port_set && o->mode == MODE_ECHO)
            o->local_port = o->port;
    }
}

/* Time and pattern ------------------------------------------------------------------------------ */

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void fill_pattern(uint8_t *p, unsigned len, uint32_t seq)
{
    uint8_t be[4] = { (uint8_t)(seq >> 24), (uint8_t)(seq >> 16), (uint8_t)(seq >> 8), (uint8_t)seq };
    unsigned i;
    for (i = 0; i < len; i++)
        p[i] = (i < 4) ? be[i] : (uint8_t)(seq + i);
}

static int check_pattern(const uint8_t *p, unsigned len, uint32_t seq)
{
    uint8_t be[4] = { (uint8_t)(seq >> 24), (uint8_t)(seq >> 16), (uint8_t)(seq >> 8), (uint8_t)seq };
    unsigned i;
    for (i = 0; i < len; i++)
        if (p[i] != ((i < 4) ? be[i] : (uint8_t)(seq + i)))
            return 0;
    return 1;
}

/* Sockets --------------------------------------------------------------------------------------- */

/* `ip` (dotted IPv4: the default or one parse_ip() accepted) and `port` as a socket address. */
static void ipv4_address(struct sockaddr_in *sa, const char *ip, unsigned port)
{
    memset(sa, 0, sizeof(*sa));
    sa->sin_family = AF_INET;
    sa->sin_port   = htons((uint16_t)port);
    inet_pton(AF_INET, ip, &sa->sin_addr);
}

static int open_socket(const char *bind_ip, unsigned port, int rcvbuf)
{
    struct sockaddr_in sa;
    int fd;

    fd = socket(AF_INET, SOCK_DGRAM, 0);
    if (fd < 0) {
        fprintf(stderr, "hostlink-udp: socket: %s\n", strerror(errno));
        return -1;
    }
    if (rcvbuf) {
        /* SO_RCVBUF is capped at net.core.rmem_max; with CAP_NET_ADMIN, SO_RCVBUFFORCE is not (the
         * simulation asks for a buffer that outlasts a receiver the host's scheduler leaves waiting). */
        if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &rcvbuf, sizeof(rcvbuf)) < 0 &&
            setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof(rcvbuf)) < 0)
            fprintf(stderr, "hostlink-udp: warning: SO_RCVBUF %d: %s\n", rcvbuf, strerror(errno));
    }
    ipv4_address(&sa, bind_ip, port);
    if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
        fprintf(stderr, "hostlink-udp: cannot bind %s:%u: %s\n", bind_ip, port, strerror(errno));
        close(fd);
        return -1;
    }
    return fd;
}

static void signal_ready(const struct options *o)
{
    static const char msg[] = "ready\n";
    if (o->ready_fd < 0)
        return;
    if (write(o->ready_fd, msg, sizeof(msg) - 1) < 0)
        fprintf(stderr, "hostlink-udp: warning: --ready-fd %d: %s\n", o->ready_fd, strerror(errno));
    close(o->ready_fd);
}

static int remaining_ms(double deadline)
{
    double left = deadline - now_s();
    if (left <= 0)
        return 0;
    if (left > 1.0)
        return 1000;  /* Wake up at least every second so that Ctrl-C is seen promptly. */
    return (int)(left * 1000.0) + 1;
}

/* Summary --------------------------------------------------------------------------------------- */

/* Why recv or echo-client stopped before its count, in the readable summary. */
static void print_stopped(const struct options *o, int timed_out)
{
    if (timed_out)
        printf("  stopped       --timeout %.3f s expired\n", o->timeout);
    else if (interrupted)
        printf("  stopped       interrupted\n");
}

/* JSON ------------------------------------------------------------------------------------------ */

/* Every mode's summary is one object that begins with its mode and ends with why it stopped: json_open()
 * writes the beginning (NULL without --json, or when it cannot be written), json_close() the end. */
static FILE *json_open(const struct options *o)
{
    FILE *f;
    if (o->json_path == NULL)
        return NULL;
    f = fopen(o->json_path, "w");
    if (f == NULL) {
        fprintf(stderr, "hostlink-udp: cannot write --json %s: %s\n", o->json_path, strerror(errno));
        return NULL;
    }
    fprintf(f, "{\n");
    fprintf(f, "  \"mode\": \"%s\",\n", o->mode_name);
    return f;
}

static int json_close(FILE *f, const struct options *o, int timed_out)
{
    if (f == NULL)
        return o->json_path ? -1 : 0;
    fprintf(f, "  \"timed_out\": %s,\n", timed_out ? "true" : "false");
    fprintf(f, "  \"interrupted\": %s\n", interrupted ? "true" : "false");
    fprintf(f, "}\n");
    if (fclose(f) != 0) {
        fprintf(stderr, "hostlink-udp: cannot write --json %s: %s\n", o->json_path, strerror(errno));
        return -1;
    }
    return 0;
}

/* Receive --------------------------------------------------------------------------------------- */

struct recv_stats {
    uint64_t packets;          /* datagrams received */
    uint64_t bytes;            /* payload bytes received */
    uint64_t unique;           /* distinct sequence numbers (or packets for unsequenced payloads) */
    uint64_t duplicates;       /* sequence numbers seen before */
    uint64_t reordered;        /* arrived after a higher sequence number */
    uint64_t gaps;             /* times the sequence jumped forward */
    uint64_t gap_packets;      /* sequence numbers skipped by those jumps, net of late arrivals */
    uint64_t bad_payload;      /* pattern mismatches */
    uint64_t out_of_range;     /* sequence numbers beyond --expect/--count */
    uint64_t unsequenced;      /* payloads shorter than 4 bytes */
    uint64_t next_seq;         /* one past the highest sequence number seen */
    unsigned min_len, max_len;
    double   t_first, t_last;
    int      timed_out;
};

static int run_recv(const struct options *o)
{
    struct recv_stats st;
    uint64_t limit, bitmap_bits;
    uint8_t *seen = NULL;
    static uint8_t bufs[RECV_BATCH][MAX_PAYLOAD + 1];
    struct mmsghdr msgs[RECV_BATCH];
    struct iovec iov[RECV_BATCH];
    double start, deadline, elapsed;
    uint64_t expected;
    double ratio, goodput;
    int fd, i, rc, rcvbuf;
    socklen_t rcvbuf_len = sizeof(rcvbuf);
    FILE *jf;

    memset(&st, 0, sizeof(st));
    st.min_len = UINT_MAX;

    /* The bitmap covers every sequence number that can legitimately arrive. */
    limit = o->expect_set ? o->expect : (o->count_set ? o->count : MAX_COUNT);
    bitmap_bits = limit;
    seen = calloc((size_t)(bitmap_bits + 7) / 8, 1);
    if (seen == NULL) {
        fprintf(stderr, "hostlink-udp: out of memory for %" PRIu64 " sequence numbers\n", bitmap_bits);
        return EXIT_CHECK_FAILED;
    }

    fd = open_socket(o->bind_ip, o->port, o->rcvbuf);
    if (fd < 0) {
        free(seen);
        return EXIT_CHECK_FAILED;
    }
    /* What the kernel granted: the JSON reports it (Linux counts its bookkeeping in it, doubling the request). */
    if (getsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, &rcvbuf_len) < 0)
        rcvbuf = -1;
    signal_ready(o);

    for (i = 0; i < RECV_BATCH; i++) {
        iov[i].iov_base = bufs[i];
        iov[i].iov_len  = sizeof(bufs[i]);
        memset(&msgs[i], 0, sizeof(msgs[i]));
        msgs[i].msg_hdr.msg_iov    = &iov[i];
        msgs[i].msg_hdr.msg_iovlen = 1;
    }

    start    = now_s();
    deadline = start + o->timeout;
    for (;;) {
        struct pollfd pfd = { .fd = fd, .events = POLLIN };
        int n;
        double t;

        if (o->expect_set && st.unique >= o->expect)
            break;
        if (o->count_set && st.packets >= o->count)
            break;
        if (interrupted)
            break;
        if (now_s() >= deadline) {
            st.timed_out = 1;
            break;
        }
        rc = poll(&pfd, 1, remaining_ms(deadline));
        if (rc < 0 && errno != EINTR) {
            fprintf(stderr, "hostlink-udp: poll: %s\n", strerror(errno));
            break;
        }
        if (rc <= 0)
            continue;
        n = recvmmsg(fd, msgs, RECV_BATCH, MSG_DONTWAIT, NULL);
        if (n < 0) {
            if (errno == EAGAIN || errno == EINTR)
                continue;
            fprintf(stderr, "hostlink-udp: recvmmsg: %s\n", strerror(errno));
            break;
        }
        t = now_s();
        for (i = 0; i < n; i++) {
            const uint8_t *p = bufs[i];
            unsigned len = msgs[i].msg_len;
            uint64_t seq;

            if (o->count_set && st.packets >= o->count)
                break;
            if (st.packets == 0)
                st.t_first = t;
            st.t_last = t;
            st.packets++;
            st.bytes += len;
            if (len < st.min_len) st.min_len = len;
            if (len > st.max_len) st.max_len = len;

            if (len < 4) {
                /* No readable sequence number: check against the arrival order. */
                st.unsequenced++;
                st.unique++;
                if (o->check && !check_pattern(p, len, (uint32_t)(st.packets - 1)))
                    st.bad_payload++;
                continue;
            }
            seq = ((uint64_t)p[0] << 24) | ((uint64_t)p[1] << 16) | ((uint64_t)p[2] << 8) | p[3];
            if (o->check && !check_pattern(p, len, (uint32_t)seq)) {
                /* A corrupted sequence field would poison the loss accounting: keep it out. */
                st.bad_payload++;
                continue;
            }
            if (seq >= bitmap_bits) {
                st.out_of_range++;
                continue;
            }
            if (seen[seq / 8] & (1u << (seq % 8))) {
                st.duplicates++;
                continue;
            }
            seen[seq / 8] |= (uint8_t)(1u << (seq % 8));
            st.unique++;
            if (seq + 1 < st.next_seq) {
                st.reordered++;
                if (st.gap_packets)
                    st.gap_packets--;
            } else {
                if (seq > st.next_seq) {
                    st.gaps++;
                    st.gap_packets += seq - st.next_seq;
                }
                st.next_seq = seq + 1;
            }
        }
    }
    close(fd);
    free(seen);

    elapsed  = (st.packets ? st.t_last : now_s()) - start;
    expected = o->expect_set ? o->expect : st.next_seq + st.unsequenced;
    ratio    = expected ? (double)st.unique / (double)expected : 0.0;
    /* Goodput spans first to last arrival: the time before the first packet is the sender's. */
    goodput  = (st.packets > 1 && st.t_last > st.t_first) ?
               (double)st.bytes / (st.t_last - st.t_first) / 1e6 : 0.0;
    if (st.min_len == UINT_MAX)
        st.min_len = 0;

    if (!o->quiet) {
        printf("hostlink-udp recv on %s:%u\n", o->bind_ip, o->port);
        printf("  packets       %" PRIu64 " (%" PRIu64 " bytes, payload %u..%u bytes)\n",
               st.packets, st.bytes, st.min_len, st.max_len);
        printf("  goodput       %.3f MB/s over %.6f s (first to last packet, wall clock)\n",
               goodput, st.packets > 1 ? st.t_last - st.t_first : 0.0);
        if (o->expect_set)
            printf("  received      %" PRIu64 " of %" PRIu64 " expected (%.4f%%), lost %" PRIu64 "\n",
                   st.unique, expected, 100.0 * ratio, expected - (st.unique < expected ? st.unique : expected));
        else
            printf("  received      %" PRIu64 " distinct (%.4f%% of the sequence range seen)\n",
                   st.unique, 100.0 * ratio);
        printf("  sequence      gaps %" PRIu64 " (%" PRIu64 " packets), duplicates %" PRIu64
               ", reordered %" PRIu64 ", out of range %" PRIu64 "\n",
               st.gaps, st.gap_packets, st.duplicates, st.reordered, st.out_of_range);
        printf("  payload       %s, bad %" PRIu64 "%s\n",
               o->check ? "checked" : "not checked", st.bad_payload,
               st.unsequenced ? " (short payloads checked by arrival order)" : "");
        print_stopped(o, st.timed_out);
    }

    jf = json_open(o);
    if (jf) {
        fprintf(jf, "  \"port\": %u,\n", o->port);
        fprintf(jf, "  \"packets\": %" PRIu64 ",\n", st.packets);
        fprintf(jf, "  \"bytes\": %" PRIu64 ",\n", st.bytes);
        fprintf(jf, "  \"min_payload\": %u,\n", st.min_len);
        fprintf(jf, "  \"max_payload\": %u,\n", st.max_len);
        fprintf(jf, "  \"unique\": %" PRIu64 ",\n", st.unique);
        if (o->expect_set) {
            fprintf(jf, "  \"expected\": %" PRIu64 ",\n", expected);
            fprintf(jf, "  \"lost\": %" PRIu64 ",\n", expected - (st.unique < expected ? st.unique : expected));
        } else {
            fprintf(jf, "  \"expected\": null,\n");
            fprintf(jf, "  \"lost\": null,\n");
        }
        fprintf(jf, "  \"received_ratio\": %.6f,\n", ratio);
        fprintf(jf, "  \"gaps\": %" PRIu64 ",\n", st.gaps);
        fprintf(jf, "  \"gap_packets\": %" PRIu64 ",\n", st.gap_packets);
        fprintf(jf, "  \"duplicates\": %" PRIu64 ",\n", st.duplicates);
        fprintf(jf, "  \"reordered\": %" PRIu64 ",\n", st.reordered);
        fprintf(jf, "  \"out_of_range\": %" PRIu64 ",\n", st.out_of_range);
        fprintf(jf, "  \"unsequenced\": %" PRIu64 ",\n", st.unsequenced);
        fprintf(jf, "  \"payload_checked\": %s,\n", o->check ? "true" : "false");
        fprintf(jf, "  \"bad_payload\": %" PRIu64 ",\n", st.bad_payload);
        fprintf(jf, "  \"elapsed_s\": %.6f,\n", elapsed);
        fprintf(jf, "  \"goodput_mbytes_per_s\": %.6f,\n", goodput);
        fprintf(jf, "  \"receive_buffer_bytes\": %d,\n", rcvbuf);
    }
    if (json_close(jf, o, st.timed_out) < 0)
        return EXIT_CHECK_FAILED;

    if (st.bad_payload || st.duplicates || st.out_of_range)
        return EXIT_CHECK_FAILED;
    if (o->expect_set && st.unique < o->expect)
        return EXIT_CHECK_FAILED;
    if (!o->expect_set && !o->count_set && st.packets == 0)
        return EXIT_CHECK_FAILED;
    if (o->count_set && !o->expect_set && st.packets < o->count)
        return EXIT_CHECK_FAILED;
    return 0;
}

/* Send and echo --------------------------------------------------------------------------------- */

static int connect_dest(int fd, const char *ip, unsigned port)
{
    struct sockaddr_in sa;
    ipv4_address(&sa, ip, port);
    if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
        fprintf(stderr, "hostlink-udp: cannot connect to %s:%u: %s\n", ip, port, strerror(errno));
        return -1;
    }
    return 0;
}

/* Sends one datagram, waiting for socket space; returns 1 sent, 0 deadline/interrupt, -1 error. */
static int send_one(int fd, const uint8_t *buf, unsigned len, double deadline)
{
    for (;;) {
        ssize_t r = send(fd, buf, len, MSG_DONTWAIT);
        if (r == (ssize_t)len)
            return 1;
        if (r >= 0) {
            fprintf(stderr, "hostlink-udp: short send (%zd of %u bytes)\n", r, len);
            return -1;
        }
        if (errno == EAGAIN || errno == ENOBUFS || errno == EINTR) {
            struct pollfd pfd = { .fd = fd, .events = POLLOUT };
            if (interrupted || now_s() >= deadline)
                return 0;
            poll(&pfd, 1, errno == ENOBUFS ? 1 : remaining_ms(deadline));
            continue;
        }
        if (errno == ECONNREFUSED) {
            /* An ICMP port unreachable from an earlier datagram: the next one may still go. */
            continue;
        }
        fprintf(stderr, "hostlink-udp: send: %s\n", strerror(errno));
        return -1;
    }
}

static int run_send(const struct options *o)
{
    static uint8_t buf[MAX_PAYLOAD];
    uint64_t sent = 0;
    double start, deadline, elapsed, t_next;
    int fd, rc = 0, timed_out = 0;
    FILE *jf;

    fd = open_socket(o->bind_ip, o->local_port, 0);
    if (fd < 0)
        return EXIT_CHECK_FAILED;
    if (connect_dest(fd, o->dest_ip, o->port) < 0) {
        close(fd);
        return EXIT_CHECK_FAILED;
    }
    signal_ready(o);

    start    = now_s();
    deadline = start + o->timeout;
    t_next   = start;
    while (sent < o->count && !interrupted) {
        if (o->rate_pps > 0) {
            double t = now_s();
            if (t < t_next) {
                struct timespec ts;
                double d = t_next - t;
                ts.tv_sec  = (time_t)d;
                ts.tv_nsec = (long)((d - (double)ts.tv_sec) * 1e9);
                nanosleep(&ts, NULL);
            }
            t_next += 1.0 / o->rate_pps;
        }
        if (now_s() >= deadline) {
            timed_out = 1;
            break;
        }
        fill_pattern(buf, o->payload, (uint32_t)sent);
        rc = send_one(fd, buf, o->payload, deadline);
        if (rc <= 0) {
            timed_out = (rc == 0 && !interrupted);
            break;
        }
        sent++;
    }
    elapsed = now_s() - start;
    close(fd);

    if (!o->quiet) {
        printf("hostlink-udp send to %s:%u\n", o->dest_ip, o->port);
        printf("  sent          %" PRIu64 " of %" PRIu64 " packets, %u bytes each\n", sent, o->count, o->payload);
        printf("  rate          %.3f MB/s, %.0f packets/s over %.6f s (wall clock)\n",
               elapsed > 0 ? (double)sent * o->payload / elapsed / 1e6 : 0.0,
               elapsed > 0 ? (double)sent / elapsed : 0.0, elapsed);
        if (timed_out)
            printf("  stopped       --timeout %.3f s expired\n", o->timeout);
    }
    jf = json_open(o);
    if (jf) {
        fprintf(jf, "  \"dest\": \"%s\",\n", o->dest_ip);
        fprintf(jf, "  \"port\": %u,\n", o->port);
        fprintf(jf, "  \"payload\": %u,\n", o->payload);
        fprintf(jf, "  \"count\": %" PRIu64 ",\n", o->count);
        fprintf(jf, "  \"sent\": %" PRIu64 ",\n", sent);
        fprintf(jf, "  \"elapsed_s\": %.6f,\n", elapsed);
        fprintf(jf, "  \"mbytes_per_s\": %.6f,\n", elapsed > 0 ? (double)sent * o->payload / elapsed / 1e6 : 0.0);
    }
    if (json_close(jf, o, timed_out) < 0 || rc < 0)
        return EXIT_CHECK_FAILED;
    return sent == o->count ? 0 : EXIT_CHECK_FAILED;
}

static int run_echo(const struct options *o)
{
    static uint8_t txbuf[MAX_PAYLOAD];
    static uint8_t rxbuf[MAX_PAYLOAD + 1];
    uint8_t *echoed;
    double *sent_at;
    uint64_t sent = 0, received = 0, matched = 0, good = 0, bad = 0, dup = 0, unexpected = 0;
    uint64_t oldest = 0, given_up = 0;
    double start, deadline, elapsed, t_first = 0, t_last = 0, goodput;
    int fd, rc = 0, timed_out = 0;
    struct sockaddr_in sa;
    FILE *jf;

    echoed  = calloc((size_t)(o->count + 7) / 8, 1);
    sent_at = calloc(o->window, sizeof(double));
    if (echoed == NULL || sent_at == NULL) {
        fprintf(stderr, "hostlink-udp: out of memory for %" PRIu64 " packets\n", o->count);
        free(echoed);
        free(sent_at);
        return EXIT_CHECK_FAILED;
    }
    fd = open_socket(o->bind_ip, o->local_port, o->rcvbuf);
    if (fd < 0) {
        free(echoed);
        free(sent_at);
        return EXIT_CHECK_FAILED;
    }
    signal_ready(o);

    /* Not connect()ed: the echo comes from the FPGA's configured port, whatever we sent to. */
    ipv4_address(&sa, o->dest_ip, o->port);

    start    = now_s();
    deadline = start + o->timeout;
    while (matched < o->count && !interrupted) {
        struct pollfd pfd = { .fd = fd, .events = POLLIN };
        double t = now_s();

        /* The window slides over echoes that came back and over those given up as lost. */
        while (oldest < sent) {
            if (echoed[oldest / 8] & (1u << (oldest % 8))) {
                oldest++;
            } else if (t - sent_at[oldest % o->window] > o->echo_wait) {
                given_up++;
                oldest++;
            } else {
                break;
            }
        }
        while (sent < o->count && sent - oldest < o->window) {
            ssize_t r;
            fill_pattern(txbuf, o->payload, (uint32_t)sent);
            r = sendto(fd, txbuf, o->payload, 0, (struct sockaddr *)&sa, sizeof(sa));
            if (r < 0 && (errno == EAGAIN || errno == ENOBUFS || errno == ECONNREFUSED))
                break;
            if (r != (ssize_t)o->payload) {
                fprintf(stderr, "hostlink-udp: sendto: %s\n", r < 0 ? strerror(errno) : "short send");
                rc = -1;
                goto done;
            }
            sent_at[sent % o->window] = now_s();
            sent++;
        }
        if (sent == o->count && oldest == sent)
            break;  /* Everything sent and every echo either back or given up. */
        if (t >= deadline) {
            timed_out = 1;
            break;
        }
        if (poll(&pfd, 1, remaining_ms(deadline < t + o->echo_wait ? deadline : t + o->echo_wait)) <= 0)
            continue;
        for (;;) {
            ssize_t r = recv(fd, rxbuf, sizeof(rxbuf), MSG_DONTWAIT);
            uint64_t seq;
            if (r < 0) {
                if (errno != EAGAIN && errno != EINTR && errno != ECONNREFUSED) {
                    fprintf(stderr, "hostlink-udp: recv: %s\n", strerror(errno));
                    rc = -1;
                    goto done;
                }
                break;
            }
            if (received == 0)
                t_first = now_s();
            t_last = now_s();
            received++;
            if ((unsigned)r != o->payload) {
                bad++;
                continue;
            }
            /* Payloads under 4 bytes have no sequence number: their echoes are matched in order. */
            if (o->payload < 4)
                seq = matched;
            else
                seq = ((uint64_t)rxbuf[0] << 24) | ((uint64_t)rxbuf[1] << 16) |
                      ((uint64_t)rxbuf[2] << 8) | rxbuf[3];
            if (seq >= sent) {
                unexpected++;
                continue;
            }
            if (echoed[seq / 8] & (1u << (seq % 8))) {
                dup++;
                continue;
            }
            echoed[seq / 8] |= (uint8_t)(1u << (seq % 8));
            matched++;
            if (check_pattern(rxbuf, (unsigned)r, (uint32_t)seq))
                good++;
            else
                bad++;
        }
    }
done:
    elapsed = now_s() - start;
    close(fd);
    free(echoed);
    free(sent_at);
    goodput = (good > 1 && t_last > t_first) ? (double)good * o->payload / (t_last - t_first) / 1e6 : 0.0;

    if (!o->quiet) {
        printf("hostlink-udp echo-client to %s:%u from port %u\n", o->dest_ip, o->port, o->local_port);
        printf("  sent          %" PRIu64 " of %" PRIu64 " packets, %u bytes each, window %u\n",
               sent, o->count, o->payload, o->window);
        printf("  echoes        %" PRIu64 " received, %" PRIu64 " correct, %" PRIu64 " bad, "
               "%" PRIu64 " duplicate, %" PRIu64 " unexpected, %" PRIu64 " lost\n",
               received, good, bad, dup, unexpected, sent - matched);
        printf("  rate          %.3f MB/s of echoed payload over %.6f s (wall clock)\n", goodput, elapsed);
        print_stopped(o, timed_out);
    }
    jf = json_open(o);
    if (jf) {
        fprintf(jf, "  \"dest\": \"%s\",\n", o->dest_ip);
        fprintf(jf, "  \"port\": %u,\n", o->port);
        fprintf(jf, "  \"local_port\": %u,\n", o->local_port);
        fprintf(jf, "  \"payload\": %u,\n", o->payload);
        fprintf(jf, "  \"count\": %" PRIu64 ",\n", o->count);
        fprintf(jf, "  \"sent\": %" PRIu64 ",\n", sent);
        fprintf(jf, "  \"received\": %" PRIu64 ",\n", received);
        fprintf(jf, "  \"echoed_ok\": %" PRIu64 ",\n", good);
        fprintf(jf, "  \"bad_payload\": %" PRIu64 ",\n", bad);
        fprintf(jf, "  \"duplicates\": %" PRIu64 ",\n", dup);
        fprintf(jf, "  \"unexpected\": %" PRIu64 ",\n", unexpected);
        fprintf(jf, "  \"lost\": %" PRIu64 ",\n", sent - matched);
        fprintf(jf, "  \"given_up\": %" PRIu64 ",\n", given_up);
        fprintf(jf, "  \"elapsed_s\": %.6f,\n", elapsed);
        fprintf(jf, "  \"goodput_mbytes_per_s\": %.6f,\n", goodput);
    }
    if (json_close(jf, o, timed_out) < 0 || rc < 0)
        return EXIT_CHECK_FAILED;
    return (good == o->count && bad == 0 && dup == 0 && unexpected == 0) ? 0 : EXIT_CHECK_FAILED;
}

/* Main ------------------------------------------------------------------------------------------ */

int main(int argc, char **argv)
{
    struct options o;
    struct sigaction sa;

    parse_args(argc, argv, &o);

    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_signal;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);

    switch (o.mode) {
    case MODE_RECV: return run_recv(&o);
    case MODE_SEND: return run_send(&o);
    case MODE_ECHO: return run_echo(&o);
    }
    return EXIT_USAGE;
}
