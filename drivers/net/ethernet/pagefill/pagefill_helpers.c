// SPDX-License-Identifier: GPL-2.0
/*
 * Out-of-line wrappers for static inline kernel functions that the pagefill
 * Rust code calls. See include/pagefill/helpers.h.
 */

#include <linux/netdevice.h>
#include <linux/skbuff.h>
#include <net/page_pool/helpers.h>
#include <pagefill/helpers.h>

void *pagefill_netdev_priv(const struct net_device *dev)
{
	return netdev_priv(dev);
}

bool pagefill_napi_schedule(struct napi_struct *napi)
{
	return napi_schedule(napi);
}

void pagefill_skb_mark_for_recycle(struct sk_buff *skb)
{
	skb_mark_for_recycle(skb);
}

struct page *pagefill_page_pool_dev_alloc_pages(struct page_pool *pool)
{
	return page_pool_dev_alloc_pages(pool);
}

dma_addr_t pagefill_page_pool_get_dma_addr(const struct page *page)
{
	return page_pool_get_dma_addr(page);
}
