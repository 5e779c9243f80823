#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# cycles.sh [PAGEFILL_KO [CYCLES]]: while 31 generator streams send to the
# guest without pause, the interface is closed and opened CYCLES times
# (default 200), ethtool -G rx / -L combined / -C rx-usecs change under it
# CYCLES/4 times, and the driver is unloaded, loaded and its interface
# opened CYCLES times. Nothing crashes or warns; then every stream of a
# clean run arrives complete and in order, the page pools are gone once the
# interface is down, the device holds no buffer, and kmemleak finds nothing
# after rmmod.
. "$(dirname "$0")/ktap.sh"
ko=${1:-}
cycles=${2:-200}
here=$(dirname "$0")
host=pf_host
pf_need_host
ktap_plan 7
pf_load "$ko"
bdf=$(pf_nics | head -n 1)
dev=$(ls "/sys/bus/pci/devices/$bdf/net")
ip addr add 192.0.2.1/24 dev "$dev"
ip link set "$dev" up
mac=$(cat "/sys/class/net/$dev/address")
stat() { $host ctl 0 stats | sed -n "s/^$1 //p"; }

# Background traffic for the whole test, in bursts (the generator runs on
# the host: each request must end by itself): frames the interface cannot
# take (down, unloaded, restarting) are the device's to drop and count.
rm -f /tmp/cycles.stop
(
	while [ ! -e /tmp/cycles.stop ]; do
		$host gen --nodes 1-31 --groups 0 --size 64 --count 50 --give-up-ms 2000 \
			--dst-mac "$mac" --dst-ip 192.0.2.1 --src-ip 198.51.100.0 >/dev/null 2>&1
	done
) &
traffic=$!
sleep 1
t0=$(date +%s)
took() { echo "# $1 took $(($(date +%s) - t0)) s"; t0=$(date +%s); }

open_close() {
	i=0
	while [ "$i" -lt "$cycles" ]; do
		ip link set "$dev" down && ip link set "$dev" up || return 1
		i=$((i + 1))
	done
}
ktap_check "$cycles close/open cycles under traffic" open_close
took "close/open"

reconfigure() {
	i=0
	while [ "$i" -lt $((cycles / 4)) ]; do
		ethtool -G "$dev" rx $((64 << (i % 4))) &&
			ethtool -L "$dev" combined $((1 + i % 2)) &&
			ethtool -C "$dev" rx-usecs $((i % 3 * 50)) || return 1
		i=$((i + 1))
	done
	ethtool -G "$dev" rx 1024 && ethtool -C "$dev" rx-usecs 50
}
ktap_check "$((cycles / 4)) rounds of ethtool -G rx, -L combined, -C rx-usecs under traffic" \
	reconfigure
took "ethtool"

reload() {
	i=0
	while [ "$i" -lt "$cycles" ]; do
		rmmod pagefill && pf_load "$ko" || return 1
		dev=$(ls "/sys/bus/pci/devices/$bdf/net") && ip link set "$dev" up || return 1
		i=$((i + 1))
	done
}
ktap_check "$cycles unload/load/open cycles under traffic" reload
took "unload/load/open"
touch /tmp/cycles.stop
wait "$traffic"

ip addr add 192.0.2.1/24 dev "$dev"
eventually eval '[ "$(cat "/sys/class/net/$dev/carrier")" = 1 ]'
PF_SINK_TIMEOUT=90 PF_GIVE_UP_MS=30000
clean() {
	pf_send_streams 10
	rc=$?
	echo "# sink: $(cat /tmp/sink.out)"
	return "$rc"
}
ktap_check "then a clean run: every stream complete and in order" clean
ifindex=$(cat "/sys/class/net/$dev/ifindex")
ip link set "$dev" down
pools() { pf_ynl --dump page-pool-get 2>&1 | grep -c "'ifindex': $ifindex"; }
ktap_check "interface down: its page pools are gone, no page in flight" \
	eventually eval '[ "$(pools)" -eq 0 ]'
ktap_check "the device holds no buffer" [ "$(stat buffers_held)" -eq 0 ]
rmmod pagefill
pf_kmemleak_check
ktap_finish
