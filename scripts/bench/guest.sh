#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# guest.sh MODULE BIN: the benchmark inside the VM (scripts/bench.sh boots
# it with one pagefill NIC, one virtio-net NIC and the pf-insn plugin; BIN
# holds pf-sink and pf-echo). Prints one line per measurement, parsed by
# report.py as KEY VALUE pairs (what follows "gen" is the generator's
# answer):
#
#   idle run R received 0 ... window_ns T span_ns 0 insns I kinsns K
#   cost|multi nic N size S [nstreams 31] run R received F ... insns I
#       kinsns K overflow D gen ...     (N: pf, vn; pfpage for one-page
#       buffers; pfgro, vngro for a UDP_GRO socket; pfmerge, pfmergeplain
#       for pagefill with rx-udp-merge and a UDP_GRO or a plain socket;
#       pfxdpACT, vnxdpACT with a native XDP program, ACT drop, tx or pass,
#       and "frames F", the frames it saw; pfxskMODE, vnxskMODE to an
#       AF_XDP socket, MODE zc or copy)
#   rate nic N size S offered O run R [seen F] received F ... gen ...
#       (N: pf, vn; pfxdpACT, vnxdpACT with a native XDP program, ACT drop
#       or tx, and "seen F", the frames it saw)
#   mem label L streams S groups G ... inflight P inflight_mem B
#   lat nic N usecs U eot E poll P mode M load L gap_ms G run R rtt_us min ...
#       p50 ... p99 ... p99.9 ... max ... n N lost L hist H busy B irqs Q
#       rxp F insns I kinsns K [bg_frames F bg_us T] secs S
#       (P: pf-echo's busy-poll us, "-" none; M: "-", "dim" for adaptive-rx,
#       "threaded" for threaded NAPI; L: background frames/s, 0 none; B:
#       frames busy polling took; Q, F: the NIC's interrupts and received
#       frames over the run; bg_*: the background load's, with L; S: the
#       run's seconds, guest clock)
#   prof nic N size S received F ... marks M  (M: markers so far)
#
# Settings from the environment: SIZES, RUNS, COUNT (frames per cost run),
# LAT_COUNT, LAT_GAP_MS, LAT_BUSY_US and LAT_LOAD (the coal part's: see
# there), PF_COALESCE (below),
# RATES (offered frames/s for the loss runs), WHAT (the parts: cost, page,
# gro, merge, multi, xdp, xsk, xdprate, rate, mem, coal, prof), NICS (of the
# cost, xdp and xsk parts: default "pf vn"; "pf" needs no virtio-net NIC),
# XDP_ACTS and XDP_SIZES (of the xdp part, the sizes also the xsk part's: default "drop tx pass" and
# "64 1500"), PROF (the prof part's cases: default "socket page merge
# xdp"; xsk also).
set -e
ko=$1
bin=$2
sizes=${SIZES:-64 128 256 512 1024 1500}
runs=${RUNS:-5}
count=${COUNT:-20000}
rates=${RATES:-}
what=${WHAT:-cost rate mem}
nics=${NICS:-pf vn}
xdp_acts=${XDP_ACTS:-drop tx pass}
xdp_sizes=${XDP_SIZES:-64 1500}
prof=${PROF:-socket page merge xdp}

sysctl -qw net.core.rmem_max=134217728
sysctl -qw net.ipv4.conf.all.rp_filter=0 net.ipv4.conf.default.rp_filter=0
insmod "$ko"
dev_of() {
	for d in /sys/class/net/*; do
		[ "$(basename "$(readlink "$d/device/driver" 2>/dev/null)")" = "$1" ] && basename "$d" && return
	done
	return 0
}
pf=$(dev_of pagefill)
vn=$(dev_of virtio_net)
if [ -z "$pf" ] || { [ "$nics" != pf ] && [ -z "$vn" ]; }; then
	echo "no pagefill ($pf) or virtio-net ($vn) interface"
	exit 1
fi
ip addr add 192.0.2.1/24 dev "$pf"
ip link set "$pf" up
pfmac=$(cat "/sys/class/net/$pf/address")
if [ -n "$vn" ]; then
	ip addr add 198.18.0.1/24 dev "$vn"
	ip link set "$vn" up
	vnmac=$(cat "/sys/class/net/$vn/address")
fi
for _ in $(seq 100); do
	[ "$(cat "/sys/class/net/$pf/carrier" 2>/dev/null)" = 1 ] && break
	sleep 0.1
done
echo "# pagefill $pf ($pfmac), virtio-net ${vn:-none} (${vnmac:-}); $(nproc) vCPU"
# PF_COALESCE: ethtool -C arguments for pagefill for the whole run (e.g.
# "adaptive-rx on"), to set its figures against the default's.
if [ -n "${PF_COALESCE:-}" ]; then
	# shellcheck disable=SC2086
	ethtool -C "$pf" $PF_COALESCE
fi
echo "# ethtool -c $pf: $(ethtool -c "$pf" | grep -iE 'adaptive rx|rx-usecs:' | tr '\n\t' '  ')"

# es NAME: ethtool -S counter NAME of the pagefill interface (summed over
# queues for rxN_ names).
es() { ethtool -S "$pf" | sed -n "s/^ *$1: //p" | awk '{s += $1} END {print s + 0}'; }

# gen_req NIC SIZE COUNT RATE [NODES [GROUPS]]: the host agent request that sends
# COUNT frames per stream of SIZE bytes to NIC's address.
gen_req() {
	if [ "$1" != vn ]; then
		echo "gen --nodes ${5:-1} --groups ${6:-0} --size $2 --count $3 --rate $4 --dst-mac $pfmac --dst-ip 192.0.2.1 --src-ip 198.51.100.0"
	else
		echo "vgen --nodes ${5:-1} --size $2 --count $3 --rate $4 --dst-mac $vnmac --dst-ip 198.18.0.1"
	fi
}

# marks: the instruction counts between the last two markers (the sink's).
marks() {
	tail -n 2 /run/pf/insn.log | awk '
		NR == 1 { t = $2; k = $3 }
		NR == 2 { printf "insns %d kinsns %d", $2 - t, $3 - k }'
}

# answer ID: wait for the host agent to finish request ID, print its answer.
answer() {
	i=0
	while [ ! -f "/run/pf/done.$1" ]; do
		i=$((i + 1))
		[ "$i" -lt 12000 ] || { echo "no answer from the host"; return 1; }
		sleep 0.05
	done
	tr '\n' ' ' <"/run/pf/resp.$1"
	rm -f "/run/pf/resp.$1" "/run/pf/done.$1"
}

# sink [-g] FRAMES REQUEST: run the sink (-g: with UDP_GRO; it gives up
# sink_ms after the last frame, or the start: default 3000); prints
# "received ... window_ns ... insns ... kinsns ... overflow N gen
# <generator's answer>", N the frames the pagefill device dropped meanwhile
# because a paused stream's holding space was full (dev_drop_overflow).
sink() {
	gro=""
	if [ "$1" = -g ]; then
		gro=-g
		shift
	fi
	drops=$(es dev_drop_overflow)
	out=$("$bin/pf-sink" $gro 9000 "$1" "${sink_ms:-3000}" "$2") || true
	id=${out##* request }
	ins=$(marks)
	gen=$(answer "$id")
	echo "${out% request *} $ins overflow $(($(es dev_drop_overflow) - drops)) gen $gen"
}

# An idle window: the sink waits 2 s for frames that never come.
idle() {
	for r in 1 2 3; do
		out=$("$bin/pf-sink" 9000 1 2000) || true
		echo "idle run $r ${out% request *} $(marks)"
	done
}

if echo "$what" | grep -qw cost; then
	idle
	# One unrecorded run each first: the first frames fault in the sink's
	# pages and fill the pools.
	for nic in $nics; do sink 2000 "$(gen_req "$nic" 64 2000 0)" >/dev/null; done
	for size in $sizes; do
		for r in $(seq "$runs"); do
			for nic in $nics; do
				echo "cost nic $nic size $size run $r $(sink "$count" "$(gen_req "$nic" "$size" "$count" 0)")"
			done
		done
	done
	idle
fi

# page_buffers on|off: pagefill with one-page buffers (ethtool -G
# rx-buf-len, which restarts the interface), or back to the size the MTU
# brings by default.
default_buf_len=$(ethtool -g "$pf" | sed -n '/^Current/,$p' | sed -n 's/^RX Buf Len:[[:space:]]*//p')
echo "# ethtool -g $pf: rx-buf-len $default_buf_len"
page_buffers() {
	if [ "$1" = on ]; then len=4096; else len=$default_buf_len; fi
	ethtool -G "$pf" rx-buf-len "$len"
	for _ in $(seq 100); do
		[ "$(cat "/sys/class/net/$pf/carrier" 2>/dev/null)" = 1 ] && break
		sleep 0.1
	done
}

# page: the cost runs again for pagefill with one-page buffers ("pfpage"):
# a buffer then holds 2 frames of 1500 bytes instead of 21.
if echo "$what" | grep -qw page; then
	page_buffers on
	sink 2000 "$(gen_req pf 64 2000 0)" >/dev/null
	for size in $sizes; do
		for r in $(seq "$runs"); do
			echo "cost nic pfpage size $size run $r $(sink "$count" "$(gen_req pf "$size" "$count" 0)")"
		done
	done
	page_buffers off
fi

# gro: the cost runs with a UDP_GRO socket ("pfgro", "vngro"): the stack
# merges a flow's frames before IP and UDP see them.
if echo "$what" | grep -qw gro; then
	for nic in pf vn; do sink -g 2000 "$(gen_req "$nic" 64 2000 0)" >/dev/null; done
	for size in $sizes; do
		for r in $(seq "$runs"); do
			for nic in pf vn; do
				echo "cost nic ${nic}gro size $size run $r $(sink -g "$count" "$(gen_req "$nic" "$size" "$count" 0)")"
			done
		done
	done
fi

# merge: pagefill with the private flag rx-udp-merge: a buffer's run of
# the stream's datagrams goes up as one skb, whole to a UDP_GRO socket
# ("pfmerge") and split again by the stack for a plain one
# ("pfmergeplain").
if echo "$what" | grep -qw merge; then
	ethtool --set-priv-flags "$pf" rx-udp-merge on
	sink -g 2000 "$(gen_req pf 64 2000 0)" >/dev/null
	for size in $sizes; do
		for r in $(seq "$runs"); do
			echo "cost nic pfmerge size $size run $r $(sink -g "$count" "$(gen_req pf "$size" "$count" 0)")"
			echo "cost nic pfmergeplain size $size run $r $(sink "$count" "$(gen_req pf "$size" "$count" 0)")"
		done
	done
	ethtool --set-priv-flags "$pf" rx-udp-merge off
fi

# multi: the cost with 31 streams (nodes 1-31 of group 0) instead of one:
# pagefill fills a buffer per stream, so each fills 31 times more slowly.
if echo "$what" | grep -qw multi; then
	per=$((count / 31))
	for size in 64 1500; do
		for r in $(seq "$runs"); do
			for nic in pf vn; do
				echo "multi nic $nic size $size nstreams 31 run $r $(sink $((per * 31)) "$(gen_req "$nic" "$size" "$per" 0 1-31)")"
			done
		done
	done
fi

# xdp: native XDP (the programs of tests/kselftest/xdp_pagefill.bpf.c) on
# each NIC: every frame of a run dropped ("pfxdpdrop", "vnxdpdrop"), sent
# back ("...xdptx") or passed ("...xdppass"). A program that drops or sends
# back passes the run's last frame (sequence number COUNT - 1) to the sink,
# whose markers bound the run, so the cost is per frame the program saw
# ("frames", the generator's count).
# xdp_attach NIC SECTION: the program of SECTION on NIC (pf or vn), built
# for runs of COUNT frames.
obj=/tmp/xdp_bench.bpf.o
xdp_attach() {
	[ -f "$obj" ] || clang -O2 -target bpf -I/usr/include/"$(uname -m)"-linux-gnu \
		-DLAST_SEQ=$((count - 1)) -c tests/kselftest/xdp_pagefill.bpf.c -o "$obj" || return 1
	if [ "$1" = pf ]; then xdp_dev=$pf; else xdp_dev=$vn; fi
	ip link set dev "$xdp_dev" xdpdrv obj "$obj" sec "$2" ||
		{ echo "# $xdp_dev: no native XDP program ($2)"; return 1; }
}
xdp_detach() { ip link set dev "$xdp_dev" xdpdrv off; }

if echo "$what" | grep -qw xdp; then
	for act in $xdp_acts; do
		sec=xdp_bench_$act want=1 frames="frames $count"
		if [ "$act" = pass ]; then sec=xdp_pass want=$count frames=""; fi
		for nic in $nics; do
			xdp_attach "$nic" "$sec" || continue
			sink "$want" "$(gen_req "$nic" 64 "$count" 0)" >/dev/null
			for size in $xdp_sizes; do
				for r in $(seq "$runs"); do
					echo "cost nic ${nic}xdp$act size $size $frames run $r $(sink "$want" "$(gen_req "$nic" "$size" "$count" 0)")"
				done
			done
			xdp_detach
		done
	done
fi

# xsk: AF_XDP: pf_xsk (tests/kselftest/pf_xsk.c) receives every frame of a
# run on a socket of the NIC's queue through its own XSKMAP redirect, in
# zero-copy mode ("pfxskzc", "vnxskzc") and in copy mode ("...xskcopy");
# a NIC that does not bind in a mode is skipped, and says so.
# xsk_sink NIC FLAGS COUNT REQUEST: pf_xsk's run; prints as sink does.
xsk_sink() {
	if [ "$1" = pf ]; then xsk_dev=$pf; else xsk_dev=$vn; fi
	drops=$(es dev_drop_overflow)
	# shellcheck disable=SC2086
	out=$("$bin/pf_xsk" $2 -t 3 -R "$4" "$xsk_dev" 0 "$3" 2>/tmp/xsk.err) || true
	case "$out" in
	*" request "*) ;;
	*) echo "# $xsk_dev: no AF_XDP socket ($2): $(tail -n 1 /tmp/xsk.err)"; return 1 ;;
	esac
	id=${out##* request }
	ins=$(marks)
	gen=$(answer "$id")
	echo "${out% request *} $ins overflow $(($(es dev_drop_overflow) - drops)) gen $gen"
}
if echo "$what" | grep -qw xsk; then
	for nic in $nics; do
		for mode in zc copy; do
			flags=-z
			[ "$mode" = zc ] || flags=-c
			# Binding restarts pagefill's queue: one unrecorded run
			# first, for the pools and the sink's pages.
			warm=$(xsk_sink "$nic" "$flags" 2000 "$(gen_req "$nic" 64 2000 0)") ||
				{ echo "$warm"; continue; }
			for size in $xdp_sizes; do
				for r in $(seq "$runs"); do
					echo "cost nic ${nic}xsk$mode size $size run $r $(xsk_sink "$nic" "$flags" "$count" "$(gen_req "$nic" "$size" "$count" 0)")"
				done
			done
		done
	done
fi

# xdprate: the loss runs with a native XDP program on each NIC that drops
# ("pfxdpdrop", "vnxdpdrop") or sends back ("...xdptx") every frame but the
# run's last, which reaches the sink. Both drivers count every frame a
# program saw in the interface's rx_packets: "seen" is its growth over the
# run, and the generator's frames less those seen were lost before the
# program. The sink waits the run's length for the one frame it gets.
# rx_settled DEV: rx_packets of DEV once two reads 0.1 s apart agree (a
# driver may publish its counters after the frame the sink waited for).
rx_settled() {
	a=$(cat "/sys/class/net/$1/statistics/rx_packets")
	while sleep 0.1 && b=$(cat "/sys/class/net/$1/statistics/rx_packets") && [ "$a" != "$b" ]; do
		a=$b
	done
	echo "$a"
}
if echo "$what" | grep -qw xdprate; then
	for act in drop tx; do
		for nic in pf vn; do
			xdp_attach "$nic" "xdp_bench_$act" || continue
			sink 1 "$(gen_req "$nic" 64 "$count" 0)" >/dev/null
			for size in 64 1500; do
				for rate in $rates; do
					sink_ms=3000
					[ "$rate" = 0 ] || sink_ms=$((count * 1000 / rate + 3000))
					for r in $(seq "$runs"); do
						before=$(rx_settled "$xdp_dev")
						out=$(sink 1 "$(gen_req "$nic" "$size" "$count" "$rate")")
						echo "rate nic ${nic}xdp$act size $size offered $rate run $r seen $(($(rx_settled "$xdp_dev") - before)) $out"
					done
				done
			done
			sink_ms=3000
			xdp_detach
		done
	done
fi

if echo "$what" | grep -qw rate; then
	for size in 64 1500; do
		for rate in $rates; do
			for r in $(seq "$runs"); do
				for nic in pf vn; do
					echo "rate nic $nic size $size offered $rate run $r $(sink "$count" "$(gen_req "$nic" "$size" "$count" "$rate")")"
				done
			done
		done
	done
fi

# pool: the page pools of the pagefill interface, from page-pool-get:
# "pools N inflight PAGES inflight_mem BYTES".
pool() {
	ksrc=$(readlink -f "$PF_KDIR/source")
	python3 "$ksrc/tools/net/ynl/pyynl/cli.py" --no-schema \
		--spec "$ksrc/Documentation/netlink/specs/netdev.yaml" --dump page-pool-get --output-json 2>/dev/null |
		python3 -c '
import json, sys
ifindex = int(sys.argv[1])
pools = [p for p in json.load(sys.stdin) if p.get("ifindex") == ifindex]
print("pools %d inflight %d inflight_mem %d" % (len(pools),
      sum(p.get("inflight", 0) for p in pools), sum(p.get("inflight-mem", 0) for p in pools)))
' "$(cat "/sys/class/net/$pf/ifindex")"
}
mem_point() {
	echo "mem label $1 streams $2 groups $(es groups_joined) allocated $(es rx0_buffers_allocated) recycled $(es rx0_buffers_recycled) $(pool)"
}
group_mac() { printf '01:50:46:4c:%02x:%02x' $(($1 >> 8)) $(($1 & 255)); }

if echo "$what" | grep -qw mem; then
	# Fresh start: the counters and pools of an interface just opened.
	ip link set "$pf" down
	ip link set "$pf" up
	sleep 1
	mem_point open 0
	sink 100 "$(gen_req pf 64 100 0 1 0)" >/dev/null
	mem_point 1-stream 1
	ip maddr add "$(group_mac 7)" dev "$pf"
	sleep 0.5
	mem_point joined-2-groups 0
	sink 320 "$(gen_req pf 64 10 0 1-16 0,7)" >/dev/null
	mem_point 32-streams 32
	groups=0
	for g in $(seq 100 130); do
		ip maddr add "$(group_mac "$g")" dev "$pf"
		groups="$groups,$g"
	done
	groups="$groups,7"
	sleep 0.5
	mem_point joined-33-groups 0
	sink 10230 "$(gen_req pf 64 10 0 1-31 "$groups")" >/dev/null
	mem_point 1023-streams 1023
	for g in $(seq 100 130) 7; do ip maddr del "$(group_mac "$g")" dev "$pf"; done
	sleep 1
	mem_point left-to-1-group 0
fi

# busy_rx: the frames busy polling took so far (TcpExt BusyPollRxPackets).
busy_rx() {
	awk '/^TcpExt:/ { if (!h) { split($0, k); h = 1 } else { split($0, v)
		for (i in k) if (k[i] == "BusyPollRxPackets") print v[i] } }' /proc/net/netstat
}

# irqs DEV: the interrupts DEV's MSI-X vectors took so far, all CPUs
# (/proc/interrupts; virtio-net's vectors are its PCI device's).
irqs() {
	d=$(readlink -f "/sys/class/net/$1/device")
	[ -d "$d/msi_irqs" ] || d=$(dirname "$d")
	awk -v list="$(ls "$d/msi_irqs" 2>/dev/null | tr '\n' ' ')" '
		BEGIN { n = split(list, a, " "); for (i = 1; i <= n; i++) w[a[i] ":"] = 1 }
		$1 in w { for (i = 2; i <= NF && $i ~ /^[0-9]+$/; i++) s += $i }
		END { print s + 0 }' /proc/interrupts
}
rx_packets() { cat "/sys/class/net/$1/statistics/rx_packets"; }

# echo_lat NIC EOT [USECS]: one latency run, LAT_COUNT lone frames echoed,
# each sent LAT_GAP_MS after the previous one's answer; USECS: pf-echo's
# socket busy-polls (pf-echo -b USECS). Prints lat.py's answer, "busy B",
# the frames busy polling took meanwhile, "irqs Q rxp P", the interrupts
# of the NIC's vectors and the frames it received over the run (with a
# background load, the load's too), and "insns I kinsns K", the guest's
# instructions between pf-echo's markers.
echo_lat() {
	if [ "$1" = pf ]; then
		req="lat pf --count $lat_count --gap-ms $lat_gap --eot $2 --dst-mac $pfmac --dst-ip 192.0.2.1"
		dev=$pf
	else
		req="lat vn --count $lat_count --gap-ms $lat_gap --dst-mac $vnmac --dst-ip 198.18.0.1"
		dev=$vn
	fi
	busy0=$(busy_rx)
	irq0=$(irqs "$dev")
	rx0=$(rx_packets "$dev")
	out=$("$bin/pf-echo" ${3:+-b "$3"} 9001 "$lat_count" 5000 "$req") || true
	irq1=$(irqs "$dev")
	rx1=$(rx_packets "$dev")
	ins=$(marks)
	case "$out" in
	*" request "*) echo "$(answer "${out##* request }") busy $(($(busy_rx) - busy0)) irqs $((irq1 - irq0)) rxp $((rx1 - rx0)) $ins" ;;
	*) echo "no pf-echo run" ;;
	esac
}

# bg_start NIC / bg_stop: a background load on NIC while a latency run
# goes on: LAT_LOAD frames/s in all (64 bytes) from nodes 1-29 and 31 of
# group 0 (node 30 is lat.py's), to a pf-sink on port 9000 that bg_stop
# ends; pagefill's from pagefill-sim gen (its streams open-ended with
# --weighted-until), virtio-net's from vnet-gen.py (--until), both until
# /run/pf/bg.stop exists. bg_stop sets bg_line to "bg_frames F bg_us T":
# the frames the generator sent and over how long (microseconds).
bg_n=0
bg_start() {
	rm -f /run/pf/bg.stop
	if [ "$1" = pf ]; then
		req="gen --nodes 1-29,31 --groups 0 --size 64 --count 1 --rate $lat_load --group-weight 0=2 --weighted-until @OUT@/bg.stop --dst-mac $pfmac --dst-ip 192.0.2.1 --src-ip 198.51.100.0"
	else
		req="vgen --nodes 1-29,31 --size 64 --count 1 --rate $lat_load --until @OUT@/bg.stop --dst-mac $vnmac --dst-ip 198.18.0.1"
	fi
	"$bin/pf-sink" 9000 1000000000 600000 >/dev/null &
	bg_pid=$!
	sleep 0.2
	bg_n=$((bg_n + 1))
	bg_id=bg.$$.$bg_n
	printf '%s\n.\n' "$req" >"/run/pf/tmp.$bg_id"
	mv "/run/pf/tmp.$bg_id" "/run/pf/req.$bg_id"
	# The load under way before the first round trip.
	sleep 1
}
bg_stop() {
	touch /run/pf/bg.stop
	bg_ans=$(answer "$bg_id")
	kill "$bg_pid" 2>/dev/null || true
	wait "$bg_pid" 2>/dev/null || true
	bg_line=$(echo "$bg_ans" | awk '{ for (i = 1; i < NF; i++) if ($i == "frames" || $i == "elapsed_us") v[$i] = $(i + 1)
		print "bg_frames " v["frames"] + 0 " bg_us " v["elapsed_us"] + 0 }')
}

# napi_defer DEV DEFER NS: DEV's napi_defer_hard_irqs and gro_flush_timeout
# (sysfs, every NAPI instance of the device).
napi_defer() {
	echo "$2" >"/sys/class/net/$1/napi_defer_hard_irqs"
	echo "$3" >"/sys/class/net/$1/gro_flush_timeout"
}

# lat_case NIC USECS EOT POLL MODE LOAD R: one latency run of a case, its
# line: MODE "-" (the NIC as set), "dim" (adaptive-rx on) or "threaded"
# (threaded NAPI); LOAD the background load's frames/s, 0 none.
lat_case() {
	t0=$(date +%s%N)
	if [ "$6" != 0 ]; then bg_start "$1"; fi
	if [ "$4" = - ]; then res=$(echo_lat "$1" "$3"); else res=$(echo_lat "$1" "$3" "$4"); fi
	bg_line=""
	if [ "$6" != 0 ]; then bg_stop; fi
	echo "lat nic $1 usecs $2 eot $3 poll $4 mode $5 load $6 gap_ms $lat_gap run $7 $res${bg_line:+ $bg_line} secs $((($(date +%s%N) - t0) / 1000000000))"
}

# coal: the round trip of a lone frame (lat lines; "poll" is pf-echo's
# busy-poll time, "-" for none): pagefill with its default rx-usecs and
# with 0, the sender marking the frame end of transmission (EOT 1) or
# leaving it to the coalescing timer; pagefill with adaptive-rx on
# (net_dim) and with threaded NAPI (sysfs threaded 1), EOT 1; virtio-net,
# and with adaptive-rx if its device takes it; both with busy polling,
# LAT_BUSY_US (default "50 20000"; above LAT_GAP_MS the loop spans the
# wait for the next frame), the NAPI settings the kernel's
# selftests/net/busy_poll_test.sh uses (napi_defer_hard_irqs 100,
# gro_flush_timeout 50000 ns) and pagefill at rx-usecs 0 and EOT 1. Then
# under load (bg_start): pagefill by default, with adaptive-rx and with
# threaded NAPI (EOT 1), virtio-net by default and with adaptive-rx if it
# takes it, each while LAT_LOAD frames/s (default 25000) come in from 30
# other streams. LAT_COUNT frames a run (default 2000), LAT_GAP_MS apart
# (default 1).
lat_count=${LAT_COUNT:-2000}
lat_gap=${LAT_GAP_MS:-1}
lat_busy=${LAT_BUSY_US:-50 20000}
lat_load=${LAT_LOAD:-25000}
if echo "$what" | grep -qw coal; then
	# The echoes go back to node 30 of the fabric, and to the same address
	# behind virtio-net's socket.
	ip route add 198.51.100.0/24 dev "$pf"
	ip neigh add 198.51.100.30 lladdr 02:50:46:4c:00:1e dev "$pf"
	ip neigh add 198.18.0.30 lladdr 02:50:46:4c:00:1e dev "$vn"
	default=$(ethtool -c "$pf" | awk '$1 == "rx-usecs:" { print $2 }')
	echo "# ethtool -C $vn rx-usecs 0: $(ethtool -C "$vn" rx-usecs 0 2>&1 || true)"
	# virtio-net's adaptive-rx needs a device with notification
	# coalescing (VIRTIO_NET_F_VQ_NOTF_COAL): its case runs if it takes it.
	# Its case runs if ethtool -c then says it is on.
	vndim=""
	msg=$(ethtool -C "$vn" adaptive-rx on 2>&1) || true
	coal=$(ethtool -c "$vn" 2>&1 | grep -iE 'adaptive|rx-usecs:' | tr '\n\t' '  ')
	if ethtool -c "$vn" 2>/dev/null | grep -q '^Adaptive RX: *on'; then vndim=1; fi
	ethtool -C "$vn" adaptive-rx off 2>/dev/null || true
	vncase=skipped
	[ -z "$vndim" ] || vncase=run
	echo "# ethtool -C $vn adaptive-rx on: said \"$msg\"; then ethtool -c $vn: $coal; its case $vncase"
	echo "# latency runs: $lat_count frames, $lat_gap ms apart; busy polling $lat_busy us; load $lat_load frames/s"
	coal_t0=$(date +%s)
	for r in $(seq "$runs"); do
		for usecs in "$default" 0; do
			ethtool -C "$pf" rx-usecs "$usecs"
			for eot in 1 0; do
				lat_case pf "$usecs" "$eot" - - 0 "$r"
			done
		done
		ethtool -C "$pf" rx-usecs "$default"
		for load in 0 "$lat_load"; do
			[ "$load" = 0 ] || lat_case pf "$default" 1 - - "$load" "$r"
			ethtool -C "$pf" adaptive-rx on
			lat_case pf dim 1 - dim "$load" "$r"
			ethtool -C "$pf" adaptive-rx off
			ethtool -C "$pf" rx-usecs "$default"
			echo 1 >"/sys/class/net/$pf/threaded"
			lat_case pf "$default" 1 - threaded "$load" "$r"
			echo 0 >"/sys/class/net/$pf/threaded"
			lat_case vn - - - - "$load" "$r"
			if [ -n "$vndim" ]; then
				ethtool -C "$vn" adaptive-rx on
				lat_case vn dim - - dim "$load" "$r"
				ethtool -C "$vn" adaptive-rx off
			fi
			[ "$load" != 0 ] || {
				ethtool -C "$pf" rx-usecs 0
				for nic in pf vn; do
					if [ "$nic" = pf ]; then dev=$pf eot=1 usecs=0; else dev=$vn eot=- usecs=-; fi
					napi_defer "$dev" 100 50000
					for us in $lat_busy; do
						lat_case "$nic" "$usecs" "$eot" "$us" - 0 "$r"
					done
					napi_defer "$dev" 0 0
				done
				ethtool -C "$pf" rx-usecs "$default"
			}
		done
	done
	echo "# latency part: $(($(date +%s) - coal_t0)) s"
fi

if echo "$what" | grep -qw prof; then
	# The module's symbols, for the host to name the profile's addresses.
	cat /proc/kallsyms >/run/pf/kallsyms
	if echo "$prof" | grep -qw socket; then
		for size in 64 1500; do
			for nic in $nics; do
				echo "prof nic $nic size $size $(sink "$count" "$(gen_req "$nic" "$size" "$count" 0)") marks $(grep -c MARK /run/pf/insn.log)"
			done
		done
	fi
	if echo "$prof" | grep -qw page; then
		page_buffers on
		for size in 64 1500; do
			echo "prof nic pfpage size $size $(sink "$count" "$(gen_req pf "$size" "$count" 0)") marks $(grep -c MARK /run/pf/insn.log)"
		done
		page_buffers off
	fi
	if echo "$prof" | grep -qw merge; then
		ethtool --set-priv-flags "$pf" rx-udp-merge on
		for size in 64 1500; do
			echo "prof nic pfmergeplain size $size $(sink "$count" "$(gen_req pf "$size" "$count" 0)") marks $(grep -c MARK /run/pf/insn.log)"
			echo "prof nic pfmerge size $size $(sink -g "$count" "$(gen_req pf "$size" "$count" 0)") marks $(grep -c MARK /run/pf/insn.log)"
		done
		ethtool --set-priv-flags "$pf" rx-udp-merge off
	fi
	if echo "$prof" | grep -qw xsk; then
		for nic in $nics; do
			for mode in zc copy; do
				flags=-z
				[ "$mode" = zc ] || flags=-c
				for size in $xdp_sizes; do
					out=$(xsk_sink "$nic" "$flags" "$count" "$(gen_req "$nic" "$size" "$count" 0)") || continue
					echo "prof nic ${nic}xsk$mode size $size $out marks $(grep -c MARK /run/pf/insn.log)"
				done
			done
		done
	fi
	# XDP_DROP and XDP_TX: all but the run's last frame dropped or sent
	# back by the program.
	for act in drop tx; do
		echo "$prof" | grep -qw xdp || continue
		for nic in $nics; do
			xdp_attach "$nic" "xdp_bench_$act" || continue
			for size in $xdp_sizes; do
				echo "prof nic ${nic}xdp$act size $size frames $count $(sink 1 "$(gen_req "$nic" "$size" "$count" 0)") marks $(grep -c MARK /run/pf/insn.log)"
			done
			xdp_detach
		done
	done
fi

echo "# ethtool -S $pf:"
ethtool -S "$pf" | grep -E 'rx0_|dev_|groups' | sed 's/^/#  /'
[ -z "$vn" ] || echo "# $vn: $(ip -s link show "$vn" | sed -n '/RX:/{n;p}')"
echo "# Udp: $(grep '^Udp:' /proc/net/snmp | tail -n 1)"
