#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# xskxceiver.sh [PAGEFILL_KO [HUGEPAGES [MODE[:CASE,...]...]]]: the kernel's
# AF_XDP selftest, xskxceiver (tools/testing/selftests/bpf, as its
# test_xsk.sh -i runs it on a physical NIC), on pagefill in loopback
# (ethtool -K loopback on): on queue 0, to which the indirection table sends
# every frame, one socket sends and one receives, sharing a umem, in each
# MODE every case of the suite, or the CASEs named, with and without busy
# polling. A mode whose every case skipped counts as a skip. The modes are
# the driver's, by default: drv (native XDP, the core copying into the
# socket's buffers) and zc (zero-copy); skb is the core's generic XDP, the
# same on any NIC (and on 7.3 it frees a page-pool page as a plain one when
# a program shrinks a frame of several pages: "BUG: Bad page state" on the
# Debian kernel). HUGEPAGES (default 64) 2 MiB pages are reserved for the
# cases with unaligned chunks, which skip without them.
#
# The NIC holds a sender off while its receiver has no buffers (pause
# frames, ethtool -a), which in loopback is its own transmit queue: in the
# STAT_FILL_EMPTY case, whose socket never gives the NIC a buffer and waits
# for its sender to finish, it waits for good. That case, where it fails so,
# runs again alone with pause frames off for sending (ethtool -A tx off: the
# NIC drops instead), and passes there. Then loopback off: the NIC is on its
# link again. Needs one NIC and the selftests' install (pf_selftests).
. "$(dirname "$0")/ktap.sh"
ko=${1:-}
hugepages=${2:-64}
if [ $# -gt 2 ]; then shift 2; else set -- drv zc; fi
bin=${pf_selftests:-}/bpf/xskxceiver
[ -x "$bin" ] || { echo "1..0 # SKIP no xskxceiver in the selftests' install"; exit 4; }
ktap_plan $((2 * $# + 6))
pf_log_mark
echo "$hugepages" >/proc/sys/vm/nr_hugepages
pf_load "$ko"
pf_up_one
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
fill_empty=$(case_number STAT_FILL_EMPTY)

# xsk MODE [-b] [-t CASE]: xskxceiver in MODE (busy polling with -b, only
# CASE with -t), its KTAP output indented, its totals in $totals.
xsk() {
	(cd "$(dirname "$bin")" && ./xskxceiver -i "$dev" -i "$dev" -m "$@") >/tmp/xsk.out 2>&1
	xsk_rc=$?
	sed 's/^/# /' /tmp/xsk.out
	totals=$(sed -n 's/^# Totals: //p' /tmp/xsk.out)
	# As test_xsk.sh does between runs: a run that failed leaves its
	# program attached.
	ip link set "$dev" xdpgeneric off
	ip link set "$dev" xdp off
	return "$xsk_rc"
}
# fill_empty_apart MODE [-b]: the only case that failed was STAT_FILL_EMPTY,
# and alone, with pause frames off for sending, it passes.
fill_empty_apart() {
	fails=$(grep -c "^not ok " /tmp/xsk.out)
	[ "$fails" -eq 1 ] && grep -q "^not ok .* STAT_FILL_EMPTY$" /tmp/xsk.out || return 1
	ethtool -A "$dev" tx off && pause_is rx:on tx:off || return 1
	echo "# STAT_FILL_EMPTY alone, pause frames off for sending:"
	all=$totals
	xsk "$@" -t "$fill_empty"
	rc=$?
	totals="$all; STAT_FILL_EMPTY apart: $totals"
	ethtool -A "$dev" tx on && pause_is rx:on tx:on && return "$rc"
}
# cases MODE CASE,... [-b]: xsk with each CASE alone; the totals summed.
cases() {
	cases_mode=$1 cases_list=$2 cases_rc=0 sum=""
	shift 2
	for c in $(echo "$cases_list" | tr , ' '); do
		n=$(case_number "$c")
		[ -n "$n" ] || { echo "# no case $c"; return 1; }
		xsk "$cases_mode" "$@" -t "$n" || cases_rc=1
		sum="$sum $totals"
	done
	totals=$(echo "$sum" | tr ' ' '\n' | awk -F: 'NF == 2 {
			if (!($1 in s)) w[n++] = $1
			s[$1] += $2
		}
		END { for (i = 0; i < n; i++) printf "%s:%d ", w[i], s[w[i]] }')
	return "$cases_rc"
}
# suite MODE[:CASE,...] [-b]: every case (or those named) in MODE passes or
# skips (STAT_FILL_EMPTY passing apart, see above); a skip when every case
# skipped.
suite() {
	mode=${1%%:*} list=${1#"$mode"}
	list=${list#:}
	shift
	name="xskxceiver, $mode mode${1:+, busy polling}${list:+: $list}"
	if [ -n "$list" ]; then
		cases "$mode" "$list" "$@"
	else
		xsk "$mode" "$@" || fill_empty_apart "$mode" "$@"
	fi
	suite_rc=$?
	case "$suite_rc: $totals " in
	0:*" pass:0 "*) ktap_skip "$name: $totals" "every case skipped" ;;
	0:*) ktap_ok "$name: $totals" ;;
	*) ktap_not_ok "$name: $totals" ;;
	esac
}
for m in "$@"; do
	suite "$m"
	suite "$m" -b
done
ktap_check "ethtool -K loopback off" ethtool -K "$dev" loopback off
restored() { loopback_is off && pause_is rx:on tx:on; }
ktap_check "ethtool -k and -a: loopback off, pause frames sent and honoured" restored
ktap_check "the kernel log has no warning" pf_log_clean
echo 0 >/proc/sys/vm/nr_hugepages
pf_unload
ktap_finish
