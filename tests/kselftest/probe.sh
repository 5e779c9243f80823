#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# probe.sh [PAGEFILL_KO]: in the guest, load the driver, check that it found
# every pagefill NIC with the right identity and interface version, unbind and
# rebind them, unload and reload the module, and check that nothing leaked.
. "$(dirname "$0")/ktap.sh"
ko=${1:-}
drv=/sys/bus/pci/drivers/pagefill

nics=$(pf_nics)
n=$(echo "$nics" | grep -c .)
ktap_plan 7

ktap_check "the guest sees $PF_NICS pagefill NIC(s)" [ "$n" -eq "$PF_NICS" ]

pf_log_mark
# Built in, it probed at boot: its lines are all the log's.
[ "$ko" != builtin ] || pf_log_start=0
ktap_check "load pagefill" pf_load "$ko"
# Each NIC is a device-model instance; NIC i is fabric node i, behind root
# port i, so the registers the driver read must say so.
# The interface version is the device model's, from the ABI both share
# (any, where the test runs without the source tree).
abi=$(dirname "$0")/../../include/pagefill/abi.rs
major=$(sed -n 's/^pub const VERSION_MAJOR: u16 = \([0-9]*\);$/\1/p' "$abi" 2>/dev/null)
minor=$(sed -n 's/^pub const VERSION_MINOR: u16 = \([0-9]*\);$/\1/p' "$abi" 2>/dev/null)
[ -n "$major" ] && [ -n "$minor" ] || major='[0-9]*' minor='[0-9]*'
probed=0 i=0
for bdf in $nics; do
	mac=$(printf '02:50:46:4c:00:%02x' "$i")
	pf_log_since | grep -q "pagefill $bdf: pagefill NIC, interface $major\.$minor, "\
"node $i, MAC $mac, 4096 groups x 32 nodes, 4 queues, buffers 2^12..2^16, 2500 Mb/s$" &&
		[ -e "$drv/$bdf" ] && probed=$((probed + 1))
	i=$((i + 1))
done
ktap_check "probe bound every NIC and read its identity, node, MAC and limits" \
	[ "$probed" -eq "$n" ]

pf_log_mark
for bdf in $nics; do echo "$bdf" >"$drv/unbind"; done
unbound=0
for bdf in $nics; do
	[ ! -e "$drv/$bdf" ] && pf_log_since | grep -q "pagefill $bdf: pagefill NIC unbound" &&
		unbound=$((unbound + 1))
done
ktap_check "unbind released every NIC" [ "$unbound" -eq "$n" ]

for bdf in $nics; do echo "$bdf" >"$drv/bind"; done
rebound=0
for bdf in $nics; do [ -e "$drv/$bdf" ] && rebound=$((rebound + 1)); done
ktap_check "bind probes every NIC again" [ "$rebound" -eq "$n" ]

reload() { rmmod pagefill && pf_load "$ko" && rmmod pagefill; }
if pf_builtin; then
	ktap_skip "rmmod, insmod, rmmod" "pagefill is built into this kernel"
else
	ktap_check "rmmod, insmod, rmmod" reload
fi
pf_kmemleak_check
ktap_finish
