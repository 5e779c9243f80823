// SPDX-License-Identifier: GPL-2.0
/* PCI: bus mastering of a device, or of a net_device's parent. */

#include <linux/netdevice.h>
#include <linux/pci.h>
#include <pagefill/helpers/pci.h>

void pagefill_set_bus_master(struct net_device *dev, bool on)
{
	struct device *parent = dev->dev.parent;

	if (!parent || !dev_is_pci(parent))
		return;
	if (on)
		pci_set_master(to_pci_dev(parent));
	else
		pci_clear_master(to_pci_dev(parent));
}

void pagefill_clear_bus_master(struct device *dev)
{
	if (dev_is_pci(dev))
		pci_clear_master(to_pci_dev(dev));
}
