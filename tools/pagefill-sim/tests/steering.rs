// SPDX-License-Identifier: GPL-2.0

//! Steering (`ctrl::STEER`): each frame goes to the queue pair a flow
//! filter or the indirection table names, through that queue pair's
//! column of the node table, and a stream starved on one queue pair holds
//! its later frames, whichever queue pair they go to, so none overtakes.

mod common;

use common::Host;
use pagefill_abi::{self as abi, fabric_type, filter, reg, rx_flags, rx_kind};

const GROUP: u16 = 5;
const NODE: u8 = 7;

/// A NIC with `queues` queue pairs, enabled with steering.
fn steered(queues: usize) -> Host {
    let mut h = Host::new(queues, 6, 12);
    h.write(reg::CTRL, abi::ctrl::RESET);
    h.configure();
    h.write(reg::CTRL, abi::ctrl::ENABLE | abi::ctrl::STEER);
    assert_eq!(h.read(reg::CTRL), abi::ctrl::ENABLE | abi::ctrl::STEER);
    h
}

/// An IPv4 UDP frame of 64 bytes from 198.51.100.NODE to 192.0.2.1:`dport`,
/// its sequence number in the payload.
fn udp(dport: u16, seq: u32) -> Vec<u8> {
    let mut f = vec![0u8; 64];
    f[12..14].copy_from_slice(&0x0800u16.to_be_bytes());
    f[14] = 0x45;
    f[16..18].copy_from_slice(&50u16.to_be_bytes());
    f[14 + 9] = 17;
    f[26..30].copy_from_slice(&[198, 51, 100, NODE]);
    f[30..34].copy_from_slice(&[192, 0, 2, 1]);
    f[34..36].copy_from_slice(&10007u16.to_be_bytes());
    f[36..38].copy_from_slice(&dport.to_be_bytes());
    f[42..46].copy_from_slice(&seq.to_le_bytes());
    f
}

/// A frame that is not IP, its sequence number at byte 4.
fn raw(seq: u32) -> Vec<u8> {
    Host::frame_bytes(GROUP, NODE, seq, 60)
}

fn send(h: &mut Host, seq: u32, frame: &[u8], eot: bool) {
    let now = h.now;
    h.nic.rx_frame(GROUP, NODE, seq, eot, frame, now);
}

/// Filter `f`: UDP over IPv4 to `dport`, to queue pair `q`.
fn udp_filter(h: &mut Host, f: usize, dport: u16, q: u32) {
    h.write(reg::filter(f, filter::PORTS), u32::from(dport) << 16);
    h.write(reg::filter(f, filter::PORTS_MASK), 0xffff << 16);
    h.write(
        reg::filter(f, filter::CTRL),
        filter::VALID | filter::FLOW_UDP4 << filter::FLOW_SHIFT | q << filter::QUEUE_SHIFT,
    );
}

/// Filter `f`: every frame of stream (GROUP, NODE), to `q` or dropped.
fn stream_filter(h: &mut Host, f: usize, ctrl: u32) {
    h.write(
        reg::filter(f, filter::STREAM),
        u32::from(GROUP) | u32::from(NODE) << 16,
    );
    h.write(reg::filter(f, filter::STREAM_MASK), 0x1f_ffff);
    h.write(reg::filter(f, filter::CTRL), filter::VALID | ctrl);
}

#[test]
fn filters_steer_frames_through_their_queue_pairs_column() {
    let mut h = steered(4);
    udp_filter(&mut h, 0, 9000, 2);
    stream_filter(&mut h, 1, 3 << filter::QUEUE_SHIFT);
    let b2 = h.post_lane(GROUP, 2, NODE);
    let b3 = h.post_lane(GROUP, 3, NODE);
    h.publish(GROUP);
    send(&mut h, 0, &udp(9000, 0), false);
    send(&mut h, 1, &raw(1), false);
    send(&mut h, 2, &udp(9000, 2), true);
    send(&mut h, 3, &udp(9001, 3), true);
    assert_eq!(
        (h.lane_entry(GROUP, 2, NODE), h.lane_entry(GROUP, 3, NODE)),
        (0, 0)
    );
    assert!(h.completions(0).is_empty() && h.completions(1).is_empty());
    let c2 = h.completions(2);
    assert_eq!(c2.len(), 2, "{c2:?}");
    assert_eq!(
        (c2[0].kind, c2[0].addr, c2[0].queue),
        (rx_kind::CLAIM, b2, 2)
    );
    assert_eq!(
        (c2[1].kind, c2[1].flags, c2[1].frames),
        (rx_kind::DATA, rx_flags::EOT, 2)
    );
    let seqs: Vec<u32> = h.records(b2, c2[1].bytes).iter().map(|r| r.1).collect();
    assert_eq!(seqs, [0, 2]);
    let c3 = h.completions(3);
    assert_eq!(
        (c3[0].kind, c3[0].addr, c3[0].queue),
        (rx_kind::CLAIM, b3, 3)
    );
    assert_eq!((c3[1].kind, c3[1].frames), (rx_kind::DATA, 2));
    let seqs: Vec<u32> = h.records(b3, c3[1].bytes).iter().map(|r| r.1).collect();
    assert_eq!(
        seqs,
        [1, 3],
        "UDP to another port falls through to the stream's filter"
    );
    // The first column is queue pair 0's, untouched.
    assert_eq!(h.entry(GROUP, NODE), 0);
}

#[test]
fn a_drop_filter_drops_and_counts() {
    let mut h = steered(2);
    stream_filter(&mut h, 4, filter::DROP);
    let b = h.post_lane(GROUP, 0, NODE);
    let b1 = h.post_lane(GROUP, 1, NODE);
    h.publish(GROUP);
    for seq in 0..3 {
        send(&mut h, seq, &raw(seq), seq == 2);
    }
    assert_eq!(h.read(reg::DROP_FILTERED), 3);
    assert!(h.all_completions().is_empty());
    assert_eq!(
        (h.lane_entry(GROUP, 0, NODE), h.lane_entry(GROUP, 1, NODE)),
        (b, b1)
    );
    // Cleared, the filter drops nothing more.
    h.write(reg::filter(4, filter::CTRL), 0);
    send(&mut h, 3, &raw(3), true);
    assert_eq!(h.read(reg::DROP_FILTERED), 3);
    assert_eq!(h.all_completions().len(), 2);
}

#[test]
fn a_stream_starved_on_one_queue_pair_holds_frames_for_every_other() {
    let mut h = steered(2);
    udp_filter(&mut h, 0, 9000, 1);
    stream_filter(&mut h, 1, 0);
    let b0 = h.post_lane(GROUP, 0, NODE);
    h.publish(GROUP);
    send(&mut h, 0, &raw(0), false);
    // Queue pair 1's entry is empty: the stream starves there.
    send(&mut h, 1, &udp(9000, 1), false);
    send(&mut h, 2, &raw(2), false);
    let c1 = h.completions(1);
    assert_eq!(
        (c1.len(), c1[0].kind, c1[0].queue),
        (1, rx_kind::STARVED, 1)
    );
    let sent = h.take_sent();
    assert!(sent.iter().any(|m| m.1 == fabric_type::XOFF && m.4 == NODE));
    assert_eq!(h.nic.rx.held_frames(), 2, "frame 2 waits behind frame 1");
    let b1 = h.post_lane(GROUP, 1, NODE);
    h.write(reg::XON, abi::stream_id(GROUP, NODE));
    assert!(h
        .take_sent()
        .iter()
        .any(|m| m.1 == fabric_type::XON && m.4 == NODE));
    assert_eq!(h.nic.rx.held_frames(), 0);
    send(&mut h, 3, &udp(9000, 3), true);
    send(&mut h, 4, &raw(4), true);
    let c1 = h.completions(1);
    assert_eq!((c1[0].kind, c1[0].addr), (rx_kind::CLAIM, b1));
    let seqs: Vec<u32> = h.records(b1, c1[1].bytes).iter().map(|r| r.1).collect();
    assert_eq!(seqs, [1, 3]);
    let c0 = h.completions(0);
    let data = c0.iter().find(|c| c.kind == rx_kind::DATA).unwrap();
    let seqs: Vec<u32> = h.records(b0, data.bytes).iter().map(|r| r.1).collect();
    assert_eq!(seqs, [0, 2, 4]);
}

#[test]
fn leaving_a_group_closes_every_lane_then_posts_flushed_on_every_queue() {
    let mut h = steered(2);
    udp_filter(&mut h, 0, 9000, 1);
    stream_filter(&mut h, 1, 0);
    let b0 = h.post_lane(GROUP, 0, NODE);
    let b1 = h.post_lane(GROUP, 1, NODE);
    h.publish(GROUP);
    send(&mut h, 0, &raw(0), false);
    send(&mut h, 1, &udp(9000, 1), false);
    h.mem.write_u64(common::MASTER + u64::from(GROUP) * 8, 0);
    h.write(reg::GROUP_FLUSH, u32::from(GROUP));
    for (q, buf) in [(0, b0), (1, b1)] {
        let c = h.completions(q);
        let kinds: Vec<u8> = c.iter().map(|c| c.kind).collect();
        assert_eq!(
            kinds,
            [rx_kind::CLAIM, rx_kind::DATA, rx_kind::FLUSHED],
            "queue {q}"
        );
        assert_eq!(
            (c[1].addr, c[1].flags, c[1].frames),
            (buf, rx_flags::FLUSH, 1)
        );
    }
}

#[test]
fn the_indirection_table_spreads_flows_and_follows_its_entries() {
    let mut h = steered(4);
    // Every entry names queue pair 3, then every one 1.
    for (queue, seq) in [(3u32, 0u32), (1, 1)] {
        for i in (0..abi::RSS_INDIR_SIZE).step_by(4) {
            h.write(reg::RSS_INDIR + i, queue * 0x0101_0101);
        }
        let b = h.post_lane(GROUP, queue as usize, NODE);
        h.publish(GROUP);
        send(&mut h, seq, &udp(9000, seq), true);
        let c = h.completions(queue as usize);
        assert_eq!((c[0].addr, c[1].kind, c[1].frames), (b, rx_kind::DATA, 1));
    }
    // A reset loads entry i with i modulo MAX_QUEUES and the default key.
    h.write(reg::CTRL, abi::ctrl::RESET);
    assert_eq!(h.read(reg::RSS_INDIR), 0x0302_0100);
    assert_eq!(
        h.read(reg::RSS_KEY),
        u32::from_le_bytes([0x6d, 0x5a, 0x56, 0xda])
    );
    assert_eq!(h.read(reg::CTRL), 0);
}
