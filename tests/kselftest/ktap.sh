# SPDX-License-Identifier: GPL-2.0
# KTAP output for the in-VM tests (the format kselftest uses). Source it.
#
# On the debug kernel under TCG every process a test starts costs a fifth
# of a second or more, a Python one two (testbed.rst, "Time of each
# stage"), and that, not the driver, is most of those tests' time: the
# helpers here start as few as they can (shell builtins where they do), and
# the tests' own Python scripts, which need only the standard library, run
# with python3 -S (no site: its .pth files cost a second and a half).

# This script's folder, once (each process costs on the debug kernel).
pf_here=$(dirname "$0")
ktap_n=0
ktap_fail=0
ktap_planned=0
ktap_plan() { ktap_planned=$1; echo "TAP version 13"; echo "1..$1"; }
# With PF_KTAP_TIMES set (scripts/vm-run.sh passes it on), each point is
# followed by a comment with the seconds since the point before it: where a
# test's time goes.
ktap_time() {
	[ -n "${PF_KTAP_TIMES:-}" ] || return 0
	read -r ktap_up _ </proc/uptime
	echo "# time: $ktap_up s since boot, +$(echo "$ktap_up ${ktap_t_last:-$ktap_up}" |
		awk '{printf "%.1f", $1 - $2}') s"
	ktap_t_last=$ktap_up
}
[ -z "${PF_KTAP_TIMES:-}" ] || read -r ktap_t_last _ </proc/uptime
ktap_ok() { ktap_n=$((ktap_n + 1)); echo "ok $ktap_n $*"; ktap_time; }
ktap_not_ok() {
	ktap_n=$((ktap_n + 1)) ktap_fail=$((ktap_fail + 1))
	echo "not ok $ktap_n $*"
	ktap_time
}
ktap_skip() { ktap_n=$((ktap_n + 1)); echo "ok $ktap_n $1 # SKIP ${2:-}"; ktap_time; }
# ktap_check NAME CMD...: one test point from a command's status.
ktap_check() {
	name=$1
	shift
	if "$@"; then ktap_ok "$name"; else ktap_not_ok "$name"; fi
}
# ktap_finish: the test's status: every planned point run, none failed.
ktap_finish() {
	[ "$ktap_n" -eq "$ktap_planned" ] ||
		echo "# $ktap_n test points run, $ktap_planned planned"
	[ "$ktap_fail" -eq 0 ] && [ "$ktap_n" -eq "$ktap_planned" ]
}

# eventually_tries TRIES PAUSE CMD...: CMD succeeds within TRIES tries,
# PAUSE seconds apart.
eventually_tries() {
	ev_tries=$1 ev_pause=$2
	shift 2
	n=0
	until "$@"; do
		n=$((n + 1))
		[ "$n" -lt "$ev_tries" ] || return 1
		sleep "$ev_pause"
	done
}

# eventually CMD...: CMD succeeds within 5 seconds (for state that another
# process, such as a device model, updates on its own time).
eventually() { eventually_tries 50 0.1 "$@"; }

# eventually_long CMD...: as eventually, for up to 2 minutes (a watchdog, a
# device restart, under TCG on a busy machine).
eventually_long() { eventually_tries 240 0.5 "$@"; }

# The PCI addresses of the pagefill NICs, from their vendor and device IDs.
pf_nics() {
	for d in /sys/bus/pci/devices/*; do
		[ "$(cat "$d/vendor")" = 0x1b36 ] && [ "$(cat "$d/device")" = 0x00fe ] &&
			basename "$d"
	done
}

# pf_default_queues: the queue pairs pagefill uses until ethtool -L: one per
# physical core (netif_get_num_default_rss_queues()), at most the NIC's 4.
pf_default_queues() {
	n=$(sort -u /sys/devices/system/cpu/cpu*/topology/core_cpus_list | wc -l)
	[ "$n" -lt 4 ] || n=4
	echo "$n"
}

# pf_qsum DEV NAME: the ethtool -S counter NAME summed over the queues
# (rx0_NAME + rx1_NAME + ...; NAME is e.g. rx_packets or tx_sg_frames).
pf_qsum() {
	ethtool -S "$1" | awk -v want="$2" "$pf_qsum_awk"' END { printf "%.0f\n", s[want] }'
}
# The awk program that sums each counter over the queues: s["rx_packets"] is
# rx0_packets + rx1_packets + ...
pf_qsum_awk='{ n = $1; sub(/:$/, "", n); if (sub(/^rx[0-9]*_/, "", n)) s["rx_" n] += $2
	else if (sub(/^tx[0-9]*_/, "", n)) s["tx_" n] += $2 }'

# pf_qsums DEV PREFIX NAME...: the counters NAME as pf_qsum sums them, as
# shell assignments PREFIX_NAME=SUM for eval, from one ethtool -S (a test
# that reads a dozen counters at a time starts two programs, not three
# dozen).
pf_qsums() {
	pf_dev=$1 pf_pre=$2
	shift 2
	ethtool -S "$pf_dev" | awk -v pre="$pf_pre" -v names="$*" "$pf_qsum_awk"'
		END { k = split(names, w, " ")
			for (i = 1; i <= k; i++) printf "%s_%s=%.0f\n", pre, w[i], s[w[i]] }'
}

# pf_sink PORT EXPECTED TIMEOUT [IDLE]: udp_sink.py in the background, ready
# for frames; its pid is $pf_sink, its summary goes to /tmp/sink.out. Its
# waits (TIMEOUT, IDLE, PF_SINK_QUIET) start at pf_sent, once the generator
# is done, not now: a guest held off the CPU for a minute (a background VM
# on a busy host) gets its frames that much later, and its clock runs on.
pf_sink() {
	rm -f /tmp/udp_sink.ready /tmp/gen.sent
	PF_SINK_SENT=/tmp/gen.sent python3 -S "$pf_here/udp_sink.py" "$@" >/tmp/sink.out 2>&1 &
	pf_sink=$!
	eventually test -f /tmp/udp_sink.ready
}
# pf_sent: the generator is done; pf_sink's waits start.
pf_sent() { : >/tmp/gen.sent; }

# pf_send_streams COUNT [IDLE]: COUNT frames of 64 bytes from each of
# nodes 1-31 (PF_GEN_RATE a second in all, default unpaced) to group 0 of
# the NIC with MAC $mac at 192.0.2.1, into a UDP
# sink on port 9000 (exact, or with IDLE for lossy traffic); the sink's
# summary is in /tmp/sink.out. The sink waits PF_SINK_TIMEOUT s (60) after
# the generator is done; a stream paused PF_GIVE_UP_MS (20000, not counting
# time the VM waited for a host CPU) fails the run instead of hanging it.
pf_send_streams() {
	pf_sink 9000 $((31 * $1)) "${PF_SINK_TIMEOUT:-60}" ${2:-}
	pf_host gen --nodes 1-31 --groups 0 --size 64 --count "$1" --rate "${PF_GEN_RATE:-0}" \
		--give-up-ms "${PF_GIVE_UP_MS:-20000}" \
		--dst-mac "$mac" --dst-ip 192.0.2.1 --src-ip 198.51.100.0 >/tmp/gen.out
	pf_gen_rc=$?
	pf_sent
	wait "$pf_sink"
	pf_sink_rc=$?
	[ "$pf_gen_rc" -eq 0 ] || echo "# generator: $(cat /tmp/gen.out)"
	[ "$pf_gen_rc" -eq 0 ] && [ "$pf_sink_rc" -eq 0 ]
}

# pf_udp_rcvbuf_errors: datagrams the guest's UDP sockets dropped for want
# of room (a sink slower than its traffic), from /proc/net/snmp.
pf_udp_rcvbuf_errors() {
	awk '$1 == "Udp:" { if (++n == 1) for (i = 2; i <= NF; i++) col[$i] = i
		else print $col["RcvbufErrors"] }' /proc/net/snmp
}

# Kernel log lines since the mark set by pf_log_mark.
pf_log_mark() { pf_log_start=$(dmesg | wc -l); }
pf_log_since() { dmesg | tail -n +"$((pf_log_start + 1))"; }

# pf_log_clean: the kernel logged no warning, BUG, lockdep, KASAN or DMA-API
# report since pf_log_mark (scripts/vm-run.sh fails the run on one too;
# this names the test that saw it). The patterns are vm-run.sh's where the
# repository is at hand.
pf_log_clean() {
	pats=${PF_TOP:-.}/scripts/kernel-log-problems.txt
	if [ -r "$pats" ]; then
		re=$(sed -e '/^#/d' -e '/^$/d' "$pats" | paste -sd'|')
	else
		re='WARNING:|BUG:|Oops|Call Trace:|KASAN|UBSAN|possible circular locking|'\
'possible recursive locking|inconsistent lock state|DMA-API: .*device driver'
	fi
	# With the two lines before each hit: a bare "Call Trace:" is named by
	# the report above it (a stall, a blocked task).
	found=$(pf_log_since | grep -E -B 2 "$re" | head -n 15)
	[ -z "$found" ] || { echo "$found" | sed 's/^/# /'; return 1; }
}

# pf_rmmod_abandoned BDF: rmmod pagefill after a failed reset abandoned
# the buffers of the NIC at BDF (they stay mapped for good). With the
# DMA-API debugging, unbinding the driver reports the device's mappings left
# (one warning for them all, which would fail the VM run): that report is
# the abandoning, so it is silenced for the unbind (num_errors 0; it is
# still counted) and checked instead: streaming mappings were left, no
# DMA-API error came before, and the unbind's report is the one error.
# Without the DMA-API debugging, only the rmmod is checked.
pf_rmmod_abandoned() {
	dma=/sys/kernel/debug/dma-api
	if [ ! -w "$dma/num_errors" ]; then
		echo "# no DMA-API debugging: the abandoned mappings are not counted"
		timeout 60 rmmod pagefill
		return
	fi
	mapped=$(grep " $1 " "$dma/dump" | grep -vc ' coherent ')
	e0=$(cat "$dma/error_count") n0=$(cat "$dma/num_errors")
	echo 0 >"$dma/num_errors"
	timeout 60 rmmod pagefill
	rc=$?
	errors=$(($(cat "$dma/error_count") - e0))
	echo "$n0" >"$dma/num_errors"
	echo "# rmmod: the DMA-API debugging found $mapped streaming mappings left "\
"(the abandoned buffers); $e0 errors before, $errors at the unbind"
	[ "$rc" -eq 0 ] && [ "$mapped" -gt 0 ] && [ "$e0" -eq 0 ] && [ "$errors" -eq 1 ]
}

# pf_uptime_cs: the time since boot in hundredths of a second.
pf_uptime_cs() {
	read -r up _ </proc/uptime
	# "1" before the two decimals: "0.09" must not read as octal.
	echo $((${up%.*} * 100 + 1${up#*.} - 100))
}

# pf_kmemleak_scan_twice: the two kmemleak scans after which its report
# names only leaks. A scan names an object only once it is older than
# kmemleak's minimum age (5 s) when the scan starts, and a first scan only
# records what each object holds (one that changed since is taken as in
# use), hence a second scan, at least 5 s after the first began: what the
# test leaked was allocated before that. On the debug kernel under TCG a
# scan takes longer than that by itself, and then nothing waits.
pf_kmemleak_scan_twice() {
	t0=$(pf_uptime_cs)
	echo scan >/sys/kernel/debug/kmemleak || return 1
	left=$((t0 + 520 - $(pf_uptime_cs)))
	[ "$left" -le 0 ] || sleep "$((left / 100)).$(printf %02d $((left % 100)))"
	echo scan >/sys/kernel/debug/kmemleak
}

# A kmemleak scan that reports only leaks (pf_kmemleak_scan_twice). The
# guest's init stops kmemleak's periodic scan (scripts/guest-init.sh):
# every test scans at its end with this instead. A kmemleak that turned
# itself off refuses the scan: a failure, not a clean report.
pf_kmemleak_clean() {
	pf_kmemleak_scan_twice || return 1
	leaks=$(cat /sys/kernel/debug/kmemleak)
	[ -z "$leaks" ] || { echo "$leaks"; return 1; }
}

# pf_kmemleak_check [WHAT]: the test point WHAT (default "no kmemleak
# report"): pf_kmemleak_clean, or a skip on a kernel without kmemleak.
pf_kmemleak_check() {
	if [ -e /sys/kernel/debug/kmemleak ]; then
		ktap_check "${1:-no kmemleak report}" pf_kmemleak_clean
	else
		ktap_skip "${1:-no kmemleak report}" "no kmemleak in this kernel"
	fi
}

# pf_listening NETNS PORT: a TCP socket listens on PORT in network namespace
# NETNS ("" for this one), so that a client started now is not refused (a
# listener started in the background may take seconds to get there on a
# debug kernel under TCG).
pf_listening() {
	if [ -n "$1" ]; then
		[ -n "$(ip netns exec "$1" ss -Hltn "sport = :$2")" ]
	else
		[ -n "$(ss -Hltn "sport = :$2")" ]
	fi
}

# pf_pair: the first two pagefill NICs as a pair of hosts on one fabric:
# $a (192.0.2.1) stays here, $b (192.0.2.2) moves into network namespace
# "peer"; both come up. Sets a, b and bdf_a.
# pf_xsk_tool: sets xsk to the AF_XDP test tool. In a kernel tree kselftest
# builds pf_xsk; run from this tree, it is built here (its only
# dependencies are the kernel's UAPI headers); without a compiler the test
# is skipped.
pf_xsk_tool() {
	xsk=$pf_here/pf_xsk
	[ -x "$xsk" ] && return
	xsk=/tmp/pf_xsk
	cc -O2 -o "$xsk" "$pf_here/pf_xsk.c" || {
		echo "1..0 # SKIP needs a C compiler and the kernel's UAPI headers for pf_xsk"
		exit 4
	}
}
# pf_up_one: the first pagefill NIC up at 192.0.2.1/24, without IPv6 (it
# sends nothing of its own that the tests would count); sets bdf, dev, mac
# and queues (the queue pairs in use).
pf_up_one() {
	bdf=$(pf_nics | head -n 1)
	dev=$(ls "/sys/bus/pci/devices/$bdf/net")
	sysctl -qw "net.ipv6.conf.$dev.disable_ipv6=1"
	ip addr add 192.0.2.1/24 dev "$dev"
	ip link set "$dev" up
	mac=$(cat "/sys/class/net/$dev/address")
	queues=$(ethtool -l "$dev" | sed -n '/^Current/,$s/^Combined:[[:space:]]*//p')
}
pf_pair() {
	set -- $(pf_nics)
	bdf_a=$1
	a=$(ls "/sys/bus/pci/devices/$1/net")
	b=$(ls "/sys/bus/pci/devices/$2/net")
	ip netns add peer &&
		ip link set "$b" netns peer &&
		ip addr add 192.0.2.1/24 dev "$a" &&
		ip link set "$a" up &&
		ip -n peer addr add 192.0.2.2/24 dev "$b" &&
		ip -n peer link set "$b" up &&
		ip -n peer link set lo up
}

# pf_ynl ARGS: the kernel source's YNL command line on the netdev family,
# e.g. pf_ynl --dump queue-get. JSON-ish Python output.
pf_ynl() {
	# A build with O= links its source; an in-tree build is its own.
	ksrc=$pf_kdir
	[ ! -e "$pf_kdir/source" ] || ksrc=$(readlink -f "$pf_kdir/source")
	python3 "$ksrc/tools/net/ynl/pyynl/cli.py" --no-schema \
		--spec "$ksrc/Documentation/netlink/specs/netdev.yaml" "$@"
}

# pf_load [KO]: loads the driver: KO when given (the VM tests pass the
# module under test), else $PAGEFILL_KO, else the installed one (modprobe).
pf_load() {
	pf_ko=${1:-${PAGEFILL_KO:-}}
	if [ "$pf_ko" = builtin ]; then
		[ -d /sys/bus/pci/drivers/pagefill ]
	elif [ -n "$pf_ko" ]; then
		insmod "$pf_ko"
	else
		modprobe pagefill
	fi
}

# pf_builtin: the driver is built into the kernel (the module's path given
# to a test is "builtin", as tests/run.sh passes for scripts/in-tree.sh's
# kernel): there is nothing to load or unload.
pf_builtin() { [ "${pf_ko:-${ko:-}}" = builtin ]; }

# pf_unload: rmmod pagefill, unless it is built in.
pf_unload() { pf_builtin || rmmod pagefill; }

# pf_host VERB ARGS...: ask the host agent of scripts/vm-run.sh to drive the
# device models (tests/kselftest/pf-host.sh lists the verbs), print its
# answer and return its status. Written for the debug kernel under TCG,
# where each process the guest starts costs a fifth of a second or more
# (testbed.rst, "Time of each stage"): a request starts one process, the
# cat of its answer (and the sleeps of its wait, often none). The request
# file is written with one write and ends with a line "."; the agent takes
# only a complete one. Its id is unique among the guest's requests, side by
# side ones too (the process that asks, read from /proc/self by the shell
# itself, a count and the time); the answers stay in the share, which
# vm-run.sh removes.
pf_host() {
	read -r pf_host_pid _ </proc/self/stat
	read -r pf_host_up _ </proc/uptime
	pf_host_n=$((${pf_host_n:-0} + 1))
	pf_host_id=$pf_host_pid.$pf_host_n.$pf_host_up
	printf '%s\n.\n' "$*" >"/run/pf/req.$pf_host_id" || return 1
	# The agent answers most requests within a tenth of a second (it
	# looks every 0.05 s): a few checks first, each a few milliseconds,
	# then sleeps (the first of which would cost more than the wait).
	pf_host_i=0
	until [ -f "/run/pf/done.$pf_host_id" ]; do
		pf_host_i=$((pf_host_i + 1))
		[ "$pf_host_i" -gt 30 ] || continue
		if [ "$pf_host_i" -ge 6030 ]; then
			echo "pf-host: no answer from the host" >&2
			return 124
		fi
		sleep 0.05
	done
	# cat, not a read loop: dash's read takes a byte a call, and each is
	# a round trip over 9p.
	cat "/run/pf/resp.$pf_host_id"
	read -r pf_host_rc <"/run/pf/done.$pf_host_id"
	return "$pf_host_rc"
}

# pf_need_host: the test drives the device models through the host agent of
# scripts/vm-run.sh; where there is none (a kselftest run on other
# machines) it skips, with kselftest's skip code.
pf_need_host() {
	[ -d /run/pf ] && return 0
	echo "1..0 # SKIP needs the device model's host agent (scripts/vm-run.sh)"
	exit 4
}
