#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# netdev.sh [PAGEFILL_KO]: each NIC becomes an Ethernet interface with the
# device's MAC address and MTU limits; opening it enables the device with its
# tables and rings and the carrier follows the link the device reports;
# it goes away cleanly with the device.
. "$(dirname "$0")/ktap.sh"
ko=${1:-}
drv=/sys/bus/pci/drivers/pagefill
ktap_plan 9
pf_load "$ko"

# The interface of a PCI device, from sysfs.
ifname() { ls "/sys/bus/pci/devices/$1/net" 2>/dev/null; }

ok=0 i=0
for bdf in $(pf_nics); do
	dev=$(ifname "$bdf")
	mac=$(printf '02:50:46:4c:00:%02x' "$i")
	[ -n "$dev" ] && [ "$(cat /sys/class/net/$dev/address)" = "$mac" ] && ok=$((ok + 1))
	i=$((i + 1))
done
ktap_check "one interface per NIC, with the device's MAC" [ "$ok" -eq "$PF_NICS" ]

bdf=$(pf_nics | head -n 1)
dev=$(ifname "$bdf")
ktap_check "$dev comes up" ip link set "$dev" up
carrier_cycles() {
	[ "$(cat /sys/class/net/$dev/carrier)" = 1 ] &&
		ip link set "$dev" down && ip link set "$dev" up &&
		[ "$(cat /sys/class/net/$dev/carrier)" = 1 ]
}
ktap_check "$dev has carrier: the enabled device reports link up, again after down/up" \
	carrier_cycles

max=$(ip -d link show "$dev" | sed -n 's/.* maxmtu \([0-9]*\).*/\1/p')
# 9202: the fabric's 9216-byte frame less the Ethernet header.
buflen() { ethtool -g "$dev" | sed -n '/^Current/,$p' | sed -n 's/^RX Buf Len:[[:space:]]*//p'; }
# Buffers nobody sized hold 16 full-sized frames (record header included),
# rounded up to a power of two, from a page to 32 KiB, the most a pool
# serves: MTU 200 -> 16 x 224 bytes -> 4 KiB, 400 -> 8 KiB, 900 -> 16 KiB,
# 1500 and up -> 32 KiB.
mtu_auto() {
	[ "$max" -eq 9202 ] && [ "$(buflen)" = 32768 ] &&
		ip link set "$dev" mtu 900 && [ "$(buflen)" = 16384 ] &&
		ip link set "$dev" mtu 400 && [ "$(buflen)" = 8192 ] &&
		ip link set "$dev" mtu 200 && [ "$(buflen)" = 4096 ] &&
		ip link set "$dev" mtu "$max" && [ "$(buflen)" = 32768 ] &&
		! ip link set "$dev" mtu $((max + 1)) 2>/dev/null &&
		! ip link set "$dev" mtu 67 2>/dev/null &&
		[ "$(cat /sys/class/net/$dev/mtu)" -eq "$max" ] &&
		ip link set "$dev" mtu 1500 && [ "$(buflen)" = 32768 ]
}
ktap_check "MTU 68..9202; buffers nobody sized follow the MTU (4 KiB at 200 to 32 KiB at 1500)" \
	mtu_auto
# A 4 KiB buffer holds a frame of MTU 4074 with its record header.
mtu_chosen() {
	ethtool -G "$dev" rx-buf-len 4096 && [ "$(buflen)" = 4096 ] &&
		ip link set "$dev" mtu 4074 && [ "$(buflen)" = 4096 ] &&
		ip link set "$dev" mtu 4075 && [ "$(buflen)" = 8192 ] &&
		ip link set "$dev" mtu "$max" && [ "$(buflen)" = 16384 ] &&
		ip link set "$dev" mtu 1500 && [ "$(buflen)" = 16384 ] &&
		ethtool -G "$dev" rx-buf-len 4096 && [ "$(buflen)" = 4096 ]
}
ktap_check "rx-buf-len the user chose stays across MTU changes, growing only to hold a frame" \
	mtu_chosen

# The 64-bit statistics of a netlink reply (IFLA_STATS64) start where the
# attributes before them end: nla_reserve_64bit() aligns them to 8 bytes
# only where unaligned access is slow, not on x86. The interface's alias
# (IFLA_IFALIAS, before them) moves them by 4 bytes: "a" takes 8 bytes,
# "abcde" 12, so one of the two puts them at 4 mod 8, where the driver
# must not take them for aligned (the debug kernel's Rust checks a
# reference's alignment and panics).
stats_any_alignment() {
	for alias in a abcde; do
		ip link set dev "$dev" alias "$alias" &&
			ip -s link show dev "$dev" | grep -q 'RX:' || return 1
	done
	ip link set dev "$dev" alias ""
}
ktap_check "its statistics read over netlink at either alignment of their attribute" \
	stats_any_alignment

rebind() {
	echo "$bdf" >"$drv/unbind" && [ -z "$(ifname "$bdf")" ] &&
		echo "$bdf" >"$drv/bind" && [ -n "$(ifname "$bdf")" ]
}
ktap_check "unbind removes the interface, bind brings it back" rebind
dev=$(ifname "$bdf")
ip link set "$dev" up
ktap_check "rmmod with the interface up" rmmod pagefill
pf_kmemleak_check
ktap_finish
