// SPDX-License-Identifier: GPL-2.0
/* page_pool: pool creation, its pages and their DMA syncs. */

#include <linux/dma-mapping.h>
#include <linux/netdevice.h>
#include <net/page_pool/helpers.h>
#include <pagefill/helpers/page_pool.h>

/*
 * The parameters sit in tagged struct groups that bindgen renders as
 * anonymous members; fill them here. Buffers are 2^order pages, DMA-mapped by the
 * pool for the device to write, synced for the device on recycle, and the
 * pool is tied to the NAPI instance that consumes them.
 */
struct page_pool *pagefill_page_pool_create(struct net_device *dev,
					    struct napi_struct *napi,
					    unsigned int pool_size,
					    unsigned int order)
{
	struct page_pool_params pp = {
		.order = order,
		.flags = PP_FLAG_DMA_MAP | PP_FLAG_DMA_SYNC_DEV,
		.pool_size = pool_size,
		.nid = NUMA_NO_NODE,
		.dev = dev->dev.parent,
		.napi = napi,
		.netdev = dev,
		/* Both ways: XDP_TX sends a buffer back out through the
		 * pool's mapping of it (pagefill_xdp_tx_sync()).
		 */
		.dma_dir = DMA_BIDIRECTIONAL,
		.max_len = PAGE_SIZE << order,
		.offset = 0,
	};

	return page_pool_create(&pp);
}

void pagefill_page_pool_put_full_page(struct page_pool *pool,
				      struct page *page)
{
	page_pool_put_full_page(pool, page, false);
}

void pagefill_page_pool_dma_sync_for_cpu(const struct page_pool *pool,
					 struct page *page, u32 len)
{
	page_pool_dma_sync_for_cpu(pool, page, 0, len);
}

struct page *pagefill_page_pool_dev_alloc_pages(struct page_pool *pool)
{
	return page_pool_dev_alloc_pages(pool);
}

dma_addr_t pagefill_page_pool_get_dma_addr(const struct page *page)
{
	return page_pool_get_dma_addr(page);
}

int pagefill_xdp_tx_sync(struct net_device *dev, struct page_pool *pool,
			 struct page *page, u32 off, u32 len, dma_addr_t *dma)
{
	if (pool->p.dev != dev->dev.parent)
		return -EINVAL;
	*dma = page_pool_get_dma_addr(page) + off;
	dma_sync_single_for_device(pool->p.dev, *dma, len,
				   page_pool_get_dma_dir(pool));
	return 0;
}

void pagefill_page_pool_dma_sync_for_device(const struct page_pool *pool,
					    struct page *page, u32 len)
{
	dma_sync_single_range_for_device(pool->p.dev, page_pool_get_dma_addr(page),
					 pool->p.offset, len, pool->p.dma_dir);
}
