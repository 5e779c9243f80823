// SPDX-License-Identifier: GPL-2.0

//! Merging received UDP datagrams (private flag `rx-udp-merge`): the header
//! rules by which a run of one flow's datagrams in a buffer goes up as one
//! skb that the stack can split back into those datagrams
//! (`SKB_GSO_UDP_L4`).
//!
//! A datagram can join a run if it is UDP over IPv4 without options, with
//! DF set and not a fragment, its lengths exactly the frame's, and the
//! device checked its checksum. The datagrams of a run have the same
//! Ethernet header and the same IPv4 and UDP headers but for the
//! identification, lengths and checksums; all carry the same payload size
//! but the last, which may be shorter, and a run holds at most 64. So far
//! the rules of the stack's own UDP GRO, with two differences: the
//! identification may take any values (with DF set it carries nothing; a
//! split numbers the datagrams from the first's), and a datagram sent
//! without a checksum (0) may join (a split gives it one).
//!
//! Pure logic over byte slices (`core` only): host tests build it too.

/// Bytes of the Ethernet, IPv4 (without options) and UDP headers.
pub(crate) const HEADERS: usize = ETH_HLEN + IPV4_HLEN + UDP_HLEN;
/// Offset of the UDP header in a frame.
pub(crate) const UDP_OFFSET: usize = ETH_HLEN + IPV4_HLEN;
/// Most datagrams in one merged skb: the stack's own UDP GRO limit.
pub(crate) const MAX_SEGS: usize = 64;
/// Most payload bytes of a merged datagram: IPv4's total length less the
/// headers.
pub(crate) const MAX_PAYLOAD: usize = IP_MAX_LEN - IPV4_HLEN - UDP_HLEN;

const ETH_HLEN: usize = 14;
const IPV4_HLEN: usize = 20;
const UDP_HLEN: usize = 8;
const IP: usize = ETH_HLEN;
const UDP: usize = UDP_OFFSET;
const ETH_P_IP: u16 = 0x0800;
const IPPROTO_UDP: u8 = 17;
/// Flags and fragment offset of an unfragmented datagram with DF set.
const IP_DF: u16 = 0x4000;
/// Largest IPv4 total length.
const IP_MAX_LEN: usize = 0xffff;

fn be16(b: &[u8], at: usize) -> usize {
    usize::from(u16::from_be_bytes([b[at], b[at + 1]]))
}

/// The payload bytes of `frame` if it is a datagram a run can take (see
/// the module's rules; the checksum is the caller's to know).
pub(crate) fn udp4_payload(frame: &[u8]) -> Option<usize> {
    let len = frame.len();
    // Shorter frames first: the lengths below are subtracted from `len`.
    if len <= HEADERS {
        return None;
    }
    let takes = be16(frame, 12) == usize::from(ETH_P_IP)
        && frame[IP] == 0x45
        && be16(frame, IP + 2) == len - IP
        && be16(frame, IP + 6) == usize::from(IP_DF)
        && frame[IP + 9] == IPPROTO_UDP
        && be16(frame, UDP + 4) == len - UDP;
    takes.then_some(len - HEADERS)
}

/// Whether `b` belongs to `a`'s flow, both datagrams [`udp4_payload`]
/// takes: the same headers but for identification, lengths and checksums.
pub(crate) fn same_flow(a: &[u8], b: &[u8]) -> bool {
    // Ethernet header, IPv4 version and TOS; flags, TTL and protocol;
    // addresses and ports.
    a.len() >= HEADERS
        && b.len() >= HEADERS
        && a[..IP + 2] == b[..IP + 2]
        && a[IP + 6..IP + 10] == b[IP + 6..IP + 10]
        && a[IP + 12..UDP + 4] == b[IP + 12..UDP + 4]
}

/// One's complement sum of big-endian 16-bit words, folded.
fn fold_sum(data: &[u8], mut sum: u32) -> u16 {
    for pair in data.chunks_exact(2) {
        sum += u32::from(u16::from_be_bytes([pair[0], pair[1]]));
    }
    while sum > 0xffff {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    sum as u16
}

/// Rewrites `hdr`, the headers of a run's first datagram, into those of
/// the merged datagram of `payload` bytes: its lengths, its IPv4 header
/// checksum, and in the UDP checksum field the pseudo-header sum, which a
/// `CHECKSUM_PARTIAL` skb carries there (the stack completes the checksum
/// over the payload only if it splits the datagram or sends it on). False
/// if the merged datagram would be too long for IPv4.
pub(crate) fn merge_headers(hdr: &mut [u8; HEADERS], payload: usize) -> bool {
    let udp_len = UDP_HLEN + payload;
    let ip_len = IPV4_HLEN + udp_len;
    if ip_len > IP_MAX_LEN {
        return false;
    }
    hdr[IP + 2..IP + 4].copy_from_slice(&(ip_len as u16).to_be_bytes());
    hdr[IP + 10..IP + 12].copy_from_slice(&[0, 0]);
    let ip_csum = !fold_sum(&hdr[IP..UDP], 0);
    hdr[IP + 10..IP + 12].copy_from_slice(&ip_csum.to_be_bytes());
    hdr[UDP + 4..UDP + 6].copy_from_slice(&(udp_len as u16).to_be_bytes());
    let pseudo = fold_sum(
        &hdr[IP + 12..IP + 20],
        u32::from(IPPROTO_UDP) + udp_len as u32,
    );
    hdr[UDP + 6..UDP + 8].copy_from_slice(&pseudo.to_be_bytes());
    true
}
