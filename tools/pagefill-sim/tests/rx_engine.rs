// SPDX-License-Identifier: GPL-2.0

//! The receive engine's rules, driven through the register interface
//! against fake host memory (see `common/mod.rs`).

mod common;

use std::time::Duration;

use common::{Host, ME};
use pagefill_abi::{self as abi, fabric_type, reg, rx_flags, rx_kind};

#[test]
fn first_frame_claims_the_posted_buffer_and_zeroes_the_entry() {
    let mut h = Host::new(1, 6, 12);
    h.join(0, &[3]);
    let buf = h.entry(0, 3);
    h.write(reg::queue(0, reg::Q_ARM), abi::arm::RX);
    h.frame(0, 3, 0, 64, false);
    assert_eq!(h.entry(0, 3), 0, "the take hands the buffer to the device");
    let c = h.completions(0);
    assert_eq!(c.len(), 1);
    assert_eq!(
        (c[0].kind, c[0].addr, c[0].group, c[0].node),
        (rx_kind::CLAIM, buf, 0, 3)
    );
    assert_eq!(c[0].frames, 0);
    assert_eq!(h.take_irqs(), [1], "armed receive vector fired once");
}

#[test]
fn frames_are_packed_behind_aligned_record_headers_until_eot() {
    let mut h = Host::new(1, 6, 12);
    h.join(7, &[2]);
    let buf = h.entry(7, 2);
    let lens = [64usize, 61, 14, 1500, 65];
    for (i, &len) in lens.iter().enumerate() {
        h.frame(7, 2, i as u32, len, i == lens.len() - 1);
    }
    let c = h.completions(0);
    assert_eq!(c.len(), 2, "CLAIM then DATA: {c:?}");
    let d = c[1];
    assert_eq!(
        (d.kind, d.flags, d.addr),
        (rx_kind::DATA, rx_flags::EOT, buf)
    );
    assert_eq!(d.frames as usize, lens.len());
    let want: u32 = lens.iter().map(|&l| abi::record::size(l) as u32).sum();
    assert_eq!(d.bytes, want);
    let recs = h.records(buf, d.bytes);
    for (i, (len, seq, data)) in recs.iter().enumerate() {
        assert_eq!(usize::from(*len), lens[i]);
        assert_eq!(*seq, i as u32);
        assert_eq!(data, &Host::frame_bytes(7, 2, i as u32, lens[i]));
    }
    assert_eq!(h.read(reg::RX_FRAMES), lens.len() as u32);
}

/// `ctrl::RX_HASH` puts each IP frame's flow hash in its record in place of
/// the sequence number, from the next frame on, and says so per record;
/// other frames keep their sequence number; a reset clears the bit.
#[test]
fn records_carry_the_flow_hash_while_rx_hash_is_set() {
    let mut h = Host::new(1, 6, 12);
    h.join(7, &[2]);
    let buf = h.entry(7, 2);
    // IPv4 UDP from 198.51.100.2:10002 to 192.0.2.1:9000.
    let mut udp = vec![0u8; 64];
    udp[12..14].copy_from_slice(&0x0800u16.to_be_bytes());
    udp[14] = 0x45;
    udp[14 + 9] = 17;
    udp[16..18].copy_from_slice(&50u16.to_be_bytes());
    udp[26..30].copy_from_slice(&[198, 51, 100, 2]);
    udp[30..34].copy_from_slice(&[192, 0, 2, 1]);
    udp[34..36].copy_from_slice(&10002u16.to_be_bytes());
    udp[36..38].copy_from_slice(&9000u16.to_be_bytes());
    let input = [198, 51, 100, 2, 192, 0, 2, 1, 0x27, 0x12, 0x23, 0x28];
    let want = abi::toeplitz(&abi::RSS_KEY, &input);
    let now = h.now;
    h.nic.rx_frame(7, 2, 0, false, &udp, now);
    h.write(reg::CTRL, abi::ctrl::ENABLE | abi::ctrl::RX_HASH);
    assert_eq!(h.read(reg::CTRL), abi::ctrl::ENABLE | abi::ctrl::RX_HASH);
    h.nic.rx_frame(7, 2, 1, false, &udp, now);
    h.frame(7, 2, 2, 64, true);
    let d = h.completions(0)[1];
    assert_eq!((d.kind, d.frames), (rx_kind::DATA, 3));
    let words: Vec<u32> = h.records(buf, d.bytes).iter().map(|r| r.1).collect();
    assert_eq!(words, [0, want, 2]);
    let flags = h.record_flags(buf, d.bytes);
    let hashed = abi::record_flags::HASH | abi::record_flags::HASH_UDP;
    assert_eq!(
        flags
            .iter()
            .map(|f| f & !abi::record_flags::L4_CSUM_OK)
            .collect::<Vec<_>>(),
        [0, hashed, 0]
    );
    h.write(reg::CTRL, abi::ctrl::RESET);
    assert_eq!(h.read(reg::CTRL), 0);
}

#[test]
fn a_full_buffer_is_written_and_the_next_taken_in_one_completion() {
    let mut h = Host::new(1, 6, 12);
    h.join(1, &[4]);
    let first = h.entry(1, 4);
    h.frame(1, 4, 0, 1000, false);
    let second = h.post(1, 4); // the host refills after the CLAIM
                               // 4 records of 1008 bytes fit in 4096; the fifth does not.
    for s in 1..5 {
        h.frame(1, 4, s, 1000, false);
    }
    assert_eq!(h.entry(1, 4), 0, "next buffer taken");
    let c = h.completions(0);
    assert_eq!(c.len(), 2);
    assert_eq!(c[1].kind, rx_kind::DATA);
    assert_eq!(c[1].flags, rx_flags::FULL | rx_flags::NEXT_TAKEN);
    assert_eq!((c[1].addr, c[1].frames), (first, 4));
    h.frame(1, 4, 5, 1000, true);
    let c = h.completions(0);
    assert_eq!(
        (c[0].addr, c[0].frames, c[0].flags),
        (second, 2, rx_flags::EOT)
    );
    let seqs: Vec<u32> = h.records(second, c[0].bytes).iter().map(|r| r.1).collect();
    assert_eq!(seqs, [4, 5]);
}

#[test]
fn starvation_sends_xoff_holds_frames_and_resumes_in_order_on_xon() {
    let mut h = Host::new(1, 6, 12);
    h.join(2, &[9]);
    h.frame(2, 9, 0, 1000, false);
    for s in 1..6 {
        h.frame(2, 9, s, 1000, false); // 5th frame needs a buffer: none posted
    }
    let c = h.completions(0);
    assert_eq!(c.last().unwrap().flags, rx_flags::FULL | rx_flags::STARVED);
    assert_eq!(h.read(reg::STARVED), 1);
    let sent = h.take_sent();
    assert_eq!(sent.len(), 1);
    assert_eq!(
        (sent[0].0, sent[0].1, sent[0].2, sent[0].3, sent[0].4),
        (Some(9), fabric_type::XOFF, 2, ME, 9)
    );
    // Frames in flight while starved are held, not dropped.
    h.frame(2, 9, 6, 100, false);
    h.frame(2, 9, 7, 100, true);
    assert!(h.completions(0).is_empty());
    let buf = h.post(2, 9);
    h.write(reg::XON, abi::stream_id(2, 9));
    let c = h.completions(0);
    assert_eq!(c[0].kind, rx_kind::CLAIM);
    assert_eq!(
        (c[1].kind, c[1].flags, c[1].addr),
        (rx_kind::DATA, rx_flags::EOT, buf)
    );
    let seqs: Vec<u32> = h.records(buf, c[1].bytes).iter().map(|r| r.1).collect();
    assert_eq!(seqs, [4, 5, 6, 7], "held frames in order, none lost");
    let sent = h.take_sent();
    assert_eq!(sent[0].1, fabric_type::XON);
    assert_eq!(h.read(reg::DROP_OVERFLOW), 0);
}

#[test]
fn a_stream_with_no_buffer_and_an_empty_entry_reports_starved() {
    let mut h = Host::new(1, 6, 12);
    h.join(3, &[]);
    h.frame(3, 5, 0, 64, false);
    let c = h.completions(0);
    assert_eq!(c.len(), 1);
    assert_eq!((c[0].kind, c[0].addr, c[0].node), (rx_kind::STARVED, 0, 5));
    assert_eq!(h.take_sent()[0].1, fabric_type::XOFF);
}

#[test]
fn holding_space_overflow_drops_and_counts() {
    let mut h = Host::new(1, 6, 12);
    h.join(3, &[]);
    for s in 0..(pagefill_sim::rx::HOLD_LIMIT as u32 + 5) {
        h.frame(3, 5, s, 64, false);
    }
    assert_eq!(h.read(reg::DROP_OVERFLOW), 5);
}

/// Frames held by starved streams pause the link before any stream's
/// holding space can overflow (the engine reads no datagram while paused);
/// XON drains them in order and the link opens again, also when a stream
/// starves again as it drains; leaving a group and disabling the device
/// empty the holding space. The count the pause goes by is checked against
/// the streams' own counters at each step.
#[test]
fn held_frames_pause_the_link_before_the_holding_space_overflows() {
    fn held_by_streams(h: &Host) -> usize {
        h.nic
            .rx
            .stream_stats()
            .iter()
            .map(|(_, s)| (s.offered - s.written - s.dropped) as usize)
            .sum()
    }
    let mut h = Host::new(1, 6, 12);
    h.join(3, &[]);
    h.join(4, &[]);
    // Two starved streams share the holding space.
    let mut sent = [0u32; 2];
    while !h.nic.rx.link_paused() {
        let i = usize::from(sent[0] > sent[1]);
        assert!(
            sent[0] + sent[1] < pagefill_sim::rx::HOLD_LIMIT as u32,
            "never paused"
        );
        h.frame(3 + i as u16, 5, sent[i], 64, false);
        sent[i] += 1;
    }
    let total = (sent[0] + sent[1]) as usize;
    assert!(total > 400, "paused after {total} frames");
    assert_eq!(h.nic.rx.held_frames(), total);
    assert_eq!(held_by_streams(&h), total);
    assert_eq!(h.read(reg::DROP_OVERFLOW), 0);
    // Group 3's stream refilled with one 4 KiB buffer: it takes the first
    // frames and the stream starves again, the rest still held.
    let buf = h.post(3, 5);
    h.write(reg::XON, abi::stream_id(3, 5));
    let held = h.nic.rx.held_frames();
    assert!(held < total && held > sent[1] as usize, "{held} held");
    assert_eq!(held, held_by_streams(&h));
    assert!(!h.nic.rx.link_paused());
    let c: Vec<_> = h
        .completions(0)
        .into_iter()
        .filter(|c| c.kind == rx_kind::DATA)
        .collect();
    assert_eq!(c.len(), 1);
    assert_eq!(c[0].addr, buf);
    let seqs: Vec<u32> = h
        .records(c[0].addr, c[0].bytes)
        .iter()
        .map(|r| r.1)
        .collect();
    let first = total - held;
    assert_eq!(seqs, (0..first as u32).collect::<Vec<_>>(), "in order");
    // Leaving group 4 drops what its stream held.
    h.mem.write_u64(common::MASTER + 4 * 8, 0);
    h.write(reg::GROUP_FLUSH, 4);
    assert_eq!(h.nic.rx.held_frames(), held - sent[1] as usize);
    assert_eq!(h.nic.rx.held_frames(), held_by_streams(&h));
    // Disabling the device writes or drops everything held.
    h.write(reg::CTRL, 0);
    assert_eq!(h.nic.rx.held_frames(), 0);
    assert_eq!(held_by_streams(&h), 0);
    assert_eq!(h.read(reg::DROP_OVERFLOW), 0);
}

#[test]
fn frames_for_unjoined_groups_are_dropped_and_counted() {
    let mut h = Host::new(1, 6, 12);
    h.frame(100, 1, 0, 64, true);
    assert_eq!(h.read(reg::DROP_UNJOINED), 1);
    assert!(h.completions(0).is_empty());
}

#[test]
fn malformed_frames_are_dropped_and_counted() {
    let mut h = Host::new(1, 6, 12);
    h.join(0, &[1]);
    h.frame(0, 1, 0, 10, true); // shorter than an Ethernet header
    h.frame(0, 1, 1, 4096, true); // does not fit a 4 KiB buffer with its header
    h.nic.rx_frame(0, 40, 0, true, &[0; 64], h.now); // node out of range
    assert_eq!(h.read(reg::DROP_BAD_FRAME), 3);
}

#[test]
fn the_coalescing_timer_writes_a_partly_filled_buffer() {
    let mut h = Host::new(1, 6, 12);
    h.write(reg::COALESCE_USECS, 50);
    h.join(0, &[1]);
    h.frame(0, 1, 0, 64, false);
    h.completions(0);
    h.advance(Duration::from_micros(49));
    assert!(h.completions(0).is_empty());
    h.advance(Duration::from_micros(2));
    let c = h.completions(0);
    assert_eq!(
        (c[0].kind, c[0].flags, c[0].frames),
        (rx_kind::DATA, rx_flags::TIMEOUT, 1)
    );
}

#[test]
fn each_queue_pair_has_its_own_coalescing_timer() {
    let mut h = Host::new(4, 8, 12);
    h.write(reg::COALESCE_USECS, 50);
    let q_reg = |q: usize| reg::queue(q, reg::Q_COALESCE_USECS);
    assert!(
        (0..4).all(|q| h.read(q_reg(q)) == 50),
        "a global write sets every queue's"
    );
    // Two streams of group 0 on different queue pairs.
    let (a, b) = (
        1u8,
        (2u8..32)
            .find(|&n| abi::stream_queue(0, n, 4) != abi::stream_queue(0, 1, 4))
            .unwrap(),
    );
    let (qa, qb) = (
        abi::stream_queue(0, a, 4) as usize,
        abi::stream_queue(0, b, 4) as usize,
    );
    h.write(q_reg(qa), 10);
    assert_eq!((h.read(q_reg(qa)), h.read(q_reg(qb))), (10, 50));
    h.join(0, &[a, b]);
    h.frame(0, a, 0, 64, false);
    h.frame(0, b, 0, 64, false);
    h.completions(qa);
    h.completions(qb);
    h.advance(Duration::from_micros(11));
    let c = h.completions(qa);
    assert_eq!(
        (c.len(), c[0].flags),
        (1, rx_flags::TIMEOUT),
        "queue {qa}: its own 10 us"
    );
    assert!(h.completions(qb).is_empty(), "queue {qb} keeps 50 us");
    h.advance(Duration::from_micros(40));
    assert_eq!(h.completions(qb).len(), 1);
    h.write(reg::COALESCE_USECS, 20);
    assert_eq!(h.read(q_reg(qa)), 20);
}

#[test]
fn streams_are_steered_to_queues_by_hash_and_say_which() {
    let mut h = Host::new(4, 8, 12);
    let mut seen = [0usize; 4];
    for g in 0..8u16 {
        h.join(g, &[0, 1, 2, 3]);
        for n in 0..4u8 {
            h.frame(g, n, 0, 64, true);
        }
    }
    for (q, seen) in seen.iter_mut().enumerate() {
        for c in h.completions(q) {
            assert_eq!(usize::from(c.queue), q);
            assert_eq!(abi::stream_queue(c.group, c.node, 4) as usize, q);
            *seen += 1;
        }
    }
    assert!(seen.iter().all(|&n| n > 0), "every queue used: {seen:?}");
    assert_eq!(seen.iter().sum::<usize>(), 64);
}

#[test]
fn the_ring_wraps_with_the_phase_and_never_overwrites_unconsumed_entries() {
    let mut h = Host::new(1, 6, 12); // 64 entries
    for g in 0..40u16 {
        h.join(g, &[1]);
        h.frame(g, 1, 0, 64, true); // CLAIM + DATA each: 80 completions
    }
    let first = h.completions(0);
    assert_eq!(first.len(), 64, "the ring holds 64; the rest wait");
    h.advance(Duration::from_micros(1)); // the device sees the consumed count
    let rest = h.completions(0);
    assert_eq!(rest.len(), 16, "after wrapping, the phase flips");
    assert!(
        first
            .iter()
            .chain(&rest)
            .filter(|c| c.kind == rx_kind::DATA)
            .count()
            == 40
    );
}

#[test]
fn the_vector_fires_only_when_armed_and_at_once_if_work_is_waiting() {
    let mut h = Host::new(1, 6, 12);
    h.join(0, &[1]);
    h.frame(0, 1, 0, 64, true);
    assert!(h.take_irqs().is_empty(), "not armed");
    h.write(reg::queue(0, reg::Q_ARM), abi::arm::RX);
    assert_eq!(
        h.take_irqs(),
        [1],
        "unconsumed completions: fires on arming"
    );
    h.completions(0);
    h.write(reg::queue(0, reg::Q_ARM), abi::arm::RX);
    assert!(h.take_irqs().is_empty(), "nothing waiting");
    h.post(0, 1);
    h.frame(0, 1, 1, 64, true);
    h.frame(0, 1, 2, 64, true);
    assert_eq!(h.take_irqs(), [1], "once per arming");
}

#[test]
fn completions_carry_the_take_count_so_lost_ones_can_be_told() {
    let mut h = Host::new(1, 6, 12);
    h.join(4, &[6]);
    let first = h.entry(4, 6);
    h.frame(4, 6, 0, 1000, false);
    let second = h.post(4, 6);
    for s in 1..5 {
        h.frame(4, 6, s, 1000, false); // the fifth takes `second`
    }
    h.frame(4, 6, 5, 1000, true);
    let c = h.completions(0);
    let seen: Vec<_> = c.iter().map(|c| (c.kind, c.addr, c.taken)).collect();
    assert_eq!(
        seen,
        [
            (rx_kind::CLAIM, first, 1),
            (rx_kind::DATA, first, 2),
            (rx_kind::DATA, second, 2)
        ],
        "CLAIM and NEXT_TAKEN count their take"
    );
    // Say the host lost both completions of a third buffer: the starvation
    // report that follows is ahead of the last count it saw (2).
    h.post(4, 6);
    h.frame(4, 6, 6, 64, true);
    h.frame(4, 6, 7, 64, false);
    let c = h.completions(0);
    assert_eq!(c.len(), 3);
    assert_eq!((c[2].kind, c[2].taken), (rx_kind::STARVED, 3));
    // A flush starts the count again, for the next join.
    h.mem.write_u64(common::MASTER + 4 * 8, 0);
    h.write(reg::GROUP_FLUSH, 4);
    h.completions(0);
    h.join(4, &[6]);
    h.frame(4, 6, 8, 64, true);
    let c = h.completions(0);
    assert_eq!((c[0].kind, c[0].taken), (rx_kind::CLAIM, 1));
}

#[test]
fn group_flush_returns_every_buffer_the_device_holds() {
    let mut h = Host::new(1, 6, 12);
    h.join(5, &[1, 2]);
    let b1 = h.entry(5, 1);
    let b2 = h.entry(5, 2);
    h.frame(5, 1, 0, 64, false);
    h.frame(5, 2, 0, 64, false);
    h.completions(0);
    h.mem.write_u64(common::MASTER + 5 * 8, 0);
    h.write(reg::GROUP_FLUSH, 5);
    let mut c = h.completions(0);
    assert_eq!(c.len(), 3);
    assert_eq!(
        c.pop().map(|c| (c.kind, c.group)),
        Some((rx_kind::FLUSHED, 5)),
        "the group's last completion"
    );
    c.sort_by_key(|c| c.node);
    assert!(c
        .iter()
        .all(|c| c.kind == rx_kind::DATA && c.flags == rx_flags::FLUSH));
    assert_eq!((c[0].addr, c[1].addr), (b1, b2));
    assert_eq!(h.nic.rx.buffers_held(), 0);
    h.frame(5, 1, 1, 64, true);
    assert_eq!(h.read(reg::DROP_UNJOINED), 1);
}

#[test]
fn reset_returns_every_buffer_without_completions_and_clears_everything() {
    let mut h = Host::new(1, 6, 12);
    h.join(5, &[1]);
    h.frame(5, 1, 0, 64, false);
    h.frame(9, 1, 0, 64, false);
    h.completions(0);
    assert_eq!(h.nic.rx.buffers_held(), 1);
    h.write(reg::CTRL, abi::ctrl::RESET);
    assert_eq!(h.read(reg::CTRL), 0);
    assert_eq!(h.nic.rx.buffers_held(), 0);
    assert_eq!(h.read(reg::DROP_UNJOINED), 0, "counters cleared");
    assert_eq!(h.read(reg::MASTER_LO), 0, "configuration cleared");
    assert_eq!(h.read(reg::STATUS) & abi::status::ENABLED, 0);
    assert!(h.completions(0).is_empty());
    // It comes back like new, once the host starts its rings afresh too.
    h.reset_rings();
    h.configure();
    h.write(reg::CTRL, abi::ctrl::ENABLE);
    h.post(5, 1);
    h.frame(5, 1, 1, 64, true);
    assert_eq!(h.completions(0).len(), 2);
}

#[test]
fn a_buffer_outside_mapped_memory_is_a_loud_driver_bug() {
    let mut h = Host::new(1, 6, 12);
    h.join(0, &[]);
    h.mem.write_u64(Host::entry_addr(0, 1), 0x7000_0000);
    h.write(reg::MISC_CAUSE, u32::MAX);
    h.write(reg::MISC_ARM, 1);
    h.take_irqs();
    h.frame(0, 1, 0, 64, true);
    assert_eq!(h.nic.counters.dma_errors, 1);
    assert_ne!(h.read(reg::STATUS) & abi::status::FATAL, 0);
    assert_ne!(h.read(reg::MISC_CAUSE) & abi::misc::ERROR, 0);
    assert_eq!(h.take_irqs(), [abi::MISC_VECTOR]);
    h.frame(0, 1, 1, 64, true);
    assert_eq!(h.nic.counters.dma_errors, 1, "a fatal device stops");
}

#[test]
fn an_invalid_configuration_does_not_enable() {
    let mut h = Host::new(1, 6, 12);
    h.write(reg::CTRL, abi::ctrl::RESET);
    h.configure();
    h.write(reg::BUF_SHIFT, 20);
    h.write(reg::CTRL, abi::ctrl::ENABLE);
    let s = h.read(reg::STATUS);
    assert_eq!(s & abi::status::ENABLED, 0);
    assert_ne!(s & abi::status::FATAL, 0);
}

#[test]
fn configuration_registers_are_locked_while_enabled() {
    let mut h = Host::new(1, 6, 12);
    h.write(reg::BUF_SHIFT, 13);
    assert_eq!(h.read(reg::BUF_SHIFT), 12);
    h.write(reg::COALESCE_USECS, 7);
    assert_eq!(
        h.read(reg::COALESCE_USECS),
        7,
        "coalescing can change any time"
    );
}

#[test]
fn bad_register_accesses_are_refused_and_counted() {
    let mut h = Host::new(1, 6, 12);
    assert_eq!(h.read(0x3c), u32::MAX);
    let mut b = [0u8; 2];
    h.nic.bar0_read(reg::ID as u64, &mut b);
    h.nic.bar0_write(reg::ID as u64 + 1, &[0; 4], h.now);
    h.write(reg::ID, 0);
    assert_eq!(h.nic.counters.bad_accesses, 4);
    assert_eq!(h.read(reg::ID), abi::ID_MAGIC);
}

#[test]
fn identity_and_limits_registers() {
    let mut h = Host::new(1, 6, 12);
    assert_eq!(
        h.read(reg::VERSION),
        abi::version(abi::VERSION_MAJOR, abi::VERSION_MINOR)
    );
    assert_eq!(h.read(reg::MAX_GROUPS), 4096);
    assert_eq!(h.read(reg::MAX_NODES), 32);
    assert_eq!(h.read(reg::MAX_QUEUES), abi::MAX_QUEUES as u32);
    assert_eq!(h.read(reg::BUF_SHIFTS), 12 | 16 << 8);
    assert_eq!(h.read(reg::NODE_ID), u32::from(ME));
    assert_eq!(h.read(reg::LINK_SPEED), 2500);
    let mac = abi::node_mac(ME);
    assert_eq!(h.read(reg::MAC_LO).to_le_bytes(), mac[0..4]);
    assert_eq!(
        h.read(reg::MAC_HI) as u16,
        u16::from_le_bytes([mac[4], mac[5]])
    );
}

#[test]
fn link_down_drops_counts_and_raises_the_misc_vector() {
    let mut h = Host::new(1, 6, 12);
    h.join(0, &[1]);
    h.write(reg::MISC_CAUSE, u32::MAX);
    h.write(reg::MISC_ARM, 1);
    h.take_irqs();
    h.nic.set_link(false);
    assert_eq!(h.take_irqs(), [abi::MISC_VECTOR]);
    assert_eq!(h.read(reg::STATUS) & abi::status::LINK_UP, 0);
    h.frame(0, 1, 0, 64, true);
    assert_eq!(h.read(reg::DROP_LINK_DOWN), 1);
    h.nic.set_link(true);
    assert!(h.take_irqs().is_empty(), "not re-armed");
    assert_ne!(h.read(reg::STATUS) & abi::status::LINK_UP, 0);
}

#[test]
fn disabling_writes_every_held_buffer_with_flush() {
    let mut h = Host::new(1, 6, 12);
    h.join(0, &[1, 2]);
    h.frame(0, 1, 0, 64, false);
    h.frame(0, 2, 0, 64, false);
    h.completions(0);
    h.write(reg::CTRL, 0);
    let c = h.completions(0);
    assert_eq!(c.len(), 2);
    assert!(c
        .iter()
        .all(|c| c.flags == rx_flags::FLUSH && c.frames == 1));
    assert_eq!(h.nic.rx.buffers_held(), 0);
    assert_eq!(h.read(reg::STATUS) & abi::status::ENABLED, 0);
    h.frame(0, 1, 1, 64, true);
    assert!(
        h.completions(0).is_empty(),
        "a disabled device receives nothing"
    );
}
