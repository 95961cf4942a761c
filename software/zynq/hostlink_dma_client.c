// SPDX-License-Identifier: GPL-2.0
/*
 * This file is part of hostlink.
 * Copyright (c) 2026 hostlink developers
 *
 * hostlink_dma_client: a dmaengine client of the Zynq SoC's AXI DMA, through Linux's own xilinx_dma driver
 * (issue 33, seed 003's kernel-driver variant). Its device-tree node (compatible "hostlink,axi-dma-client")
 * names the DMA's two channels: dmas = <&axi_dma 0>, <&axi_dma 1>; dma-names = "tx", "rx".
 *
 * /dev/hostlink_dma, one ioctl (hostlink_dma_client.h): HOSTLINK_DMA_TRANSFER moves `length` bytes from the
 * program's `tx` buffer out through MM2S and/or into its `rx` buffer through S2MM, in chunks of `chunk`
 * bytes through kernel buffers (kmalloc, dma_map_single), one chunk at a time (`buffers` 1: copy in, map,
 * transfer, wait for the interrupt, unmap, copy out) or two (2: the next chunk is copied in while one is
 * in flight). Completion comes by the DMA's interrupts (the channels' callbacks); a chunk that does not
 * complete within `timeout_ms` is terminated and the call fails with ETIMEDOUT; a DMA error fails it with
 * EIO. The counts of what the call did (chunks, interrupts waited for, copies) come back in the structure.
 *
 * HOSTLINK_DMA_QUEUE (for the DMA in scatter-gather mode): several transfers each way submitted before waiting,
 * each packet split over two scatterlist entries (two descriptors), each completion by its callback, and each
 * S2MM transfer's residue (its buffer's bytes not written: a packet shorter than the buffer) returned. The
 * residue comes from the callback's dmaengine_result: in Linux 6.12, dmaengine_tx_status of a completed cookie
 * reports DMA_COMPLETE with a residue of 0 (dma_cookie_status), and xilinx_dma computes the residue only for
 * the descriptor it completes, from its segments' CONTROL and STATUS.
 */

#include <linux/completion.h>
#include <linux/dma-mapping.h>
#include <linux/dmaengine.h>
#include <linux/fs.h>
#include <linux/miscdevice.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/of.h>
#include <linux/platform_device.h>
#include <linux/scatterlist.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include "hostlink_dma_client.h"
#include "hostlink_sim_cost.h"

struct chunk_buffer {
	void *data;
	dma_addr_t tx_addr, rx_addr;
	size_t length;
	bool tx_mapped, rx_mapped;
	struct completion tx_done, rx_done;
	enum dmaengine_tx_result tx_result, rx_result;
	u32 tx_residue, rx_residue;
};

struct client {
	struct device *dev;
	struct dma_chan *tx, *rx;
	struct miscdevice misc;
	struct mutex lock;
	struct chunk_buffer buffer[2];
	void *rx_data[2];
	size_t buffer_size;
	void __iomem *cost;   /* the simulation's cost device (hostlink_sim_cost.h), NULL on a board */
};

static void tx_callback(void *param, const struct dmaengine_result *result)
{
	struct chunk_buffer *b = param;

	b->tx_result = result ? result->result : DMA_TRANS_NOERROR;
	b->tx_residue = result ? result->residue : 0;
	complete(&b->tx_done);
}

static void rx_callback(void *param, const struct dmaengine_result *result)
{
	struct chunk_buffer *b = param;

	b->rx_result = result ? result->result : DMA_TRANS_NOERROR;
	b->rx_residue = result ? result->residue : 0;
	complete(&b->rx_done);
}

static int submit(struct client *c, struct dma_chan *chan, dma_addr_t addr, size_t length,
		  enum dma_transfer_direction direction, struct chunk_buffer *b)
{
	struct dma_async_tx_descriptor *desc;
	dma_cookie_t cookie;

	desc = dmaengine_prep_slave_single(chan, addr, length, direction, DMA_PREP_INTERRUPT | DMA_CTRL_ACK);
	if (!desc)
		return -ENOMEM;
	desc->callback_result = direction == DMA_MEM_TO_DEV ? tx_callback : rx_callback;
	desc->callback_param = b;
	cookie = dmaengine_submit(desc);
	if (dma_submit_error(cookie))
		return -EIO;
	dma_async_issue_pending(chan);
	return 0;
}

static void unmap(struct client *c, struct chunk_buffer *b)
{
	if (b->tx_mapped)
		dma_unmap_single(c->tx->device->dev, b->tx_addr, b->length, DMA_TO_DEVICE);
	if (b->rx_mapped) {
		dma_unmap_single(c->rx->device->dev, b->rx_addr, b->length, DMA_FROM_DEVICE);
		hostlink_sim_charge(c->cost, HOSTLINK_SIM_COST_CACHE_INVALIDATE,
				    HOSTLINK_SIM_COST_LINES(b->rx_addr, b->length));
	}
	b->tx_mapped = b->rx_mapped = false;
}

/* Map `data` for one direction of a chunk (tx: MM2S, from memory; else S2MM, to memory) and submit it. */
static int map_and_submit(struct client *c, struct chunk_buffer *b, bool tx, void *data)
{
	struct dma_chan *chan = tx ? c->tx : c->rx;
	dma_addr_t *addr = tx ? &b->tx_addr : &b->rx_addr;
	bool *mapped = tx ? &b->tx_mapped : &b->rx_mapped;

	*addr = dma_map_single(chan->device->dev, data, b->length, tx ? DMA_TO_DEVICE : DMA_FROM_DEVICE);
	if (dma_mapping_error(chan->device->dev, *addr))
		return -ENOMEM;
	*mapped = true;
	hostlink_sim_charge(c->cost, tx ? HOSTLINK_SIM_COST_CACHE_CLEAN : HOSTLINK_SIM_COST_CACHE_INVALIDATE,
			    HOSTLINK_SIM_COST_LINES(*addr, b->length));
	return submit(c, chan, *addr, b->length, tx ? DMA_MEM_TO_DEV : DMA_DEV_TO_MEM, b);
}

/* Start one chunk: S2MM first (the loopback's data has somewhere to go), then MM2S. */
static int start_chunk(struct client *c, struct chunk_buffer *b, void *rx_data, bool tx, bool rx)
{
	int err;

	reinit_completion(&b->tx_done);
	reinit_completion(&b->rx_done);
	if (rx) {
		err = map_and_submit(c, b, false, rx_data);
		if (err)
			return err;
	}
	return tx ? map_and_submit(c, b, true, b->data) : 0;
}

static int wait_chunk(struct client *c, struct chunk_buffer *b, bool tx, bool rx, u32 timeout_ms,
		      struct hostlink_dma_transfer *t)
{
	unsigned long timeout = msecs_to_jiffies(timeout_ms);

	if (rx && !wait_for_completion_timeout(&b->rx_done, timeout))
		return -ETIMEDOUT;
	if (tx && !wait_for_completion_timeout(&b->tx_done, timeout))
		return -ETIMEDOUT;
	t->interrupts_waited += tx + rx;
	if ((tx && b->tx_result != DMA_TRANS_NOERROR) || (rx && b->rx_result != DMA_TRANS_NOERROR))
		return -EIO;
	return 0;
}

/* One call's chunks: chunk i goes through buffer i % buffers. */
struct call {
	struct client *c;
	struct hostlink_dma_transfer *t;
	bool tx, rx;
};

/* Chunk i's buffer: 0 or 1 (buffers is 1 or 2; a mask, not %, since a 64-bit % is a libgcc call on ARM). */
static unsigned int slot(struct call *k, u64 i)
{
	return i & (k->t->buffers - 1);
}

static struct chunk_buffer *buffer_of(struct call *k, u64 i)
{
	return &k->c->buffer[slot(k, i)];
}

/* Copy chunk i in from the program, into its buffer. */
static long begin(struct call *k, u64 i)
{
	struct chunk_buffer *b = buffer_of(k, i);
	u64 offset = i * k->t->chunk;

	b->length = min_t(u64, k->t->chunk, k->t->length - offset);
	if (k->tx && copy_from_user(b->data, u64_to_user_ptr(k->t->tx) + offset, b->length))
		return -EFAULT;
	if (k->tx)
		hostlink_sim_charge(k->c->cost, HOSTLINK_SIM_COST_COPY_CACHED, b->length);
	k->t->copies += k->tx;
	return 0;
}

/* Wait for chunk i's interrupts and unmap it. */
static long end(struct call *k, u64 i)
{
	struct chunk_buffer *b = buffer_of(k, i);
	long err = wait_chunk(k->c, b, k->tx, k->rx, k->t->timeout_ms, k->t);

	unmap(k->c, b);
	return err;
}

/* Copy chunk i out to the program. */
static long copy_out(struct call *k, u64 i)
{
	struct chunk_buffer *b = buffer_of(k, i);

	if (k->rx && copy_to_user(u64_to_user_ptr(k->t->rx) + i * k->t->chunk,
				  k->c->rx_data[slot(k, i)], b->length))
		return -EFAULT;
	if (k->rx)
		hostlink_sim_charge(k->c->cost, HOSTLINK_SIM_COST_COPY_CACHED, b->length);
	k->t->copies += k->rx;
	k->t->chunks++;
	return 0;
}

/*
 * Single buffering: copy in, start, wait, copy out, one chunk after the other. Double buffering: chunk i is
 * copied in while chunk i - 1 is in flight, starts as soon as that one has ended, and chunk i - 1 is copied
 * out while chunk i is in flight.
 */
static long transfer(struct client *c, struct hostlink_dma_transfer *t)
{
	struct call k = { .c = c, .t = t, .tx = t->tx != 0, .rx = t->rx != 0 };
	bool two = t->buffers == 2;
	u64 chunks, i;
	long err;

	if (!k.tx && !k.rx)
		return -EINVAL;
	if (t->buffers != 1 && t->buffers != 2)
		return -EINVAL;
	if (!t->chunk || t->chunk > c->buffer_size || !t->length)
		return -EINVAL;
	chunks = div64_u64(t->length + t->chunk - 1, t->chunk);
	t->chunks = t->interrupts_waited = t->copies = 0;

	for (i = 0; i < chunks; i++) {
		err = begin(&k, i);
		if (err)
			goto fail;
		if (two && i > 0) {
			err = end(&k, i - 1);
			if (err)
				goto fail;
		}
		err = start_chunk(c, buffer_of(&k, i), c->rx_data[slot(&k, i)], k.tx, k.rx);
		if (err)
			goto fail;
		if (two && i > 0)
			err = copy_out(&k, i - 1);
		else if (!two)
			err = end(&k, i) ?: copy_out(&k, i);
		if (err)
			goto fail;
	}
	if (two) {
		err = end(&k, chunks - 1) ?: copy_out(&k, chunks - 1);
		if (err)
			goto fail;
	}
	return 0;
fail:
	/* A chunk that did not end: stop both channels, so that the next call starts clean. */
	dmaengine_terminate_sync(c->tx);
	dmaengine_terminate_sync(c->rx);
	for (i = 0; i < 2; i++)
		unmap(c, &c->buffer[i]);
	dev_err(c->dev, "transfer of %llu bytes failed after %llu chunks: %ld\n", t->length, t->chunks, err);
	return err;
}

/* Queued transfers: one entry per dmaengine transfer, its callback's result. */
struct queued {
	struct queue_call *q;
	dma_cookie_t cookie;
	enum dmaengine_tx_result result;
	u32 residue;
};

struct queue_call {
	struct completion done;
	atomic_t left;
	struct queued tx[HOSTLINK_DMA_QUEUE_MAX], rx[HOSTLINK_DMA_QUEUE_MAX];
};

static void queued_callback(void *param, const struct dmaengine_result *result)
{
	struct queued *e = param;

	e->result = result ? result->result : DMA_TRANS_NOERROR;
	e->residue = result ? result->residue : 0;
	if (atomic_dec_and_test(&e->q->left))
		complete(&e->q->done);
}

static int queue_one(struct dma_chan *chan, struct scatterlist *sg, unsigned int entries,
		     enum dma_transfer_direction direction, struct queued *e)
{
	struct dma_async_tx_descriptor *desc;

	desc = dmaengine_prep_slave_sg(chan, sg, entries, direction, DMA_PREP_INTERRUPT | DMA_CTRL_ACK);
	if (!desc)
		return -ENOMEM;
	desc->callback_result = queued_callback;
	desc->callback_param = e;
	e->cookie = dmaengine_submit(desc);
	return dma_submit_error(e->cookie) ? -EIO : 0;
}

/* Each packet over two scatterlist entries (halves, each a whole number of 8-byte beats) when it has two beats
 * or more; each S2MM buffer one entry. The addresses are already mapped: the entries carry bus addresses. */
static long queue(struct client *c, struct hostlink_dma_queue *t)
{
	size_t tx_bytes = (size_t)t->tx_length * t->count, rx_bytes = (size_t)t->rx_length * t->count;
	struct queue_call *q;
	struct scatterlist sg[2];
	dma_addr_t tx_addr, rx_addr;
	struct dma_tx_state state;
	long err = 0;
	u32 i;

	if (!t->tx || !t->rx || !t->count || t->count > HOSTLINK_DMA_QUEUE_MAX || !t->tx_length ||
	    t->tx_length % 8 || t->rx_length % 8 || t->tx_length > t->rx_length || rx_bytes > c->buffer_size)
		return -EINVAL;
	q = kzalloc(sizeof(*q), GFP_KERNEL);
	if (!q)
		return -ENOMEM;
	init_completion(&q->done);
	atomic_set(&q->left, 2 * t->count);
	t->completions = t->complete = 0;
	if (copy_from_user(c->buffer[0].data, u64_to_user_ptr(t->tx), tx_bytes)) {
		err = -EFAULT;
		goto free;
	}
	tx_addr = dma_map_single(c->tx->device->dev, c->buffer[0].data, tx_bytes, DMA_TO_DEVICE);
	if (dma_mapping_error(c->tx->device->dev, tx_addr)) {
		err = -ENOMEM;
		goto free;
	}
	rx_addr = dma_map_single(c->rx->device->dev, c->rx_data[0], rx_bytes, DMA_FROM_DEVICE);
	if (dma_mapping_error(c->rx->device->dev, rx_addr)) {
		err = -ENOMEM;
		goto unmap_tx;
	}
	/* S2MM's buffers first (the loopback's packets have somewhere to go), then MM2S's packets. */
	for (i = 0; i < t->count && !err; i++) {
		sg_init_table(sg, 1);
		sg_dma_address(&sg[0]) = rx_addr + (dma_addr_t)i * t->rx_length;
		sg_dma_len(&sg[0]) = t->rx_length;
		q->rx[i].q = q;
		err = queue_one(c->rx, sg, 1, DMA_DEV_TO_MEM, &q->rx[i]);
	}
	if (!err)
		dma_async_issue_pending(c->rx);
	for (i = 0; i < t->count && !err; i++) {
		u32 first = t->tx_length >= 16 ? t->tx_length / 16 * 8 : t->tx_length;
		unsigned int entries = first < t->tx_length ? 2 : 1;

		sg_init_table(sg, entries);
		sg_dma_address(&sg[0]) = tx_addr + (dma_addr_t)i * t->tx_length;
		sg_dma_len(&sg[0]) = first;
		if (entries == 2) {
			sg_dma_address(&sg[1]) = sg_dma_address(&sg[0]) + first;
			sg_dma_len(&sg[1]) = t->tx_length - first;
		}
		q->tx[i].q = q;
		err = queue_one(c->tx, sg, entries, DMA_MEM_TO_DEV, &q->tx[i]);
	}
	if (!err)
		dma_async_issue_pending(c->tx);
	if (!err && !wait_for_completion_timeout(&q->done, msecs_to_jiffies(t->timeout_ms)))
		err = -ETIMEDOUT;
	if (err) {
		/* Stop both channels (a reset): nothing of this call runs on, no callback comes after it. */
		dmaengine_terminate_sync(c->tx);
		dmaengine_terminate_sync(c->rx);
	}
	for (i = 0; i < t->count && !err; i++) {
		t->completions += 2;
		t->complete += (dmaengine_tx_status(c->tx, q->tx[i].cookie, &state) == DMA_COMPLETE) +
			       (dmaengine_tx_status(c->rx, q->rx[i].cookie, &state) == DMA_COMPLETE);
		t->residue[i] = q->rx[i].residue;
		if (q->tx[i].result != DMA_TRANS_NOERROR || q->rx[i].result != DMA_TRANS_NOERROR)
			err = -EIO;
	}
	dma_unmap_single(c->rx->device->dev, rx_addr, rx_bytes, DMA_FROM_DEVICE);
	if (!err && copy_to_user(u64_to_user_ptr(t->rx), c->rx_data[0], rx_bytes))
		err = -EFAULT;
unmap_tx:
	dma_unmap_single(c->tx->device->dev, tx_addr, tx_bytes, DMA_TO_DEVICE);
free:
	kfree(q);
	if (err)
		dev_err(c->dev, "queue of %u transfers each way failed: %ld\n", t->count, err);
	return err;
}

static long client_queue_ioctl(struct client *c, unsigned long arg)
{
	struct hostlink_dma_queue t;
	long err;

	if (copy_from_user(&t, (void __user *)arg, sizeof(t)))
		return -EFAULT;
	mutex_lock(&c->lock);
	err = queue(c, &t);
	mutex_unlock(&c->lock);
	if (copy_to_user((void __user *)arg, &t, sizeof(t)))
		return -EFAULT;
	return err;
}

static long client_ioctl(struct file *file, unsigned int cmd, unsigned long arg)
{
	struct client *c = container_of(file->private_data, struct client, misc);
	struct hostlink_dma_transfer t;
	long err;

	if (cmd == HOSTLINK_DMA_QUEUE) {
		hostlink_sim_charge(c->cost, HOSTLINK_SIM_COST_SYSCALL, 1);
		return client_queue_ioctl(c, arg);
	}
	if (cmd != HOSTLINK_DMA_TRANSFER)
		return -ENOTTY;
	if (copy_from_user(&t, (void __user *)arg, sizeof(t)))
		return -EFAULT;
	/* The call is timed from the program's ioctl: its system call is part of it. */
	hostlink_sim_mark(c->cost, HOSTLINK_SIM_COST_MARK_BEGIN);
	hostlink_sim_charge(c->cost, HOSTLINK_SIM_COST_SYSCALL, 1);
	mutex_lock(&c->lock);
	err = transfer(c, &t);
	mutex_unlock(&c->lock);
	hostlink_sim_mark(c->cost, HOSTLINK_SIM_COST_MARK_END);
	if (copy_to_user((void __user *)arg, &t, sizeof(t)))
		return -EFAULT;
	return err;
}

static const struct file_operations client_fops = {
	.owner          = THIS_MODULE,
	.unlocked_ioctl = client_ioctl,
};

static unsigned int buffer_size = 1 << 20;
module_param(buffer_size, uint, 0444);
MODULE_PARM_DESC(buffer_size, "Bytes of each of the four kernel buffers (two to send, two to receive): the largest chunk");

static int client_probe(struct platform_device *pdev)
{
	struct client *c;
	int i, err;

	c = devm_kzalloc(&pdev->dev, sizeof(*c), GFP_KERNEL);
	if (!c)
		return -ENOMEM;
	c->dev = &pdev->dev;
	mutex_init(&c->lock);
	c->tx = dma_request_chan(&pdev->dev, "tx");
	if (IS_ERR(c->tx))
		return dev_err_probe(&pdev->dev, PTR_ERR(c->tx), "no \"tx\" DMA channel\n");
	c->rx = dma_request_chan(&pdev->dev, "rx");
	if (IS_ERR(c->rx)) {
		err = dev_err_probe(&pdev->dev, PTR_ERR(c->rx), "no \"rx\" DMA channel\n");
		goto release_tx;
	}
	c->buffer_size = buffer_size;
	for (i = 0; i < 2; i++) {
		init_completion(&c->buffer[i].tx_done);
		init_completion(&c->buffer[i].rx_done);
		c->buffer[i].data = devm_kmalloc(&pdev->dev, buffer_size, GFP_KERNEL);
		c->rx_data[i] = devm_kmalloc(&pdev->dev, buffer_size, GFP_KERNEL);
		if (!c->buffer[i].data || !c->rx_data[i]) {
			err = -ENOMEM;
			goto release_rx;
		}
	}
	c->misc.minor = MISC_DYNAMIC_MINOR;
	c->misc.name = "hostlink_dma";
	c->misc.fops = &client_fops;
	c->misc.parent = &pdev->dev;
	err = misc_register(&c->misc);
	if (err)
		goto release_rx;
	platform_set_drvdata(pdev, c);
	c->cost = hostlink_sim_cost_map();
	dev_info(&pdev->dev, "/dev/hostlink_dma on %s and %s, buffers of %u bytes\n",
		 dma_chan_name(c->tx), dma_chan_name(c->rx), buffer_size);
	return 0;
release_rx:
	dma_release_channel(c->rx);
release_tx:
	dma_release_channel(c->tx);
	return err;
}

static void client_remove(struct platform_device *pdev)
{
	struct client *c = platform_get_drvdata(pdev);

	misc_deregister(&c->misc);
	hostlink_sim_cost_unmap(c->cost);
	dmaengine_terminate_sync(c->tx);
	dmaengine_terminate_sync(c->rx);
	dma_release_channel(c->rx);
	dma_release_channel(c->tx);
}

static const struct of_device_id client_of_match[] = {
	{ .compatible = "hostlink,axi-dma-client" },
	{ }
};
MODULE_DEVICE_TABLE(of, client_of_match);

static struct platform_driver client_driver = {
	.probe  = client_probe,
	.remove_new = client_remove,
	.driver = {
		.name = "hostlink_dma_client",
		.of_match_table = client_of_match,
	},
};
module_platform_driver(client_driver);

MODULE_DESCRIPTION("hostlink: a dmaengine client of the Zynq SoC's AXI DMA (xilinx_dma)");
MODULE_LICENSE("GPL");
