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
