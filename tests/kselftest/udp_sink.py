#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""udp_sink.py PORT EXPECTED TIMEOUT [IDLE]: count generator frames on a UDP socket.

Each payload carries "PFGN", group (u16), node (u8), 0, seq (u64), little
endian (see tools/pagefill-sim/src/generator.rs). Prints one line:
received N streams S out_of_order O missing M duplicates D
and exits 0 if every stream arrived complete and in order. With IDLE, for
traffic that may lose frames: it stops once IDLE seconds pass without a
frame, and exits 0 if no frame came twice (the caller counts the rest).
With PF_SINK_GRO=1 in the environment the socket takes merged datagrams
whole (UDP_GRO) and splits them by the segment size the kernel reports;
the line then ends with "merged M" (datagrams that came merged). With
PF_SINK_HOLD=S it reads nothing for S seconds after it is ready, so the
frames sent meanwhile wait in the socket, their skbs all allocated at once.
PF_SINK_BUSY_POLL=USECS waits in
epoll with busy polling (EPIOCSPARAMS: USECS, budget 64, prefer busy
polling, so the NAPI instance's IRQ suspension applies) and the socket's
own (SO_BUSY_POLL, SO_PREFER_BUSY_POLL).
PF_SINK_RCVBUF=BYTES sets the socket's receive buffer (default 8 MiB; the
kernel caps it at net.core.rmem_max): a sink slower than the traffic can
then hold a whole run and read it after. PF_SINK_QUIET=S ends the wait
for the frames expected once S seconds pass without one (they are missing:
exit 1), rather than at TIMEOUT. PF_SINK_SENT=FILE starts TIMEOUT, IDLE
and PF_SINK_QUIET when FILE exists, which the test makes once the
generator is done; until then the sink waits as long as the generator
runs. EXPECTED "-" (with PF_SINK_SENT) reads the count from FILE, which
then holds the number of frames the generator sent: for a generator that
sends until told to stop. At the end of a wait, what the socket holds is
still read.
"""
import fcntl
import os
import select
import socket
import struct
import sys
import time

SOL_UDP = 17
UDP_GRO = 104

port, timeout = int(sys.argv[1]), float(sys.argv[3])
expected = None if sys.argv[2] == "-" else int(sys.argv[2])
idle = float(sys.argv[4]) if len(sys.argv) > 4 else None
quiet = float(os.environ["PF_SINK_QUIET"]) if "PF_SINK_QUIET" in os.environ else None
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, int(os.environ.get("PF_SINK_RCVBUF", 8 << 20)))
gro = os.environ.get("PF_SINK_GRO") == "1"
busy = int(os.environ.get("PF_SINK_BUSY_POLL", "0"))
ep = None
if busy:
    SO_BUSY_POLL, SO_PREFER_BUSY_POLL, SO_BUSY_POLL_BUDGET = 46, 69, 70
    s.setsockopt(socket.SOL_SOCKET, SO_BUSY_POLL, busy)
    s.setsockopt(socket.SOL_SOCKET, SO_PREFER_BUSY_POLL, 1)
    s.setsockopt(socket.SOL_SOCKET, SO_BUSY_POLL_BUDGET, 64)
    ep = select.epoll()
    # EPIOCSPARAMS: struct epoll_params { u32 busy_poll_usecs;
    # u16 busy_poll_budget; u8 prefer_busy_poll; u8 pad; }. Before the
    # socket joins: epoll takes its NAPI ID as it does.
    fcntl.ioctl(ep.fileno(), 0x40088a01, struct.pack("=IHBB", busy, 64, 1, 0))
    ep.register(s.fileno(), select.EPOLLIN)
if gro:
    s.setsockopt(SOL_UDP, UDP_GRO, 1)
s.bind(("0.0.0.0", port))
open("/tmp/udp_sink.ready", "w").close()
time.sleep(float(os.environ.get("PF_SINK_HOLD", "0")))
nxt = {}
received = out_of_order = duplicates = merged = 0


def segments():
    """The datagrams of one receive: one, or a merged one split up."""
    global merged
    data, anc, _, _ = s.recvmsg(65536, socket.CMSG_SPACE(4))
    size = len(data)
    for level, kind, value in anc:
        if level == SOL_UDP and kind == UDP_GRO:
            size = struct.unpack("=i", value[:4])[0]
    if size < len(data):
        merged += 1
    return [data[i:i + size] for i in range(0, len(data), size)] if size > 0 else [data]


# With PF_SINK_SENT, the waits start once the generator is done: a guest held
# off the CPU for a minute (a background VM on a busy host) gets its frames
# that much later, however long its own clock says it waited.
sent = os.environ.get("PF_SINK_SENT")
deadline = None if sent else time.monotonic() + timeout
sent_checked = 0.0
while expected is None or received < expected:
    now = time.monotonic()
    if deadline is None and now - sent_checked >= 0.5:
        sent_checked = now
        if os.path.exists(sent):
            deadline = now + timeout
            if expected is None:
                with open(sent) as f:
                    expected = int(f.read())
                # Every frame may be in already: no wait for one more.
                continue
    if deadline is None:
        left = 0.5
    else:
        # Past the deadline, what is queued already is still read: the
        # sink itself may have waited for the CPU, not for the frames.
        left = max(deadline - now, 0.01)
        if idle is not None:
            left = min(left, idle)
        if quiet is not None:
            left = min(left, quiet)
    s.settimeout(left)
    try:
        if ep is not None and not ep.poll(left):
            raise socket.timeout
        datagrams = segments()
    except socket.timeout:
        if deadline is None:
            continue
        break
    for data in datagrams:
        if len(data) < 16 or data[:4] != b"PFGN":
            continue
        group, node, seq = struct.unpack_from("<HB", data, 4) + struct.unpack_from("<Q", data, 8)
        want = nxt.get((group, node), 0)
        if seq < want:
            duplicates += 1
        elif seq > want:
            out_of_order += 1
        nxt[(group, node)] = max(want, seq + 1)
        received += 1
missing = sum(nxt.values()) - (received - duplicates)
SO_INCOMING_NAPI_ID = 56
napi = (f" napi_id {s.getsockopt(socket.SOL_SOCKET, SO_INCOMING_NAPI_ID)}" if busy else "")
print(f"received {received} streams {len(nxt)} out_of_order {out_of_order} "
      f"missing {missing} duplicates {duplicates}" + (f" merged {merged}" if gro else "") + napi)
if idle is not None:
    ok = duplicates == 0
else:
    ok = received == expected and out_of_order == 0 and missing == 0 and duplicates == 0
sys.exit(0 if ok else 1)
