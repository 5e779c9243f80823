#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# build-kernel.sh [--path] FLAVOUR
#
# Build (once) a test kernel of the given flavour (fast, debug) in the cache
# and print its build directory. The build is keyed by the kernel source's
# version and a hash of the config fragments, the flavour's patch to the
# source if it has one (scripts/kconfig/FLAVOUR.patch) and this script,
# their comments left out (pf_hash_code), so a second run with the same
# inputs returns at once. --path prints the directory without building.
#
# The source is the toolchain root's linux-source-7.3, unpacked once into the
# cache, unless KSRC= points at another kernel source tree.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

only_path=
if [ "${1:-}" = --path ]; then
	only_path=1
	shift
fi
flavour=${1:-fast}
frag_dir=$PF_TOP/scripts/kconfig
[ -f "$frag_dir/$flavour.config" ] || pf_die "unknown kernel flavour '$flavour' (have: $(cd "$frag_dir" && ls ./*.config | sed 's|./||; s|.config||; /^base$/d' | tr '\n' ' '))"

root=$(pf_root_dir)
if [ -n "${KSRC:-}" ]; then
	src=$(cd "$KSRC" && pwd)
	srcver=$(make -s -C "$src" kernelversion 2>/dev/null || echo custom)-$(echo "$src" | sha256sum | cut -c1-8)
else
	tarball=$(ls "$root"/usr/src/linux-source-7.3.tar.* 2>/dev/null | head -n 1 || true)
	if [ -z "$tarball" ]; then
		pf_die "no kernel source: the toolchain root has no linux-source-7.3 (run scripts/toolchain-root.sh; if Debian no longer carries it, set KSRC=/path/to/linux-7.3 to a kernel source tree)"
	fi
	debver=$(chroot "$root" dpkg-query -W -f='${Version}' linux-source-7.3)
	srcver=7.3-$debver
	src=$PF_CACHE/src/linux-source-$srcver
fi
# The options the kselftests need (ours and the upstream driver tests'),
# built in: the guest boots without a modules tree.
kst_config=$PF_TOP/tests/kselftest/config
# A flavour's change to the source, if it has one (FLAVOUR.patch, applied
# with patch -p1), is built from a copy of the source of its own.
patch=$frag_dir/$flavour.patch
[ -e "$patch" ] || patch=
key=$(pf_hash_code "$frag_dir/base.config" "$frag_dir/$flavour.config" "$kst_config" ${patch:+"$patch"} "$0")
out=$PF_CACHE/kernel/$flavour-$srcver-$key

if [ -n "$only_path" ] || [ -e "$out/.complete" ]; then
	echo "$out"
	exit 0
fi

mkdir -p "$PF_CACHE/kernel" "$PF_CACHE/src"
exec 9>"$out.lock"
flock 9
if [ -e "$out/.complete" ]; then
	echo "$out"
	exit 0
fi

t0=$SECONDS
# The source and its patched copies are shared by the flavours, whose
# builds may run side by side (tests/run.sh): one unpacks or copies, the
# others wait for it.
exec 8>"$PF_CACHE/src/.lock"
flock 8
if [ -z "${KSRC:-}" ] && [ ! -e "$src/.complete" ]; then
	pf_log "unpacking $(basename "$tarball") into $src"
	rm -rf "$src" "$src.tmp"
	mkdir -p "$src.tmp"
	tar -C "$src.tmp" --strip-components=1 -xf "$tarball"
	touch "$src.tmp/.complete"
	mv "$src.tmp" "$src"
fi

if [ -n "$patch" ]; then
	# The copy is made of hard links where it can be (the build writes
	# nothing into the source, and patch writes a file it changes anew,
	# leaving the original's link alone), keyed by the patch.
	psrc=$PF_CACHE/src/$(basename "$src")-$flavour-$(pf_hash_code "$patch")
	if [ ! -e "$psrc/.patched" ]; then
		pf_log "applying $(basename "$patch") to a copy of the source in $psrc"
		rm -rf "$psrc" "$psrc.tmp"
		cp -al "$src" "$psrc.tmp" 2>/dev/null || { rm -rf "$psrc.tmp"; cp -a "$src" "$psrc.tmp"; }
		pf_in_root patch -d "$psrc.tmp" -p1 -s --no-backup-if-mismatch -i "$patch" ||
			pf_die "$patch does not apply to $src"
		touch "$psrc.tmp/.patched"
		mv "$psrc.tmp" "$psrc"
	fi
	src=$psrc
fi
exec 8>&-

pf_log "building the $flavour kernel in $out"
rm -rf "$out"
mkdir -p "$out"
grep -E '^CONFIG_' "$kst_config" | sed 's/=m$/=y/' >"$out/kselftest.config"
jobs=$(nproc)
# shellcheck disable=SC2016
pf_in_root /bin/bash -ec '
	src=$1; out=$2; frag_dir=$3; flavour=$4; jobs=$5
	mk() { make -C "$src" O="$out" LLVM=1 "$@"; }
	mk -s tinyconfig
	"$src/scripts/kconfig/merge_config.sh" -m -O "$out" "$out/.config" \
		"$out/kselftest.config" "$frag_dir/base.config" "$frag_dir/$flavour.config" >/dev/null
	mk -s olddefconfig
	missing=
	for f in "$out/kselftest.config" "$frag_dir/base.config" "$frag_dir/$flavour.config"; do
		while IFS= read -r line; do
			case "$line" in CONFIG_*=y) ;; *) continue ;; esac
			grep -qx "$line" "$out/.config" || missing="$missing ${line%=y}"
		done < "$f"
	done
	[ -z "$missing" ] || echo "config options that did not stick:$missing" >&2
	# Without pahole (>= 1.24, for Rust beside it) BTF silently drops out,
	# and the upstream XDP tests would be skipped for it.
	grep -qx CONFIG_DEBUG_INFO_BTF=y "$out/.config" || {
		echo "CONFIG_DEBUG_INFO_BTF did not stick: pahole >= 1.24 (Debian: dwarves) is needed in the toolchain root" >&2
		exit 1
	}
	grep -qx CONFIG_RUST=y "$out/.config" || {
		echo "CONFIG_RUST did not stick; make rustavailable says:" >&2
		mk rustavailable >&2 || true
		exit 1
	}
	mk -s -j"$jobs" bzImage modules
' build-kernel "$src" "$out" "$frag_dir" "$flavour" "$jobs" >&2

touch "$out/.complete"
pf_log "$flavour kernel built in $((SECONDS - t0)) s"
echo "$out"
