/* SPDX-License-Identifier: GPL-2.0 */
/* NAPI: instances with their retry timer, scheduling, GRO, interrupt. */
#ifndef _PAGEFILL_HELPERS_NAPI_H
#define _PAGEFILL_HELPERS_NAPI_H

#include <linux/netdevice.h>
#include <linux/timer.h>
#include <linux/types.h>

struct net_device;
struct napi_struct;
struct sk_buff;

/*
 * A NAPI instance of the driver: the napi_struct first (the Rust side
 * finds its instance from it), then the timer that polls it again after a
 * page allocation failed.
 */
struct pagefill_napi {
	struct napi_struct napi;
	struct timer_list retry;
};

unsigned int pagefill_netdev_num_napi_configs(const struct net_device *dev);
/* Whether a NAPI instance is still added to @dev. */
bool pagefill_netdev_has_napi(const struct net_device *dev);
void pagefill_netif_napi_add(struct net_device *dev, struct napi_struct *napi,
			     int (*poll)(struct napi_struct *, int),
			     int index);
/* Disabled first (napi_disable()): its retry timer is shut down too. */
void pagefill_netif_napi_del(struct napi_struct *napi);
/* Schedules @napi again in about @ms milliseconds, from a timer. */
void pagefill_napi_retry_later(struct napi_struct *napi, unsigned int ms);
struct net_device *pagefill_napi_dev(const struct napi_struct *napi);
void pagefill_napi_gro_receive(struct napi_struct *napi, struct sk_buff *skb);
bool pagefill_napi_schedule(struct napi_struct *napi);
void pagefill_netif_napi_set_irq(struct napi_struct *napi, int irq);

#endif /* _PAGEFILL_HELPERS_NAPI_H */
