/* SPDX-License-Identifier: GPL-2.0 */
/* page_pool: pool creation, its pages and their DMA syncs. */
#ifndef _PAGEFILL_HELPERS_PAGE_POOL_H
#define _PAGEFILL_HELPERS_PAGE_POOL_H

#include <linux/types.h>

struct napi_struct;
struct net_device;
struct page;
struct page_pool;

struct page_pool *pagefill_page_pool_create(struct net_device *dev,
					    struct napi_struct *napi,
					    unsigned int pool_size,
					    unsigned int order);
void pagefill_page_pool_put_full_page(struct page_pool *pool,
				      struct page *page);
void pagefill_page_pool_dma_sync_for_cpu(const struct page_pool *pool,
					 struct page *page, u32 len);
struct page *pagefill_page_pool_dev_alloc_pages(struct page_pool *pool);
dma_addr_t pagefill_page_pool_get_dma_addr(const struct page *page);
/*
 * The bus address of @len bytes at @off in @page, a buffer of @pool,
 * synced for the parent device of @dev to read (XDP_TX sends a pool buffer
 * through the pool's own mapping, made both ways); -EINVAL if @pool maps
 * its buffers for another device.
 */
int pagefill_xdp_tx_sync(struct net_device *dev, struct page_pool *pool,
			 struct page *page, u32 off, u32 len, dma_addr_t *dma);
/* The CPU wrote @len bytes of @page, a buffer of @pool: for the device. */
void pagefill_page_pool_dma_sync_for_device(const struct page_pool *pool,
					    struct page *page, u32 len);

#endif /* _PAGEFILL_HELPERS_PAGE_POOL_H */
