// SPDX-License-Identifier: GPL-2.0
/*
 * XDP programs of xdp.sh, one per section. Each acts on the IPv4 UDP
 * frames to port 9001 only and passes every other frame:
 *   xdp_drop      drops them;
 *   xdp_aborted   aborts on them (XDP_ABORTED);
 *   xdp_tx        sends them back (XDP_TX);
 *   xdp_pass      passes them;
 *   xdp_mix       drops them, redirects those to port 9002 to the device
 *                 of ifindex PEER_IFINDEX (given when built) addressed
 *                 to group 4095, which no NIC of the test joins, and
 *                 passes the rest;
 *   xdp.frags     takes frames in several buffers (multi-buffer XDP):
 *                 sends those to port 9001 back, redirects those to port
 *                 9002 as xdp_mix does and passes the rest;
 *   xdp_room      claims 192 bytes of headroom (of XDP_PACKET_HEADROOM's
 *                 256, the core keeps room for a struct xdp_frame) and 256
 *                 bytes of tailroom, gives both back and passes the frame:
 *                 a driver without that room gets its frames aborted.
 *   xdp_bench_drop, xdp_bench_tx
 *                 (for scripts/bench/guest.sh) drop or send back the
 *                 generator's frames to port 9000 but the one of sequence
 *                 number LAST_SEQ (given when built), which they pass, and
 *                 pass every other frame.
 * Built by the test with the guest's clang; no libbpf headers needed.
 */
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/in.h>
#include <linux/ip.h>
#include <linux/udp.h>

#define SEC(name) __attribute__((section(name), used))

static long (*xdp_adjust_head)(struct xdp_md *ctx, int delta) =
	(void *)BPF_FUNC_xdp_adjust_head;
static long (*redirect)(__u32 ifindex, __u64 flags) =
	(void *)BPF_FUNC_redirect;
static long (*xdp_adjust_tail)(struct xdp_md *ctx, int delta) =
	(void *)BPF_FUNC_xdp_adjust_tail;

/* The UDP destination port of an IPv4 UDP frame (host order), else 0. */
static __attribute__((always_inline)) int udp_dport(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *end = (void *)(long)ctx->data_end;
	struct ethhdr *eth = data;
	struct iphdr *ip = data + sizeof(*eth);
	struct udphdr *udp = data + sizeof(*eth) + sizeof(*ip);

	if ((void *)(udp + 1) > end)
		return 0;
	if (eth->h_proto != __builtin_bswap16(ETH_P_IP) || ip->ihl != 5 ||
	    ip->protocol != IPPROTO_UDP)
		return 0;
	return __builtin_bswap16(udp->dest);
}

/* Whether the frame is IPv4 UDP to port 9001. */
static __attribute__((always_inline)) int to_9001(struct xdp_md *ctx)
{
	return udp_dport(ctx) == 9001;
}

SEC("xdp_drop") int prog_drop(struct xdp_md *ctx)
{
	return to_9001(ctx) ? XDP_DROP : XDP_PASS;
}

SEC("xdp_aborted") int prog_aborted(struct xdp_md *ctx)
{
	return to_9001(ctx) ? XDP_ABORTED : XDP_PASS;
}

SEC("xdp_tx") int prog_tx(struct xdp_md *ctx)
{
	return to_9001(ctx) ? XDP_TX : XDP_PASS;
}

SEC("xdp_pass") int prog_pass(struct xdp_md *ctx)
{
	return XDP_PASS;
}

#ifndef PEER_IFINDEX
#define PEER_IFINDEX 0
#endif

/* Redirects the frame at @eth, whose headers udp_dport() found (@eth was
 * read before, so the verifier knows them in bounds), to the device of
 * ifindex PEER_IFINDEX, addressed to pagefill's group 4095; the address is
 * stored byte by byte, as the loader takes no data section.
 */
static __attribute__((always_inline)) int to_peer(struct ethhdr *eth)
{
	eth->h_dest[0] = 0x01;
	eth->h_dest[1] = 0x50;
	eth->h_dest[2] = 0x46;
	eth->h_dest[3] = 0x4c;
	eth->h_dest[4] = 0x0f;
	eth->h_dest[5] = 0xff;
	return redirect(PEER_IFINDEX, 0);
}

SEC("xdp_mix") int prog_mix(struct xdp_md *ctx)
{
	struct ethhdr *eth = (void *)(long)ctx->data;
	int port = udp_dport(ctx);

	if (port == 9001)
		return XDP_DROP;
	return port == 9002 ? to_peer(eth) : XDP_PASS;
}

/* Takes frames in several buffers (the loader sets BPF_F_XDP_HAS_FRAGS for
 * this section); the headers it reads are in the first.
 */
SEC("xdp.frags") int prog_frags(struct xdp_md *ctx)
{
	struct ethhdr *eth = (void *)(long)ctx->data;
	int port = udp_dport(ctx);

	if (port == 9001)
		return XDP_TX;
	return port == 9002 ? to_peer(eth) : XDP_PASS;
}

SEC("xdp_room") int prog_room(struct xdp_md *ctx)
{
	if (xdp_adjust_head(ctx, -192) || xdp_adjust_head(ctx, 192))
		return XDP_ABORTED;
	if (xdp_adjust_tail(ctx, 256) || xdp_adjust_tail(ctx, -256))
		return XDP_ABORTED;
	return XDP_PASS;
}

#ifndef LAST_SEQ
#define LAST_SEQ 0
#endif

/* Whether the frame is one of the generator's to port 9000 other than the
 * one of sequence number LAST_SEQ (payload: "PFGN", group u16, node u8, 0,
 * sequence number u64 little endian).
 */
static __attribute__((always_inline)) int bench_frame(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *end = (void *)(long)ctx->data_end;
	unsigned char *payload = data + sizeof(struct ethhdr) +
		sizeof(struct iphdr) + sizeof(struct udphdr);
	__u64 seq;

	if (udp_dport(ctx) != 9000 || (void *)(payload + 16) > end)
		return 0;
	__builtin_memcpy(&seq, payload + 8, sizeof(seq));
	return seq != LAST_SEQ;
}

SEC("xdp_bench_drop") int prog_bench_drop(struct xdp_md *ctx)
{
	return bench_frame(ctx) ? XDP_DROP : XDP_PASS;
}

SEC("xdp_bench_tx") int prog_bench_tx(struct xdp_md *ctx)
{
	return bench_frame(ctx) ? XDP_TX : XDP_PASS;
}

char _license[] SEC("license") = "GPL";
