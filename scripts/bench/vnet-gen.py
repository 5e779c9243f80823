#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""vnet-gen.py SOCKET [--nodes A-B,...] [--size N] [--count N] [--rate FPS]
[--until FILE] --dst-mac MAC --dst-ip IP [--src-ip IP] [--dport PORT]

The virtio-net side of the benchmark: the same frames as pagefill-sim gen
(tools/pagefill-sim/src/generator.rs: Ethernet from the node's MAC, IPv4
from src-ip with the node in the last byte, UDP 10000+node -> dport, payload
"PFGN", group 0, node, 0, seq u64 little endian), one Ethernet frame per
datagram into the unix datagram socket of QEMU's `-netdev dgram` backend.

A unix datagram socket blocks the sender while the receiver's queue is full,
and QEMU stops reading it while the guest's receive ring is full, so, like
pagefill's xoff, this generator is held back rather than dropped; --rate
paces it below that. With --until, the streams send on, past --count, until
FILE exists (looked for every 10 ms): a background load for as long as
the guest needs it, as pagefill-sim gen's --weighted-until. Prints "frames N elapsed_us T blocked_us B".
"""
import argparse
import os
import socket
import struct
import time


def ip_csum(h):
    s = sum(struct.unpack("!10H", h))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return (~s) & 0xFFFF


def frame(size, dst_mac, src_ip, dst_ip, dport, node, seq):
    size = max(size, 14 + 20 + 8 + 16)
    eth = dst_mac + bytes([0x02, 0x50, 0x46, 0x4C, 0x00, node]) + b"\x08\x00"
    src = src_ip[:3] + bytes([node])
    ip = bytearray(struct.pack("!BBHHHBBH4s4s", 0x45, 0, size - 14, 0, 0x4000, 64, 17, 0, src, dst_ip))
    ip[10:12] = struct.pack("!H", ip_csum(bytes(ip)))
    udp = struct.pack("!HHHH", 10000 + node, dport, size - 34, 0)
    payload = b"PFGN" + struct.pack("<HBBQ", 0, node, 0, seq)
    return eth + bytes(ip) + udp + payload + bytes(size - 58)


def span(text):
    out = []
    for part in text.split(","):
        a, _, b = part.partition("-")
        out += range(int(a), int(b or a) + 1)
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("socket")
    ap.add_argument("--nodes", default="1")
    ap.add_argument("--size", type=int, default=64)
    ap.add_argument("--count", type=int, default=1, help="frames per stream")
    ap.add_argument("--rate", type=float, default=0, help="frames/s over all streams; 0: unpaced")
    ap.add_argument("--dst-mac", required=True)
    ap.add_argument("--dst-ip", required=True)
    ap.add_argument("--src-ip", default="198.51.100.0")
    ap.add_argument("--dport", type=int, default=9000)
    ap.add_argument("--until", help="send until this file exists")
    a = ap.parse_args()
    dst_mac = bytes.fromhex(a.dst_mac.replace(":", ""))
    src_ip, dst_ip = socket.inet_aton(a.src_ip), socket.inet_aton(a.dst_ip)
    nodes = span(a.nodes)
    me = f"{a.socket}.gen.{os.getpid()}"
    s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    s.bind(me)
    try:
        s.connect(a.socket)
        sent = blocked = 0
        start = checked = time.monotonic()
        seq = 0
        while seq < a.count or a.until:
            if a.until and time.monotonic() - checked >= 0.01:
                checked = time.monotonic()
                if os.path.exists(a.until):
                    break
            for node in nodes:
                f = frame(a.size, dst_mac, src_ip, dst_ip, a.dport, node, seq)
                t = time.monotonic()
                s.send(f)
                blocked += time.monotonic() - t
                sent += 1
                if a.rate > 0:
                    due = start + sent / a.rate
                    delay = due - time.monotonic()
                    if delay > 0:
                        time.sleep(delay)
            seq += 1
        elapsed = time.monotonic() - start
    finally:
        os.unlink(me)
    print(f"frames {sent} elapsed_us {int(elapsed * 1e6)} blocked_us {int(blocked * 1e6)}")


if __name__ == "__main__":
    main()
