#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# bench.sh [options]: pagefill against virtio-net in one VM.
#
# Boots the fast kernel on one vCPU with one pagefill NIC and one virtio-net
# NIC (a unix datagram backend fed by scripts/bench/vnet-gen.py, sending the
# same frames as pagefill-sim gen), with the pf-insn TCG plugin counting the
# guest's instructions between markers that the guest's sink executes, runs
# scripts/bench/guest.sh in it, and writes the raw lines, a markdown table,
# the tables benchmarks.rst includes (tables.inc) and an SVG plot to the
# output folder (scripts/bench/report.py). Not part of tests/run.sh: it
# measures, it does not check (tests/vm/insn-guard.test checks three of its
# figures).
#
# Options:
#   --out DIR      output folder (default Documentation/networking/
#                  device_drivers/ethernet/pagefill/bench)
#   --runs N       runs per point (default 5)
#   --count N      frames per run (default 20000)
#   --sizes LIST   frame sizes (default "64 128 256 512 1024 1500")
#   --rates LIST   offered rates, frames/s, for the loss runs (default
#                  "2000 5000 10000 20000 50000 0"; 0 is unpaced)
#   --what LIST    parts (default all): cost page gro merge multi xdp xsk
#                  xdprate rate mem coal in one boot (raw-PARTS.txt), and
#                  prof in a second one with per-block instruction counts
#                  (raw-prof.txt, profile.*)
#   --nics LIST    NICs of the cost, xdp, xsk and prof parts (default "pf vn";
#                  "pf" boots no virtio-net NIC)
#   --xdp-acts LIST, --xdp-sizes LIST
#                  the xdp part's actions and sizes (default "drop tx pass",
#                  "64 1500"; the xsk part and the prof part's XDP cases
#                  take the sizes too)
#   --prof LIST    the prof part's cases (default "socket page merge xdp"; also xsk)
#   --keep-runs    keep the run folders (run-NAME/: console, plugin output,
#                  the prof part's per-block counts) for a closer look
#   --report-only  only rebuild the table and plot from DIR's raw files
#
# The coal part's settings LAT_COUNT, LAT_GAP_MS, LAT_BUSY_US and LAT_LOAD
# (scripts/bench/guest.sh) go to the guest from this environment.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

out=$PF_TOP/Documentation/networking/device_drivers/ethernet/pagefill/bench runs=5 count=20000 sizes="64 128 256 512 1024 1500"
rates="2000 5000 10000 20000 50000 0" what="cost page gro merge multi xdp xsk xdprate rate mem coal prof" report_only=""
keep_runs="" nics="pf vn" xdp_acts="drop tx pass" xdp_sizes="64 1500" prof="socket page merge xdp"
while [ $# -gt 0 ]; do
	case "$1" in
	--out) out=$2; shift 2 ;;
	--runs) runs=$2; shift 2 ;;
	--count) count=$2; shift 2 ;;
	--sizes) sizes=$2; shift 2 ;;
	--rates) rates=$2; shift 2 ;;
	--what) what=$2; shift 2 ;;
	--nics) nics=$2; shift 2 ;;
	--xdp-acts) xdp_acts=$2; shift 2 ;;
	--xdp-sizes) xdp_sizes=$2; shift 2 ;;
	--prof) prof=$2; shift 2 ;;
	--keep-runs) keep_runs=1; shift ;;
	--report-only) report_only=1; shift ;;
	*) pf_die "unknown option $1" ;;
	esac
done
mkdir -p "$out"
out=$(cd "$out" && pwd)

if [ -z "$report_only" ]; then
	# The commit measured, the first line of each raw file (report.py):
	# "-dirty" if the tree had changes (taken before this run replaces its
	# own results, which may be in the tree).
	commit=$(git -C "$PF_TOP" describe --always --dirty --abbrev=12 2>/dev/null || echo unknown)
	# A run replaces the folder's results: the report reads every raw file.
	rm -rf "$out"/raw-*.txt "$out"/profile.* "$out"/run-*
	"$PF_TOP/scripts/toolchain-root.sh" >/dev/null
	ko=$("$PF_TOP/scripts/build-module.sh" fast)
	bin=$("$PF_TOP/scripts/bench/tools.sh")
	# Its figures are instruction counts of a TCG plugin: never KVM,
	# whatever scripts/accel.sh would find.
	pf_log "bench: VMs run under TCG (the pf-insn plugin counts instructions; KVM has no plugins)"
	export PAGEFILL_ACCEL=tcg
	env_line="SIZES='$sizes' RUNS=$runs COUNT=$count RATES='$rates' NICS='$nics'"
	env_line+=" XDP_ACTS='$xdp_acts' XDP_SIZES='$xdp_sizes' PROF='$prof'"
	# The coal part's settings, from this environment if set (guest.sh).
	for v in LAT_COUNT LAT_GAP_MS LAT_BUSY_US LAT_LOAD; do
		[ -z "${!v:-}" ] || env_line+=" $v='${!v}'"
	done
	vnet=--virtio-net
	[ "$nics" != pf ] || vnet=""
	# boot NAME WHAT PLUGIN-OPTIONS: one VM running guest.sh for WHAT; its
	# output goes to raw-NAME.txt and its run folder to run-NAME/.
	boot() {
		rm -rf "$out/run-$1"
		echo "commit $commit" >"$out/raw-$1.txt"
		pf_log "bench: $1 ($2)"
		"$PF_TOP/scripts/vm-run.sh" --smp 1 --nics 1 ${vnet:+"$vnet"} --timeout 5400 \
			--keep "$out/run-$1" \
			--qemu-arg -plugin --qemu-arg "$bin/pf-insn.so,out=@RUN@/out/insn.log$3" \
			-- "$env_line WHAT='$2' sh scripts/bench/guest.sh '$ko' '$bin'" >>"$out/raw-$1.txt"
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
	[ -n "$keep_runs" ] || rm -rf "$out"/run-*
fi
python3 "$PF_TOP/scripts/bench/report.py" report "$out" >"$out/results.md"
python3 "$PF_TOP/scripts/bench/report.py" rst "$out" >"$out/tables.inc"
pf_log "bench: results in $out/results.md, plot in $out/cost.svg"
