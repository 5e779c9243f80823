#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# napi_budget.sh [PAGEFILL_KO [FRAMES]]: no NAPI poll hands the stack more
# frames than its budget, under unpaced 64-byte traffic: one stream of
# FRAMES frames (default 6000), then 31 streams of FRAMES/31 each. Counted
# from the stack's side, not from what the driver's poll returns (a driver
# may clamp its return value to the budget and still have handed up more):
# tracefs records napi:napi_poll and net:napi_gro_receive_entry for the
# interface, and the frames a poll handed up are the GRO entries on its CPU
# since that CPU's previous poll event (the napi_poll event fires at the end
# of a poll, after its frames; polls of one CPU do not overlap). None may
# exceed the budget the event reports (64, NAPI's weight). A buffer of
# 64-byte frames holds hundreds of them: a driver that hands a whole
# buffer up in one poll overruns the budget, starving the other NAPI
# instances and softirq work of its CPU, and breaks netpoll and busy
# polling, which rely on it.
#
# Not vacuous: every frame arrives complete and in order at a UDP socket,
# and the trace holds exactly one GRO entry for each, with no event lost.
#
# The same trace shows each skb's hash: every frame of the 31 streams
# carries the layer 4 flow hash of its own stream, as computed here
# (toeplitz.py); with `ethtool -K rxhash off`, none carries a hash.
. "$(dirname "$0")/ktap.sh"
ko=${1:-}
frames=${2:-6000}
here=$(dirname "$0")
host=pf_host
pf_need_host
tr=/sys/kernel/tracing
[ -d "$tr/events" ] || mount -t tracefs nodev "$tr" 2>/dev/null
if [ ! -d "$tr/events/napi/napi_poll" ] || [ ! -d "$tr/events/net/napi_gro_receive_entry" ]; then
	echo "1..0 # SKIP needs tracefs with the napi:napi_poll and "\
"net:napi_gro_receive_entry events"
	exit 4
fi
ktap_plan 10
pf_log_mark
pf_load "$ko"
bdf=$(pf_nics | head -n 1)
dev=$(ls "/sys/bus/pci/devices/$bdf/net")
ip addr add 192.0.2.1/24 dev "$dev"
ip link set "$dev" up
mac=$(cat "/sys/class/net/$dev/address")
sysctl -qw net.core.rmem_max=8388608
ktap_check "receive merging is off: one GRO entry is one frame" eval \
	'ethtool --show-priv-flags "$dev" | grep -Eq "^rx-udp-merge[[:space:]]*: off"'

# Both events, for this interface only, into a per-CPU buffer that holds a
# whole run (an entry is about 100 bytes).
echo 0 >"$tr/tracing_on"
echo 8192 >"$tr/buffer_size_kb"
echo "name == \"$dev\"" >"$tr/events/net/napi_gro_receive_entry/filter"
echo "dev_name == \"$dev\"" >"$tr/events/napi/napi_poll/filter"
echo 1 >"$tr/events/net/napi_gro_receive_entry/enable"
echo 1 >"$tr/events/napi/napi_poll/enable"

# burst NODES COUNT: COUNT frames of 64 bytes from each of NODES to group 0,
# unpaced, end of transmission only at the last (the device fills whole
# buffers), traced; every frame must reach the sink. The trace is left in
# /tmp/trace.
burst() {
	n=$(($(echo "$1" | awk -F- '{ print ($2 ? $2 - $1 + 1 : 1) }') * $2))
	echo >"$tr/trace"
	pf_sink 9000 "$n" 120
	echo 1 >"$tr/tracing_on"
	$host gen --nodes "$1" --groups 0 --size 64 --count "$2" --give-up-ms 20000 \
		--dst-mac "$mac" --dst-ip 192.0.2.1 --src-ip 198.51.100.0 >/tmp/gen.out
	pf_sent
	wait "$pf_sink"
	rc=$?
	echo 0 >"$tr/tracing_on"
	cat "$tr/trace" >/tmp/trace
	lost=$(cat "$tr"/per_cpu/cpu*/stats | awk '/^overrun:/ { s += $2 } END { print s + 0 }')
	echo "# $1 x $2: sink: $(cat /tmp/sink.out); generator: $(cat /tmp/gen.out); "\
"trace events lost: $lost"
	[ "$rc" -eq 0 ] && [ "$lost" -eq 0 ] && ! grep -q LOST /tmp/trace
}

# polls: from /tmp/trace, "GRO_ENTRIES POLLS MAX_PER_POLL OVER BUDGET
# WORK_SUM": per CPU, the GRO entries since its previous napi_poll event
# belong to the poll that event ends. OVER counts polls above their budget;
# WORK_SUM adds up what the driver's polls returned (for the record: it
# need not match what they handed up).
polls() {
	awk '
		match($0, /\[[0-9]+\]/) { cpu = substr($0, RSTART + 1, RLENGTH - 2) }
		/ napi_gro_receive_entry: / { n[cpu]++; gro++ }
		/ napi_poll: / {
			work = $0; sub(/.* work /, "", work); sub(/ .*/, "", work)
			budget = $NF
			polls++
			worksum += work
			if (n[cpu] > max) max = n[cpu]
			if (n[cpu] > budget) over++
			n[cpu] = 0
		}
		END { printf "%d %d %d %d %d %d\n", gro, polls, max, over, budget, worksum }
	' /tmp/trace
}
# check_polls FRAMES: the traced run handed up FRAMES frames through GRO
# in polls of at most their budget each.
check_polls() {
	set -- "$1" $(polls)
	echo "# gro entries $2, napi polls $3, most frames in one poll $4, "\
"polls over budget $5 (budget $6), polls' returned work summed $7"
	[ "$2" -eq "$1" ] || { echo "# expected $1 GRO entries"; return 1; }
	[ "$3" -gt 0 ] || { echo "# no napi_poll event"; return 1; }
	[ "$5" -eq 0 ] && [ "$4" -le "$6" ] && [ "$6" -gt 0 ]
}

ktap_check "one stream, $frames frames of 64 bytes unpaced, complete and in order, "\
"every event traced" \
	burst 1 "$frames"
ktap_check "one stream: no poll handed up more frames than its budget" check_polls "$frames"
per=$((frames / 31))
ktap_check "31 streams, $((31 * per)) frames of 64 bytes unpaced, complete and in order, "\
"every event traced" \
	burst 1-31 "$per"
ktap_check "31 streams: no poll handed up more frames than its budget" check_polls $((31 * per))

# hashes: from /tmp/trace, "HASH COUNT" for each hash the GRO entries
# carried, and "not-l4 COUNT" for entries whose hash is not a layer 4 one.
hashes() {
	awk '/ napi_gro_receive_entry: / {
		h = $0; sub(/.* hash=/, "", h); sub(/ .*/, "", h)
		if ($0 !~ / l4_hash=1 /) notl4++
		n[h]++
	} END { for (h in n) print h, n[h]; print "not-l4", notl4 + 0 }' /tmp/trace | sort
}
# check_hashes FIRST LAST PER: the traced frames of nodes FIRST..LAST, PER
# each, carried their own flow's hash, each a layer 4 hash.
check_hashes() {
	python3 -S "$here/toeplitz.py" $(for node in $(seq "$1" "$2"); do
		echo "198.51.100.$node,192.0.2.1,$((10000 + node)),9000"
	done) | sed "s/\$/ $3/" | { cat; echo "not-l4 0"; } | sort >/tmp/hashes.want
	hashes >/tmp/hashes.got
	echo "# distinct hashes $(grep -vc not-l4 /tmp/hashes.got), $(grep not-l4 /tmp/hashes.got)"
	diff /tmp/hashes.want /tmp/hashes.got | head -n 6 | sed 's/^/# /'
	cmp -s /tmp/hashes.want /tmp/hashes.got
}
ktap_check "31 streams: every frame carried its own flow's layer 4 hash from the device" \
	check_hashes 1 31 "$per"
# check_no_hash FRAMES: FRAMES traced frames, none with a hash.
check_no_hash() {
	hashes >/tmp/hashes.got
	printf '0x00000000 %s\nnot-l4 %s\n' "$1" "$1" | cmp -s - /tmp/hashes.got ||
		{ sed 's/^/# /' /tmp/hashes.got | head -n 4; return 1; }
}
ethtool -K "$dev" rxhash off
ktap_check "with rxhash off, 300 frames with no hash" \
	eval 'burst 1 300 && check_no_hash 300'
ethtool -K "$dev" rxhash on
ktap_check "no bad completion, no receive error" eval \
	'[ "$(pf_qsum "$dev" rx_bad_completions)" -eq 0 ] &&
	[ "$(cat /sys/class/net/$dev/statistics/rx_errors)" -eq 0 ]'

echo 0 >"$tr/events/net/napi_gro_receive_entry/enable"
echo 0 >"$tr/events/napi/napi_poll/enable"
echo 0 >"$tr/events/net/napi_gro_receive_entry/filter"
echo 0 >"$tr/events/napi/napi_poll/filter"
echo >"$tr/trace"
ip link set "$dev" down
rmmod pagefill
ktap_check "no warning or other report in the kernel log" pf_log_clean
pf_kmemleak_check
ktap_finish
