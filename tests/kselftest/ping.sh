#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# ping.sh [PAGEFILL_KO]: two pagefill NICs on one fabric, the second moved
# into a network namespace: IPv4 and IPv6 ping both ways, and TCP both ways
# with every byte counted at the receiver; iperf3's throughput for the record.
# Scatter-gather and checksum offload are on: TCP's segments go out as a
# linear part and page fragments, mapped in place, with the checksum
# inserted by the device, and the receiver finds none wrong; the receiving
# device checked them too (CHECKSUM_UNNECESSARY).
. "$(dirname "$0")/ktap.sh"
ko=${1:-}
ktap_plan 11
pf_load "$ko"
pf_pair
ip addr add 2001:db8::1/64 dev "$a" nodad
ip -n peer addr add 2001:db8::2/64 dev "$b" nodad

ktap_check "ping 192.0.2.2 from the root namespace" ping -c 5 -i 0.2 -W 2 192.0.2.2
ktap_check "ping 192.0.2.1 from the peer namespace" \
	ip netns exec peer ping -c 5 -i 0.2 -W 2 192.0.2.1
ktap_check "ping6 2001:db8::2" ping -6 -c 5 -i 0.2 -W 2 2001:db8::2
ktap_check "ping6 2001:db8::1 from the peer" ip netns exec peer ping -6 -c 5 -i 0.2 -W 2 2001:db8::1

# tcp FROM TO: 4 MiB over TCP, the receiver counting every byte until the
# sender closes: TCP either delivers all of it through the two NICs or the
# count is short.
tcp() {
	if [ "$1" = here ]; then
		ip netns exec peer \
			sh -c 'socat -u TCP-LISTEN:5000,reuseaddr - | wc -c >/tmp/tcp.count' &
		eventually_long pf_listening peer 5000 || return 1
		head -c 4194304 /dev/zero | socat -u - TCP:192.0.2.2:5000 || return 1
	else
		sh -c 'socat -u TCP-LISTEN:5001,reuseaddr - | wc -c >/tmp/tcp.count' &
		eventually_long pf_listening "" 5001 || return 1
		head -c 4194304 /dev/zero |
			ip netns exec peer socat -u - TCP:192.0.2.1:5001 || return 1
	fi
	wait
	echo "# TCP from $1: $(cat /tmp/tcp.count) bytes received"
	[ "$(cat /tmp/tcp.count)" -eq 4194304 ]
}
ktap_check "TCP, 4 MiB from the root namespace to the peer, every byte" tcp here
ktap_check "TCP, 4 MiB from the peer to the root namespace, every byte" tcp peer
feature() { ethtool -k "$a" | grep -qE "^[[:space:]]*$1: on"; }
ktap_check "scatter-gather, generic checksum and receive checksum offload are on" \
	eval 'feature scatter-gather && feature tx-checksum-ip-generic && feature rx-checksumming'
es() { ethtool -S "$a" | sed -n "s/^ *$1: //p"; }
ethtool -S "$a" | grep -E 'tx[0-9]_(packets|sg_frames|csum_offload)' | sed 's/^ */# /'
ktap_check "TCP went out in fragments, with device checksums" eval \
	'[ "$(pf_qsum "$a" tx_sg_frames)" -gt 0 ] && [ "$(pf_qsum "$a" tx_csum_offload)" -gt 0 ]'
ktap_check "TCP came in with checksums the device checked (rx csum_unnecessary)" \
	[ "$(pf_qsum "$a" rx_csum_unnecessary)" -gt 0 ]
csum_errors() { awk '/^Tcp:/ { if (h) print $NF; h = 1 }' "$@"; }
ktap_check "no TCP checksum error at either end" \
	eval '[ "$(csum_errors /proc/net/snmp)" -eq 0 ] &&
	[ "$(ip netns exec peer cat /proc/net/snmp | csum_errors)" -eq 0 ]'
# Throughput, for the record (iperf3's byte counts at the end of a test
# are not exact; the checks above are).
ip netns exec peer iperf3 -s -D -1 -p 5201 --logfile /tmp/iperf3.srv
eventually_long pf_listening peer 5201
echo "# iperf3: $(iperf3 -c 192.0.2.2 -p 5201 -n 4M -J | jq '.end.sum_sent.bits_per_second') bit/s"
echo "# $a: $(ip -s link show "$a" | sed -n '4p;6p' | tr -s ' ' | tr '\n' ' ')"
ip netns del peer
rmmod pagefill
pf_kmemleak_check
ktap_finish
