// SPDX-License-Identifier: GPL-2.0
/* XDP: receive queue info, program runs, frames, metadata, exceptions. */

#include <linux/filter.h>
#include <linux/mm.h>
#include <linux/netdevice.h>
#include <linux/skbuff.h>
#include <linux/slab.h>
#include <net/xdp.h>
#include <trace/events/xdp.h>
#include <pagefill/helpers/xdp.h>

#include "internal.h"

static_assert((u32)PAGEFILL_RSS_L3_IPV4 == (u32)XDP_RSS_L3_IPV4);
static_assert((u32)PAGEFILL_RSS_L3_IPV6 == (u32)XDP_RSS_L3_IPV6);
static_assert((u32)PAGEFILL_RSS_L4 == (u32)XDP_RSS_L4);
static_assert((u32)PAGEFILL_RSS_L4_TCP == (u32)XDP_RSS_L4_TCP);
static_assert((u32)PAGEFILL_RSS_L4_UDP == (u32)XDP_RSS_L4_UDP);

static int pagefill_xdp_rx_hash(const struct xdp_md *ctx, u32 *hash,
				enum xdp_rss_hash_type *rss_type)
{
	/* Only a program bound to this device calls this, and only from
	 * pagefill_xdp_run(), whose xdp_buff is a pagefill_xdp_buff: the core
	 * refuses a device-bound program in generic XDP, on another device,
	 * in BPF_PROG_TEST_RUN and in devmap, cpumap or tail-call maps.
	 */
	const struct pagefill_xdp_buff *buf = (const void *)ctx;

	if (!buf->rss_type)
		return -ENODATA;
	*hash = buf->hash;
	*rss_type = buf->rss_type;
	return 0;
}

const struct xdp_metadata_ops pagefill_xdp_metadata_ops = {
	.xmo_rx_hash = pagefill_xdp_rx_hash,
};

struct xdp_rxq_info *pagefill_rxq_new(struct net_device *dev,
				      unsigned int queue,
				      struct napi_struct *napi,
				      u32 frag_size,
				      enum xdp_mem_type type,
				      void *allocator)
{
	struct xdp_rxq_info *rxq = kzalloc(sizeof(*rxq), GFP_KERNEL);
	int err;

	if (!rxq)
		return ERR_PTR(-ENOMEM);
	err = __xdp_rxq_info_reg(rxq, dev, queue, READ_ONCE(napi->napi_id),
				 frag_size);
	if (err)
		goto free;
	err = xdp_rxq_info_reg_mem_model(rxq, type, allocator);
	if (err)
		goto unreg;
	return rxq;
unreg:
	xdp_rxq_info_unreg(rxq);
free:
	kfree(rxq);
	return ERR_PTR(err);
}

struct xdp_rxq_info *pagefill_xdp_rxq_new(struct net_device *dev,
					  unsigned int queue,
					  struct napi_struct *napi,
					  struct page_pool *pool,
					  u32 frag_size)
{
	/* Fragments are whole pool buffers: bpf_xdp_adjust_tail() may grow
	 * the last one up to the buffer's end.
	 */
	return pagefill_rxq_new(dev, queue, napi, frag_size,
				MEM_TYPE_PAGE_POOL, pool);
}

void pagefill_xdp_rxq_free(struct xdp_rxq_info *rxq)
{
	xdp_rxq_info_unreg(rxq);
	kfree(rxq);
}

u32 pagefill_xdp_run(struct bpf_prog *prog, struct xdp_rxq_info *rxq,
		     struct page *page, u32 frame_sz, const void *src,
		     struct pagefill_xdp_run_frame *f)
{
	unsigned char *hard_start = page_address(page);
	/* Not zeroed as a whole: xdp_init_buff() and xdp_prepare_buff() set
	 * every field the core reads, and a memset of the rest would cost
	 * each frame more than the program that drops it.
	 */
	struct pagefill_xdp_buff buf;
	struct xdp_buff *xdp = &buf.xdp;
	u32 act, i;

	memcpy(hard_start + f->off, src, f->len);
	buf.hash = f->hash;
	buf.rss_type = f->rss_type;
	xdp_init_buff(xdp, frame_sz, rxq);
	xdp_prepare_buff(xdp, hard_start, f->off, f->len, true);
	/* The caller passes at most PAGEFILL_XDP_MAX_FRAGS < MAX_SKB_FRAGS:
	 * each is added.
	 */
	for (i = 0; i < f->nr_frags && i < MAX_SKB_FRAGS; i++)
		xdp_buff_add_frag(xdp, page_to_netmem(f->frags[i]), 0,
				  f->frag_lens[i], frame_sz);
	act = bpf_prog_run_xdp(prog, xdp);
	f->off = (unsigned char *)xdp->data - hard_start;
	f->len = (unsigned char *)xdp->data_end - (unsigned char *)xdp->data;
	/* The program may have dropped fragments (bpf_xdp_adjust_tail(),
	 * bpf_xdp_pull_data()): the core gave those back to the pool.
	 */
	/* A program adds no fragment: a frame in one buffer stays in one. */
	if (f->nr_frags)
		f->nr_frags = xdp_buff_has_frags(xdp) ?
			xdp_get_shared_info_from_buff(xdp)->nr_frags : 0;
	/* The target the program chose lives in this CPU's redirect state,
	 * which the next program run overwrites: it is acted on now.
	 */
	f->redirect_err = act == XDP_REDIRECT ?
		xdp_do_redirect(rxq->dev, xdp, prog) : 0;
	return act;
}

static_assert(PAGEFILL_XDP_MAX_FRAGS < MAX_SKB_FRAGS);

struct page *pagefill_xdp_frag(struct page *page, u32 frame_sz, u32 i,
			       u32 *off, u32 *len)
{
	const struct skb_shared_info *sinfo =
		page_address(page) + frame_sz - PAGEFILL_XDP_TAILROOM;
	const skb_frag_t *frag;

	if (i >= sinfo->nr_frags || i >= MAX_SKB_FRAGS)
		return NULL;
	frag = &sinfo->frags[i];
	*off = skb_frag_off(frag);
	*len = skb_frag_size(frag);
	return skb_frag_page(frag);
}

static_assert(PAGEFILL_XDP_XMIT_FLUSH == XDP_XMIT_FLUSH);

void pagefill_xdp_do_flush(void)
{
	xdp_do_flush();
}

bool pagefill_xdp_frame_has_frags(const struct xdp_frame *frame)
{
	return xdp_frame_has_frags(frame);
}

u32 pagefill_xdp_frame_len(const struct xdp_frame *frame)
{
	return frame->len;
}

const void *pagefill_xdp_frame_data(const struct xdp_frame *frame)
{
	return frame->data;
}

u32 pagefill_xdp_get_frame_len(const struct xdp_frame *frame)
{
	return xdp_get_frame_len(frame);
}

u32 pagefill_xdp_frame_nr_frags(const struct xdp_frame *frame)
{
	return xdp_frame_has_frags(frame) ?
		xdp_get_shared_info_from_frame(frame)->nr_frags : 0;
}

void pagefill_xdp_return_frame(struct xdp_frame *frame)
{
	xdp_return_frame(frame);
}

void pagefill_xdp_exception(struct net_device *dev, const struct bpf_prog *prog,
			    u32 act, bool invalid)
{
	if (invalid)
		bpf_warn_invalid_xdp_action(dev, prog, act);
	trace_xdp_exception(dev, prog, act);
}
