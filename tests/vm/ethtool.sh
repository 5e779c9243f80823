#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# ethtool.sh PAGEFILL_KO: ethtool -i names the driver and the PCI device,
# the link settings show the device's speed, and ethtool -S counts what the
# interface's own statistics count.
. "$(dirname "$0")/ktap.sh"
ko=$1
ktap_plan 4
insmod "$ko"
# No IPv6 chatter: the counters must stand still while they are compared.
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
	[ "$(s rx0_packets)" -eq "$(cat /sys/class/net/$a/statistics/rx_packets)" ] &&
		[ "$(s tx0_packets)" -eq "$(cat /sys/class/net/$a/statistics/tx_packets)" ] &&
		[ "$(s rx0_packets)" -ge 5 ] && [ "$(s tx0_packets)" -ge 5 ]
}
# Neighbour probes may still come and go: the two must agree when still.
ktap_check "ethtool -S agrees with the interface statistics" eventually agree
ktap_check "no bad completions" [ "$(s rx0_bad_completions)" -eq 0 ]
ip netns del peer
rmmod pagefill
ktap_finish
