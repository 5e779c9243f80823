// SPDX-License-Identifier: GPL-2.0

//! The Internet checksum, as the device computes it: inserted on transmit
//! (`tx_flags::CSUM`), checked on receive (`record_flags::L4_CSUM_OK`).

// The frame layouts the device reads (checksums here, flow hashes in
// `rss.rs`).
pub(crate) const ETH_HLEN: usize = 14;
pub(crate) const ETH_P_IPV4: u16 = 0x0800;
pub(crate) const ETH_P_IPV6: u16 = 0x86dd;
pub(crate) const IPPROTO_TCP: u8 = 6;
pub(crate) const IPPROTO_UDP: u8 = 17;
pub(crate) const IPV6_HLEN: usize = 40;
const TCP_MIN_HLEN: usize = 20;
const UDP_HLEN: usize = 8;

/// One's complement sum of `data` as big-endian 16-bit words (an odd last
/// byte padded with 0), added to `sum`, not folded.
pub fn ones_sum(data: &[u8], mut sum: u64) -> u64 {
    let mut pairs = data.chunks_exact(2);
    for p in &mut pairs {
        sum += u64::from(u16::from_be_bytes([p[0], p[1]]));
    }
    if let [last] = pairs.remainder() {
        sum += u64::from(*last) << 8;
    }
    sum
}

/// `sum` folded to 16 bits (end-around carry).
pub fn fold(mut sum: u64) -> u16 {
    while sum > 0xffff {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    sum as u16
}

/// The one's complement sum, not folded, of a TCP or UDP pseudo-header:
/// `addrs` (source then destination address, as they sit in the IPv4 or
/// IPv6 header), `proto` and the segment's length `len`.
pub fn pseudo_sum(addrs: &[u8], proto: u8, len: usize) -> u64 {
    ones_sum(addrs, u64::from(proto) + len as u64)
}

/// Stores at `start + offset` the complement of the Internet checksum of
/// `frame[start..]` (0xffff in place of 0); false if the field is not
/// inside the frame.
pub fn insert_checksum(frame: &mut [u8], start: usize, offset: usize) -> bool {
    insert_checksum_with(frame, start, offset, 0)
}

/// [`insert_checksum`], with `sum` (not folded) added in: a sender that
/// computes the whole checksum itself, rather than finding the
/// pseudo-header's sum in the field as a driver leaves it for offload,
/// passes the [`pseudo_sum`] here and a zeroed field.
pub fn insert_checksum_with(frame: &mut [u8], start: usize, offset: usize, sum: u64) -> bool {
    let field = start + offset;
    if start >= frame.len() || field + 2 > frame.len() {
        return false;
    }
    let folded = !fold(ones_sum(&frame[start..], sum));
    let value = if folded == 0 { 0xffff } else { folded };
    frame[field..field + 2].copy_from_slice(&value.to_be_bytes());
    true
}

fn be16(b: &[u8], at: usize) -> Option<u16> {
    Some(u16::from_be_bytes([*b.get(at)?, *b.get(at + 1)?]))
}

/// Whether the device may tell the host that `frame`'s layer 4 checksum is
/// right (`record_flags::L4_CSUM_OK`): an Ethernet frame carrying IPv4 (its
/// header checksum right, no fragment, its length within the frame) or
/// IPv6 (no extension header, its length within the frame), carrying TCP or
/// UDP whose checksum over the pseudo-header and the segment is right. A
/// UDP checksum of 0 over IPv4 means none was sent, and counts as right.
pub fn l4_checksum_ok(frame: &[u8]) -> bool {
    let Some(ip) = frame.get(ETH_HLEN..) else {
        return false;
    };
    let (proto, pseudo, segment) = match be16(frame, 12) {
        Some(ETH_P_IPV4) => {
            let Some(&vhl) = ip.first() else {
                return false;
            };
            let ihl = usize::from(vhl & 0xf) * 4;
            if vhl >> 4 != 4 || ihl < 20 || ip.len() < ihl {
                return false;
            }
            let (Some(tot_len), Some(frag)) = (be16(ip, 2), be16(ip, 6)) else {
                return false;
            };
            let tot_len = usize::from(tot_len);
            // A fragment (more to come, or not the first) holds part of a
            // segment: its checksum cannot be checked alone.
            if tot_len < ihl || tot_len > ip.len() || frag & 0x3fff != 0 {
                return false;
            }
            if fold(ones_sum(&ip[..ihl], 0)) != 0xffff {
                return false;
            }
            let proto = ip[9];
            let segment = &ip[ihl..tot_len];
            let pseudo = pseudo_sum(&ip[12..20], proto, segment.len());
            (proto, pseudo, segment)
        }
        Some(ETH_P_IPV6) => {
            let (Some(&v), Some(plen)) = (ip.first(), be16(ip, 4)) else {
                return false;
            };
            let end = IPV6_HLEN + usize::from(plen);
            if v >> 4 != 6 || end > ip.len() {
                return false;
            }
            let proto = ip[6];
            let segment = &ip[IPV6_HLEN..end];
            let pseudo = pseudo_sum(&ip[8..40], proto, segment.len());
            (proto, pseudo, segment)
        }
        _ => return false,
    };
    match proto {
        IPPROTO_UDP => {
            let (Some(len), Some(check)) = (be16(segment, 4), be16(segment, 6)) else {
                return false;
            };
            if segment.len() < UDP_HLEN || usize::from(len) != segment.len() {
                return false;
            }
            if check == 0 {
                // No checksum: allowed over IPv4 only.
                return be16(frame, 12) == Some(ETH_P_IPV4);
            }
        }
        IPPROTO_TCP if segment.len() >= TCP_MIN_HLEN => {}
        _ => return false,
    }
    fold(ones_sum(segment, pseudo)) == 0xffff
}
