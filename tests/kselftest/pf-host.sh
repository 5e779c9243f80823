#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# pf-host.sh VERB ARGS...: from inside a test VM, ask the host to drive the
# device models (see host_agent in scripts/vm-run.sh), print the answer and
# exit with its status.
#
#   pf-host.sh ctl NIC COMMAND...   control command to NIC's device model
#   pf-host.sh gen ARGS...          run the traffic generator on the fabric
#                                   (pagefill-sim gen options, less --fabric)
#   pf-host.sh kill NIC [SECS]      kill NIC's device model (after SECS)
#
# The host serves requests side by side: one made while a generator runs
# in the background is answered at once.
set -e
id=$$.$(date +%s%N)
dir=/run/pf
printf '%s\n' "$*" >"$dir/tmp.$id"
mv "$dir/tmp.$id" "$dir/req.$id"
i=0
while [ ! -f "$dir/done.$id" ]; do
	i=$((i + 1))
	[ "$i" -lt 6000 ] || { echo "pf-host: no answer from the host" >&2; exit 124; }
	sleep 0.05
done
cat "$dir/resp.$id"
rc=$(cat "$dir/done.$id")
rm -f "$dir/resp.$id" "$dir/done.$id"
exit "$rc"
