#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# insn_guard.sh PAGEFILL_KO BENCH_BIN [RUNS]: the guest instructions per
# 64-byte frame of the socket path, XDP_DROP, XDP_TX and an AF_XDP socket
# in zero-copy and in copy mode, counted by the benchmark's pf-insn plugin
# (scripts/bench/guest.sh's cost, xdp and xsk parts, RUNS runs each,
# default 5), each against the figure recorded in
# Documentation/.../pagefill/bench/guard.txt: a point fails when the
# median of its runs costs more than 15 % above its figure. Instructions,
# not time: the plugin counts them the same on any host; but how often
# the AF_XDP sink sleeps and wakes varies from run to run (some 60
# instructions a frame in the scheduler, 685-742 for the same module),
# hence five runs. Needs the VM booted with the plugin
# (tests/vm/insn-guard.test).
ko=$1
bin=$2
runs=${3:-5}
raw=/tmp/insn-guard.raw
figures=Documentation/networking/device_drivers/ethernet/pagefill/bench/guard.txt
if [ ! -f /run/pf/insn.log ] || [ ! -x "$bin/pf-sink" ]; then
	echo "TAP version 13"
	echo "1..0 # SKIP the VM was not booted with the pf-insn plugin and the bench tools"
	exit 4
fi
WHAT="cost xdp xsk" NICS=pf SIZES=64 XDP_SIZES=64 XDP_ACTS="drop tx" RUNS=$runs \
	COUNT=20000 sh scripts/bench/guest.sh "$ko" "$bin" >"$raw" 2>&1
rc=$?
sed 's/^/# /' "$raw"
[ "$rc" = 0 ] || echo "# scripts/bench/guest.sh exited $rc"
python3 -S scripts/bench/report.py guard "$raw" "$figures"
