/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * This file is part of hostlink.
 * Copyright (c) 2026 hostlink developers
 *
 * The simulated Zynq's cost device (hostlink.protocol.SIM_COST_*; test/test_zynq_costs.py checks these values
 * against it): the drivers report what the ARM's software did, and the simulation charges it in simulated time
 * (sim/zynq/models/ps_costs.py). The device exists only in the simulation's device tree. In the kernel modules
 * the charges compile to nothing unless HOSTLINK_SIM_COST is defined (Kbuild defines it for User-Mode Linux
 * only), and do nothing when the tree has no such node.
 */
#ifndef HOSTLINK_SIM_COST_H
#define HOSTLINK_SIM_COST_H

/* Categories: write a count to CHARGE + 4 * category. */
#define HOSTLINK_SIM_COST_GP0_READ           0   /* charged by the simulation itself */
#define HOSTLINK_SIM_COST_GP0_WRITE          1   /* charged by the simulation itself */
#define HOSTLINK_SIM_COST_INTERRUPT          2   /* charged by the simulation itself */
#define HOSTLINK_SIM_COST_SYSCALL            3   /* calls */
#define HOSTLINK_SIM_COST_COPY_CACHED        4   /* bytes copied between cached buffers */
#define HOSTLINK_SIM_COST_COPY_TO_COHERENT   5   /* bytes copied into the coherent DMA buffer */
#define HOSTLINK_SIM_COST_COPY_FROM_COHERENT 6   /* bytes copied out of it */
#define HOSTLINK_SIM_COST_CACHE_CLEAN        7   /* cache lines cleaned */
#define HOSTLINK_SIM_COST_CACHE_INVALIDATE   8   /* cache lines invalidated */
#define HOSTLINK_SIM_COST_SCHED_YIELD        9   /* yields */
#define HOSTLINK_SIM_COST_CATEGORIES         10

/* Registers. */
#define HOSTLINK_SIM_COST_CHARGE     0x00
#define HOSTLINK_SIM_COST_MARK       0x40   /* write a value: recorded with the CPU's simulated time */
#define HOSTLINK_SIM_COST_TIME_LO    0x48   /* read: the CPU's simulated time in ns, low half (latches TIME_HI) */
#define HOSTLINK_SIM_COST_TIME_HI    0x4c
#define HOSTLINK_SIM_COST_SIZE       0x100
#define HOSTLINK_SIM_COST_LINE_BYTES 32     /* cache line */
#define HOSTLINK_SIM_COST_MARK_BEGIN 1      /* a driver's call begins */
#define HOSTLINK_SIM_COST_MARK_END   2      /* its data is in the program's buffer */

/* Cache lines spanned by `length` bytes from `address`. */
#define HOSTLINK_SIM_COST_LINES(address, length) \
	((length) ? (((unsigned long)(address) + (length) - 1) / HOSTLINK_SIM_COST_LINE_BYTES - \
		     (unsigned long)(address) / HOSTLINK_SIM_COST_LINE_BYTES + 1) : 0)

#ifdef __KERNEL__
#include <linux/io.h>
#include <linux/of.h>
#include <linux/of_address.h>

#ifdef HOSTLINK_SIM_COST
/* The cost device's registers, or NULL when the device tree has none (a board). */
static inline void __iomem *hostlink_sim_cost_map(void)
{
	struct device_node *np = of_find_compatible_node(NULL, NULL, "hostlink,sim-cost");
	void __iomem *regs = np ? of_iomap(np, 0) : NULL;

	of_node_put(np);
	return regs;
}

static inline void hostlink_sim_cost_unmap(void __iomem *regs)
{
	if (regs)
		iounmap(regs);
}

static inline void hostlink_sim_charge(void __iomem *regs, unsigned int category, u32 count)
{
	if (regs && count)
		writel(count, regs + HOSTLINK_SIM_COST_CHARGE + 4 * category);
}

/* A mark, then a read: User-Mode Linux posts register writes, and the read makes sure the mark (and every charge
 * before it) has arrived before the caller goes on, so that it falls in the right step of the run. */
static inline void hostlink_sim_mark(void __iomem *regs, u32 value)
{
	if (regs) {
		writel(value, regs + HOSTLINK_SIM_COST_MARK);
		readl(regs + HOSTLINK_SIM_COST_TIME_LO);
	}
}
#else
static inline void __iomem *hostlink_sim_cost_map(void) { return NULL; }
static inline void hostlink_sim_cost_unmap(void __iomem *regs) { }
static inline void hostlink_sim_charge(void __iomem *regs, unsigned int category, u32 count) { }
static inline void hostlink_sim_mark(void __iomem *regs, u32 value) { }
#endif
#endif

#endif
