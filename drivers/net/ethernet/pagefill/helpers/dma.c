// SPDX-License-Identifier: GPL-2.0
/* DMA mapping of what is sent: skbs and XDP frames, for the device to read. */

#include <linux/dma-mapping.h>
#include <linux/netdevice.h>
#include <linux/skbuff.h>
#include <net/xdp.h>
#include <pagefill/helpers/dma.h>

/* Maps an skb's linear part for the device to read. */
int pagefill_tx_map(struct net_device *dev, struct sk_buff *skb,
		    dma_addr_t *dma)
{
	*dma = dma_map_single(dev->dev.parent, skb->data, skb_headlen(skb),
			      DMA_TO_DEVICE);
	return dma_mapping_error(dev->dev.parent, *dma) ? -ENOMEM : 0;
}

void pagefill_tx_unmap(struct net_device *dev, dma_addr_t dma,
		       unsigned int len)
{
	dma_unmap_single(dev->dev.parent, dma, len, DMA_TO_DEVICE);
}

/* Maps fragment @i of @skb for the device to read; its length in @len. */
int pagefill_tx_map_frag(struct net_device *dev, struct sk_buff *skb,
			 unsigned int i, dma_addr_t *dma, unsigned int *len)
{
	const skb_frag_t *frag;

	if (i >= skb_shinfo(skb)->nr_frags)
		return -EINVAL;
	frag = &skb_shinfo(skb)->frags[i];
	*len = skb_frag_size(frag);
	*dma = skb_frag_dma_map(dev->dev.parent, frag, 0, *len, DMA_TO_DEVICE);
	return dma_mapping_error(dev->dev.parent, *dma) ? -ENOMEM : 0;
}

void pagefill_tx_unmap_frag(struct net_device *dev, dma_addr_t dma,
			    unsigned int len)
{
	dma_unmap_page(dev->dev.parent, dma, len, DMA_TO_DEVICE);
}

int pagefill_xdp_frame_frag_map(struct net_device *dev,
				const struct xdp_frame *frame, u32 i,
				dma_addr_t *dma, u32 *len)
{
	const struct skb_shared_info *sinfo =
		xdp_get_shared_info_from_frame(frame);
	const skb_frag_t *frag;

	if (!xdp_frame_has_frags(frame) || i >= sinfo->nr_frags)
		return -EINVAL;
	frag = &sinfo->frags[i];
	*len = skb_frag_size(frag);
	*dma = skb_frag_dma_map(dev->dev.parent, frag, 0, *len, DMA_TO_DEVICE);
	return dma_mapping_error(dev->dev.parent, *dma) ? -ENOMEM : 0;
}

int pagefill_xdp_frame_map(struct net_device *dev, struct xdp_frame *frame,
			   dma_addr_t *dma)
{
	*dma = dma_map_single(dev->dev.parent, frame->data, frame->len,
			      DMA_TO_DEVICE);
	return dma_mapping_error(dev->dev.parent, *dma) ? -ENOMEM : 0;
}
