#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# debian-initramfs.sh: make (once) the initramfs with which the test VMs
# boot the stock Debian kernel of the toolchain root, and print its path.
# That kernel has 9p and virtio-pci as modules, so it cannot mount the
# VMs' root (the toolchain root over virtio-9p) by itself: the initramfs
# holds those modules (decompressed, in the order their dependencies ask)
# and a static busybox, loads them, mounts the root read-only as
# vm-run.sh's root= and rootflags= say, and hands over to init=. The kernel
# and all its other modules are the root's own, as Debian installed them.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

# The root's own tools (kmod, xz, zstd, cpio) do the work.
[ -n "${PF_IN_ROOT:-}" ] || exec "$PF_TOP/scripts/in-root.sh" "$0" "$@"
release=$(ls /usr/lib/modules | head -n 1)
[ -n "$release" ] || pf_die "no stock kernel in the toolchain root"
out=$PF_CACHE/initramfs/debian-$release-$(pf_hash "$0" "/usr/lib/modules/$release/modules.dep").cpio
if [ -e "$out" ]; then
	echo "$out"
	exit 0
fi
mkdir -p "$PF_CACHE/initramfs"
tmp=$(mktemp -d "$PF_CACHE/initramfs/tmp.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/bin" "$tmp/lib" "$tmp/proc" "$tmp/dev" "$tmp/newroot"
cp /usr/bin/busybox "$tmp/bin/busybox"
# The modules the root filesystem needs, dependencies first, as modprobe
# would load them ("insmod PATH" lines).
mods=$(modprobe --show-depends -S "$release" -a virtio_pci 9pnet_virtio 9p |
	awk '$1 == "insmod" { print $2 }' | awk '!seen[$0]++')
: >"$tmp/lib/load"
for m in $mods; do
	name=$(basename "$m")
	case $name in
	*.ko.xz) xz -dc "$m" >"$tmp/lib/${name%.xz}" ;;
	*.ko.zst) zstd -qdc "$m" >"$tmp/lib/${name%.zst}" ;;
	*.ko.gz) gzip -dc "$m" >"$tmp/lib/${name%.gz}" ;;
	*) cp "$m" "$tmp/lib/$name" ;;
	esac
	echo "${name%.ko*}.ko" >>"$tmp/lib/load"
done
cat >"$tmp/init" <<'INIT'
#!/bin/busybox sh
# PID 1 of the stock kernel's initramfs (scripts/debian-initramfs.sh).
bb=/bin/busybox
$bb mount -t proc proc /proc
$bb mount -t devtmpfs devtmpfs /dev
while read -r m; do
	$bb insmod "/lib/$m" || echo "initramfs: insmod $m failed"
done </lib/load
# root=TAG rootflags=OPTS init=PATH from the kernel command line.
for arg in $($bb cat /proc/cmdline); do
	case $arg in
	root=*) tag=${arg#root=} ;;
	rootflags=*) flags=${arg#rootflags=} ;;
	init=*) init=${arg#init=} ;;
	esac
done
$bb mount -t 9p -o "ro,$flags" "$tag" /newroot || {
	echo "initramfs: cannot mount the root $tag"
	$bb poweroff -f
}
$bb umount /proc
$bb umount /dev
exec $bb switch_root /newroot "${init:-/sbin/init}"
INIT
chmod +x "$tmp/init"
(cd "$tmp" && find . | sort | cpio -o -H newc --quiet) >"$out.tmp"
mv "$out.tmp" "$out"
echo "$out"
