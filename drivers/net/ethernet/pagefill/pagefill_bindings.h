/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Input to bindgen for the declarations the pagefill driver needs and
 * kernel::bindings lacks: the networking core, page_pool and the driver's
 * own C helpers. The allowlist is in this directory's Makefile.
 */
#include <linux/etherdevice.h>
#include <linux/netdevice.h>
#include <linux/rtnetlink.h>
#include <linux/skbuff.h>
#include <net/netdev_queues.h>
#include <linux/workqueue.h>
#include <net/page_pool/types.h>
#include <pagefill/helpers.h>

/*
 * Sizes of kernel structures the driver embeds. kernel::bindings declares
 * some of them opaque (zero-sized), so Rust storage for them is sized here.
 */
enum pagefill_sizes {
	PAGEFILL_NAPI_STRUCT_SIZE = sizeof(struct pagefill_napi),
	PAGEFILL_NAPI_STRUCT_ALIGN = __alignof__(struct pagefill_napi),
};
