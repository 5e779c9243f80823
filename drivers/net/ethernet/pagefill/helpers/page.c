// SPDX-License-Identifier: GPL-2.0
/* struct page: its kernel address. */

#include <linux/mm.h>
#include <pagefill/helpers/page.h>

void *pagefill_page_address(const struct page *page)
{
	return page_address(page);
}
