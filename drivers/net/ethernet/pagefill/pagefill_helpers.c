// SPDX-License-Identifier: GPL-2.0
/*
 * Out-of-line wrappers for static inline kernel functions that the pagefill
 * Rust code calls. See include/pagefill/helpers.h.
 */

#include <linux/bottom_half.h>
#include <linux/etherdevice.h>
#include <linux/ethtool.h>
#include <linux/kmemleak.h>
#include <linux/netdevice.h>
#include <linux/pci.h>
#include <linux/rtnetlink.h>
#include <linux/skbuff.h>
#include <linux/udp.h>
#include <net/page_pool/helpers.h>
#include <net/xdp.h>
#include <net/xdp_sock_drv.h>
#include <linux/filter.h>
#include <trace/events/xdp.h>
#include <pagefill/helpers.h>

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

void pagefill_set_bus_master(struct net_device *dev, bool on)
{
	struct device *parent = dev->dev.parent;

	if (!parent || !dev_is_pci(parent))
		return;
	if (on)
		pci_set_master(to_pci_dev(parent));
	else
		pci_clear_master(to_pci_dev(parent));
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

void pagefill_dev_kfree_skb_any(struct sk_buff *skb)
{
	dev_kfree_skb_any(skb);
}

void pagefill_skb_abandon(struct sk_buff *skb)
{
	const void *object = skb;

	/* kmemleak knows objects by their start: the clone of a fast clone
	 * sits inside its pair's object.
	 */
	if (skb->fclone == SKB_FCLONE_CLONE)
		object = container_of(skb, struct sk_buff_fclones, skb2);
	kmemleak_not_leak(object);
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

static_assert((u32)PAGEFILL_RSS_L3_IPV4 == (u32)XDP_RSS_L3_IPV4);
static_assert((u32)PAGEFILL_RSS_L3_IPV6 == (u32)XDP_RSS_L3_IPV6);
static_assert((u32)PAGEFILL_RSS_L4 == (u32)XDP_RSS_L4);
static_assert((u32)PAGEFILL_RSS_L4_TCP == (u32)XDP_RSS_L4_TCP);
static_assert((u32)PAGEFILL_RSS_L4_UDP == (u32)XDP_RSS_L4_UDP);

/* The xdp_buff a frame's program runs on, with what the device said of the
 * frame, for the metadata kfuncs: they get the xdp_buff as their context.
 */
struct pagefill_xdp_buff {
	struct xdp_buff xdp;
	u32 hash;
	/* enum xdp_rss_hash_type; 0: the frame has no hash. */
	u32 rss_type;
};

static int pagefill_xdp_rx_hash(const struct xdp_md *ctx, u32 *hash,
				enum xdp_rss_hash_type *rss_type)
{
	/* Only a program bound to this device calls this, and only from
	 * pagefill_xdp_run(), whose xdp_buff is a pagefill_xdp_buff: the core
	 * refuses a device-bound program in generic XDP, on another device,
	 * in BPF_PROG_TEST_RUN and in devmap, cpumap or tail-call maps.
	 */
	const struct pagefill_xdp_buff *buf = (const void *)ctx;

	if (!buf->rss_type)
		return -ENODATA;
	*hash = buf->hash;
	*rss_type = buf->rss_type;
	return 0;
}

static const struct xdp_metadata_ops pagefill_xdp_metadata_ops = {
	.xmo_rx_hash = pagefill_xdp_rx_hash,
};

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

void pagefill_pause_stats_set(struct ethtool_pause_stats *stats, u64 tx, u64 rx)
{
	stats->tx_pause_frames = tx;
	stats->rx_pause_frames = rx;
}

unsigned int pagefill_netdev_mtu(const struct net_device *dev)
{
	return READ_ONCE(dev->mtu);
}

void pagefill_netdev_set_mtu(struct net_device *dev, unsigned int mtu)
{
	WRITE_ONCE(dev->mtu, mtu);
}

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

void *pagefill_page_address(const struct page *page)
{
	return page_address(page);
}

int pagefill_skb_tailroom(const struct sk_buff *skb)
{
	return skb_tailroom(skb);
}

void pagefill_skb_eth_type_trans(struct sk_buff *skb, struct net_device *dev)
{
	skb->protocol = eth_type_trans(skb, dev);
}

void pagefill_skb_set_hash(struct sk_buff *skb, u32 hash, u32 rss_type)
{
	skb_set_hash(skb, hash, rss_type & XDP_RSS_L4 ?
		     PKT_HASH_TYPE_L4 : PKT_HASH_TYPE_L3);
}

void pagefill_skb_csum_unnecessary(struct sk_buff *skb)
{
	skb->ip_summed = CHECKSUM_UNNECESSARY;
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

int pagefill_skb_udp_gso(struct sk_buff *skb, u16 udp_offset, u16 gso_size,
			 u16 segs)
{
	if (!skb_partial_csum_set(skb, udp_offset,
				  offsetof(struct udphdr, check)))
		return -EINVAL;
	skb_shinfo(skb)->gso_size = gso_size;
	skb_shinfo(skb)->gso_type = SKB_GSO_UDP_L4;
	skb_shinfo(skb)->gso_segs = segs;
	return 0;
}

void pagefill_napi_gro_receive(struct napi_struct *napi, struct sk_buff *skb)
{
	napi_gro_receive(napi, skb);
}

int pagefill_skb_linearize(struct sk_buff *skb)
{
	return skb_linearize(skb);
}

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

unsigned int pagefill_skb_nr_frags(const struct sk_buff *skb)
{
	return skb_shinfo(skb)->nr_frags;
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

/*
 * Whether the stack left the checksum to the device (CHECKSUM_PARTIAL), and
 * if so where it starts in the frame and where, from there, it goes.
 */
bool pagefill_skb_csum_partial(const struct sk_buff *skb, u32 *start,
			       u32 *offset)
{
	if (skb->ip_summed != CHECKSUM_PARTIAL)
		return false;
	*start = skb_checksum_start_offset(skb);
	*offset = skb->csum_offset;
	return true;
}

int pagefill_skb_checksum_help(struct sk_buff *skb)
{
	return skb_checksum_help(skb);
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

u16 pagefill_skb_queue_mapping(const struct sk_buff *skb)
{
	return skb_get_queue_mapping(skb);
}

bool pagefill_xmit_more(void)
{
	return netdev_xmit_more();
}

void pagefill_skb_put_data(struct sk_buff *skb, const void *data,
			   unsigned int len)
{
	skb_put_data(skb, data, len);
}

void pagefill_local_bh_disable(void)
{
	local_bh_disable();
}

void pagefill_local_bh_enable(void)
{
	local_bh_enable();
}

bool pagefill_napi_schedule(struct napi_struct *napi)
{
	return napi_schedule(napi);
}

struct page *pagefill_page_pool_dev_alloc_pages(struct page_pool *pool)
{
	return page_pool_dev_alloc_pages(pool);
}

dma_addr_t pagefill_page_pool_get_dma_addr(const struct page *page)
{
	return page_pool_get_dma_addr(page);
}

/*
 * Attaches @size bytes at @off of pool page @page to @skb as its next
 * fragment. The skb takes a pool reference of its own, so the page returns
 * to the pool only when the driver and every skb holding a piece of it have
 * let go.
 */
int pagefill_skb_add_pool_frag(struct sk_buff *skb, struct page *page,
			       unsigned int off, unsigned int size,
			       unsigned int truesize)
{
	int i = skb_shinfo(skb)->nr_frags;

	if (i >= MAX_SKB_FRAGS)
		return -EMSGSIZE;
	page_pool_ref_page(page);
	skb_add_rx_frag(skb, i, page, off, size, truesize);
	skb_mark_for_recycle(skb);
	return 0;
}

void pagefill_netif_napi_set_irq(struct napi_struct *napi, int irq)
{
	netif_napi_set_irq(napi, irq);
}

const u8 *pagefill_skb_head(const struct sk_buff *skb, unsigned int *len)
{
	*len = skb_headlen(skb);
	return skb->data;
}

/* Calls @cb with each multicast address of @dev; under the address lock. */
void pagefill_netdev_walk_mc_addrs(struct net_device *dev,
				   pagefill_mc_addr_fn cb, void *ctx)
{
	struct netdev_hw_addr *ha;

	netdev_for_each_mc_addr(ha, dev)
		cb(ctx, ha->addr);
}

enum pagefill_bpf_command pagefill_netdev_bpf_command(const struct netdev_bpf *bpf)
{
	switch (bpf->command) {
	case XDP_SETUP_PROG:
		return PAGEFILL_BPF_SETUP_PROG;
	case XDP_SETUP_XSK_POOL:
		return PAGEFILL_BPF_SETUP_XSK_POOL;
	default:
		return PAGEFILL_BPF_OTHER;
	}
}

struct xsk_buff_pool *pagefill_netdev_bpf_xsk_pool(const struct netdev_bpf *bpf)
{
	return bpf->xsk.pool;
}

u16 pagefill_netdev_bpf_xsk_queue(const struct netdev_bpf *bpf)
{
	return bpf->xsk.queue_id;
}

struct bpf_prog *pagefill_netdev_bpf_prog(const struct netdev_bpf *bpf)
{
	return bpf->prog;
}

struct netlink_ext_ack *pagefill_netdev_bpf_extack(const struct netdev_bpf *bpf)
{
	return bpf->extack;
}

bool pagefill_bpf_prog_has_frags(const struct bpf_prog *prog)
{
	return prog->aux->xdp_has_frags;
}

void pagefill_bpf_prog_put(struct bpf_prog *prog)
{
	bpf_prog_put(prog);
}

/* NL_SET_ERR_MSG() with a message that is not a literal: @msg is static. */
void pagefill_extack_set_msg(struct netlink_ext_ack *extack, const char *msg)
{
	do_trace_netlink_extack(msg);
	if (extack)
		extack->_msg = msg;
}

/* An xdp_rxq_info registered for queue @queue of @dev with memory model
 * @type (@allocator its pool, if it has one); ERR_PTR on failure.
 */
static struct xdp_rxq_info *pagefill_rxq_new(struct net_device *dev,
					     unsigned int queue,
					     struct napi_struct *napi,
					     u32 frag_size,
					     enum xdp_mem_type type,
					     void *allocator)
{
	struct xdp_rxq_info *rxq = kzalloc(sizeof(*rxq), GFP_KERNEL);
	int err;

	if (!rxq)
		return ERR_PTR(-ENOMEM);
	err = __xdp_rxq_info_reg(rxq, dev, queue, READ_ONCE(napi->napi_id),
				 frag_size);
	if (err)
		goto free;
	err = xdp_rxq_info_reg_mem_model(rxq, type, allocator);
	if (err)
		goto unreg;
	return rxq;
unreg:
	xdp_rxq_info_unreg(rxq);
free:
	kfree(rxq);
	return ERR_PTR(err);
}

struct xdp_rxq_info *pagefill_xdp_rxq_new(struct net_device *dev,
					  unsigned int queue,
					  struct napi_struct *napi,
					  struct page_pool *pool,
					  u32 frag_size)
{
	/* Fragments are whole pool buffers: bpf_xdp_adjust_tail() may grow
	 * the last one up to the buffer's end.
	 */
	return pagefill_rxq_new(dev, queue, napi, frag_size,
				MEM_TYPE_PAGE_POOL, pool);
}

void pagefill_xdp_rxq_free(struct xdp_rxq_info *rxq)
{
	xdp_rxq_info_unreg(rxq);
	kfree(rxq);
}

u32 pagefill_xdp_run(struct bpf_prog *prog, struct xdp_rxq_info *rxq,
		     struct page *page, u32 frame_sz, const void *src,
		     struct pagefill_xdp_run_frame *f)
{
	unsigned char *hard_start = page_address(page);
	/* Not zeroed as a whole: xdp_init_buff() and xdp_prepare_buff() set
	 * every field the core reads, and a memset of the rest would cost
	 * each frame more than the program that drops it.
	 */
	struct pagefill_xdp_buff buf;
	struct xdp_buff *xdp = &buf.xdp;
	u32 act, i;

	memcpy(hard_start + f->off, src, f->len);
	buf.hash = f->hash;
	buf.rss_type = f->rss_type;
	xdp_init_buff(xdp, frame_sz, rxq);
	xdp_prepare_buff(xdp, hard_start, f->off, f->len, true);
	/* The caller passes at most PAGEFILL_XDP_MAX_FRAGS < MAX_SKB_FRAGS:
	 * each is added.
	 */
	for (i = 0; i < f->nr_frags && i < MAX_SKB_FRAGS; i++)
		xdp_buff_add_frag(xdp, page_to_netmem(f->frags[i]), 0,
				  f->frag_lens[i], frame_sz);
	act = bpf_prog_run_xdp(prog, xdp);
	f->off = (unsigned char *)xdp->data - hard_start;
	f->len = (unsigned char *)xdp->data_end - (unsigned char *)xdp->data;
	/* The program may have dropped fragments (bpf_xdp_adjust_tail(),
	 * bpf_xdp_pull_data()): the core gave those back to the pool.
	 */
	/* A program adds no fragment: a frame in one buffer stays in one. */
	if (f->nr_frags)
		f->nr_frags = xdp_buff_has_frags(xdp) ?
			xdp_get_shared_info_from_buff(xdp)->nr_frags : 0;
	/* The target the program chose lives in this CPU's redirect state,
	 * which the next program run overwrites: it is acted on now.
	 */
	f->redirect_err = act == XDP_REDIRECT ?
		xdp_do_redirect(rxq->dev, xdp, prog) : 0;
	return act;
}

static_assert(PAGEFILL_XDP_MAX_FRAGS < MAX_SKB_FRAGS);

struct page *pagefill_xdp_frag(struct page *page, u32 frame_sz, u32 i,
			       u32 *off, u32 *len)
{
	const struct skb_shared_info *sinfo =
		page_address(page) + frame_sz - PAGEFILL_XDP_TAILROOM;
	const skb_frag_t *frag;

	if (i >= sinfo->nr_frags || i >= MAX_SKB_FRAGS)
		return NULL;
	frag = &sinfo->frags[i];
	*off = skb_frag_off(frag);
	*len = skb_frag_size(frag);
	return skb_frag_page(frag);
}

static_assert(PAGEFILL_XDP_XMIT_FLUSH == XDP_XMIT_FLUSH);

void pagefill_xdp_do_flush(void)
{
	xdp_do_flush();
}

bool pagefill_xdp_frame_has_frags(const struct xdp_frame *frame)
{
	return xdp_frame_has_frags(frame);
}

u32 pagefill_xdp_frame_len(const struct xdp_frame *frame)
{
	return frame->len;
}

const void *pagefill_xdp_frame_data(const struct xdp_frame *frame)
{
	return frame->data;
}

u32 pagefill_xdp_get_frame_len(const struct xdp_frame *frame)
{
	return xdp_get_frame_len(frame);
}

u32 pagefill_xdp_frame_nr_frags(const struct xdp_frame *frame)
{
	return xdp_frame_has_frags(frame) ?
		xdp_get_shared_info_from_frame(frame)->nr_frags : 0;
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

void pagefill_xdp_return_frame(struct xdp_frame *frame)
{
	xdp_return_frame(frame);
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

void pagefill_xdp_exception(struct net_device *dev, const struct bpf_prog *prog,
			    u32 act, bool invalid)
{
	if (invalid)
		bpf_warn_invalid_xdp_action(dev, prog, act);
	trace_xdp_exception(dev, prog, act);
}

void pagefill_page_pool_dma_sync_for_device(const struct page_pool *pool,
					    struct page *page, u32 len)
{
	dma_sync_single_range_for_device(pool->p.dev, page_pool_get_dma_addr(page),
					 pool->p.offset, len, pool->p.dma_dir);
}

int pagefill_xsk_pool_dma_map(struct xsk_buff_pool *pool, struct net_device *dev)
{
	return xsk_pool_dma_map(pool, dev->dev.parent, 0);
}

void pagefill_xsk_pool_dma_unmap(struct xsk_buff_pool *pool)
{
	xsk_pool_dma_unmap(pool, 0);
}

u32 pagefill_xsk_pool_get_rx_frame_size(struct xsk_buff_pool *pool)
{
	return xsk_pool_get_rx_frame_size(pool);
}

bool pagefill_xsk_pool_unaligned(const struct xsk_buff_pool *pool)
{
	return pool->unaligned;
}

bool pagefill_xsk_pool_frags(const struct xsk_buff_pool *pool)
{
	return pool->umem->flags & XDP_UMEM_SG_FLAG;
}

u32 pagefill_xsk_buff_alloc_batch(struct xsk_buff_pool *pool,
				  struct xdp_buff **xdp, u32 max)
{
	return xsk_buff_alloc_batch(pool, xdp, max);
}

void pagefill_xsk_buff_free(struct xdp_buff *xdp)
{
	xsk_buff_free(xdp);
}

dma_addr_t pagefill_xsk_buff_xdp_get_dma(struct xdp_buff *xdp)
{
	return xsk_buff_xdp_get_dma(xdp);
}

void pagefill_xsk_set_rx_need_wakeup(struct xsk_buff_pool *pool, bool on)
{
	if (!xsk_uses_need_wakeup(pool))
		return;
	if (on)
		xsk_set_rx_need_wakeup(pool);
	else
		xsk_clear_rx_need_wakeup(pool);
}

/* Syncs @len bytes of @pool's umem at @dma, for the CPU or the device, a
 * page at a time: the core maps the umem page by page, and an unaligned
 * chunk may span two pages whose mappings only lie side by side (adjacent
 * swiotlb slots, two entries of the DMA-API debugging); one sync across
 * both would run past the first's end.
 */
static void pagefill_xsk_sync(struct xsk_buff_pool *pool, dma_addr_t dma,
			      u32 len, bool for_cpu)
{
	while (len) {
		u32 part = min_t(u32, len, PAGE_SIZE - offset_in_page(dma));

		if (for_cpu)
			dma_sync_single_for_cpu(pool->dev, dma, part, DMA_BIDIRECTIONAL);
		else
			xsk_buff_raw_dma_sync_for_device(pool, dma, part);
		dma += part;
		len -= part;
	}
}

u32 pagefill_xsk_tx_take(struct xsk_buff_pool *pool, u32 max)
{
	return xsk_tx_peek_release_desc_batch(pool, max);
}

void pagefill_xsk_tx_desc(struct xsk_buff_pool *pool, u32 i, dma_addr_t *dma,
			  u32 *len, u8 *dst, bool *more)
{
	const struct xdp_desc *desc = &pool->tx_descs[i];

	*more = xp_mb_desc(desc);

	*dma = xsk_buff_raw_get_dma(pool, desc->addr);
	*len = desc->len;
	pagefill_xsk_sync(pool, *dma, desc->len, false);
	memset(dst, 0, ETH_ALEN);
	memcpy(dst, xsk_buff_raw_get_data(pool, desc->addr), min_t(u32, desc->len, ETH_ALEN));
}

void pagefill_xsk_tx_completed(struct xsk_buff_pool *pool, u32 n)
{
	xsk_tx_completed(pool, n);
}

void pagefill_xsk_set_tx_need_wakeup(struct xsk_buff_pool *pool)
{
	if (xsk_uses_need_wakeup(pool))
		xsk_set_tx_need_wakeup(pool);
}

struct xdp_rxq_info *pagefill_xsk_rxq_new(struct net_device *dev,
					  unsigned int queue,
					  struct napi_struct *napi,
					  struct xsk_buff_pool *pool)
{
	struct xdp_rxq_info *rxq;

	rxq = pagefill_rxq_new(dev, queue, napi, xsk_pool_get_rx_frag_step(pool),
			       MEM_TYPE_XSK_BUFF_POOL, NULL);
	if (!IS_ERR(rxq))
		xsk_pool_set_rxq_info(pool, rxq);
	return rxq;
}

/* The metadata kfuncs read a frame's hash after its xdp_buff, where an
 * XSK buffer has its driver area: pagefill_xsk_run() writes it there.
 */
static_assert(offsetof(struct xdp_buff_xsk, cb) ==
	      offsetof(struct pagefill_xdp_buff, hash));
static_assert(sizeof(struct pagefill_xdp_buff) <=
	      offsetofend(struct xdp_buff_xsk, cb));

void pagefill_xsk_set_len(struct xdp_buff *xdp, u32 len)
{
	struct xdp_buff_xsk *xskb = container_of(xdp, struct xdp_buff_xsk, xdp);

	xsk_buff_set_size(xdp, len);
	/* What the device wrote: xsk_buff_dma_sync_for_cpu() would sync the
	 * whole buffer in one, across a page boundary.
	 */
	pagefill_xsk_sync(xskb->pool, xskb->dma, len, true);
}

bool pagefill_xsk_add_frag(struct xdp_buff *head, struct xdp_buff *frag, u32 len)
{
	pagefill_xsk_set_len(frag, len);
	return xsk_buff_add_frag(head, frag);
}

enum pagefill_xsk_verdict pagefill_xsk_run(struct bpf_prog *prog,
					   struct xdp_buff *xdp, u32 hash,
					   u32 rss_type, struct sk_buff **skb)
{
	struct pagefill_xdp_buff *buf = container_of(xdp, struct pagefill_xdp_buff, xdp);
	struct net_device *dev = xdp->rxq->dev;
	struct xdp_frame *frame;
	u32 act = XDP_PASS;

	buf->hash = hash;
	buf->rss_type = rss_type;
	if (prog)
		act = bpf_prog_run_xdp(prog, xdp);
	switch (act) {
	case XDP_REDIRECT:
		if (!xdp_do_redirect(dev, xdp, prog))
			return PAGEFILL_XSK_REDIRECT;
		trace_xdp_exception(dev, prog, act);
		xsk_buff_free(xdp);
		return PAGEFILL_XSK_ERROR;
	case XDP_PASS:
		*skb = xdp_build_skb_from_zc(xdp);
		if (*skb)
			return PAGEFILL_XSK_PASS;
		xsk_buff_free(xdp);
		return PAGEFILL_XSK_ERROR;
	case XDP_TX:
		/* A copy in a page of its own (the buffer goes back to the
		 * pool), sent as a frame redirected to the device would be;
		 * the copy would leave out a frame's fragments.
		 */
		frame = xdp_buff_has_frags(xdp) ? NULL : xdp_convert_buff_to_frame(xdp);
		if (frame && dev->netdev_ops->ndo_xdp_xmit(dev, 1, &frame,
							   XDP_XMIT_FLUSH) == 1)
			return PAGEFILL_XSK_TX;
		if (frame)
			xdp_return_frame(frame);
		else
			xsk_buff_free(xdp);
		trace_xdp_exception(dev, prog, act);
		return PAGEFILL_XSK_ERROR;
	case XDP_DROP:
		xsk_buff_free(xdp);
		return PAGEFILL_XSK_DROP;
	default:
		bpf_warn_invalid_xdp_action(dev, prog, act);
		fallthrough;
	case XDP_ABORTED:
		trace_xdp_exception(dev, prog, act);
		xsk_buff_free(xdp);
		return PAGEFILL_XSK_ABORTED;
	}
}
