# SPDX-License-Identifier: GPL-2.0
# Shared helpers for the pagefill scripts. Source it; do not run it.
#
# Everything big (the toolchain root, kernel trees and builds) lives in a cache
# folder outside the repository, keyed by the inputs that made it, so a second
# run reuses it and a change of input builds a fresh one beside the old.

PF_TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
PF_CACHE=${PAGEFILL_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/pagefill}
export PF_TOP PF_CACHE
# Cargo's output (the device model, its host tests and clippy) goes to the
# cache too: the dependencies build once for every checkout, and a clean
# clone does not pay for them again. Cargo locks the folder while it builds.
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$PF_CACHE/cargo-target}

pf_log() { printf '[pagefill %(%H:%M:%S)T] %s\n' -1 "$*" >&2; }
pf_die() { pf_log "error: $*"; exit 1; }

# pf_hash FILE... : short content hash of the given files, in order.
pf_hash() { cat "$@" | sha256sum | cut -c1-16; }

# pf_hash_code FILE... : pf_hash of what builds from the files: without
# their comment lines (a line whose first non-blank is '#', but kconfig's
# "# CONFIG_X is not set", which sets an option) and a patch's description
# (before its first "diff " or "--- "), so that a reworded comment
# rebuilds nothing.
pf_hash_code() {
	local f
	for f in "$@"; do
		case $f in
		*.patch) awk '/^(diff|---) / { body = 1 } body' "$f" ;;
		*) awk '/^# CONFIG_[A-Za-z0-9_]+ is not set$/ || !/^[[:space:]]*#/' "$f" ;;
		esac
	done | sha256sum | cut -c1-16
}

# pf_children_cs VAR FILE: sets VAR to the CPU time (user and system) of the
# calling shell's children that have ended and been waited for,
# descendants included, in hundredths of a second. Bash's times, which in a
# pipe or $(...) would run in a subshell with no children yet: hence FILE.
pf_children_cs() {
	times >"$2"
	printf -v "$1" '%s' "$(awk 'NR == 2 { for (i = 1; i <= 2; i++) { split($i, t, /[ms]/); n += t[1] * 60 + t[2] }
		printf "%d\n", n * 100 + 0.5 }' "$2")"
}

# The roots scripts/toolchain-root.sh makes: "toolchain" (the default), the
# test bed's own (newest Rust for Linux, clang, QEMU, the guest userland),
# and "debian-host", a Debian trixie host as a pagefill user has it (the
# stock kernel's headers and source, trixie's own rustc and GCC). Each has
# its package lists (scripts/root-packages/, .../debian-host/).
pf_root_lists() {
	case ${1:-toolchain} in
	toolchain) echo "$PF_TOP"/scripts/root-packages/*.txt ;;
	debian-host) echo "$PF_TOP"/scripts/root-packages/debian-host/*.txt ;;
	*) pf_die "unknown root '$1' (have: toolchain debian-host)" ;;
	esac
}

# A root's key: the script that makes it and its package lists.
pf_root_key() {
	# shellcheck disable=SC2046
	pf_hash "$PF_TOP/scripts/toolchain-root.sh" $(pf_root_lists "${1:-toolchain}")
}

pf_root_dir() {
	case ${1:-toolchain} in
	toolchain) echo "$PF_CACHE/root-$(pf_root_key)" ;;
	*) echo "$PF_CACHE/root-$1-$(pf_root_key "$1")" ;;
	esac
}

# pf_host_mirror: the Debian mirror the host already uses, from deb822 or
# one-line sources (never a name written here), or $PAGEFILL_MIRROR.
pf_host_mirror() {
	local f uri
	if [ -n "${PAGEFILL_MIRROR:-}" ]; then
		echo "$PAGEFILL_MIRROR"
		return
	fi
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

# pf_in_root CMD... : run CMD inside the toolchain root ($PF_ROOT_KIND's
# root if set), in a private mount namespace so nothing stays mounted when
# it ends. The repository and the cache are bound at the same paths as on
# the host, so paths mean the same thing on both sides.
pf_in_root() {
	local root
	root=$(pf_root_dir "${PF_ROOT_KIND:-toolchain}")
	[ -x "$root/usr/bin/rustc" ] || pf_die "no toolchain root at $root: run scripts/toolchain-root.sh ${PF_ROOT_KIND:-}"
	unshare --mount --propagation private -- /bin/bash -c '
		set -e
		root=$1; top=$2; cache=$3; shift 3
		mount --rbind /dev "$root/dev"
		mount -t proc proc "$root/proc"
		mount --rbind /sys "$root/sys"
		mount -t tmpfs tmpfs "$root/tmp"
		mkdir -p "$root$top" "$root$cache"
		mount --bind "$top" "$root$top"
		mount --bind "$cache" "$root$cache"
		if [ -n "${PF_EXTRA_BIND:-}" ]; then
			for d in $PF_EXTRA_BIND; do
				mkdir -p "$root$d"; mount --bind "$d" "$root$d"
			done
		fi
		exec chroot "$root" /usr/bin/env -i HOME=/root TERM=dumb \
			PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
			LANG=C.UTF-8 PAGEFILL_CACHE="$cache" PF_IN_ROOT=1 \
			/bin/bash -c "cd \"\$0\" 2>/dev/null || cd /; exec \"\$@\"" "$PWD" "$@"
	' pf-in-root "$root" "$PF_TOP" "$PF_CACHE" "$@"
}
