// SPDX-License-Identifier: GPL-2.0
/* NAPI: instances with their retry timer, scheduling, GRO, interrupt. */

#include <linux/jiffies.h>
#include <linux/netdevice.h>
#include <linux/timer.h>
#include <pagefill/helpers/napi.h>

bool pagefill_netdev_has_napi(const struct net_device *dev)
{
	return !list_empty(&dev->napi_list);
}

unsigned int pagefill_netdev_num_napi_configs(const struct net_device *dev)
{
	return dev->num_napi_configs;
}

static void pagefill_napi_retry(struct timer_list *t)
{
	struct pagefill_napi *pn = timer_container_of(pn, t, retry);

	napi_schedule(&pn->napi);
}

void pagefill_netif_napi_add(struct net_device *dev, struct napi_struct *napi,
			     int (*poll)(struct napi_struct *, int),
			     int index)
{
	struct pagefill_napi *pn = container_of(napi, struct pagefill_napi, napi);

	timer_setup(&pn->retry, pagefill_napi_retry, 0);
	/* Its ID and settings (threaded, ...) persist across restarts. */
	netif_napi_add_config(dev, napi, poll, index);
}

void pagefill_napi_retry_later(struct napi_struct *napi, unsigned int ms)
{
	struct pagefill_napi *pn = container_of(napi, struct pagefill_napi, napi);

	mod_timer(&pn->retry, jiffies + msecs_to_jiffies(ms));
}

void pagefill_netif_napi_del(struct napi_struct *napi)
{
	struct pagefill_napi *pn = container_of(napi, struct pagefill_napi, napi);

	/*
	 * The instance is disabled: no poll runs to re-arm the timer, and a
	 * timer that fires now finds the instance disabled.
	 */
	timer_shutdown_sync(&pn->retry);
	netif_napi_del(napi);
}

struct net_device *pagefill_napi_dev(const struct napi_struct *napi)
{
	return napi->dev;
}

void pagefill_napi_gro_receive(struct napi_struct *napi, struct sk_buff *skb)
{
	napi_gro_receive(napi, skb);
}

bool pagefill_napi_schedule(struct napi_struct *napi)
{
	return napi_schedule(napi);
}

void pagefill_netif_napi_set_irq(struct napi_struct *napi, int irq)
{
	netif_napi_set_irq(napi, irq);
}
