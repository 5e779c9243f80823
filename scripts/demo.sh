#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# The main job: set up everything (toolchain root, fast kernel, device model,
# module), boot a VM with two pagefill NICs on one fabric, load the driver,
# pass traffic between them (ping, TCP) and from the traffic generator, and
# show the counters of the interfaces and of the device.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
flavour=${1:-fast}
ko=$("$PF_TOP/scripts/build-module.sh" "$flavour")
# KVM where a probe boot works, else TCG (scripts/accel.sh says which).
PAGEFILL_ACCEL=$("$PF_TOP/scripts/accel.sh" "$flavour")
export PAGEFILL_ACCEL
exec "$PF_TOP/scripts/vm-run.sh" --kernel "$flavour" --nics 2 -- sh tests/vm/demo.sh "$ko"
