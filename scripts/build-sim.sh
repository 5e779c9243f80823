#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Build the device model on the host (release) and print the binary's path.
# Cargo builds in the cache ($CARGO_TARGET_DIR, see lib.sh), shared by every
# checkout; the binary is copied out to a folder of this checkout's own
# (keyed by its path, as build-module.sh keys the module's), under a lock,
# so that two checkouts building at once each run their own model.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
out=$PF_CACHE/sim/$(echo "$PF_TOP" | sha256sum | cut -c1-16)
mkdir -p "$out"
(
	flock 9
	cargo build --quiet --release --manifest-path "$PF_TOP/Cargo.toml" -p pagefill-sim >&2
	cp "$CARGO_TARGET_DIR/release/pagefill-sim" "$out/pagefill-sim.new"
	mv "$out/pagefill-sim.new" "$out/pagefill-sim"
) 9>"$PF_CACHE/sim/.lock"
echo "$out/pagefill-sim"
