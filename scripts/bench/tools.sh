#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# tools.sh: builds the benchmark's host plugin and guest programs in the
# toolchain root (its QEMU loads pf-insn.so, its userland runs pf-sink,
# pf-echo and the AF_XDP test's pf_xsk in the guest), cached by their
# sources, and prints their folder.
set -euo pipefail
. "$(dirname "$0")/../lib.sh"
bin=$PF_CACHE/bench-$(pf_hash "$PF_TOP"/scripts/bench/*.c "$PF_TOP"/tests/kselftest/pf_xsk.c)
if [ ! -x "$bin/pf-sink" ]; then
	"$PF_TOP/scripts/toolchain-root.sh" >/dev/null
	rm -rf "$bin.tmp"
	mkdir -p "$bin.tmp"
	"$PF_TOP/scripts/in-root.sh" sh -c "
		gcc -O2 -Wall -Wextra -shared -fPIC -fvisibility=hidden -o '$bin.tmp/pf-insn.so' '$PF_TOP/scripts/bench/pf-insn.c' &&
		gcc -O2 -Wall -Wextra -o '$bin.tmp/pf-sink' '$PF_TOP/scripts/bench/pf-sink.c' &&
		gcc -O2 -Wall -Wextra -o '$bin.tmp/pf-echo' '$PF_TOP/scripts/bench/pf-echo.c' &&
		gcc -O2 -Wall -Wextra -o '$bin.tmp/pf_xsk' '$PF_TOP/tests/kselftest/pf_xsk.c'" >&2
	rm -rf "$bin"
	mv "$bin.tmp" "$bin"
fi
echo "$bin"
