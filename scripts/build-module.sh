#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# build-module.sh [FLAVOUR]: build pagefill.ko for the kernel of FLAVOUR
# (default fast) and print the .ko's path. fast and debug are the cached
# test kernels, built in the toolchain root. debian is the stock Debian
# kernel, built for as a user's Debian host does it: in the debian-host
# root (trixie's rustc and GCC, the stock kernel's headers), through `make
# KDIR=` and scripts/kdir.sh. The build runs in a copy of the module's
# sources in a per-kernel folder of the cache, so modules for several
# kernels coexist and the work tree's own `make` is left alone.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
flavour=${1:-fast}
if [ "$flavour" = debian ]; then
	export PF_ROOT_KIND=debian-host
	root=$("$PF_TOP/scripts/toolchain-root.sh" debian-host)
	headers=$(cd "$root" && ls -d usr/src/linux-headers-*-amd64 | head -n 1)
	[ -n "$headers" ] || pf_die "no stock kernel headers in $root"
	kname=debian-${headers#usr/src/linux-headers-}
	make_args=$("$PF_TOP/scripts/in-root.sh" "$PF_TOP/scripts/kdir.sh" "/$headers")
else
	kdir=$("$PF_TOP/scripts/build-kernel.sh" "$flavour")
	kname=$(basename "$kdir")
	make_args="-C $kdir LLVM=1"
fi
# One build folder per kernel and per checkout: two checkouts (a second
# worktree, a benchmark run beside tests) do not overwrite each other's module.
# A CLIPPY=1 build is a check whose result is its warnings: it compiles
# every file each time, in a folder of its own, and the module the tests
# load stays built in the other.
out=$PF_CACHE/module/$kname-$(printf %s "$PF_TOP" | sha256sum | cut -c1-8)${CLIPPY:+-clippy}
mkdir -p "$out"
# One build at a time per kernel: runs from several checkouts share the folder.
exec 9>"$out.lock"
flock 9
[ -z "${CLIPPY:-}" ] || rm -rf "$out/src"
# By content (--checksum, and no --times): a file that did not change keeps
# the time of the copy it was built from, so a fresh clone of the same
# sources builds nothing; one that changed is written now, newer than its
# objects. The build's outputs (.gitignore's patterns, read once for both
# sides) are not the sources': --delete leaves them.
"$PF_TOP/scripts/in-root.sh" rsync -rlpD --checksum --delete --exclude-from="$PF_TOP/.gitignore" \
	--exclude=.git --exclude=/target \
	--include=/Kbuild --include='/drivers/***' --include='/include/***' --exclude='/*' \
	"$PF_TOP/" "$out/src/"
# shellcheck disable=SC2086
"$PF_TOP/scripts/in-root.sh" make -s $make_args M="$out/src" \
	-j"$(nproc)" ${CLIPPY:+CLIPPY=$CLIPPY} modules >&2
echo "$out/src/drivers/net/ethernet/pagefill/pagefill.ko"
