#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# xdp.sh [PAGEFILL_KO [FRAMES]]: native XDP (ip link set ... xdpdrv). The
# programs of xdp_pagefill.bpf.c, built here with clang, act on UDP frames
# to port 9001 (drop, abort, send back) and pass the rest. The generator sends FRAMES frames
# (default 3000) to port 9000, into a UDP sink that must get every one in
# order, and as many to port 9001; the driver's counters (ethtool -S) must
# account for every frame the device model delivered: dropped, aborted or
# refused by the program's choice, passed otherwise. A program that drops
# one port's frames, redirects a second port's to the second NIC and
# passes the rest has every frame accounted for by both device models.
# XDP_TX faster than a paced link leaves the stack's frames their turn.
# Programs are replaced and detached under traffic without a frame lost,
# a program gets XDP's headroom and room at the tail, and one with
# xdp.frags sees frames longer than a buffer in several. Needs two NICs.
. "$(dirname "$0")/ktap.sh"
ko=${1:-}
frames=${2:-3000}
here=$(dirname "$0")
host=pf_host
pf_need_host
obj=/tmp/xdp_pagefill.bpf.o
pf_log_mark
pf_load "$ko"
bdf=$(pf_nics | head -n 1)
dev=$(ls "/sys/bus/pci/devices/$bdf/net")
# The second NIC (fabric node 1): the target of redirects.
peer=$(ls "/sys/bus/pci/devices/$(pf_nics | sed -n 2p)/net")
# The redirecting program names the peer by its interface index, so the
# programs are compiled once the driver is loaded (clang is the test's
# most expensive process on the debug kernel: once, not twice). Without
# the driver's two interfaces there is nothing to compile for, and the
# points below fail rather than skip.
peer_ifindex=$(cat "/sys/class/net/$peer/ifindex" 2>/dev/null)
if [ -n "$peer_ifindex" ] && { ! command -v clang >/dev/null ||
	! clang -O2 -target bpf -I/usr/include/"$(uname -m)"-linux-gnu \
		-DPEER_IFINDEX="$peer_ifindex" -c "$here/xdp_pagefill.bpf.c" -o "$obj"; }; then
	pf_unload
	echo "1..0 # SKIP needs clang with the BPF target and the kernel's UAPI headers"
	exit 4
fi
ktap_plan 18
# The peer up. Without IPv6, it sends nothing of its own (router
# solicitations, MLD) that this NIC would count among the frames the tests
# account for.
sysctl -qw "net.ipv6.conf.$peer.disable_ipv6=1"
ip link set "$peer" up
ip addr add 192.0.2.1/24 dev "$dev"
ip link set "$dev" up
mac=$(cat "/sys/class/net/$dev/address")
sysctl -qw net.core.rmem_max=8388608
# Frames sent back or redirected go out as fast as the device model drains
# the transmit ring; one that finds it full is dropped and counted
# (rxN_xdp_errors, txN_xdp_xmit_errors), as received frames outrun the
# link. Both NICs' rings hold 4096 descriptors, more than any run's burst
# of such frames, so none may be dropped however late the device model (a
# process on a busy host) gets to send.
tx_ring=4096
ethtool -G "$dev" tx "$tx_ring"
ethtool -G "$peer" tx "$tx_ring"
stat() { $host ctl 0 stats | sed -n "s/^$1 //p"; }

# attach SECTION: the program of SECTION, natively (replacing any).
attach() {
	ip -force link set dev "$dev" xdpdrv obj "$obj" sec "$1" &&
		ip -d link show dev "$dev" | grep -q 'prog/xdp id'
}

# send PORT COUNT [RATE]: COUNT frames of $size bytes (64) from node 2
# (nodes 0 and 1 are the NICs) to UDP port PORT, RATE a second (default
# unpaced); with fill=1, every payload byte set and a UDP checksum over
# them (the generator's --fill).
size=64 fill=0
send() {
	$host gen --nodes 2 --groups 0 --size "$size" --fill "$fill" --count "$2" --rate "${3:-0}" \
		--give-up-ms 20000 --dst-mac "$mac" --dst-ip 192.0.2.1 --src-ip 198.51.100.0 \
		--dport "$1" >/tmp/gen.out
}

# run SECTION [PORTS [RATE]]: with the program of SECTION attached, FRAMES
# frames to each of PORTS (default 9001, the program's) at RATE a second
# (default unpaced), then FRAMES to port 9000 into the sink, which must get
# all of them. The counters' changes are left in $d_NAME.
counters="rx_packets rx_xdp_pass rx_xdp_drop rx_xdp_aborted rx_xdp_errors rx_xdp_tx tx_xdp_frames
	rx_xdp_redirect rx_xdp_multi_buf rx_dropped rx_bad_completions"
# dev_stats NIC PREFIX: the device model's counters of NIC (0: this NIC's,
# 1: the peer's) as PREFIX_NAME (shell builtins: each process costs on the
# debug kernel).
dev_stats() {
	$host ctl "$1" stats >/tmp/dev.stats
	while read -r k v; do
		case $k in
		stream | *[!a-z0-9_]*) ;;
		*) eval "$2_$k=\$v" ;;
		esac
	done </tmp/dev.stats
}
snapshot() {
	eval "$(pf_qsums "$dev" "$1" $counters)"
	eval "$(pf_qsums "$peer" "$1_peer" tx_xdp_xmit tx_xdp_xmit_errors)"
	dev_stats 0 "$1_d0"
	dev_stats 1 "$1_d1"
	eval "$1_dev=\$$1_d0_rx_frames $1_devtx=\$$1_d0_tx_frames $1_unjoined=\$$1_d0_drop_unjoined"
	eval "$1_peer_xmit=\$$1_peer_tx_xdp_xmit $1_peer_xmit_errors=\$$1_peer_tx_xdp_xmit_errors"
	eval "$1_peer_devtx=\$$1_d1_tx_frames"
}
# settled: the counters have caught up with the frames of a run (they are
# published at the end of each poll; frames sent back are counted once the
# device reports them sent).
settled() {
	eval "$(pf_qsums "$dev" c rx_xdp_pass tx_xdp_frames rx_xdp_tx rx_xdp_redirect)"
	eval "$(pf_qsums "$peer" p tx_xdp_xmit tx_xdp_xmit_errors)"
	[ "$c_rx_xdp_pass" -ge $((a_rx_xdp_pass + frames)) ] &&
		[ "$c_tx_xdp_frames" -ge "$c_rx_xdp_tx" ] &&
		[ $((p_tx_xdp_xmit + p_tx_xdp_xmit_errors - a_peer_xmit - a_peer_xmit_errors)) -ge \
			$((c_rx_xdp_redirect - a_rx_xdp_redirect)) ]
}
deltas="$counters dev devtx unjoined peer_xmit peer_xmit_errors peer_devtx"
run() {
	attach "$1" || return 1
	snapshot a
	pf_sink 9000 "$frames" 120
	for port in ${2:-9001}; do
		send "$port" "$frames" "${3:-0}" || break
	done
	send 9000 "$frames"
	pf_sent
	wait "$pf_sink"
	rc=$?
	eventually settled
	snapshot b
	for c in $deltas; do eval "d_$c=\$((b_$c - a_$c))"; done
	echo "# $1: sink: $(cat /tmp/sink.out); device delivered $d_dev, sent $d_devtx;" \
		"passed $d_rx_xdp_pass, dropped $d_rx_xdp_drop, aborted $d_rx_xdp_aborted," \
		"errors $d_rx_xdp_errors, sent back $d_rx_xdp_tx (done $d_tx_xdp_frames)," \
		"redirected $d_rx_xdp_redirect (the peer sent $d_peer_xmit, refused" \
		"$d_peer_xmit_errors; its device sent $d_peer_devtx, this one dropped" \
		"$d_unjoined unjoined); in several buffers $d_rx_xdp_multi_buf; no buffer" \
		"$d_rx_dropped, bad $d_rx_bad_completions"
	nports=$(echo ${2:-9001} | wc -w)
	[ "$rc" -eq 0 ] && [ "$d_dev" -eq $(((nports + 1) * frames)) ] &&
		[ "$d_rx_dropped" -eq 0 ] &&
		[ "$d_rx_bad_completions" -eq 0 ]
}
# took ACTION: the other half of the frames went to ACTION's counter, and
# every frame counts as received (XDP is the stack's first layer).
took() {
	[ "$d_rx_xdp_pass" -eq $((d_dev - frames)) ] && [ "$d_rx_packets" -eq "$d_dev" ] &&
		eval "[ \"\$d_rx_xdp_$1\" -eq $frames ]"
}

# The XDP actions the device says it carries out, as netlink reports them
# (a Python set: in any order).
xdp_features() {
	pf_ynl --do dev-get --json "{\"ifindex\": $(cat "/sys/class/net/$dev/ifindex")}" \
		>/tmp/ynl.out 2>&1
	sed 's/^/# /' /tmp/ynl.out
	# The set may span lines.
	tr -d '\n' </tmp/ynl.out | sed -n "s/.*'xdp-features': {\([^}]*\)}.*/\1/p" |
		tr -d "' " | tr , '\n' | sort | tr '\n' ' ' >/tmp/features
	[ "$(cat /tmp/features)" = "basic ndo-xmit ndo-xmit-sg redirect rx-sg xsk-zerocopy " ] &&
		grep -q "'xdp-rx-metadata-features': {'hash'}" /tmp/ynl.out
}
ktap_check "xdp-features: basic (ABORTED, DROP, PASS, TX), redirect, ndo-xmit, rx-sg, \
ndo-xmit-sg, xsk-zerocopy; no more; receive metadata: hash" \
	xdp_features
ktap_check "a native XDP program attaches (xdpdrv)" attach xdp_pass
ktap_check "XDP_DROP: $frames frames to port 9000 all passed in order, $frames to 9001 dropped" \
	eval 'run xdp_drop && took drop'
ktap_check "XDP_ABORTED: counted as aborted, the rest passed" eval 'run xdp_aborted && took aborted'
ktap_check "XDP_TX: sent back out through the device, the rest passed" \
	eval 'run xdp_tx 9001 10000 && took tx && [ "$d_tx_xdp_frames" -eq "$frames" ] &&
	[ "$d_devtx" -ge "$frames" ] && [ "$d_rx_xdp_errors" -eq 0 ]'
# XDP_TX on a link slower than what a program sends back: the device model
# sends 200 frames a second (ctl tx-rate, as a link sends at its rate),
# the program sends back up to 1000 a second for 12 s on the one queue pair, in
# a ring of 512, and ping sends the stack's frames on the same ring. The
# stack's queue, stopped when it finds the ring full of frames sent back,
# must be woken within the watchdog's 5 s (no transmit timeout), and the
# stack's frames go out.
xdp_tx_paced() {
	combined=$(ethtool -l "$dev" | awk '/^Combined:/ { n = $2 } END { print n }')
	ethtool -L "$dev" combined 1 && ethtool -G "$dev" tx 512 && attach xdp_tx &&
		$host ctl 0 tx-rate 200 >/dev/null || return 1
	ip neigh replace 192.0.2.9 lladdr 02:00:00:00:00:09 dev "$dev" nud permanent
	timeouts=$(ethtool -S "$dev" | sed -n 's/^ *tx_timeouts: //p')
	# The stack's frames sent: all but XDP_TX's.
	stack_out() { echo $(($(pf_qsum "$dev" tx_packets) - $(pf_qsum "$dev" tx_xdp_frames))); }
	stack=$(stack_out)
	ping -q -i 0.02 -w 14 192.0.2.9 >/tmp/ping.out 2>&1 &
	ping=$!
	send 9001 12000 1000
	wait "$ping"
	sent=$(sed -n 's/^\([0-9]*\) packets transmitted.*/\1/p' /tmp/ping.out)
	$host ctl 0 tx-rate 0 >/dev/null
	eventually eval '[ $(($(stack_out) - stack)) -ge "${sent:-1}" ]'
	out=$(($(stack_out) - stack))
	now=$(ethtool -S "$dev" | sed -n 's/^ *tx_timeouts: //p')
	echo "# ping sent ${sent:-none}, the stack's frames out $out; transmit timeouts" \
		"$timeouts before, $now after; sent back $(pf_qsum "$dev" rx_xdp_tx)," \
		"refused $(pf_qsum "$dev" rx_xdp_errors)"
	ip neigh del 192.0.2.9 dev "$dev"
	ip link set dev "$dev" xdpdrv off && ethtool -G "$dev" tx "$tx_ring" &&
		ethtool -L "$dev" combined "$combined" &&
		[ "${sent:-0}" -gt 0 ] && [ "$out" -ge "$sent" ] && [ "$now" = "$timeouts" ]
}
ktap_check "XDP_TX faster than the link, the stack's frames beside: its queue wakes, no timeout" \
	xdp_tx_paced
# Frames to 9002 go to the peer NIC, which sends them to group 4095:
# every one is accounted for by the driver's counters on both NICs and
# by both device models (the peer's sent them; this one, as no NIC joined
# the group, dropped them as unjoined when they came back on the fabric).
ktap_check "XDP_REDIRECT to the second NIC: sent by it; dropped and passed frames accounted for" \
	eval 'run xdp_mix "9001 9002" 10000 && [ "$d_rx_xdp_drop" -eq "$frames" ] &&
	[ "$d_rx_xdp_redirect" -eq "$frames" ] && [ "$d_rx_xdp_pass" -eq "$frames" ] &&
	[ "$d_rx_xdp_errors" -eq 0 ] && [ "$d_rx_packets" -eq "$d_dev" ] &&
	[ "$d_peer_xmit" -eq "$frames" ] && [ "$d_peer_xmit_errors" -eq 0 ] &&
	[ "$d_peer_devtx" -eq "$frames" ] && [ "$d_unjoined" -eq "$frames" ]'
# Reconfigured under traffic with a program attached: this NIC's queues,
# receive ring and MTU change while its program drops one port's frames and
# redirects another's to the peer, whose queues and transmit ring change
# and which goes down and up. Frames that meet a queue restarting or a peer
# down are dropped and counted; nothing may crash or warn, the program
# stays, and then every frame of a clean run is accounted for again.
reconfig() {
	attach xdp_mix || return 1
	rm -f /tmp/reconfig.stop
	(
		while [ ! -e /tmp/reconfig.stop ]; do
			for port in 9001 9002; do
				$host gen --nodes 2-31 --groups 0 --size 64 --count 20 \
					--give-up-ms 2000 --dst-mac "$mac" --dst-ip 192.0.2.1 \
					--src-ip 198.51.100.0 --dport "$port" >/dev/null 2>&1
			done
		done
	) &
	traffic=$!
	i=0 rc=0
	while [ "$i" -lt 8 ]; do
		odd=$((i % 2))
		ethtool -L "$dev" combined $((1 + odd)) &&
			ethtool -L "$peer" combined $((2 - odd)) &&
			ethtool -G "$dev" rx $((256 << odd)) &&
			ethtool -G "$peer" tx $((256 << odd)) &&
			ip link set dev "$dev" mtu $((1400 + 100 * odd)) &&
			ip link set dev "$peer" down &&
			ip link set dev "$peer" up || { rc=1; break; }
		i=$((i + 1))
	done
	touch /tmp/reconfig.stop
	ethtool -G "$peer" tx "$tx_ring" || rc=1
	wait "$traffic"
	echo "# $i rounds of ethtool -L, -G and MTU changes, the peer down and up, under traffic;" \
		"redirects refused: $(pf_qsum "$dev" rx_xdp_errors) here," \
		"$(pf_qsum "$peer" tx_xdp_xmit_errors) by the peer"
	[ "$rc" -eq 0 ] && ip -d link show dev "$dev" | grep -q 'prog/xdp' || return 1
	eventually eval '[ "$(cat "/sys/class/net/$dev/carrier")" = 1 ] &&
		[ "$(cat "/sys/class/net/$peer/carrier")" = 1 ]'
	run xdp_mix "9001 9002" 10000 && [ "$d_rx_xdp_drop" -eq "$frames" ] &&
		[ "$d_rx_xdp_redirect" -eq "$frames" ] && [ "$d_rx_xdp_pass" -eq "$frames" ] &&
		[ "$d_peer_xmit" -eq "$frames" ] && [ "$d_peer_devtx" -eq "$frames" ]
}
ktap_check "ethtool -L/-G and MTU changes, the peer down and up, under redirected traffic" reconfig

ktap_check "a program that claims 192 bytes of headroom and 256 of tailroom has them: all passed" \
	eval 'run xdp_room && [ "$d_rx_xdp_pass" -eq "$d_dev" ] && [ "$d_rx_xdp_aborted" -eq 0 ]'

# Replaced and detached under traffic: 30 streams into the sink while
# programs come and go, each kind of change at least twice and until as many
# frames as the streams carried before (30 times FRAMES / 4, at a rate the
# sink, a Python loop, keeps up with) have come in. The streams send until
# the changes are done (the generator's --weighted-until), however long a
# change takes: seconds on the debug kernel, and a guest that waits for a
# host CPU (a background VM beside busy ones) makes fewer in any fixed
# time. Every frame sent must arrive, in order, and the generator must
# still be sending at the last change.
churn() {
	churn_n=$((30 * (frames / 4)))
	done_file=/run/pf/xdp-churn.done
	rm -f "$done_file"
	pf_sink 9000 - 60
	$host gen --nodes 2-31 --groups 0 --size 64 --count 1 --group-weight 0=2 \
		--weighted-until @OUT@/xdp-churn.done --rate $((frames / 4)) \
		--give-up-ms 20000 --dst-mac "$mac" --dst-ip 192.0.2.1 \
		--src-ip 198.51.100.0 --dport 9000 >/tmp/gen.out &
	gen=$!
	rx_stat=/sys/class/net/$dev/statistics/rx_packets
	rx0=$(cat "$rx_stat")
	overflow0=$(pf_udp_rcvbuf_errors)
	i=0 rc=0
	# At most 400 changes: a stream that no longer arrives ends it.
	while [ "$i" -lt 8 ] || { [ "$i" -lt 400 ] &&
		[ $(($(cat "$rx_stat") - rx0)) -lt "$churn_n" ]; }; do
		kill -0 "$gen" 2>/dev/null || { rc=1; break; }
		case $((i % 4)) in
		0) attach xdp_room ;;
		1) attach xdp_pass ;;
		2) ip link set dev "$dev" xdpdrv off ;;
		3) attach xdp_drop ;;
		esac || { rc=1; break; }
		i=$((i + 1))
	done
	kill -0 "$gen" 2>/dev/null || rc=1
	touch "$done_file"
	wait "$gen" || rc=1
	# The sink's count: what the generator sent ("frames N" in its report;
	# none from a generator that failed, which fails the point anyway).
	awk '{ for (f = 1; f < NF; f++) if ($f == "frames") n = $(f + 1) }
		END { print n + 0 }' /tmp/gen.out >/tmp/gen.sent.tmp
	mv /tmp/gen.sent.tmp /tmp/gen.sent
	wait "$pf_sink" || rc=1
	echo "# $i program changes under traffic; sink: $(cat /tmp/sink.out);" \
		"generator: $(cat /tmp/gen.out);" \
		"the socket overflowed $(($(pf_udp_rcvbuf_errors) - overflow0)) times"
	[ "$rc" -eq 0 ] && [ "$i" -lt 400 ]
}
ktap_check "programs replaced and detached under traffic: no frame lost" churn

# Jumbo frames: at MTU 9000 the receive buffers grow to hold a frame with
# XDP's room, and a program sees each frame whole, in one buffer.
jumbo() {
	attach xdp_pass && ip link set dev "$dev" mtu 9000 || return 1
	before=$(pf_qsum "$dev" rx_xdp_pass)
	pf_sink 9000 200 120
	$host gen --nodes 2 --groups 0 --size 9014 --count 200 --give-up-ms 20000 \
		--dst-mac "$mac" --dst-ip 192.0.2.1 --src-ip 198.51.100.0 --dport 9000 >/tmp/gen.out
	pf_sent
	wait "$pf_sink"
	rc=$?
	eventually eval '[ "$(pf_qsum "$dev" rx_xdp_pass)" -ge $((before + 200)) ]'
	passed=$(($(pf_qsum "$dev" rx_xdp_pass) - before))
	echo "# MTU 9000: sink: $(cat /tmp/sink.out); passed $passed"
	[ "$rc" -eq 0 ] && [ "$passed" -eq 200 ] &&
		ip link set dev "$dev" mtu 1500
}
ktap_check "MTU 9000 with a program attached: 200 frames of 9014 bytes through it, all passed" jumbo

ip link set dev "$dev" xdpdrv off
ktap_check "detached: no program left" eval '! ip -d link show dev "$dev" | grep -q "prog/xdp"'
# A frame must fit one buffer with the room XDP promises, unless the
# program takes fragments: 4 KiB buffers and a 4000-byte MTU leave none.
ktap_check "a program without xdp.frags is refused where a frame and its room do not fit a \
buffer, with a reason" \
	eval 'ip link set dev "$dev" mtu 4000 && ethtool -G "$dev" rx-buf-len 4096 &&
	! ip link set dev "$dev" xdpdrv obj "$obj" sec xdp_pass 2>/tmp/err &&
	grep -q "MTU too large for XDP without multi-buffer support" /tmp/err'
# Multi-buffer XDP: there, a program with xdp.frags sees each 4014-byte
# frame in two buffers (3520 bytes in the first, after XDP's headroom and
# before its tailroom). It sends one port's frames back (a descriptor per
# buffer), redirects another's to the peer (whose ndo_xdp_xmit takes the
# fragment: NDO_XMIT_SG) and passes the rest, which the stack checks byte
# for byte: the generator fills every payload byte and sums them in the
# UDP checksum, and with the receive checksum offload off the stack
# verifies it on the skb the driver copied from both buffers.
# A tenth of the run's frames to each port (300 on the fast kernel, 60 on
# the debug kernel, where each 4 KiB copy is checked byte by byte by KASAN):
# every path a frame in two buffers takes is there with a few.
multi_buf() {
	old_frames=$frames
	frames=$((frames / 10)) size=4014 fill=1
	ip link set dev "$peer" mtu 4000 && ethtool -K "$dev" rx off &&
		eventually eval '[ "$(cat "/sys/class/net/$dev/carrier")" = 1 ] &&
			[ "$(cat "/sys/class/net/$peer/carrier")" = 1 ]' &&
		run xdp.frags "9001 9002" 2000 && [ "$d_rx_xdp_multi_buf" -eq "$d_dev" ] &&
		[ "$d_rx_xdp_tx" -eq "$frames" ] && [ "$d_tx_xdp_frames" -eq "$frames" ] &&
		[ "$d_devtx" -ge "$frames" ] && [ "$d_rx_xdp_redirect" -eq "$frames" ] &&
		[ "$d_rx_xdp_pass" -eq "$frames" ] && [ "$d_rx_xdp_errors" -eq 0 ] &&
		[ "$d_peer_xmit" -eq "$frames" ] && [ "$d_peer_xmit_errors" -eq 0 ] &&
		[ "$d_peer_devtx" -eq "$frames" ] && [ "$d_unjoined" -eq "$frames" ]
	rc=$?
	frames=$old_frames size=64 fill=0
	ip link set dev "$dev" xdpdrv off && ethtool -K "$dev" rx on &&
		ip link set dev "$peer" mtu 1500 && [ "$rc" -eq 0 ]
}
ktap_check "multi-buffer: 4014-byte frames in two 4 KiB buffers sent back, redirected to the \
peer and passed intact" \
	multi_buf
ktap_check "with a program attached, an MTU its frames would not fit is refused" \
	eval 'ip link set dev "$dev" mtu 1500 && attach xdp_pass &&
	! ip link set dev "$dev" mtu 4000 &&
	[ "$(cat /sys/class/net/$dev/mtu)" -eq 1500 ]'
ktap_check "rmmod with a program attached" eval 'ip link set "$dev" down && pf_unload'
ktap_check "no warning or other report in the kernel log" pf_log_clean
pf_kmemleak_check
ktap_finish
