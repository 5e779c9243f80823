#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# in-root.sh CMD...: run CMD inside the toolchain root (created if missing;
# PF_ROOT_KIND=debian-host: that root instead, see toolchain-root.sh), with
# the repository and the cache at the same paths as on the host.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
if [ -n "${PF_IN_ROOT:-}" ]; then
	exec "$@"
fi
"$PF_TOP/scripts/toolchain-root.sh" "${PF_ROOT_KIND:-toolchain}" >/dev/null
pf_in_root "$@"
