/* SPDX-License-Identifier: GPL-2.0 */
/* net_device: allocation, setup, state, features and transmit queues. */
#ifndef _PAGEFILL_HELPERS_NETDEV_H
#define _PAGEFILL_HELPERS_NETDEV_H

#include <linux/netdev_features.h>
#include <linux/types.h>

struct device;
struct ethtool_ops;
struct net_device;
struct net_device_ops;
struct netdev_stat_ops;

/* Offloads for pagefill_netdev_setup(). */
enum pagefill_features {
	PAGEFILL_F_SG = 1 << 0,
	PAGEFILL_F_HW_CSUM = 1 << 1,
	PAGEFILL_F_RXCSUM = 1 << 2,
	/* Read only (pagefill_netdev_features()): the stack's, not offered. */
	PAGEFILL_F_GRO_FRAGLIST = 1 << 3,
	/* Flow hashes from the device: NETIF_F_RXHASH, and XDP's receive
	 * hash metadata (xmo_rx_hash).
	 */
	PAGEFILL_F_RXHASH = 1 << 4,
	/* Flow rules (ethtool -N): NETIF_F_NTUPLE. */
	PAGEFILL_F_NTUPLE = 1 << 5,
	/* The device sends its frames back to itself: NETIF_F_LOOPBACK. */
	PAGEFILL_F_LOOPBACK = 1 << 6,
};

/* An Ethernet device with @priv_size bytes of private area. */
struct net_device *pagefill_alloc_etherdev(int priv_size, unsigned int txqs,
					   unsigned int rxqs);
/* netdev_priv() of a device from pagefill_alloc_etherdev(). */
void *pagefill_netdev_priv(const struct net_device *dev);
bool pagefill_netif_running(const struct net_device *dev);
enum pagefill_log_level {
	PAGEFILL_LOG_ERR,
	PAGEFILL_LOG_WARN_RATELIMITED,
};

/* Logs @msg with @dev's name, at @level. */
void pagefill_netdev_log(struct net_device *dev, enum pagefill_log_level level,
			 const char *msg);
void pagefill_netif_tx_wake_all_queues(struct net_device *dev);
void pagefill_netif_tx_disable(struct net_device *dev);
void pagefill_netdev_setup(struct net_device *dev, struct device *parent,
			   const struct net_device_ops *ops,
			   const struct ethtool_ops *eops,
			   const struct netdev_stat_ops *sops, u32 features,
			   u32 features_off, const u8 *mac,
			   unsigned int mtu, unsigned int min_mtu,
			   unsigned int max_mtu, u32 xdp_features,
			   u32 xsk_max_segs);
unsigned int pagefill_netdev_mtu(const struct net_device *dev);
void pagefill_netdev_set_mtu(struct net_device *dev, unsigned int mtu);
/* The pagefill_features of @dev's active features (dev->features). */
u32 pagefill_netdev_features(const struct net_device *dev);
/* The pagefill_features of @features. */
u32 pagefill_features_of(netdev_features_t features);
/* Whether an XDP program (generic XDP) is attached to @dev. */
bool pagefill_netdev_has_xdp(const struct net_device *dev);
void pagefill_tx_sent(struct net_device *dev, unsigned int q,
		      unsigned int bytes);
void pagefill_tx_completed(struct net_device *dev, unsigned int q,
			   unsigned int pkts, unsigned int bytes);
void pagefill_tx_reset(struct net_device *dev, unsigned int q);
void pagefill_tx_stop(struct net_device *dev, unsigned int q);
void pagefill_tx_wake(struct net_device *dev, unsigned int q);
bool pagefill_tx_stopped(struct net_device *dev, unsigned int q);
bool pagefill_xmit_more(void);
/* Called with each multicast address of a device. */
typedef void (*pagefill_mc_addr_fn)(void *ctx, const u8 *addr);
void pagefill_netdev_walk_mc_addrs(struct net_device *dev,
				   pagefill_mc_addr_fn cb, void *ctx);

#endif /* _PAGEFILL_HELPERS_NETDEV_H */
