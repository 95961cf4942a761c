/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * This file is part of hostlink.
 * Copyright (c) 2026 hostlink developers
 *
 * The ioctls of /dev/hostlink_dma (hostlink_dma_client.c), for programs in C. hostlink.protocol
 * (AXI_DMA_CLIENT_IOCTLS) defines them for Python, and test/test_protocol.py checks this header against it.
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

/*
 * Queued transfers (the DMA in scatter-gather mode): `count` packets of `tx_length` bytes, each one
 * dmaengine_prep_slave_sg of two entries (so a packet spans two descriptors, TXSOF to TXEOF), and `count`
 * S2MM buffers of `rx_length` bytes (dmaengine_prep_slave_single each), all submitted before waiting; each
 * completion comes by its callback, with the residue xilinx_dma computes from the descriptors' STATUS.
 * Packet i comes back into buffer i: a packet shorter than its buffer leaves a residue.
 */
#define HOSTLINK_DMA_QUEUE_MAX 16

struct hostlink_dma_queue {
	/* In. */
	__u64 tx;            /* the packets, back to back: count * tx_length bytes */
	__u64 rx;            /* the buffers, back to back: count * rx_length bytes */
	__u32 tx_length;     /* bytes per packet: a multiple of 8 (the bus), at most rx_length */
	__u32 rx_length;     /* bytes per S2MM buffer: a multiple of 8; count * rx_length within buffer_size */
	__u32 count;         /* 1 to HOSTLINK_DMA_QUEUE_MAX */
	__u32 timeout_ms;    /* for the whole queue */
	/* Out. */
	__u32 completions;   /* callbacks taken, both ways */
	__u32 complete;      /* cookies dmaengine_tx_status then reported DMA_COMPLETE, both ways */
	__u32 residue[HOSTLINK_DMA_QUEUE_MAX];   /* each S2MM buffer's bytes left unwritten */
};

#define HOSTLINK_DMA_QUEUE _IOWR('h', 0x41, struct hostlink_dma_queue)

#endif
