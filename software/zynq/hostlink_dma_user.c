// SPDX-License-Identifier: GPL-2.0
/*
 * This file is part of hostlink.
 * Copyright (c) 2026 hostlink developers
 *
 * hostlink_dma_user: what a user-level driver of the Zynq SoC's AXI DMA needs from the kernel, and nothing more
 * (issue 33, seed 003's user-level variant). On a Zynq that is UIO (the registers mapped into the program) and
 * a DMA-able buffer (udmabuf, reserved memory). User-Mode Linux cannot map a device's registers into a
 * program: its MMIO is a function call (logic_iomem). So here each register access is a system call:
 *
 *   pread(fd, &value, 4, offset) / pwrite(fd, &value, 4, offset)   one of the DMA's 32-bit registers
 *   mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0)      the DMA buffer (coherent)
 *   ioctl(fd, HOSTLINK_DMA_USER_BUFFER, &buffer)                      its bus address and size
 *
 * In the simulation, pread and pwrite at HOSTLINK_DMA_USER_COST_OFFSET + register reach the simulation's cost
 * device instead (hostlink_sim_cost.h): the program reports its copies and yields there, and reads the CPU's
 * simulated time. Without that device (a board) those offsets answer ENODEV.
 *
 * The program does everything else: reset, run, addresses, lengths, and polling the status for the end of a
 * transfer (software/zynq/dma_user_test.c). The module binds to the DMA's device only when asked (the device's
 * driver_override, after xilinx_dma let it go), as UIO's generic driver is bound on a board.
 */

#include <linux/dma-mapping.h>
#include <linux/fs.h>
#include <linux/io.h>
#include <linux/miscdevice.h>
#include <linux/module.h>
#include <linux/platform_device.h>
#include <linux/uaccess.h>

#include "hostlink_dma_user.h"
#include "hostlink_sim_cost.h"

struct user_dma {
	struct device *dev;
	void __iomem *regs;
	resource_size_t regs_size;
	void *buffer;
	dma_addr_t bus_address;
	size_t size;
	struct miscdevice misc;
	void __iomem *cost;   /* the simulation's cost device, NULL on a board */
};

static struct user_dma *of_file(struct file *file)
{
	return container_of(file->private_data, struct user_dma, misc);
}

/* The register at `offset`: the DMA's, or the cost device's from HOSTLINK_DMA_USER_COST_OFFSET on. */
static void __iomem *register_at(struct user_dma *u, size_t count, loff_t offset, int *err)
{
	*err = -EINVAL;
	if (count != 4 || offset < 0 || offset % 4)
		return NULL;
	if (offset >= HOSTLINK_DMA_USER_COST_OFFSET) {
		offset -= HOSTLINK_DMA_USER_COST_OFFSET;
		if (offset + 4 > HOSTLINK_SIM_COST_SIZE)
			return NULL;
		*err = u->cost ? 0 : -ENODEV;
		return u->cost ? u->cost + offset : NULL;
	}
	if (offset + 4 > u->regs_size)
		return NULL;
	*err = 0;
	return u->regs + offset;
}

static ssize_t user_read(struct file *file, char __user *buf, size_t count, loff_t *ppos)
{
	struct user_dma *u = of_file(file);
	u32 value;
	int err;
	void __iomem *reg = register_at(u, count, *ppos, &err);

	if (err)
		return err;
	value = readl(reg);
	if (copy_to_user(buf, &value, 4))
		return -EFAULT;
	return 4;
}

static ssize_t user_write(struct file *file, const char __user *buf, size_t count, loff_t *ppos)
{
	struct user_dma *u = of_file(file);
	u32 value;
	int err;
	void __iomem *reg = register_at(u, count, *ppos, &err);

	if (err)
		return err;
	if (copy_from_user(&value, buf, 4))
		return -EFAULT;
	writel(value, reg);
	return 4;
}

static int user_mmap(struct file *file, struct vm_area_struct *vma)
{
	struct user_dma *u = of_file(file);

	if (vma->vm_pgoff || vma->vm_end - vma->vm_start > u->size)
		return -EINVAL;
	return dma_mmap_coherent(u->dev, vma, u->buffer, u->bus_address, vma->vm_end - vma->vm_start);
}

static long user_ioctl(struct file *file, unsigned int cmd, unsigned long arg)
{
	struct user_dma *u = of_file(file);
	struct hostlink_dma_user_buffer b = { .bus_address = u->bus_address, .size = u->size };

	if (cmd != HOSTLINK_DMA_USER_BUFFER)
		return -ENOTTY;
	return copy_to_user((void __user *)arg, &b, sizeof(b)) ? -EFAULT : 0;
}

static const struct file_operations user_fops = {
	.owner          = THIS_MODULE,
	.read           = user_read,
	.write          = user_write,
	.llseek         = default_llseek,
	.mmap           = user_mmap,
	.unlocked_ioctl = user_ioctl,
};

static unsigned int buffer_size = 4 << 20;
module_param(buffer_size, uint, 0444);
MODULE_PARM_DESC(buffer_size, "Bytes of the DMA buffer the program maps");

static int user_probe(struct platform_device *pdev)
{
	struct user_dma *u;
	struct resource *res;
	int err;

	u = devm_kzalloc(&pdev->dev, sizeof(*u), GFP_KERNEL);
	if (!u)
		return -ENOMEM;
	u->dev = &pdev->dev;
	u->regs = devm_platform_get_and_ioremap_resource(pdev, 0, &res);
	if (IS_ERR(u->regs))
		return PTR_ERR(u->regs);
	u->regs_size = resource_size(res);
	err = dma_set_mask_and_coherent(&pdev->dev, DMA_BIT_MASK(32));
	if (err)
		return err;
	u->size = PAGE_ALIGN(buffer_size);
	u->buffer = dmam_alloc_coherent(&pdev->dev, u->size, &u->bus_address, GFP_KERNEL);
	if (!u->buffer)
		return -ENOMEM;
	u->misc.minor = MISC_DYNAMIC_MINOR;
	u->misc.name = "hostlink_dma_user";
	u->misc.fops = &user_fops;
	u->misc.parent = &pdev->dev;
	err = misc_register(&u->misc);
	if (err)
		return err;
	platform_set_drvdata(pdev, u);
	u->cost = hostlink_sim_cost_map();
	dev_info(&pdev->dev, "/dev/hostlink_dma_user: registers %pR, a buffer of %zu bytes at bus address %pad\n",
		 res, u->size, &u->bus_address);
	return 0;
}

static void user_remove(struct platform_device *pdev)
{
	struct user_dma *u = platform_get_drvdata(pdev);

	misc_deregister(&u->misc);
	hostlink_sim_cost_unmap(u->cost);
}

static struct platform_driver user_driver = {
	.probe  = user_probe,
	.remove_new = user_remove,
	.driver = {
		.name = "hostlink_dma_user",
	},
};
module_platform_driver(user_driver);

MODULE_DESCRIPTION("hostlink: the AXI DMA's registers and a DMA buffer for a user-level driver");
MODULE_LICENSE("GPL");
