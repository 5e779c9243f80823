/* SPDX-License-Identifier: GPL-2.0 */
/* struct page: its kernel address. */
#ifndef _PAGEFILL_HELPERS_PAGE_H
#define _PAGEFILL_HELPERS_PAGE_H

struct page;

void *pagefill_page_address(const struct page *page);

#endif /* _PAGEFILL_HELPERS_PAGE_H */
