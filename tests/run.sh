#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# The test command: sets up everything it needs (toolchain root, test
# kernels, device model, module), then runs the host tests and the VM tests
# on each kernel flavour, and prints one summary line
# "N passed, N failed, N skipped". Exits non-zero if anything failed.
#
# PAGEFILL_FLAVOURS selects the kernel flavours (default: "fast debug").
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/scripts/lib.sh"

flavours=${PAGEFILL_FLAVOURS:-fast debug}
passed=0 failed=0 skipped=0
results=()
t_start=$SECONDS

# stage NAME: a stage starts (and the one before ends); the table of
# stage times is printed at the end.
stage_names=() stage_starts=()
stage() {
	pf_log "== $* (at $((SECONDS - t_start)) s)"
	stage_names+=("$*")
	stage_starts+=("$SECONDS")
}
record() { # record NAME RESULT
	results+=("$(printf '%-8s %s' "$2" "$1")")
	case "$2" in
	pass) passed=$((passed + 1)) ;;
	fail) failed=$((failed + 1)) ;;
	skip) skipped=$((skipped + 1)) ;;
	esac
}

# Counts the KTAP test points of a test's output, under a name prefix. A
# failed VM run prints the console log after the command's output, so the
# same lines can appear twice; each counts once.
count_ktap() { # count_ktap PREFIX FILE
	local line name
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
	done < <(tr -d '\r' <"$2" | grep -E '^(not )?ok [0-9]+ ' | awk '!seen[$0]++')
}

stage "setup: toolchain root"
"$top/scripts/toolchain-root.sh" >/dev/null || { record "setup: toolchain root" fail; flavours=""; }
for f in $flavours; do
	stage "setup: $f kernel"
	"$top/scripts/build-kernel.sh" "$f" >/dev/null || { record "setup: $f kernel" fail; flavours=${flavours//$f/}; }
done

stage "setup: upstream driver selftests"
if PAGEFILL_SELFTESTS=$("$top/scripts/build-selftests.sh"); then
	export PAGEFILL_SELFTESTS
else
	record "setup: upstream driver selftests" fail
fi

stage "host tests (cargo test)"
host_log=$(mktemp)
cargo test --workspace --manifest-path "$top/Cargo.toml" 2>&1 | tee "$host_log" | grep -E '^test |test result' >&2
host_rc=${PIPESTATUS[0]}
while read -r _ _ _ p _ f _ i _; do
	passed=$((passed + p)); failed=$((failed + f)); skipped=$((skipped + i))
	# Named in the list of failures (counted above, one by one).
	[ "$f" = 0 ] || results+=("$(printf '%-8s %s' fail "host: $f cargo test(s) failed, see the log above")")
done < <(grep -E '^test result:' "$host_log" | sed 's/;//g')
if [ "$host_rc" != 0 ] && ! grep -q '^test result:.* [1-9][0-9]* failed' "$host_log"; then
	tail -n 30 "$host_log" >&2
	record "host: cargo test did not run" fail
fi
rm -f "$host_log"

if [ -n "$flavours" ]; then
	stage "lint: rustfmt, clippy, checkpatch"
	out=$(mktemp)
	"$top/tests/host/lint.sh" >"$out" 2>&1
	cat "$out" >&2
	count_ktap "lint" "$out"
	rm -f "$out"
fi

for f in $flavours; do
	stage "$f kernel: VM runner self-test"
	out=$(mktemp)
	"$top/tests/host/vm-runner.sh" "$f" >"$out" 2>&1
	cat "$out" >&2
	count_ktap "$f: vm-runner" "$out"
	rm -f "$out"
	break
done

# The fast kernel runs every VM test with every DMA bounced through
# swiotlb (as the seed's Driver Verifier did): a driver that reads a buffer
# without syncing it for the CPU, or writes one the device owns, sees stale
# data. 256 MiB of bounce buffers: page_pool keeps its pages mapped, up to
# 64 MiB a queue with 16 KiB buffers. The debug kernel runs them with the
# DMA-API debugging; a test adds kernel arguments of its own for one flavour
# with vm_append_FLAVOUR (the debug kernel bounces the data path tests too:
# bouncing costs it a fifth more time, too much for CI on every test). A
# test with vm_kernel_args=0 gets none of these (bigmem.test: swiotlb must
# bounce only what a device cannot reach).
declare -A kernel_args=([fast]="swiotlb=131072,force" [debug]="")

# run_vm FLAVOUR APPEND GUEST_CMD NAME... -- VM_OPTS...: one boot running
# GUEST_CMD, its KTAP lines counted under "FLAVOUR: NAME". With several
# names, GUEST_CMD runs their tests in turn, each output headed by a line
# "# pagefill VM test NAME", and each test's lines count under its name.
batch_marker="# pagefill VM test"
run_vm() {
	local f=$1 append=$2 guest_cmd=$3 names=() out rc name
	shift 3
	while [ "$1" != -- ]; do names+=("$1"); shift; done
	shift
	stage "$f kernel: VM test ${names[*]}${names[1]:+ (one boot)}"
	out=$(mktemp)
	"$top/scripts/vm-run.sh" --kernel "$f" --append "$append" "$@" \
		-- "$guest_cmd" >"$out" 2>&1
	rc=$?
	cat "$out" >&2
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
	fi
	if [ "$rc" != 0 ] && ! grep -q '^not ok ' "$out"; then
		record "$f: ${names[*]} (VM run failed, see log above)" fail
	fi
	rm -f "$out"
}

for f in $flavours; do
	stage "$f kernel: build module"
	if ! ko=$("$top/scripts/build-module.sh" "$f"); then
		record "$f: build pagefill.ko" fail
		continue
	fi
	# Tests that may share a boot (vm_share_boot=1) and have the same VM
	# options and kernel arguments run in one VM, one after the other: a
	# debug kernel takes a minute to boot under TCG. Between two tests the
	# guest drops what a failed one may have left (the peer netns, the
	# module) and clears kmemleak's reports, so each is judged on its own.
	declare -A shared_cmd=() shared_names=()
	shared_keys=()
	for t in "$top"/tests/vm/*.test; do
		name=$(basename "$t" .test)
		# A .test file holds the vm-run options, the guest command line
		# and, optionally, arguments after the module's path (vm_args, or
		# vm_args_FLAVOUR for one flavour), the kernel flavours it runs
		# on (default both), vm_append_FLAVOUR (more kernel arguments),
		# vm_kernel_args=0 (not the flavour's kernel_args above),
		# vm_opts_FLAVOUR (the vm-run options for one flavour) and
		# vm_share_boot.
		vm_args=()
		vm_opts_fast=()
		vm_opts_debug=()
		vm_args_fast=()
		vm_args_debug=()
		vm_append_fast=""
		vm_append_debug=""
		vm_flavours=(fast debug)
		vm_kernel_args=1
		vm_share_boot=0
		# shellcheck disable=SC1090
		. "$t"
		declare -n flavour_args="vm_args_$f" flavour_append="vm_append_$f" flavour_opts="vm_opts_$f"
		[ "${#flavour_args[@]}" -eq 0 ] || vm_args=("${flavour_args[@]}")
		[ "${#flavour_opts[@]}" -eq 0 ] || vm_opts=("${flavour_opts[@]}")
		append=$flavour_append
		[ "$vm_kernel_args" = 0 ] || append="${kernel_args[$f]} $append"
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
			shared_cmd[$key]+="echo '$batch_marker $name'; $guest_cmd || rc=1; "
			shared_cmd[$key]+="ip netns del peer 2>/dev/null; rmmod pagefill 2>/dev/null; "
			shared_cmd[$key]+="echo clear >/sys/kernel/debug/kmemleak 2>/dev/null; "
			continue
		fi
		run_vm "$f" "$append" "$guest_cmd" "$name" -- "${vm_opts[@]}"
	done
	for key in "${shared_keys[@]}"; do
		read -ra names <<<"${shared_names[$key]}"
		read -ra opts <<<"${key%%|*}"
		run_vm "$f" "${key#*|}" "rc=0; ${shared_cmd[$key]}exit \$rc" "${names[@]}" -- \
			"${opts[@]}" --timeout $((600 * ${#names[@]}))
	done
	unset shared_cmd shared_names
done

stage "done"
echo
printf '%s\n' "${results[@]}"
echo
echo "time of each stage (s):"
for i in "${!stage_names[@]}"; do
	[ "$((i + 1))" -lt "${#stage_starts[@]}" ] || break
	printf '%6d  %s\n' "$((stage_starts[i + 1] - stage_starts[i]))" "${stage_names[i]}"
done
if [ "$failed" -gt 0 ]; then
	echo
	echo "failed:"
	printf '%s\n' "${results[@]}" | grep '^fail '
fi
echo
echo "wall time: $((SECONDS - t_start)) s"
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
