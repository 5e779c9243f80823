#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""fail_nth.py OP DEV|BDF [STEP]: fails each allocation of one operation in turn.

For N = 1, 1 + STEP, 1 + 2 STEP, ... (STEP 1 by default: every one) the
N-th fault-injectable allocation (slab or page) made by this thread during
OP fails (/proc/thread-self/fail-nth, the kernel's systematic fault
injection), until OP completes making fewer than N. OP is one of:

  bind BDF      bind the pagefill driver to PCI device BDF (probe)
  up DEV        bring interface DEV up (ndo_open: pools, buffers, vectors)
  rings DEV     ethtool -G rx 256 on DEV while it is up (a restart), then
                back to 1024 (the ioctl, so that nothing else runs between)

After each attempt the state must be one a user can live with: a failed
bind leaves the device unbound, a failed open leaves the interface down, a
failed ring change leaves the interface up with its old rings, or down (a
restart that could not start again) and able to come up. Whatever
succeeded is undone before the next attempt. Prints one line per failing
errno and a summary; exits 1 if a state check failed.
"""

import ctypes
import errno
import fcntl
import os
import socket
import struct
import sys

SIOCGIFFLAGS = 0x8913
SIOCSIFFLAGS = 0x8914
SIOCETHTOOL = 0x8946
IFF_UP = 0x1
ETHTOOL_GRINGPARAM = 0x10
ETHTOOL_SRINGPARAM = 0x11
DRIVER = "/sys/bus/pci/drivers/pagefill"


# Opened once: opening it while a fault is armed would use the fault up.
# Reading and writing it allocate nothing.
FAIL_NTH = os.open("/proc/thread-self/fail-nth", os.O_RDWR)


def set_fail_nth(n):
    os.pwrite(FAIL_NTH, str(n).encode(), 0)


def fault_injected():
    """Whether the armed fault was injected; disarms it if it was not."""
    left = int(os.pread(FAIL_NTH, 16, 0))
    if left:
        set_fail_nth(0)
    return left == 0


def ifflags(sock, dev, flags=None):
    req = struct.pack("16sH22x", dev.encode(), flags or 0)
    if flags is None:
        return struct.unpack("16sH22x", fcntl.ioctl(sock, SIOCGIFFLAGS, req))[1]
    fcntl.ioctl(sock, SIOCSIFFLAGS, req)
    return flags


def ringparam(sock, dev, rx=None):
    """The interface's rx ring size; with RX, sets it (other sizes kept)."""
    buf = ctypes.create_string_buffer(36)
    ctypes.memmove(buf, struct.pack("9I", ETHTOOL_GRINGPARAM, *[0] * 8), 36)
    req = struct.pack("16sP16x", dev.encode(), ctypes.addressof(buf))
    fcntl.ioctl(sock, SIOCETHTOOL, req)
    vals = list(struct.unpack("9I", buf.raw[:36]))
    if rx is None:
        return vals[5]
    vals[0] = ETHTOOL_SRINGPARAM
    vals[5] = rx
    ctypes.memmove(buf, struct.pack("9I", *vals), 36)
    fcntl.ioctl(sock, SIOCETHTOOL, req)
    return rx


def main():
    op, target = sys.argv[1], sys.argv[2]
    step = int(sys.argv[3]) if len(sys.argv) > 3 else 1
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    errors = {}
    bad = []
    n = 1 - step
    attempts = 0
    while True:
        n += step
        attempts += 1
        err = 0
        if op == "bind":
            # Opened before arming: only the write's allocations count. One
            # unbuffered write: a buffered file would write again on close.
            fd = os.open(f"{DRIVER}/bind", os.O_WRONLY)
            set_fail_nth(n)
            try:
                os.write(fd, target.encode())
            except OSError as e:
                err = e.errno
            injected = fault_injected()
            os.close(fd)
            bound = os.path.exists(f"{DRIVER}/{target}")
            if err and bound:
                bad.append(f"{n}: bind failed ({errno.errorcode.get(err)}) but the device is bound")
            if bound:
                with open(f"{DRIVER}/unbind", "w", encoding="ascii") as f:
                    f.write(target)
        elif op == "up":
            set_fail_nth(n)
            try:
                ifflags(sock, target, ifflags(sock, target) | IFF_UP)
            except OSError as e:
                err = e.errno
            injected = fault_injected()
            up = ifflags(sock, target) & IFF_UP
            if err and up:
                bad.append(f"{n}: open failed ({errno.errorcode.get(err)}) but the interface is up")
            if up:
                ifflags(sock, target, ifflags(sock, target) & ~IFF_UP)
        elif op == "rings":
            set_fail_nth(n)
            try:
                ringparam(sock, target, 256)
            except OSError as e:
                err = e.errno
            injected = fault_injected()
            rx = ringparam(sock, target)
            up = ifflags(sock, target) & IFF_UP
            if err and rx != 1024:
                bad.append(f"{n}: ring change failed ({errno.errorcode.get(err)}) but rx is {rx}")
            if not err and rx != 256:
                bad.append(f"{n}: ring change succeeded but rx is {rx}")
            if not up:
                # The restart could not start again: it comes up by hand.
                try:
                    ifflags(sock, target, ifflags(sock, target) | IFF_UP)
                except OSError as e:
                    bad.append(f"{n}: down after the failed restart, and up fails: {e}")
            ringparam(sock, target, 1024)
        else:
            sys.exit(f"unknown operation {op}")
        if err:
            errors[err] = errors.get(err, 0) + 1
        if not injected:
            break
    for e, count in sorted(errors.items()):
        print(f"# {op}: {count} attempts failed with {errno.errorcode.get(e, e)}")
    print(f"# {op}: allocations 1 to {n - step} failed in turn (step {step}, "
          f"{attempts - 1} attempts); with {n} armed, it made fewer and "
          f"{'failed: ' + errno.errorcode.get(err, str(err)) if err else 'succeeded'}")
    for b in bad:
        print(f"# {op}: {b}")
    sys.exit(1 if bad or err else 0)


if __name__ == "__main__":
    main()
