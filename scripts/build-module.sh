#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# build-module.sh [FLAVOUR]: build pagefill.ko against the cached test kernel
# of FLAVOUR (default fast) and print the .ko's path. The build runs in a copy
# of the module's sources in a per-kernel folder of the cache, so modules for
# several kernels coexist and the work tree's own `make` is left alone.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
flavour=${1:-fast}
kdir=$("$PF_TOP/scripts/build-kernel.sh" "$flavour")
# One build folder per kernel and per checkout: two checkouts (a second
# worktree, a benchmark run beside tests) do not overwrite each other's module.
out=$PF_CACHE/module/$(basename "$kdir")-$(printf %s "$PF_TOP" | sha256sum | cut -c1-8)
mkdir -p "$out"
# One build at a time per kernel: runs from several checkouts share the folder.
exec 9>"$out.lock"
flock 9
"$PF_TOP/scripts/in-root.sh" rsync -a --delete --filter=':- .gitignore' --exclude=.git --exclude=/target \
	--include=/Kbuild --include='/drivers/***' --include='/include/***' --exclude='/*' \
	"$PF_TOP/" "$out/src/"
"$PF_TOP/scripts/in-root.sh" make -s -C "$kdir" M="$out/src" LLVM=1 \
	-j"$(nproc)" ${CLIPPY:+CLIPPY=$CLIPPY} modules >&2
echo "$out/src/drivers/net/ethernet/pagefill/pagefill.ko"
