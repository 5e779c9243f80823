#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# build-selftests.sh: build (once) and install the kernel's networking driver
# selftests (TARGETS net/lib, drivers/net, drivers/net/hw) from the source
# of the test kernels, with pagefill's own kselftest target (tests/kselftest,
# put in the source as drivers/net/pagefill, as it would be in a kernel
# tree), in the toolchain root, and print the install directory. Keyed by
# the kernel source, this script and tests/kselftest. The guest runs the
# upstream tests from there (tests/vm/upstream.sh): the Python tests, their
# libraries and YNL specs, and the helpers and BPF objects they load.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

kdir=$("$PF_TOP/scripts/build-kernel.sh" fast)
src=$(readlink -f "$kdir/source")
key=$(pf_hash "$0" "$PF_TOP"/tests/kselftest/*)
out=$PF_CACHE/selftests/$(basename "$src")-$key
if [ -e "$out/.complete" ]; then
	echo "$out/install"
	exit 0
fi
rm -rf "$out"
mkdir -p "$out"
pf_log "building the driver selftests of $(basename "$src")"
targets="net/lib drivers/net drivers/net/hw drivers/net/pagefill"
rm -rf "$src/tools/testing/selftests/drivers/net/pagefill"
cp -a "$PF_TOP/tests/kselftest" "$src/tools/testing/selftests/drivers/net/pagefill"
# Objects go to $out/build (the source gains only the pagefill target). -k: a helper that
# needs a library the root lacks does not stop the others (its test then
# fails or skips, and says why).
"$PF_TOP/scripts/in-root.sh" make -s -k -C "$src/tools/testing/selftests" TARGETS="$targets" \
	LLVM=1 O="$out/build" INSTALL_PATH="$out/install" -j"$(nproc)" install >"$out/build.log" 2>&1 ||
	pf_log "some selftest helpers did not build (see $out/build.log)"
for f in drivers/net/ping.py drivers/net/pagefill/rx.sh; do
	[ -e "$out/install/$f" ] || pf_die "selftests not installed: no $f (see $out/build.log)"
done
touch "$out/.complete"
echo "$out/install"
