/* SPDX-License-Identifier: GPL-2.0 */
/* sk_buff: freeing, checksum, hash, GSO, data and fragments. */
#ifndef _PAGEFILL_HELPERS_SKB_H
#define _PAGEFILL_HELPERS_SKB_H

#include <linux/types.h>

struct net_device;
struct page;
struct sk_buff;

void pagefill_dev_kfree_skb_any(struct sk_buff *skb);
/*
 * Gives up @skb for good (a device that may still read it did not come back
 * from its reset): kmemleak is told it is no leak, and scans it, so its head
 * and socket are not reported either.
 */
void pagefill_skb_abandon(struct sk_buff *skb);
int pagefill_skb_tailroom(const struct sk_buff *skb);
void pagefill_skb_eth_type_trans(struct sk_buff *skb, struct net_device *dev);
void pagefill_skb_csum_unnecessary(struct sk_buff *skb);
/* The frame's flow hash; @rss_type as enum pagefill_rss, not 0. */
void pagefill_skb_set_hash(struct sk_buff *skb, u32 hash, u32 rss_type);
/*
 * Makes @skb, a UDP datagram whose header starts @udp_offset bytes into its
 * data, one that the stack splits into @segs datagrams of @gso_size payload
 * bytes (the last may be shorter), its UDP checksum to complete from the
 * pseudo-header sum in the header (CHECKSUM_PARTIAL).
 */
int pagefill_skb_udp_gso(struct sk_buff *skb, u16 udp_offset, u16 gso_size,
			 u16 segs);
int pagefill_skb_linearize(struct sk_buff *skb);
unsigned int pagefill_skb_nr_frags(const struct sk_buff *skb);
bool pagefill_skb_csum_partial(const struct sk_buff *skb, u32 *start,
			       u32 *offset);
int pagefill_skb_checksum_help(struct sk_buff *skb);
u16 pagefill_skb_queue_mapping(const struct sk_buff *skb);
void pagefill_skb_put_data(struct sk_buff *skb, const void *data,
			   unsigned int len);
int pagefill_skb_add_pool_frag(struct sk_buff *skb, struct page *page,
			       unsigned int off, unsigned int size,
			       unsigned int truesize);
const u8 *pagefill_skb_head(const struct sk_buff *skb, unsigned int *len);

#endif /* _PAGEFILL_HELPERS_SKB_H */
