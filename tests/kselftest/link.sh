#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# link.sh [PAGEFILL_KO]: the carrier follows the device's link through the
# misc interrupt: a link flap under traffic takes the carrier down and back
# up, and traffic resumes.
. "$(dirname "$0")/ktap.sh"
ko=${1:-}
host=pf_host
pf_need_host
ktap_plan 5
pf_load "$ko"
pf_pair
carrier() { [ "$(cat /sys/class/net/$a/carrier)" = "$1" ]; }

ktap_check "traffic flows before the flap" ping -c 3 -i 0.2 -W 2 192.0.2.2
ping -i 0.05 -W 1 192.0.2.2 >/dev/null 2>&1 &
pinger=$!
$host ctl 0 link down >/dev/null
ktap_check "link down: the carrier goes down" eventually carrier 0
sleep 0.5
$host ctl 0 link up >/dev/null
ktap_check "link up: the carrier comes back" eventually carrier 1
kill "$pinger"
ktap_check "traffic flows after the flap" ping -c 3 -i 0.2 -W 2 192.0.2.2
ip netns del peer
rmmod pagefill
pf_kmemleak_check
ktap_finish
