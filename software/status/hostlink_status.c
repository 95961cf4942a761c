/* This file is part of hostlink.
 * Copyright (c) 2026 hostlink developers
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * hostlink_status: the PCIe fault counters of a hostlink SoC (its pcie_faults CSR block), read through
 * LitePCIe's register ioctl (read-only) with the addresses of the csr.h generated for that SoC.
 *
 *   hostlink_status [-c /dev/litepcie0]   print every counter, one "name value" line each
 *   hostlink_status -l                    list the counters this SoC has, without a device
 */

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "liblitepcie.h"
#include "csr.h"

#ifndef CSR_PCIE_FAULTS_BASE
#error "this SoC has no pcie_faults CSR block: regenerate its driver with a current hostlink"
#endif

struct counter {
    const char *name;
    uint32_t    addr;
    const char *meaning;
};

/* Only the registers this SoC has: csr.h is generated from it. */
#define COUNTER(reg, name, meaning) { name, CSR_PCIE_FAULTS_##reg##_ADDR, meaning },
static const struct counter fixed_counters[] = {
    COUNTER(COMPLETION_TIMEOUT,     "completion_timeout",     "cycles a DMA read may wait (0: forever)")
    COUNTER(TIMEOUTS,               "timeouts",               "DMA reads ended by the completion timeout")
    COUNTER(ERROR_COMPLETIONS,      "error_completions",      "completions with UR/CA/CRS status or poisoned")
    COUNTER(UNEXPECTED_COMPLETIONS, "unexpected_completions", "completions dropped: tag not outstanding, too long")
    COUNTER(FOREIGN_COMPLETIONS,    "foreign_completions",    "completions dropped: another requester ID")
    COUNTER(REFUSED_DESCRIPTORS,    "refused_descriptors",    "DMA descriptors refused: length 0 or partial word")
    COUNTER(MSI_FAILURES,           "msi_failures",           "MSIs the hard block refused (sent again)")
};

/* One reader<i>_errors register per DMA channel, one after the other from reader0_errors up to
 * reader_errored (cores/pcie/faults.py adds them in that order), then reader_errored. */
#ifdef CSR_PCIE_FAULTS_READER0_ERRORS_ADDR
#define READERS ((CSR_PCIE_FAULTS_READER_ERRORED_ADDR - CSR_PCIE_FAULTS_READER0_ERRORS_ADDR) / 4)
#else
#define READERS 0
#endif
#define COUNTERS (sizeof(fixed_counters)/sizeof(fixed_counters[0]) + READERS + 1)

struct counters {
    struct counter counter[COUNTERS];
    char           names[READERS + 1][24];
    char           meanings[READERS + 1][40];
};

static void make_counters(struct counters *c)
{
    size_t fixed = sizeof(fixed_counters)/sizeof(fixed_counters[0]);
    size_t i;

    memcpy(c->counter, fixed_counters, sizeof(fixed_counters));
    for (i = 0; i < READERS; i++) {
        snprintf(c->names[i], sizeof(c->names[i]), "reader%zu_errors", i);
        snprintf(c->meanings[i], sizeof(c->meanings[i]), "failed reads of DMA channel %zu", i);
#ifdef CSR_PCIE_FAULTS_READER0_ERRORS_ADDR
        c->counter[fixed + i] = (struct counter){ c->names[i], CSR_PCIE_FAULTS_READER0_ERRORS_ADDR + 4 * i,
                                                  c->meanings[i] };
#endif
    }
    c->counter[fixed + READERS] = (struct counter){ "reader_errored", CSR_PCIE_FAULTS_READER_ERRORED_ADDR,
                                                    "bit i: channel i discards until disabled" };
}

static void usage(FILE *out, const char *prog)
{
    fprintf(out,
        "usage: %s [-c DEVICE] [-l]\n"
        "PCIe fault counters of a hostlink SoC (doc/reliability.md).\n"
        "  -c DEVICE  LitePCIe device node (default /dev/" HOSTLINK_DRIVER_NAME "0)\n"
        "  -l         list the counters of this SoC and exit (no device needed)\n"
        "  -h         this help\n", prog);
}

int main(int argc, char **argv)
{
    const char *device = "/dev/" HOSTLINK_DRIVER_NAME "0";   /* The driver it is built with (config.h). */
    struct counters table;
    int list = 0;
    int c;
    size_t i;

    while ((c = getopt(argc, argv, "c:lh")) != -1) {
        switch (c) {
        case 'c': device = optarg; break;
        case 'l': list = 1; break;
        case 'h': usage(stdout, argv[0]); return 0;
        default:  usage(stderr, argv[0]); return 2;
        }
    }
    if (optind != argc) {
        fprintf(stderr, "%s: unexpected argument '%s'\n", argv[0], argv[optind]);
        usage(stderr, argv[0]);
        return 2;
    }
    make_counters(&table);
    if (list) {
        for (i = 0; i < COUNTERS; i++)
            printf("%-24s %s\n", table.counter[i].name, table.counter[i].meaning);
        return 0;
    }

    /* liblitepcie's own open exits without saying which device: open it here, read-only use. */
    int fd = open(device, O_RDWR | O_CLOEXEC);
    if (fd < 0) {
        fprintf(stderr, "%s: cannot open %s: %s\n", argv[0], device, strerror(errno));
        return 1;
    }
    for (i = 0; i < COUNTERS; i++)
        printf("%-24s %" PRIu32 "\n", table.counter[i].name, litepcie_readl(fd, table.counter[i].addr));
    close(fd);
    return 0;
}
