/* SPDX-License-Identifier: GPL-2.0 */
/* Netlink: extended ACK messages. */
#ifndef _PAGEFILL_HELPERS_NETLINK_H
#define _PAGEFILL_HELPERS_NETLINK_H

struct netlink_ext_ack;

void pagefill_extack_set_msg(struct netlink_ext_ack *extack, const char *msg);

#endif /* _PAGEFILL_HELPERS_NETLINK_H */
