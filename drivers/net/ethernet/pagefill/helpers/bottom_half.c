// SPDX-License-Identifier: GPL-2.0
/* Bottom halves: local_bh_disable() and local_bh_enable(). */

#include <linux/bottom_half.h>
#include <pagefill/helpers/bottom_half.h>

void pagefill_local_bh_disable(void)
{
	local_bh_disable();
}

void pagefill_local_bh_enable(void)
{
	local_bh_enable();
}
