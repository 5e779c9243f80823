/* SPDX-License-Identifier: GPL-2.0 */
/* BPF: the ndo_bpf command and its program. */
#ifndef _PAGEFILL_HELPERS_BPF_H
#define _PAGEFILL_HELPERS_BPF_H

#include <linux/types.h>

struct bpf_prog;
struct netdev_bpf;
struct netlink_ext_ack;
struct xsk_buff_pool;

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
struct xsk_buff_pool *pagefill_netdev_bpf_xsk_pool(const struct netdev_bpf *bpf);
u16 pagefill_netdev_bpf_xsk_queue(const struct netdev_bpf *bpf);
bool pagefill_bpf_prog_has_frags(const struct bpf_prog *prog);
void pagefill_bpf_prog_put(struct bpf_prog *prog);

#endif /* _PAGEFILL_HELPERS_BPF_H */
