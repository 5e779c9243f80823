#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# faults.sh [PAGEFILL_KO [MODES [CLAIM_RATE [XDP_SECTION]]]]: a hostile
# device. Each fault mode of the device
# model (tools/pagefill-sim/src/faults.rs) corrupts every 7th completion or
# buffer while 31 streams send to the guest: lengths past the buffer,
# out-of-range group, node and queue, a buffer never posted, a frame count
# or a record length that disagrees with the records, completions posted
# twice. The driver counts each bad completion, takes the buffer back,
# delivers every frame the device did not spoil (no frame twice), and once
# the fault is off every stream arrives complete and in order. The modes
# that spoil records (record-len, frame-count) and duplicate run with the
# private flag rx-udp-merge on, so the driver's merging walks the spoiled
# buffers too. claim-held spoils nothing: at every 7th chance the device
# says it took the buffer posted in a stream's node-table entry (a CLAIM
# naming it, or a STARVED report whose take count is one ahead) and leaves
# it there; the driver counts each lie as a bad completion, recycles no
# posted buffer, and every frame arrives complete and in order.
# claim-held-late tells the same lies but takes the buffer right after
# each, so the driver reads every lie late, with the entry empty as the
# truth would leave it: the same counts must hold. Then a
# device that stalls past the transmit watchdog (the driver restarts it
# and traffic resumes); the module unloads and kmemleak finds nothing.
#
# Then, loaded again, a device that stops answering, twice. Under
# transmit: the watchdog's restart fails cleanly. Under receive traffic,
# at ip link set down: the reset fails, the driver says so, turns bus
# mastering off and abandons the buffers (the page pools keep them in
# flight); the device, answering again with traffic still coming, may not
# reach memory (the model counts the DMA it refused, and writes nothing).
# Each time ip link set up resets the device, turns bus mastering back on
# and traffic flows again. The driver unloads; what the DMA-API debugging
# reports then is only what the driver abandoned, and kmemleak nothing.
#
# With XDP_SECTION (e.g. xdp_pass), the program of that section of
# xdp_pagefill.bpf.c is attached natively whenever the interface comes
# up, so that every frame the device spoils or delivers goes through the
# driver's XDP path; the same checks hold.
#
# The table of faults, their counts and the frames lost against the
# device's counters is printed as comments; on a failure, the device's
# per-stream counters too.
. "$(dirname "$0")/ktap.sh"
ko=${1:-}
here=$(dirname "$0")
host=pf_host
pf_need_host
# MODES: a comma-separated subset of the fault modes (default: all).
modes=$(echo "${2:-len-past-buffer,bad-group,bad-node,bad-queue,never-posted,frame-count,\
record-len,duplicate,claim-held,claim-held-late}" | tr ',' ' ')
# CLAIM_RATE: frames/s over the 31 streams in the claim-held modes (default
# 1000; see there).
claim_rate=${3:-1000}
xdp=${4:-}
if [ -n "$xdp" ] && { ! command -v clang >/dev/null ||
	! clang -O2 -target bpf -I/usr/include/"$(uname -m)"-linux-gnu \
		-c "$here/xdp_pagefill.bpf.c" -o /tmp/faults_xdp.bpf.o; }; then
	echo "1..0 # SKIP needs clang with the BPF target and the kernel's UAPI headers"
	exit 4
fi
xdp_points=0
[ -z "$xdp" ] || xdp_points=1
ktap_plan $((2 * $(echo $modes | wc -w) + 14 + xdp_points))
pf_load "$ko"
bdf=$(pf_nics | head -n 1)
# up: the NIC's interface, addressed and up, with a neighbour to send to.
up() {
	dev=$(ls "/sys/bus/pci/devices/$bdf/net")
	ip addr add 192.0.2.1/24 dev "$dev"
	ip link set "$dev" up
	mac=$(cat "/sys/class/net/$dev/address")
	ip neigh replace 192.0.2.9 lladdr 02:50:46:4c:00:09 dev "$dev"
	eventually eval '[ "$(cat "/sys/class/net/$dev/carrier")" = 1 ]'
	[ -z "$xdp" ] || ip link set dev "$dev" xdpdrv obj /tmp/faults_xdp.bpf.o sec "$xdp"
}
up
stat() { $host ctl 0 stats | sed -n "s/^$1 //p"; }
es() { ethtool -S "$dev" | sed -n "s/^ *$1: //p"; }
# bus_master: "on" or "off", Bus Master Enable (bit 2) of the device's PCI
# command register (config space bytes 4-5), as the guest's PCI core wrote it.
bus_master() {
	cmd=$(od -An -tu2 -j4 -N2 "/sys/bus/pci/devices/$bdf/config" | tr -d ' ')
	if [ $((cmd & 4)) -ne 0 ]; then echo on; else echo off; fi
}

send() { pf_send_streams "$@"; }
received() { sed -n 's/^received \([0-9]*\) .*/\1/p' /tmp/sink.out; }
# send_paced COUNT RATE: pf_send_streams COUNT (exact: every stream complete
# and in order), the generator paced to RATE frames/s over the 31 streams.
send_paced() {
	pf_sink 9000 $((31 * $1)) 60
	$host gen --nodes 1-31 --groups 0 --size 64 --count "$1" --rate "$2" --give-up-ms 20000 \
		--dst-mac "$mac" --dst-ip 192.0.2.1 --src-ip 198.51.100.0 >/tmp/gen.out
	gen_rc=$?
	pf_sent
	wait "$pf_sink"
	paced_sink_rc=$?
	[ "$gen_rc" -eq 0 ] || echo "# generator: $(cat /tmp/gen.out)"
	[ "$gen_rc" -eq 0 ] && [ "$paced_sink_rc" -eq 0 ]
}

echo "# | fault | injected | bad completions | resyncs | frames written | spoiled | delivered "\
"| lost unaccounted | clean run after |"
# counters PREFIX: one snapshot of the device's counters and one of the
# driver's (a request to the host takes seconds on the debug kernel under
# TCG), read by one awk (each program started costs a fifth of a second
# there) into PREFIX_written, _spoiled, _injected and _dropped (the
# device's drop_ counters summed), and PREFIX_bad, _resyncs, _merged and
# _xdp_pass (the driver's, summed over the queues) and _restarts.
counters() {
	$host ctl 0 stats >/tmp/dev.stats
	ethtool -S "$dev" >/tmp/drv.stats
	eval "$(awk -v pre="$1" '
		function get(a, k, from) {
			if (!(k in a)) print "faults: no counter " k " in " from >"/dev/stderr"
			return a[k] + 0
		}
		function put(name, v) { printf "%s_%s=%.0f\n", pre, name, v }
		FILENAME == "/tmp/dev.stats" {
			d[$1] = $2
			if ($1 ~ /^drop_/) drops += $2
			next
		}
		{
			n = $1
			sub(/:$/, "", n)
			if (sub(/^rx[0-9]*_/, "", n)) q[n] += $2; else e[n] = $2
		}
		END {
			put("written", get(d, "rx_frames", "the device"))
			put("spoiled", get(d, "frames_spoiled", "the device"))
			put("injected", get(d, "faults_injected", "the device"))
			put("dropped", drops)
			put("bad", get(q, "bad_completions", "ethtool -S"))
			put("resyncs", get(q, "resyncs", "ethtool -S"))
			put("merged", get(q, "merged_skbs", "ethtool -S"))
			put("xdp_pass", get(q, "xdp_pass", "ethtool -S"))
			put("restarts", get(e, "restarts", "ethtool -S"))
		}' /tmp/dev.stats /tmp/drv.stats)"
}
for mode in $modes; do
	counters c0
	case $mode in
	record-len | frame-count | duplicate) merge=on ;;
	*) merge=off ;;
	esac
	ethtool --set-priv-flags "$dev" rx-udp-merge $merge
	$host ctl 0 fault "$mode" 7 >/dev/null
	case $mode in claim-held*) claim=1 ;; *) claim=0 ;; esac
	if [ "$claim" = 1 ]; then
		# The device's chance to lie is a buffer it writes at the end
		# of a transmission or when the coalescing timer runs out while
		# the stream's entry already holds the next buffer: the driver
		# must have seen the take and refilled the entry first. Paced
		# frames, one a buffer, and a 5 ms timer give it that time
		# after nearly every frame's take. The stream's next frame,
		# 31/CLAIM_RATE s after the last, makes the device really take
		# the buffer a lie was about; a lie the driver reads only after
		# that finds the entry empty, as the truth would, and then only
		# what the driver does with the buffer tells (see below). At
		# 1000 frames/s (the default) it has 26 ms to read each lie, as
		# a slow guest (the debug kernel under TCG) needs to see the
		# takes at all. At 5000 the fast kernel reads a few lies late
		# (testbed.rst, "Hostile device"); claim-held-late makes
		# every lie late.
		usecs=$(ethtool -c "$dev" | sed -n 's/^rx-usecs:[[:space:]]*//p')
		ethtool -C "$dev" rx-usecs 5000
		send_paced 40 "$claim_rate"
		sink_rc=$?
		ethtool -C "$dev" rx-usecs "$usecs"
	else
		send 20 5
		sink_rc=$?
	fi
	$host ctl 0 fault off >/dev/null
	counters c1
	written=$((c1_written - c0_written))
	spoiled=$((c1_spoiled - c0_spoiled))
	injected=$((c1_injected - c0_injected))
	dropped=$((c1_dropped - c0_dropped))
	bad=$((c1_bad - c0_bad))
	resyncs=$((c1_resyncs - c0_resyncs))
	restarts=$((c1_restarts - c0_restarts))
	got=$(received)
	# A restart resets the device, and its counters with it.
	[ "$restarts" -eq 0 ] || echo "# $mode: the driver restarted the device $restarts times: "\
"the device's counts above start again there"
	echo "# $mode (rx-udp-merge $merge, merged skbs so far $c1_merged): "\
"sink: $(cat /tmp/sink.out)"
	if [ "$claim" = 1 ]; then
		# Each lie is one bad completion (rx.rs, completion): the CLAIM
		# or STARVED report says the posted buffer was taken while the
		# entry still holds it (entry_taken), so it is dropped and the
		# driver's take count stays; the real take the device reports
		# later, with the count the lie gave, is then new and believed.
		# A lie read late (claim-held-late: all of them) is believed,
		# as the entry is empty, and the real take's CLAIM that follows
		# is the bad completion.
		# A lie believed instead would give up a buffer the device can
		# still take and write: the driver posts another over it, or
		# recycles it (a resync, and the page may be posted again or
		# split into skbs while the device writes it); the real CLAIM
		# and DATA that follow are bad completions too, their frames
		# lost, streams may get stuck (a restart). That holds for a
		# STARVED lie read after the real take as well: the entry is
		# empty then, but the buffer is the device's, which its DATA
		# completion or a later take settles. So: exactly one bad
		# completion a lie, no resync, every frame the device wrote
		# delivered, complete and in order, none dropped by the device,
		# no restart.
		ktap_check "$mode: $injected lies, $bad bad completions counted, "\
"$resyncs posted buffers recycled, $got of $written frames delivered complete and in order, "\
"$dropped dropped by the device, $restarts restarts" eval \
			'[ "$sink_rc" -eq 0 ] && [ "$injected" -gt 0 ] &&
			[ "$bad" -eq "$injected" ] && [ "$resyncs" -eq 0 ] &&
			[ "$written" -eq 1240 ] && [ "$got" -eq "$written" ] &&
			[ "$spoiled" -eq 0 ] && [ "$dropped" -eq 0 ] && [ "$restarts" -eq 0 ]'
	else
		ktap_check "$mode: $injected faults, $bad bad completions counted, "\
"$got of $written frames delivered, $spoiled spoiled, none twice" eval \
			'[ "$sink_rc" -eq 0 ] && [ "$injected" -gt 0 ] && [ "$bad" -gt 0 ] &&
			[ "$got" -eq $((written - spoiled)) ]'
	fi
	send 10
	clean=$?
	echo "# $mode: after: $(cat /tmp/sink.out)"
	[ "$clean" -eq 0 ] || $host ctl 0 stats | grep '^stream' | sed 's/^/# /'
	ktap_check "$mode: fault off, every stream complete and in order again" [ "$clean" -eq 0 ]
	echo "# | $mode | $injected | $bad | $resyncs | $written | $spoiled | $got | "\
"$((written - spoiled - got)) | $([ "$clean" -eq 0 ] && echo yes || echo no) |"
done
ktap_check "no completion reached a buffer the driver did not own (device DMA errors: 0)" \
	[ "$(stat dma_errors)" -eq 0 ]
if [ -n "$xdp" ]; then
	counters c1
	ktap_check "the frames went through the XDP program: $c1_xdp_pass passed by it" \
		[ "$c1_xdp_pass" -gt 1000 ]
fi

# Transmit into a stalled device: its ring fills, the queue stops, the
# watchdog fires and the driver restarts the device; once the stall is over
# the interface passes traffic again. The stall lasts until the restart
# is done (ethtool waits for RTNL, which the restart holds; stall 0 ends
# the stall): a stall of fixed length could end before a slow guest (the
# debug kernel under TCG on a busy machine) had started the blast and the
# watchdog had seen the queue stopped for 5 s.
# blast COUNT: COUNT small UDP frames out of the interface, without waiting
# for room (frames the stuck device holds also hold the socket's buffer).
blast() {
	timeout 120 python3 -S - <<EOF
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
$host ctl 0 stall 300000 >/dev/null
blast 3000
ktap_check "a device stalled under transmit: the watchdog fired and the driver restarted it" \
	eventually_long eval '[ "$(es restarts)" -ge 1 ]'
$host ctl 0 stall 0 >/dev/null
eventually eval '[ "$(cat "/sys/class/net/$dev/carrier")" = 1 ]'
echo "# tx_timeouts $(es tx_timeouts) restarts $(es restarts) restarts_failed $(es restarts_failed)"
ktap_check "after the stall: every stream complete and in order" send 10
# Everything the driver allocated so far it freed: checked before the dead
# device below, whose abandoning is a path of its own.
ip link set "$dev" down
rmmod pagefill
pf_kmemleak_check "hostile completions and a stall: no kmemleak report after rmmod"

# A dead device, loaded again. A reset that fails makes the driver abandon
# every buffer and transmit frame it gave the device (driver.rst, "Link and
# errors"): the skbs of those frames stay allocated with nothing pointing
# at them, and the driver tells kmemleak they are no leak; kmemleak reports
# nothing then, neither them nor the sockets they hold.
pf_load "$ko"
up

# A device that stops answering under transmit: the restart fails (reset
# never completes), nothing crashes; answering again, it comes back with
# the interface.
$host ctl 0 dead >/dev/null
blast 3000
ktap_check "a dead device: the watchdog fired and the restart failed cleanly" \
	eventually_long eval '[ "$(es restarts_failed)" -ge 1 ]'
ktap_check "the failed restart turned bus mastering off" [ "$(bus_master)" = off ]
$host ctl 0 revive >/dev/null
ip link set "$dev" down
ip link set "$dev" up
eventually eval '[ "$(cat "/sys/class/net/$dev/carrier")" = 1 ]'
ktap_check "revived, down and up: bus mastering on, every stream complete and in order" \
	eval '[ "$(bus_master)" = on ] && send 10'
echo "# tx_timeouts $(es tx_timeouts) restarts $(es restarts) restarts_failed $(es restarts_failed)"

# A device that stops answering while frames come in, taken down: the
# reset at ip link set down fails. Traffic keeps coming until the
# interface is up again: in the background, bursts of 8 streams at 200
# frames/s in all, into a UDP socket (so that the stack answers no frame).
ifindex=$(cat "/sys/class/net/$dev/ifindex")
# pools: "id:inflight" of each of the interface's page pools with pages
# in flight (those of the open interface hold the buffers posted to the
# device; those a failed reset left behind, what it abandoned).
pools() {
	pf_ynl --dump page-pool-get 2>/dev/null | python3 -S -c '
import ast, sys
ifindex = int(sys.argv[1])
for p in ast.literal_eval(sys.stdin.read() or "[]"):
    if p.get("ifindex") == ifindex and p.get("inflight", 0) > 0:
        print("%d:%d" % (p["id"], p["inflight"]))
' "$ifindex"
}
live=$(pools | tr '\n' ' ')
python3 -S "$here/udp_sink.py" 9001 100000000 3600 >/dev/null 2>&1 &
bg_sink=$!
rx0=$(cat "/sys/class/net/$dev/statistics/rx_packets")
rm -f /tmp/bg.stop
(
	while [ ! -e /tmp/bg.stop ]; do
		$host gen --nodes 1-8 --groups 0 --size 64 --count 25 --rate 200 --give-up-ms 2000 \
			--dst-mac "$mac" --dst-ip 192.0.2.1 --src-ip 198.51.100.0 \
			--dport 9001 >/dev/null 2>&1
	done
) &
bg_gen=$!
eventually_long eval '[ "$(cat "/sys/class/net/$dev/statistics/rx_packets")" -gt $((rx0 + 100)) ]'
echo "# under traffic: $(($(cat "/sys/class/net/$dev/statistics/rx_packets") - rx0)) "\
"frames received; page pools (id:pages in flight) $live"
pf_log_mark
$host ctl 0 dead >/dev/null
ip link set "$dev" down
said=$(pf_log_since | grep 'did not come back from its reset')
echo "# $said"
ktap_check "down with the device dead: the reset failed, the driver said so and "\
"turned bus mastering off" \
	eval 'echo "$said" | grep -q "bus mastering off, its buffers abandoned" &&
	[ "$(bus_master)" = off ]'
# The pools the interface had stay in the core's list with the pages the
# driver gave the device in flight: abandoned, neither recycled nor freed.
left=$(pools | tr '\n' ' ')
echo "# page pools left (id:pages in flight): $left"
abandoned() {
	[ -n "$live" ] || return 1
	for p in $live; do
		n=$(echo "$left" | tr ' ' '\n' | sed -n "s/^${p%%:*}://p")
		[ -n "$n" ] && [ "$n" -gt 0 ] || return 1
	done
}
ktap_check "its receive buffers abandoned, not freed: its page pools keep their pages in flight" \
	abandoned
refused0=$(stat dma_refused_no_master) w0=$(stat rx_frames) c0=$(stat rx_completions)
$host ctl 0 revive >/dev/null
refused_some() { [ "$(stat dma_refused_no_master)" -gt "$refused0" ]; }
eventually_long refused_some
refused=$(($(stat dma_refused_no_master) - refused0))
written=$(($(stat rx_frames) - w0)) completions=$(($(stat rx_completions) - c0))
echo "# revived with bus mastering off, traffic still coming: $refused DMA accesses refused, "\
"$written frames written, $completions completions"
ktap_check "answering again under traffic, bus mastering off: the device's DMA refused "\
"($refused times), nothing written to memory" \
	eval '[ "$refused" -gt 0 ] && [ "$written" -eq 0 ] && [ "$completions" -eq 0 ] &&
	[ "$(bus_master)" = off ]'
touch /tmp/bg.stop
wait "$bg_gen"
kill "$bg_sink"
wait "$bg_sink" 2>/dev/null
ip link set "$dev" up
eventually eval '[ "$(cat "/sys/class/net/$dev/carrier")" = 1 ]'
ktap_check "up again: the reset worked and bus mastering is back on" [ "$(bus_master)" = on ]
ktap_check "up again: every stream complete and in order" send 10
echo "# tx_timeouts $(es tx_timeouts) restarts $(es restarts) restarts_failed $(es restarts_failed)"
ip link set "$dev" down
# Transmit frames dropped since the load: the abandoned ones among them,
# at least those that held the ring the watchdog found stuck.
tx_dropped=$(ethtool -S "$dev" | sed -n 's/^ *tx[0-9]*_dropped: //p' |
	awk '{s += $1} END {print s + 0}')
echo "# transmit frames dropped: $tx_dropped"

# The abandoned buffers stay mapped for good: what the DMA-API debugging
# reports at the unbind is the abandoning (pf_rmmod_abandoned).
if [ -w /sys/kernel/debug/dma-api/num_errors ]; then
	ktap_check "rmmod: the DMA-API debugging found the abandoned buffers mapped "\
"and no other error" \
		pf_rmmod_abandoned "$bdf"
else
	rmmod pagefill
	ktap_skip "rmmod: the DMA-API debugging found the abandoned buffers mapped "\
"and no other error" "no DMA-API debugging"
fi

# abandoned_unreported: frames were abandoned, and a kmemleak scan after
# the unload reports nothing, not even them.
abandoned_unreported() {
	[ "$tx_dropped" -ge 1 ] && pf_kmemleak_clean
}
if [ -e /sys/kernel/debug/kmemleak ]; then
	ktap_check "kmemleak: no report, the abandoned transmit frames and their sockets included" \
		abandoned_unreported
else
	ktap_skip "kmemleak: no report, the abandoned transmit frames and their sockets included" \
		"no kmemleak"
fi
ktap_finish
