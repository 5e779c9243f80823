#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# dkms-host.sh: the pagefill-dkms package (scripts/build-deb.sh) on a
# Debian trixie host with the stock kernel's headers: the debian-host root,
# with the stock kernel's modules of the toolchain root (the ones the
# debian test flavour boots) under its /usr/lib/modules, as a host that
# runs that kernel has them. `apt-get install ./pagefill-dkms_*.deb` there,
# DKMS builds and installs the module and indexes it with the kernel's own
# (depmod), and `dkms status`, modinfo and modprobe's index are checked.
# The root itself is left as it is: the install writes to an overlayfs
# layer over it, kept in the cache (keyed by the package, the roots and
# this script), whose folder is printed: the debian test flavour's guest
# lays its usr/lib/modules/RELEASE over the stock kernel's and runs
# `modprobe pagefill` (tests/vm/dkms.sh).
#
# Then, each in a layer of its own that is thrown away:
#   - `apt-get purge` after that install leaves nothing: `dkms status`
#     empty, no file of the package's under /usr/lib/modules, /usr/src,
#     /var/lib/dkms or /var/cache;
#   - a kernel the host cannot build for (its source not installed; one
#     built without CONFIG_RUST) is skipped with the reason, what to
#     install, and the apt transaction succeeds;
#   - a kernel whose headers come after the package: DKMS's own hook
#     (/etc/kernel/header_postinst.d/dkms, run by linux-headers-*'s
#     postinst) builds and installs the module for it.
# The kernels' Rust metadata that the package's builds make (scripts/kdir.sh,
# in /var/cache/pagefill-dkms) is the cache's kdir/ folder, bound there:
# the same scripts/kdir.sh with the same compilers gives the same key.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
[ "$(id -u)" = 0 ] || pf_die "needs root (chroot, overlayfs)"

deb=$("$PF_TOP/scripts/build-deb.sh")
root=$("$PF_TOP/scripts/toolchain-root.sh" debian-host)
troot=$("$PF_TOP/scripts/toolchain-root.sh")
# shellcheck disable=SC2012
rel=$(ls "$troot/usr/lib/modules" | head -n 1)
[ -e "$root/usr/lib/modules/$rel/build" ] ||
	pf_die "the debian-host root has no headers of the stock kernel $rel"
key=$(cat "$deb" "$0" | { cat; echo "$root $troot"; } | sha256sum | cut -c1-16)
out=$PF_CACHE/dkms-host/$rel-$key
if [ -e "$out/.complete" ]; then
	echo "$out"
	exit 0
fi
mkdir -p "$PF_CACHE/dkms-host" "$PF_CACHE/kdir"
exec 9>"$out.lock"
flock 9
if [ -e "$out/.complete" ]; then
	echo "$out"
	exit 0
fi
rm -rf "$out"
mkdir -p "$out"

# in_host LAYER KDIR_BIND SCRIPT: run the bash SCRIPT in the debian-host
# root with LAYER (a folder: LAYER/upper, LAYER/work) as the overlay's
# writable layer over LOWER ($lower: the root, or more layers on it), the
# stock kernel's modules under /usr/lib/modules, and the cache's kdir/ as
# /var/cache/pagefill-dkms/kdir if KDIR_BIND is 1. In a mount namespace of
# its own: nothing stays mounted.
in_host() {
	mkdir -p "$1/upper" "$1/work" "$1/merged"
	# shellcheck disable=SC2016
	unshare --mount --propagation private -- /bin/bash -c '
		set -e
		layer=$1 bind_kdir=$2 script=$3 lower=$4 troot=$5 rel=$6 deb=$7 kdir=$8
		m=$layer/merged
		mount -t overlay overlay -o "lowerdir=$lower,upperdir=$layer/upper,workdir=$layer/work" "$m"
		mount --rbind /dev "$m/dev"
		mount -t proc proc "$m/proc"
		mount -t tmpfs tmpfs "$m/tmp"
		# The stock kernel modules, as the linux-image package put
		# them (read-only: DKMS writes beside them, in updates/), and
		# the indexes its depmod made of them (DKMS runs depmod only
		# for a kernel whose modules.dep is there: one installed).
		mods=$m/usr/lib/modules/$rel
		mkdir -p "$mods/kernel"
		mount --bind -o ro "$troot/usr/lib/modules/$rel/kernel" "$mods/kernel"
		if [ ! -e "$mods/modules.dep" ]; then
			cp "$troot/usr/lib/modules/$rel"/modules.* "$mods/"
		fi
		if [ "$bind_kdir" = 1 ]; then
			mkdir -p "$m/var/cache/pagefill-dkms/kdir"
			mount --bind "$kdir" "$m/var/cache/pagefill-dkms/kdir"
		fi
		cp "$deb" "$m/tmp/"
		exec chroot "$m" /usr/bin/env -i HOME=/root TERM=dumb LANG=C.UTF-8 \
			PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
			DEBIAN_FRONTEND=noninteractive REL="$rel" DEB="/tmp/${deb##*/}" \
			/bin/bash -euo pipefail -c "$script"
	' in-host "$1" "$2" "$3" "$lower" "$troot" "$rel" "$deb" "$PF_CACHE/kdir"
}
# What the package leaves of itself in a root: its files and DKMS's.
# shellcheck disable=SC2016
leftovers='find /usr/lib/modules /usr/src /var/lib/dkms /var/cache /etc -iname "*pagefill*" \
	-not -path "/var/cache/pagefill-dkms/kdir*" 2>/dev/null'
fail() { pf_log "error: pagefill-dkms on the Debian host: $*"; exit 1; }

# The install, kept.
t0=$SECONDS
pf_log "apt-get install ./${deb##*/} in the debian-host root (DKMS builds the module for $rel)"
lower=$root
# shellcheck disable=SC2016
in_host "$out" 1 '
	apt-get install -y "$DEB" 2>&1
	echo "== dkms status"
	dkms status | tee /tmp/status
	grep -q "^pagefill/[^,]*, $REL, x86_64: installed" /tmp/status
	echo "== modinfo -k $REL pagefill"
	modinfo -k "$REL" pagefill | grep -E "^(filename|vermagic|name):"
	modinfo -k "$REL" -F filename pagefill | grep -q "^/lib/modules/$REL/updates/dkms/pagefill.ko"
	echo "== modprobe --show-depends -S $REL pagefill"
	modprobe --show-depends -S "$REL" pagefill | tee /tmp/deps
	grep -q "updates/dkms/pagefill.ko" /tmp/deps
' >"$out/install.log" 2>&1 || { cat "$out/install.log" >&2; fail "the install failed (above)"; }
pf_log "installed in $((SECONDS - t0)) s: $(grep '^pagefill/' "$out/install.log")"
# The guest does not need the overlay's own folders.
rm -rf "$out/work" "$out/merged"

# Removal, on a copy of that state.
t0=$SECONDS
lower=$out/upper:$root
# shellcheck disable=SC2016
in_host "$out/purge" 0 '
	apt-get purge -y pagefill-dkms 2>&1
	echo "== dkms status"
	[ -z "$(dkms status)" ] || { dkms status; exit 1; }
	echo "(empty)"
	echo "== files of the package left"
	left=$('"$leftovers"'; [ ! -e /var/cache/pagefill-dkms ] || echo /var/cache/pagefill-dkms)
	[ -z "$left" ] || { echo "$left"; exit 1; }
	echo "(none)"
' >"$out/purge.log" 2>&1 || { cat "$out/purge.log" >&2; fail "removal left something (above)"; }
rm -rf "$out/purge"
pf_log "removal leaves nothing ($((SECONDS - t0)) s)"

# A kernel the host cannot build for: the kernel source is missing (no
# Rust metadata made yet: /var/cache/pagefill-dkms is empty).
t0=$SECONDS
lower=$root
# shellcheck disable=SC2016
in_host "$out/nosrc" 0 '
	rm /usr/src/linux-source-*.tar.*
	apt-get install -y "$DEB" >/tmp/apt.log 2>&1 || { cat /tmp/apt.log; echo "apt-get failed"; exit 1; }
	cat /tmp/apt.log
	grep -q "WARNING: pagefill was not built for the kernel $REL" /tmp/apt.log
	grep -q "install linux-source-7.3" /tmp/apt.log
	echo "== dkms status"
	dkms status | tee /tmp/status
	! grep -q ": installed" /tmp/status
' >"$out/nosrc.log" 2>&1 || { cat "$out/nosrc.log" >&2; fail "a kernel without its source: not skipped with its reason (above)"; }
rm -rf "$out/nosrc"
pf_log "a kernel without its source is skipped, named, and apt succeeds ($((SECONDS - t0)) s)"

# A kernel built without Rust (its headers' .config says so).
t0=$SECONDS
lower=$root
# shellcheck disable=SC2016
in_host "$out/norust" 0 '
	config=$(readlink -f "/usr/lib/modules/$REL/build")/.config
	sed -i "s/^CONFIG_RUST=y$/# CONFIG_RUST is not set/" "$config"
	apt-get install -y "$DEB" >/tmp/apt.log 2>&1 || { cat /tmp/apt.log; echo "apt-get failed"; exit 1; }
	grep -v "^(Reading database" /tmp/apt.log
	grep -q "WARNING: pagefill was not built for the kernel $REL" /tmp/apt.log
	grep -q "needs a kernel built with CONFIG_RUST=y" /tmp/apt.log
	! dkms status | grep -q ": installed"
' >"$out/norust.log" 2>&1 || { cat "$out/norust.log" >&2; fail "a kernel without CONFIG_RUST: not skipped with its reason (above)"; }
rm -rf "$out/norust"
pf_log "a kernel without CONFIG_RUST is skipped, named, and apt succeeds ($((SECONDS - t0)) s)"

# Headers that come after the package: installed while the kernel had
# none, then its linux-headers package's postinst runs DKMS's hook.
t0=$SECONDS
lower=$root
# shellcheck disable=SC2016
in_host "$out/later" 1 '
	headers=$(readlink "/usr/lib/modules/$REL/build")
	rm "/usr/lib/modules/$REL/build"
	apt-get install -y "$DEB" >/tmp/apt.log 2>&1 || { cat /tmp/apt.log; echo "apt-get failed"; exit 1; }
	grep -v "^(Reading database" /tmp/apt.log
	echo "== dkms status, no headers"
	dkms status | tee /tmp/status
	! grep -q ": installed" /tmp/status
	echo "== the headers come: /etc/kernel/header_postinst.d/dkms $REL"
	ln -s "$headers" "/usr/lib/modules/$REL/build"
	/etc/kernel/header_postinst.d/dkms "$REL" 2>&1
	echo "== dkms status"
	dkms status | tee /tmp/status
	grep -q "^pagefill/[^,]*, $REL, x86_64: installed" /tmp/status
	modprobe --show-depends -S "$REL" pagefill | grep updates/dkms/pagefill.ko
' >"$out/later.log" 2>&1 || { cat "$out/later.log" >&2; fail "headers installed after the package: DKMS's hook did not build the module (above)"; }
rm -rf "$out/later"
pf_log "headers that come later: DKMS's hook builds and installs the module ($((SECONDS - t0)) s)"

touch "$out/.complete"
echo "$out"
