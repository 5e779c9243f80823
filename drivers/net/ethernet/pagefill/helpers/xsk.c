// SPDX-License-Identifier: GPL-2.0
/* AF_XDP zero-copy: XSK pools, their buffers, the TX ring, program runs. */

#include <linux/dma-mapping.h>
#include <linux/filter.h>
#include <linux/netdevice.h>
#include <net/xdp.h>
#include <net/xdp_sock_drv.h>
#include <trace/events/xdp.h>
#include <pagefill/helpers/xsk.h>

#include "internal.h"

int pagefill_xsk_pool_dma_map(struct xsk_buff_pool *pool, struct net_device *dev)
{
	return xsk_pool_dma_map(pool, dev->dev.parent, 0);
}

void pagefill_xsk_pool_dma_unmap(struct xsk_buff_pool *pool)
{
	xsk_pool_dma_unmap(pool, 0);
}

u32 pagefill_xsk_pool_get_rx_frame_size(struct xsk_buff_pool *pool)
{
	return xsk_pool_get_rx_frame_size(pool);
}

bool pagefill_xsk_pool_unaligned(const struct xsk_buff_pool *pool)
{
	return pool->unaligned;
}

bool pagefill_xsk_pool_frags(const struct xsk_buff_pool *pool)
{
	return pool->umem->flags & XDP_UMEM_SG_FLAG;
}

u32 pagefill_xsk_buff_alloc_batch(struct xsk_buff_pool *pool,
				  struct xdp_buff **xdp, u32 max)
{
	return xsk_buff_alloc_batch(pool, xdp, max);
}

void pagefill_xsk_buff_free(struct xdp_buff *xdp)
{
	xsk_buff_free(xdp);
}

dma_addr_t pagefill_xsk_buff_xdp_get_dma(struct xdp_buff *xdp)
{
	return xsk_buff_xdp_get_dma(xdp);
}

void pagefill_xsk_set_rx_need_wakeup(struct xsk_buff_pool *pool, bool on)
{
	if (!xsk_uses_need_wakeup(pool))
		return;
	if (on)
		xsk_set_rx_need_wakeup(pool);
	else
		xsk_clear_rx_need_wakeup(pool);
}

/* Syncs @len bytes of @pool's umem at @dma, for the CPU or the device, a
 * page at a time: the core maps the umem page by page, and an unaligned
 * chunk may span two pages whose mappings only lie side by side (adjacent
 * swiotlb slots, two entries of the DMA-API debugging); one sync across
 * both would run past the first's end.
 */
static void pagefill_xsk_sync(struct xsk_buff_pool *pool, dma_addr_t dma,
			      u32 len, bool for_cpu)
{
	/* The DMA API's own test, once for all the parts. */
	if (!dma_dev_need_sync(pool->dev))
		return;
	while (len) {
		u32 part = min_t(u32, len, PAGE_SIZE - offset_in_page(dma));

		if (for_cpu)
			dma_sync_single_for_cpu(pool->dev, dma, part, DMA_BIDIRECTIONAL);
		else
			xsk_buff_raw_dma_sync_for_device(pool, dma, part);
		dma += part;
		len -= part;
	}
}

u32 pagefill_xsk_tx_take(struct xsk_buff_pool *pool, u32 max)
{
	return xsk_tx_peek_release_desc_batch(pool, max);
}

void pagefill_xsk_tx_desc(struct xsk_buff_pool *pool, u32 i, dma_addr_t *dma,
			  u32 *len, u8 *dst, bool *more)
{
	const struct xdp_desc *desc = &pool->tx_descs[i];

	*more = xp_mb_desc(desc);

	*dma = xsk_buff_raw_get_dma(pool, desc->addr);
	*len = desc->len;
	pagefill_xsk_sync(pool, *dma, desc->len, false);
	memset(dst, 0, ETH_ALEN);
	memcpy(dst, xsk_buff_raw_get_data(pool, desc->addr), min_t(u32, desc->len, ETH_ALEN));
}

void pagefill_xsk_tx_completed(struct xsk_buff_pool *pool, u32 n)
{
	xsk_tx_completed(pool, n);
}

void pagefill_xsk_set_tx_need_wakeup(struct xsk_buff_pool *pool)
{
	if (xsk_uses_need_wakeup(pool))
		xsk_set_tx_need_wakeup(pool);
}

struct xdp_rxq_info *pagefill_xsk_rxq_new(struct net_device *dev,
					  unsigned int queue,
					  struct napi_struct *napi,
					  struct xsk_buff_pool *pool)
{
	struct xdp_rxq_info *rxq;

	rxq = pagefill_rxq_new(dev, queue, napi, xsk_pool_get_rx_frag_step(pool),
			       MEM_TYPE_XSK_BUFF_POOL, NULL);
	if (!IS_ERR(rxq))
		xsk_pool_set_rxq_info(pool, rxq);
	return rxq;
}

/* The metadata kfuncs read a frame's hash after its xdp_buff, where an
 * XSK buffer has its driver area: pagefill_xsk_run() writes it there.
 */
static_assert(offsetof(struct xdp_buff_xsk, cb) ==
	      offsetof(struct pagefill_xdp_buff, hash));
static_assert(sizeof(struct pagefill_xdp_buff) <=
	      offsetofend(struct xdp_buff_xsk, cb));

/* Makes @xdp hold the @len bytes the device wrote, synced for the CPU. */
static void pagefill_xsk_set_len(struct xdp_buff *xdp, u32 len)
{
	struct xdp_buff_xsk *xskb = container_of(xdp, struct xdp_buff_xsk, xdp);

	xsk_buff_set_size(xdp, len);
	/* What the device wrote: xsk_buff_dma_sync_for_cpu() would sync the
	 * whole buffer in one, across a page boundary.
	 */
	pagefill_xsk_sync(xskb->pool, xskb->dma, len, true);
}

bool pagefill_xsk_add_frag(struct xdp_buff *head, u32 head_len,
			   struct xdp_buff *frag, u32 len)
{
	if (head_len)
		pagefill_xsk_set_len(head, head_len);
	pagefill_xsk_set_len(frag, len);
	return xsk_buff_add_frag(head, frag);
}

enum pagefill_xsk_verdict pagefill_xsk_run(struct bpf_prog *prog,
					   struct xdp_buff *xdp, u32 len,
					   u32 hash, u32 rss_type,
					   struct sk_buff **skb)
{
	struct pagefill_xdp_buff *buf = container_of(xdp, struct pagefill_xdp_buff, xdp);
	struct net_device *dev = xdp->rxq->dev;
	struct xdp_frame *frame;
	u32 act = XDP_PASS;

	if (len)
		pagefill_xsk_set_len(xdp, len);
	buf->hash = hash;
	buf->rss_type = rss_type;
	if (prog)
		act = bpf_prog_run_xdp(prog, xdp);
	switch (act) {
	case XDP_REDIRECT:
		if (!xdp_do_redirect(dev, xdp, prog))
			return PAGEFILL_XSK_REDIRECT;
		trace_xdp_exception(dev, prog, act);
		xsk_buff_free(xdp);
		return PAGEFILL_XSK_ERROR;
	case XDP_PASS:
		*skb = xdp_build_skb_from_zc(xdp);
		if (*skb)
			return PAGEFILL_XSK_PASS;
		xsk_buff_free(xdp);
		return PAGEFILL_XSK_ERROR;
	case XDP_TX:
		/* A copy in a page of its own (the buffer goes back to the
		 * pool), sent as a frame redirected to the device would be;
		 * the copy would leave out a frame's fragments.
		 */
		frame = xdp_buff_has_frags(xdp) ? NULL : xdp_convert_buff_to_frame(xdp);
		if (frame && dev->netdev_ops->ndo_xdp_xmit(dev, 1, &frame,
							   XDP_XMIT_FLUSH) == 1)
			return PAGEFILL_XSK_TX;
		if (frame)
			xdp_return_frame(frame);
		else
			xsk_buff_free(xdp);
		trace_xdp_exception(dev, prog, act);
		return PAGEFILL_XSK_ERROR;
	case XDP_DROP:
		xsk_buff_free(xdp);
		return PAGEFILL_XSK_DROP;
	default:
		bpf_warn_invalid_xdp_action(dev, prog, act);
		fallthrough;
	case XDP_ABORTED:
		trace_xdp_exception(dev, prog, act);
		xsk_buff_free(xdp);
		return PAGEFILL_XSK_ABORTED;
	}
}
