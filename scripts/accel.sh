#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# accel.sh [FLAVOUR]: print the accelerator the VMs use, kvm or tcg, and
# log which and why. KVM where a short probe boot works: the kernel of
# FLAVOUR (default fast) booted under -accel kvm with no root filesystem
# must reach its "VFS: Unable to mount root" panic (its whole early boot)
# within PAGEFILL_KVM_PROBE_SECS (default 8) seconds; else TCG. Where
# /dev/kvm is a hypervisor that cannot run an unpatched kernel (PVM), the
# kernel prints nothing and the probe gives up when its time is out.
# PAGEFILL_ACCEL=kvm or tcg chooses without a probe.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
flavour=${1:-fast}

case ${PAGEFILL_ACCEL:-} in
kvm | tcg)
	pf_log "VMs run under ${PAGEFILL_ACCEL^^} (PAGEFILL_ACCEL)"
	echo "$PAGEFILL_ACCEL"
	exit 0
	;;
"") ;;
*) pf_die "PAGEFILL_ACCEL=$PAGEFILL_ACCEL: kvm or tcg" ;;
esac
if [ ! -w /dev/kvm ]; then
	pf_log "VMs run under TCG (no /dev/kvm)"
	echo tcg
	exit 0
fi
root=$("$PF_TOP/scripts/toolchain-root.sh")
if [ "$flavour" = debian ]; then
	kernel=$root/usr/lib/modules/$(ls "$root/usr/lib/modules" | head -n 1)/vmlinuz
	kernel=${kernel#"$root"}
else
	kernel=$("$PF_TOP/scripts/build-kernel.sh" "$flavour")/arch/x86/boot/bzImage
fi
secs=${PAGEFILL_KVM_PROBE_SECS:-8}
log=$(mktemp)
trap 'rm -f "$log"' EXIT
t0=$SECONDS
timeout --kill-after=2 "$secs" "$PF_TOP/scripts/in-root.sh" qemu-system-x86_64 \
	-machine q35 -accel kvm -cpu host -smp 1 -m 256M -kernel "$kernel" \
	-append "console=ttyS0 panic=-1 root=/dev/pf-no-root" \
	-nographic -serial stdio -monitor none -no-reboot -display none \
	>"$log" 2>&1 </dev/null || true
if grep -aq 'VFS: Unable to mount root' "$log"; then
	pf_log "VMs run under KVM (a probe boot of the $flavour kernel took $((SECONDS - t0)) s)"
	echo kvm
else
	why="printed nothing"
	grep -aq 'Linux version' "$log" && why="did not reach its root mount"
	pf_log "VMs run under TCG (a probe boot of the $flavour kernel under KVM $why in $secs s)"
	echo tcg
fi
