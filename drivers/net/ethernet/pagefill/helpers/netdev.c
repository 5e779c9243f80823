// SPDX-License-Identifier: GPL-2.0
/* net_device: allocation, setup, state, features and transmit queues. */

#include <linux/etherdevice.h>
#include <linux/netdevice.h>
#include <net/xdp.h>
#include <pagefill/helpers/netdev.h>

#include "internal.h"

struct net_device *pagefill_alloc_etherdev(int priv_size, unsigned int txqs,
					   unsigned int rxqs)
{
	return alloc_etherdev_mqs(priv_size, txqs, rxqs);
}

void *pagefill_netdev_priv(const struct net_device *dev)
{
	return netdev_priv(dev);
}

bool pagefill_netif_running(const struct net_device *dev)
{
	return netif_running(dev);
}

void pagefill_netdev_log(struct net_device *dev, enum pagefill_log_level level,
			 const char *msg)
{
	switch (level) {
	case PAGEFILL_LOG_ERR:
		netdev_err(dev, "%s\n", msg);
		break;
	case PAGEFILL_LOG_WARN_RATELIMITED:
		if (net_ratelimit())
			netdev_warn(dev, "%s\n", msg);
		break;
	}
}

void pagefill_netif_tx_wake_all_queues(struct net_device *dev)
{
	netif_tx_wake_all_queues(dev);
}

void pagefill_netif_tx_disable(struct net_device *dev)
{
	netif_tx_disable(dev);
	/* ndo_xdp_xmit runs in an RCU read-side section (bottom halves off):
	 * those that started before end before this returns.
	 */
	synchronize_net();
}

/*
 * Fields of struct net_device sit in anonymous cacheline groups that bindgen
 * renders as nested anonymous members; set and read them here by name.
 */
static netdev_features_t pagefill_netdev_bits(u32 features)
{
	return (features & PAGEFILL_F_SG ? NETIF_F_SG : 0) |
	       (features & PAGEFILL_F_HW_CSUM ? NETIF_F_HW_CSUM : 0) |
	       (features & PAGEFILL_F_RXCSUM ? NETIF_F_RXCSUM : 0) |
	       (features & PAGEFILL_F_RXHASH ? NETIF_F_RXHASH : 0) |
	       (features & PAGEFILL_F_NTUPLE ? NETIF_F_NTUPLE : 0) |
	       (features & PAGEFILL_F_LOOPBACK ? NETIF_F_LOOPBACK : 0);
}

void pagefill_netdev_setup(struct net_device *dev, struct device *parent,
			   const struct net_device_ops *ops,
			   const struct ethtool_ops *eops,
			   const struct netdev_stat_ops *sops, u32 features,
			   u32 features_off, const u8 *mac,
			   unsigned int mtu, unsigned int min_mtu,
			   unsigned int max_mtu, u32 xdp_features,
			   u32 xsk_max_segs)
{
	SET_NETDEV_DEV(dev, parent);
	dev->netdev_ops = ops;
	if (eops)
		dev->ethtool_ops = eops;
	if (sops)
		dev->stat_ops = sops;
	dev->hw_features |= pagefill_netdev_bits(features);
	dev->features |= dev->hw_features & ~pagefill_netdev_bits(features_off);
	eth_hw_addr_set(dev, mac);
	dev->mtu = mtu;
	dev->min_mtu = min_mtu;
	dev->max_mtu = max_mtu;
	if (features & PAGEFILL_F_RXHASH)
		dev->xdp_metadata_ops = &pagefill_xdp_metadata_ops;
	/* Not registered yet: no notification, no lock needed. */
	xdp_set_features_flag(dev, xdp_features);
	dev->xdp_zc_max_segs = xsk_max_segs;
}

unsigned int pagefill_netdev_mtu(const struct net_device *dev)
{
	return READ_ONCE(dev->mtu);
}

void pagefill_netdev_set_mtu(struct net_device *dev, unsigned int mtu)
{
	WRITE_ONCE(dev->mtu, mtu);
}

u32 pagefill_features_of(netdev_features_t f)
{
	return (f & NETIF_F_SG ? PAGEFILL_F_SG : 0) |
	       (f & NETIF_F_HW_CSUM ? PAGEFILL_F_HW_CSUM : 0) |
	       (f & NETIF_F_RXCSUM ? PAGEFILL_F_RXCSUM : 0) |
	       (f & NETIF_F_GRO_FRAGLIST ? PAGEFILL_F_GRO_FRAGLIST : 0) |
	       (f & NETIF_F_RXHASH ? PAGEFILL_F_RXHASH : 0) |
	       (f & NETIF_F_NTUPLE ? PAGEFILL_F_NTUPLE : 0) |
	       (f & NETIF_F_LOOPBACK ? PAGEFILL_F_LOOPBACK : 0);
}

u32 pagefill_netdev_features(const struct net_device *dev)
{
	return pagefill_features_of(READ_ONCE(dev->features));
}

bool pagefill_netdev_has_xdp(const struct net_device *dev)
{
	return rcu_access_pointer(dev->xdp_prog);
}

/*
 * Transmit queue @q of @dev, or NULL if the device has no such queue: the
 * Rust callers pass a queue number, and a wrong one must not index past the
 * device's queue array.
 */
static struct netdev_queue *pagefill_txq(struct net_device *dev,
					 unsigned int q)
{
	return q < dev->num_tx_queues ? netdev_get_tx_queue(dev, q) : NULL;
}

void pagefill_tx_sent(struct net_device *dev, unsigned int q,
		      unsigned int bytes)
{
	struct netdev_queue *txq = pagefill_txq(dev, q);

	if (txq)
		netdev_tx_sent_queue(txq, bytes);
}

void pagefill_tx_completed(struct net_device *dev, unsigned int q,
			   unsigned int pkts, unsigned int bytes)
{
	struct netdev_queue *txq = pagefill_txq(dev, q);

	if (txq)
		netdev_tx_completed_queue(txq, pkts, bytes);
}

void pagefill_tx_reset(struct net_device *dev, unsigned int q)
{
	struct netdev_queue *txq = pagefill_txq(dev, q);

	if (txq)
		netdev_tx_reset_queue(txq);
}

void pagefill_tx_stop(struct net_device *dev, unsigned int q)
{
	struct netdev_queue *txq = pagefill_txq(dev, q);

	if (txq)
		netif_tx_stop_queue(txq);
}

void pagefill_tx_wake(struct net_device *dev, unsigned int q)
{
	struct netdev_queue *txq = pagefill_txq(dev, q);

	if (txq)
		netif_tx_wake_queue(txq);
}

bool pagefill_tx_stopped(struct net_device *dev, unsigned int q)
{
	struct netdev_queue *txq = pagefill_txq(dev, q);

	return !txq || netif_tx_queue_stopped(txq);
}

bool pagefill_xmit_more(void)
{
	return netdev_xmit_more();
}

/* Calls @cb with each multicast address of @dev; under the address lock. */
void pagefill_netdev_walk_mc_addrs(struct net_device *dev,
				   pagefill_mc_addr_fn cb, void *ctx)
{
	struct netdev_hw_addr *ha;

	netdev_for_each_mc_addr(ha, dev)
		cb(ctx, ha->addr);
}
