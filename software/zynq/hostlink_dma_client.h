/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * This file is part of hostlink.
 * Copyright (c) 2026 hostlink developers
 *
 * The ioctl of /dev/hostlink_dma (hostlink_dma_client.c), for programs in C; software/zynq/dma_client_test.py
 * packs the same structure in Python.
 */
#ifndef HOSTLINK_DMA_CLIENT_H
#define HOSTLINK_DMA_CLIENT_H

#include <linux/ioctl.h>
#include <linux/types.h>

struct hostlink_dma_transfer {
	/* In. */
	__u64 tx;            /* the program's buffer to send through MM2S, or 0 */
	__u64 rx;            /* the program's buffer to receive into through S2MM, or 0 */
	__u64 length;        /* bytes */
	__u32 chunk;         /* bytes per DMA transfer, at most the module's buffer_size */
	__u32 buffers;       /* 1 (single buffering) or 2 (double) */
	__u32 timeout_ms;    /* per chunk */
	__u32 reserved;
	/* Out. */
	__u64 chunks;            /* chunks that completed */
	__u64 interrupts_waited; /* completions taken from the channels' interrupts */
	__u64 copies;            /* copies between the program's buffers and the kernel's */
};

#define HOSTLINK_DMA_TRANSFER _IOWR('h', 0x40, struct hostlink_dma_transfer)

#endif
