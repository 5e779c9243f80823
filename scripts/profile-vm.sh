#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# profile-vm.sh --out DIR [options] [VM-RUN OPTIONS] -- CMD: where a VM test
# spends its guest instructions.
#
# Runs CMD in a VM (scripts/vm-run.sh, with the given options, e.g. --kernel
# debug --nics 1 --append ... --timeout ...) with the pf-insn TCG plugin
# (scripts/bench/pf-insn.c) counting every guest instruction per translated
# block, the host's clock and the vCPUs' halted time. The guest executes the
# plugin's marker (scripts/bench/pf-mark.c) just before and just after CMD,
# which cuts the run into three windows: boot (QEMU's start to the first
# marker: firmware, kernel boot, init), command, and shutdown (the second
# marker to QEMU's exit). Meanwhile pf-mark watches the module's load
# address (/sys/module/MODULE/sections) so its functions can be named.
#
# Then scripts/bench/profile_vm.py names each block's function (the kernel's
# System.map, the module's symbols), sorts the functions into debug features
# by name, estimates inline KASAN's shadow checks from the kernel's
# disassembly, and writes DIR/report.md and DIR/functions.tsv. The run
# folder (console log, profiles) is kept in DIR/run.
#
# Options (the others before -- go to vm-run.sh; --kernel is read too):
#   --out DIR        output folder (required; replaced)
#   --module NAME    module to watch and name (default pagefill)
#   --ko PATH        its .ko as loaded in the guest, for its symbols (default:
#                    the first *.ko named in CMD)
#   --report-only    only rebuild DIR/report.md from DIR/run
#
# Run it under nice and one VM at a time when something else is timed on
# the machine: the counts are exact whatever the load, the times are not.
# A test that fails (timing, under load) still gives its profile; the
# report says how it ended. Not part of tests/run.sh.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

out="" module=pagefill ko="" report_only="" flavour=fast vm_opts=()
while [ $# -gt 0 ]; do
	case "$1" in
	--out) out=$2; shift 2 ;;
	--module) module=$2; shift 2 ;;
	--ko) ko=$2; shift 2 ;;
	--report-only) report_only=1; shift ;;
	--kernel) flavour=$2; vm_opts+=("$1" "$2"); shift 2 ;;
	--kvm|--viommu|--virtio-net) vm_opts+=("$1"); shift ;;
	--) shift; break ;;
	-*) vm_opts+=("$1" "$2"); shift 2 ;;
	*) break ;;
	esac
done
[ -n "$out" ] || pf_die "usage: profile-vm.sh --out DIR [options] [vm-run options] -- CMD"
mkdir -p "$out"
out=$(cd "$out" && pwd)
# The kernel build the run booted (its System.map and vmlinux name the
# blocks): kept with the results, as the flavour's build may change after.
if [ -n "$report_only" ] && [ -f "$out/kdir" ]; then
	kdir=$(cat "$out/kdir")
	[ ! -f "$out/flavour" ] || flavour=$(cat "$out/flavour")
else
	kdir=$("$PF_TOP/scripts/build-kernel.sh" --path "$flavour")
fi

if [ -z "$report_only" ]; then
	[ $# -gt 0 ] || pf_die "no guest command"
	cmd="$*"
	if [ -z "$ko" ]; then
		for w in $cmd; do
			case "$w" in *.ko) ko=$w; break ;; esac
		done
	fi
	"$PF_TOP/scripts/toolchain-root.sh" >/dev/null
	# The plugin and the marker, built in the root (its QEMU loads the one,
	# its userland runs the other in the guest), cached by their sources.
	bin=$PF_CACHE/profile-$(pf_hash "$PF_TOP"/scripts/bench/pf-insn.c "$PF_TOP"/scripts/bench/pf-mark.c)
	if [ ! -x "$bin/pf-mark" ]; then
		rm -rf "$bin.tmp"
		mkdir -p "$bin.tmp"
		"$PF_TOP/scripts/in-root.sh" sh -c "
			gcc -O2 -Wall -Wextra -shared -fPIC -fvisibility=hidden -o '$bin.tmp/pf-insn.so' '$PF_TOP/scripts/bench/pf-insn.c' &&
			gcc -O2 -Wall -Wextra -o '$bin.tmp/pf-mark' '$PF_TOP/scripts/bench/pf-mark.c'"
		rm -rf "$bin"
		mv "$bin.tmp" "$bin"
	fi
	rm -rf "$out/run" "$out"/report.md "$out"/functions.tsv
	# The guest: the watcher, a marker, CMD, a marker; CMD's status is the
	# run's.
	guest="'$bin/pf-mark' watch '$module' /run/pf/module-sections & pf_watch=\$!
'$bin/pf-mark'
( $cmd )
pf_rc=\$?
'$bin/pf-mark'
kill \$pf_watch
exit \$pf_rc"
	printf '%s\n' "${vm_opts[*]}" >"$out/vm-opts"
	printf '%s\n' "$cmd" >"$out/cmd"
	printf '%s\n' "$kdir" >"$out/kdir"
	printf '%s\n' "$flavour" >"$out/flavour"
	pf_log "profile: $flavour kernel, $cmd"
	set +e
	"$PF_TOP/scripts/vm-run.sh" "${vm_opts[@]}" --keep "$out/run" \
		--qemu-arg -plugin --qemu-arg "$bin/pf-insn.so,out=@RUN@/out/insn.log,prof=@RUN@/out,time=on,user=merged" \
		-- "$guest" >"$out/vm-run.out" 2>"$out/vm-run.err"
	echo $? >"$out/vm-run.rc"
	set -e
	pf_log "profile: vm-run.sh exited with $(cat "$out/vm-run.rc") ($(grep -o 'VM ran for.*' "$out/vm-run.err" | tail -n 1))"
	[ -z "$ko" ] || cp "$ko" "$out/module.ko" 2>/dev/null || pf_log "profile: no $ko on the host: the module's functions stay unnamed"
fi
python3 "$PF_TOP/scripts/bench/profile_vm.py" analyze "$out" --flavour "$flavour" \
	--system-map "$kdir/System.map" --vmlinux "$kdir/vmlinux" --cache-dir "$PF_CACHE" >"$out/report.md"
pf_log "profile: $out/report.md"
