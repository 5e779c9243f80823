#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# ethtool.sh [PAGEFILL_KO]: ethtool -i names the driver and the PCI device,
# the link settings show the device's speed, ethtool -S counts what the
# interface's own statistics count; -g/-G, -c/-C and -l/-L change what they
# say and traffic passes after each change; a jumbo MTU brings larger
# buffers; with two channels, netlink (ynl) shows the queues, a NAPI
# instance per queue pair with its interrupt, and the page pools; each
# queue's coalescing is set apart (--per-queue), and adaptive-rx gives a
# queue that receives net_dim()'s timer, the device's register checked.
. "$(dirname "$0")/ktap.sh"
ko=${1:-}
ktap_plan 20
pf_load "$ko"
# No IPv6 chatter: the counters must stand still while they are compared.
# Put back at the end: a test after this one in the same boot finds IPv6 as
# it was (ping's IPv6 points need it).
v6_all=$(sysctl -n net.ipv6.conf.all.disable_ipv6)
v6_default=$(sysctl -n net.ipv6.conf.default.disable_ipv6)
sysctl -qw net.ipv6.conf.all.disable_ipv6=1 net.ipv6.conf.default.disable_ipv6=1
pf_pair
ip netns exec peer sysctl -qw net.ipv6.conf.all.disable_ipv6=1 net.ipv6.conf.default.disable_ipv6=1
bdf=$bdf_a
ping -c 5 -i 0.2 -W 2 192.0.2.2 >/dev/null
sleep 1

drvinfo() {
	ethtool -i "$a" | grep -qx 'driver: pagefill' &&
		ethtool -i "$a" | grep -qx "bus-info: $bdf"
}
ktap_check "ethtool -i: driver pagefill on $bdf" drvinfo
link() { ethtool "$a" | grep -q 'Speed: 2500Mb/s' && ethtool "$a" | grep -q 'Link detected: yes'; }
ktap_check "ethtool: 2500 Mb/s, link detected" link
s() { ethtool -S "$a" | sed -n "s/^ *$1: //p"; }
agree() {
	rxp=$(pf_qsum "$a" rx_packets) txp=$(pf_qsum "$a" tx_packets)
	[ "$rxp" -eq "$(cat /sys/class/net/$a/statistics/rx_packets)" ] &&
		[ "$txp" -eq "$(cat /sys/class/net/$a/statistics/tx_packets)" ] &&
		[ "$rxp" -ge 5 ] && [ "$txp" -ge 5 ]
}
# Neighbour probes may still come and go: the two must agree when still.
ktap_check "ethtool -S agrees with the interface statistics" eventually agree
ktap_check "no bad completions" [ "$(pf_qsum "$a" rx_bad_completions)" -eq 0 ]

# ring PARAM: the current value of PARAM ("RX", "TX", "RX Buf Len") in -g.
ring() {
	ethtool -g "$a" | sed -n '/^Current/,$p' | sed -n "s/^$1:[[:space:]]*//p"
}
pings() { ping -c 3 -i 0.2 -W 2 -s "${1:-56}" -M do 192.0.2.2 >/dev/null; }
default_rings() {
	[ "$(ring RX)" = 1024 ] && [ "$(ring TX)" = 512 ] &&
		[ "$(ring 'RX Buf Len')" = 32768 ]
}
ktap_check "ethtool -g: rx 1024, tx 512, rx-buf-len 32768 (16 frames at MTU 1500)" default_rings
set_rings() { ethtool -G "$a" rx 64 tx 100 && [ "$(ring RX)" = 64 ] && [ "$(ring TX)" = 128 ]; }
ktap_check "ethtool -G rx 64 tx 100: rx 64, tx 128 (a power of two), traffic passes" \
	eval 'set_rings && pings'
ktap_check "ethtool -G rx 63 and rx-buf-len 3000 are refused" \
	eval '! ethtool -G "$a" rx 63 2>/dev/null && ! ethtool -G "$a" rx-buf-len 3000 2>/dev/null'
jumbo() {
	ip link set "$a" mtu 9000 && ip -n peer link set "$b" mtu 9000 &&
		[ "$(ring 'RX Buf Len')" = 32768 ] && pings 8000 &&
		ip netns exec peer ping -c 3 -i 0.2 -W 2 -s 8000 -M do 192.0.2.1 >/dev/null
}
ktap_check "MTU 9000 on both ends keeps 32 KiB buffers: 8000-byte pings both ways" jumbo
ktap_check "rx-buf-len 4096 is refused while the MTU needs more; 16384 is taken" \
	eval '! ethtool -G "$a" rx-buf-len 4096 2>/dev/null && ethtool -G "$a" rx-buf-len 16384 &&
		[ "$(ring "RX Buf Len")" = 16384 ] && pings 8000'
back() {
	ip link set "$a" mtu 1500 && ip -n peer link set "$b" mtu 1500 &&
		ethtool -G "$a" rx 1024 tx 512 rx-buf-len 4096 && pings
}
ktap_check "MTU 1500, default rings and one-page buffers, traffic passes" back

usecs() { ethtool -c "$a" | sed -n 's/^rx-usecs:[[:space:]]*//p'; }
coalesce() {
	[ "$(usecs)" = 50 ] && ethtool -C "$a" rx-usecs 0 && [ "$(usecs)" = 0 ] && pings &&
		ethtool -C "$a" rx-usecs 200 && [ "$(usecs)" = 200 ] && pings &&
		! ethtool -C "$a" rx-usecs 20000 2>/dev/null
}
ktap_check "ethtool -C rx-usecs 0 and 200 take effect, 20000 is refused" coalesce
combined() {
	ethtool -l "$a" | sed -n "/^$1/,\$p" | sed -n 's/^Combined:[[:space:]]*//p' | head -n 1
}
channels() {
	[ "$(combined Pre-set)" = 4 ] && [ "$(combined Current)" = "$(pf_default_queues)" ] &&
		ethtool -L "$a" combined 1 && [ "$(combined Current)" = 1 ] && pings &&
		ethtool -L "$a" combined 2 && [ "$(combined Current)" = 2 ] &&
		! ethtool -L "$a" combined 5 2>/dev/null && pings &&
		ip netns exec peer ping -c 3 -i 0.2 -W 2 192.0.2.1 >/dev/null
}
ktap_check "ethtool -l: up to 4 combined channels, one per core at first; "\
"-L combined 1 and 2 take effect, 5 is refused" channels

ifindex=$(cat "/sys/class/net/$a/ifindex")
pf_ynl --dump queue-get --json "{\"ifindex\": $ifindex}" >/tmp/queues 2>&1
sed 's/^/# /' /tmp/queues
queues() {
	[ "$(grep -c "'type': 'rx'" /tmp/queues)" -eq 2 ] &&
		[ "$(grep -c "'type': 'tx'" /tmp/queues)" -eq 2 ] &&
		[ "$(grep -c "'napi-id'" /tmp/queues)" -eq 4 ]
}
ktap_check "ynl queue-get: two rx and two tx queues, each with its NAPI instance" queues
pf_ynl --dump napi-get --json "{\"ifindex\": $ifindex}" >/tmp/napi 2>&1
sed 's/^/# /' /tmp/napi
irqs() {
	for q in 0 1; do
		irq=$(grep "pagefill-q$q\$" /proc/interrupts | sed 's/^ *\([0-9]*\):.*/\1/')
		[ -n "$irq" ] && grep -q "'irq': $irq," /tmp/napi || return 1
	done
}
ktap_check "ynl napi-get: a NAPI instance per queue pair, each with its interrupt" irqs
pf_ynl --dump page-pool-get >/tmp/pools 2>&1
sed 's/^/# /' /tmp/pools
ktap_check "ynl page-pool-get: a page pool per queue on the interface" \
	[ "$(grep -c "'ifindex': $ifindex" /tmp/pools)" -eq 2 ]

# Coalescing per queue: what ethtool --per-queue shows of queue $1, its
# rx-usecs and whether adaptive; and the timer the device holds for it
# (its model's register, through the host agent).
qcoal() { ethtool --per-queue "$a" queue_mask "$((1 << $1))" --show-coalesce; }
qusecs() { qcoal "$1" | sed -n 's/^rx-usecs:[[:space:]]*//p'; }
qadaptive() { qcoal "$1" | sed -n 's/^Adaptive RX:[[:space:]]*\([a-z]*\).*/\1/p'; }
dev_usecs() { pf_host ctl 0 stats | sed -n "s/^coalesce_usecs $1 //p"; }
# dev_agrees Q...: each queue's timer in the device is what ethtool shows
# (without the host agent, nothing to compare).
dev_agrees() {
	[ -d /run/pf ] || return 0
	for q; do [ "$(dev_usecs "$q")" = "$(qusecs "$q")" ] || return 1; done
}
per_queue() {
	ethtool --per-queue "$a" queue_mask 0x2 --coalesce rx-usecs 7 &&
		[ "$(qusecs 1)" = 7 ] && [ "$(qusecs 0)" = 200 ] && [ "$(usecs)" = 200 ] &&
		dev_agrees 0 1 && pings
}
ktap_check "ethtool --per-queue: queue 1's rx-usecs 7, queue 0's 200, in the device too; "\
"traffic passes" per_queue
# net_dim()'s receive profiles counted from a completion (lib/dim).
dim_profile() { case "$1" in 2 | 8 | 16 | 32 | 64) return 0 ;; esac; return 1; }
adaptive() {
	ethtool -C "$a" adaptive-rx on && ethtool -c "$a" | grep -q '^Adaptive RX:[[:space:]]*on' &&
		[ "$(qadaptive 0)" = on ] && [ "$(qadaptive 1)" = on ] || return 1
	ping -f -c 400 -W 2 192.0.2.2 >/dev/null || return 1
	# The queue the peer's stream is steered to took net_dim()'s profile.
	chosen=
	for q in 0 1; do
		u=$(qusecs "$q")
		echo "# queue $q: rx-usecs $u"
		dim_profile "$u" && dev_agrees "$q" && chosen=$q
	done
	[ -n "$chosen" ]
}
ktap_check "ethtool -C adaptive-rx on: under a ping flood, net_dim()'s timer on the queue "\
"that received, in the device too" adaptive
fixed_again() {
	ethtool -C "$a" adaptive-rx off rx-usecs 50 &&
		ethtool -c "$a" | grep -q '^Adaptive RX:[[:space:]]*off' &&
		[ "$(qadaptive 0)" = off ] && [ "$(qusecs 0)" = 50 ] && [ "$(qusecs 1)" = 50 ] &&
		dev_agrees 0 1 && pings
}
ktap_check "ethtool -C adaptive-rx off rx-usecs 50: every queue 50 again, in the device too" \
	fixed_again
ktap_check "ethtool -L combined 1 again, traffic passes" eval 'ethtool -L "$a" combined 1 && pings'
ip netns del peer
rmmod pagefill
sysctl -qw net.ipv6.conf.all.disable_ipv6="$v6_all" \
	net.ipv6.conf.default.disable_ipv6="$v6_default"
pf_kmemleak_check
ktap_finish
