#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Create (once) the isolated Debian trixie + trixie-backports root that holds
# the Rust-for-Linux toolchain, the kernel source, QEMU and the guest userland,
# and print its path. Later runs with the same inputs reuse it.
#
# Why a separate root: the host is Debian 12; the kernel needs a newer rustc,
# bindgen and QEMU than it ships, and adding newer suites to the host's apt
# sources would pull a new libc into it. The root lives in the cache folder
# ($PAGEFILL_CACHE, default ~/.cache/pagefill), keyed by a hash of this script
# and scripts/root-packages/*.txt. The mirror is read from the host's own apt
# configuration; the host's sources and packages are left as they are, except
# that mmdebstrap is installed from the host's own suite if missing.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

root=$(pf_root_dir)
if [ -e "$root/.complete" ]; then
	echo "$root"
	exit 0
fi

[ "$(id -u)" = 0 ] || pf_die "creating the toolchain root needs root (chroot, mounts)"
mkdir -p "$PF_CACHE"
exec 9>"$PF_CACHE/.root.lock"
flock 9
if [ -e "$root/.complete" ]; then
	echo "$root"
	exit 0
fi

# The Debian mirror the host already uses, from deb822 or one-line sources.
host_mirror() {
	local f uri
	for f in /etc/apt/sources.list.d/*.sources; do
		[ -r "$f" ] || continue
		uri=$(awk '/^URIs:/ { for (i = 2; i <= NF; i++) if ($i !~ /security/) { print $i; exit } }' "$f")
		[ -n "$uri" ] && { echo "$uri"; return; }
	done
	for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
		[ -r "$f" ] || continue
		uri=$(awk '$1 == "deb" { for (i = 2; i <= NF; i++) if ($i ~ /^[a-z]+:\/\// && $i !~ /security/) { print $i; exit } }' "$f")
		[ -n "$uri" ] && { echo "$uri"; return; }
	done
}

pkgs() { sed -e 's/#.*//' -e '/^[[:space:]]*$/d' "$@" | tr '\n' ' '; }

mirror=${PAGEFILL_MIRROR:-$(host_mirror)}
[ -n "$mirror" ] || pf_die "no Debian mirror found in the host's apt sources; set PAGEFILL_MIRROR"

if ! command -v mmdebstrap >/dev/null; then
	pf_log "installing mmdebstrap from the host's own suite"
	apt-get update -qq
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq mmdebstrap >/dev/null
fi

# sid's packages one by one (name/sid), from a source that is there only
# while they are installed, so nothing else in the root moves to sid.
# The mirror's sid may be a snapshot older than its Release file's
# Valid-Until: accept it, as the trixie ones are.
sid_pkgs=$(for p in $(pkgs "$PF_TOP"/scripts/root-packages/sid.txt); do printf '%s/sid ' "$p"; done)
sid_hook="echo 'deb $mirror sid main' >\"\$1/etc/apt/sources.list.d/sid.list\" &&
	chroot \"\$1\" apt-get -o Acquire::Check-Valid-Until=false update -qq &&
	chroot \"\$1\" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q $sid_pkgs &&
	rm \"\$1/etc/apt/sources.list.d/sid.list\" && chroot \"\$1\" apt-get update -qq"

tmp="$root.tmp"
rm -rf "$tmp"
pf_log "creating toolchain root in $root (mirror from host apt config)"
t0=$SECONDS
mmdebstrap --mode=root --variant=apt --skip=output/dev \
	--aptopt='APT::Install-Recommends "false"' \
	--include="$(pkgs "$PF_TOP"/scripts/root-packages/build.txt "$PF_TOP"/scripts/root-packages/guest.txt | tr ' ' ',')" \
	--customize-hook="chroot \"\$1\" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q -t trixie-backports $(pkgs "$PF_TOP"/scripts/root-packages/backports.txt)" \
	--customize-hook="$sid_hook" \
	trixie "$tmp" \
	"deb $mirror trixie main" \
	"deb $mirror trixie-backports main" >&2

# The kernel refuses a rust-src of any other version than rustc's.
rustc_v=$(chroot "$tmp" dpkg-query -W -f='${Version}' rustc)
src_v=$(chroot "$tmp" dpkg-query -W -f='${Version}' rust-src)
[ "$rustc_v" = "$src_v" ] || pf_die "rustc $rustc_v and rust-src $src_v differ"
qemu_v=$(chroot "$tmp" qemu-system-x86_64 --version | awk 'NR == 1 { print $4 }')
case "$qemu_v" in
[0-9].* | 10.0.*) pf_die "QEMU $qemu_v has no vfio-user-pci; need >= 10.1" ;;
esac
ethtool_v=$(chroot "$tmp" ethtool --version | awk '{ print $3 }')
case "$ethtool_v" in
[0-5].* | 6.[0-9] | 6.1[0-4] | 6.1[0-4].*) pf_die "ethtool $ethtool_v has no JSON for -l; need >= 6.15" ;;
esac
ls "$tmp"/usr/src/linux-source-7.3.tar.* >/dev/null 2>&1 ||
	pf_die "linux-source-7.3 is missing from the root; install it or point KSRC= at a kernel source"

touch "$tmp/.complete"
mv "$tmp" "$root"
pf_log "toolchain root ready in $((SECONDS - t0)) s: rustc $rustc_v, QEMU $qemu_v"
echo "$root"
