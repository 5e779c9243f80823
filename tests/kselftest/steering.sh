#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# steering.sh [PAGEFILL_KO [FRAMES]]: the device steers each frame, by
# ethtool's RSS indirection table and key (ethtool -x/-X) and its ntuple
# filters (ethtool -N/-n), on four queue pairs. FRAMES frames (default 100)
# from each of 31 streams (one UDP flow each: 198.51.100.N:10000+N to
# 192.0.2.1:9000) reach a UDP socket complete and in order, each queue
# receiving what the table or a filter sends it and nothing else: all on
# queue 0 (equal 1), all on queue 2 (weight 0 0 1), spread by the default
# table; one stream to queue 3 by its source address, one by its source
# port, one by its (group, node) through user-def, one dropped (counted by
# the device); filters listed, deleted and refused where they cannot hold;
# a new key read back. Then a stream per AF_XDP socket: three streams,
# each sent by a filter to a queue of its own, reach a zero-copy socket
# there, the others the stack. Needs one NIC and the host agent.
. "$(dirname "$0")/ktap.sh"
ko=${1:-}
frames=${2:-100}
host=pf_host
pf_need_host
ktap_plan 15
pf_log_mark
pf_load "$ko"
bdf=$(pf_nics | head -n 1)
dev=$(ls "/sys/bus/pci/devices/$bdf/net")
ethtool -L "$dev" combined 4
pf_up_one
total=$((31 * frames))

# qcount: each queue's received frames, "q0 q1 q2 q3".
qcount() {
	ethtool -S "$dev" | awk '{ n = $1; sub(/:$/, "", n) }
		n ~ /^rx[0-3]_packets$/ { q = substr(n, 3, 1); v[q] = $2 }
		END { print v[0] + 0, v[1] + 0, v[2] + 0, v[3] + 0 }'
}
# run [NODES [EXPECTED]]: FRAMES frames from each of NODES (default 1-31)
# into the sink, which must get EXPECTED (default all) complete and in
# order; "delta" is then what each queue received meanwhile.
run() {
	nodes=${1:-1-31}
	expected=${2:-$total}
	before=$(qcount)
	pf_sink 9000 "$expected" 60
	pf_host gen --nodes "$nodes" --groups 0 --size 64 --count "$frames" \
		--give-up-ms 20000 --dst-mac "$mac" --dst-ip 192.0.2.1 \
		--src-ip 198.51.100.0 >/tmp/gen.out
	gen_rc=$?
	pf_sent
	wait "$pf_sink"
	sink_rc=$?
	after=$(qcount)
	# shellcheck disable=SC2086
	delta=$(set -- $before $after; echo $(($5 - $1)) $(($6 - $2)) $(($7 - $3)) $(($8 - $4)))
	echo "# sink: $(cat /tmp/sink.out); per queue: $delta"
	[ "$gen_rc" -eq 0 ] || echo "# generator: $(cat /tmp/gen.out)"
	[ "$gen_rc" -eq 0 ] && [ "$sink_rc" -eq 0 ]
}
# is A B C D: the last run's per-queue counts were A B C D.
is() { [ "$delta" = "$*" ]; }

# The key of Microsoft's RSS specification, what a reset loads.
ms_key=6d:5a:56:da:25:5b:0e:c2:41:67:25:3d:43:a3:8f:b0:d0:ca:2b:cb
ms_key=$ms_key:ae:7b:30:b4:77:cb:2d:a3:80:30:f2:0c:6a:42:b7:3b:be:ac:01:fa
ktap_check "ethtool -x: a 128-entry table over 4 queues and the default 40-byte key" eval \
	'ethtool -x "$dev" | tee /tmp/rss.out | grep -q "^  120: *0 *1 *2 *3 *0 *1 *2 *3" &&
	grep -q "^$ms_key$" /tmp/rss.out && grep -q "^    toeplitz: on" /tmp/rss.out'
ktap_check "default table: $total frames from 31 flows, complete, in order, on 3 queues or 4" \
	eval 'run && [ "$(echo "$delta" | tr " " "\n" | grep -vc "^0$")" -ge 3 ]'
ethtool -X "$dev" equal 1
ktap_check "equal 1: every frame on queue 0" eval 'run && is "$total" 0 0 0'
ethtool -X "$dev" weight 0 0 1 0
ktap_check "weight 0 0 1 0: every frame on queue 2" eval 'run && is 0 0 "$total" 0'
ethtool -X "$dev" equal 1

# A filter's location, from ethtool -N's "Added rule with ID N".
add() { ethtool -N "$dev" "$@" | sed -n 's/^Added rule with ID //p'; }
rest=$((total - frames))
loc=$(add flow-type udp4 src-ip 198.51.100.5 action 3)
ktap_check "ntuple: udp4 src-ip to queue 3 moves that stream alone" eval \
	'[ -n "$loc" ] && run && is "$rest" 0 0 "$frames"'
ktap_check "ethtool -n lists the filter" eval \
	'ethtool -n "$dev" | tee /tmp/rules.out | grep -q "Filter: $loc" &&
	grep -q "Src IP addr: 198.51.100.5 mask: 0.0.0.0" /tmp/rules.out &&
	grep -q "Action: Direct to queue 3" /tmp/rules.out'
ethtool -N "$dev" delete "$loc"
ktap_check "deleted, it steers nothing" eval \
	'! ethtool -n "$dev" | grep -q "Filter:" && run && is "$total" 0 0 0'
# Stream 7 by its (group, node): user-def is group << 8 | node.
loc=$(add flow-type ether user-def 0x7 action 1)
loc2=$(add flow-type udp4 src-port 10009 dst-port 9000 action 2)
ktap_check "user-def (group 0, node 7) to queue 1 and udp4 ports to queue 2" eval \
	'[ -n "$loc" ] && [ -n "$loc2" ] && run && is $((total - 2 * frames)) "$frames" "$frames" 0'
ethtool -N "$dev" delete "$loc"
ethtool -N "$dev" delete "$loc2"
filtered() { ethtool -S "$dev" | sed -n 's/^ *dev_drop_filtered: //p'; }
dropped0=$(filtered)
loc=$(add flow-type udp4 src-ip 198.51.100.11 action -1)
ktap_check "action -1 drops that stream, counted by the device, the rest arrive" eval \
	'[ -n "$loc" ] && run 1-10,12-31 "$rest" &&
	run 11 0 && [ $(($(filtered) - dropped0)) -eq "$frames" ]'
ethtool -N "$dev" delete "$loc"
ktap_check "refused: a queue beyond those in use, a field the device cannot match" eval \
	'! ethtool -N "$dev" flow-type udp4 src-ip 198.51.100.5 action 4 2>/dev/null &&
	! ethtool -N "$dev" flow-type udp4 tos 4 action 1 2>/dev/null &&
	! ethtool -n "$dev" | grep -q "Filter:"'
ktap_check "ntuple-filters off removes the filters and refuses new ones" eval \
	'loc=$(add flow-type udp4 src-ip 198.51.100.5 action 3) && [ -n "$loc" ] &&
	ethtool -K "$dev" ntuple off && ! ethtool -n "$dev" 2>/dev/null | grep -q "Filter:" &&
	! ethtool -N "$dev" flow-type udp4 src-ip 198.51.100.5 action 3 2>/dev/null &&
	ethtool -K "$dev" ntuple on && run && is "$total" 0 0 0'
key=00:11:22:33:44:55:66:77:88:99:aa:bb:cc:dd:ee:ff:00:11:22:33
key=$key:44:55:66:77:88:99:aa:bb:cc:dd:ee:ff:00:11:22:33:44:55:66:77
ktap_check "hkey: a new key is read back and frames still arrive" eval \
	'ethtool -X "$dev" hkey "$key" default && ethtool -x "$dev" | grep -q "^$key$" && run'

# A stream per AF_XDP socket: streams 5, 6 and 7 each to a queue of its own
# with a zero-copy socket, every other stream to queue 0 and the stack.
pf_xsk_tool
ethtool -X "$dev" equal 1
for n in 5 6 7; do
	add flow-type udp4 src-ip "198.51.100.$n" action $((n - 4)) >/dev/null
done
# The sockets stay bound until the stack's sink is done: unbinding one
# restarts the device, and frames it holds for queue 0 would be lost.
xsk_streams() {
	rm -f /tmp/pf_xsk.ready /tmp/gen.sent /tmp/stack.done
	PF_SINK_SENT=/tmp/gen.sent "$xsk" -z -w -t 60 -W /tmp/stack.done "$dev" 1,2,3 \
		$((3 * frames)) >/tmp/xsk.out 2>&1 &
	xsk_pid=$!
	eventually test -f /tmp/pf_xsk.ready || { kill "$xsk_pid"; return 1; }
	run 1-31 $((total - 3 * frames))
	run_rc=$?
	: >/tmp/stack.done
	wait "$xsk_pid"
	xsk_rc=$?
	sed 's/^/# /' /tmp/xsk.out
	[ "$run_rc" -eq 0 ] && [ "$xsk_rc" -eq 0 ] &&
		[ "$(grep -c "^queue [1-3] mode zerocopy received $frames dropped 0" \
			/tmp/xsk.out)" -eq 3 ]
}
ktap_check "three streams, each through a filter to a zero-copy socket; the others to the stack" \
	xsk_streams
ktap_check "no warning or other report in the kernel log" pf_log_clean
ktap_check "rmmod with filters in place" timeout 60 rmmod pagefill
ktap_finish
