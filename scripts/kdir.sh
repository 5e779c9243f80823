#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# kdir.sh KDIR: check that pagefill can be built for the kernel whose build
# directory (or installed headers) is KDIR, make what the headers lack, and
# print the arguments of the make that builds it ("-C DIR CC=..." or
# "-C DIR LLVM=1"). The top-level Makefile calls it for `make KDIR=...`.
#
# A distribution's headers package (Debian's linux-headers-*) ships no Rust
# build outputs: no metadata of the kernel's `kernel` and `core` crates,
# which a Rust module is compiled against. They can be made again, exactly
# as the kernel's own build made them, from the kernel's source and its
# .config with the compiler that built it: Rust symbol names carry a hash of
# the compiler and of the crate, so only the same rustc and the same
# configuration give crates whose symbols the running kernel exports. This
# script does that once, in the cache ($PAGEFILL_CACHE, default
# ~/.cache/pagefill, keyed by the headers' .config and Module.symvers, the
# compilers and this script), from /usr/src/linux-source-VERSION.tar.* (or
# KSRC=, a source tree of the same release), and points make there.
#
# What the host needs: the kernel's headers; its source; the rustc that
# built it (CONFIG_RUSTC_VERSION_TEXT) with its rust-src; bindgen; the C
# compiler that built it (CONFIG_CC_VERSION_TEXT); pahole if the kernel has
# BTF. Anything missing is named, once, with what to install.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

die() { echo "pagefill: $*" >&2; exit 1; }
[ $# -eq 1 ] || die "usage: scripts/kdir.sh KDIR"
kdir=$(cd "$1" 2>/dev/null && pwd) || die "KDIR=$1: no such directory"
config=$kdir/.config
[ -r "$config" ] || die "KDIR=$kdir has no .config: not a kernel build directory or headers"
cfg() { sed -n "s/^$1=//p" "$config" | sed 's/^"\(.*\)"$/\1/'; }
release=$(cat "$kdir/include/config/kernel.release" 2>/dev/null) ||
	die "KDIR=$kdir has no include/config/kernel.release: run 'make prepare' there first"

[ "$(cfg CONFIG_RUST)" = y ] ||
	die "the kernel $release was built without Rust (CONFIG_RUST is not set in $config): pagefill is a Rust driver and needs a kernel built with CONFIG_RUST=y"

# The C compiler: clang (LLVM=1) or the GCC named in the kernel's config.
if [ "$(cfg CONFIG_CC_IS_CLANG)" = y ]; then
	cc=clang
	cc_args=(LLVM=1)
else
	cc=$(cfg CONFIG_CC_VERSION_TEXT | awk '{ print $1 }')
	cc_args=("CC=$cc")
fi
missing=()
command -v "$cc" >/dev/null || missing+=("$cc (the C compiler that built the kernel: $(cfg CONFIG_CC_VERSION_TEXT))")

# The Rust compiler must be the kernel's, to the commit.
rustc=${RUSTC:-rustc}
want=$(cfg CONFIG_RUSTC_VERSION_TEXT)
have=$("$rustc" --version 2>/dev/null || true)
if [ -z "$have" ]; then
	missing+=("$rustc (the kernel was built by $want)")
elif [ "$have" != "$want" ]; then
	die "the kernel $release was built by $want, but $rustc is $have. A Rust module must be built by the kernel's own rustc: its symbol names carry the compiler's hash, and the kernel would not find them. Install that rustc and its rust-src (Debian: the rustc and rust-src packages of the suite the kernel came from) or point RUSTC= at it."
elif [ ! -d "$("$rustc" --print sysroot)/lib/rustlib/src/rust/library/core" ]; then
	missing+=("rust-src (the standard library's source, for $have)")
fi
command -v "${BINDGEN:-bindgen}" >/dev/null || missing+=("bindgen (>= 0.71.1)")
if [ "${#missing[@]}" -gt 0 ]; then
	printf 'pagefill: to build for the kernel %s this host lacks:\n' "$release" >&2
	printf '  - %s\n' "${missing[@]}" >&2
	exit 1
fi

# A build directory with the kernel crate's metadata: as it is.
if [ -e "$kdir/rust/libkernel.rmeta" ]; then
	echo "-C $kdir ${cc_args[*]}"
	exit 0
fi

# Installed headers: make the metadata once. The source of the same
# release: Debian's linux-source-X.Y (its patches are the kernel's).
version=${release%%[+-]*}
if [ -n "${KSRC:-}" ]; then
	src_desc="KSRC=$KSRC"
else
	tarball=$(ls /usr/src/linux-source-"${version%.*}".tar.* 2>/dev/null | head -n 1 || true)
	[ -n "$tarball" ] ||
		die "KDIR=$kdir has no Rust metadata (rust/libkernel.rmeta), and making it needs the kernel's source: install linux-source-${version%.*} (Debian) or set KSRC= to a source tree of $version"
	src_desc=$tarball
fi
[ -z "$(cfg CONFIG_DEBUG_INFO_BTF)" ] || command -v pahole >/dev/null ||
	die "the kernel $release has BTF (CONFIG_DEBUG_INFO_BTF): making its Rust metadata needs pahole (Debian: dwarves), or the configuration would differ from the kernel's"
[ -r "$kdir/Module.symvers" ] || die "KDIR=$kdir has no Module.symvers: the module could not link against the kernel's exports"

key=$(cat "$config" "$kdir/Module.symvers" "$0" | { cat; echo "$have"; "$cc" --version | head -n 1; } | sha256sum | cut -c1-16)
out=$PF_CACHE/kdir/$release-$key
if [ ! -e "$out/.complete" ]; then
	mkdir -p "$PF_CACHE/kdir"
	exec 9>"$out.lock"
	flock 9
fi
if [ ! -e "$out/.complete" ]; then
	pf_log "making the Rust metadata of the kernel $release in $out (from $src_desc, $have, $cc)"
	t0=$SECONDS
	rm -rf "$out"
	mkdir -p "$out"
	if [ -n "${KSRC:-}" ]; then
		cp -a "$KSRC/." "$out/"
	else
		tar -C "$out" --strip-components=1 -xf "$tarball"
	fi
	srcver=$(make -s -C "$out" kernelversion)
	[ "$srcver" = "$version" ] || die "the source ($src_desc) is of $srcver, the kernel of $version"
	cp "$config" "$out/.config"
	# The release as the kernel was built (the vermagic), not the source's.
	mk() { make -s -C "$out" "${cc_args[@]}" KERNELRELEASE="$release" -j"$(nproc)" "$@"; }
	mk olddefconfig
	if ! cmp -s <(grep '^CONFIG_' "$config") <(grep '^CONFIG_' "$out/.config"); then
		diff <(grep '^CONFIG_' "$config") <(grep '^CONFIG_' "$out/.config") | sed 's/^/  /' | head -n 20 >&2
		die "the kernel's configuration does not hold with this host's tools (above: < the kernel's, > this build's); a tool the kernel's build had is missing (pahole, openssl, the compilers' versions)"
	fi
	mk prepare modules_prepare rust/
	cmp -s "$kdir/include/generated/utsrelease.h" "$out/include/generated/utsrelease.h" ||
		die "the release made ($(cat "$out/include/config/kernel.release")) is not the kernel's ($release)"
	# The kernel's exports, for modpost.
	cp "$kdir/Module.symvers" "$out/Module.symvers"
	[ -e "$out/rust/libkernel.rmeta" ] || die "the kernel's Rust crates did not build in $out"
	touch "$out/.complete"
	pf_log "Rust metadata of $release made in $((SECONDS - t0)) s"
fi
echo "-C $out ${cc_args[*]}"
