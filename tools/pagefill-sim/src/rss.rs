// SPDX-License-Identifier: GPL-2.0

//! The flow hash the device writes into a record with `ctrl::RX_HASH` set
//! (`record_flags::HASH`) and steers by with `ctrl::STEER`: the Toeplitz
//! hash of the frame's addresses and, for TCP and UDP, its ports, the input
//! real NICs hash for receive-side scaling.

use pagefill_abi::{self as abi, record_flags, rss_fields};

use crate::csum::{ETH_HLEN, ETH_P_IPV4, ETH_P_IPV6, IPPROTO_TCP, IPPROTO_UDP, IPV6_HLEN};

/// What the device reads of an IPv4 or IPv6 frame to hash and filter it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Flow {
    pub v6: bool,
    /// The layer 4 protocol where the device can read its header (an IPv4
    /// frame that is not a fragment, an IPv6 frame with no extension
    /// header), else 0.
    pub proto: u8,
    /// Source and destination addresses as on the wire, IPv4 in the first
    /// four bytes.
    pub src: [u8; 16],
    pub dst: [u8; 16],
    /// Source and destination port, for TCP and UDP whose ports lie inside
    /// the packet's own length.
    pub ports: Option<(u16, u16)>,
}

impl Flow {
    /// The flow of `frame`, or `None` for a frame that is neither IPv4 nor
    /// IPv6 (or too short for its fixed header). The layer 4 header is
    /// looked for only inside the length the IP header gives, not in
    /// Ethernet padding. The frame is untrusted: any bytes at all give a
    /// flow or none, never a panic.
    pub fn parse(frame: &[u8]) -> Option<Self> {
        let ip = frame.get(ETH_HLEN..)?;
        let ethertype = u16::from_be_bytes([*frame.get(12)?, *frame.get(13)?]);
        let be16 = |at: usize| Some(u16::from_be_bytes([*ip.get(at)?, *ip.get(at + 1)?]));
        let mut flow = Flow {
            v6: false,
            proto: 0,
            src: [0; 16],
            dst: [0; 16],
            ports: None,
        };
        let l4 = match ethertype {
            ETH_P_IPV4 => {
                let header = ip.get(..20)?;
                let ihl = usize::from(header[0] & 0xf) * 4;
                if header[0] >> 4 != 4 || ihl < 20 {
                    return None;
                }
                if be16(6)? & 0x3fff == 0 {
                    flow.proto = header[9];
                }
                flow.src[..4].copy_from_slice(&header[12..16]);
                flow.dst[..4].copy_from_slice(&header[16..20]);
                let end = usize::from(be16(2)?).min(ip.len());
                ip.get(ihl..end)
            }
            ETH_P_IPV6 => {
                let header = ip.get(..IPV6_HLEN)?;
                if header[0] >> 4 != 6 {
                    return None;
                }
                flow.v6 = true;
                flow.proto = header[6];
                flow.src.copy_from_slice(&header[8..24]);
                flow.dst.copy_from_slice(&header[24..40]);
                let end = (IPV6_HLEN + usize::from(be16(4)?)).min(ip.len());
                ip.get(IPV6_HLEN..end)
            }
            _ => return None,
        };
        if matches!(flow.proto, IPPROTO_TCP | IPPROTO_UDP) {
            flow.ports = l4.and_then(|l4| l4.get(..4)).map(|p| {
                (
                    u16::from_be_bytes([p[0], p[1]]),
                    u16::from_be_bytes([p[2], p[3]]),
                )
            });
        }
        Some(flow)
    }

    /// The hash under `key` and its [`record_flags`] (`HASH` and its type
    /// bits): the addresses and, where `fields` ([`rss_fields`]) says so
    /// for the protocol and the ports are there, the ports.
    pub fn hash(&self, key: &[u8], fields: u32) -> (u32, u16) {
        let alen = if self.v6 { 16 } else { 4 };
        let mut input = [0u8; 36];
        input[..alen].copy_from_slice(&self.src[..alen]);
        input[alen..2 * alen].copy_from_slice(&self.dst[..alen]);
        let mut n = 2 * alen;
        let mut flags = record_flags::HASH;
        if self.v6 {
            flags |= record_flags::HASH_IPV6;
        }
        let (field, kind) = match (self.proto, self.v6) {
            (IPPROTO_TCP, false) => (rss_fields::TCP4_PORTS, record_flags::HASH_TCP),
            (IPPROTO_UDP, false) => (rss_fields::UDP4_PORTS, record_flags::HASH_UDP),
            (IPPROTO_TCP, true) => (rss_fields::TCP6_PORTS, record_flags::HASH_TCP),
            (IPPROTO_UDP, true) => (rss_fields::UDP6_PORTS, record_flags::HASH_UDP),
            _ => (0, 0),
        };
        if let Some((sport, dport)) = self.ports.filter(|_| fields & field != 0) {
            input[n..n + 2].copy_from_slice(&sport.to_be_bytes());
            input[n + 2..n + 4].copy_from_slice(&dport.to_be_bytes());
            n += 4;
            flags |= kind;
        }
        (abi::toeplitz(key, &input[..n]), flags)
    }
}

/// The hash and [`record_flags`] of `frame` under the key and fields a
/// reset sets, or `None` for a frame with no flow ([`Flow::parse`]).
pub fn flow_hash(frame: &[u8]) -> Option<(u32, u16)> {
    Some(Flow::parse(frame)?.hash(&abi::RSS_KEY, rss_fields::ALL))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An Ethernet frame carrying IPv4 from `src` to `dst`, protocol
    /// `proto`, with the ports given and fragment field `frag`.
    fn ipv4(src: [u8; 4], dst: [u8; 4], proto: u8, sport: u16, dport: u16, frag: u16) -> Vec<u8> {
        let mut f = vec![0u8; ETH_HLEN + 20 + 8];
        f[12..14].copy_from_slice(&ETH_P_IPV4.to_be_bytes());
        let ip = &mut f[ETH_HLEN..];
        ip[0] = 0x45;
        ip[2..4].copy_from_slice(&28u16.to_be_bytes());
        ip[6..8].copy_from_slice(&frag.to_be_bytes());
        ip[9] = proto;
        ip[12..16].copy_from_slice(&src);
        ip[16..20].copy_from_slice(&dst);
        ip[20..22].copy_from_slice(&sport.to_be_bytes());
        ip[22..24].copy_from_slice(&dport.to_be_bytes());
        f
    }

    fn ipv6(src: [u8; 16], dst: [u8; 16], next: u8, sport: u16, dport: u16) -> Vec<u8> {
        let mut f = vec![0u8; ETH_HLEN + 40 + 8];
        f[12..14].copy_from_slice(&ETH_P_IPV6.to_be_bytes());
        let ip = &mut f[ETH_HLEN..];
        ip[0] = 0x60;
        ip[4..6].copy_from_slice(&8u16.to_be_bytes());
        ip[6] = next;
        ip[8..24].copy_from_slice(&src);
        ip[24..40].copy_from_slice(&dst);
        ip[40..42].copy_from_slice(&sport.to_be_bytes());
        ip[42..44].copy_from_slice(&dport.to_be_bytes());
        f
    }

    // The verification suite of Microsoft's RSS specification ("Verifying
    // the RSS Hash Calculation"): destination 161.142.100.80:1766, source
    // 66.9.149.187:2794, and so on; the hash input is source, then
    // destination.
    /// Source, its port, destination, its port, the hash of the addresses,
    /// the hash with the ports.
    type Vector = ([u8; 4], u16, [u8; 4], u16, u32, u32);
    const V4: [Vector; 5] = [
        (
            [66, 9, 149, 187],
            2794,
            [161, 142, 100, 80],
            1766,
            0x323e_8fc2,
            0x51cc_c178,
        ),
        (
            [199, 92, 111, 2],
            14230,
            [65, 69, 140, 83],
            4739,
            0xd718_262a,
            0xc626_b0ea,
        ),
        (
            [24, 19, 198, 95],
            12898,
            [12, 22, 207, 184],
            38024,
            0xd2d0_a5de,
            0x5c2b_394a,
        ),
        (
            [38, 27, 205, 30],
            48228,
            [209, 142, 163, 6],
            2217,
            0x8298_9176,
            0xafc7_327f,
        ),
        (
            [153, 39, 163, 191],
            44251,
            [202, 188, 127, 2],
            1303,
            0x5d18_09c5,
            0x10e8_28a2,
        ),
    ];

    #[test]
    fn ipv4_tcp_and_address_hashes_match_the_specification() {
        for (src, sport, dst, dport, l3, l4) in V4 {
            let f = ipv4(src, dst, IPPROTO_TCP, sport, dport, 0);
            assert_eq!(
                flow_hash(&f),
                Some((l4, record_flags::HASH | record_flags::HASH_TCP))
            );
            // Not a transport the device knows: the addresses only.
            let f = ipv4(src, dst, 47, sport, dport, 0);
            assert_eq!(flow_hash(&f), Some((l3, record_flags::HASH)));
            // A fragment: its ports (if any) cannot be read, addresses only.
            let f = ipv4(src, dst, IPPROTO_TCP, sport, dport, 0x2000);
            assert_eq!(flow_hash(&f), Some((l3, record_flags::HASH)));
        }
    }

    #[test]
    fn ipv6_tcp_hash_matches_the_specification() {
        let a = |s: &str| -> [u8; 16] { s.parse::<std::net::Ipv6Addr>().unwrap().octets() };
        let f = ipv6(
            a("3ffe:2501:200:1fff::7"),
            a("3ffe:2501:200:3::1"),
            IPPROTO_TCP,
            2794,
            1766,
        );
        let flags = record_flags::HASH | record_flags::HASH_IPV6 | record_flags::HASH_TCP;
        assert_eq!(flow_hash(&f), Some((0x4020_7d3d, flags)));
        let f = ipv6(
            a("3ffe:2501:200:1fff::7"),
            a("3ffe:2501:200:3::1"),
            0,
            2794,
            1766,
        );
        let flags = record_flags::HASH | record_flags::HASH_IPV6;
        assert_eq!(flow_hash(&f), Some((0x2cc1_8cd5, flags)));
    }

    #[test]
    fn udp_hashes_ports_as_tcp_does() {
        let (src, sport, dst, dport, _, l4) = V4[0];
        let f = ipv4(src, dst, IPPROTO_UDP, sport, dport, 0);
        assert_eq!(
            flow_hash(&f),
            Some((l4, record_flags::HASH | record_flags::HASH_UDP))
        );
    }

    #[test]
    fn other_frames_get_no_hash() {
        let mut f = ipv4([1, 2, 3, 4], [5, 6, 7, 8], IPPROTO_UDP, 1, 2, 0);
        f[12..14].copy_from_slice(&0x0806u16.to_be_bytes());
        assert_eq!(flow_hash(&f), None);
        assert_eq!(flow_hash(&f[..20]), None);
        let f = ipv4([1, 2, 3, 4], [5, 6, 7, 8], IPPROTO_UDP, 1, 2, 0);
        assert_eq!(flow_hash(&f[..ETH_HLEN + 16]), None);
        // Ports cut off: the addresses only.
        assert_eq!(
            flow_hash(&f[..ETH_HLEN + 22]).map(|(_, fl)| fl),
            Some(record_flags::HASH)
        );
    }

    /// Every prefix of a frame, and frames whose lengths say more or less
    /// than they hold: a hash or none, never a panic; ports only inside
    /// the IP packet's own length.
    #[test]
    fn short_and_lying_frames_are_hashed_safely() {
        let f = ipv4([1, 2, 3, 4], [5, 6, 7, 8], IPPROTO_UDP, 1, 2, 0);
        for n in 0..=f.len() {
            let _ = flow_hash(&f[..n]);
        }
        let a = [0x20, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1];
        let f6 = ipv6(a, a, IPPROTO_TCP, 1, 2);
        for n in 0..=f6.len() {
            let _ = flow_hash(&f6[..n]);
        }
        // IPv4 total length of the header alone, the "ports" in padding.
        let mut padded = f.clone();
        padded[ETH_HLEN + 2..ETH_HLEN + 4].copy_from_slice(&20u16.to_be_bytes());
        assert_eq!(
            flow_hash(&padded).map(|(_, fl)| fl),
            Some(record_flags::HASH)
        );
        // IPv6 payload length 2: no room for the ports.
        let mut short6 = f6.clone();
        short6[ETH_HLEN + 4..ETH_HLEN + 6].copy_from_slice(&2u16.to_be_bytes());
        let v6 = record_flags::HASH | record_flags::HASH_IPV6;
        assert_eq!(flow_hash(&short6).map(|(_, fl)| fl), Some(v6));
        // A length beyond the frame is cut to the frame.
        let mut long = f.clone();
        long[ETH_HLEN + 2..ETH_HLEN + 4].copy_from_slice(&9000u16.to_be_bytes());
        assert_eq!(flow_hash(&long), flow_hash(&f));
    }
}
