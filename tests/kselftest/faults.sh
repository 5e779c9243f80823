#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# faults.sh [PAGEFILL_KO [MODES]]: a hostile device. Each fault mode of the device
# model (tools/pagefill-sim/src/faults.rs) corrupts every 7th completion or
# buffer while 31 streams send to the guest: lengths past the buffer,
# out-of-range group, node and queue, a buffer never posted, a frame count
# or a record length that disagrees with the records, completions posted
# twice. The driver counts each bad completion, takes the buffer back,
# delivers every frame the device did not spoil (no frame twice), and once
# the fault is off every stream arrives complete and in order. The modes
# that spoil records (record-len, frame-count) and duplicate run with the
# private flag rx-udp-merge on, so the driver's merging walks the spoiled
# buffers too. Then a device
# that stalls past the transmit watchdog (the driver restarts it and traffic
# resumes) and one that stops answering (the restart fails cleanly; the
# device answers again and the interface comes back with ip link). The
# table of faults, their counts and the frames lost against the device's
# counters is printed as comments; on a failure, the device's per-stream
# counters too.
. "$(dirname "$0")/ktap.sh"
ko=${1:-}
here=$(dirname "$0")
host="sh $here/pf-host.sh"
pf_need_host
# MODES: a comma-separated subset of the fault modes (default: all).
modes=$(echo "${2:-len-past-buffer,bad-group,bad-node,bad-queue,never-posted,frame-count,record-len,duplicate}" | tr ',' ' ')
ktap_plan $((2 * $(echo $modes | wc -w) + 6))
pf_load "$ko"
bdf=$(pf_nics | head -n 1)
dev=$(ls "/sys/bus/pci/devices/$bdf/net")
ip addr add 192.0.2.1/24 dev "$dev"
ip link set "$dev" up
mac=$(cat "/sys/class/net/$dev/address")
stat() { $host ctl 0 stats | sed -n "s/^$1 //p"; }
es() { ethtool -S "$dev" | sed -n "s/^ *$1: //p"; }
qs() { pf_qsum "$dev" "rx_$1"; }
eventually eval '[ "$(cat "/sys/class/net/$dev/carrier")" = 1 ]'

send() { pf_send_streams "$@"; }
received() { sed -n 's/^received \([0-9]*\) .*/\1/p' /tmp/sink.out; }

echo "# | fault | injected | bad completions | resyncs | frames written | spoiled | delivered | lost unaccounted | clean run after |"
for mode in $modes; do
	w0=$(stat rx_frames) s0=$(stat frames_spoiled) i0=$(stat faults_injected)
	b0=$(qs bad_completions) r0=$(qs resyncs)
	case $mode in
	record-len | frame-count | duplicate) merge=on ;;
	*) merge=off ;;
	esac
	ethtool --set-priv-flags "$dev" rx-udp-merge $merge
	$host ctl 0 fault "$mode" 7 >/dev/null
	send 20 5
	sink_rc=$?
	$host ctl 0 fault off >/dev/null
	written=$(($(stat rx_frames) - w0))
	spoiled=$(($(stat frames_spoiled) - s0))
	injected=$(($(stat faults_injected) - i0))
	bad=$(($(qs bad_completions) - b0))
	resyncs=$(($(qs resyncs) - r0))
	got=$(received)
	echo "# $mode (rx-udp-merge $merge, merged skbs so far $(qs merged_skbs)): sink: $(cat /tmp/sink.out)"
	ktap_check "$mode: $injected faults, $bad bad completions counted, $got of $written frames delivered, $spoiled spoiled, none twice" eval \
		'[ "$sink_rc" -eq 0 ] && [ "$injected" -gt 0 ] && [ "$bad" -gt 0 ] &&
		[ "$got" -eq $((written - spoiled)) ]'
	send 10
	clean=$?
	echo "# $mode: after: $(cat /tmp/sink.out)"
	[ "$clean" -eq 0 ] || $host ctl 0 stats | grep '^stream' | sed 's/^/# /' 
	ktap_check "$mode: fault off, every stream complete and in order again" [ "$clean" -eq 0 ]
	echo "# | $mode | $injected | $bad | $resyncs | $written | $spoiled | $got | $((written - spoiled - got)) | $([ "$clean" -eq 0 ] && echo yes || echo no) |"
done
ktap_check "no completion reached a buffer the driver did not own (device DMA errors: 0)" \
	[ "$(stat dma_errors)" -eq 0 ]

# Transmit into a stalled device: its ring fills, the queue stops, the
# watchdog fires and the driver restarts the device; once the stall is over
# the interface passes traffic again.
ip neigh replace 192.0.2.9 lladdr 02:50:46:4c:00:09 dev "$dev"
# blast COUNT: COUNT small UDP frames out of the interface, without waiting
# for room (frames the stuck device holds also hold the socket's buffer).
blast() {
	timeout 120 python3 - <<EOF
import socket
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.setblocking(False)
for i in range($1):
    try:
        s.sendto(b"x" * 32, ("192.0.2.9", 9))
    except OSError:
        pass
EOF
}
$host ctl 0 stall 12000 >/dev/null
blast 3000
ktap_check "a device stalled under transmit: the watchdog fired and the driver restarted it" \
	eventually_long eval '[ "$(es restarts)" -ge 1 ]'
echo "# tx_timeouts $(es tx_timeouts) restarts $(es restarts) restarts_failed $(es restarts_failed)"
sleep 12
ktap_check "after the stall: every stream complete and in order" send 10

# A device that stops answering: the restart fails (reset never completes),
# nothing crashes; answering again, it comes back with the interface.
$host ctl 0 dead >/dev/null
blast 3000
ktap_check "a dead device: the watchdog fired and the restart failed cleanly" \
	eventually_long eval '[ "$(es restarts_failed)" -ge 1 ]'
$host ctl 0 revive >/dev/null
ip link set "$dev" down
ip link set "$dev" up
eventually eval '[ "$(cat "/sys/class/net/$dev/carrier")" = 1 ]'
ktap_check "revived, down and up: every stream complete and in order" send 10
echo "# tx_timeouts $(es tx_timeouts) restarts $(es restarts) restarts_failed $(es restarts_failed)"
ip link set "$dev" down
rmmod pagefill
ktap_check "no kmemleak report" pf_kmemleak_clean
ktap_finish
