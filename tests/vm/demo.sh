#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Guest side of scripts/demo.sh: load pagefill and show what it bound.
set -e
. "$(dirname "$0")/ktap.sh"
echo "# kernel $(uname -r)"
insmod "$1"
echo "# pagefill NICs and their drivers:"
for bdf in $(pf_nics); do
	echo "  $bdf  $(cat /sys/bus/pci/devices/$bdf/vendor):$(cat /sys/bus/pci/devices/$bdf/device)  driver=$(basename "$(readlink /sys/bus/pci/devices/$bdf/driver)")"
done
echo "# kernel log:"
dmesg | grep -i pagefill
rmmod pagefill
