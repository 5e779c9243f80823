#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# xsk.sh [PAGEFILL_KO [FRAMES [FAULT_MODES]]]: AF_XDP sockets on pagefill.
# pf_xsk (built here) attaches a native XDP program that redirects each
# queue's frames to that queue's socket through an XSKMAP, one socket on
# every queue in use, and checks what they receive. In copy mode and in
# zero-copy mode (the device's chunk mode), FRAMES frames (default 200)
# from each of 31 streams reach the sockets complete, in order and byte for
# byte, every queue's socket gets its share and the driver counts each
# frame as redirected; a consumer that stalls makes the device hold the
# senders off, losing nothing. With zero-copy sockets bound: ethtool -G
# and -C, link down and up and MTU changes, a burst after each; then each
# of FAULT_MODES (comma-separated fault modes of the device model, default
# all, "none" for none) spoils every 7th completion or chunk list of a
# burst: the driver counts them, delivers no frame twice, and with the
# fault off the next burst arrives complete and in order. Once pf_xsk has
# gone, its program with it, the stack receives again; rmmod works with
# sockets bound. Needs one NIC and the host agent.
. "$(dirname "$0")/ktap.sh"
ko=${1:-}
frames=${2:-200}
# FAULT_MODES: a comma-separated subset of the device model's fault modes
# (default: all; "none" for none).
fault_modes=$(echo "${3:-len-past-buffer,bad-group,bad-node,bad-queue,never-posted,frame-count,\
record-len,duplicate,claim-held,claim-held-late}" | tr ',' ' ')
[ "$fault_modes" != none ] || fault_modes=
here=$(dirname "$0")
host=pf_host
pf_need_host
pf_xsk_tool
ktap_plan $((14 + 2 * $(echo $fault_modes | wc -w)))
pf_log_mark
pf_load "$ko"
pf_up_one
qlist=$(seq -s, 0 $((queues - 1)))
total=$((31 * frames))
qs() { pf_qsum "$dev" "rx_$1"; }

# xsk_run FLAGS: pf_xsk with FLAGS on every queue while the generator
# sends $frames frames of 64 bytes, their payload filled, from each of
# nodes 1-31; its report is in /tmp/xsk.out.
xsk_run() {
	rm -f /tmp/pf_xsk.ready /tmp/gen.sent
	# shellcheck disable=SC2086
	PF_SINK_SENT=/tmp/gen.sent "$xsk" $1 -f -t 60 "$dev" "$qlist" "$total" >/tmp/xsk.out 2>&1 &
	xsk_pid=$!
	eventually test -f /tmp/pf_xsk.ready || { kill "$xsk_pid"; return 1; }
	$host gen --nodes 1-31 --groups 0 --size 64 --fill 1 --count "$frames" \
		--give-up-ms 20000 --dst-mac "$mac" --dst-ip 192.0.2.1 --src-ip 198.51.100.0 \
		>/tmp/gen.out
	gen_rc=$?
	pf_sent
	wait "$xsk_pid"
	xsk_rc=$?
	sed 's/^/# /' /tmp/xsk.out
	[ "$gen_rc" -eq 0 ] || echo "# generator: $(cat /tmp/gen.out)"
	[ "$gen_rc" -eq 0 ] && [ "$xsk_rc" -eq 0 ]
}
# every_socket MODE: each queue's socket was bound in MODE and received.
every_socket() {
	[ "$(grep -c "^queue [0-9]* mode $1 received [1-9]" /tmp/xsk.out)" -eq "$queues" ]
}

redirect0=$(qs xdp_redirect)
what="$total frames of 64 bytes from 31 streams reach sockets on $queues queues"
ktap_check "copy mode: $what, complete, in order, byte for byte" xsk_run -c
ktap_check "copy mode: the socket of each of the $queues queues received, none dropped" eval \
	'every_socket copy && ! grep -q "dropped [1-9]" /tmp/xsk.out'
ktap_check "the driver counted $total frames redirected" \
	[ "$(($(qs xdp_redirect) - redirect0))" -eq "$total" ]
redirect0=$(qs xdp_redirect)
ktap_check "zero-copy mode: $what, complete, in order, byte for byte" xsk_run "-z -w"
ktap_check "zero-copy mode: each queue's socket bound zero-copy, received, dropped none" \
	eval 'every_socket zerocopy && ! grep -q "dropped [1-9]" /tmp/xsk.out'
ktap_check "the driver counted $total frames redirected, none bad" eval \
	'[ "$(($(qs xdp_redirect) - redirect0))" -eq "$total" ] &&
	[ "$(qs bad_completions)" -eq 0 ]'
# The device's own counters restart with it (each bind and unbind resets
# it): the driver's, which do not, tell the story. Each starvation report
# is a stream the device paused (xoff); each XON doorbell one it let go.
es() { ethtool -S "$dev" | sed -n "s/^ *$1: //p"; }
empty0=$(qs xsk_fill_empty) starved0=$(qs starved) xon0=$(qs xon_doorbells)
overflow0=$(es dev_drop_overflow)
ktap_check "a consumer stalled for 2 s: $total frames still complete and in order" \
	xsk_run "-z -w -H 2000 -u 512"
echo "# fill ring empty $(($(qs xsk_fill_empty) - empty0)) times;" \
	"streams starved $(($(qs starved) - starved0)), XON rung $(($(qs xon_doorbells) - xon0))"
held_off() {
	[ "$(qs xsk_fill_empty)" -gt "$empty0" ] && [ "$(qs starved)" -gt "$starved0" ] &&
		[ "$(qs xon_doorbells)" -gt "$xon0" ] &&
		[ "$(es dev_drop_overflow)" -eq "$overflow0" ]
}
ktap_check "its fill rings ran dry, the device held the senders off (xoff), then let them go" \
	held_off
# churn: with zero-copy sockets bound on every queue (a pf_xsk that reads
# until told to stop), each reconfiguration restarts the queues in chunk
# mode again; after each, a burst of 31 x 20 frames must all be redirected.
burst() {
	before=$(qs xdp_redirect)
	$host gen --nodes 1-31 --groups 0 --size 64 --count 20 --rate 5000 \
		--give-up-ms 20000 --dst-mac "$mac" --dst-ip 192.0.2.1 \
		--src-ip 198.51.100.0 >/tmp/gen.out || return 1
	eventually_long eval '[ "$(($(qs xdp_redirect) - before))" -ge 620 ]'
}
churn() {
	rm -f /tmp/pf_xsk.ready
	"$xsk" -z -w -t 600 "$dev" "$qlist" 1000000000 >/tmp/churn.out 2>&1 &
	churn_pid=$!
	eventually test -f /tmp/pf_xsk.ready || return 1
	for step in "ethtool -G $dev rx 512" "ethtool -G $dev rx 1024" \
		"ethtool -C $dev rx-usecs 20" "ip link set $dev down" "ip link set $dev up" \
		"ip link set $dev mtu 1200" "ip link set $dev mtu 1500"; do
		$step || { echo "# $step failed"; return 1; }
		[ "${step#ip link set $dev down}" = "$step" ] || continue
		eventually test "$(cat "/sys/class/net/$dev/carrier")" = 1
		burst || { echo "# after $step: the burst was not redirected"; return 1; }
	done
	# A bound queue cannot go: the core refuses.
	! ethtool -L "$dev" combined 1 2>/dev/null || { echo "# ethtool -L accepted"; return 1; }
	kill "$churn_pid"
	wait "$churn_pid"
	ethtool -C "$dev" rx-usecs 50
	true
}
ktap_check "zero-copy sockets bound: ethtool -G, -C, link down, up, MTU; a burst after each" \
	churn

# A hostile device under zero-copy sockets: each fault mode of the device
# model spoils every 7th completion or chunk list (faults.sh, which runs
# them in buffer mode, describes them; in chunk mode record-len gives a
# list's first entry a length past its chunk, len-past-buffer a completion
# more bytes than the list's chunks hold) while 31 streams send a burst of
# 20 frames each to sockets bound on every queue, one pf_xsk for all the
# modes. The driver must count each spoiled completion or list in
# rx*_bad_completions: at least one a fault (a duplicated STARVED report
# aside, which tells the driver nothing new), exactly one a lie in the
# claim modes (faults.sh says why). It must redirect to the sockets
# exactly the frames the device wrote less those of the spoiled lists,
# each a frame of the burst that pf_xsk counts, none twice or torn; and
# once the fault is off a burst of 10 frames of each stream must reach the
# sockets complete and in order. pf_xsk reports each burst apart
# (SIGUSR1).
dstat() { $host ctl 0 stats | sed -n "s/^$1 //p"; }
# dstats PREFIX: the device's counters rx_frames, faults_injected and
# frames_spoiled as PREFIX_NAME, from one request (each costs seconds on
# the debug kernel).
dstats() {
	eval "$($host ctl 0 stats | awk -v pre="$1" '$1 == "rx_frames" || $1 == "faults_injected" ||
		$1 == "frames_spoiled" { printf "%s_%s=%.0f\n", pre, $1, $2 }')"
}
# xsk_phase: pf_xsk's report of the frames since its last one.
xsk_phase() {
	phases0=$(grep -c '^phase ' /tmp/xskf.out)
	kill -USR1 "$xskf_pid"
	eventually_long eval '[ "$(grep -c "^phase " /tmp/xskf.out)" -gt "$phases0" ]' || return 1
	grep '^phase ' /tmp/xskf.out | tail -n 1
}
# xsk_gen COUNT [RATE]: COUNT frames of 64 bytes, their payload filled,
# from each of nodes 1-31 (RATE frames/s in all, default unpaced).
xsk_gen() {
	$host gen --nodes 1-31 --groups 0 --size 64 --fill 1 --count "$1" --rate "${2:-0}" \
		--give-up-ms 20000 \
		--dst-mac "$mac" --dst-ip 192.0.2.1 --src-ip 198.51.100.0 >/tmp/gen.out ||
		{ echo "# generator: $(cat /tmp/gen.out)"; return 1; }
}
# xsk_fault MODE: the fault's burst, then the clean one; two test points.
xsk_fault() {
	mode=$1
	dstats d0
	eval "$(pf_qsums "$dev" f0 rx_bad_completions rx_xdp_redirect)"
	fault_on=$($host ctl 0 fault "$mode" 7)
	[ "$fault_on" = ok ] || echo "# fault $mode 7: the model answered: $fault_on"
	case $mode in
	claim-held*)
		# The device's chance to lie: a list it writes by the timer
		# while the stream's entry already holds the next one. Paced
		# frames and a 5 ms timer give the driver the time to refill
		# the entry after nearly every frame's take (faults.sh).
		usecs=$(ethtool -c "$dev" | sed -n 's/^rx-usecs:[[:space:]]*//p')
		ethtool -C "$dev" rx-usecs 5000
		xsk_gen 20 1000
		gen_rc=$?
		ethtool -C "$dev" rx-usecs "$usecs"
		;;
	*)
		xsk_gen 20
		gen_rc=$?
		;;
	esac
	# Every frame of the burst written (none is dropped: the device
	# holds a starved stream's frames), and every one not spoiled
	# redirected, before pf_xsk reports.
	eventually_long eval '[ "$(($(dstat rx_frames) - d0_rx_frames))" -ge 620 ]'
	$host ctl 0 fault off >/dev/null
	dstats d1
	written=$((d1_rx_frames - d0_rx_frames))
	injected=$((d1_faults_injected - d0_faults_injected))
	spoiled=$((d1_frames_spoiled - d0_frames_spoiled))
	eventually_long eval '[ "$(($(pf_qsum "$dev" rx_xdp_redirect) - f0_rx_xdp_redirect))" \
		-ge $((written - spoiled)) ]'
	during=$(xsk_phase)
	eval "$(pf_qsums "$dev" f1 rx_bad_completions rx_xdp_redirect)"
	bad=$((f1_rx_bad_completions - f0_rx_bad_completions))
	redirected=$((f1_rx_xdp_redirect - f0_rx_xdp_redirect))
	echo "# $mode: $injected faults, $spoiled frames spoiled of $written written;" \
		"$bad bad completions, $redirected frames redirected; pf_xsk: ${during:-no report}"
	case $mode in
	claim-held*) counted='[ "$bad" -eq "$injected" ]' ;;
	duplicate) counted='[ "$bad" -gt 0 ]' ;;
	*) counted='[ "$bad" -ge "$injected" ]' ;;
	esac
	# The frames of the spoiled lists are lost, the others delivered, each
	# a generator frame pf_xsk counts.
	got=$(echo "$during" | sed -n 's/^phase received \([0-9]*\) .*/\1/p')
	ktap_check "zero-copy, $mode: $injected faults, $bad bad completions counted, "\
"$redirected of $written frames, $spoiled spoiled, to the sockets, none twice or torn" eval \
		'[ "$gen_rc" -eq 0 ] && [ "$written" -eq 620 ] && [ "$injected" -gt 0 ] &&
		'"$counted"' && [ "$redirected" -eq $((written - spoiled)) ] &&
		[ "$got" = "$redirected" ] && echo "$during" | grep -q " duplicates 0 bad 0$"'
	r0=$(pf_qsum "$dev" rx_xdp_redirect)
	xsk_gen 10
	gen_rc=$?
	eventually_long eval '[ "$(($(pf_qsum "$dev" rx_xdp_redirect) - r0))" -ge 310 ]'
	after=$(xsk_phase)
	echo "# $mode: fault off: pf_xsk: ${after:-no report}"
	want="phase received 310 streams 31 out_of_order 0 missing 0 duplicates 0 bad 0"
	ktap_check "zero-copy, $mode: fault off, every stream's burst complete and in order" eval \
		'[ "$gen_rc" -eq 0 ] && [ "$after" = "$want" ]'
}
rm -f /tmp/pf_xsk.ready
"$xsk" -z -w -f -t 600 "$dev" "$qlist" 1000000000 >/tmp/xskf.out 2>&1 &
xskf_pid=$!
if eventually test -f /tmp/pf_xsk.ready; then
	for mode in $fault_modes; do
		xsk_fault "$mode"
	done
else
	sed 's/^/# /' /tmp/xskf.out
	for mode in $fault_modes; do
		ktap_not_ok "zero-copy, $mode: pf_xsk did not bind"
		ktap_not_ok "zero-copy, $mode: fault off, every stream's burst complete and" \
			"in order"
	done
fi
kill "$xskf_pid"
wait "$xskf_pid"
ktap_check "pf_xsk gone, its program went with it" eval \
	'! ip -d link show dev "$dev" | grep -q "prog/xdp"'
ktap_check "the stack receives again: $total frames to a UDP socket, complete and in order" \
	pf_send_streams "$frames"
# rmmod with zero-copy sockets bound: the device goes from under them.
rmmod_bound() {
	rm -f /tmp/pf_xsk.ready
	"$xsk" -z -t 600 "$dev" "$qlist" 1000000000 >/tmp/churn.out 2>&1 &
	churn_pid=$!
	eventually test -f /tmp/pf_xsk.ready || return 1
	pf_builtin || rmmod pagefill
	rc=$?
	kill "$churn_pid"
	wait "$churn_pid"
	return $rc
}
if pf_builtin; then
	ktap_skip "rmmod with zero-copy sockets bound" "the driver is built in"
else
	ktap_check "rmmod with zero-copy sockets bound" rmmod_bound
fi
ktap_check "no kernel warning or error" pf_log_clean
pf_kmemleak_check
ktap_finish
