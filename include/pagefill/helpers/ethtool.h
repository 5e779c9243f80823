/* SPDX-License-Identifier: GPL-2.0 */
/* ethtool: statistics in struct groups. */
#ifndef _PAGEFILL_HELPERS_ETHTOOL_H
#define _PAGEFILL_HELPERS_ETHTOOL_H

#include <linux/types.h>

struct ethtool_pause_stats;

/* The pause frames of ethtool_pause_stats, set by name (a struct_group). */
void pagefill_pause_stats_set(struct ethtool_pause_stats *stats, u64 tx, u64 rx);

#endif /* _PAGEFILL_HELPERS_ETHTOOL_H */
