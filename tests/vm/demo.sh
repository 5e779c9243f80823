#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Guest side of scripts/demo.sh: two pagefill NICs on one fabric, the second
# in a network namespace; ping and TCP between them, generator streams from
# 30 virtual nodes in two groups into a UDP socket over two queue pairs, and
# the counters on both sides.
set -e
here=$(dirname "$0")
. "$here/../kselftest/ktap.sh"
host="sh $here/../kselftest/pf-host.sh"
echo "# kernel $(uname -r)"
insmod "$1"
echo "# pagefill NICs:"
for bdf in $(pf_nics); do
	echo "  $bdf  driver=$(basename "$(readlink /sys/bus/pci/devices/$bdf/driver)")  netdev=$(ls /sys/bus/pci/devices/$bdf/net)"
done
dmesg | grep 'pagefill NIC'
pf_pair
ethtool -L "$a" combined 2
ip maddr add 01:50:46:4c:00:07 dev "$a"
echo "# $a: 2 queue pairs (ethtool -L), groups 0 and 7 joined (ip maddr add 01:50:46:4c:00:07)"
echo "# ping from $a to $b (in netns peer):"
ping -c 3 -i 0.2 192.0.2.2
echo "# TCP, 4 MB, $a -> $b:"
ip netns exec peer iperf3 -s -D -1
eventually_long pf_listening peer 5201
iperf3 -c 192.0.2.2 -n 4M | tail -n 4
echo "# generator: 30 nodes x 2 groups x 100 frames of 64 bytes -> UDP socket on $a:"
python3 -S "$here/../kselftest/udp_sink.py" 9000 6000 60 &
sink=$!
eventually test -f /tmp/udp_sink.ready
$host gen --nodes 2-31 --groups 0,7 --size 64 --count 100 --dst-mac "$(cat /sys/class/net/$a/address)" \
	--dst-ip 192.0.2.1 --src-ip 198.51.100.0 --eot-every 50
wait "$sink"
echo "# $a counters:"
ip -s link show "$a"
echo "# $a ethtool -S (non-zero):"
ethtool -S "$a" | awk -F': ' '$2 != 0'
echo "# device (NIC 0) counters:"
$host ctl 0 stats | grep -v '^stream'
ip netns del peer
rmmod pagefill
