#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# dkms.sh PAGEFILL_KO HOST_LAYER: tests/vm/dkms.test's guest command (not
# a kselftest: it needs the test bed's install of the package). The driver
# as the pagefill-dkms package installs it on a Debian host, loaded into
# the stock kernel by modprobe.
# HOST_LAYER is what `apt-get install ./pagefill-dkms_*.deb` changed in the
# Debian host root (scripts/dkms-host.sh): its usr/lib/modules/RELEASE (the
# module DKMS built, in updates/dkms/, and depmod's indexes of it with the
# kernel's own modules) is laid over the running kernel's module folder,
# read-only (overlayfs), as a host that ran that install has it. Then
# `modprobe pagefill` (not the path of a .ko: PAGEFILL_KO is not used),
# ping through two NICs, `modprobe -r pagefill`.
. "$(dirname "$0")/../kselftest/ktap.sh"
layer=${2:-}
rel=$(uname -r)
mods=/usr/lib/modules/$rel
ktap_plan 6

if [ -n "$layer" ] && [ -d "$layer/upper$mods" ]; then
	ktap_ok "the package's install for $rel is there ($layer)"
else
	ktap_not_ok "the package's install for $rel is there (layer '$layer': see scripts/dkms-host.sh)"
	ktap_finish
	exit 1
fi
modprobe overlay
ktap_check "the install's modules laid over the kernel's (overlayfs)" \
	mount -t overlay pagefill-dkms -o "lowerdir=$layer/upper$mods:$mods" "$mods"
echo "# $(modinfo -F filename pagefill) $(modinfo -F vermagic pagefill)"
ktap_check "modprobe pagefill loads the package's module" modprobe pagefill
# shellcheck disable=SC2016
ktap_check "it is the module DKMS installed (updates/dkms)" \
	eval 'modinfo -F filename pagefill | grep -q "/modules/$rel/updates/dkms/pagefill\.ko"'
pf_pair
ktap_check "ping through the NIC pair, both ways" eval \
	'ping -c 3 -i 0.2 -W 2 192.0.2.2 && ip netns exec peer ping -c 3 -i 0.2 -W 2 192.0.2.1'
ip netns del peer
ktap_check "modprobe -r pagefill" eval 'modprobe -r pagefill && [ ! -d /sys/module/pagefill ]'
umount "$mods"
ktap_finish
