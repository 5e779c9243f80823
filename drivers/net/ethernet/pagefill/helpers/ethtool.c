// SPDX-License-Identifier: GPL-2.0
/* ethtool: statistics in struct groups. */

#include <linux/ethtool.h>
#include <pagefill/helpers/ethtool.h>

void pagefill_pause_stats_set(struct ethtool_pause_stats *stats, u64 tx, u64 rx)
{
	stats->tx_pause_frames = tx;
	stats->rx_pause_frames = rx;
}
