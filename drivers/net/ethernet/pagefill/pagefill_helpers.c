// SPDX-License-Identifier: GPL-2.0
/*
 * Out-of-line wrappers for static inline kernel functions that the pagefill
 * Rust code calls. See include/pagefill/helpers.h.
 */

#include <linux/etherdevice.h>
#include <linux/netdevice.h>
#include <linux/skbuff.h>
#include <net/page_pool/helpers.h>
#include <pagefill/helpers.h>

void *pagefill_netdev_priv(const struct net_device *dev)
{
	return netdev_priv(dev);
}

void pagefill_netif_tx_start_all_queues(struct net_device *dev)
{
	netif_tx_start_all_queues(dev);
}

void pagefill_netif_tx_disable(struct net_device *dev)
{
	netif_tx_disable(dev);
}

void pagefill_dev_kfree_skb_any(struct sk_buff *skb)
{
	dev_kfree_skb_any(skb);
}

/*
 * Fields of struct net_device sit in anonymous cacheline groups that bindgen
 * renders as nested anonymous members; set and read them here by name.
 */
void pagefill_netdev_setup(struct net_device *dev, struct device *parent,
			   const struct net_device_ops *ops, const u8 *mac,
			   unsigned int mtu, unsigned int min_mtu,
			   unsigned int max_mtu)
{
	SET_NETDEV_DEV(dev, parent);
	dev->netdev_ops = ops;
	eth_hw_addr_set(dev, mac);
	dev->mtu = mtu;
	dev->min_mtu = min_mtu;
	dev->max_mtu = max_mtu;
}

unsigned int pagefill_netdev_mtu(const struct net_device *dev)
{
	return READ_ONCE(dev->mtu);
}

void pagefill_netdev_set_mtu(struct net_device *dev, unsigned int mtu)
{
	WRITE_ONCE(dev->mtu, mtu);
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
