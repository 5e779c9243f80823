#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# lint.sh: the project's style gates, each a KTAP test point. rustfmt and
# clippy on the host crates; on the driver, its module graph without a
# cycle (tests/host/module-graph.py), the kernel's rustfmt config, a
# CLIPPY=1 build with no warnings with each supported compiler (the newest
# rustc of the toolchain root for the clang-built test kernel; the kernel's
# minimum rustc, 1.85, for the GCC-built stock Debian kernel), and
# checkpatch.pl on the C; the driver as a patch series for a kernel tree
# (scripts/in-tree.sh) through checkpatch.pl --strict; and the
# documentation built by sphinx with warnings as errors.
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/scripts/lib.sh"
kdir=$("$top/scripts/build-kernel.sh" fast)
ksrc=$(readlink -f "$kdir/source")
n=0 fails=0
echo "TAP version 13"
echo "1..9"
point() { # point NAME CMD...
	local name=$1 out
	shift
	n=$((n + 1))
	if out=$("$@" 2>&1); then
		echo "ok $n $name"
	else
		fails=$((fails + 1))
		echo "not ok $n $name"
		sed 's/^/# /' <<<"$out" | tail -n 30
	fi
}
driver_rs=$(cd "$top" && git ls-files 'drivers/*.rs' 'include/*.rs' | sed "s|^|$top/|")
c_files=$(cd "$top" && git ls-files 'drivers/*.c' 'drivers/*.h' 'include/*.h' 'tests/kselftest/pf_*.c' | sed "s|^|$top/|")

point "cargo fmt --check (device model, ABI crate)" cargo fmt --manifest-path "$top/Cargo.toml" --all --check
point "cargo clippy -D warnings (device model, ABI crate)" \
	cargo clippy --manifest-path "$top/Cargo.toml" --workspace --all-targets -q -- -D warnings
point "the driver's modules use one another without a cycle" python3 -S "$top/tests/host/module-graph.py"
# shellcheck disable=SC2086
point "rustfmt --check with the kernel's config (driver)" \
	"$top/scripts/in-root.sh" rustfmt --check --config-path "$ksrc/.rustfmt.toml" --edition 2021 $driver_rs
clippy_build() { # clippy_build FLAVOUR
	local log
	log=$(CLIPPY=1 "$top/scripts/build-module.sh" "$1" 2>&1 >/dev/null) || { echo "$log"; return 1; }
	! grep -E '(^|: )(warning|error)[:[]' -A5 <<<"$log"
}
point "driver builds with CLIPPY=1 and no warning: the newest rustc (toolchain root), clang-built test kernel" clippy_build fast
point "driver builds with CLIPPY=1 and no warning: rustc 1.85 (the kernel's minimum), GCC-built stock Debian kernel" clippy_build debian
# shellcheck disable=SC2086
point "checkpatch.pl on the C helpers and test programs" \
	"$top/scripts/in-root.sh" perl "$ksrc/scripts/checkpatch.pl" --no-tree --quiet -f $c_files
# The in-tree change as a patch series, checked from the kernel tree. The
# kselftest's BPF program is user-space C built for the BPF target, which
# has no <linux/compiler_attributes.h>: it spells its attributes out, as
# the BPF selftests do, and checkpatch is told so.
patches() {
	local dir=$PF_CACHE/intree-patches
	"$top/scripts/in-tree.sh" --patches "$dir" &&
		(cd "$ksrc" && "$top/scripts/in-root.sh" perl scripts/checkpatch.pl --strict --quiet \
			--ignore PREFER_DEFINED_ATTRIBUTE_MACRO "$dir"/*.patch)
}
point "the in-tree change as git format-patch passes checkpatch.pl --strict" patches
docs() {
	local out=$PF_CACHE/docs-out
	rm -rf "$out"
	"$top/scripts/in-root.sh" sphinx-build -W -q -b html -C -D master_doc=index -D project=pagefill \
		"$top/Documentation/networking/device_drivers/ethernet/pagefill" "$out"
}
point "the documentation builds with no warning (sphinx -W)" docs
[ "$fails" -eq 0 ]
