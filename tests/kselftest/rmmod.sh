#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# rmmod.sh [PAGEFILL_KO]: unloading the driver in the middle of traffic in
# both directions is clean: every page and mapping comes back (page_pool
# would warn of pages still in flight; the DMA API debugging and kmemleak
# would report), the device holds no buffer afterwards, and the driver loads
# and passes traffic again.
. "$(dirname "$0")/ktap.sh"
ko=${1:-}
here=$(dirname "$0")
host=pf_host
pf_need_host
ktap_plan 5

setup() {
	pf_load "$ko" || return 1
	pf_pair || return 1
	ping -c 3 -i 0.3 -W 2 192.0.2.2
}
ktap_check "load and pass traffic" setup
mac=$(cat "/sys/class/net/$a/address")
ip netns exec peer iperf3 -s -D -1
eventually_long pf_listening peer 5201
iperf3 -c 192.0.2.2 -t 30 >/dev/null 2>&1 &
$host gen --nodes 2-31 --groups 0 --size 64 --count 1000 --dst-mac "$mac" \
	--dst-ip 192.0.2.1 --src-ip 198.51.100.0 >/dev/null &
gen=$!
sleep 1.5
unload() { ip netns del peer && rmmod pagefill; }
ktap_check "rmmod while TCP and generator traffic run" unload
wait "$gen"
held() { [ "$($host ctl 0 stats | sed -n 's/^buffers_held //p')" = 0 ]; }
ktap_check "the device holds no buffer after the driver left" held
ktap_check "load again and pass traffic" setup
ip netns del peer
rmmod pagefill
pf_kmemleak_check
ktap_finish
