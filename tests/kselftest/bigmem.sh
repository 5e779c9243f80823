#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# bigmem.sh [PAGEFILL_KO]: on a machine with RAM above 4 GiB and swiotlb
# not forced, the pagefill data path passes without bouncing a single
# mapping. The device addresses 64 bits (programming-interface.rst), so
# the driver must say so (its DMA mask): a PCI device starts with a 32-bit
# mask, and the DMA API then bounces every buffer above 4 GiB through
# swiotlb, which copies every frame once more, holds swiotlb slots for as
# long as the page pool keeps its pages mapped, and fails mappings once
# swiotlb is full. The test traces the NICs' mappings (dma:dma_map_phys)
# and swiotlb's bounces (swiotlb:swiotlb_bounced): it needs the first to
# show pages above 4 GiB mapped (else a missing mask would go unnoticed,
# and the test says so), and the second to show none of them bounced;
# swiotlb's own counters (io_tlb_used, and io_tlb_used_hiwater with
# swiotlb=track_hiwater on the command line) stay 0.
#
# Traffic: 30 generator streams (nodes 2-31; nodes 0 and 1 are the two
# NICs) in groups 0, 7 and 300 at 64 and 1400 bytes (copied and fragment
# skbs), complete and in order; ping and 4 MiB of TCP between the two NICs
# (transmit mappings, linear and page fragments).
. "$(dirname "$0")/ktap.sh"
ko=${1:-}
here=$(dirname "$0")
host=pf_host
pf_need_host
tr=/sys/kernel/tracing
tlb=/sys/kernel/debug/swiotlb
[ -d "$tr/events" ] || mount -t tracefs nodev "$tr" 2>/dev/null
if [ ! -d "$tr/events/dma/dma_map_phys" ] || [ ! -d "$tr/events/swiotlb/swiotlb_bounced" ]; then
	echo "1..0 # SKIP needs tracefs with the dma:dma_map_phys and "\
"swiotlb:swiotlb_bounced events"
	exit 4
fi
ktap_plan 12
pf_log_mark

# The guest's RAM reaches above 4 GiB, and swiotlb is there (the kernel
# sets it up when RAM does) but not forced: only a device whose mask
# cannot reach a buffer bounces it.
ram_above_4g() {
	awk '/System RAM/ { split($1, r, "-"); sub(/^0+/, "", r[2]); if (length(r[2]) > 8) f = 1 }
		END { exit !f }' /proc/iomem
}
grep -E '^(MemTotal|MemFree)' /proc/meminfo | sed 's/^/# /'
grep 'System RAM' /proc/iomem | sed 's/^/# /'
ktap_check "the guest has RAM above 4 GiB" ram_above_4g
ktap_check "swiotlb is set up, not forced, and holds nothing yet" eval \
	'[ "$(cat $tlb/io_tlb_nslabs)" -gt 0 ] && ! grep -qE "swiotlb=[^ ]*force" /proc/cmdline &&
	 [ "$(cat $tlb/io_tlb_used)" -eq 0 ]'
echo 0 >"$tlb/io_tlb_used_hiwater"

pf_load "$ko"
set -- $(pf_nics)
# Every mapping either NIC makes, and every bounce, from here on.
echo 0 >"$tr/tracing_on"
echo 16384 >"$tr/buffer_size_kb"
echo "device == \"$1\" || device == \"$2\"" >"$tr/events/dma/dma_map_phys/filter"
echo "dev_name == \"$1\" || dev_name == \"$2\"" >"$tr/events/swiotlb/swiotlb_bounced/filter"
echo 1 >"$tr/events/dma/dma_map_phys/enable"
echo 1 >"$tr/events/swiotlb/swiotlb_bounced/enable"
echo >"$tr/trace"
echo 1 >"$tr/tracing_on"

pf_pair
ip maddr add 01:50:46:4c:00:07 dev "$a"
ip maddr add 01:50:46:4c:01:2c dev "$a"
mac=$(cat "/sys/class/net/$a/address")
sysctl -qw net.core.rmem_max=8388608

# run SIZE COUNT: COUNT frames per stream from nodes 2-31 to groups 0, 7
# and 300; the sink checks every stream.
run() {
	pf_sink 9000 $((90 * $2)) 120
	$host gen --nodes 2-31 --groups 0,7,300 --size "$1" --count "$2" --give-up-ms 20000 \
		--dst-mac "$mac" --dst-ip 192.0.2.1 --src-ip 198.51.100.0 \
		--eot-every 50 >/tmp/gen.out
	pf_sent
	wait "$pf_sink"
	rc=$?
	echo "# size $1: $(cat /tmp/sink.out); generator: $(cat /tmp/gen.out)"
	return $rc
}
ktap_check "4500 frames of 64 bytes from 90 streams, complete and in order" run 64 50
ktap_check "1800 frames of 1400 bytes from 90 streams, complete and in order" run 1400 20
ktap_check "ping both ways, 56 and 1400 bytes" eval \
	'ping -c 5 -i 0.2 -W 2 192.0.2.2 >/dev/null &&
	 ping -c 5 -i 0.2 -W 2 -s 1400 192.0.2.2 >/dev/null &&
	 ip netns exec peer ping -c 5 -i 0.2 -W 2 -s 1400 192.0.2.1 >/dev/null'
tcp() {
	ip netns exec peer sh -c 'socat -u TCP-LISTEN:5000,reuseaddr - | wc -c >/tmp/tcp.count' &
	eventually_long pf_listening peer 5000 || return 1
	head -c 4194304 /dev/zero | socat -u - TCP:192.0.2.2:5000 || return 1
	wait
	echo "# TCP: $(cat /tmp/tcp.count) bytes received"
	[ "$(cat /tmp/tcp.count)" -eq 4194304 ]
}
ktap_check "TCP, 4 MiB from one NIC to the other, every byte" tcp

# The swiotlb counters while the interfaces are still up: the page pools
# keep their pages mapped, so a bounced buffer would still hold its slots.
used=$(cat "$tlb/io_tlb_used")
hiwater=$(cat "$tlb/io_tlb_used_hiwater")
echo 0 >"$tr/tracing_on"
cat "$tr/trace" >/tmp/trace
lost=$(cat "$tr"/per_cpu/cpu*/stats | awk '/^overrun:/ { s += $2 } END { print s + 0 }')
# "DEV dir=D dma_addr=X size=N phys_addr=P attrs=A": mappings, those of
# memory above 4 GiB, and those whose device address is not the memory's
# own (bounced: the device was given a swiotlb slot instead).
awk '/ dma_map_phys: / {
	for (i = 1; i <= NF; i++) {
		if ($i ~ /^dma_addr=/) d = substr($i, 10)
		if ($i ~ /^phys_addr=/) p = substr($i, 11)
	}
	maps++
	if (length(p) > 8) high++
	if (d != p) moved++
} / swiotlb_bounced: / { bounced++ }
END { printf "%d %d %d %d\n", maps, high, moved, bounced }' /tmp/trace >/tmp/maps
read -r maps high moved bounced </tmp/maps
echo "# mappings by the NICs $maps, of memory above 4 GiB $high, "\
"to another device address $moved; swiotlb bounces $bounced; "\
"swiotlb slots used $used, high water $hiwater; trace events lost $lost"
grep -m 3 ' swiotlb_bounced: ' /tmp/trace | sed 's/^ */# /'
ktap_check "every mapping traced, and the NICs mapped memory above 4 GiB (page pool pages, skbs)" \
	eval '[ "$lost" -eq 0 ] && [ "$maps" -gt 0 ] && [ "$high" -gt 0 ]'
ktap_check "no mapping of the NICs bounced through swiotlb (device address = memory address)" eval \
	'[ "$bounced" -eq 0 ] && [ "$moved" -eq 0 ]'
ktap_check "swiotlb holds nothing and never held anything (io_tlb_used, io_tlb_used_hiwater)" eval \
	'[ "$used" -eq 0 ] && [ "$hiwater" -eq 0 ]'

echo 0 >"$tr/events/dma/dma_map_phys/enable"
echo 0 >"$tr/events/swiotlb/swiotlb_bounced/enable"
echo 0 >"$tr/events/dma/dma_map_phys/filter"
echo 0 >"$tr/events/swiotlb/swiotlb_bounced/filter"
echo >"$tr/trace"
ip netns del peer
ktap_check "no receive error or bad completion" eval \
	'[ "$(pf_qsum "$a" rx_bad_completions)" -eq 0 ] &&
	[ "$(cat /sys/class/net/$a/statistics/rx_errors)" -eq 0 ]'
rmmod pagefill
ktap_check "no warning or other report in the kernel log" pf_log_clean
pf_kmemleak_check
ktap_finish
