#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# in-tree.sh [--path | --patches DIR]: pagefill as part of a kernel tree, as it
# would go upstream. Puts drivers/net/ethernet/pagefill/, include/pagefill/
# and the kselftest target (tools/testing/selftests/drivers/net/pagefill)
# into a copy of the test kernels' source, hooks them into
# drivers/net/ethernet/Kconfig and Makefile, the selftests' TARGETS and
# MAINTAINERS, builds a kernel with CONFIG_PAGEFILL=y (built in, not a
# module: the fast kernel's configuration plus scripts/kconfig/intree.config)
# and prints its build directory. The source copy and the build live in the
# cache and are updated in place: a change to the driver rebuilds the
# driver and relinks, nothing more.
#
# The build starts as a copy of the fast kernel's, and runs with the source
# copy mounted (in a private mount namespace) at the path the fast kernel
# was built from: Kbuild's command lines name the source tree by its
# absolute path, so with the same path and the same objects only what the
# driver changes is built (the driver, the Rust crates whose cfg changed,
# the link), not a third kernel from scratch.
#
# The kselftest target is installed from that tree as a user would
# (make -C tools/testing/selftests TARGETS=drivers/net/pagefill install).
#
# --path: print the build directory only (scripts/vm-run.sh --kernel intree).
# --patches DIR: write the same change as a `git format-patch` series into
# DIR instead (what a user sends upstream; tests/host/lint.sh checks it with
# checkpatch.pl --strict), and build nothing.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

patches= only_path=
case "${1:-}" in
--patches) [ $# -eq 2 ] && patches=$(mkdir -p "$2" && cd "$2" && pwd) ;;
--path) [ $# -eq 1 ] && only_path=1 ;;
"") ;;
esac
[ -n "$patches$only_path" ] || [ $# -eq 0 ] || pf_die "usage: scripts/in-tree.sh [--path | --patches DIR]"

if [ -n "$only_path$patches" ]; then
	fast=$("$PF_TOP/scripts/build-kernel.sh" --path fast)
else
	fast=$("$PF_TOP/scripts/build-kernel.sh" fast)
fi
pristine=$(readlink -f "$fast/source" 2>/dev/null || true)
if [ ! -d "$pristine" ]; then
	"$PF_TOP/scripts/build-kernel.sh" fast >/dev/null
	pristine=$(readlink -f "$fast/source")
fi
frag=$PF_TOP/scripts/kconfig/intree.config
dir=$PF_CACHE/intree/$(basename "$pristine")
src=$dir/src
# Keyed by the fast build it starts from and the fragment on top.
out=$dir/build-$( { basename "$fast"; cat "$frag" "$0"; } | sha256sum | cut -c1-16)
if [ -n "$only_path" ]; then
	echo "$out"
	exit 0
fi

# sync_tree FROM TO: TO becomes a copy of the repository's FROM, the files
# as git knows them (no build outputs). Only a file whose content differs
# is written (and so made newer than what was built from it): make
# rebuilds what changed only, also from a fresh clone, whose every file is
# new.
sync_tree() {
	local new=$2.new f
	rm -rf "$new"
	mkdir -p "$new" "$2"
	(cd "$PF_TOP/$1" && git ls-files -z | tar --null -T - -cf -) | tar -C "$new" -xf -
	while IFS= read -r -d '' f; do
		cmp -s "$new/$f" "$2/$f" && continue
		mkdir -p "$(dirname "$2/$f")"
		cp "$new/$f" "$2/$f"
	done < <(cd "$new" && find . -type f -print0)
	while IFS= read -r -d '' f; do
		[ -e "$new/$f" ] || rm -f "$2/$f"
	done < <(cd "$2" && find . -type f -print0)
	rm -rf "$new"
}

# hook FILE REGEX LINE: LINE in FILE (once), after the line matching REGEX
# (the file's list of drivers or targets) whose last word (the directory)
# comes just before LINE's in alphabetical order, else before the first.
hook() {
	grep -qxF "$3" "$1" && return
	awk -v re="$2" -v line="$3" '
		BEGIN { n = split(line, w, " "); key = w[n] }
		{ lines[NR] = $0 }
		$0 ~ re {
			if (!first) first = NR
			if ($NF < key && (!after || $NF > best)) { after = NR; best = $NF }
		}
		END {
			for (i = 1; i <= NR; i++) {
				if (!after && i == first) print line
				print lines[i]
				if (i == after) print line
			}
		}' "$1" >"$1.new" && mv "$1.new" "$1"
}

# The MAINTAINERS entry, in its alphabetical place among the entries.
maintainers_entry() {
	cat <<'EOF'
PAGEFILL NETWORK DRIVER
M:	pagefill developers <pagefill@example.invalid>
L:	netdev@vger.kernel.org
S:	Maintained
F:	drivers/net/ethernet/pagefill/
F:	include/pagefill/
EOF
}
# hook_maintainers_selftests FILE: the kselftest target in the entry (the
# series adds it with the tests).
hook_maintainers_selftests() {
	grep -qx 'F:	tools/testing/selftests/drivers/net/pagefill/' "$1" && return
	awk '{ print } $0 == "F:\tinclude/pagefill/" { print "F:\ttools/testing/selftests/drivers/net/pagefill/" }' \
		"$1" >"$1.new" && mv "$1.new" "$1"
}
hook_maintainers() { # hook_maintainers FILE
	grep -qx 'PAGEFILL NETWORK DRIVER' "$1" && return
	maintainers_entry >"$1.entry"
	# An entry's title is a line after a blank one, once the list began
	# (the first title after "Maintainers List" and its underline).
	awk -v title='PAGEFILL NETWORK DRIVER' -v entry="$1.entry" '
		function put() { while ((getline l < entry) > 0) print l; print ""; done = 1 }
		/^Maintainers List/ { list = 1 }
		list && !done && blank && /^[A-Z0-9]/ && $0 > title && $0 !~ /^-/ { put() }
		{ print; blank = ($0 == "") }' "$1" >"$1.new" && mv "$1.new" "$1"
	rm -f "$1.entry"
}

# apply_driver TREE, apply_selftests TREE: the change, in the kernel tree
# TREE: the driver, then its kselftest target.
apply_driver() {
	local t=$1
	sync_tree drivers/net/ethernet/pagefill "$t/drivers/net/ethernet/pagefill"
	sync_tree include/pagefill "$t/include/pagefill"
	hook "$t/drivers/net/ethernet/Kconfig" '^source "drivers/net/ethernet/' \
		'source "drivers/net/ethernet/pagefill/Kconfig"'
	hook "$t/drivers/net/ethernet/Makefile" '^obj-[$][(]CONFIG_[A-Z0-9_]*[)] [+]= [a-z0-9_-]*/$' \
		'obj-$(CONFIG_PAGEFILL) += pagefill/'
	hook_maintainers "$t/MAINTAINERS"
}
apply_selftests() {
	local t=$1
	sync_tree tests/kselftest "$t/tools/testing/selftests/drivers/net/pagefill"
	hook "$t/tools/testing/selftests/Makefile" '^TARGETS [+]= drivers/net/' \
		'TARGETS += drivers/net/pagefill'
	hook_maintainers_selftests "$t/MAINTAINERS"
}
if [ -n "$patches" ]; then
	# A repository holding the files the change touches, as the kernel
	# has them, then the change as two commits: the driver, its tests.
	repo=$(mktemp -d)
	trap 'rm -rf "$repo"' EXIT
	hooked="drivers/net/ethernet/Kconfig drivers/net/ethernet/Makefile MAINTAINERS tools/testing/selftests/Makefile"
	for f in $hooked; do
		mkdir -p "$repo/$(dirname "$f")"
		cp "$pristine/$f" "$repo/$f"
	done
	g() { git -C "$repo" -c user.name="pagefill developers" -c user.email=pagefill@example.invalid "$@"; }
	g init -q
	g add -A
	g commit -qm base
	apply_driver "$repo"
	g add -A
	g commit -q -F - <<'EOF'
net: ethernet: add the pagefill page-fill DMA NIC driver

pagefill is a bus-master DMA NIC for short frames. Instead of a
descriptor per frame, its receive engine packs many frames into whole
buffers the driver has posted in advance in a group/node pointer table
in host memory, and reports each filled buffer on a completion queue.

The driver is written in Rust. It keeps posted buffers from page_pool,
splits filled ones into skbs (headers copied, payload as page frags)
handed to GRO from NAPI, flow-controls the device per stream (xon/xoff)
and validates every completion before it touches a buffer. Transmit
uses one descriptor ring per queue. It is configured with ip, ethtool
(channels, rings, coalescing, private flags) and netlink.

Signed-off-by: pagefill developers <pagefill@example.invalid>
EOF
	apply_selftests "$repo"
	g add -A
	g commit -q -F - <<'EOF'
selftests: drivers: net: add pagefill tests

Tests of the pagefill driver against its device model (a vfio-user
server QEMU presents as a PCI device): probe and unbind, receive with
zero loss from many streams, ping and TCP, ethtool, link changes,
rmmod under traffic, a hostile device, failing allocations and surprise
removal. They skip without the model's host agent.

Signed-off-by: pagefill developers <pagefill@example.invalid>
EOF
	rm -f "$patches"/*.patch
	g format-patch -q -o "$patches" HEAD~2
	exit 0
fi

# One build at a time in the source copy and its build.
mkdir -p "$dir"
exec 9>"$dir/.lock"
flock 9
if [ ! -e "$src/.complete" ]; then
	pf_log "copying the kernel source for the in-tree build into $src"
	rm -rf "$src" "$src.tmp"
	cp -a "$pristine" "$src.tmp"
	touch "$src.tmp/.complete"
	mv "$src.tmp" "$src"
fi
apply_driver "$src"
apply_selftests "$src"

t0=$SECONDS
if [ ! -e "$out/.config" ]; then
	pf_log "starting the in-tree kernel's build in $out from the fast kernel's"
	rm -rf "$out.tmp"
	cp -a "$fast" "$out.tmp"
	rm -f "$out.tmp/.complete"
	"$pristine/scripts/kconfig/merge_config.sh" -m -O "$out.tmp" "$out.tmp/.config" "$frag" >/dev/null
	mv "$out.tmp" "$out"
fi
# shellcheck disable=SC2016
pf_in_root /bin/bash -ec '
	src=$1; out=$2; pristine=$3
	mount --bind "$src" "$pristine"
	make -s -C "$pristine" O="$out" LLVM=1 olddefconfig
	grep -qx CONFIG_PAGEFILL=y "$out/.config" || { echo "CONFIG_PAGEFILL=y did not stick" >&2; exit 1; }
	make -s -C "$pristine" O="$out" LLVM=1 -j"$(nproc)" bzImage
' in-tree "$src" "$out" "$pristine" >&2
# The kselftest target, from the tree.
rm -rf "$out/kselftest"
pf_in_root make -s -C "$src/tools/testing/selftests" TARGETS=drivers/net/pagefill \
	O="$out/kselftest/build" INSTALL_PATH="$out/kselftest/install" install >&2
[ -e "$out/kselftest/install/drivers/net/pagefill/rx.sh" ] ||
	pf_die "the in-tree kselftest target did not install rx.sh"
pf_log "in-tree kernel (CONFIG_PAGEFILL=y) and kselftests up to date in $((SECONDS - t0)) s"
echo "$out"
