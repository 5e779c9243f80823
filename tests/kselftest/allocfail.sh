#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# allocfail.sh [PAGEFILL_KO [STEP]]: failing allocations. Probe, open and a
# ring change run again and again with each of their allocations failing in
# turn (systematic fault injection, fail_nth.py; with STEP, every STEP-th
# one, for slow kernels): each attempt fails cleanly or
# succeeds, nothing is left half done. Then, under traffic from 31 streams,
# page pool allocations fail (fail_function on page_pool_alloc_netmems):
# the driver counts them, streams starve and their senders pause, and no
# frame is lost; then every one fails while streams wait for buffers, and
# NAPI must not spin (its polls are counted: a timer retries every 10 ms)
# until memory comes back and every frame arrives; and skb allocations
# fail (failslab on skbuff_head_cache):
# the frames are dropped and counted, every other one delivered. With the
# faults off every stream arrives complete and in order; the page pools are
# gone once the interface is down (no page in flight) and kmemleak finds
# nothing after rmmod.
. "$(dirname "$0")/ktap.sh"
ko=${1:-}
step=${2:-1}
here=$(dirname "$0")
host=pf_host
pf_need_host
dbg=/sys/kernel/debug
if [ ! -e /proc/self/fail-nth ] || [ ! -d "$dbg/fail_function" ] ||
	[ ! -d "$dbg/failslab" ] || [ ! -d "$dbg/fail_page_alloc" ]; then
	echo "1..0 # SKIP needs FAULT_INJECTION_DEBUG_FS, FAILSLAB, FAIL_PAGE_ALLOC, FAIL_FUNCTION"
	exit 4
fi
ktap_plan 13

# attr NAME KEY=VALUE...: fault injection attributes in debugfs.
attr() {
	d=$dbg/$1
	shift
	for kv; do echo "${kv#*=}" >"$d/${kv%%=*}"; done
}
# fail-nth fails allocations that may sleep too, of any order; quietly.
attr failslab verbose=0 ignore-gfp-wait=N
attr fail_page_alloc verbose=0 ignore-gfp-wait=N min-order=0

pf_load "$ko"
bdf=$(pf_nics | head -n 1)
echo "$bdf" >/sys/bus/pci/drivers/pagefill/unbind
ktap_check "probe with each of its allocations failing in turn: clean failures, then bound" \
	python3 -S "$here/fail_nth.py" bind "$bdf" "$step"
echo "$bdf" >/sys/bus/pci/drivers/pagefill/bind
dev=$(ls "/sys/bus/pci/devices/$bdf/net")
ip addr add 192.0.2.1/24 dev "$dev"
ktap_check "open with each of its allocations failing in turn: clean failures, then up" \
	python3 -S "$here/fail_nth.py" up "$dev" "$step"
ip link set "$dev" up
eventually eval '[ "$(cat "/sys/class/net/$dev/carrier")" = 1 ]'
ktap_check "ethtool -G rx with each allocation of the restart failing in turn: old rings kept" \
	python3 -S "$here/fail_nth.py" rings "$dev" "$step"
eventually eval '[ "$(cat "/sys/class/net/$dev/carrier")" = 1 ]'

mac=$(cat "/sys/class/net/$dev/address")
stat() { $host ctl 0 stats | sed -n "s/^$1 //p"; }
qs() { pf_qsum "$dev" "rx_$1"; }
PF_SINK_TIMEOUT=90 PF_GIVE_UP_MS=30000
send() {
	pf_send_streams "$@"
	rc=$?
	echo "# sink: $(cat /tmp/sink.out)"
	return "$rc"
}
received() { sed -n 's/^received \([0-9]*\) .*/\1/p' /tmp/sink.out; }

# Page pool allocations fail one time in three while the streams run.
w0=$(stat rx_frames) f0=$(qs page_alloc_failed)
echo page_pool_alloc_netmems >"$dbg/fail_function/inject"
attr fail_function verbose=0 interval=1 probability=33 times=-1
send 20 5
sent_rc=$?
attr fail_function probability=0 times=0
echo >"$dbg/fail_function/inject"
written=$(($(stat rx_frames) - w0)) failed=$(($(qs page_alloc_failed) - f0)) got=$(received)
echo "# page pool: $failed allocations failed, $written frames written, $got delivered"
ktap_check "page pool allocations failing: $failed counted, all $written frames delivered" eval \
	'[ "$sent_rc" -eq 0 ] && [ "$failed" -gt 0 ] &&
	[ "$written" -eq 620 ] && [ "$got" -eq 620 ]'

# Every page pool allocation fails while streams wait for buffers: NAPI
# must not spin. A paused stream waiting for a page gets no completion to
# retry the refill, so NAPI completes and a timer polls again 10 ms later
# (interrupts.rs, ALLOC_RETRY_MS); returning the whole budget instead would
# be a busy loop in softirq context (then ksoftirqd) for as long as memory
# stays short. 31 streams of 60 frames of 1400 bytes: a stream needs three
# buffers (32 KiB hold 23 frames) and can have two (the one the device
# fills and the one posted), so each starves and the device pauses its
# sender. Once no frame moves, the interface's polls are counted for 3 s
# (trace event napi:napi_poll, filtered by device).
queues=$(ethtool -l "$dev" | sed -n '/^Current/,$s/^Combined:[[:space:]]*//p')
tr=/sys/kernel/tracing
[ -e "$tr/trace" ] || mount -t tracefs nodev "$tr"
ev=$tr/events/napi/napi_poll
# polls_for SECS: NAPI polls of the interface in SECS seconds.
polls_for() {
	echo "dev_name == \"$dev\"" >"$ev/filter"
	echo >"$tr/trace"
	echo 1 >"$ev/enable"
	sleep "$1"
	echo 0 >"$ev/enable"
	# Events in the buffer, and those it overwrote when full.
	cat "$tr"/per_cpu/cpu*/stats | awk '/^(entries|overrun):/ { s += $2 } END { print s + 0 }'
	echo 0 >"$ev/filter"
	echo >"$tr/trace"
}
# snap: "PAUSED WRITTEN" from one reading of the device's counters: senders
# paused (xoffs not yet answered by an xon) and frames written. (A request
# to the host takes seconds on the debug kernel under TCG: one a reading.)
snap() {
	$host ctl 0 stats | awk '/^xoff_sent /{x=$2} /^xon_sent /{o=$2} /^rx_frames /{w=$2}
		END {print x - o, w}'
}
# settled: senders paused, and no frame written for a second.
settled() {
	a=$(snap)
	sleep 1
	b=$(snap)
	[ "${b%% *}" -gt 0 ] && [ "${a#* }" = "${b#* }" ]
}
echo page_pool_alloc_netmems >"$dbg/fail_function/inject"
attr fail_function verbose=0 interval=1 probability=100 times=-1
rm -f /tmp/udp_sink.ready
python3 -S "$here/udp_sink.py" 9000 1860 600 >/tmp/sink.out 2>&1 &
sink=$!
eventually test -f /tmp/udp_sink.ready
$host gen --nodes 1-31 --groups 0 --size 1400 --count 60 --give-up-ms 300000 \
	--dst-mac "$mac" --dst-ip 192.0.2.1 --src-ip 198.51.100.0 >/tmp/gen.out 2>&1 &
gen=$!
eventually_long settled
s0=$(snap) f0=$(qs page_alloc_failed) t0=$(date +%s%N)
polls=$(polls_for 3)
ms=$((($(date +%s%N) - t0) / 1000000))
s1=$(snap) f1=$(qs page_alloc_failed)
p0=${s0%% *} w0=${s0#* } p1=${s1%% *} w1=${s1#* }
echo "# waiting for pages, $p0 then $p1 senders paused: $polls NAPI polls in $ms ms over "\
"$queues queue(s), $((f1 - f0)) page allocations failed, $((w1 - w0)) frames written"
ktap_check "every page allocation failing: streams wait for buffers, their senders paused "\
"($p1), allocations retried and counted ($((f1 - f0)) failed in the window)" eval \
	'[ "$p0" -gt 0 ] && [ "$p1" -gt 0 ] && [ "$w1" -eq "$w0" ] && [ "$f1" -gt "$f0" ]'
# The retry timer polls each queue at most 100 times a second, and with
# every stream paused nothing else schedules NAPI (no completion, no
# interrupt): 300 polls a queue in the window. The limit, 500 a second a
# queue, leaves five times that for timer slack and stray interrupts; a
# busy loop polls back to back, tens of thousands of times a second even
# under TCG.
limit=$((500 * queues * ms / 1000))
ktap_check "no busy loop while pages cannot be had: $polls NAPI polls in $ms ms over "\
"$queues queue(s), at most $limit" \
	[ "$polls" -le "$limit" ]
attr fail_function probability=0 times=0
echo >"$dbg/fail_function/inject"
wait "$gen"
gen_rc=$?
# A generator that gave up sends nothing more.
[ "$gen_rc" -eq 0 ] || kill "$sink"
wait "$sink"
sink_rc=$?
echo "# memory back: sink: $(cat /tmp/sink.out); generator: $(cat /tmp/gen.out)"
ktap_check "memory back: the streams resume, every frame delivered complete and in order" \
	eval '[ "$gen_rc" -eq 0 ] && [ "$sink_rc" -eq 0 ]'

# skb heads fail one time in two (atomic allocations of that cache only).
# NAPI takes skbs from a per-CPU cache, refilled from the slab 32 at a
# time, and a socket that keeps up frees them back into it, so a fast sink
# can leave nothing to fail: the sink reads nothing for its first 5 s, so
# the skbs of the frames sent meanwhile are allocated without any coming
# back (up to 620 frames, some 15 refills).
w0=$(stat rx_frames) d0=$(qs dropped)
echo 1 >/sys/kernel/slab/skbuff_head_cache/failslab
attr failslab cache-filter=Y ignore-gfp-wait=Y interval=1 probability=50 times=-1
export PF_SINK_HOLD=5
send 20 5
sent_rc=$?
unset PF_SINK_HOLD
attr failslab probability=0 times=0 cache-filter=N ignore-gfp-wait=N
echo 0 >/sys/kernel/slab/skbuff_head_cache/failslab
written=$(($(stat rx_frames) - w0)) dropped=$(($(qs dropped) - d0)) got=$(received)
echo "# skbs: $dropped frames dropped, $written written, $got delivered"
ktap_check "skb allocations failing: $dropped frames dropped and counted, "\
"the other $got delivered, none twice" eval \
	'[ "$sent_rc" -eq 0 ] && [ "$dropped" -gt 0 ] && [ $((got + dropped)) -eq "$written" ]'
ktap_check "faults off: every stream complete and in order" send 10
ktap_check "the interface counted the dropped frames" \
	[ "$(cat "/sys/class/net/$dev/statistics/rx_dropped")" -ge "$dropped" ]

ifindex=$(cat "/sys/class/net/$dev/ifindex")
ip link set "$dev" down
pools() { pf_ynl --dump page-pool-get 2>&1 | grep -c "'ifindex': $ifindex" ; }
ktap_check "interface down: its page pools are gone, no page in flight" \
	eventually eval '[ "$(pools)" -eq 0 ]'
ktap_check "the device holds no buffer" \
	[ "$(stat buffers_held)" -eq 0 ]
rmmod pagefill
pf_kmemleak_check
ktap_finish
