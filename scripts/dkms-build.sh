#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# dkms-build.sh prepare KERNELVER KDIR | build KERNELVER KDIR | clean:
# how DKMS builds pagefill (dkms.conf), in its copy of the source.
#
#   prepare  (PRE_BUILD) scripts/kdir.sh: check that this host can build
#            for the kernel and make its Rust metadata (once per kernel, in
#            /var/cache/pagefill-dkms). If it cannot, the reason (what to
#            install) is kept for the package's postinst to print, and the
#            exit status is 77, DKMS's "skipped": the kernel is left
#            without the module, and the apt transaction goes on.
#   build    (MAKE) `make KDIR=`, against that metadata.
#   clean    (CLEAN) make clean.
set -euo pipefail
cd "$(dirname "$0")/.."
export PAGEFILL_CACHE=/var/cache/pagefill-dkms
skipped=$PAGEFILL_CACHE/skipped

case ${1:-} in
prepare)
	[ $# -eq 3 ] || { echo "usage: $0 prepare KERNELVER KDIR" >&2; exit 2; }
	mkdir -p "$skipped"
	rm -f "$skipped/$2"
	log=$(mktemp)
	trap 'rm -f "$log"' EXIT
	if scripts/kdir.sh "$3" 2>"$log" >/dev/null; then
		cat "$log" >&2
		exit 0
	fi
	cat "$log" >&2
	# kdir.sh's reason: its "pagefill:" lines and what follows them (a
	# list of what is missing), or the end of a failed build.
	if grep -q '^pagefill: \|^\[pagefill .*\] error: ' "$log"; then
		sed -n '/^pagefill: \|^\[pagefill .*\] error: /,$p' "$log" | tail -n 20 >"$skipped/$2"
	else
		tail -n 20 "$log" >"$skipped/$2"
	fi
	exit 77
	;;
build)
	[ $# -eq 3 ] || { echo "usage: $0 build KERNELVER KDIR" >&2; exit 2; }
	exec make KDIR="$3" modules
	;;
clean)
	exec make clean
	;;
*)
	echo "usage: $0 prepare|build KERNELVER KDIR, or clean" >&2
	exit 2
	;;
esac
