// SPDX-License-Identifier: GPL-2.0

//! Leaving a group: GROUP_FLUSH closes the group's streams and then posts
//! one FLUSHED completion on every queue, behind every completion of the
//! group already posted or waiting for ring room there, with nothing for
//! the group after it until the host joins again.

mod common;

use std::time::Duration;

use common::{Cqe, Host};
use pagefill_abi::{self as abi, fabric_type, reg, rx_flags, rx_kind};

const QUEUES: usize = 4;
const GROUP: u16 = 9;

/// Every completion of queue `q` the device has or will post without new
/// traffic: what the ring holds, then what waited for room, as the host
/// consumes and the device sees it by its tick.
fn drain_queue(h: &mut Host, q: usize) -> Vec<Cqe> {
    let mut out = Vec::new();
    loop {
        let got = h.completions(q);
        if got.is_empty() {
            return out;
        }
        out.extend(got);
        h.advance(Duration::from_micros(1));
    }
}

/// Nodes of `GROUP` whose streams complete on queue `q`.
fn nodes_on_queue(q: usize) -> Vec<u8> {
    (0..abi::MAX_NODES as u8)
        .filter(|&n| abi::stream_queue(GROUP, n, QUEUES as u32) as usize == q)
        .collect()
}

fn assert_is_flushed_marker(c: &Cqe, q: usize) {
    assert_eq!(
        *c,
        Cqe {
            addr: 0,
            bytes: 0,
            frames: 0,
            group: GROUP,
            node: 0,
            queue: q as u8,
            kind: rx_kind::FLUSHED,
            flags: 0,
            taken: 0,
        }
    );
}

/// Streams open on two queues, one of them also starved with its STARVED
/// report and a dozen other completions of the group still waiting for
/// ring room: on every queue FLUSHED comes after all of them, and nothing
/// of the group follows until the host joins again.
#[test]
fn flushed_is_each_queues_last_completion_of_the_group() {
    // 64-entry rings, so one queue's completions can wait for room.
    let mut h = Host::new(QUEUES, 6, 12);
    let crowded = nodes_on_queue(0);
    let other = nodes_on_queue(1);
    assert!(crowded.len() >= 2 && !other.is_empty(), "hash spread");
    let (busy, starved, open) = (crowded[0], crowded[1], other[0]);
    h.join(GROUP, &[busy, open]);

    // 40 buffers of `busy`, CLAIM and DATA each: the ring holds 64 of the
    // 80 completions, the rest wait, with everything that follows.
    for seq in 0..40 {
        if h.entry(GROUP, busy) == 0 {
            h.post(GROUP, busy);
        }
        h.frame(GROUP, busy, seq, 64, true);
    }
    h.post(GROUP, busy);
    h.frame(GROUP, busy, 40, 64, false); // open, on the crowded queue
    h.frame(GROUP, open, 0, 64, false); // open, on another queue
    h.frame(GROUP, starved, 0, 64, false); // no buffer posted: STARVED
    h.frame(GROUP, starved, 1, 64, false); // held
    assert_eq!(h.read(reg::STARVED), 1);
    h.take_sent();

    h.mem.write_u64(common::MASTER + u64::from(GROUP) * 8, 0);
    h.write(reg::GROUP_FLUSH, u32::from(GROUP));
    h.read(reg::STATUS);
    assert_eq!(h.nic.rx.buffers_held(), 0, "every buffer came back");
    let sent = h.take_sent();
    assert!(
        sent.iter()
            .any(|m| m.1 == fabric_type::XON && (m.2, m.4) == (GROUP, starved)),
        "the starved stream's sender resumed: {sent:?}"
    );

    // Frames and doorbells for the group after the flush: dropped, no
    // completion, no take.
    let unjoined = h.read(reg::DROP_UNJOINED);
    h.post(GROUP, starved);
    h.frame(GROUP, starved, 2, 64, true);
    h.frame(GROUP, open, 1, 64, true);
    h.write(reg::XON, abi::stream_id(GROUP, starved));
    h.advance(Duration::from_millis(1)); // past every coalescing timer
    assert_eq!(h.read(reg::DROP_UNJOINED), unjoined + 2);
    assert_ne!(h.entry(GROUP, starved), 0, "the node table is not read");

    for q in 0..QUEUES {
        let c = drain_queue(&mut h, q);
        let last = c.last().expect("FLUSHED on every queue");
        assert_is_flushed_marker(last, q);
        assert_eq!(
            c.iter().filter(|c| c.kind == rx_kind::FLUSHED).count(),
            1,
            "queue {q}: one FLUSHED"
        );
        assert!(c
            .iter()
            .all(|c| c.group == GROUP && usize::from(c.queue) == q));
        let kinds: Vec<(u8, u8, u8)> = c.iter().map(|c| (c.node, c.kind, c.flags)).collect();
        match q {
            0 => {
                assert_eq!(c.len(), 80 + 1 + 1 + 1 + 1, "{kinds:?}");
                let before = &kinds[80..];
                assert_eq!(
                    before,
                    [
                        (busy, rx_kind::CLAIM, 0),
                        (starved, rx_kind::STARVED, 0),
                        (busy, rx_kind::DATA, rx_flags::FLUSH),
                        (0, rx_kind::FLUSHED, 0)
                    ],
                    "the waiting STARVED and the flush's DATA before FLUSHED"
                );
            }
            1 => assert_eq!(
                kinds,
                [
                    (open, rx_kind::CLAIM, 0),
                    (open, rx_kind::DATA, rx_flags::FLUSH),
                    (0, rx_kind::FLUSHED, 0)
                ]
            ),
            _ => assert_eq!(c.len(), 1, "queue {q}: no stream, only FLUSHED"),
        }
    }

    // Joined again, the group's completions come again, counts from 1.
    h.join(GROUP, &[open]);
    h.frame(GROUP, open, 2, 64, true);
    let c = h.completions(1);
    assert_eq!(
        c.iter().map(|c| (c.kind, c.taken)).collect::<Vec<_>>(),
        [(rx_kind::CLAIM, 1), (rx_kind::DATA, 1)]
    );
}

/// The marker names only the flushed group: another group's streams on the
/// same queue go on, before and after it.
#[test]
fn flushed_leaves_other_groups_alone() {
    let mut h = Host::new(1, 6, 12);
    h.join(GROUP, &[1]);
    h.join(GROUP + 1, &[1]);
    h.frame(GROUP, 1, 0, 64, false);
    h.frame(GROUP + 1, 1, 0, 64, false);
    h.mem.write_u64(common::MASTER + u64::from(GROUP) * 8, 0);
    h.write(reg::GROUP_FLUSH, u32::from(GROUP));
    h.frame(GROUP + 1, 1, 1, 64, true);
    let c: Vec<(u16, u8)> = h.completions(0).iter().map(|c| (c.group, c.kind)).collect();
    assert_eq!(
        c,
        [
            (GROUP, rx_kind::CLAIM),
            (GROUP + 1, rx_kind::CLAIM),
            (GROUP, rx_kind::DATA),
            (GROUP, rx_kind::FLUSHED),
            (GROUP + 1, rx_kind::DATA),
        ]
    );
}

/// A group with no stream gets its markers too; a group number out of
/// range gets nothing.
#[test]
fn every_flush_of_a_group_in_range_posts_flushed() {
    let mut h = Host::new(2, 6, 12);
    h.write(reg::GROUP_FLUSH, 77);
    h.write(reg::GROUP_FLUSH, abi::MAX_GROUPS as u32);
    for q in 0..2 {
        let c = h.completions(q);
        assert_eq!(c.len(), 1);
        assert_eq!(
            (c[0].kind, c[0].group, c[0].queue),
            (rx_kind::FLUSHED, 77, q as u8)
        );
    }
}

/// Disabling and resetting close every stream too, but post no FLUSHED:
/// the device forgets every stream and the host every group.
#[test]
fn disable_and_reset_post_no_flushed() {
    let mut h = Host::new(2, 6, 12);
    h.join(GROUP, &[1, 2, 3]);
    for n in 1..4 {
        h.frame(GROUP, n, 0, 64, false);
    }
    h.all_completions();
    h.write(reg::CTRL, 0);
    let c = h.all_completions();
    assert_eq!(c.len(), 3);
    assert!(c
        .iter()
        .all(|c| c.kind == rx_kind::DATA && c.flags == rx_flags::FLUSH));

    h.reset_rings();
    h.write(reg::CTRL, abi::ctrl::ENABLE);
    h.post(GROUP, 1);
    h.frame(GROUP, 1, 1, 64, false);
    h.all_completions();
    h.write(reg::CTRL, abi::ctrl::RESET);
    assert!(h.all_completions().is_empty());
}
