/* SPDX-License-Identifier: GPL-2.0 */
/* Bottom halves: local_bh_disable() and local_bh_enable(). */
#ifndef _PAGEFILL_HELPERS_BOTTOM_HALF_H
#define _PAGEFILL_HELPERS_BOTTOM_HALF_H

void pagefill_local_bh_disable(void);
void pagefill_local_bh_enable(void);

#endif /* _PAGEFILL_HELPERS_BOTTOM_HALF_H */
