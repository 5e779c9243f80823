#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# xskxceiver.sh [PAGEFILL_KO [HUGEPAGES [RUN...]]]: the kernel's AF_XDP
# selftest, xskxceiver (tools/testing/selftests/bpf, as its test_xsk.sh -i
# runs it on a physical NIC), on pagefill in loopback (ethtool -K loopback
# on): on queue 0, to which the indirection table sends every frame, one
# socket sends and one receives, sharing a umem. Each RUN is MODE[-b][:CASE,
# ...]: every case of the suite in MODE, or the CASEs named, busy polling
# with -b; or timeout=SECONDS, the time a socket has to move a case's
# frames in the runs after it (default 15). A run whose every case skipped
# counts as a skip. The modes are
# the driver's, by default both with and without busy polling: drv (native
# XDP, the core copying into the socket's buffers) and zc (zero-copy); skb
# is the core's generic XDP, the same on any NIC (and on 7.3 it frees a
# page-pool page as a plain one when a program shrinks a frame of several
# pages: "BUG: Bad page state" on the Debian kernel). HUGEPAGES (default 64)
# 2 MiB pages are reserved for the cases with unaligned chunks, which skip
# without them.
#
# The NIC holds a sender off while its receiver has no buffers (pause
# frames, ethtool -a), which in loopback is its own transmit queue: in the
# STAT_FILL_EMPTY case in zero-copy mode, whose socket never gives the NIC
# a buffer and waits for its sender to finish, it waits for good. That
# case, where it fails so, runs again alone with pause frames off for
# sending (ethtool -A tx off: the NIC drops instead), and passes there;
# the counters' cases, whose 1 ms window a loaded TCG host can miss, and a
# case that ran out of its time run again alone where they failed (apart,
# below). Then loopback
# off: the NIC is on its link again. Needs one NIC and the selftests'
# install (pf_selftests).
. "$(dirname "$0")/ktap.sh"
ko=${1:-}
hugepages=${2:-64}
if [ $# -gt 2 ]; then shift 2; else set -- drv drv-b zc zc-b; fi
runs=0
for run in "$@"; do
	case $run in timeout=*) ;; *) runs=$((runs + 1)) ;; esac
done
bin=${pf_selftests:-}/bpf/xskxceiver
[ -x "$bin" ] || { echo "1..0 # SKIP no xskxceiver in the selftests' install"; exit 4; }
ktap_plan $((runs + 7))
pf_log_mark
echo "$hugepages" >/proc/sys/vm/nr_hugepages
pf_load "$ko"
pf_up_one
mtu=$(cat "/sys/class/net/$dev/mtu")
# loopback_is FLAG: ethtool -k reports loopback FLAG (on or off), and not
# fixed: the user may change it.
loopback_is() { ethtool -k "$dev" | grep -qx "loopback: $1"; }
ktap_check "loopback is offered and off at probe" loopback_is off
# pause_is rx:RX tx:TX: ethtool -a reports pause frames RX and TX (on or
# off).
pause_is() {
	ethtool -a "$dev" >/tmp/pause.out
	grep -qx "RX:[[:space:]]*${1#rx:}" /tmp/pause.out &&
		grep -qx "TX:[[:space:]]*${2#tx:}" /tmp/pause.out
}
ktap_check "pause frames sent and honoured at probe" pause_is rx:on tx:on
ethtool -X "$dev" equal 1
ktap_check "ethtool -K loopback on" ethtool -K "$dev" loopback on
eventually_long test "$(cat "/sys/class/net/$dev/operstate")" = up
# case_number NAME: the number of xskxceiver's case NAME.
case_number() {
	(cd "$(dirname "$bin")" && ./xskxceiver -l) | sed -n "s/^\([0-9]*\): $1\$/\1/p"
}

# xsk MODE [-b] [-t CASE]: xskxceiver in MODE (busy polling with -b, only
# CASE with -t), its KTAP output indented, its totals in $totals.
xsk() {
	(cd "$(dirname "$bin")" && ./xskxceiver -i "$dev" -i "$dev" -m "$@") >/tmp/xsk.out 2>&1
	xsk_rc=$?
	sed 's/^/# /' /tmp/xsk.out
	totals=$(sed -n 's/^# Totals: //p' /tmp/xsk.out)
	# As test_xsk.sh does between runs: a run that failed leaves its
	# program attached. And one whose last case had frames of 9000
	# bytes leaves that MTU, at which the next run's probe for
	# zero-copy (a socket of one buffer a frame) fails.
	ip link set "$dev" xdpgeneric off
	ip link set "$dev" xdp off
	ip link set "$dev" mtu "$mtu"
	return "$xsk_rc"
}
# apart MODE [-b]: each case that failed passes alone, in up to three
# tries: STAT_FILL_EMPTY and STAT_RX_FULL read the socket's counter 1 ms
# after the socket saw its last frame, and count only if the NIC has
# brought it the next one by then (under TCG on a loaded host, sometimes
# later); in zero-copy mode STAT_FILL_EMPTY runs with pause frames off for
# sending (above). A case that failed by running out of time runs alone
# too (the suite gives a socket a fixed time for all of a case's frames,
# which a loaded TCG host can miss, e.g. one frame a system call in
# HW_SW_MIN_RING_SIZE). Any other failure is final.
apart() {
	all=$totals rc=0
	# Each failed case's name, and whether it ran out of time.
	for failed in $(awk '/timed out$/ { late = 1; next }
			/^not ok / { print $NF ":" late + 0 }
			{ late = 0 }' /tmp/xsk.out); do
		case_name=${failed%:*}
		case $failed in
		STAT_FILL_EMPTY:* | STAT_RX_FULL:* | *:1) ;;
		*) return 1 ;;
		esac
		pause_off=""
		# Without pause frames the NIC drops while a stream has no
		# list posted: on a loaded TCG host the poll that posts the
		# next can come after the device filled the last, and the
		# case sees a gap before its buffers ran out.
		if [ "$case_name" = STAT_FILL_EMPTY ] && [ "$1" = zc ]; then
			ethtool -A "$dev" tx off && pause_is rx:on tx:off || return 1
			pause_off=", pause frames off for sending"
		fi
		n=$(case_number "$case_name")
		echo "# $case_name alone$pause_off:"
		xsk "$@" -t "$n" ||
			{ echo "# again:"; xsk "$@" -t "$n"; } ||
			{ echo "# a third time:"; xsk "$@" -t "$n"; } || rc=1
		if [ -n "$pause_off" ]; then
			ethtool -A "$dev" tx on && pause_is rx:on tx:on || rc=1
		fi
		all="$all; $case_name apart: $totals"
	done
	totals=$all
	return "$rc"
}
# cases MODE CASE,... [-b]: xsk with each CASE alone; the totals summed.
# A case that ran out of time runs once more (as apart does), its second
# run counted.
cases() {
	cases_mode=$1 cases_list=$2 cases_rc=0 sum=""
	shift 2
	for c in $(echo "$cases_list" | tr , ' '); do
		n=$(case_number "$c")
		[ -n "$n" ] || { echo "# no case $c"; return 1; }
		xsk "$cases_mode" "$@" -t "$n" ||
			{ grep -q 'timed out$' /tmp/xsk.out && echo "# $c out of time, again:" &&
				xsk "$cases_mode" "$@" -t "$n"; } || cases_rc=1
		sum="$sum $totals"
	done
	totals=$(echo "$sum" | tr ' ' '\n' | awk -F: 'NF == 2 {
			if (!($1 in s)) w[n++] = $1
			s[$1] += $2
		}
		END { for (i = 0; i < n; i++) printf "%s:%d ", w[i], s[w[i]] }')
	return "$cases_rc"
}
# suite MODE[-b][:CASE,...]: every case (or those named) in MODE passes or
# skips (or passes apart, see above); a skip when every case skipped.
suite() {
	mode=${1%%:*} list=${1#"${1%%:*}"}
	list=${list#:}
	busy=""
	[ "${mode%-b}" = "$mode" ] || busy=-b
	mode=${mode%-b}
	name="xskxceiver, $mode mode${busy:+, busy polling}${list:+: $list}"
	if [ -n "$list" ]; then
		cases "$mode" "$list" $busy
	else
		xsk "$mode" $busy || apart "$mode" $busy
	fi
	suite_rc=$?
	case "$suite_rc: $totals " in
	0:*" pass:0 "*) ktap_skip "$name: $totals" "every case skipped" ;;
	0:*) ktap_ok "$name: $totals" ;;
	*) ktap_not_ok "$name: $totals" ;;
	esac
}
for run in "$@"; do
	case $run in
	timeout=*) export XSK_THREAD_TMOUT="${run#timeout=}" ;;
	*) suite "$run" ;;
	esac
done
# pause_counted: ethtool -I -a counts the pause frames (xoffs) the NIC sent
# itself while sockets were slow to fill: sent and received alike.
pause_counted() {
	ethtool -I -a "$dev" >/tmp/pause.out
	sed 's/^/# /' /tmp/pause.out
	tx=$(sed -n 's/^ *tx_pause_frames: \([0-9]*\)$/\1/p' /tmp/pause.out)
	rx=$(sed -n 's/^ *rx_pause_frames: \([0-9]*\)$/\1/p' /tmp/pause.out)
	[ "${tx:-0}" -gt 0 ] && [ "$tx" = "$rx" ]
}
ktap_check "ethtool -I -a: pause frames sent to itself, as many received" pause_counted
ktap_check "ethtool -K loopback off" ethtool -K "$dev" loopback off
restored() { loopback_is off && pause_is rx:on tx:on; }
ktap_check "ethtool -k and -a: loopback off, pause frames sent and honoured" restored
ktap_check "the kernel log has no warning" pf_log_clean
echo 0 >/proc/sys/vm/nr_hugepages
pf_unload
ktap_finish
