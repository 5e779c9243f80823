// SPDX-License-Identifier: GPL-2.0
/* Netlink: extended ACK messages. */

#include <linux/netlink.h>
#include <pagefill/helpers/netlink.h>

/* NL_SET_ERR_MSG() with a message that is not a literal: @msg is static. */
void pagefill_extack_set_msg(struct netlink_ext_ack *extack, const char *msg)
{
	do_trace_netlink_extack(msg);
	if (extack)
		extack->_msg = msg;
}
