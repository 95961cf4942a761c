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
static const struct counter counters[] = {
    COUNTER(COMPLETION_TIMEOUT,     "completion_timeout",     "cycles a DMA read may wait (0: forever)")
    COUNTER(TIMEOUTS,               "timeouts",               "DMA reads ended by the completion timeout")
    COUNTER(ERROR_COMPLETIONS,      "error_completions",      "completions with UR/CA/CRS status or poisoned")
    COUNTER(UNEXPECTED_COMPLETIONS, "unexpected_completions", "completions dropped: tag not outstanding, too long")
    COUNTER(FOREIGN_COMPLETIONS,    "foreign_completions",    "completions dropped: another requester ID")
    COUNTER(REFUSED_DESCRIPTORS,    "refused_descriptors",    "DMA descriptors refused: length 0 or partial word")
    COUNTER(MSI_FAILURES,           "msi_failures",           "MSIs the hard block refused (sent again)")
#ifdef CSR_PCIE_FAULTS_READER0_ERRORS_ADDR
    COUNTER(READER0_ERRORS,         "reader0_errors",         "failed reads of DMA channel 0")
#endif
#ifdef CSR_PCIE_FAULTS_READER1_ERRORS_ADDR
    COUNTER(READER1_ERRORS,         "reader1_errors",         "failed reads of DMA channel 1")
#endif
#ifdef CSR_PCIE_FAULTS_READER2_ERRORS_ADDR
    COUNTER(READER2_ERRORS,         "reader2_errors",         "failed reads of DMA channel 2")
#endif
#ifdef CSR_PCIE_FAULTS_READER3_ERRORS_ADDR
    COUNTER(READER3_ERRORS,         "reader3_errors",         "failed reads of DMA channel 3")
#endif
#ifdef CSR_PCIE_FAULTS_READER4_ERRORS_ADDR
    COUNTER(READER4_ERRORS,         "reader4_errors",         "failed reads of DMA channel 4")
#endif
#ifdef CSR_PCIE_FAULTS_READER5_ERRORS_ADDR
    COUNTER(READER5_ERRORS,         "reader5_errors",         "failed reads of DMA channel 5")
#endif
#ifdef CSR_PCIE_FAULTS_READER6_ERRORS_ADDR
    COUNTER(READER6_ERRORS,         "reader6_errors",         "failed reads of DMA channel 6")
#endif
#ifdef CSR_PCIE_FAULTS_READER7_ERRORS_ADDR
    COUNTER(READER7_ERRORS,         "reader7_errors",         "failed reads of DMA channel 7")
#endif
    COUNTER(READER_ERRORED,         "reader_errored",         "bit i: channel i discards until disabled")
};

static void usage(FILE *out, const char *prog)
{
    fprintf(out,
        "usage: %s [-c DEVICE] [-l]\n"
        "PCIe fault counters of a hostlink SoC (doc/reliability.md).\n"
        "  -c DEVICE  LitePCIe device node (default /dev/litepcie0)\n"
        "  -l         list the counters of this SoC and exit (no device needed)\n"
        "  -h         this help\n", prog);
}

int main(int argc, char **argv)
{
    const char *device = "/dev/litepcie0";
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
    if (list) {
        for (i = 0; i < sizeof(counters)/sizeof(counters[0]); i++)
            printf("%-24s %s\n", counters[i].name, counters[i].meaning);
        return 0;
    }

    /* liblitepcie's own open exits without saying which device: open it here, read-only use. */
    int fd = open(device, O_RDWR | O_CLOEXEC);
    if (fd < 0) {
        fprintf(stderr, "%s: cannot open %s: %s\n", argv[0], device, strerror(errno));
        return 1;
    }
    for (i = 0; i < sizeof(counters)/sizeof(counters[0]); i++)
        printf("%-24s %" PRIu32 "\n", counters[i].name, litepcie_readl(fd, counters[i].addr));
    close(fd);
    return 0;
}
