#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# build-module.sh [FLAVOUR]: build pagefill.ko against the cached test kernel
# of FLAVOUR (default fast) into a per-kernel folder of the cache, so modules
# for several kernels coexist, and print the .ko's path.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
flavour=${1:-fast}
kdir=$("$PF_TOP/scripts/build-kernel.sh" "$flavour")
out=$PF_CACHE/module/$(basename "$kdir")
mkdir -p "$out"
"$PF_TOP/scripts/in-root.sh" make -s -C "$kdir" M="$PF_TOP" MO="$out" LLVM=1 \
	-j"$(nproc)" ${CLIPPY:+CLIPPY=$CLIPPY} modules >&2
echo "$out/drivers/net/ethernet/pagefill/pagefill.ko"
