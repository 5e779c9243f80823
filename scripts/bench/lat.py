#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""lat.py RUN NIC [--count N] [--gap-ms MS] [--eot 0|1] --dst-mac MAC --dst-ip IP

Round trips of lone short frames through a NIC of the benchmark VM, timed on
the host: each 64-byte UDP frame goes to the guest's pf-echo (port 9001),
which sends it back, and the next leaves GAP ms after the answer, so every
frame arrives alone. NIC pf: the frame enters the pagefill device model as
fabric node 30 (a FRAME message to node-0.sock; --eot 1 marks it end of
transmission, so the device writes the buffer at once, --eot 0 leaves it to
the coalescing timer), and the answer comes back as a fabric broadcast.
NIC vn: the frame goes into QEMU's virtio-net datagram socket, and the answer
comes out to the peer path QEMU sends to. RUN is vm-run.sh's run folder.

Prints "rtt_us min A p10 B p50 C p90 D p99 E p99.9 F max G n N lost L
hist H", whole microseconds over the N frames that came back (L did not
within 1 s): pX is the nearest-rank percentile, the ceil(X/100 * N)-th
smallest round trip, so at N = 1000 p99 has 10 round trips above it and
p99.9 one. H is every round trip in logarithmic bins, 100 a decade (bin i
holds the round trips from 10^(i/100) up to 10^((i+1)/100) us, 2.3% wide),
written "FIRST:C,C,...", the counts of the bins from FIRST on, so that
report.py can pool the runs of a case and draw their distribution.

While it waits (the gap, the answer), it reads and drops everything else
that comes to its fabric socket: with a generator on the fabric (the
latency runs under load), every broadcast reaches node 30 too, and a full
socket would hold the generator back.
"""
import math
import argparse
import os
import socket
import struct
import time

NODE = 30
FABRIC_MAGIC, FRAME, EOT = 0x5046, 1, 1


def ip_csum(h):
    s = sum(struct.unpack("!10H", h))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return (~s) & 0xFFFF


def udp_frame(dst_mac, src_ip, dst_ip, seq):
    size = 64
    eth = dst_mac + bytes([0x02, 0x50, 0x46, 0x4C, 0x00, NODE]) + b"\x08\x00"
    ip = bytearray(struct.pack("!BBHHHBBH4s4s", 0x45, 0, size - 14, 0, 0x4000, 64, 17, 0, src_ip, dst_ip))
    ip[10:12] = struct.pack("!H", ip_csum(bytes(ip)))
    udp = struct.pack("!HHHH", 10000 + NODE, 9001, size - 34, 0)
    payload = b"PFLT" + struct.pack("<I", 0) + struct.pack("<Q", seq)
    return eth + bytes(ip) + udp + payload + bytes(size - 58)


def seq_of(frame):
    """The sequence number of an echoed frame, or None."""
    if len(frame) >= 58 and frame[12:14] == b"\x08\x00" and frame[42:46] == b"PFLT":
        return struct.unpack_from("<Q", frame, 50)[0]
    return None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("run")
    ap.add_argument("nic", choices=["pf", "vn"])
    ap.add_argument("--count", type=int, default=1000)
    ap.add_argument("--gap-ms", type=float, default=2)
    ap.add_argument("--eot", type=int, default=1)
    ap.add_argument("--dst-mac", required=True)
    ap.add_argument("--dst-ip", required=True)
    a = ap.parse_args()
    dst_mac = bytes.fromhex(a.dst_mac.replace(":", ""))
    dst_ip = socket.inet_aton(a.dst_ip)
    s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    if a.nic == "pf":
        me = os.path.join(a.run, "fabric", f"node-{NODE}.sock")
        peer = os.path.join(a.run, "fabric", "node-0.sock")
        src_ip = socket.inet_aton("198.51.100.%d" % NODE)
    else:
        me = os.path.join(a.run, "vnet-peer.sock")
        peer = os.path.join(a.run, "vnet.sock")
        src_ip = socket.inet_aton("198.18.0.%d" % NODE)
    s.bind(me)

    def drain(until):
        """Reads and drops what comes in until the time until."""
        while True:
            left = until - time.monotonic()
            if left <= 0:
                return
            s.settimeout(left)
            try:
                s.recv(65536)
            except socket.timeout:
                return

    try:
        # The device model finds a new fabric node when it next reads the
        # folder (every 200 ms).
        drain(time.monotonic() + 0.5)
        s.settimeout(1.0)
        rtts, lost = [], 0
        for seq in range(a.count):
            f = udp_frame(dst_mac, src_ip, dst_ip, seq)
            if a.nic == "pf":
                msg = struct.pack("<HBBHBBHHI", FABRIC_MAGIC, FRAME, EOT if a.eot else 0, 0, NODE, 0,
                                  len(f), 0, seq) + f
            else:
                msg = f
            t0 = time.monotonic()
            # A full peer socket (the generator's frames ahead, under load)
            # holds the frame back: that wait is part of its round trip.
            s.settimeout(None)
            s.sendto(msg, peer)
            got = False
            s.settimeout(1.0)
            while not got:
                try:
                    d = s.recv(65536)
                except socket.timeout:
                    break
                if b"PFLT" not in d:
                    # The generator's frames, under load.
                    if time.monotonic() - t0 > 1.0:
                        break
                    continue
                if a.nic == "pf":
                    # Fabric messages: take the frames out of the datagram.
                    off = 0
                    while off + 16 <= len(d):
                        magic, ty, _, _, _, _, ln = struct.unpack_from("<HBBHBBH", d, off)
                        if magic != FABRIC_MAGIC:
                            break
                        if ty == FRAME:
                            got = got or seq_of(d[off + 16:off + 16 + ln]) == seq
                            off += 16 + ln
                        else:
                            off += 16
                else:
                    got = seq_of(d) == seq
            if got:
                rtts.append((time.monotonic() - t0) * 1e6)
            else:
                lost += 1
            drain(time.monotonic() + a.gap_ms / 1000)
    finally:
        os.unlink(me)
    rtts.sort()

    def q(permille):
        """Nearest rank: the ceil(permille / 1000 * n)-th smallest (the smallest for 0)."""
        if not rtts:
            return -1
        return int(rtts[max(0, -(-permille * len(rtts) // 1000) - 1)])

    bins = {}
    for r in rtts:
        i = math.floor(100 * math.log10(max(r, 1)))
        bins[i] = bins.get(i, 0) + 1
    hist = "-"
    if bins:
        first = min(bins)
        hist = f"{first}:" + ",".join(str(bins.get(i, 0)) for i in range(first, max(bins) + 1))
    print(f"rtt_us min {q(0)} p10 {q(100)} p50 {q(500)} p90 {q(900)} p99 {q(990)} "
          f"p99.9 {q(999)} max {q(1000)} n {len(rtts)} lost {lost} hist {hist}")


if __name__ == "__main__":
    main()
