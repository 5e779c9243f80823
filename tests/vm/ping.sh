#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# ping.sh PAGEFILL_KO: two pagefill NICs on one fabric, the second moved
# into a network namespace: IPv4 and IPv6 ping both ways, and TCP both ways
# with iperf3, byte counts checked against the interfaces' counters.
. "$(dirname "$0")/ktap.sh"
ko=$1
ktap_plan 7
insmod "$ko"
pf_pair
ip addr add 2001:db8::1/64 dev "$a" nodad
ip -n peer addr add 2001:db8::2/64 dev "$b" nodad

ktap_check "ping 192.0.2.2 from the root namespace" ping -c 5 -i 0.2 -W 2 192.0.2.2
ktap_check "ping 192.0.2.1 from the peer namespace" ip netns exec peer ping -c 5 -i 0.2 -W 2 192.0.2.1
ktap_check "ping6 2001:db8::2" ping -6 -c 5 -i 0.2 -W 2 2001:db8::2
ktap_check "ping6 2001:db8::1 from the peer" ip netns exec peer ping -6 -c 5 -i 0.2 -W 2 2001:db8::1

ip netns exec peer iperf3 -s -D -1 -p 5201 --logfile /tmp/iperf3.srv
sleep 0.5
# tcp [-R]: 4 MB over TCP (-R: the peer sends). The client returns once it
# has written the 4 MB; the last segments may still be on their way, so the
# check is that the receiving interface delivers at least the 4 MB soon.
rx_bytes() { # rx_bytes NETNS DEV
	ip netns exec "$1" cat "/sys/class/net/$2/statistics/rx_bytes"
}
tcp() {
	if [ "$1" = -R ]; then ns=; dev=$a; else ns=peer; dev=$b; fi
	before=$(if [ -n "$ns" ]; then rx_bytes "$ns" "$dev"; else cat "/sys/class/net/$dev/statistics/rx_bytes"; fi)
	iperf3 -c 192.0.2.2 -p 5201 -n 4M $1 -J >/tmp/iperf3.json || return 1
	delivered() {
		after=$(if [ -n "$ns" ]; then rx_bytes "$ns" "$dev"; else cat "/sys/class/net/$dev/statistics/rx_bytes"; fi)
		[ $((after - before)) -ge 4194304 ]
	}
	eventually delivered
	rc=$?
	echo "# iperf3 $1: sent $(jq '.end.sum_sent.bytes' /tmp/iperf3.json) bytes at $(jq '.end.sum_sent.bits_per_second' /tmp/iperf3.json) bit/s; receiving $dev rx_bytes +$((after - before))"
	return $rc
}
ktap_check "TCP, 4 MB from the root namespace to the peer" tcp ""
ip netns exec peer iperf3 -s -D -1 -p 5201 --logfile /tmp/iperf3.srv
sleep 0.5
ktap_check "TCP, 4 MB from the peer to the root namespace (-R)" tcp -R
echo "# $a: $(ip -s link show "$a" | sed -n '4p;6p' | tr -s ' ' | tr '\n' ' ')"
ip netns del peer
rmmod pagefill
ktap_check "no kmemleak report" pf_kmemleak_clean
ktap_finish
