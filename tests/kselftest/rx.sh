#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# rx.sh [PAGEFILL_KO] [RX_RING|- [QUEUES]]: generator streams from 31 virtual nodes in
# three groups (the default group and two joined with ip maddr) reach a UDP
# socket in the guest through the pagefill receive path (node tables, NAPI,
# copied skbs and page fragments) complete and in order, at two frame sizes;
# ethtool -S, the interface's counters and the device's agree. With RX_RING
# (ethtool -G rx), the device may hold only that many buffers: streams
# starve, their senders pause and resume, and still nothing is lost. The
# device checks every frame's checksum and the driver says so
# (CHECKSUM_UNNECESSARY), unless ethtool -K rx is off. Without RX_RING and
# QUEUES, merging too: with the private flag rx-udp-merge, a stream's
# datagrams in a buffer go up merged, to a UDP_GRO socket whole and to any
# other split again, and still complete and in order; never without the
# device's checksum check. The
# device steers the streams over the queue pairs in use (one per core, or
# QUEUES with ethtool -L combined), each with its NAPI instance and page
# pool, and every queue receives. Behind an IOMMU, the buffers were
# translated. Then a group is left, and the device
# drops its frames as unjoined; joined again (three times), it receives
# again.
. "$(dirname "$0")/ktap.sh"
ko=${1:-}
ring=${2:-}
[ "$ring" != - ] || ring=
queues=${3:-}
here=$(dirname "$0")
host=pf_host
pf_need_host
plan=18
[ -z "$ring" ] || plan=$((plan + 1))
merge=
[ -n "$ring" ] || [ -n "$queues" ] || { merge=1; plan=$((plan + 5)); }
ktap_plan $plan
pf_load "$ko"
bdf=$(pf_nics | head -n 1)
dev=$(ls "/sys/bus/pci/devices/$bdf/net")
ip addr add 192.0.2.1/24 dev "$dev"
[ -z "$ring" ] || ethtool -G "$dev" rx "$ring"
[ -z "$queues" ] || ethtool -L "$dev" combined "$queues"
queues=$(ethtool -l "$dev" | sed -n '/^Current/,$s/^Combined:[[:space:]]*//p')
ip link set "$dev" up
# Groups 7 and 300: 01:50:46:4c:0g:gg.
ip maddr add 01:50:46:4c:00:07 dev "$dev"
ip maddr add 01:50:46:4c:01:2c dev "$dev"
mac=$(cat "/sys/class/net/$dev/address")
stat() { $host ctl 0 stats | sed -n "s/^$1 //p"; }
es() { ethtool -S "$dev" | sed -n "s/^ *$1: //p"; }
# qs NAME: receive counter NAME summed over the queues (rxN_NAME).
qs() { pf_qsum "$dev" "rx_$1"; }
ktap_check "ethtool -S: three groups joined" [ "$(es groups_joined)" -eq 3 ]

# run SIZE COUNT [GROUPS]: COUNT frames per stream from nodes 1-31 to
# GROUPS (default 0,7,300); the sink checks every stream.
run() {
	groups=${3:-0,7,300}
	total=$((31 * $(echo "$groups" | tr ',' '\n' | wc -l) * $2))
	pf_sink 9000 "$total" 120
	$host gen --nodes 1-31 --groups "$groups" --size "$1" --count "$2" \
		--dst-mac "$mac" --dst-ip 192.0.2.1 --src-ip 198.51.100.0 \
		--eot-every 50 >/tmp/gen.out
	pf_sent
	wait "$pf_sink"
	rc=$?
	echo "# size $1: $(cat /tmp/sink.out); generator: $(cat /tmp/gen.out)"
	return $rc
}
ktap_check "4650 frames of 64 bytes from 93 streams, complete and in order" run 64 50
ktap_check "1860 frames of 1400 bytes from 93 streams, complete and in order" run 1400 20
total=6510
ethtool -S "$dev" | sed 's/^/# /'
echo "# device: starved $(stat starved) xoff $(stat xoff_sent) xon $(stat xon_sent) "\
"buffers $(stat rx_buffers) irqs $(stat irqs)"
rx=$(cat "/sys/class/net/$dev/statistics/rx_packets")
ktap_check "the interface and ethtool -S counted $total received frames" eval \
	'[ "$rx" -eq "$total" ] && [ "$(qs packets)" -eq "$total" ]'
ktap_check "short frames were copied, long ones went up as fragments" eval \
	'[ "$(qs copybreak)" -eq 4650 ] && [ "$(qs frags)" -eq 1860 ]'
ktap_check "no receive errors (no completion failed validation)" eval \
	'[ "$(cat /sys/class/net/$dev/statistics/rx_errors)" -eq 0 ] &&
	[ "$(qs bad_completions)" -eq 0 ]'
# The generator's UDP over IPv4 carries no checksum (0): the device vouches
# for the IPv4 header's, and for the UDP datagram as one without.
ktap_check "the device checked every frame's checksum (rx csum_unnecessary $total, csum_none 0)" \
	eval '[ "$(qs csum_unnecessary)" -eq "$total" ] && [ "$(qs csum_none)" -eq 0 ]'
device_agrees() {
	[ "$(stat rx_frames)" -eq "$total" ] && [ "$(es dev_rx_frames)" -eq "$total" ] &&
		[ "$(stat drop_overflow)" -eq 0 ] && [ "$(es dev_drop_overflow)" -eq 0 ] &&
		[ "$(es dev_drop_unjoined)" -eq 0 ] && [ "$(es dev_drop_bad_frame)" -eq 0 ]
}
ktap_check "the device wrote $total frames and dropped none (its registers and the model agree)" \
	device_agrees
starved_answered() {
	[ "$(qs starved)" -gt 0 ] && [ "$(qs xon_doorbells)" -gt 0 ] &&
		[ "$(stat xoff_sent)" -gt 0 ] && [ "$(stat xon_sent)" -ge "$(stat xoff_sent)" ]
}
[ -z "$ring" ] ||
	ktap_check "a ring of $ring buffers starved streams; every xoff was answered by xon" \
		starved_answered
every_queue() {
	q=0
	while [ "$q" -lt "$queues" ]; do
		[ "$(es rx${q}_packets)" -gt 0 ] || return 1
		q=$((q + 1))
	done
}
ktap_check "each of the $queues queue pairs in use received" every_queue
# Behind a strict IOMMU (vm-run.sh --viommu) every buffer the device wrote
# was translated, and the frames above arrived intact. (With swiotlb=force,
# the fast kernel in tests/run.sh, every one was bounced; swiotlb's debugfs
# counters do not tell reliably.)
group=/sys/bus/pci/devices/$bdf/iommu_group
if [ -e "$group/type" ]; then
	ktap_check "behind an IOMMU in strict mode: the buffers were translated" eval \
		'[ "$(cat "$group/type")" = DMA ] && dmesg | grep -q "invalidation policy: strict"'
else
	ktap_skip "behind an IOMMU in strict mode: the buffers were translated" "no IOMMU here"
fi

# Leave group 7: its frames are the device's to drop, counted as unjoined.
ip maddr del 01:50:46:4c:00:07 dev "$dev"
ktap_check "ip maddr del: two groups joined" eventually eval '[ "$(es groups_joined)" -eq 2 ]'
$host gen --nodes 1-31 --groups 7 --size 64 --count 5 \
	--dst-mac "$mac" --dst-ip 192.0.2.1 --src-ip 198.51.100.0 >/dev/null
ktap_check "the device dropped the left group's 155 frames as unjoined" \
	eventually eval '[ "$(es dev_drop_unjoined)" -eq 155 ]'
ktap_check "the interface received none of them" \
	[ "$(cat /sys/class/net/$dev/statistics/rx_packets)" -eq "$total" ]
# Leave and join again: each queue releases its hold on the group's node
# table when it leaves, so the table can serve the next join.
rejoin() {
	for i in 1 2 3; do
		ip maddr add 01:50:46:4c:00:07 dev "$dev"
		eventually eval '[ "$(es groups_joined)" -eq 3 ]' || return 1
		[ "$i" -lt 3 ] || break
		ip maddr del 01:50:46:4c:00:07 dev "$dev"
		eventually eval '[ "$(es groups_joined)" -eq 2 ]' || return 1
	done
	[ "$(es group_join_failed)" -eq 0 ]
}
ktap_check "group 7 joined again, left and joined twice more" rejoin
ktap_check "155 frames to the rejoined group 7, complete and in order" run 64 5 7
checked=$(qs csum_unnecessary)
ethtool -K "$dev" rx off
ktap_check "ethtool -K rx off: 155 frames more, handed up for the stack to check" eval \
	'run 64 5 7 && [ "$(qs csum_none)" -eq 155 ] && [ "$(qs csum_unnecessary)" -eq "$checked" ]'
if [ -n "$merge" ]; then
	ethtool -K "$dev" rx on
	ethtool --set-priv-flags "$dev" rx-udp-merge on
	packets=$(qs packets)
	ktap_check "rx-udp-merge: 4650 frames of 64 bytes to a UDP_GRO socket, merged, "\
"complete and in order" \
		eval 'PF_SINK_GRO=1 run 64 50 && grep -q "merged [1-9]" /tmp/sink.out'
	ktap_check "rx-udp-merge: 1860 frames of 1400 bytes to a UDP_GRO socket, merged, "\
"complete and in order" \
		eval 'PF_SINK_GRO=1 run 1400 20 && grep -q "merged [1-9]" /tmp/sink.out'
	ktap_check "rx-udp-merge: 1860 frames of 64 bytes to a plain socket, split again, "\
"complete and in order" \
		run 64 20
	echo "# merged_skbs $(qs merged_skbs) merged_frames $(qs merged_frames) "\
"packets $(($(qs packets) - packets))"
	merged_counted() {
		[ "$(($(qs packets) - packets))" -eq 8370 ] && [ "$(qs merged_skbs)" -gt 0 ] &&
			[ "$(qs merged_frames)" -ge $((2 * $(qs merged_skbs))) ] &&
			[ "$(qs merged_frames)" -le 8370 ] && [ "$(qs bad_completions)" -eq 0 ]
	}
	ktap_check "rx-udp-merge: every frame counted once, merged skbs hold two or more" \
		merged_counted
	merged=$(qs merged_frames)
	ethtool -K "$dev" rx off
	ktap_check "rx-udp-merge with rx checksumming off: 1550 frames, none merged" \
		eval 'PF_SINK_GRO=1 run 64 50 7 && [ "$(qs merged_frames)" -eq "$merged" ]'
	ethtool --set-priv-flags "$dev" rx-udp-merge off
	ethtool -K "$dev" rx on
fi
ip link set "$dev" down
ktap_check "ip link set down: no group joined" [ "$(es groups_joined)" -eq 0 ]
pf_unload
pf_kmemleak_check
ktap_finish
