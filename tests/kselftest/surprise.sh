#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# surprise.sh [PAGEFILL_KO]: the device vanishes under traffic. The device
# model process is killed (QEMU stays up, the device no longer answers or
# moves data) as a generator burst to the guest ends (the host agent takes
# one request at a time) and while the guest sends out. The driver does not hang or crash: the transmit watchdog fires, the
# restart fails cleanly, the interface goes down and the driver unloads;
# loaded again, probe refuses the silent device cleanly. kmemleak finds
# nothing.
. "$(dirname "$0")/ktap.sh"
ko=${1:-}
here=$(dirname "$0")
host="sh $here/pf-host.sh"
pf_need_host
ktap_plan 6
pf_load "$ko"
bdf=$(pf_nics | head -n 1)
dev=$(ls "/sys/bus/pci/devices/$bdf/net")
ip addr add 192.0.2.1/24 dev "$dev"
ip link set "$dev" up
eventually eval '[ "$(cat "/sys/class/net/$dev/carrier")" = 1 ]'
mac=$(cat "/sys/class/net/$dev/address")
es() { ethtool -S "$dev" | sed -n "s/^ *$1: //p"; }
ip neigh replace 192.0.2.9 lladdr 02:50:46:4c:00:09 dev "$dev"
ktap_check "traffic passes before" eval \
	'$host gen --nodes 1-31 --groups 0 --size 64 --count 20 --dst-mac "$mac" --dst-ip 192.0.2.1 --src-ip 198.51.100.0 >/dev/null'

$host gen --nodes 1-31 --groups 0 --size 64 --count 200 --give-up-ms 3000 \
	--dst-mac "$mac" --dst-ip 192.0.2.1 --src-ip 198.51.100.0 >/dev/null 2>&1 &
gen=$!
timeout 60 python3 - <<PY &
import socket
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.setblocking(False)
for i in range(20000):
    try:
        s.sendto(b"x" * 32, ("192.0.2.9", 9))
    except OSError:
        pass
PY
out=$!
sleep 0.5
$host kill 0 >/dev/null
wait "$gen" "$out"
ktap_check "the device vanished under traffic: the watchdog fired, the restart failed cleanly" \
	eventually_long eval '[ "$(es restarts_failed)" -ge 1 ]'
echo "# tx_timeouts $(es tx_timeouts) restarts $(es restarts) restarts_failed $(es restarts_failed)"
ktap_check "ip link set down completes" timeout 60 ip link set "$dev" down
ktap_check "rmmod completes" timeout 60 rmmod pagefill
probe_refused() {
	pf_load "$ko" && [ ! -e "/sys/bus/pci/devices/$bdf/net" ] &&
		dmesg | tail -n 5 | grep -q "pagefill $bdf"
}
ktap_check "loaded again, probe refuses the silent device" probe_refused
dmesg | tail -n 3 | sed 's/^/# /'
rmmod pagefill
ktap_check "no kmemleak report" pf_kmemleak_clean
ktap_finish
