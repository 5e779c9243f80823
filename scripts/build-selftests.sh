#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# build-selftests.sh: build (once) and install the kernel's networking driver
# selftests (TARGETS net/lib, drivers/net, drivers/net/hw) from the source
# of the test kernels, in the toolchain root, and print the install
# directory. Keyed by the kernel source and this script. The guest runs the
# upstream tests from there (tests/vm/upstream.sh): the Python tests, their
# libraries and YNL specs, and the helpers and BPF objects they load; and
# the AF_XDP selftest, xskxceiver.
# pagefill's own kselftest target (tests/kselftest, put in the source as
# drivers/net/pagefill, as it would be in a kernel tree) is built and
# installed apart, keyed by its files: a change to one of our tests does not
# build the upstream ones again.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

kdir=$("$PF_TOP/scripts/build-kernel.sh" fast)
src=$(readlink -f "$kdir/source")
key=$(pf_hash "$0")
out=$PF_CACHE/selftests/$(basename "$src")-$key
pf_key=$(pf_hash "$0" "$PF_TOP"/tests/kselftest/*)
pf_out=$PF_CACHE/selftests/pagefill-$(basename "$src")-$pf_key
# build TARGETS DIR: make and install TARGETS into DIR/install (objects in
# DIR/build). -k: a helper that needs a library the root lacks does not
# stop the others (its test then fails or skips, and says why).
build() {
	rm -rf "$2"
	mkdir -p "$2"
	"$PF_TOP/scripts/in-root.sh" make -s -k -C "$src/tools/testing/selftests" TARGETS="$1" \
		LLVM=1 O="$2/build" INSTALL_PATH="$2/install" -j"$(nproc)" install >"$2/build.log" 2>&1 ||
		pf_log "some selftest helpers did not build (see $2/build.log)"
	# The Python tests' bytecode, by the guest's own Python (the root is
	# the guest's): the guest reads the install read-only, so without it
	# every test would compile its libraries (net/lib/py, YNL) again at
	# start, under TCG.
	"$PF_TOP/scripts/in-root.sh" python3 -m compileall -q -j"$(nproc)" "$2/install" \
		>>"$2/build.log" 2>&1 ||
		pf_log "some selftest Python did not compile (see $2/build.log)"
}
# xsk_build DIR: the kernel's AF_XDP selftest (xskxceiver and its
# test_xsk.sh, from the BPF selftests) into DIR/install/bpf. Alone: the BPF
# target's other programs are hundreds the guest does not run. It needs the
# test kernel's BTF (vmlinux.h for its XDP programs). Built from a copy of
# the BPF selftests beside them whose one change is the time a socket has
# to send or receive all of a case's frames (THREAD_TMOUT, 3 s: about what
# a case takes under TCG on a busy host, and less than on the debug
# kernel): XSK_THREAD_TMOUT seconds from the environment, default 15, a
# liveness bound, not a performance check.
xsk_build() {
	local sel=$src/tools/testing/selftests
	local bpf=$sel/pagefill-bpf o=$1/build/bpf
	local tmout='(getenv("XSK_THREAD_TMOUT") ? atoi(getenv("XSK_THREAD_TMOUT")) : 15)'
	rm -rf "$bpf"
	cp -a "$sel/bpf" "$bpf"
	sed -i "s/^\(#define THREAD_TMOUT[[:space:]]*\)3\$/#include <stdlib.h>\n\1$tmout/" \
		"$bpf/prog_tests/test_xsk.c"
	grep -qF "$tmout" "$bpf/prog_tests/test_xsk.c" ||
		pf_die "xskxceiver's THREAD_TMOUT not found in $bpf/prog_tests/test_xsk.c"
	mkdir -p "$o" "$1/install/bpf"
	"$PF_TOP/scripts/in-root.sh" make -s -C "$bpf" LLVM=1 OUTPUT="$o" \
		VMLINUX_BTF="$kdir/vmlinux" -j"$(nproc)" "$o/xskxceiver" >>"$1/build.log" 2>&1 &&
		cp "$o/xskxceiver" "$bpf/test_xsk.sh" "$bpf/xsk_prereqs.sh" "$1/install/bpf/" ||
		pf_log "xskxceiver did not build (see $1/build.log)"
}

# One build at a time: two checkouts' runs share the folders.
mkdir -p "$PF_CACHE/selftests"
exec 9>"$PF_CACHE/selftests/.lock"
flock 9
if [ ! -e "$out/.complete" ]; then
	pf_log "building the driver selftests of $(basename "$src")"
	build "net/lib drivers/net drivers/net/hw" "$out"
	xsk_build "$out"
	[ -e "$out/install/drivers/net/ping.py" ] ||
		pf_die "selftests not installed: no drivers/net/ping.py (see $out/build.log)"
	touch "$out/.complete"
fi
if [ ! -e "$pf_out/.complete" ]; then
	pf_log "building pagefill's kselftest target"
	rm -rf "$src/tools/testing/selftests/drivers/net/pagefill"
	cp -a "$PF_TOP/tests/kselftest" "$src/tools/testing/selftests/drivers/net/pagefill"
	build drivers/net/pagefill "$pf_out"
	[ -e "$pf_out/install/drivers/net/pagefill/rx.sh" ] ||
		pf_die "pagefill's kselftest target not installed: no rx.sh (see $pf_out/build.log)"
	touch "$pf_out/.complete"
fi
echo "$out/install"
