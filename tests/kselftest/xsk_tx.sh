#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# xsk_tx.sh [PAGEFILL_KO [FRAMES]]: AF_XDP sockets send on pagefill. pf_xsk
# (built here) binds a socket on every queue of the first NIC and sends
# FRAMES 64-byte UDP frames (default 2000) through each socket's TX ring,
# in copy mode and then in zero-copy mode (the device reads each frame from
# the socket's umem), to a UDP socket behind the second NIC in network
# namespace "peer". The sink gets every frame of every socket's stream in
# order, each with a UDP checksum over every byte that the receiving
# stack verified; every buffer came back through the completion ring, and
# the device counted each frame sent. Needs two NICs.
. "$(dirname "$0")/ktap.sh"
ko=${1:-}
frames=${2:-2000}
here=$(dirname "$0")
pf_xsk_tool
ktap_plan 8
pf_log_mark
pf_load "$ko"
pf_pair
dev=$a
peer_mac=$(ip netns exec peer cat "/sys/class/net/$b/address")
queues=$(ethtool -l "$dev" | sed -n '/^Current/,$s/^Combined:[[:space:]]*//p')
qlist=$(seq -s, 0 $((queues - 1)))
total=$((queues * frames))
# tq NAME: transmit counter NAME summed over the queues (txN_NAME).
tq() {
	ethtool -S "$dev" | awk -v n="$1" '$1 ~ "^tx[0-9]+_" n ":$" { s += $2 } END { print s + 0 }'
}

# xsk_send FLAGS: pf_xsk with FLAGS sends $frames frames from each queue's
# socket to a UDP sink on port 9000 in netns peer, which must get all.
xsk_send() {
	rm -f /tmp/udp_sink.ready
	ip netns exec peer python3 -S "$here/udp_sink.py" 9000 "$total" 60 >/tmp/sink.out 2>&1 &
	sink=$!
	eventually test -f /tmp/udp_sink.ready || { kill "$sink"; return 1; }
	# shellcheck disable=SC2086
	"$xsk" $1 -T "$frames" -m "$peer_mac" -a 198.51.100.7 -b 192.0.2.2 -t 60 \
		"$dev" "$qlist" >/tmp/xsk.out 2>&1
	xsk_rc=$?
	wait "$sink"
	sink_rc=$?
	sed 's/^/# /' /tmp/xsk.out
	echo "# sink: $(cat /tmp/sink.out)"
	[ "$xsk_rc" -eq 0 ] && [ "$sink_rc" -eq 0 ]
}
# every_socket MODE: each queue's socket was bound in MODE and sent all.
every_socket() {
	[ "$(grep -c "^queue [0-9]* mode $1 sent $frames completed $frames$" /tmp/xsk.out)" -eq \
		"$queues" ]
}
what="$frames frames from each of $queues queues' sockets reach a UDP socket"
ktap_check "copy mode: $what, complete and in order" xsk_send -c
ktap_check "copy mode: each queue's socket sent all and got every buffer back" every_socket copy
xsk0=$(tq xsk_frames)
ktap_check "zero-copy mode: $what, complete and in order" xsk_send "-z -w"
ktap_check "zero-copy mode: each queue's socket sent all and got every buffer back" \
	every_socket zerocopy
ktap_check "the driver counted $total frames sent from the sockets' umems" \
	[ "$(($(tq xsk_frames) - xsk0))" -eq "$total" ]
ktap_check "zero-copy mode without need_wakeup: $what" xsk_send -z
ktap_check "no kernel warning or error" pf_log_clean
ip netns del peer
pf_unload
pf_kmemleak_check
ktap_finish
