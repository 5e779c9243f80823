#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# vm-runner.sh FLAVOUR: the VM runner must turn every kind of guest failure
# into a failed run with the console log shown, or the VM tests could pass
# while the guest is broken. KTAP output.
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
flavour=${1:-fast}
n=0
fails=0
echo "TAP version 13"
echo "1..6"
# expect NAME WANT_RC LOG_PATTERN GUEST_CMD, with more vm-run.sh options in
# the array vm_opts.
vm_opts=()
expect() {
	local name=$1 want=$2 pat=$3 out rc
	shift 3
	n=$((n + 1))
	out=$("$top/scripts/vm-run.sh" --kernel "$flavour" --nics 1 "${vm_opts[@]}" -- "$@" 2>&1)
	rc=$?
	# The VM's time and QEMU's CPU time (tests/run.sh sums the latter).
	grep -a '\] VM ran for ' <<<"$out" | sed 's/^/# /'
	if [ "$rc" = "$want" ] && grep -qE "$pat" <<<"$out"; then
		echo "ok $n $name"
	else
		fails=$((fails + 1))
		echo "not ok $n $name (exit $rc, wanted $want and /$pat/ in the output)"
		# Without the line above again: tests/run.sh would count its
		# CPU time twice.
		grep -av '\] VM ran for ' <<<"$out" | sed 's/^/# /' | tail -n 20
	fi
}
expect "a passing guest command passes" 0 'hello from the guest' 'echo hello from the guest'
expect "a guest command's exit status is returned" 3 'the command exited with status 3' 'exit 3'
expect "a failed insmod fails the run" 1 'insmod: ERROR' 'insmod /nonexistent.ko'
expect "a kernel WARNING fails the run, console shown" 1 'FAILED: the kernel log has problems' \
	'echo "WARNING: injected by the runner self-test" >/dev/kmsg'
# A warning report framed as the kernel frames one, a record per line.
report='for l in "------------[ cut here ]------------" "WARNING: injected by the runner self-test" " injected_frame+0x1/0x2" "---[ end trace 0000000000000000 ]---"; do echo "$l" >/dev/kmsg; done'
vm_opts=(--allow-warn '^ injected_frame\+')
expect "--allow-warn passes the warning report it names" 0 'allowed by --allow-warn' "$report"
vm_opts=(--allow-warn '^ other_frame\+')
expect "--allow-warn lets any other warning fail the run" 1 'FAILED: the kernel log has problems' "$report"
[ "$fails" -eq 0 ]
