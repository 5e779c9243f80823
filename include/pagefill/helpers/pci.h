/* SPDX-License-Identifier: GPL-2.0 */
/* PCI: bus mastering of a device, or of a net_device's parent. */
#ifndef _PAGEFILL_HELPERS_PCI_H
#define _PAGEFILL_HELPERS_PCI_H

#include <linux/types.h>

struct net_device;

struct device;

/* Sets or clears bus mastering of @dev's parent, if it is a PCI device. */
void pagefill_set_bus_master(struct net_device *dev, bool on);
/* Clears bus mastering of @dev, if it is a PCI device. */
void pagefill_clear_bus_master(struct device *dev);

#endif /* _PAGEFILL_HELPERS_PCI_H */
