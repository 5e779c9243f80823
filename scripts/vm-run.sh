#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# vm-run.sh [options] [--] CMD...
#
# Boot a test kernel under QEMU with pagefill NICs served by device-model
# processes over vfio-user, run CMD (a shell command line) in the guest as
# root with the repository as its working directory, and exit with CMD's
# status. The guest's root filesystem is the toolchain root, read-only over
# virtio-9p; the repository and the cache appear at their host paths (their
# own shares, mounted after the guest's tmpfs, so they may live anywhere,
# /tmp included).
#
# Options:
#   --kernel FLAVOUR   kernel flavour to boot (fast, debug, debian; default
#                      fast). debian is the stock Debian kernel of the
#                      toolchain root, as Debian ships it, with its modules
#                      and an initramfs that mounts the root
#                      (scripts/debian-initramfs.sh); intree is
#                      scripts/in-tree.sh's kernel, pagefill built in
#   --nics N           pagefill NICs to attach (default 1)
#   --mem SIZE         guest RAM (default 2G)
#   --smp N            guest CPUs (default 2)
#   --kvm              use KVM instead of TCG (where KVM can boot a stock kernel;
#                      PAGEFILL_ACCEL=kvm does the same, as tests/run.sh,
#                      demo.sh and bench.sh set it from scripts/accel.sh's
#                      probe). --icount and a TCG plugin keep TCG.
#   --timeout SECS     kill the VM after SECS (default 600)
#   --append ARGS      extra kernel command line
#   --keep DIR         keep the run folder (console log, model logs) in DIR
#   --virtio-net       also attach a virtio-net NIC whose backend is a unix
#                      datagram socket in the run folder, fed on request by
#                      the host agent's vgen verb (scripts/bench/vnet-gen.py)
#   --icount SHIFT     deterministic guest time: -icount shift=SHIFT (single-
#                      threaded TCG)
#   --qemu-arg ARG     one more QEMU argument; @RUN@ in it is the run folder
#   --viommu           a virtual Intel IOMMU in front of the devices, in
#                      strict mode (every unmap invalidates at once)
#                      (the guest sees its out/ folder as /run/pf)
#   --allow-warn REGEX a kernel warning whose report (from "cut here" to
#                      "end trace") has a line matching REGEX does not fail
#                      the run: for a known kernel bug a test provokes, not
#                      the driver (the test says which); the run says how
#                      many it allowed
#
# The console log is printed when the command fails, the guest dies, a model
# reports a driver bug, or the kernel logs a warning, a BUG, an oops, or a
# KASAN/UBSAN/kmemleak/lockdep/DMA-API report: any of those fails the run.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

flavour=fast nics=1 mem=2G smp=2 accel=${PAGEFILL_ACCEL:-tcg} timeout=600 append="" keep="" allow_warn=""
virtio_net="" icount="" qemu_args=() viommu_args=()
while [ $# -gt 0 ]; do
	case "$1" in
	--kernel) flavour=$2; shift 2 ;;
	--nics) nics=$2; shift 2 ;;
	--mem) mem=$2; shift 2 ;;
	--smp) smp=$2; shift 2 ;;
	--kvm) accel=kvm; shift ;;
	--timeout) timeout=$2; shift 2 ;;
	--append) append+=" $2"; shift 2 ;;
	--keep) keep=$2; shift 2 ;;
	--virtio-net) virtio_net=1; shift ;;
	--icount) icount=$2; shift 2 ;;
	--qemu-arg) qemu_args+=("$2"); shift 2 ;;
	--allow-warn) allow_warn=$2; shift 2 ;;
	--viommu)
		# caching-mode: the VFIO side learns of every mapping the guest
		# makes. Before the devices it translates for.
		viommu_args=(-device intel-iommu,caching-mode=on)
		append+=" intel_iommu=on iommu.strict=1"
		shift ;;
	--) shift; break ;;
	-*) pf_die "unknown option $1" ;;
	*) break ;;
	esac
done
[ $# -gt 0 ] || pf_die "usage: vm-run.sh [options] [--] CMD..."

root=$("$PF_TOP/scripts/toolchain-root.sh")
if [ "$flavour" = debian ]; then
	release=$(ls "$root/usr/lib/modules" | head -n 1)
	kernel_args=(-kernel "/usr/lib/modules/$release/vmlinuz" -initrd "$("$PF_TOP/scripts/debian-initramfs.sh")")
	# The kernel's source and build tree as scripts/kdir.sh made it for
	# the module (the tests' ynl specs and library come from there).
	headers=$(cd "$("$PF_TOP/scripts/toolchain-root.sh" debian-host)" && ls -d usr/src/linux-headers-*-amd64 | head -n 1)
	kdir=$(PF_ROOT_KIND=debian-host "$PF_TOP/scripts/in-root.sh" "$PF_TOP/scripts/kdir.sh" "/$headers" | awk '{ print $2 }')
else
	if [ "$flavour" = intree ]; then
		kdir=$("$PF_TOP/scripts/in-tree.sh" --path)
	else
		kdir=$("$PF_TOP/scripts/build-kernel.sh" "$flavour")
	fi
	kernel_args=(-kernel "$kdir/arch/x86/boot/bzImage")
fi
sim=$("$PF_TOP/scripts/build-sim.sh")

mkdir -p "$PF_CACHE/run"
run=$(mktemp -d "$PF_CACHE/run/vm.XXXXXX")
mkdir -p "$run/out"
sims=()
cleanup() {
	local pid
	for pid in "${sims[@]}"; do kill "$pid" 2>/dev/null || true; done
	wait 2>/dev/null || true
	if [ -n "$keep" ]; then
		mkdir -p "$keep"
		cp -a "$run/." "$keep/"
	fi
	rm -rf "$run"
}
trap cleanup EXIT

# The guest command and its environment, read by scripts/guest-init.sh.
{
	printf 'export PF_TOP=%q PF_KDIR=%q PF_FLAVOUR=%q PF_NICS=%q PAGEFILL_CACHE=%q\n' \
		"$PF_TOP" "$kdir" "$flavour" "$nics" "$PF_CACHE"
	# PF_KTAP_TIMES=1 (a developer's profile of a test): each test point
	# is followed by the seconds it took (tests/kselftest/ktap.sh).
	[ -z "${PF_KTAP_TIMES:-}" ] || echo "export PF_KTAP_TIMES=1"
	printf 'cd %q\n' "$PF_TOP"
	printf '%s\n' "$*"
} >"$run/out/cmd"

devices=()
for i in $(seq 0 $((nics - 1))); do
	sock=$run/nic$i.sock
	# NIC i is fabric node i; its control socket is nicI.ctl in the run folder.
	RUST_LOG=${PAGEFILL_SIM_LOG:-info} "$sim" serve --socket "$sock" --fabric "$run/fabric" \
		--node "$i" --control "$run/nic$i.ctl" >"$run/nic$i.log" 2>&1 &
	sims+=($!)
	for _ in $(seq 100); do [ -S "$sock" ] && break; sleep 0.05; done
	[ -S "$sock" ] || { cat "$run/nic$i.log" >&2; pf_die "device model $i did not start"; }
	devices+=(-device "pcie-root-port,id=rp$i,chassis=$((i + 1)),slot=$((i + 1))")
	devices+=(-device "{\"driver\":\"vfio-user-pci\",\"id\":\"nic$i\",\"bus\":\"rp$i\",\"socket\":{\"type\":\"unix\",\"path\":\"$sock\"}}")
done

if [ -n "$virtio_net" ]; then
	# QEMU reads frames from vnet.sock; what the guest sends goes to a peer
	# path nobody binds, and is dropped.
	devices+=(-netdev "dgram,id=vn0,local.type=unix,local.path=$run/vnet.sock,remote.type=unix,remote.path=$run/vnet-peer.sock")
	devices+=(-device "virtio-net-pci,netdev=vn0,mac=52:54:00:12:34:56")
fi
for i in "${!qemu_args[@]}"; do
	qemu_args[i]=${qemu_args[i]//@RUN@/$run}
done

# The host agent: guest tests ask the host to drive the device models (control
# sockets, traffic generator) by leaving request files in the pfout share; see
# tests/kselftest/pf-host.sh (pf_host in ktap.sh). Only these verbs are served (vgen, lat: the
# benchmark's virtio-net generator and round-trip timer, scripts/bench/).
# Each request runs on its own: a request the guest makes while a long
# generator run goes on (a surprise removal under traffic) is not held back.
serve_request() {
	local id=$1 verb nic rest
	read -r verb nic rest <"$run/req.$id" || true
	case "$verb" in
	ctl) "$sim" ctl "$run/nic$nic.ctl" $rest ;;
	# @OUT@ in a generator's options (gen, vgen) is the pfout share (the
	# guest's /run/pf): a file the guest makes there can stop it
	# (--weighted-until, --until).
	# Its give-up does not count the time this VM waited for a CPU (a
	# background VM at nice 19 beside busy ones can get none for a minute).
	gen) "$sim" gen --fabric "$run/fabric" $nic ${rest//@OUT@/$run/out} \
		--receiver-pids "$(receiver_pids)" ;;
	vgen) python3 "$PF_TOP/scripts/bench/vnet-gen.py" "$run/vnet.sock" $nic ${rest//@OUT@/$run/out} ;;
	lat) python3 "$PF_TOP/scripts/bench/lat.py" "$run" $nic $rest ;;
	# The device model of NIC nic dies (a surprise removal), after rest
	# seconds if given; the answer says whether a generator was running.
	kill)
		sleep "${rest:-0}"
		touch "$run/nic$nic.killed" && kill -KILL "${sims[$nic]}" &&
			if pgrep -f -- "gen --fabric $run/fabric" >/dev/null; then
				echo "killed while a generator ran"
			fi ;;
	*) echo "host agent: unknown request: $verb" ;;
	esac >"$run/out/resp.$id.tmp" 2>&1
	echo $? >"$run/out/done.$id.tmp"
	mv "$run/out/resp.$id.tmp" "$run/out/resp.$id"
	mv "$run/out/done.$id.tmp" "$run/out/done.$id"
}
# The host processes of this VM: QEMU (once it has written its pid) and the
# device models.
receiver_pids() {
	local qemu
	qemu=$(cat "$run/qemu.pid" 2>/dev/null) || true
	(IFS=,; echo "${qemu:+$qemu,}${sims[*]}")
}
host_agent() {
	local req id
	set +e
	# The pause between looks is a read that times out on a FIFO nobody
	# writes: a builtin, where a sleep each 0.05 s (a fork and an exec)
	# would cost a twentieth of a core for every VM, all its life.
	mkfifo "$run/agent.pause"
	exec 7<>"$run/agent.pause"
	while :; do
		for req in "$run"/out/req.*; do
			[ -f "$req" ] || continue
			# The guest writes a request at once, its last line
			# ".": until that is there, it is not all there.
			[ "$(tail -n 1 "$req")" = . ] || continue
			id=${req##*/req.}
			mv "$req" "$run/req.$id"
			serve_request "$id" &
		done
		read -r -t 0.05 -u 7 _
	done
}
host_agent &
sims+=($!)

# Instruction counts (icount, the benchmark's plugin) are TCG's.
if [ "$accel" = kvm ] && { [ -n "$icount" ] || [[ " ${qemu_args[*]} " == *" -plugin "* ]]; }; then
	pf_log "TCG, not KVM: this run counts instructions (--icount or a TCG plugin)"
	accel=tcg
fi
if [ "$accel" = kvm ]; then
	accel_args=(-accel kvm -cpu host)
elif [ -n "$icount" ]; then
	# icount counts instructions in one TCG thread; sleep=on lets an idle
	# guest's clock follow the host's.
	accel_args=(-accel "tcg,thread=single" -cpu max -icount "shift=$icount,sleep=on")
else
	accel_args=(-accel "tcg,thread=multi" -cpu max)
fi

cmdline="console=ttyS0 root=pfroot rootfstype=9p ro"
cmdline+=" rootflags=trans=virtio,version=9p2000.L,cache=loose,msize=524288"
cmdline+=" init=$PF_TOP/scripts/guest-init.sh panic=-1 oops=panic"
# The IO-APIC timer check at boot counts timer ticks against a delay loop:
# under TCG on a busy host (another VM beside, a 6 GiB guest) the ticks
# come late and the kernel panics ("IO-APIC + timer doesn't work!").
# Virtual machines skip it (virtme-ng does too).
cmdline+=" no_timer_check"
# Unknown name=value parameters reach init as its environment: where to
# mount the repository and the cache shares (their host paths), and the
# kernel build (its source link leads tests to ynl and the selftests).
cmdline+=" pf_top=$PF_TOP pf_cache=$PF_CACHE pf_kdir=$kdir"
# The upstream selftests' install directory (scripts/build-selftests.sh),
# when the caller built them.
[ -z "${PAGEFILL_SELFTESTS:-}" ] || cmdline+=" pf_selftests=$PAGEFILL_SELFTESTS"
cmdline+=" $append"

pf_log "booting the $flavour kernel with $nics pagefill NIC(s) under ${accel^^}"
t0=$SECONDS
# QEMU's CPU time is what the run charges the machine (tests/run.sh sums it).
pf_children_cs cpu0 "$run/times"
set +e
timeout --kill-after=10 "$timeout" "$PF_TOP/scripts/in-root.sh" qemu-system-x86_64 \
	-machine q35,memory-backend=mem "${accel_args[@]}" -smp "$smp" -m "$mem" \
	-object "memory-backend-memfd,id=mem,size=$mem,share=on" \
	"${kernel_args[@]}" -append "$cmdline" \
	-fsdev local,id=pfroot,path=/,security_model=none,readonly=on \
	-device virtio-9p-pci,fsdev=pfroot,mount_tag=pfroot \
	-fsdev "local,id=pfout,path=$run/out,security_model=none" \
	-device virtio-9p-pci,fsdev=pfout,mount_tag=pfout \
	-fsdev "local,id=pftop,path=$PF_TOP,security_model=none,readonly=on" \
	-device virtio-9p-pci,fsdev=pftop,mount_tag=pftop \
	-fsdev "local,id=pfcache,path=$PF_CACHE,security_model=none,readonly=on" \
	-device virtio-9p-pci,fsdev=pfcache,mount_tag=pfcache \
	"${viommu_args[@]}" "${devices[@]}" "${qemu_args[@]}" \
	-nographic -serial stdio -monitor none -no-reboot -pidfile "$run/qemu.pid" \
	>"$run/console.log" 2>&1 </dev/null
qemu_rc=$?
set -e
pf_children_cs cpu "$run/times"
cpu=$(((cpu - cpu0 + 50) / 100))
t_cmd=$(sed -n 1p "$run/out/uptime" 2>/dev/null) t_end=$(sed -n 2p "$run/out/uptime" 2>/dev/null)
if [ -n "$t_cmd" ] && [ -n "$t_end" ]; then
	pf_log "VM ran for $((SECONDS - t0)) s, QEMU used $cpu CPU-s: boot ${t_cmd%.*} s, command $(( ${t_end%.*} - ${t_cmd%.*} )) s (guest clock)"
else
	pf_log "VM ran for $((SECONDS - t0)) s, QEMU used $cpu CPU-s"
fi
[ -f "$run/out/output" ] && cat "$run/out/output"

# The host agent runs until killed; the models exit when QEMU disconnects,
# and a non-zero status of theirs is a driver bug.
kill "${sims[-1]}" 2>/dev/null
wait "${sims[-1]}" 2>/dev/null || true
unset 'sims[-1]'
sim_failed=
for i in "${!sims[@]}"; do
	if ! wait "${sims[$i]}" && [ ! -e "$run/nic$i.killed" ]; then
		sim_failed=1
		pf_log "device model $i failed:"
		tail -n 20 "$run/nic$i.log" >&2
	fi
done
sims=()

rc=
[ -f "$run/out/rc" ] && rc=$(cat "$run/out/rc")
# The log is checked from the moment init runs: everything the tests do
# happens after it. (The debug kernel under TCG sometimes reports KASAN in
# handle_edge_irq during early boot, before any module exists; see
# Documentation/.../testbed.rst.)
# A warning report allowed by --allow-warn is taken out first, whole.
problems=$(sed -n '/^Run .* as init process/,$p' "$run/console.log" | tr -d '\r' |
	awk -v allow="$allow_warn" '
		allow == "" { print; next }
		/-+\[ cut here \]-+/ { inwarn = 1; n = 0; hit = 0 }
		inwarn { block[++n] = $0; if ($0 ~ allow) hit = 1
			if ($0 ~ /---\[ end trace/) {
				inwarn = 0
				if (hit) { allowed++; next }
				for (i = 1; i <= n; i++) print block[i]
			}
			next }
		{ print }
		END { if (inwarn) for (i = 1; i <= n; i++) print block[i]
			if (allowed) printf "(%d kernel warning(s) allowed by --allow-warn)\n", allowed > "/dev/stderr" }' |
	grep -nE "$(sed -e '/^#/d' -e '/^$/d' "$PF_TOP/scripts/kernel-log-problems.txt" | paste -sd'|')" || true)

fail=
if [ -z "$rc" ]; then
	fail="the guest died before the command finished (QEMU exit $qemu_rc)"
elif [ -n "$problems" ]; then
	fail="the kernel log has problems:
$problems"
elif [ -n "$sim_failed" ]; then
	fail="a device model reported a driver bug"
elif [ "$rc" != 0 ]; then
	fail="the command exited with status $rc"
fi
if [ -n "$fail" ]; then
	echo "----- console log ($run/console.log) -----" >&2
	cat "$run/console.log" >&2
	echo "----- end of console log -----" >&2
	pf_log "FAILED: $fail"
	[ -n "$rc" ] && [ "$rc" != 0 ] && exit "$rc"
	exit 1
fi
exit 0
