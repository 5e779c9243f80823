/* SPDX-License-Identifier: GPL-2.0 */
/*
 * C helpers of the pagefill driver: out-of-line wrappers for the static
 * inline kernel functions its Rust code needs. bindgen cannot bind a static
 * inline function, and kernel::bindings only carries the helpers of the
 * subsystems that have Rust abstractions upstream; networking has none yet.
 *
 * Each helper does nothing but call the inline it is named after. They are
 * declared by subsystem in helpers/ and defined in the driver's helpers/,
 * one file per subsystem; this header, which bindgen reads, has them all.
 */
#ifndef _PAGEFILL_HELPERS_H
#define _PAGEFILL_HELPERS_H

#include <pagefill/helpers/bottom_half.h>
#include <pagefill/helpers/bpf.h>
#include <pagefill/helpers/dim.h>
#include <pagefill/helpers/dma.h>
#include <pagefill/helpers/ethtool.h>
#include <pagefill/helpers/napi.h>
#include <pagefill/helpers/netdev.h>
#include <pagefill/helpers/netlink.h>
#include <pagefill/helpers/page.h>
#include <pagefill/helpers/page_pool.h>
#include <pagefill/helpers/pci.h>
#include <pagefill/helpers/skb.h>
#include <pagefill/helpers/xdp.h>
#include <pagefill/helpers/xsk.h>

#endif /* _PAGEFILL_HELPERS_H */
