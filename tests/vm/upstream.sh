#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# upstream.sh PAGEFILL_KO TEST...: the kernel's own driver selftests
# (tools/testing/selftests/drivers/net of the source the guest kernel was
# built from, installed by scripts/build-selftests.sh, which vm-run.sh passes
# as pf_selftests when PAGEFILL_SELFTESTS is set) in HW mode against pagefill: NETIF is the first
# pagefill NIC, the remote end the second one in network namespace "peer"
# (REMOTE_TYPE=netns). Each TEST is a path under drivers/net, e.g. ping.py
# or hw/irq.py, or TEST=REASON for a test that does not apply to pagefill,
# which is not run and reported skipped for REASON (the feature pagefill
# lacks; Documentation lists them). The test's own output comes first, as
# comments; then one KTAP line per case the test reported, as its own
# "Totals" count them: the Python tests' KTAP lines ("ok 3 hds.get_hds
# # SKIP reason"; an XFAIL counts as a skip, nothing having been checked)
# and the bash tests' "TEST: name [ OK ]" lines. A test whose every case
# skipped is so many skips, not a pass. A test that reports no case is one
# line: ok, SKIP when it exits with kselftest's skip code (4), else not ok;
# so is a test that fails without a failed case (it crashed).
. "$(dirname "$0")/../kselftest/ktap.sh"
ko=$1
shift
# The plan comes at the end, when the cases are known (TAP allows that).
echo "TAP version 13"
insmod "$ko"
# The selftests' config asks for PPPoE, whose GRO offload (gro.py's pppoe
# cases) is registered by the pppoe module: on a kernel that builds it as a
# module (the stock Debian kernel) nothing loads it on demand. Where it is
# built in, or there is no module tree, this does nothing.
modprobe -q pppoe 2>/dev/null || true
# The tests take the link down and up; the addresses must stay, as they do
# on a configured host.
sysctl -qw net.ipv6.conf.default.keep_addr_on_down=1 net.ipv6.conf.all.keep_addr_on_down=1
# peer_setup: the second NIC into netns "peer", both ends addressed.
peer_setup() {
	pf_pair
	ip netns exec peer sysctl -qw net.ipv6.conf.all.keep_addr_on_down=1 \
		net.ipv6.conf.$b.keep_addr_on_down=1
	sysctl -qw net.ipv6.conf.$a.keep_addr_on_down=1
	ip addr add 2001:db8::1/64 dev "$a" nodad
	ip -n peer addr add 2001:db8::2/64 dev "$b" nodad
	# LOCAL_PREFIX_V6 (namespaces behind netkit on this side) must be
	# reachable from the remote end (drivers/net/README.rst).
	ip -n peer -6 route add 2001:db8:2::/64 via 2001:db8::1
}
# peer_teardown: both NICs back in this namespace, unaddressed and down, as
# net/forwarding's library wants the two ports it is given.
peer_teardown() {
	ip netns del peer
	for _ in $(seq 50); do
		ip link show "$b" >/dev/null 2>&1 && break
		sleep 0.1
	done
	ip addr flush dev "$a"
	ip link set "$a" down
}
peer_setup
[ -n "${pf_selftests:-}" ] || { echo "# PAGEFILL_SELFTESTS not set"; exit 1; }
export NETIF="$a" LOCAL_V4=192.0.2.1 REMOTE_V4=192.0.2.2 \
	LOCAL_V6=2001:db8::1 REMOTE_V6=2001:db8::2 REMOTE_TYPE=netns REMOTE_ARGS=peer \
	LOCAL_PREFIX_V6=2001:db8:2::/64 \
	PYTHONDONTWRITEBYTECODE=1 KSFT_MACHINE_SLOW=1
cd "$pf_selftests/drivers/net" || exit 1
# A test's time limit: three or four times what it takes under TCG (each
# test's seconds are in its summary line; on the fast and stock kernels
# xdp.py takes about 350, its 27 cases waiting out socat's 2 s idle timeout
# at every exchange, so_txtime.py 140, the rest under 100), so that a test
# that hangs fails in minutes instead of holding the whole run. The debug
# kernel under TCG runs them several times slower.
test_limit() {
	case $1 in
	xdp.py) echo 1200 ;;
	*) echo 400 ;;
	esac
}
slowdown=1
[ "${PF_FLAVOUR:-}" != debug ] || slowdown=6
# run_test TEST: runs TEST, prints its output as comments, and leaves its
# exit status in rc and its cases in /tmp/upstream.cases, one a line:
# RESULT<tab>NAME<tab>REASON.
run_test() {
	t=$1
	out=/tmp/upstream.out
	limit=$(($(test_limit "$t") * slowdown))
	dir=$(dirname "$t")
	case $t in
	*.py) (cd "$dir" && timeout "$limit" python3 "./$(basename "$t")") >"$out" 2>&1 ;;
	*.sh)
		# The bash tests written for a driver-test setup (see
		# drivers/net/README.rst) find NETIF and the remote end from
		# the environment; the others, net/forwarding's kind, are given
		# two ports in this namespace and make their own hosts (VRFs).
		if grep -q 'DRIVER_TEST_CONFORMANT:=yes' "$t"; then
			(cd "$dir" && timeout "$limit" bash "./$(basename "$t")") >"$out" 2>&1
		else
			peer_teardown
			(cd "$dir" && timeout "$limit" bash "./$(basename "$t")" "$a" "$b") >"$out" 2>&1
			rc=$?
			peer_setup
			(exit $rc)
		fi ;;
	esac
	rc=$?
	sed 's/^/# /' "$out"
	tab=$(printf '\t')
	awk -v main="$(basename "$t" .py)" '
		function strip(s) { sub(/^[ \t]+/, "", s); sub(/[ \t]+$/, "", s); return s }
		# A bash test gives the reason of a SKIP or FAIL on the next
		# line, indented by a tab.
		function flush() { if (pend != "") print pend "\t" strip(why); pend = ""; why = "" }
		pend != "" && /^\t/ { if (why == "") why = $0; next }
		{ if (!/^TEST: /) flush() }
		END { flush() }
		/^(not )?ok [0-9]+ / {
			ok = ($1 == "ok"); line = $0
			sub(/^(not )?ok [0-9]+ /, "", line)
			reason = ""
			if ((i = index(line, " # ")) > 0) { reason = substr(line, i + 3); line = substr(line, 1, i - 1) }
			if (index(line, main ".") == 1) line = substr(line, length(main) + 2)
			res = ok ? "pass" : "fail"
			if (reason ~ /^SKIP/) { res = "skip"; sub(/^SKIP ?/, "", reason) }
			else if (reason ~ /^XFAIL/) { res = "skip" }
			print res "\t" strip(line) "\t" strip(reason); next
		}
		/^TEST: .*\[ *(OK|FAIL|SKIP|XFAIL) *\]/ {
			line = $0; sub(/^TEST: /, "", line)
			st = line; sub(/.*\[ */, "", st); sub(/ *\].*/, "", st)
			sub(/\[ *(OK|FAIL|SKIP|XFAIL) *\].*/, "", line)
			res = st == "OK" ? "pass" : st == "FAIL" ? "fail" : "skip"
			flush(); why = st == "XFAIL" ? "XFAIL" : ""
			# A test that skips as a whole may say so as a case of its
			# own, then exit 4 ("TEST: SKIP: dev eth0 does not support
			# loopback feature [ OK ]", hw/loopback.sh): a skip.
			if (strip(line) ~ /^SKIP:/) {
				res = "skip"; why = strip(line); sub(/^SKIP: */, "", why); line = main
			}
			pend = res "\t" strip(line); next
		}' "$out" >/tmp/upstream.cases
}

# Tests whose cases give the other end a window shorter than a slow guest
# under TCG may take (gro.py: GRO held 200 us between two segments;
# hw/csum.py: a receiver up for one or two seconds) run once more when a
# case failed: the second run's cases count, the first run's failures are
# named in a comment.
retry_once="gro.py hw/csum.py"
# Tests whose BPF programs libbpf can only load with the kernel's BTF
# (xdp.py's calls a kfunc, resolved against it): on a kernel built without
# it they are skipped, for that reason. The test kernels and the stock
# Debian kernel have it.
needs_btf="xdp.py"
for t in "$@"; do
	case $t in
	*=*)
		ktap_skip "upstream ${t%%=*}" "${t#*=}"
		continue ;;
	esac
	case " $needs_btf " in
	*" $t "*)
		if [ ! -e /sys/kernel/btf/vmlinux ]; then
			ktap_skip "upstream $t" "needs the kernel's BTF (CONFIG_DEBUG_INFO_BTF), which this kernel is built without"
			continue
		fi ;;
	esac
	t0=$(pf_uptime_cs)
	run_test "$t"
	case " $retry_once " in
	*" $t "*)
		if grep -q '^fail' /tmp/upstream.cases; then
			echo "# upstream $t: failed once, run again: $(grep '^fail' /tmp/upstream.cases | cut -f2 | paste -sd ' ' -)"
			run_test "$t"
		fi ;;
	esac
	failed_case=0
	while IFS="$tab" read -r res name reason; do
		case $res in
		pass) ktap_ok "upstream $t: $name" ;;
		skip) ktap_skip "upstream $t: $name" "$(echo "$reason" | cut -c1-120)" ;;
		*) ktap_not_ok "upstream $t: $name${reason:+ ($reason)}"; failed_case=1 ;;
		esac
	done </tmp/upstream.cases
	if [ "$rc" = 124 ]; then
		ktap_not_ok "upstream $t: killed after its time limit ($limit s)"
	elif [ ! -s /tmp/upstream.cases ]; then
		case $rc in
		0) ktap_ok "upstream $t" ;;
		4) ktap_skip "upstream $t" "$(grep -m1 -i 'skip' "$out" | cut -c1-120)" ;;
		*) ktap_not_ok "upstream $t (exit $rc)" ;;
		esac
	elif [ "$rc" != 0 ] && [ "$rc" != 4 ] && [ "$failed_case" = 0 ]; then
		ktap_not_ok "upstream $t (exit $rc without a failed case)"
	fi
	secs=$((($(pf_uptime_cs) - t0) / 100))
	echo "# upstream $t: $(cut -f1 /tmp/upstream.cases | sort | uniq -c | awk '{printf "%s%s %s", s, $1, $2; s = ", "}') (exit $rc, $secs s)"
done
ip netns del peer
rmmod pagefill
pf_kmemleak_check
# The plan at the end: how many cases the tests report is known only now.
ktap_planned=$ktap_n
echo "1..$ktap_n"
ktap_finish
