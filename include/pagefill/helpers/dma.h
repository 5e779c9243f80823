/* SPDX-License-Identifier: GPL-2.0 */
/* DMA mapping of what is sent: skbs and XDP frames, for the device to read. */
#ifndef _PAGEFILL_HELPERS_DMA_H
#define _PAGEFILL_HELPERS_DMA_H

#include <linux/types.h>

struct net_device;
struct sk_buff;
struct xdp_frame;

int pagefill_tx_map(struct net_device *dev, struct sk_buff *skb,
		    dma_addr_t *dma);
void pagefill_tx_unmap(struct net_device *dev, dma_addr_t dma,
		       unsigned int len);
int pagefill_tx_map_frag(struct net_device *dev, struct sk_buff *skb,
			 unsigned int i, dma_addr_t *dma, unsigned int *len);
void pagefill_tx_unmap_frag(struct net_device *dev, dma_addr_t dma,
			    unsigned int len);
/*
 * Maps fragment @i of @frame for the parent device of @dev to read; its
 * length in *@len. pagefill_tx_unmap_frag() unmaps.
 */
int pagefill_xdp_frame_frag_map(struct net_device *dev,
				const struct xdp_frame *frame, u32 i,
				dma_addr_t *dma, u32 *len);
/*
 * Maps @frame's first buffer for the parent device of @dev to read;
 * pagefill_tx_unmap() unmaps.
 */
int pagefill_xdp_frame_map(struct net_device *dev, struct xdp_frame *frame,
			   dma_addr_t *dma);

#endif /* _PAGEFILL_HELPERS_DMA_H */
