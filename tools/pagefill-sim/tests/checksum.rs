// SPDX-License-Identifier: GPL-2.0

//! The device's transmit checksum insertion (`tx_flags::CSUM`).

use pagefill_sim::tx::insert_checksum;

/// The IPv4 header of RFC 1071's companion example (Wikipedia's "IPv4 header
/// checksum"): its checksum is 0xb861.
#[test]
fn ipv4_header_checksum() {
    let mut h = [
        0x45, 0x00, 0x00, 0x73, 0x00, 0x00, 0x40, 0x00, 0x40, 0x11, 0x00, 0x00, 0xc0, 0xa8, 0x00,
        0x01, 0xc0, 0xa8, 0x00, 0xc7,
    ];
    assert!(insert_checksum(&mut h, 0, 10));
    assert_eq!(&h[10..12], &[0xb8, 0x61]);
}

/// Whatever the data and the seed in the field, the result verifies: the
/// one's complement sum over the region, field included, is 0xffff.
#[test]
fn result_verifies_for_odd_lengths_and_seeds() {
    for len in [14usize, 15, 60, 61, 1514] {
        let mut f: Vec<u8> = (0..len).map(|i| (i * 7 + 3) as u8).collect();
        let (start, offset) = (4, 6);
        f[start + offset] = 0x12;
        f[start + offset + 1] = 0x34;
        let seed = u16::from_be_bytes([0x12, 0x34]);
        assert!(insert_checksum(&mut f, start, offset));
        let mut sum: u32 = 0;
        for pair in f[start..].chunks(2) {
            sum += u32::from(u16::from_be_bytes([pair[0], *pair.get(1).unwrap_or(&0)]));
        }
        // The seed was summed in and then replaced: add it back.
        sum += u32::from(seed);
        while sum > 0xffff {
            sum = (sum & 0xffff) + (sum >> 16);
        }
        assert_eq!(sum, 0xffff, "len {len}");
    }
}

#[test]
fn field_outside_the_frame_is_refused() {
    let mut f = [0u8; 20];
    assert!(!insert_checksum(&mut f, 10, 9));
    assert!(!insert_checksum(&mut f, 20, 0));
    assert!(insert_checksum(&mut f, 10, 8));
}

/// The device's receive check (`record_flags::L4_CSUM_OK`).
mod receive {
    use pagefill_sim::csum::{fold, l4_checksum_ok, ones_sum};

    /// An Ethernet frame carrying `proto` (6 or 17) over IPv4 or IPv6 with
    /// `payload`, every checksum right.
    fn frame(v6: bool, proto: u8, payload: &[u8]) -> Vec<u8> {
        let l4_hlen = if proto == 6 { 20 } else { 8 };
        let seg_len = l4_hlen + payload.len();
        let mut f = vec![0u8; 12];
        let mut seg = vec![0u8; l4_hlen];
        seg[0..2].copy_from_slice(&1234u16.to_be_bytes());
        seg[2..4].copy_from_slice(&5678u16.to_be_bytes());
        if proto == 17 {
            seg[4..6].copy_from_slice(&(seg_len as u16).to_be_bytes());
        } else {
            seg[12] = 5 << 4;
        }
        seg.extend_from_slice(payload);
        let (ip, addrs) = if v6 {
            f.extend_from_slice(&0x86ddu16.to_be_bytes());
            let mut ip = vec![0x60, 0, 0, 0];
            ip.extend_from_slice(&(seg_len as u16).to_be_bytes());
            ip.extend_from_slice(&[proto, 64]);
            ip.extend((0..32).map(|i| i as u8 + 1));
            (ip, 8..40)
        } else {
            f.extend_from_slice(&0x0800u16.to_be_bytes());
            let mut ip = vec![0x45, 0];
            ip.extend_from_slice(&((20 + seg_len) as u16).to_be_bytes());
            ip.extend_from_slice(&[0, 7, 0x40, 0, 64, proto, 0, 0, 192, 0, 2, 2, 192, 0, 2, 1]);
            let c = !fold(ones_sum(&ip, 0));
            ip[10..12].copy_from_slice(&c.to_be_bytes());
            (ip, 12..20)
        };
        let pseudo = ones_sum(&ip[addrs], u64::from(proto) + seg_len as u64);
        let at = if proto == 6 { 16 } else { 6 };
        let c = !fold(ones_sum(&seg, pseudo));
        seg[at..at + 2].copy_from_slice(&c.to_be_bytes());
        f.extend_from_slice(&ip);
        f.extend_from_slice(&seg);
        f
    }

    #[test]
    fn right_checksums_are_reported_right() {
        for v6 in [false, true] {
            for proto in [6, 17] {
                for len in [0usize, 1, 22, 1458] {
                    let p: Vec<u8> = (0..len).map(|i| (i * 13 + 5) as u8).collect();
                    assert!(
                        l4_checksum_ok(&frame(v6, proto, &p)),
                        "v6 {v6} {proto} {len}"
                    );
                }
            }
        }
    }

    #[test]
    fn any_flipped_bit_is_caught() {
        for v6 in [false, true] {
            for proto in [6, 17] {
                let good = frame(v6, proto, b"sixteen bytes!!!");
                // Every bit from the IP header on (the Ethernet header is
                // not covered by any checksum), but IPv6's traffic class,
                // flow label and hop limit (no checksum covers them either).
                for byte in 14..good.len() {
                    if v6 && (byte < 18 || byte == 21) {
                        continue;
                    }
                    for bit in 0..8 {
                        let mut f = good.clone();
                        f[byte] ^= 1 << bit;
                        assert!(!l4_checksum_ok(&f), "v6 {v6} {proto} {byte}.{bit}");
                    }
                }
            }
        }
    }

    #[test]
    fn udp_without_checksum_is_right_over_ipv4_only() {
        for v6 in [false, true] {
            let mut f = frame(v6, 17, b"abc");
            let at = f.len() - 3 - 2;
            f[at..at + 2].copy_from_slice(&[0, 0]);
            assert_eq!(l4_checksum_ok(&f), !v6);
        }
    }

    #[test]
    fn padding_is_allowed_truncation_and_fragments_are_not() {
        let mut f = frame(false, 17, b"ab");
        f.resize(60, 0);
        assert!(l4_checksum_ok(&f), "Ethernet padding");
        let f = frame(false, 17, b"abcdef");
        assert!(!l4_checksum_ok(&f[..f.len() - 1]), "truncated");
        for frag in [0x2000u16, 0x0001] {
            let mut f = frame(false, 17, b"abcdef");
            f[20..22].copy_from_slice(&frag.to_be_bytes());
            // Keep the header checksum right: only the fragment is wrong.
            f[24..26].copy_from_slice(&[0, 0]);
            let c = !fold(ones_sum(&f[14..34], 0));
            f[24..26].copy_from_slice(&c.to_be_bytes());
            assert!(!l4_checksum_ok(&f), "fragment {frag:#x}");
        }
        assert!(!l4_checksum_ok(&[0u8; 14]), "no network header");
        let mut v5 = frame(true, 17, b"ab");
        v5[14] ^= 0x30;
        assert!(!l4_checksum_ok(&v5), "IP version 5");
        let mut arp = frame(false, 17, b"ab");
        arp[12..14].copy_from_slice(&0x0806u16.to_be_bytes());
        assert!(!l4_checksum_ok(&arp), "not IP");
    }
}
