#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# fabric.sh [PAGEFILL_KO]: the traffic generator on the host reaches the NIC in
# the VM over the fabric, and the device reads the driver's master table in
# guest memory to decide: frames for a group the interface did not join are
# dropped and counted; the device's counters are read back from the guest.
. "$(dirname "$0")/ktap.sh"
ko=${1:-}
host=pf_host
pf_need_host
ktap_plan 5
pf_load "$ko"
bdf=$(pf_nics | head -n 1)
dev=$(ls "/sys/bus/pci/devices/$bdf/net")
ip link set "$dev" up

stat() { $host ctl 0 stats | sed -n "s/^$1 //p"; }
ktap_check "the guest reads the device's counters" [ "$(stat drop_unjoined)" = 0 ]
ktap_check "the generator sends 40 frames to group 7 from 4 nodes" \
	$host gen --nodes 20-23 --groups 7 --size 64 --count 10 \
	--dst-mac 02:50:46:4c:00:00 --dst-ip 192.0.2.1
dropped() { [ "$(stat drop_unjoined)" = 40 ]; }
ktap_check "the device dropped all 40: group 7 is not in the master table" eventually dropped
ktap_check "nothing was written to host memory" [ "$(stat rx_frames)" = 0 ]
rmmod pagefill
pf_kmemleak_check
ktap_finish
