#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""toeplitz.py FLOW...: for each FLOW, SRC,DST[,SPORT,DPORT], the flow hash
pagefill's device writes for a frame from SRC to DST (IPv4 or IPv6
addresses), over the ports too if given: the Toeplitz hash under the key of
Microsoft's RSS specification (programming-interface.rst, "Flow hash"),
printed as 0x%08x, one line a flow (one Python start for them all: on a
debug kernel under TCG a start costs seconds). Checked first
against the specification's own example, so a wrong implementation here
cannot agree with a wrong device by accident."""
import ipaddress
import sys

KEY = bytes.fromhex(
    "6d5a56da255b0ec24167253d43a38fb0d0ca2bcbae7b30b477cb2da38030f20c"
    "6a42b73bbeac01fa")


def toeplitz(data, key=KEY):
    """The Toeplitz hash of data under key."""
    k = int.from_bytes(key, "big")
    kbits = len(key) * 8
    h = 0
    for i in range(len(data) * 8):
        if data[i // 8] & (0x80 >> (i % 8)):
            h ^= (k >> (kbits - 32 - i)) & 0xffffffff
    return h


def flow(src, dst, sport=None, dport=None):
    """The hash input: addresses, then ports, as on the wire."""
    data = ipaddress.ip_address(src).packed + ipaddress.ip_address(dst).packed
    if sport is not None:
        data += int(sport).to_bytes(2, "big") + int(dport).to_bytes(2, "big")
    return data


# "Verifying the RSS Hash Calculation": 66.9.149.187:2794 to
# 161.142.100.80:1766.
assert toeplitz(flow("66.9.149.187", "161.142.100.80", 2794, 1766)) == 0x51ccc178
assert toeplitz(flow("66.9.149.187", "161.142.100.80")) == 0x323e8fc2

if __name__ == "__main__":
    for arg in sys.argv[1:]:
        print(f"0x{toeplitz(flow(*arg.split(','))):08x}")
