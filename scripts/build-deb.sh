#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# build-deb.sh [OUTDIR]: build the Debian package pagefill-dkms (debian/,
# dkms.conf) with dpkg-buildpackage and debhelper's dh-dkms, in the
# debian-host root (scripts/toolchain-root.sh debian-host: a Debian trixie
# with those tools), and print the path of pagefill-dkms_VERSION_all.deb.
# Without OUTDIR it goes to the cache, in a folder keyed by the package's
# sources: the same sources give the same folder, and build once.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
export PF_ROOT_KIND=debian-host

# The package's sources: the files git has of them, tracked or new (no
# build outputs: a work tree's module build leaves objects beside them).
files=(Makefile Kbuild dkms.conf drivers include debian
	scripts/kdir.sh scripts/lib.sh scripts/dkms-build.sh)
if [ -n "${1:-}" ]; then
	mkdir -p "$1"
	outdir=$(cd "$1" && pwd)
fi
cd "$PF_TOP"
list=$(git ls-files -z --cached --others --exclude-standard -- "${files[@]}" | tr '\0' '\n')
[ -n "$list" ] || pf_die "no package sources found by git in $PF_TOP"
version=$(sed -n '1s/^[^(]*(\([^)]*\)).*/\1/p' debian/changelog)
key=$(printf '%s\n' "$list" | while IFS= read -r f; do [ ! -e "$f" ] || sha256sum "$f"; done |
	sha256sum | cut -c1-16)
out=${outdir:-$PF_CACHE/deb/$version-$key}
deb=$out/pagefill-dkms_${version}_all.deb
if [ -z "${outdir:-}" ] && [ -e "$deb" ]; then
	echo "$deb"
	exit 0
fi

# A copy of the sources in the cache (the root sees it at the same path).
mkdir -p "$PF_CACHE/deb"
work=$(mktemp -d "$PF_CACHE/deb/build.XXXXXX")
trap 'rm -rf "$work"' EXIT
src=$work/pagefill-dkms-$version
mkdir -p "$src"
printf '%s\n' "$list" | while IFS= read -r f; do [ ! -e "$f" ] || printf '%s\0' "$f"; done |
	tar --null -T - -cf - | tar -C "$src" -xf -
pf_log "building pagefill-dkms $version (dpkg-buildpackage, in the debian-host root)"
# shellcheck disable=SC2016
if ! "$PF_TOP/scripts/in-root.sh" bash -c 'cd "$1" && dpkg-buildpackage -b -us -uc' sh "$src" \
	>"$work/build.log" 2>&1; then
	cat "$work/build.log" >&2
	pf_die "dpkg-buildpackage failed"
fi
mkdir -p "$out"
cp "$work/pagefill-dkms_${version}_all.deb" "$deb.tmp"
mv "$deb.tmp" "$deb"
echo "$deb"
