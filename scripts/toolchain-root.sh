#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# toolchain-root.sh [ROOT]: create (once) an isolated Debian root in the
# cache and print its path. Later runs with the same inputs reuse it.
#
#   toolchain    (default) Debian trixie + trixie-backports: the newest
#                Rust-for-Linux toolchain, the kernel source, QEMU and the
#                guest userland (the VMs boot with it as their root), and
#                the stock Debian kernel's image and modules (the "debian"
#                test flavour boots that kernel).
#   debian-host  a Debian trixie host as a pagefill user has it: the stock
#                kernel's headers (trixie-backports) with the source they
#                came from, and trixie's own compilers, the ones that built
#                that kernel (rustc 1.85, bindgen 0.71, GCC 14). The driver
#                is built for the stock kernel here (scripts/build-stock.sh).
#
# Why separate roots: the host is Debian 12; the kernel needs a newer rustc,
# bindgen and QEMU than it ships, and adding newer suites to the host's apt
# sources would pull a new libc into it. A root lives in the cache folder
# ($PAGEFILL_CACHE, default ~/.cache/pagefill), keyed by a hash of this script
# and its package lists (scripts/root-packages/, .../debian-host/). The
# mirror is read from the host's own apt configuration; the host's sources
# and packages are left as they are, except that mmdebstrap is installed
# from the host's own suite if missing.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

kind=${1:-toolchain}
root=$(pf_root_dir "$kind")
if [ -e "$root/.complete" ]; then
	echo "$root"
	exit 0
fi

[ "$(id -u)" = 0 ] || pf_die "creating the $kind root needs root (chroot, mounts)"
mkdir -p "$PF_CACHE"
exec 9>"$PF_CACHE/.root-$kind.lock"
flock 9
if [ -e "$root/.complete" ]; then
	echo "$root"
	exit 0
fi

pkgs() { sed -e 's/#.*//' -e '/^[[:space:]]*$/d' "$@" | tr '\n' ' '; }

mirror=$(pf_host_mirror)
[ -n "$mirror" ] || pf_die "no Debian mirror found in the host's apt sources; set PAGEFILL_MIRROR"

if ! command -v mmdebstrap >/dev/null; then
	pf_log "installing mmdebstrap from the host's own suite"
	apt-get update -qq
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq mmdebstrap >/dev/null
fi

lists=$PF_TOP/scripts/root-packages
hooks=()
case $kind in
toolchain)
	# sid's packages one by one (name/sid), from a source that is there
	# only while they are installed, so nothing else in the root moves to
	# sid. The mirror's sid may be a snapshot older than its Release
	# file's Valid-Until: accept it, as the trixie ones are.
	sid_pkgs=$(for p in $(pkgs "$lists/sid.txt"); do printf '%s/sid ' "$p"; done)
	hooks+=(--customize-hook="echo 'deb $mirror sid main' >\"\$1/etc/apt/sources.list.d/sid.list\" &&
		chroot \"\$1\" apt-get -o Acquire::Check-Valid-Until=false update -qq &&
		chroot \"\$1\" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q $sid_pkgs &&
		rm \"\$1/etc/apt/sources.list.d/sid.list\" && chroot \"\$1\" apt-get update -qq")
	# The stock kernel's image, of the release whose modules
	# linux-modules-amd64 brought (backports.txt).
	hooks+=(--customize-hook='chroot "$1" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q -t trixie-backports "linux-binary-$(ls "$1/usr/lib/modules")"')
	include=$(pkgs "$lists/build.txt" "$lists/guest.txt")
	backports=$(pkgs "$lists/backports.txt")
	;;
debian-host)
	include=$(pkgs "$lists/debian-host/trixie.txt")
	backports=$(pkgs "$lists/debian-host/backports.txt")
	;;
esac

tmp="$root.tmp"
rm -rf "$tmp"
pf_log "creating the $kind root in $root (mirror from host apt config)"
t0=$SECONDS
mmdebstrap --mode=root --variant=apt --skip=output/dev \
	--aptopt='APT::Install-Recommends "false"' \
	--include="$(echo "$include" | tr ' ' ',')" \
	--customize-hook="chroot \"\$1\" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q -t trixie-backports $backports" \
	"${hooks[@]}" \
	trixie "$tmp" \
	"deb $mirror trixie main" \
	"deb $mirror trixie-backports main" >&2

# The kernel refuses a rust-src of any other version than rustc's.
rustc_v=$(chroot "$tmp" dpkg-query -W -f='${Version}' rustc)
src_v=$(chroot "$tmp" dpkg-query -W -f='${Version}' rust-src)
[ "$rustc_v" = "$src_v" ] || pf_die "rustc $rustc_v and rust-src $src_v differ"
ls "$tmp"/usr/src/linux-source-7.3.tar.* >/dev/null 2>&1 ||
	pf_die "linux-source-7.3 is missing from the root; install it or point KSRC= at a kernel source"
case $kind in
toolchain)
	qemu_v=$(chroot "$tmp" qemu-system-x86_64 --version | awk 'NR == 1 { print $4 }')
	case "$qemu_v" in
	[0-9].* | 10.0.*) pf_die "QEMU $qemu_v has no vfio-user-pci; need >= 10.1" ;;
	esac
	ethtool_v=$(chroot "$tmp" ethtool --version | awk '{ print $3 }')
	case "$ethtool_v" in
	[0-5].* | 6.[0-9] | 6.1[0-4] | 6.1[0-4].*) pf_die "ethtool $ethtool_v has no JSON for -l; need >= 6.15" ;;
	esac
	ls "$tmp"/usr/lib/modules/*/vmlinuz >/dev/null 2>&1 ||
		pf_die "the stock kernel's image is missing from the root (linux-binary-*)"
	what="QEMU $qemu_v, stock kernel $(ls "$tmp/usr/lib/modules")"
	;;
debian-host)
	ls -d "$tmp"/usr/src/linux-headers-*-amd64 >/dev/null 2>&1 ||
		pf_die "the stock kernel's headers are missing from the root (linux-headers-amd64)"
	what="headers $(basename "$(ls -d "$tmp"/usr/src/linux-headers-*-amd64)")"
	;;
esac

touch "$tmp/.complete"
mv "$tmp" "$root"
pf_log "$kind root ready in $((SECONDS - t0)) s: rustc $rustc_v, $what"
echo "$root"
