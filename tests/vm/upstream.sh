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
# lacks; Documentation lists them). One KTAP line per test: ok, not ok, or
# SKIP when the test exits with kselftest's skip code (4); the test's own
# output follows as comments.
. "$(dirname "$0")/../kselftest/ktap.sh"
ko=$1
shift
ktap_plan $#
insmod "$ko"
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
for t in "$@"; do
	case $t in
	*=*)
		ktap_skip "upstream ${t%%=*}" "${t#*=}"
		continue ;;
	esac
	out=/tmp/upstream.out
	dir=$(dirname "$t")
	case $t in
	*.py) (cd "$dir" && timeout 900 python3 "./$(basename "$t")") >"$out" 2>&1 ;;
	*.sh)
		# The bash tests written for a driver-test setup (see
		# drivers/net/README.rst) find NETIF and the remote end from
		# the environment; the others, net/forwarding's kind, are given
		# two ports in this namespace and make their own hosts (VRFs).
		if grep -q 'DRIVER_TEST_CONFORMANT:=yes' "$t"; then
			(cd "$dir" && timeout 900 bash "./$(basename "$t")") >"$out" 2>&1
		else
			peer_teardown
			(cd "$dir" && timeout 900 bash "./$(basename "$t")" "$a" "$b") >"$out" 2>&1
			rc=$?
			peer_setup
			(exit $rc)
		fi ;;
	esac
	rc=$?
	sed 's/^/# /' "$out"
	case $rc in
	0) ktap_ok "upstream $t" ;;
	4) ktap_skip "upstream $t" "$(grep -m1 -i 'skip' "$out" | cut -c1-120)" ;;
	*) ktap_not_ok "upstream $t (exit $rc)" ;;
	esac
done
ip netns del peer
rmmod pagefill
ktap_finish
