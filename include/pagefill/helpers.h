/* SPDX-License-Identifier: GPL-2.0 */
/*
 * C helpers of the pagefill driver: out-of-line wrappers for the static
 * inline kernel functions its Rust code needs. bindgen cannot bind a static
 * inline function, and kernel::bindings only carries the helpers of the
 * subsystems that have Rust abstractions upstream; networking has none yet.
 *
 * Each helper does nothing but call the inline it is named after.
 */
#ifndef _PAGEFILL_HELPERS_H
#define _PAGEFILL_HELPERS_H

#include <linux/types.h>

#include <linux/netdevice.h>
#include <linux/skbuff.h>
#include <uapi/linux/bpf.h>
#include <linux/timer.h>

struct net_device;
struct napi_struct;

/*
 * A NAPI instance of the driver: the napi_struct first (the Rust side
 * finds its instance from it), then the timer that polls it again after a
 * page allocation failed.
 */
struct pagefill_napi {
	struct napi_struct napi;
	struct timer_list retry;
};

struct sk_buff;
struct page_pool;
struct page;
struct device;
struct net_device_ops;
struct ethtool_ops;
struct ethtool_pause_stats;
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

/* What a received frame's flow hash covers: the XDP_RSS_* bits of
 * enum xdp_rss_hash_type; 0 for no hash.
 */
enum pagefill_rss {
	PAGEFILL_RSS_L3_IPV4 = 1 << 0,
	PAGEFILL_RSS_L3_IPV6 = 1 << 1,
	PAGEFILL_RSS_L4 = 1 << 3,
	PAGEFILL_RSS_L4_TCP = 1 << 4,
	PAGEFILL_RSS_L4_UDP = 1 << 5,
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
/* Sets or clears bus mastering of @dev's parent, if it is a PCI device. */
void pagefill_set_bus_master(struct net_device *dev, bool on);
void pagefill_local_bh_disable(void);
void pagefill_local_bh_enable(void);
void pagefill_netif_tx_wake_all_queues(struct net_device *dev);
void pagefill_netif_tx_disable(struct net_device *dev);
void pagefill_dev_kfree_skb_any(struct sk_buff *skb);
/*
 * Gives up @skb for good (a device that may still read it did not come back
 * from its reset): kmemleak is told it is no leak, and scans it, so its head
 * and socket are not reported either.
 */
void pagefill_skb_abandon(struct sk_buff *skb);
void pagefill_netdev_setup(struct net_device *dev, struct device *parent,
			   const struct net_device_ops *ops,
			   const struct ethtool_ops *eops,
			   const struct netdev_stat_ops *sops, u32 features,
			   u32 features_off, const u8 *mac,
			   unsigned int mtu, unsigned int min_mtu,
			   unsigned int max_mtu, u32 xdp_features,
			   u32 xsk_max_segs);
/* The pause frames of ethtool_pause_stats, set by name (a struct_group). */
void pagefill_pause_stats_set(struct ethtool_pause_stats *stats, u64 tx, u64 rx);
unsigned int pagefill_netdev_mtu(const struct net_device *dev);
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
struct page_pool *pagefill_page_pool_create(struct net_device *dev,
					    struct napi_struct *napi,
					    unsigned int pool_size,
					    unsigned int order);
void pagefill_page_pool_put_full_page(struct page_pool *pool,
				      struct page *page);
void pagefill_page_pool_dma_sync_for_cpu(const struct page_pool *pool,
					 struct page *page, u32 len);
void *pagefill_page_address(const struct page *page);
int pagefill_skb_tailroom(const struct sk_buff *skb);
void pagefill_skb_eth_type_trans(struct sk_buff *skb, struct net_device *dev);
void pagefill_skb_csum_unnecessary(struct sk_buff *skb);
/* The frame's flow hash; @rss_type as enum pagefill_rss, not 0. */
void pagefill_skb_set_hash(struct sk_buff *skb, u32 hash, u32 rss_type);
/*
 * Makes @skb, a UDP datagram whose header starts @udp_offset bytes into its
 * data, one that the stack splits into @segs datagrams of @gso_size payload
 * bytes (the last may be shorter), its UDP checksum to complete from the
 * pseudo-header sum in the header (CHECKSUM_PARTIAL).
 */
int pagefill_skb_udp_gso(struct sk_buff *skb, u16 udp_offset, u16 gso_size,
			 u16 segs);
/* The pagefill_features of @dev's active features (dev->features). */
u32 pagefill_netdev_features(const struct net_device *dev);
/* The pagefill_features of @features. */
u32 pagefill_features_of(netdev_features_t features);
/* Whether an XDP program (generic XDP) is attached to @dev. */
bool pagefill_netdev_has_xdp(const struct net_device *dev);
void pagefill_napi_gro_receive(struct napi_struct *napi, struct sk_buff *skb);
int pagefill_skb_linearize(struct sk_buff *skb);
int pagefill_tx_map(struct net_device *dev, struct sk_buff *skb,
		    dma_addr_t *dma);
void pagefill_tx_unmap(struct net_device *dev, dma_addr_t dma,
		       unsigned int len);
unsigned int pagefill_skb_nr_frags(const struct sk_buff *skb);
int pagefill_tx_map_frag(struct net_device *dev, struct sk_buff *skb,
			 unsigned int i, dma_addr_t *dma, unsigned int *len);
void pagefill_tx_unmap_frag(struct net_device *dev, dma_addr_t dma,
			    unsigned int len);
bool pagefill_skb_csum_partial(const struct sk_buff *skb, u32 *start,
			       u32 *offset);
int pagefill_skb_checksum_help(struct sk_buff *skb);
void pagefill_tx_sent(struct net_device *dev, unsigned int q,
		      unsigned int bytes);
void pagefill_tx_completed(struct net_device *dev, unsigned int q,
			   unsigned int pkts, unsigned int bytes);
void pagefill_tx_reset(struct net_device *dev, unsigned int q);
void pagefill_tx_stop(struct net_device *dev, unsigned int q);
void pagefill_tx_wake(struct net_device *dev, unsigned int q);
bool pagefill_tx_stopped(struct net_device *dev, unsigned int q);
u16 pagefill_skb_queue_mapping(const struct sk_buff *skb);
bool pagefill_xmit_more(void);
void pagefill_skb_put_data(struct sk_buff *skb, const void *data,
			   unsigned int len);
void pagefill_netdev_set_mtu(struct net_device *dev, unsigned int mtu);
bool pagefill_napi_schedule(struct napi_struct *napi);
struct page *pagefill_page_pool_dev_alloc_pages(struct page_pool *pool);
dma_addr_t pagefill_page_pool_get_dma_addr(const struct page *page);

int pagefill_skb_add_pool_frag(struct sk_buff *skb, struct page *page,
			       unsigned int off, unsigned int size,
			       unsigned int truesize);
void pagefill_netif_napi_set_irq(struct napi_struct *napi, int irq);
const u8 *pagefill_skb_head(const struct sk_buff *skb, unsigned int *len);
/* Called with each multicast address of a device. */
typedef void (*pagefill_mc_addr_fn)(void *ctx, const u8 *addr);
void pagefill_netdev_walk_mc_addrs(struct net_device *dev,
				   pagefill_mc_addr_fn cb, void *ctx);

/* XDP (net/xdp.rs). */
struct bpf_prog;
struct netdev_bpf;
struct netlink_ext_ack;
struct xdp_rxq_info;
/* The command of an ndo_bpf call, and for XDP_SETUP_PROG its program. */
enum pagefill_bpf_command {
	PAGEFILL_BPF_SETUP_PROG,
	PAGEFILL_BPF_SETUP_XSK_POOL,
	PAGEFILL_BPF_OTHER,
};

enum pagefill_bpf_command pagefill_netdev_bpf_command(const struct netdev_bpf *bpf);
struct bpf_prog *pagefill_netdev_bpf_prog(const struct netdev_bpf *bpf);
struct netlink_ext_ack *pagefill_netdev_bpf_extack(const struct netdev_bpf *bpf);
/* XDP_SETUP_XSK_POOL: the pool (NULL to unbind) and its queue. */
struct xsk_buff_pool;
struct xsk_buff_pool *pagefill_netdev_bpf_xsk_pool(const struct netdev_bpf *bpf);
u16 pagefill_netdev_bpf_xsk_queue(const struct netdev_bpf *bpf);
bool pagefill_bpf_prog_has_frags(const struct bpf_prog *prog);
void pagefill_bpf_prog_put(struct bpf_prog *prog);
void pagefill_extack_set_msg(struct netlink_ext_ack *extack, const char *msg);
/*
 * A receive queue's xdp_rxq_info, allocated and registered for queue @queue
 * of @dev with @pool's memory model; ERR_PTR on failure. Freed (after its
 * unregistration) by pagefill_xdp_rxq_free().
 */
struct xdp_rxq_info *pagefill_xdp_rxq_new(struct net_device *dev,
					  unsigned int queue,
					  struct napi_struct *napi,
					  struct page_pool *pool,
					  u32 frag_size);
void pagefill_xdp_rxq_free(struct xdp_rxq_info *rxq);
/*
 * The frame pagefill_xdp_run() runs a program on: @len bytes at @off in
 * the first buffer, followed by @nr_frags (at most PAGEFILL_XDP_MAX_FRAGS)
 * more buffers of the same pool, @frags, holding @frag_lens bytes each
 * from their start (a multi-buffer frame: they go in the skb_shared_info
 * at the buffer's end). @hash and @rss_type (enum pagefill_rss, 0 for
 * none) are the frame's flow hash, for the program's
 * bpf_xdp_metadata_rx_hash(). On return @off, @len and @nr_frags say
 * where the frame is (the core gave back the fragments the program
 * dropped), and @redirect_err how a redirect went.
 */
struct pagefill_xdp_run_frame {
	struct page *const *frags;
	const u32 *frag_lens;
	u32 off;
	u32 len;
	u32 nr_frags;
	u32 hash;
	u32 rss_type;
	int redirect_err;
};

/*
 * Copies the frame's first part, @f->len bytes at @src, to @f->off in
 * @page's @frame_sz-byte buffer, runs @prog on the frame @f describes
 * there and returns its action. For XDP_REDIRECT it also redirects the frame
 * (xdp_do_redirect()): on success (@f->redirect_err 0) the buffer belongs
 * to the redirect's target. In a NAPI poll, which then calls
 * pagefill_xdp_do_flush() before it ends.
 */
u32 pagefill_xdp_run(struct bpf_prog *prog, struct xdp_rxq_info *rxq,
		     struct page *page, u32 frame_sz, const void *src,
		     struct pagefill_xdp_run_frame *f);
/*
 * Fragment @i of the frame in @page's @frame_sz-byte buffer after
 * pagefill_xdp_run(): its page, and its offset and length there; NULL if
 * there is no such fragment.
 */
struct page *pagefill_xdp_frag(struct page *page, u32 frame_sz, u32 i,
			       u32 *off, u32 *len);
void pagefill_xdp_do_flush(void);
/* A frame redirected to the device (ndo_xdp_xmit). */
struct xdp_frame;
bool pagefill_xdp_frame_has_frags(const struct xdp_frame *frame);
u32 pagefill_xdp_frame_len(const struct xdp_frame *frame);
const void *pagefill_xdp_frame_data(const struct xdp_frame *frame);
/* @frame's length, its first buffer and its fragments. */
u32 pagefill_xdp_get_frame_len(const struct xdp_frame *frame);
/* Fragments of @frame beyond its first buffer (multi-buffer XDP). */
u32 pagefill_xdp_frame_nr_frags(const struct xdp_frame *frame);
/*
 * Maps fragment @i of @frame for the parent device of @dev to read; its
 * length in *@len. pagefill_tx_unmap_frag() unmaps.
 */
int pagefill_xdp_frame_frag_map(struct net_device *dev,
				const struct xdp_frame *frame, u32 i,
				dma_addr_t *dma, u32 *len);
/*
 * Maps @frame's first buffer for the parent device of @dev to read;
 * pagefill_tx_unmap() unmaps.
 */
int pagefill_xdp_frame_map(struct net_device *dev, struct xdp_frame *frame,
			   dma_addr_t *dma);
void pagefill_xdp_return_frame(struct xdp_frame *frame);
/* The xdp_features bits the driver may advertise. */
enum pagefill_xdp_features {
	PAGEFILL_XDP_ACT_BASIC = NETDEV_XDP_ACT_BASIC,
	PAGEFILL_XDP_ACT_REDIRECT = NETDEV_XDP_ACT_REDIRECT,
	PAGEFILL_XDP_ACT_NDO_XMIT = NETDEV_XDP_ACT_NDO_XMIT,
	PAGEFILL_XDP_ACT_RX_SG = NETDEV_XDP_ACT_RX_SG,
	PAGEFILL_XDP_ACT_NDO_XMIT_SG = NETDEV_XDP_ACT_NDO_XMIT_SG,
	PAGEFILL_XDP_ACT_XSK_ZEROCOPY = NETDEV_XDP_ACT_XSK_ZEROCOPY,
};

/* The flags of an ndo_xdp_xmit call (net/xdp.h's, checked there). */
enum pagefill_xdp_xmit_flags {
	PAGEFILL_XDP_XMIT_FLUSH = 1U << 0,
};

/* The headroom and tailroom an xdp_buff must have. */
enum pagefill_xdp_room {
	PAGEFILL_XDP_HEADROOM = XDP_PACKET_HEADROOM,
	PAGEFILL_XDP_TAILROOM = SKB_DATA_ALIGN(sizeof(struct skb_shared_info)),
	/*
	 * Most buffers after the first that a received frame is run in: a
	 * frame sent back takes one transmit descriptor each, and the driver
	 * maps a frame in at most five parts (TX_MAX_PARTS).
	 */
	PAGEFILL_XDP_MAX_FRAGS = 4,
};

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
/* AF_XDP zero-copy: an XSK buffer pool bound to a queue, its buffers. */
/* Maps @pool for the device behind @dev (its parent). */
int pagefill_xsk_pool_dma_map(struct xsk_buff_pool *pool, struct net_device *dev);
void pagefill_xsk_pool_dma_unmap(struct xsk_buff_pool *pool);
u32 pagefill_xsk_pool_get_rx_frame_size(struct xsk_buff_pool *pool);
bool pagefill_xsk_pool_unaligned(const struct xsk_buff_pool *pool);
/* Whether @pool's sockets take frames in several buffers (XDP_USE_SG). */
bool pagefill_xsk_pool_frags(const struct xsk_buff_pool *pool);
u32 pagefill_xsk_buff_alloc_batch(struct xsk_buff_pool *pool,
				  struct xdp_buff **xdp, u32 max);
void pagefill_xsk_buff_free(struct xdp_buff *xdp);
dma_addr_t pagefill_xsk_buff_xdp_get_dma(struct xdp_buff *xdp);
void pagefill_xsk_set_rx_need_wakeup(struct xsk_buff_pool *pool, bool on);
/*
 * Takes up to @max frames from the TX ring of @pool's socket (released:
 * each is reported done, in order, by xsk_tx_completed()); returns how
 * many. pagefill_xsk_tx_desc() reads frame @i of them: its DMA address
 * (synced for the device), its length and its first ETH_ALEN bytes (0s
 * past the frame).
 */
u32 pagefill_xsk_tx_take(struct xsk_buff_pool *pool, u32 max);
void pagefill_xsk_tx_desc(struct xsk_buff_pool *pool, u32 i, dma_addr_t *dma,
			  u32 *len, u8 *dst, bool *more);
void pagefill_xsk_tx_completed(struct xsk_buff_pool *pool, u32 n);
void pagefill_xsk_set_tx_need_wakeup(struct xsk_buff_pool *pool);
/*
 * An xdp_rxq_info for queue @queue of @dev whose frames are @pool's
 * buffers (MEM_TYPE_XSK_BUFF_POOL), given to the pool for its buffers;
 * ERR_PTR on failure. Freed by pagefill_xdp_rxq_free().
 */
struct xdp_rxq_info *pagefill_xsk_rxq_new(struct net_device *dev,
					  unsigned int queue,
					  struct napi_struct *napi,
					  struct xsk_buff_pool *pool);

/* What became of a frame pagefill_xsk_run() ran a program on. */
enum pagefill_xsk_verdict {
	PAGEFILL_XSK_REDIRECT,
	PAGEFILL_XSK_PASS,
	PAGEFILL_XSK_TX,
	PAGEFILL_XSK_DROP,
	PAGEFILL_XSK_ABORTED,
	/* a redirect or transmit that failed, or no skb for a pass */
	PAGEFILL_XSK_ERROR,
};

/*
 * Makes the XSK buffer @xdp hold the @len bytes the device wrote, synced
 * for the CPU.
 */
void pagefill_xsk_set_len(struct xdp_buff *xdp, u32 len);
/*
 * Adds the XSK buffer @frag, which holds @len bytes the device wrote, to
 * the frame @head (set up by pagefill_xsk_set_len()) as its next fragment;
 * false if the frame has as many as it can take (@frag is still the
 * caller's then). Freeing @head frees its fragments.
 */
bool pagefill_xsk_add_frag(struct xdp_buff *head, struct xdp_buff *frag, u32 len);
/*
 * Runs @prog (NULL: none, as XDP_PASS) on the frame in the XSK buffer @xdp
 * (and its fragments), set up by pagefill_xsk_set_len(), with flow hash
 * @hash of @rss_type (enum pagefill_rss, 0 for none) for
 * bpf_xdp_metadata_rx_hash(), and carries out the verdict: the buffer is
 * redirected, copied into *@skb (for XDP_PASS), sent back through the
 * device's ndo_xdp_xmit (XDP_TX, a frame in one buffer only), or given
 * back to its pool; it is the caller's no more in any case.
 */
enum pagefill_xsk_verdict pagefill_xsk_run(struct bpf_prog *prog,
					   struct xdp_buff *xdp, u32 hash,
					   u32 rss_type, struct sk_buff **skb);

/* trace_xdp_exception(), after bpf_warn_invalid_xdp_action() if @invalid. */
void pagefill_xdp_exception(struct net_device *dev, const struct bpf_prog *prog,
			    u32 act, bool invalid);

#endif /* _PAGEFILL_HELPERS_H */
