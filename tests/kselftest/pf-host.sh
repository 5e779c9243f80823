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
# in the background is answered at once. The tests call pf_host of ktap.sh
# instead, which starts no shell of its own.
. "$(dirname "$0")/ktap.sh"
pf_host "$@"
