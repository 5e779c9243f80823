// SPDX-License-Identifier: GPL-2.0
/* Dynamic interrupt moderation (lib/dim) of a receive queue. */

#include <linux/dim.h>
#include <linux/slab.h>
#include <linux/workqueue.h>
#include <pagefill/helpers/dim.h>

/*
 * net_dim() schedules the work when it has chosen a profile. The queue's
 * poll, which called it, applies the profile and starts the next
 * measurement itself (pagefill_dim_sample()), so the state has one writer
 * and the work nothing left to do.
 */
static void pagefill_dim_work(struct work_struct *work)
{
}

struct dim *pagefill_dim_new(void)
{
	struct dim *dim = kzalloc(sizeof(*dim), GFP_KERNEL);

	if (!dim)
		return NULL;
	INIT_WORK(&dim->work, pagefill_dim_work);
	dim->mode = DIM_CQ_PERIOD_MODE_START_FROM_CQE;
	dim->profile_ix = NET_DIM_DEF_PROFILE_CQE;
	return dim;
}

void pagefill_dim_free(struct dim *dim)
{
	cancel_work_sync(&dim->work);
	kfree(dim);
}

bool pagefill_dim_sample(struct dim *dim, u16 events, u64 packets, u64 bytes,
			 u32 *usecs)
{
	struct dim_sample sample = {};

	dim_update_sample(events, packets, bytes, &sample);
	net_dim(dim, &sample);
	if (dim->state != DIM_APPLY_NEW_PROFILE)
		return false;
	*usecs = pagefill_dim_usecs(dim);
	dim->state = DIM_START_MEASURE;
	return true;
}

u32 pagefill_dim_usecs(const struct dim *dim)
{
	return net_dim_get_rx_moderation(dim->mode, dim->profile_ix).usec;
}
