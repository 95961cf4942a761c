/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * This file is part of hostlink.
 * Copyright (c) 2026 hostlink developers
 *
 * /dev/hostlink_dma_user (hostlink_dma_user.c): the AXI DMA's registers by pread/pwrite of 4 bytes at their
 * offsets, a DMA buffer by mmap, and this ioctl for the buffer's bus address and size.
 */
#ifndef HOSTLINK_DMA_USER_H
#define HOSTLINK_DMA_USER_H

#include <linux/ioctl.h>
#include <linux/types.h>

struct hostlink_dma_user_buffer {
	__u64 bus_address;   /* what the DMA's SA and DA registers take */
	__u64 size;          /* bytes, for mmap at offset 0 */
};

#define HOSTLINK_DMA_USER_BUFFER _IOR('h', 0x41, struct hostlink_dma_user_buffer)

/* pread/pwrite offsets from here on reach the simulation's cost device (hostlink_sim_cost.h); ENODEV on a board. */
#define HOSTLINK_DMA_USER_COST_OFFSET 0x100000

#endif
