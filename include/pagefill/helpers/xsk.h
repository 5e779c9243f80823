/* SPDX-License-Identifier: GPL-2.0 */
/* AF_XDP zero-copy: an XSK buffer pool bound to a queue, its buffers. */
#ifndef _PAGEFILL_HELPERS_XSK_H
#define _PAGEFILL_HELPERS_XSK_H

#include <linux/types.h>

struct bpf_prog;
struct napi_struct;
struct net_device;
struct sk_buff;
struct xdp_buff;
struct xdp_rxq_info;
struct xsk_buff_pool;

/* Maps @pool for the device behind @dev (its parent). */
int pagefill_xsk_pool_dma_map(struct xsk_buff_pool *pool, struct net_device *dev);
void pagefill_xsk_pool_dma_unmap(struct xsk_buff_pool *pool);
u32 pagefill_xsk_pool_get_rx_frame_size(struct xsk_buff_pool *pool);
bool pagefill_xsk_pool_unaligned(const struct xsk_buff_pool *pool);
/* Whether @pool's sockets take frames in several buffers (XDP_USE_SG). */
bool pagefill_xsk_pool_frags(const struct xsk_buff_pool *pool);
u32 pagefill_xsk_buff_alloc_batch(struct xsk_buff_pool *pool,
				  struct xdp_buff **xdp, u32 max);
void pagefill_xsk_buff_free(struct xdp_buff *xdp);
dma_addr_t pagefill_xsk_buff_xdp_get_dma(struct xdp_buff *xdp);
void pagefill_xsk_set_rx_need_wakeup(struct xsk_buff_pool *pool, bool on);
/*
 * Takes up to @max frames from the TX ring of @pool's socket (released:
 * each is reported done, in order, by xsk_tx_completed()); returns how
 * many. pagefill_xsk_tx_desc() reads frame @i of them: its DMA address
 * (synced for the device), its length and its first ETH_ALEN bytes (0s
 * past the frame).
 */
u32 pagefill_xsk_tx_take(struct xsk_buff_pool *pool, u32 max);
void pagefill_xsk_tx_desc(struct xsk_buff_pool *pool, u32 i, dma_addr_t *dma,
			  u32 *len, u8 *dst, bool *more);
void pagefill_xsk_tx_completed(struct xsk_buff_pool *pool, u32 n);
void pagefill_xsk_set_tx_need_wakeup(struct xsk_buff_pool *pool);
/*
 * An xdp_rxq_info for queue @queue of @dev whose frames are @pool's
 * buffers (MEM_TYPE_XSK_BUFF_POOL), given to the pool for its buffers;
 * ERR_PTR on failure. Freed by pagefill_xdp_rxq_free().
 */
struct xdp_rxq_info *pagefill_xsk_rxq_new(struct net_device *dev,
					  unsigned int queue,
					  struct napi_struct *napi,
					  struct xsk_buff_pool *pool);

/* What became of a frame pagefill_xsk_run() ran a program on. */
enum pagefill_xsk_verdict {
	PAGEFILL_XSK_REDIRECT,
	PAGEFILL_XSK_PASS,
	PAGEFILL_XSK_TX,
	PAGEFILL_XSK_DROP,
	PAGEFILL_XSK_ABORTED,
	/* a redirect or transmit that failed, or no skb for a pass */
	PAGEFILL_XSK_ERROR,
};

/*
 * Adds the XSK buffer @frag, which holds @len bytes the device wrote, to
 * the frame in the XSK buffer @head as its next fragment, after setting
 * @head up for the @head_len bytes the device wrote there (0: it is, a
 * fragment was added before); false if the frame has as many as it can
 * take (@frag is still the caller's then). Freeing @head frees its
 * fragments.
 */
bool pagefill_xsk_add_frag(struct xdp_buff *head, u32 head_len,
			   struct xdp_buff *frag, u32 len);
/*
 * Runs @prog (NULL: none, as XDP_PASS) on the frame in the XSK buffer @xdp
 * (and the fragments pagefill_xsk_add_frag() added), after setting @xdp up
 * for the @len bytes the device wrote there (0: it is), with flow hash
 * @hash of @rss_type (enum pagefill_rss, 0 for none) for
 * bpf_xdp_metadata_rx_hash(), and carries out the verdict: the buffer is
 * redirected, copied into *@skb (for XDP_PASS), sent back through the
 * device's ndo_xdp_xmit (XDP_TX, a frame in one buffer only), or given
 * back to its pool; it is the caller's no more in any case.
 */
enum pagefill_xsk_verdict pagefill_xsk_run(struct bpf_prog *prog,
					   struct xdp_buff *xdp, u32 len,
					   u32 hash, u32 rss_type,
					   struct sk_buff **skb);

#endif /* _PAGEFILL_HELPERS_XSK_H */
