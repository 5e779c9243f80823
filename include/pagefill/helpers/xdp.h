/* SPDX-License-Identifier: GPL-2.0 */
/* XDP: receive queue info, program runs, frames, metadata, exceptions. */
#ifndef _PAGEFILL_HELPERS_XDP_H
#define _PAGEFILL_HELPERS_XDP_H

#include <linux/skbuff.h>
#include <linux/types.h>
#include <uapi/linux/bpf.h>
#include <uapi/linux/netdev.h>

struct bpf_prog;
struct napi_struct;
struct net_device;
struct page;
struct page_pool;
struct xdp_frame;
struct xdp_rxq_info;

/* What a received frame's flow hash covers: the XDP_RSS_* bits of
 * enum xdp_rss_hash_type; 0 for no hash.
 */
enum pagefill_rss {
	PAGEFILL_RSS_L3_IPV4 = 1 << 0,
	PAGEFILL_RSS_L3_IPV6 = 1 << 1,
	PAGEFILL_RSS_L4 = 1 << 3,
	PAGEFILL_RSS_L4_TCP = 1 << 4,
	PAGEFILL_RSS_L4_UDP = 1 << 5,
};

/*
 * A receive queue's xdp_rxq_info, allocated and registered for queue @queue
 * of @dev with @pool's memory model; ERR_PTR on failure. Freed (after its
 * unregistration) by pagefill_xdp_rxq_free().
 */
struct xdp_rxq_info *pagefill_xdp_rxq_new(struct net_device *dev,
					  unsigned int queue,
					  struct napi_struct *napi,
					  struct page_pool *pool,
					  u32 frag_size);
void pagefill_xdp_rxq_free(struct xdp_rxq_info *rxq);
/*
 * The frame pagefill_xdp_run() runs a program on: @len bytes at @off in
 * the first buffer, followed by @nr_frags (at most PAGEFILL_XDP_MAX_FRAGS)
 * more buffers of the same pool, @frags, holding @frag_lens bytes each
 * from their start (a multi-buffer frame: they go in the skb_shared_info
 * at the buffer's end). @hash and @rss_type (enum pagefill_rss, 0 for
 * none) are the frame's flow hash, for the program's
 * bpf_xdp_metadata_rx_hash(). On return @off, @len and @nr_frags say
 * where the frame is (the core gave back the fragments the program
 * dropped), and @redirect_err how a redirect went.
 */
struct pagefill_xdp_run_frame {
	struct page *const *frags;
	const u32 *frag_lens;
	u32 off;
	u32 len;
	u32 nr_frags;
	u32 hash;
	u32 rss_type;
	int redirect_err;
};

/*
 * Copies the frame's first part, @f->len bytes at @src, to @f->off in
 * @page's @frame_sz-byte buffer, runs @prog on the frame @f describes
 * there and returns its action. For XDP_REDIRECT it also redirects the frame
 * (xdp_do_redirect()): on success (@f->redirect_err 0) the buffer belongs
 * to the redirect's target. In a NAPI poll, which then calls
 * pagefill_xdp_do_flush() before it ends.
 */
u32 pagefill_xdp_run(struct bpf_prog *prog, struct xdp_rxq_info *rxq,
		     struct page *page, u32 frame_sz, const void *src,
		     struct pagefill_xdp_run_frame *f);
/*
 * Fragment @i of the frame in @page's @frame_sz-byte buffer after
 * pagefill_xdp_run(): its page, and its offset and length there; NULL if
 * there is no such fragment.
 */
struct page *pagefill_xdp_frag(struct page *page, u32 frame_sz, u32 i,
			       u32 *off, u32 *len);
void pagefill_xdp_do_flush(void);
/* A frame redirected to the device (ndo_xdp_xmit). */
bool pagefill_xdp_frame_has_frags(const struct xdp_frame *frame);
u32 pagefill_xdp_frame_len(const struct xdp_frame *frame);
const void *pagefill_xdp_frame_data(const struct xdp_frame *frame);
/* @frame's length, its first buffer and its fragments. */
u32 pagefill_xdp_get_frame_len(const struct xdp_frame *frame);
/* Fragments of @frame beyond its first buffer (multi-buffer XDP). */
u32 pagefill_xdp_frame_nr_frags(const struct xdp_frame *frame);
void pagefill_xdp_return_frame(struct xdp_frame *frame);
/* The xdp_features bits the driver may advertise. */
enum pagefill_xdp_features {
	PAGEFILL_XDP_ACT_BASIC = NETDEV_XDP_ACT_BASIC,
	PAGEFILL_XDP_ACT_REDIRECT = NETDEV_XDP_ACT_REDIRECT,
	PAGEFILL_XDP_ACT_NDO_XMIT = NETDEV_XDP_ACT_NDO_XMIT,
	PAGEFILL_XDP_ACT_RX_SG = NETDEV_XDP_ACT_RX_SG,
	PAGEFILL_XDP_ACT_NDO_XMIT_SG = NETDEV_XDP_ACT_NDO_XMIT_SG,
	PAGEFILL_XDP_ACT_XSK_ZEROCOPY = NETDEV_XDP_ACT_XSK_ZEROCOPY,
};

/* The flags of an ndo_xdp_xmit call (net/xdp.h's, checked there). */
enum pagefill_xdp_xmit_flags {
	PAGEFILL_XDP_XMIT_FLUSH = 1U << 0,
};

/* The headroom and tailroom an xdp_buff must have. */
enum pagefill_xdp_room {
	PAGEFILL_XDP_HEADROOM = XDP_PACKET_HEADROOM,
	PAGEFILL_XDP_TAILROOM = SKB_DATA_ALIGN(sizeof(struct skb_shared_info)),
	/*
	 * Most buffers after the first that a received frame is run in: a
	 * frame sent back takes one transmit descriptor each, and the driver
	 * maps a frame in at most five parts (TX_MAX_PARTS).
	 */
	PAGEFILL_XDP_MAX_FRAGS = 4,
};

/* trace_xdp_exception(), after bpf_warn_invalid_xdp_action() if @invalid. */
void pagefill_xdp_exception(struct net_device *dev, const struct bpf_prog *prog,
			    u32 act, bool invalid);

#endif /* _PAGEFILL_HELPERS_XDP_H */
