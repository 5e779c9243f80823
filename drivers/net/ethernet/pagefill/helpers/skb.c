// SPDX-License-Identifier: GPL-2.0
/* sk_buff: freeing, checksum, hash, GSO, data and fragments. */

#include <linux/etherdevice.h>
#include <linux/kmemleak.h>
#include <linux/netdevice.h>
#include <linux/skbuff.h>
#include <linux/udp.h>
#include <net/page_pool/helpers.h>
#include <net/xdp.h>
#include <pagefill/helpers/skb.h>

void pagefill_dev_kfree_skb_any(struct sk_buff *skb)
{
	dev_kfree_skb_any(skb);
}

void pagefill_skb_abandon(struct sk_buff *skb)
{
	const void *object = skb;

	/* kmemleak knows objects by their start: the clone of a fast clone
	 * sits inside its pair's object.
	 */
	if (skb->fclone == SKB_FCLONE_CLONE)
		object = container_of(skb, struct sk_buff_fclones, skb2);
	kmemleak_not_leak(object);
}

int pagefill_skb_tailroom(const struct sk_buff *skb)
{
	return skb_tailroom(skb);
}

void pagefill_skb_eth_type_trans(struct sk_buff *skb, struct net_device *dev)
{
	skb->protocol = eth_type_trans(skb, dev);
}

void pagefill_skb_set_hash(struct sk_buff *skb, u32 hash, u32 rss_type)
{
	skb_set_hash(skb, hash, rss_type & XDP_RSS_L4 ?
		     PKT_HASH_TYPE_L4 : PKT_HASH_TYPE_L3);
}

void pagefill_skb_csum_unnecessary(struct sk_buff *skb)
{
	skb->ip_summed = CHECKSUM_UNNECESSARY;
}

int pagefill_skb_udp_gso(struct sk_buff *skb, u16 udp_offset, u16 gso_size,
			 u16 segs)
{
	if (!skb_partial_csum_set(skb, udp_offset,
				  offsetof(struct udphdr, check)))
		return -EINVAL;
	skb_shinfo(skb)->gso_size = gso_size;
	skb_shinfo(skb)->gso_type = SKB_GSO_UDP_L4;
	skb_shinfo(skb)->gso_segs = segs;
	return 0;
}

int pagefill_skb_linearize(struct sk_buff *skb)
{
	return skb_linearize(skb);
}

unsigned int pagefill_skb_nr_frags(const struct sk_buff *skb)
{
	return skb_shinfo(skb)->nr_frags;
}

/*
 * Whether the stack left the checksum to the device (CHECKSUM_PARTIAL), and
 * if so where it starts in the frame and where, from there, it goes.
 */
bool pagefill_skb_csum_partial(const struct sk_buff *skb, u32 *start,
			       u32 *offset)
{
	if (skb->ip_summed != CHECKSUM_PARTIAL)
		return false;
	*start = skb_checksum_start_offset(skb);
	*offset = skb->csum_offset;
	return true;
}

int pagefill_skb_checksum_help(struct sk_buff *skb)
{
	return skb_checksum_help(skb);
}

u16 pagefill_skb_queue_mapping(const struct sk_buff *skb)
{
	return skb_get_queue_mapping(skb);
}

void pagefill_skb_put_data(struct sk_buff *skb, const void *data,
			   unsigned int len)
{
	skb_put_data(skb, data, len);
}

/*
 * Attaches @size bytes at @off of pool page @page to @skb as its next
 * fragment. The skb takes a pool reference of its own, so the page returns
 * to the pool only when the driver and every skb holding a piece of it have
 * let go.
 */
int pagefill_skb_add_pool_frag(struct sk_buff *skb, struct page *page,
			       unsigned int off, unsigned int size,
			       unsigned int truesize)
{
	int i = skb_shinfo(skb)->nr_frags;

	if (i >= MAX_SKB_FRAGS)
		return -EMSGSIZE;
	page_pool_ref_page(page);
	skb_add_rx_frag(skb, i, page, off, size, truesize);
	skb_mark_for_recycle(skb);
	return 0;
}

const u8 *pagefill_skb_head(const struct sk_buff *skb, unsigned int *len)
{
	*len = skb_headlen(skb);
	return skb->data;
}
