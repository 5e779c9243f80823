/* SPDX-License-Identifier: GPL-2.0 */
/* Dynamic interrupt moderation (lib/dim) of a receive queue. */
#ifndef _PAGEFILL_HELPERS_DIM_H
#define _PAGEFILL_HELPERS_DIM_H

#include <linux/types.h>

struct dim;

/*
 * A new moderation state, counting from the start (the coalescing timer
 * measured from a completion: net_dim's CQE profiles), at the default
 * profile; NULL without memory. Process context.
 */
struct dim *pagefill_dim_new(void);
/* Frees @dim, after any work net_dim() scheduled has run. Process context. */
void pagefill_dim_free(struct dim *dim);
/*
 * Gives net_dim() the queue's counts: @events interrupts, @packets and
 * @bytes received, each counted from any start and wrapping. True if it
 * chose another profile, whose coalescing time goes to *@usecs: the caller
 * applies it, and the next samples measure it. One caller at a time.
 */
bool pagefill_dim_sample(struct dim *dim, u16 events, u64 packets, u64 bytes,
			 u32 *usecs);
/* The coalescing time of @dim's present profile, in microseconds. */
u32 pagefill_dim_usecs(const struct dim *dim);

#endif /* _PAGEFILL_HELPERS_DIM_H */
