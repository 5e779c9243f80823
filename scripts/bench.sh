#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# bench.sh [options]: pagefill against virtio-net in one VM (issue 6).
#
# Boots the fast kernel on one vCPU with one pagefill NIC and one virtio-net
# NIC (a unix datagram backend fed by scripts/bench/vnet-gen.py, sending the
# same frames as pagefill-sim gen), with the pf-insn TCG plugin counting the
# guest's instructions between markers that the guest's sink executes, runs
# scripts/bench/guest.sh in it, and writes the raw lines, a markdown table
# and an SVG plot to the output folder (scripts/bench/report.py). Not part of
# tests/run.sh: it measures, it does not check.
#
# Options:
#   --out DIR      output folder (default Documentation/networking/
#                  device_drivers/ethernet/pagefill/bench)
#   --runs N       runs per point (default 5)
#   --count N      frames per run (default 20000)
#   --sizes LIST   frame sizes (default "64 128 256 512 1024 1500")
#   --rates LIST   offered rates, frames/s, for the loss runs (default
#                  "2000 5000 10000 20000 50000 0"; 0 is unpaced)
#   --what LIST    parts (default all): cost page gro merge multi xdp xdprate rate mem coal in one
#                  boot (raw-PARTS.txt), and prof in a second one with
#                  per-block instruction counts (raw-prof.txt, profile.*)
#   --report-only  only rebuild the table and plot from DIR's raw files
set -euo pipefail
. "$(dirname "$0")/lib.sh"

out=$PF_TOP/Documentation/networking/device_drivers/ethernet/pagefill/bench runs=5 count=20000 sizes="64 128 256 512 1024 1500"
rates="2000 5000 10000 20000 50000 0" what="cost page gro merge multi xdp xdprate rate mem coal prof" report_only=""
while [ $# -gt 0 ]; do
	case "$1" in
	--out) out=$2; shift 2 ;;
	--runs) runs=$2; shift 2 ;;
	--count) count=$2; shift 2 ;;
	--sizes) sizes=$2; shift 2 ;;
	--rates) rates=$2; shift 2 ;;
	--what) what=$2; shift 2 ;;
	--report-only) report_only=1; shift ;;
	*) pf_die "unknown option $1" ;;
	esac
done
mkdir -p "$out"
out=$(cd "$out" && pwd)

if [ -z "$report_only" ]; then
	# A run replaces the folder's results: the report reads every raw file.
	rm -rf "$out"/raw-*.txt "$out"/profile.* "$out"/run-*
	"$PF_TOP/scripts/toolchain-root.sh" >/dev/null
	ko=$("$PF_TOP/scripts/build-module.sh" fast)
	# The plugin and the sink, built in the root (its QEMU loads the one, its
	# userland runs the other in the guest), cached by their sources.
	bin=$PF_CACHE/bench-$(pf_hash "$PF_TOP"/scripts/bench/*.c)
	if [ ! -x "$bin/pf-sink" ]; then
		mkdir -p "$bin.tmp"
		"$PF_TOP/scripts/in-root.sh" sh -c "
			gcc -O2 -Wall -Wextra -shared -fPIC -fvisibility=hidden -o '$bin.tmp/pf-insn.so' '$PF_TOP/scripts/bench/pf-insn.c' &&
			gcc -O2 -Wall -Wextra -o '$bin.tmp/pf-sink' '$PF_TOP/scripts/bench/pf-sink.c' &&
			gcc -O2 -Wall -Wextra -o '$bin.tmp/pf-echo' '$PF_TOP/scripts/bench/pf-echo.c'"
		rm -rf "$bin"
		mv "$bin.tmp" "$bin"
	fi
	env_line="SIZES='$sizes' RUNS=$runs COUNT=$count RATES='$rates'"
	# boot NAME WHAT PLUGIN-OPTIONS: one VM running guest.sh for WHAT; its
	# output goes to raw-NAME.txt and its run folder to run-NAME/.
	boot() {
		rm -rf "$out/run-$1"
		pf_log "bench: $1 ($2)"
		"$PF_TOP/scripts/vm-run.sh" --smp 1 --nics 1 --virtio-net --timeout 5400 \
			--keep "$out/run-$1" \
			--qemu-arg -plugin --qemu-arg "$bin/pf-insn.so,out=@RUN@/out/insn.log$3" \
			-- "$env_line WHAT='$2' sh scripts/bench/guest.sh '$ko' '$bin'" >"$out/raw-$1.txt"
	}
	main=""
	for w in $what; do [ "$w" = prof ] || main="$main $w"; done
	main=${main# }
	[ -z "$main" ] || boot "${main// /-}" "$main" ""
	case " $what " in *" prof "*) boot prof prof ",prof=@RUN@/out" ;; esac
	# The run folders are big (profiles) and only the report's inputs are kept.
	if [ -d "$out/run-prof" ]; then
		python3 "$PF_TOP/scripts/bench/report.py" profile "$out" \
			"$("$PF_TOP/scripts/build-kernel.sh" --path fast)/System.map" >"$out/profile.md"
	fi
	rm -rf "$out"/run-*
fi
python3 "$PF_TOP/scripts/bench/report.py" report "$out" >"$out/results.md"
pf_log "bench: results in $out/results.md, plot in $out/cost.svg"
