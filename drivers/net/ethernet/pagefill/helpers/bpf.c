// SPDX-License-Identifier: GPL-2.0
/* BPF: the ndo_bpf command and its program. */

#include <linux/bpf.h>
#include <linux/netdevice.h>
#include <pagefill/helpers/bpf.h>

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
