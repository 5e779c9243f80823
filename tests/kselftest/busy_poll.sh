#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# busy_poll.sh [PAGEFILL_KO [FRAMES [COUNT]]]: NAPI's latency settings on
# pagefill.
# Each NAPI instance takes the netdev netlink settings (napi-set:
# defer-hard-irqs, gro-flush-timeout, irq-suspend-timeout), reports them
# back, keeps them across ethtool -L, and FRAMES frames (default 200) from
# each of 31 streams reach a UDP socket complete and in order under them:
# with interrupts deferred and polls driven by the GRO flush timer; with a
# socket that busy-polls from epoll (10 frames a stream, paced;
# SO_BUSY_POLL, SO_PREFER_BUSY_POLL and
# epoll's EPIOCSPARAMS, which suspends the queue's interrupt while the
# application keeps polling), the stack counting the frames busy polling
# took (BusyPollRxPackets); and with threaded NAPI (the device's
# "threaded" attribute), each instance then polled by a kernel thread.
# COUNT 0 skips the check of BusyPollRxPackets (a guest under TCG is
# polling when a frame comes in some runs only). Needs one NIC and the host
# agent.
. "$(dirname "$0")/ktap.sh"
ko=${1:-}
frames=${2:-200}
count_busy=${3:-1}
pf_need_host
ktap_plan 10
pf_log_mark
pf_load "$ko"
pf_up_one
ifindex=$(cat "/sys/class/net/$dev/ifindex")
total=$((31 * frames))
napis() {
	pf_ynl --dump napi-get --json "{\"ifindex\": $ifindex}" >/tmp/napi 2>&1
	sed -n "s/.*'id': \([0-9]*\).*/\1/p" /tmp/napi
}
# napi_set DEFER GRO_NS SUSPEND_NS: on every NAPI instance of the device.
napi_set() {
	for id in $(napis); do
		pf_ynl --do napi-set --json "{\"id\": $id, \"defer-hard-irqs\": $1, \
\"gro-flush-timeout\": $2, \"irq-suspend-timeout\": $3}" >/dev/null || return 1
	done
}
# napi_has DEFER GRO_NS SUSPEND_NS: every instance reports them.
napi_has() {
	napis >/dev/null
	sed 's/^/# /' /tmp/napi
	tr -d '\n ' </tmp/napi | sed 's/},/}\n/g' >/tmp/napi.one
	[ "$(grep -c "'defer-hard-irqs':$1,'gro-flush-timeout':$2,.*'irq-suspend-timeout':$3," \
		/tmp/napi.one)" -eq "$queues" ]
}
busy_rx() { awk '/^TcpExt:/ { if (!h) { split($0, k); h = 1 } else { split($0, v);
	for (i in k) if (k[i] == "BusyPollRxPackets") print v[i] } }' /proc/net/netstat; }

ktap_check "napi-set: defer-hard-irqs 10, gro-flush-timeout 50 us, irq-suspend-timeout 20 ms" \
	eval 'napi_set 10 50000 20000000 && napi_has 10 50000 20000000'
ktap_check "$total frames, interrupts deferred and polls driven by the GRO flush timer" \
	pf_send_streams "$frames"
ethtool -L "$dev" combined 1
ethtool -L "$dev" combined "$queues"
ktap_check "the settings stay across ethtool -L" napi_has 10 50000 20000000
busy0=$(busy_rx)
# 10 frames a stream at 200 a second: epoll busy-polls only a socket with
# nothing to read, so the socket must drain faster than frames come, even
# on a debug kernel beside other VMs; and for 20 ms, longer than the 5 ms
# between frames, so that it is polling when they come.
ktap_check "310 frames to a socket busy-polling from epoll (IRQs suspended meanwhile)" \
	eval 'PF_SINK_BUSY_POLL=20000 PF_GEN_RATE=200 pf_send_streams 10'
echo "# BusyPollRxPackets: $busy0 before, $(busy_rx) after; sink: $(cat /tmp/sink.out);" \
	"busy_poll $(sysctl -n net.core.busy_poll) busy_read $(sysctl -n net.core.busy_read)"
if [ "$count_busy" = 1 ]; then
	ktap_check "busy polling took frames (BusyPollRxPackets)" [ "$(busy_rx)" -gt "$busy0" ]
else
	ktap_skip "busy polling took frames (BusyPollRxPackets)" \
		"not counted here: a guest under TCG is polling when a frame comes in some runs only"
fi
napi_set 0 0 0
echo 1 >"/sys/class/net/$dev/threaded"
ktap_check "threaded NAPI: every instance reports it" eval \
	'napis >/dev/null; [ "$(grep -c "threaded.: .enabled" /tmp/napi)" -eq "$queues" ]'
ktap_check "threaded NAPI: $total frames complete and in order, each queue polled by a thread" \
	eval 'pf_send_streams "$frames" && [ "$(pgrep -c "^napi/$dev-")" -eq "$queues" ]'
echo 0 >"/sys/class/net/$dev/threaded"
ktap_check "back to softirq polling: $total frames" pf_send_streams "$frames"
ktap_check "no kernel warning or error" pf_log_clean
pf_unload
pf_kmemleak_check
ktap_finish
