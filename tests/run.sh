#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# The test command: sets up everything it needs (toolchain root, test
# kernels, device model, module), then runs the host tests and the VM tests
# on each kernel flavour, and prints the results, the time of each stage
# and one summary line "N passed, N failed, N skipped". Exits non-zero if
# anything failed.
#
# PAGEFILL_FLAVOURS selects the kernel flavours (default: "fast debug
# debian intree"): the two test kernels this project builds; the stock
# Debian kernel (the module built as a Debian host builds it:
# scripts/kdir.sh, in the debian-host root); and a kernel tree that carries
# the driver, built in (scripts/in-tree.sh). The last two run the tests
# that name them.
# --full (not CI's: it takes hours) also runs the tests that name a flavour
# in vm_full_flavours: the upstream driver selftests on the debug kernel.
# PAGEFILL_TESTS, for a developer's run, names the VM tests to run (e.g.
# "rx groups-churn upstream"; default: all of them, and the VM runner's
# self-test).
# PAGEFILL_JOBS is how many VMs run side by side (default 1: on the
# project's 2-core machines two VMs under TCG at equal priority take twice
# as long each). PAGEFILL_BACKGROUND names the flavours whose VM tests run
# in a worker of their own beside the others, from start to end, at nice
# PAGEFILL_BACKGROUND_NICE (default: debug, at 19; empty: none): they take
# the CPU the others leave idle (testbed.rst, "How a run is scheduled"), and once
# the others are done, two of them run side by side. A test that
# must not run beside the others (vm_alone=1 in its .test file: the upstream
# lists, with short timing windows) runs after them, PAGEFILL_ALONE_JOBS at
# a time (default 4: the list and each flavour's xdp.py, all of which
# mostly wait, on socat's timeouts and so_txtime's delays; xdp.py beside
# the list ends about when the list does; testbed.rst, "Time of each
# stage"), the background beside them. A test
# that needs the CPUs to itself (vm_alone=2: upstream-solo, a traffic rate
# and a tracer's deadline) runs first, one at a time, with nothing beside it.
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/scripts/lib.sh"

full=0
case "${1:-}" in
--full) full=1 ;;
"") ;;
*) echo "usage: tests/run.sh [--full]" >&2; exit 2 ;;
esac
flavours=${PAGEFILL_FLAVOURS:-fast debug debian intree}
only_tests=${PAGEFILL_TESTS:-}
jobs=${PAGEFILL_JOBS:-1}
alone_jobs=${PAGEFILL_ALONE_JOBS:-4}
background=${PAGEFILL_BACKGROUND-debug}
background_nice=${PAGEFILL_BACKGROUND_NICE:-19}
t_start=$SECONDS
# Results and stage times go to files: the VM jobs run in worker
# subshells. One line each: "RESULT NAME" and "SECONDS NAME".
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
results_file=$work/results stages_file=$work/stages cpu_file=$work/cpu
: >"$results_file"
: >"$stages_file"
: >"$cpu_file"
# Host test counts (cargo's own summary lines).
host_passed=0 host_failed=0 host_skipped=0

# stage NAME: a setup stage starts (and the one before ends).
stage_name="" stage_t0=$SECONDS
stage() {
	[ -z "$stage_name" ] || printf '%s %s\n' "$((SECONDS - stage_t0))" "$stage_name" >>"$stages_file"
	stage_name=$* stage_t0=$SECONDS
	[ -z "$stage_name" ] || pf_log "== $* (at $((SECONDS - t_start)) s)"
}
record() { # record NAME RESULT
	printf '%-8s %s\n' "$2" "$1" >>"$results_file"
}
# locked CMD...: CMD alone among the workers (output that must not
# interleave).
locked() { flock "$work/lock" "$@"; }

# Counts the KTAP test points of a test's output, under a name prefix. A
# failed VM run prints the console log after the command's output, so the
# same lines can appear twice; each counts once. Points missing from the
# plan ("1..N": the test stopped, or its output was cut) count as one
# failure. The output is read as text even if a byte of the console is not
# (a NUL would make grep print "binary file matches" instead of the lines).
count_ktap() { # count_ktap PREFIX FILE
	local line name plan seen points
	points=$(tr -d '\r\0' <"$2" | grep -a -E '^(not )?ok [0-9]+ |^1\.\.[0-9]+$')
	plan=$(grep -E '^1\.' <<<"$points" | sort -u)
	seen=$(grep -E 'ok [0-9]+ ' <<<"$points" |
		awk '{ n = $1 == "not" ? $3 : $2 } !seen[n]++' | wc -l)
	case "$plan" in
	"") record "$1: no KTAP plan in the output (the test did not start or did not finish)" fail ;;
	*[!0-9.]*) ;; # more than one test's plan: the points cannot be matched to one
	*) [ "$seen" -ge "${plan#1..}" ] ||
		record "$1: ${plan#1..} test points planned, $seen reported" fail ;;
	esac
	while IFS= read -r line; do
		case "$line" in
		"not ok "*)
			name=${line#not ok }; name=${name#* }
			record "$1: $name" fail ;;
		"ok "*"# SKIP"*)
			name=${line#ok }; name=${name#* }
			record "$1: $name" skip ;;
		"ok "*)
			name=${line#ok }; name=${name#* }
			record "$1: $name" pass ;;
		esac
	done < <(grep -E 'ok [0-9]+ ' <<<"$points" | awk '!seen[$0]++')
}

stage "setup: toolchain root"
"$top/scripts/toolchain-root.sh" >/dev/null || { record "setup: toolchain root" fail; flavours=""; }

# The flavours' setup, in three chains side by side: the fast kernel and
# the in-tree kernel (a copy of the fast kernel's build), the debug kernel,
# and the stock Debian kernel's host. One kernel build alone leaves a core
# idle a tenth of its time (configuration, the Rust crates, the link), and
# the Debian host's setup (package downloads and unpacking) and the in-tree
# kernel's copy two fifths of theirs; side by side, each build's
# make -j$(nproc) fills the other's gaps. Each item's own time is a line of
# the stage table.
setup_flavour() { # setup_flavour FLAVOUR
	case "$1" in
	intree) "$top/scripts/in-tree.sh" >/dev/null ;;
	debian)
		# The stock kernel comes built: what the tests need is the
		# Debian host to build the module in, the Rust metadata its
		# headers lack (made by the first build for it) and the
		# initramfs to boot.
		"$top/scripts/toolchain-root.sh" debian-host >/dev/null &&
			"$top/scripts/build-module.sh" debian >/dev/null &&
			"$top/scripts/debian-initramfs.sh" >/dev/null || return 1
		# The pagefill-dkms package, built and installed with apt in
		# the Debian host (tests/vm/dkms.test loads what it installed).
		"$top/scripts/dkms-host.sh" >"$work/dkms-host" ||
			{ record "setup: debian: the pagefill-dkms package (scripts/dkms-host.sh)" fail; rm -f "$work/dkms-host"; } ;;
	*) "$top/scripts/build-kernel.sh" "$1" >/dev/null ;;
	esac
}
setup_chain() { # setup_chain FLAVOUR...: their setups one after the other
	local f t0
	for f; do
		t0=$SECONDS
		setup_flavour "$f" || { record "setup: $f kernel" fail; echo "$f" >>"$work/setup-failed"; }
		echo "$((SECONDS - t0)) setup, side by side: $f kernel" >>"$work/setup-stages"
	done
}
declare -A chain_of=()
for f in $flavours; do
	case "$f" in
	fast | intree) chain_of[a]+=" $f" ;;
	debian) chain_of[c]+=" $f" ;;
	*) chain_of[b]+=" $f" ;;
	esac
done
if [ -n "$flavours" ]; then
	stage "setup: the flavours' kernels and hosts, side by side"
	pids=()
	for c in "${!chain_of[@]}"; do
		# shellcheck disable=SC2086
		setup_chain ${chain_of[$c]} &
		pids+=($!)
	done
	wait "${pids[@]}"
fi
if [ -s "$work/setup-failed" ]; then
	while read -r f; do flavours=${flavours//$f/}; done <"$work/setup-failed"
fi

stage "setup: upstream driver selftests"
[ ! -f "$work/setup-stages" ] || cat "$work/setup-stages" >>"$stages_file"
if PAGEFILL_SELFTESTS=$("$top/scripts/build-selftests.sh"); then
	export PAGEFILL_SELFTESTS
else
	record "setup: upstream driver selftests" fail
fi

stage "setup: benchmark tools"
if PAGEFILL_BENCH_BIN=$("$top/scripts/bench/tools.sh"); then
	export PAGEFILL_BENCH_BIN
else
	record "setup: benchmark tools" fail
fi

# KVM where a short probe boot of the first flavour's kernel works, else
# TCG (scripts/accel.sh logs which and why; a few seconds where KVM cannot
# boot it). Every VM of the run uses it, but those that count instructions.
stage "setup: KVM probe"
for f in $flavours; do
	PAGEFILL_ACCEL=$("$top/scripts/accel.sh" "$([ "$f" = intree ] && echo fast || echo "$f")") ||
		PAGEFILL_ACCEL=tcg
	export PAGEFILL_ACCEL
	break
done

stage "host tests (cargo test)"
host_log=$(mktemp)
cargo test --workspace --manifest-path "$top/Cargo.toml" 2>&1 | tee "$host_log" | grep -E '^test |test result' >&2
host_rc=${PIPESTATUS[0]}
while read -r _ _ _ p _ f _ i _; do
	host_passed=$((host_passed + p)) host_failed=$((host_failed + f)) host_skipped=$((host_skipped + i))
done < <(grep -E '^test result:' "$host_log" | sed 's/;//g')
# Named in the list of failures (counted one by one above).
[ "$host_failed" = 0 ] || results_host="fail     host: $host_failed cargo test(s) failed, see the log above"
if [ "$host_rc" != 0 ] && ! grep -q '^test result:.* [1-9][0-9]* failed' "$host_log"; then
	tail -n 30 "$host_log" >&2
	record "host: cargo test did not run" fail
fi
rm -f "$host_log"

# The lint (the module graph, rustfmt, clippy builds of the module,
# checkpatch, the documentation) runs beside the VM tests from their second
# stage on, at the background VMs' nice (PAGEFILL_BACKGROUND_NICE): it needs
# about a core for half a minute, which before the VMs would be half a
# minute of the run with a core idle. Its output and points come at the
# end; its time is its own stage line.
lint_pid=
lint_start() {
	[ -n "$flavours" ] || return 0
	(
		renice -n "$background_nice" -p "$BASHPID" >/dev/null
		t0=$SECONDS
		"$top/tests/host/lint.sh" >"$work/lint.out" 2>&1
		echo "$((SECONDS - t0)) lint: rustfmt, clippy, checkpatch (beside the VM tests, nice $background_nice)" \
			>"$work/lint.stage"
	) &
	lint_pid=$!
}
lint_finish() {
	[ -n "$lint_pid" ] || return 0
	wait "$lint_pid"
	cat "$work/lint.out" >&2
	count_ktap "lint" "$work/lint.out"
	cat "$work/lint.stage" >>"$stages_file"
}

# The fast kernel runs every VM test with every DMA bounced through
# swiotlb: a driver that reads a buffer without syncing it for the CPU, or
# writes one the device owns, sees stale data. 256 MiB of bounce buffers:
# page_pool keeps its pages mapped, up to 64 MiB a queue with 16 KiB
# buffers. The debug kernel runs them with the DMA-API debugging; a test
# adds kernel arguments of its own for one flavour with vm_append_FLAVOUR
# (the debug kernel bounces the data path tests too: bouncing costs it a
# fifth more time, too much for CI on every test). A test with
# vm_kernel_args=0 gets none of these (bigmem.test: swiotlb must bounce
# only what a device cannot reach).
# The stock kernel runs as Debian ships it.
declare -A kernel_args=([fast]="swiotlb=131072,force" [debug]="" [debian]="" [intree]="")
# The debug kernel's KASAN saves no stack trace at allocation, free and
# call_rcu() (kasan.stacktrace=off, scripts/kconfig/debug.patch), nor does
# kmemleak at allocation (kmemleak.stacktrace=off): under TCG those traces
# are most of KASAN's cost and 8 % of a test's instructions, and no check
# needs them. A KASAN or kmemleak report still fails its test, only
# without where the object was allocated (and freed); scripts/vm-run.sh
# keeps the traces, so running that one test again with it shows them. A
# test that reads kmemleak's traces turns them back on with
# vm_append_debug (faults.test); the last of two settings wins. Every test
# of the flavour gets these, vm_kernel_args=0 or not.
declare -A always_args=([debug]="kasan.stacktrace=off kmemleak.stacktrace=off")

# The VM jobs: each a file in $work/jobs, numbered in the order they start
# (the longest first: the debug kernel's, then the fast kernel's), holding
# the variables of one run_vm call; vm_alone jobs in $work/alone (1) and
# $work/solo (2), the background flavours' in $work/background.
# The queue starts with the jobs that took longest in the last run on this
# machine ($PF_CACHE/vm-test-times, the stage times of the VM tests): the
# last to start are short, so both workers finish at about the same time.
# A job not timed before goes first, one boot of several tests before one
# of a single test (on a fresh machine every job: a shared boot of the debug
# kernel takes five to ten minutes, and started last it would run alone at
# the end of the run).
mkdir -p "$work/jobs" "$work/alone" "$work/solo" "$work/background"
times_file=$PF_CACHE/vm-test-times
njobs=0
declare -A last_time=()
if [ -r "$times_file" ]; then
	while read -r secs name; do last_time[$name]=$secs; done <"$times_file"
fi
# vm_what FLAVOUR NAME...: a VM job's stage name.
vm_what() {
	local f=$1
	shift
	echo "$f kernel: VM test $*${2:+ (one boot)}"
}
add_job() { # add_job ALONE FLAVOUR APPEND GUEST_CMD NAME... -- VM_OPTS...
	local alone=$1 dir=$work/jobs names=() a secs
	shift
	if [ "$alone" = 1 ]; then
		dir=$work/alone
	elif [ "$alone" = 2 ]; then
		dir=$work/solo
	elif [[ " $background " =~ " $1 " ]]; then
		dir=$work/background
	fi
	for a in "${@:4}"; do [ "$a" = -- ] && break; names+=("$a"); done
	secs=${last_time[$(vm_what "$1" "${names[@]}")]:-$((90000 + 100 * ${#names[@]}))}
	njobs=$((njobs + 1))
	printf '%q ' run_vm "$@" >"$dir/$(printf '%05d-%03d' "$((99999 - secs))" "$njobs")"
}

# run_vm FLAVOUR APPEND GUEST_CMD NAME... -- VM_OPTS...: one boot running
# GUEST_CMD, its KTAP lines counted under "FLAVOUR: NAME". With several
# names, GUEST_CMD runs their tests in turn, each output headed by a line
# "# pagefill VM test NAME", and each test's lines count under its name.
batch_marker="# pagefill VM test"
run_vm() {
	local f=$1 append=$2 guest_cmd=$3 names=() out rc name t0=$SECONDS what parts=""
	shift 3
	while [ "$1" != -- ]; do names+=("$1"); shift; done
	shift
	what=$(vm_what "$f" "${names[@]}")
	pf_log "== $what (at $((SECONDS - t_start)) s)"
	out=$(mktemp)
	"$top/scripts/vm-run.sh" --kernel "$f" --append "$append" "$@" \
		-- "$guest_cmd" >"$out" 2>&1
	rc=$?
	locked cat "$out" >&2
	# QEMU 11.1's vfio-user client aborts on an assertion of its own
	# (error_setv: an Error set twice) when a device model dies under it,
	# which surprise does on purpose (testbed.rst, "QEMU's abort"): about
	# one run in two on the project's machines, whatever the driver does.
	# The guest dies with QEMU, so the test's own checks never ran: that
	# test alone, for that abort alone, runs again, up to five more times
	# (six aborts in a row at one in two: one run in 64), and the log says
	# so. Any other failure, and a sixth abort, count.
	local tries=1
	while [ "$rc" != 0 ] && [ "${names[*]}" = surprise ] && [ "$tries" -lt 6 ] &&
		grep -aqF "error_setv: Assertion" "$out"; do
		tries=$((tries + 1))
		pf_log "$what: QEMU aborted in its vfio-user client after the device model was killed (QEMU's bug, not the test's): run $tries"
		echo "$what" >>"$work/qemu-aborts"
		"$top/scripts/vm-run.sh" --kernel "$f" --append "$append" "$@" \
			-- "$guest_cmd" >"$out" 2>&1
		rc=$?
		locked cat "$out" >&2
	done
	if [ "${#names[@]}" -eq 1 ]; then
		count_ktap "$f: ${names[0]}" "$out"
	else
		# A failed run prints the console log after the output, with
		# the same headers: a test's lines gather under its name wherever
		# they appear.
		for name in "${names[@]}"; do
			tr -d '\r' <"$out" | awk -v want="$batch_marker $name" \
				'index($0, "'"$batch_marker"' ") == 1 { on = ($0 == want); next } on' \
				>"$out.part"
			count_ktap "$f: $name" "$out.part"
		done
		rm -f "$out.part"
		# Each test's part of the boot, by the guest's clock.
		parts=$(tr -d '\r' <"$out" | awk -v m="$batch_marker time" -v f="$f" \
			'index($0, m " ") == 1 && !seen[$6]++ {
				printf "%d %s kernel:   %s, in that boot\n", $8 - $7 + 0.5, f, $6 }')
	fi
	if [ "$rc" != 0 ] && ! grep -aq '^not ok ' "$out"; then
		record "$f: ${names[*]} (VM run failed, see log above)" fail
	fi
	qemu_cpu "$out" "$what"
	rm -f "$out"
	# The job's line and its tests' lines together.
	locked sh -c 'printf "%s %s\n" "$1" "$2" >>"$3"; [ -z "$4" ] || printf "%s\n" "$4" >>"$3"' \
		sh "$((SECONDS - t0))" "$what" "$stages_file" "$parts"
}

# qemu_cpu OUT WHAT: the CPU time of the QEMUs whose vm-run.sh output is in
# file OUT, for the stage WHAT.
qemu_cpu() {
	tr -d '\r' <"$1" | awk -v what="$2" '/\] VM ran for .* QEMU used [0-9]+ CPU-s/ {
			for (i = 1; i < NF; i++) if ($i == "used") cpu += $(i + 1) }
		END { if (cpu != "") print cpu, what }' | locked sh -c 'cat >>"$1"' sh "$cpu_file"
}

# The VM runner's self-test, the first job: its six boots are short.
run_selftest() {
	local out t0=$SECONDS
	pf_log "== $1 kernel: VM runner self-test (at $((SECONDS - t_start)) s)"
	out=$(mktemp)
	"$top/tests/host/vm-runner.sh" "$1" >"$out" 2>&1
	locked cat "$out" >&2
	count_ktap "$1: vm-runner" "$out"
	qemu_cpu "$out" "$1 kernel: VM runner self-test"
	rm -f "$out"
	printf '%s %s\n' "$((SECONDS - t0))" "$1 kernel: VM runner self-test" >>"$stages_file"
}

# The pagefill-dkms package's install (setup of the debian flavour), for
# tests/vm/dkms.test.
PAGEFILL_DKMS_HOST=$(cat "$work/dkms-host" 2>/dev/null)
export PAGEFILL_DKMS_HOST
declare -A ko_of=()
for f in $flavours; do
	if [ "$f" = intree ]; then
		# Built in: the tests are told so instead of a module's path.
		ko_of[$f]=builtin
		continue
	fi
	stage "$f kernel: build module"
	if ! ko_of[$f]=$("$top/scripts/build-module.sh" "$f"); then
		unset "ko_of[$f]"
		record "$f: build pagefill.ko" fail
	fi
done

# Jobs are queued debug kernel first (its tests take the longest).
order=""
for f in debug fast debian intree; do
	[[ " $flavours " =~ " $f " ]] && [ -n "${ko_of[$f]+set}" ] && order+=" $f"
done
for f in $flavours; do
	[[ " $order " =~ " $f " ]] || [ -z "${ko_of[$f]+set}" ] || order+=" $f"
done
# The runner's self-test on the first flavour asked for.
for f in $flavours; do
	[ -n "${ko_of[$f]+set}" ] && [ -z "$only_tests" ] || continue
	njobs=$((njobs + 1))
	printf '%q ' run_selftest "$f" >"$work/jobs/$(printf '%05d-%03d' 0 "$njobs")"
	break
done
for f in $order; do
	ko=${ko_of[$f]}
	# Tests that may share a boot (vm_share_boot=1) and have the same VM
	# options and kernel arguments run in one VM, one after the other: a
	# debug kernel takes a minute to boot under TCG. Between two tests the
	# guest drops what a failed one may have left (the peer netns, the
	# module) and clears kmemleak's reports, so each is judged on its own.
	declare -A shared_cmd=() shared_names=()
	shared_keys=()
	for t in "$top"/tests/vm/*.test; do
		name=$(basename "$t" .test)
		[ -z "$only_tests" ] || [[ " $only_tests " =~ " $name " ]] || continue
		# A .test file holds the vm-run options, the guest command line
		# and, optionally, arguments after the module's path (vm_args, or
		# vm_args_FLAVOUR for one flavour), the kernel flavours it runs
		# on (default fast and debug: a test for the stock kernel names
		# debian too), vm_append_FLAVOUR (more kernel arguments),
		# vm_kernel_args=0 (not the flavour's kernel_args above),
		# vm_opts_FLAVOUR (the vm-run options for one flavour),
		# vm_share_boot, vm_alone and vm_full_flavours (more flavours
		# with --full).
		vm_args=()
		vm_opts_fast=()
		vm_opts_debug=()
		vm_opts_debian=()
		vm_opts_intree=()
		vm_args_fast=()
		vm_args_debug=()
		vm_args_debian=()
		vm_args_intree=()
		vm_append_fast=""
		vm_append_debug=""
		vm_append_debian=""
		vm_append_intree=""
		vm_flavours=(fast debug)
		vm_kernel_args=1
		vm_share_boot=0
		vm_alone=0
		vm_full_flavours=()
		# shellcheck disable=SC1090
		. "$t"
		[ "$full" = 0 ] || vm_flavours+=("${vm_full_flavours[@]}")
		declare -n flavour_args="vm_args_$f" flavour_append="vm_append_$f" flavour_opts="vm_opts_$f"
		[ "${#flavour_args[@]}" -eq 0 ] || vm_args=("${flavour_args[@]}")
		[ "${#flavour_opts[@]}" -eq 0 ] || vm_opts=("${flavour_opts[@]}")
		append=$flavour_append
		[ "$vm_kernel_args" = 0 ] || append="${kernel_args[$f]} $append"
		append="${always_args[$f]:-} $append"
		unset -n flavour_args flavour_append flavour_opts
		# shellcheck disable=SC2076
		if [[ ! " ${vm_flavours[*]} " =~ " $f " ]]; then
			continue
		fi
		# The guest's sh reads the command as one line: quote each word.
		guest_cmd=$(printf '%q ' "${vm_cmd[@]}" "$ko" "${vm_args[@]}")
		if [ "$vm_share_boot" = 1 ]; then
			# The options of shared tests are plain words (no --timeout:
			# the shared boot gets the default per test).
			key="${vm_opts[*]}|$append"
			[ -n "${shared_names[$key]+set}" ] || shared_keys+=("$key")
			shared_names[$key]+=" $name"
			# Each test's guest time is printed after it (under a
			# header of its own): run_vm puts it in the stage table.
			shared_cmd[$key]+="echo '$batch_marker $name'; read -r t0 _ </proc/uptime; "
			shared_cmd[$key]+="$guest_cmd || rc=1; read -r t1 _ </proc/uptime; "
			shared_cmd[$key]+="echo \"$batch_marker time $name \$t0 \$t1\"; "
			shared_cmd[$key]+="ip netns del peer 2>/dev/null; rmmod pagefill 2>/dev/null; "
			shared_cmd[$key]+="[ ! -w /sys/kernel/debug/kmemleak ] || echo clear >/sys/kernel/debug/kmemleak; "
			continue
		fi
		add_job "$vm_alone" "$f" "$append" "$guest_cmd" "$name" -- "${vm_opts[@]}"
	done
	for key in "${shared_keys[@]}"; do
		read -ra names <<<"${shared_names[$key]}"
		read -ra opts <<<"${key%%|*}"
		add_job 0 "$f" "${key#*|}" "rc=0; ${shared_cmd[$key]}exit \$rc" "${names[@]}" -- \
			"${opts[@]}" --timeout $((600 * ${#names[@]}))
	done
	unset shared_cmd shared_names
done

# take_job QUEUE: the next job's file in folder QUEUE, moved out of it, on
# stdout.
take_job() {
	local job
	# shellcheck disable=SC2016
	locked sh -c 'job=$(ls "$1" | head -n 1); [ -n "$job" ] && mv "$1/$job" "$2/$job" && echo "$2/$job"' \
		sh "$1" "$work"
}
worker() { # worker QUEUE [WHILE_FILE]: jobs from QUEUE (while WHILE_FILE is there)
	local job
	while [ -z "${2:-}" ] || [ -e "$2" ]; do
		job=$(take_job "$1") || break
		# shellcheck disable=SC1090
		. "$job"
	done
}

# The tests that need the CPUs to themselves (vm_alone=2) first.
if [ -n "$(ls "$work/solo")" ]; then
	stage "VM tests with nothing beside them"
	worker "$work/solo"
fi

# The background flavours' jobs (default the debug kernel's) run in a
# worker of their own at the lowest CPU priority (nice 19), from here
# to the end, beside the other workers: a VM keeps on average only part of
# the two cores busy (a debug kernel's about 1.2, a fast kernel's about
# 0.9, the two upstream lists together 0.8; testbed.rst, "Time of each
# stage"), and the background VM takes what the others leave: a task of
# nice 0 that wakes takes its CPU back from one of nice 19 at once. The
# others still slow down by about a quarter (caches, memory), and the run
# ends 500 s sooner. The debug kernel's tests wait on conditions, not
# times, which a debug kernel under TCG needs anyway.
#
# While the others run one at a time, a second background worker takes
# jobs from the same queue: one debug VM beside one fast or stock kernel's
# leaves the cores a fifth idle: its vCPUs wait on the device model and the
# host agent too. It takes no new job once that stage ends, and the tests
# that run alone (short timing windows) wait for its last one: beside them
# there is one background VM only.
background_worker() { # background_worker [WHILE_FILE]
	renice -n "$background_nice" -p "$BASHPID" >/dev/null
	worker "$work/background" "$@"
}
bg_pid= bg2_pid= beside= beside_jobs=
if [ -n "$(ls "$work/background")" ]; then
	background_worker &
	bg_pid=$!
	beside=" (and $background beside them, nice $background_nice)"
	beside_jobs=$beside
	if [ "$jobs" = 1 ]; then
		touch "$work/background2"
		background_worker "$work/background2" &
		bg2_pid=$!
		beside_jobs=" (and $background beside them, 2 at a time, nice $background_nice)"
	fi
fi
stage "VM tests, $jobs at a time$beside_jobs"
lint_start
pids=()
for _ in $(seq "$jobs"); do
	worker "$work/jobs" &
	pids+=($!)
done
wait "${pids[@]}"
rm -f "$work/background2"
if [ -n "$bg2_pid" ]; then
	stage "VM tests of $background: the second worker's last"
	wait "$bg2_pid"
fi
if [ -n "$(ls "$work/alone")" ]; then
	stage "VM tests that run alone, $alone_jobs at a time$beside"
	pids=()
	for _ in $(seq "$alone_jobs"); do
		worker "$work/alone" &
		pids+=($!)
	done
	wait "${pids[@]}"
fi
# Once the others are done, the background's last jobs have the cores to
# themselves: one VM keeps them only part busy (a debug kernel's about 1.2
# of the two), so a second worker takes jobs from the same queue.
if [ -n "$bg_pid" ]; then
	stage "VM tests of $background, the rest after the others, 2 at a time"
	background_worker &
	wait "$bg_pid" $!
fi

stage ""
lint_finish
# This run's times replace the last run's, test by test.
mkdir -p "$PF_CACHE"
{ cat "$times_file" 2>/dev/null; grep ' kernel: VM test ' "$stages_file"; } |
	awk '{ secs = $1; $1 = ""; t[substr($0, 2)] = secs } END { for (n in t) print t[n], n }' \
	>"$times_file.new" && mv "$times_file.new" "$times_file"
echo
cat "$results_file"
[ -z "${results_host:-}" ] || echo "$results_host"
echo
echo "time of each stage (s; a VM test's time is its own, side by side with others;"
echo "CPU-s: its QEMU's user and system time):"
declare -A cpu_of=()
while read -r secs name; do cpu_of[$name]=$secs; done <"$cpu_file"
while read -r secs name; do
	printf '%6d %6s  %s\n' "$secs" "${cpu_of[$name]:-}" "$name"
done <"$stages_file"
passed=$((host_passed + $(grep -ac '^pass ' "$results_file")))
failed=$((host_failed + $(grep -ac '^fail ' "$results_file")))
skipped=$((host_skipped + $(grep -ac '^skip ' "$results_file")))
if [ "$failed" -gt 0 ]; then
	echo
	echo "failed:"
	grep -a '^fail ' "$results_file"
	[ -z "${results_host:-}" ] || echo "$results_host"
fi
if [ -s "$work/qemu-aborts" ]; then
	echo
	echo "run again after QEMU's vfio-user abort (counted: the last run; a line for each abort):"
	sed 's/^/  /' "$work/qemu-aborts"
fi
echo
wall=$((SECONDS - t_start))
pf_children_cs cpu "$work/times"
cpu=$(((cpu + 50) / 100))
echo "wall time: $wall s"
echo "CPU time: $cpu CPU-s, every process of the run ($((cpu * 100 / (wall * $(nproc)))) % of $(nproc) cores' wall time);" \
	"QEMU $(awk '{ n += $1 } END { print n + 0 }' "$cpu_file") of them"
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
