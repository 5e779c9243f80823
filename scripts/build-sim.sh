#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Build the device model on the host (release) and print the binary's path.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
cargo build --quiet --release --manifest-path "$PF_TOP/Cargo.toml" -p pagefill-sim >&2
echo "$PF_TOP/target/release/pagefill-sim"
