#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# surprise.sh [PAGEFILL_KO]: the device goes away under traffic, twice.
#
# First it is removed from the PCI bus (sysfs remove: the same remove()
# a PCIe hot-unplug makes) while frames come in and go out: remove
# completes, the interface goes, a rescan brings the device back and
# traffic passes again. (QEMU's own hot-unplug, device_del, aborts QEMU
# 11.1 for any vfio-user device with MSI-X; see testbed.rst.)
#
# Then the device model process is killed in the middle of a generator
# burst (QEMU stays up; the device no longer answers or moves data) while
# the guest pings out. The driver does not hang or crash: the transmit
# watchdog fires, the restart fails cleanly, the interface goes down and
# the driver unloads; loaded again, probe refuses the silent device cleanly.
# kmemleak finds nothing.
. "$(dirname "$0")/ktap.sh"
ko=${1:-}
here=$(dirname "$0")
host=pf_host
pf_need_host
ktap_plan 11
pf_load "$ko"
bdf=$(pf_nics | head -n 1)
es() { ethtool -S "$dev" | sed -n "s/^ *$1: //p"; }
# up: the NIC's interface, addressed and up, with a neighbour to send to.
up() {
	dev=$(ls "/sys/bus/pci/devices/$bdf/net") &&
		ip addr add 192.0.2.1/24 dev "$dev" &&
		ip link set "$dev" up &&
		eventually eval '[ "$(cat "/sys/class/net/$dev/carrier")" = 1 ]' &&
		ip neigh replace 192.0.2.9 lladdr 02:50:46:4c:00:09 dev "$dev" &&
		mac=$(cat "/sys/class/net/$dev/address")
}
passes() {
	$host gen --nodes 1-31 --groups 0 --size 64 --count 20 --dst-mac "$mac" \
		--dst-ip 192.0.2.1 --src-ip 198.51.100.0 >/dev/null
}
# under_traffic: in the background, a generator burst to the NIC of 200
# frames a stream at 1000 frames/s (some 6 s; it gives up 3 s after its
# streams stop), paced so that the guest's own commands still get to run
# on a debug kernel under TCG, and pings out of the NIC; their pids in
# $gen and $out, the generator's report in /tmp/gen.out.
under_traffic() {
	$host gen --nodes 1-31 --groups 0 --size 64 --count 200 --rate 1000 --give-up-ms 3000 \
		--dst-mac "$mac" --dst-ip 192.0.2.1 --src-ip 198.51.100.0 >/tmp/gen.out 2>&1 &
	gen=$!
	timeout 30 ping -q -i 0.002 -c 3000 192.0.2.9 >/dev/null 2>&1 &
	out=$!
	sleep 1
}
# end_traffic: the generator's burst ends, then the pings: ping would
# otherwise wait its 10 s linger for answers that cannot come. A transmit
# ring the dead device left full stays full (the watchdog still fires).
end_traffic() {
	wait "$gen"
	kill "$out" 2>/dev/null
	wait "$out"
}

up
ktap_check "traffic passes before" passes
under_traffic
ktap_check "removed from the bus under traffic: remove completes" \
	timeout 60 sh -c "echo 1 >/sys/bus/pci/devices/$bdf/remove"
ktap_check "the burst was still running when remove completed" kill -0 "$gen"
end_traffic
echo "# generator: $(cat /tmp/gen.out)"
ktap_check "the interface is gone with the device" eval '[ ! -e "/sys/class/net/$dev" ]'
echo 1 >/sys/bus/pci/rescan
ktap_check "a rescan finds the device again and traffic passes" \
	eval 'eventually_long test -e "/sys/bus/pci/devices/$bdf/net" && up && passes'

# The host agent serves requests side by side: the model dies 2 s after
# this request, within the burst.
$host kill 0 2 >/tmp/kill.out &
killer=$!
under_traffic
wait "$killer"
end_traffic
echo "# host agent: $(cat /tmp/kill.out)"
echo "# generator: $(cat /tmp/gen.out)"
ktap_check "the device model was killed in the middle of a burst" \
	grep -q "while a generator ran" /tmp/kill.out
ktap_check "the device vanished under traffic: the watchdog fired, the restart failed cleanly" \
	eventually_long eval '[ "$(es restarts_failed)" -ge 1 ]'
echo "# tx_timeouts $(es tx_timeouts) restarts $(es restarts) restarts_failed $(es restarts_failed)"
ktap_check "ip link set down completes" timeout 60 ip link set "$dev" down
# The failed restart abandoned the buffers the dead device might still
# write: they stay mapped for good (pf_rmmod_abandoned).
ktap_check "rmmod completes (with the DMA-API debugging: the abandoned buffers, "\
"and no other error)" \
	pf_rmmod_abandoned "$bdf"
probe_refused() {
	pf_load "$ko" && [ ! -e "/sys/bus/pci/devices/$bdf/net" ] &&
		dmesg | tail -n 5 | grep -q "pagefill $bdf"
}
ktap_check "loaded again, probe refuses the silent device" probe_refused
dmesg | tail -n 3 | sed 's/^/# /'
rmmod pagefill
pf_kmemleak_check
ktap_finish
