#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# groups_churn.sh [PAGEFILL_KO [QUEUES [ROUNDS [COUNT [WEIGHT [RATE [USECS]]]]]]]:
# groups 0, 7 and 300 joined over QUEUES queue pairs (default 4, the
# device's most; ethtool -L combined), 31 generator streams (nodes 1-31)
# sending 64-byte frames to each group from start to end, and meanwhile
# group 7 left and joined again ROUNDS times (default 6) with ip maddr,
# ethtool -l, -S, -c and -g read between every two changes. The streams of
# groups 0 and 300 send COUNT frames each (default 3000) to a UDP sink that
# checks every one; those of group 7 send WEIGHT times as fast (default
# 100) to a port nobody listens on (the stack drops them, after the
# driver), and on until the changes are done, however long the guest takes
# for them (the generator's --weighted-until). RATE caps the frames/s of all
# streams together (default 150000: more than a TCG guest takes, so the
# device's flow control paces them while group 7 is joined; while it is left
# the device drops its frames as fast as they come, and the cap keeps them
# from using up the run; 0: no cap). USECS sets the device's coalescing time
# (ethtool -C rx-usecs; default 50, the driver's): how long it keeps a
# buffer open after its first frame. A longer one has the device hold
# buffers of most streams at any moment, so that every leave leaves buffers
# for NAPI to take back and the group's table to release, in softirq
# context, also at a rate the guest keeps up with (the debug kernel).
#
# Then: no completion failed validation, every frame of groups 0 and 300
# (never left) arrived complete and in order and the device dropped none of
# theirs, group 7's frames were dropped by the device while it was left
# (unjoined) and reached the stack while it was joined, all three groups
# are joined again, and the kernel log has no warning or lockdep report.
#
# Why this catches what it is for: leaving a group under traffic leaves
# completions naming it on their way (a stream's starvation report, a
# buffer taken, a buffer written) and the device holding buffers of its
# streams; the group goes, and its node table may be joined again, only
# once NAPI has taken them all back. A completion in flight across a leave
# or a rejoin must not be taken for the new join's: a bad completion here
# is a driver bug (the device model injects no fault in this test). Such
# completions are in flight at a change only while the receive path has a
# backlog, hence group 7's flood: it keeps NAPI busy (with one vCPU, the
# changes run between its polls) while the checked groups carry what the
# sink, a Python process, can read. And a left group's table is released
# in NAPI, which then joins what is wanted, in softirq context: any lock
# that path takes and ethtool's handlers take with softirqs enabled can
# deadlock, and lockdep (the debug kernel) names it.
. "$(dirname "$0")/ktap.sh"
ko=${1:-}
queues=${2:-4}
rounds=${3:-6}
count=${4:-3000}
weight=${5:-100}
rate=${6:-150000}
usecs=${7:-50}
here=$(dirname "$0")
host=pf_host
pf_need_host
ktap_plan 11
pf_log_mark
pf_load "$ko"
bdf=$(pf_nics | head -n 1)
dev=$(ls "/sys/bus/pci/devices/$bdf/net")
ip addr add 192.0.2.1/24 dev "$dev"
max=$(ethtool -l "$dev" | sed -n '/^Pre-set/,/^Current/s/^Combined:[[:space:]]*//p')
[ "$queues" -le "$max" ] || queues=$max
ethtool -L "$dev" combined "$queues"
ethtool -C "$dev" rx-usecs "$usecs"
ip link set "$dev" up
ip maddr add 01:50:46:4c:00:07 dev "$dev"
ip maddr add 01:50:46:4c:01:2c dev "$dev"
mac=$(cat "/sys/class/net/$dev/address")
es() { ethtool -S "$dev" | sed -n "s/^ *$1: //p"; }
qs() { pf_qsum "$dev" "rx_$1"; }
ktap_check "ethtool -L combined $queues: three groups joined over $queues queue pairs" eval \
	'[ "$(es groups_joined)" -eq 3 ] && ethtool -l "$dev" | sed -n "/^Current/,\$p" |
	grep -q "^Combined:[[:space:]]*$queues\$"'

# The sink takes the whole run, the 62 streams of groups 0 and 300. It
# reads slower than the flood comes: its socket may hold the whole run
# (about 1 KiB a frame), and its drops (RcvbufErrors) are counted, to tell
# them from the driver's. Frames the driver lost never come: the sink
# stops waiting for them 30 s after the last frame.
sysctl -qw net.core.rmem_max=268435456
# And UDP as a whole may hold that much (pages): by default a 2 GiB guest
# lets all UDP sockets together hold less than the sink's backlog, and the
# stack drops what comes after (MemErrors), the streams' last frames.
sysctl -qw net.ipv4.udp_mem="131072 196608 262144"
udp_mib() {
	awk -v f="$1" '/^Udp:/ {
		if (!h) { for (i = 1; i <= NF; i++) if ($i == f) c = i; h = 1; next }
		print $c
	}' /proc/net/snmp
}
rcvbuf0=$(udp_mib RcvbufErrors)
memerr0=$(udp_mib MemErrors)
noports0=$(udp_mib NoPorts)
exact=$((62 * count))
rm -f /tmp/udp_sink.ready
# The sink gives up after 180 s without a datagram (only a failure waits
# that long): the frames of groups 0 and 300 share the rings with group 7's
# hundredfold flood, and on a loaded host (another VM beside) a backlog of
# it can hold them up for over 30 s, all written by the device by then.
PF_SINK_RCVBUF=$((exact * 1024)) PF_SINK_QUIET=180 \
	python3 -S "$here/udp_sink.py" 9000 "$exact" $((exact / 500 + 600)) \
	>/tmp/sink.out 2>&1 &
sink=$!
eventually test -f /tmp/udp_sink.ready
# Every 8th frame of a stream ends a transmission, so buffers close often
# and completions of every kind (CLAIM, DATA, STARVED) are in flight at
# every change. Group 7's streams send until /run/pf/churn.done (the host
# agent's @OUT@) exists: made when the changes end, or when this script
# does, whatever the outcome.
done_file=/run/pf/churn.done
rm -f "$done_file"
trap 'touch "$done_file"' EXIT
$host gen --nodes 1-31 --groups 0,7,300 --size 64 --count "$count" --rate "$rate" \
	--group-weight 7="$weight" --group-dport 7=9001 --eot-every 8 --give-up-ms 30000 \
	--weighted-until @OUT@/churn.done \
	--dst-mac "$mac" --dst-ip 192.0.2.1 --src-ip 198.51.100.0 >/tmp/gen.out 2>&1 &
gen=$!
ktap_check "traffic to all three groups flows" eventually_long eval \
	'[ "$(cat /sys/class/net/$dev/statistics/rx_packets)" -gt 930 ]'

# ethtool's reads of the driver's settings and counters, in process
# context with softirqs enabled, while NAPI runs under them.
reads() {
	ethtool -l "$dev" >/dev/null && ethtool -S "$dev" >/dev/null &&
		ethtool -c "$dev" >/dev/null && ethtool -g "$dev" >/dev/null
}
done_rounds=0
churn() {
	while [ "$done_rounds" -lt "$rounds" ]; do
		# Every round must run under traffic, or it proves nothing.
		if ! kill -0 "$gen" 2>/dev/null; then
			echo "# the generator ended after $done_rounds rounds: $(cat /tmp/gen.out)"
			return 1
		fi
		ip maddr del 01:50:46:4c:00:07 dev "$dev" || return 1
		eventually_long eval '[ "$(es groups_joined)" -eq 2 ]' || return 1
		reads || return 1
		# Joined again at once, or, while its table waits for the
		# device's buffers to come back, by NAPI once they have.
		ip maddr add 01:50:46:4c:00:07 dev "$dev" || return 1
		eventually_long eval '[ "$(es groups_joined)" -eq 3 ]' || {
			echo "# round $((done_rounds + 1)): group 7 not joined again within 2 min"
			return 1
		}
		reads || return 1
		done_rounds=$((done_rounds + 1))
	done
	kill -0 "$gen" 2>/dev/null || {
		echo "# the generator ended during the last round: $(cat /tmp/gen.out)"
		return 1
	}
}
t0=$(date +%s)
ktap_check "group 7 left and joined again $rounds times under traffic, "\
"ethtool -l/-S/-c/-g between" churn
touch "$done_file"
echo "# $done_rounds rounds in $(($(date +%s) - t0)) s; "\
"bad completions so far: $(qs bad_completions)"
wait "$gen"
gen_rc=$?
echo "# generator: $(cat /tmp/gen.out)"
ktap_check "the generator sent all $((62 * count)) frames of groups 0 and 300, "\
"and group 7's until the changes ended (no stream paused for good)" \
	[ "$gen_rc" -eq 0 ]
wait "$sink"
sink_rc=$?
echo "# sink: $(cat /tmp/sink.out); "\
"UDP receive buffer drops: $(($(udp_mib RcvbufErrors) - rcvbuf0)), "\
"UDP memory drops: $(($(udp_mib MemErrors) - memerr0))"
ktap_check "every frame of groups 0 and 300 ($exact) arrived, complete and in order" \
	[ "$sink_rc" -eq 0 ]
ethtool -S "$dev" | grep -E 'bad_completions|resync|groups_joined|group_join_failed|dev_drop|'\
'starved|rx_packets' |
	sed 's/^ */# /'
ktap_check "no bad completion, no receive error" eval \
	'[ "$(qs bad_completions)" -eq 0 ] &&
	[ "$(cat /sys/class/net/$dev/statistics/rx_errors)" -eq 0 ]'

# The model's per-stream counters: "stream GROUP NODE offered written
# dropped starved xoff_us". The streams of groups 0 and 300 each had all
# COUNT frames written and none dropped (group 7's drops are its own).
$host ctl 0 stats >/tmp/model.stats
sed -n 's/^\(drop_[a-z_]*\|starved\|xoff_sent\|xon_sent\|rx_frames\) /# device \1 /p' \
	/tmp/model.stats
kept_all() {
	awk -v n="$count" '
		$1 == "stream" && ($2 == 0 || $2 == 300) {
			s++
			if ($4 != n || $5 != n || $6 != 0) {
				bad++
				printf "# stream %s/%s offered %s written %s dropped %s\n",
					$2, $3, $4, $5, $6
			}
		}
		END { exit !(s == 62 && bad == 0) }' /tmp/model.stats
}
ktap_check "the device wrote every frame of groups 0 and 300 and dropped none of theirs" kept_all
stat() { sed -n "s/^$1 //p" /tmp/model.stats; }
# Not vacuous: group 7 was left while its streams sent, so the device
# dropped some of its frames as unjoined, and it was joined while they
# sent, so the driver handed some up (to port 9001, where the stack drops
# them); nothing overflowed anywhere.
noports=$(($(udp_mib NoPorts) - noports0))
echo "# group 7 frames the stack received (UDP NoPorts): $noports"
ktap_check "group 7's frames were dropped as unjoined while it was left and received while "\
"joined; no other drop" eval \
	'[ "$(stat drop_unjoined)" -gt 0 ] && [ "$noports" -gt 0 ] &&
	[ "$(stat drop_overflow)" -eq 0 ] && [ "$(stat drop_bad_frame)" -eq 0 ]'
ktap_check "three groups joined at the end, no join failed" eval \
	'[ "$(es groups_joined)" -eq 3 ] && [ "$(es group_join_failed)" -eq 0 ]'
ip link set "$dev" down
rmmod pagefill
ktap_check "no warning, lockdep or other report in the kernel log" pf_log_clean
pf_kmemleak_check
ktap_finish
