// SPDX-License-Identifier: GPL-2.0

//! The driver's merging rules (`drivers/net/ethernet/pagefill/udp_merge.rs`,
//! pure logic, built here as it is in the kernel) against the device
//! model's checksum code: a merged datagram's headers are those of one
//! datagram carrying every payload of the run, its checksum right once the
//! stack completes it.

#[path = "../../../drivers/net/ethernet/pagefill/udp_merge.rs"]
#[allow(dead_code)]
mod udp_merge;

use pagefill_sim::csum::{fold, insert_checksum, l4_checksum_ok, ones_sum};

/// A UDP over IPv4 frame with DF set, identification `id`, ports 4000 to
/// 9000 and `payload`, both checksums right.
fn datagram(id: u16, payload: &[u8]) -> Vec<u8> {
    let udp_len = 8 + payload.len();
    let mut f = vec![2, 0, 0, 0, 0, 1, 2, 0, 0, 0, 0, 2, 0x08, 0x00];
    f.extend_from_slice(&[0x45, 0]);
    f.extend_from_slice(&((20 + udp_len) as u16).to_be_bytes());
    f.extend_from_slice(&id.to_be_bytes());
    f.extend_from_slice(&[0x40, 0, 64, 17, 0, 0, 198, 51, 100, 7, 192, 0, 2, 1]);
    let c = !fold(ones_sum(&f[14..34], 0));
    f[24..26].copy_from_slice(&c.to_be_bytes());
    f.extend_from_slice(&4000u16.to_be_bytes());
    f.extend_from_slice(&9000u16.to_be_bytes());
    f.extend_from_slice(&(udp_len as u16).to_be_bytes());
    let pseudo = fold(ones_sum(&f[26..34], 17 + udp_len as u64));
    f.extend_from_slice(&pseudo.to_be_bytes());
    f.extend_from_slice(payload);
    assert!(insert_checksum(&mut f, 34, 6));
    assert!(l4_checksum_ok(&f));
    f
}

fn payload(i: usize, len: usize) -> Vec<u8> {
    (0..len).map(|j| (i * 31 + j * 7) as u8).collect()
}

#[test]
fn a_merged_run_is_one_datagram_with_every_payload() {
    for (seg, last) in [(22usize, 22usize), (22, 5), (1458, 1458), (1458, 1)] {
        let n = 17;
        let frames: Vec<Vec<u8>> = (0..n)
            .map(|i| {
                datagram(
                    100 + i as u16,
                    &payload(i, if i == n - 1 { last } else { seg }),
                )
            })
            .collect();
        for f in &frames {
            assert_eq!(
                udp_merge::udp4_payload(f),
                Some(f.len() - udp_merge::HEADERS)
            );
            assert!(udp_merge::same_flow(&frames[0], f));
        }
        let total: usize = frames.iter().map(|f| f.len() - udp_merge::HEADERS).sum();
        let mut hdr = [0u8; udp_merge::HEADERS];
        hdr.copy_from_slice(&frames[0][..udp_merge::HEADERS]);
        assert!(udp_merge::merge_headers(&mut hdr, total));
        let mut merged = hdr.to_vec();
        for f in &frames {
            merged.extend_from_slice(&f[udp_merge::HEADERS..]);
        }
        // What the stack does with CHECKSUM_PARTIAL: sum from the UDP
        // header (its field holding the pseudo-header sum), store the
        // complement.
        assert!(insert_checksum(&mut merged, udp_merge::UDP_OFFSET, 6));
        assert!(l4_checksum_ok(&merged), "seg {seg} last {last}");
        assert_eq!(udp_merge::udp4_payload(&merged), Some(total));
    }
}

#[test]
fn only_unfragmented_udp4_with_df_and_exact_lengths_is_taken() {
    let good = datagram(1, b"0123456789");
    assert_eq!(udp_merge::udp4_payload(&good), Some(10));
    let mut padded = good.clone();
    padded.resize(60, 0);
    assert_eq!(udp_merge::udp4_payload(&padded), None, "Ethernet padding");
    let cases: [(usize, u8, &str); 5] = [
        (14, 0x46, "IPv4 options"),
        (20, 0x00, "DF clear"),
        (20, 0x60, "more fragments"),
        (23, 6, "TCP"),
        (12, 0x86, "not IPv4"),
    ];
    for (at, v, what) in cases {
        let mut f = good.clone();
        f[at] = v;
        assert_eq!(udp_merge::udp4_payload(&f), None, "{what}");
    }
    let mut frag = good.clone();
    frag[21] = 1;
    assert_eq!(udp_merge::udp4_payload(&frag), None, "fragment offset");
    let mut udp_len = good.clone();
    udp_len[39] += 1;
    assert_eq!(udp_merge::udp4_payload(&udp_len), None, "UDP length");
    assert_eq!(
        udp_merge::udp4_payload(&good[..udp_merge::HEADERS]),
        None,
        "no payload"
    );
    assert_eq!(udp_merge::udp4_payload(&good[..20]), None, "truncated");
}

#[test]
fn flows_differ_by_any_header_field_but_id_lengths_and_checksums() {
    let a = datagram(1, b"abcdefgh");
    assert!(udp_merge::same_flow(&a, &datagram(2, b"12345678")));
    assert!(udp_merge::same_flow(&a, &datagram(3, b"123")));
    // Destination and source MAC, TOS, TTL, addresses, ports.
    for at in [0, 6, 15, 22, 26, 30, 34, 36] {
        let mut b = datagram(2, b"abcdefgh");
        b[at] ^= 1;
        assert!(!udp_merge::same_flow(&a, &b), "byte {at}");
    }
    assert!(!udp_merge::same_flow(&a, &a[..20]), "truncated");
}

#[test]
fn a_merged_datagram_fits_ipv4() {
    let mut hdr = [0u8; udp_merge::HEADERS];
    hdr.copy_from_slice(&datagram(1, b"x")[..udp_merge::HEADERS]);
    assert!(udp_merge::merge_headers(&mut hdr, udp_merge::MAX_PAYLOAD));
    assert_eq!(&hdr[16..18], &[0xff, 0xff]);
    assert!(!udp_merge::merge_headers(
        &mut hdr,
        udp_merge::MAX_PAYLOAD + 1
    ));
}
