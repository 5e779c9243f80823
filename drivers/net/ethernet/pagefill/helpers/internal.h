/* SPDX-License-Identifier: GPL-2.0 */
/* What the helper files share among themselves; bindgen does not see it. */
#ifndef _PAGEFILL_HELPERS_INTERNAL_H
#define _PAGEFILL_HELPERS_INTERNAL_H

#include <linux/types.h>
#include <net/xdp.h>

struct napi_struct;
struct net_device;

/* The xdp_buff a frame's program runs on, with what the device said of the
 * frame, for the metadata kfuncs: they get the xdp_buff as their context.
 */
struct pagefill_xdp_buff {
	struct xdp_buff xdp;
	u32 hash;
	/* enum xdp_rss_hash_type; 0: the frame has no hash. */
	u32 rss_type;
};

/* xdp.c's, set by pagefill_netdev_setup() on a device with flow hashes. */
extern const struct xdp_metadata_ops pagefill_xdp_metadata_ops;

/* An xdp_rxq_info registered for queue @queue of @dev with memory model
 * @type (@allocator its pool, if it has one); ERR_PTR on failure.
 * xdp.c's, for page pool and XSK pool queues alike.
 */
struct xdp_rxq_info *pagefill_rxq_new(struct net_device *dev,
				      unsigned int queue,
				      struct napi_struct *napi,
				      u32 frag_size,
				      enum xdp_mem_type type,
				      void *allocator);

#endif /* _PAGEFILL_HELPERS_INTERNAL_H */
