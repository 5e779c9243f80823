#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# PID 1 of a test VM (see scripts/vm-run.sh). The root filesystem is the
# read-only toolchain root over 9p; writable places are tmpfs. Runs the
# command that vm-run.sh left in the pfout share, records its output and exit
# status there, and powers the VM off.
PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
# The C locale, which the C library has built in: any other is files to
# load at every start of a program that calls setlocale() (sed, awk, ip,
# ethtool, sleep), a fifth of a second each on the debug kernel under TCG,
# more than the program's own start. Python coerces C to UTF-8 itself.
export PATH HOME=/tmp TERM=dumb
unset LANG LANGUAGE LC_ALL

mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev 2>/dev/null
mkdir -p /dev/pts /dev/shm
mount -t devpts devpts /dev/pts
mount -t tmpfs tmpfs /dev/shm
# Not /root: the cache (kernel and module builds) may live under it.
for d in /tmp /run /var/tmp /var/log /var/lib /mnt; do
	mount -t tmpfs tmpfs "$d"
done
mount -t debugfs debugfs /sys/kernel/debug 2>/dev/null
mount -t bpf bpf /sys/fs/bpf 2>/dev/null
mount -t configfs configfs /sys/kernel/config 2>/dev/null
# kmemleak (the debug kernel): no periodic scan, whose first pass, a minute
# after boot, costs a debug VM test about a tenth of its guest instructions;
# every test scans once at its end instead (pf_kmemleak_check in
# tests/kselftest/ktap.sh).
[ ! -w /sys/kernel/debug/kmemleak ] || echo scan=off >/sys/kernel/debug/kmemleak
mkdir -p /run/pf /run/netns
mount -t 9p -o trans=virtio,version=9p2000.L,msize=524288 pfout /run/pf
# The repository and the cache at their host paths, over whatever tmpfs now
# hides them (vm-run.sh passes the paths on the kernel command line).
for share in "pftop:$pf_top" "pfcache:$pf_cache"; do
	mkdir -p "${share#*:}" 2>/dev/null
	mount -t 9p -o trans=virtio,version=9p2000.L,msize=524288,cache=loose,ro \
		"${share%%:*}" "${share#*:}"
done
hostname pagefill-vm
ip link set lo up

# The guest's uptime when the command starts and ends: vm-run.sh reports
# how long the boot and the command took.
cut -d' ' -f1 /proc/uptime >/run/pf/uptime
( . /run/pf/cmd ) >/run/pf/output 2>&1
echo $? >/run/pf/rc
cut -d' ' -f1 /proc/uptime >>/run/pf/uptime
# The command's output also goes to the console log, in order with the kernel's.
cat /run/pf/output >/dev/console
sync
umount /run/pf
echo b >/proc/sysrq-trigger
# PID 1 must not exit: that would panic the kernel instead of stopping it.
busybox reboot -f
while :; do sleep 1; done
