#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# rx.sh PAGEFILL_KO: generator streams from 31 virtual nodes reach a UDP
# socket in the guest through the pagefill receive path (node table, NAPI,
# skbs) complete and in order, at two frame sizes; the interface's counters
# and the device's agree.
. "$(dirname "$0")/ktap.sh"
ko=$1
here=$(dirname "$0")
host="sh $here/pf-host.sh"
ktap_plan 6
insmod "$ko"
bdf=$(pf_nics | head -n 1)
dev=$(ls "/sys/bus/pci/devices/$bdf/net")
ip addr add 192.0.2.1/24 dev "$dev"
ip link set "$dev" up
mac=$(cat "/sys/class/net/$dev/address")
stat() { $host ctl 0 stats | sed -n "s/^$1 //p"; }

# run SIZE COUNT: COUNT frames per stream from nodes 1-31 to group 0; the
# sink checks every stream.
run() {
	total=$((31 * $2))
	rm -f /tmp/udp_sink.ready
	python3 "$here/udp_sink.py" 9000 "$total" 60 >/tmp/sink.out 2>&1 &
	sink=$!
	eventually test -f /tmp/udp_sink.ready
	$host gen --nodes 1-31 --groups 0 --size "$1" --count "$2" \
		--dst-mac "$mac" --dst-ip 192.0.2.1 --src-ip 198.51.100.0 --eot-every 50 >/tmp/gen.out
	wait "$sink"
	rc=$?
	echo "# size $1: $(cat /tmp/sink.out); generator: $(cat /tmp/gen.out)"
	return $rc
}
ktap_check "3100 frames of 64 bytes from 31 streams, complete and in order" run 64 100
ktap_check "1240 frames of 1400 bytes from 31 streams, complete and in order" run 1400 40
rx=$(cat "/sys/class/net/$dev/statistics/rx_packets")
ktap_check "the interface counted 4340 received frames" [ "$rx" -eq 4340 ]
ktap_check "no receive errors (no completion failed validation)" \
	[ "$(cat /sys/class/net/$dev/statistics/rx_errors)" -eq 0 ]
device_agrees() { [ "$(stat rx_frames)" -eq 4340 ] && [ "$(stat drop_overflow)" -eq 0 ]; }
ktap_check "the device wrote 4340 frames and dropped none" device_agrees
echo "# device: starved $(stat starved) xoff $(stat xoff_sent) xon $(stat xon_sent) buffers $(stat rx_buffers) irqs $(stat irqs)"
rmmod pagefill
ktap_check "no kmemleak report" pf_kmemleak_clean
ktap_finish
