// SPDX-License-Identifier: GPL-2.0

//! The transmit engine and the fault modes, driven through the register
//! interface against fake host memory.

mod common;

use std::time::Duration;

use common::{Host, ME};
use pagefill_abi::{self as abi, fabric_type, reg, rx_kind};
use pagefill_sim::faults::FaultMode;

fn frames_sent(h: &Host) -> Vec<(u16, u32, bool, Vec<u8>)> {
    h.take_sent()
        .into_iter()
        .filter(|m| m.1 == fabric_type::FRAME)
        .map(|(to, _, g, src, _, d)| {
            assert_eq!((to, src), (None, ME), "frames are broadcast from this node");
            let seq = u32::from_le_bytes(d[0..4].try_into().unwrap());
            (g, seq, d[4] != 0, d[5..].to_vec())
        })
        .collect()
}

#[test]
fn descriptors_are_gathered_sent_numbered_and_completed() {
    let mut h = Host::new(1, 6, 12);
    let a = Host::frame_bytes(0, 0, 1, 100);
    let b = Host::frame_bytes(0, 0, 2, 1500);
    h.tx(0, 3, &a, 1);
    h.tx(0, 3, &b, 3);
    h.write(reg::queue(0, reg::Q_ARM), abi::arm::TX);
    h.tx_doorbell(0);
    let f = frames_sent(&h);
    assert_eq!(f.len(), 2);
    assert_eq!((f[0].0, f[0].1, f[0].2), (3, 0, false));
    assert_eq!(
        (f[1].0, f[1].1, f[1].2),
        (3, 1, true),
        "the last before an empty ring ends transmission"
    );
    assert_eq!((&f[0].3, &f[1].3), (&a, &b));
    assert_eq!(h.tx_done(0), 4, "four descriptors done");
    assert_eq!(h.take_irqs(), [1]);
    assert_eq!(h.read(reg::TX_FRAMES), 2);
}

#[test]
fn a_frame_is_sent_only_when_its_last_descriptor_is_written() {
    let mut h = Host::new(1, 6, 12);
    h.tx_desc(0, common::TX_DATA, 60, 1, abi::tx_flags::SOF);
    h.tx_doorbell(0);
    assert!(frames_sent(&h).is_empty());
    assert_eq!(h.tx_done(0), 0);
    h.tx_desc(0, common::TX_DATA, 60, 1, abi::tx_flags::EOF);
    h.tx_doorbell(0);
    assert_eq!(frames_sent(&h)[0].3.len(), 120);
}

#[test]
fn malformed_descriptors_complete_unsent_and_are_counted() {
    let mut h = Host::new(1, 6, 12);
    h.tx_desc(0, common::TX_DATA, 60, 1, abi::tx_flags::EOF); // no SOF
    h.tx_desc(
        0,
        common::TX_DATA,
        0,
        1,
        abi::tx_flags::SOF | abi::tx_flags::EOF,
    ); // empty
    h.tx_desc(
        0,
        common::TX_DATA,
        60,
        5000,
        abi::tx_flags::SOF | abi::tx_flags::EOF,
    ); // group
    h.tx_desc(
        0,
        common::TX_DATA,
        8,
        1,
        abi::tx_flags::SOF | abi::tx_flags::EOF,
    ); // too short
    h.tx_doorbell(0);
    assert!(frames_sent(&h).is_empty());
    assert_eq!(h.read(reg::TX_BAD_DESC), 4);
    assert_eq!(h.tx_done(0), 4);
}

#[test]
fn xoff_from_a_receiver_pauses_the_stream_until_xon() {
    let mut h = Host::new(1, 6, 12);
    h.nic.tx_flow(2, 7, true);
    h.tx(0, 2, &Host::frame_bytes(0, 0, 0, 64), 1);
    h.tx(0, 4, &Host::frame_bytes(0, 0, 0, 64), 1);
    h.tx_doorbell(0);
    assert!(
        frames_sent(&h).is_empty(),
        "head of line waits for the paused group"
    );
    h.nic.tx_flow(2, 7, false);
    let f = frames_sent(&h);
    assert_eq!(f.iter().map(|f| f.0).collect::<Vec<_>>(), [2, 4]);
    assert_eq!(h.tx_done(0), 2);
}

#[test]
fn link_down_completes_transmit_unsent() {
    let mut h = Host::new(1, 6, 12);
    h.nic.set_link(false);
    h.tx(0, 2, &Host::frame_bytes(0, 0, 0, 64), 1);
    h.tx_doorbell(0);
    assert!(frames_sent(&h).is_empty());
    assert_eq!(h.read(reg::DROP_LINK_DOWN), 1);
    assert_eq!(h.tx_done(0), 1);
}

/// One DATA completion of three frames, with fault `mode` on.
fn faulty_data(mode: FaultMode) -> (Host, Vec<common::Cqe>) {
    let mut h = Host::new(1, 6, 12);
    h.join(0, &[1]);
    h.nic.faults.set(Some(mode), 1);
    for s in 0..3 {
        h.frame(0, 1, s, 64, s == 2);
    }
    let c = h.completions(0);
    (h, c)
}

#[test]
fn fault_modes_corrupt_what_they_say() {
    let (_, c) = faulty_data(FaultMode::LenPastBuffer);
    assert!(c.iter().any(|c| c.kind == rx_kind::DATA && c.bytes > 4096));
    let (_, c) = faulty_data(FaultMode::BadGroup);
    assert!(c.iter().all(|c| usize::from(c.group) >= abi::MAX_GROUPS));
    let (_, c) = faulty_data(FaultMode::BadNode);
    assert!(c.iter().all(|c| usize::from(c.node) >= abi::MAX_NODES));
    let (_, c) = faulty_data(FaultMode::BadQueue);
    assert!(c.iter().all(|c| c.queue == 200));
    let (h, c) = faulty_data(FaultMode::NeverPosted);
    let d = c.iter().find(|c| c.kind == rx_kind::DATA).unwrap();
    assert_ne!(d.addr, common::BUFFERS);
    assert_eq!(
        h.records(common::BUFFERS, 3 * 72).len(),
        3,
        "the data went to the real buffer"
    );
    let (_, c) = faulty_data(FaultMode::FrameCount);
    assert_eq!(
        c.iter().find(|c| c.kind == rx_kind::DATA).unwrap().frames,
        4
    );
    let (h, c) = faulty_data(FaultMode::RecordLen);
    let d = c.iter().find(|c| c.kind == rx_kind::DATA).unwrap();
    let mut len = [0u8; 2];
    pagefill_sim::dma::Memory::read(&*h.mem, d.addr, &mut len).unwrap();
    assert_eq!(u16::from_le_bytes(len), u16::MAX);
    let (h, c) = faulty_data(FaultMode::Duplicate);
    assert_eq!(c.len(), 4, "CLAIM and DATA, twice each");
    assert_eq!(h.nic.counters.faults_injected, 2);
}

#[test]
fn frames_a_fault_spoils_are_counted() {
    // The three frames of the DATA completion are lost to the host when the
    // completion or the records are corrupted, not when only the count is
    // off by one or the completion comes twice.
    for (mode, spoiled) in [
        (FaultMode::LenPastBuffer, 3),
        (FaultMode::BadGroup, 3),
        (FaultMode::BadNode, 3),
        (FaultMode::BadQueue, 3),
        (FaultMode::NeverPosted, 3),
        (FaultMode::RecordLen, 3),
        (FaultMode::FrameCount, 0),
        (FaultMode::Duplicate, 0),
    ] {
        let (h, _) = faulty_data(mode);
        assert_eq!(h.nic.counters.frames_spoiled, spoiled, "{mode:?}");
        assert_eq!(h.nic.counters.rx_frames, 3, "{mode:?}");
    }
}

#[test]
fn faults_can_hit_every_nth_completion_only() {
    let mut h = Host::new(1, 6, 12);
    h.join(0, &[1]);
    h.nic.faults.set(Some(FaultMode::BadQueue), 3);
    for s in 0..6 {
        h.post(0, 1);
        h.frame(0, 1, s, 64, true);
    }
    let bad = h.completions(0).iter().filter(|c| c.queue == 200).count();
    assert_eq!(bad, 4, "12 completions, every third corrupted");
}

#[test]
fn a_dead_device_reads_all_ones_and_does_nothing() {
    let mut h = Host::new(1, 6, 12);
    h.join(0, &[1]);
    h.nic.dead = true;
    assert_eq!(h.read(reg::ID), u32::MAX);
    h.write(reg::CTRL, abi::ctrl::RESET);
    h.frame(0, 1, 0, 64, true);
    assert!(h.completions(0).is_empty());
    assert_ne!(h.entry(0, 1), 0, "the buffer was not taken");
}

#[test]
fn control_commands_switch_faults_link_and_report_stats() {
    use pagefill_sim::server::control_command;
    let h = Host::new(1, 6, 12);
    let nic = std::sync::Mutex::new(h.nic);
    assert_eq!(control_command(&nic, "fault duplicate 2"), "ok\n");
    assert_eq!(nic.lock().unwrap().faults.mode, Some(FaultMode::Duplicate));
    assert!(control_command(&nic, "fault nonsense").starts_with("error"));
    assert_eq!(control_command(&nic, "fault claim-held 3"), "ok\n");
    assert_eq!(nic.lock().unwrap().faults.mode, Some(FaultMode::ClaimHeld));
    assert_eq!(control_command(&nic, "link down"), "ok\n");
    let stats = control_command(&nic, "stats");
    assert!(stats.lines().any(|l| l == "drop_unjoined 0"), "{stats}");
    assert!(stats.lines().any(|l| l == "buffers_held 0"), "{stats}");
    assert_eq!(control_command(&nic, "dead"), "ok\n");
    assert!(nic.lock().unwrap().dead);
    assert_eq!(control_command(&nic, "revive"), "ok\n");
    assert!(!nic.lock().unwrap().dead);
    assert!(control_command(&nic, "bogus").starts_with("error"));
}

/// claim-held: a CLAIM naming the buffer the host posted next, then a
/// STARVED whose count is one ahead, each while the entry still holds the
/// buffer; the device takes it for real later, with the count the lie gave,
/// and writes the stream's frames where they belong.
#[test]
fn claim_held_reports_a_posted_buffer_taken_and_leaves_it_in_the_entry() {
    let mut h = Host::new(1, 6, 12);
    h.join(0, &[1]);
    let b1 = h.entry(0, 1);
    h.nic.faults.set(Some(FaultMode::ClaimHeld), 1);
    let mut seq = 0;
    let mut send = |h: &mut Host, eot: bool| {
        h.frame(0, 1, seq, 64, eot);
        seq += 1;
    };
    let seen = |c: &[common::Cqe]| -> Vec<(u8, u64, u32)> {
        c.iter().map(|c| (c.kind, c.addr, c.taken)).collect()
    };

    send(&mut h, false);
    let b2 = h.post(0, 1); // refilled after the CLAIM, as a driver does
    send(&mut h, true);
    assert_eq!(
        seen(&h.completions(0)),
        [
            (rx_kind::CLAIM, b1, 1),
            (rx_kind::DATA, b1, 1),
            (rx_kind::CLAIM, b2, 2)
        ],
        "a CLAIM for the posted buffer"
    );
    assert_eq!(h.entry(0, 1), b2, "not taken");

    send(&mut h, false); // the real take of b2
    assert_eq!(h.entry(0, 1), 0);
    let b3 = h.post(0, 1);
    send(&mut h, true);
    assert_eq!(
        seen(&h.completions(0)),
        [
            (rx_kind::CLAIM, b2, 2),
            (rx_kind::DATA, b2, 2),
            (rx_kind::STARVED, 0, 3)
        ],
        "the real take, then a STARVED one ahead"
    );
    assert_eq!(h.entry(0, 1), b3, "not taken");
    assert_eq!(h.read(reg::STARVED), 0, "the stream did not starve");
    assert!(h.take_sent().is_empty(), "no xoff");

    send(&mut h, true);
    let c = h.completions(0);
    assert_eq!(
        seen(&c[..2]),
        [(rx_kind::CLAIM, b3, 3), (rx_kind::DATA, b3, 3)]
    );
    assert_eq!(h.records(b3, c[1].bytes)[0].1, 4, "fifth frame, in b3");
    assert_eq!(h.nic.counters.faults_injected, 2);
    assert_eq!(h.nic.counters.frames_spoiled, 0);
}

/// claim-held-late: each lie is followed at once by the real take of the
/// buffer it names, so a host reads every lie with the entry already empty;
/// the CLAIM of the real take carries the count the lie gave, and the
/// frames that follow go into that buffer.
#[test]
fn claim_held_late_takes_the_buffer_right_after_each_lie() {
    let mut h = Host::new(1, 6, 12);
    h.join(0, &[1]);
    let b1 = h.entry(0, 1);
    h.nic.faults.set(Some(FaultMode::ClaimHeldLate), 1);
    let seen = |c: &[common::Cqe]| -> Vec<(u8, u64, u32)> {
        c.iter().map(|c| (c.kind, c.addr, c.taken)).collect()
    };

    h.frame(0, 1, 0, 64, false);
    let b2 = h.post(0, 1);
    h.frame(0, 1, 1, 64, true);
    assert_eq!(
        seen(&h.completions(0)),
        [
            (rx_kind::CLAIM, b1, 1),
            (rx_kind::DATA, b1, 1),
            (rx_kind::CLAIM, b2, 2),
            (rx_kind::CLAIM, b2, 2)
        ],
        "the lying CLAIM, then the real one"
    );
    assert_eq!(h.entry(0, 1), 0, "taken right after the lie");

    let b3 = h.post(0, 1);
    h.frame(0, 1, 2, 64, true);
    let c = h.completions(0);
    assert_eq!(
        seen(&c),
        [
            (rx_kind::DATA, b2, 2),
            (rx_kind::STARVED, 0, 3),
            (rx_kind::CLAIM, b3, 3)
        ],
        "the frame in the buffer taken, a STARVED one ahead, the real take"
    );
    assert_eq!(h.records(b2, c[0].bytes)[0].1, 2, "third frame, in b2");
    assert_eq!(h.entry(0, 1), 0);
    assert_eq!(h.read(reg::STARVED), 0, "the stream did not starve");
    assert!(h.take_sent().is_empty(), "no xoff");

    h.frame(0, 1, 3, 64, true);
    let c = h.completions(0);
    assert_eq!(seen(&c[..1]), [(rx_kind::DATA, b3, 3)]);
    assert_eq!(h.records(b3, c[0].bytes)[0].1, 3, "fourth frame, in b3");
    assert_eq!(h.nic.counters.faults_injected, 2);
    assert_eq!(h.nic.counters.frames_spoiled, 0);
}

/// Steady traffic of several streams, ended now and then by EOT and the
/// coalescing timer, with a host that refills every empty entry: the lies
/// come, both kinds, at every third chance, and every frame still arrives,
/// once, in order.
#[test]
fn claim_held_fires_under_steady_traffic_and_loses_no_frame() {
    const NODES: [u8; 4] = [1, 2, 3, 4];
    let mut h = Host::new(1, 10, 12);
    h.join(0, &NODES);
    h.nic.faults.set(Some(FaultMode::ClaimHeld), 3);
    let (mut lying_claims, mut lying_starved) = (0u64, 0u64);
    let mut delivered: Vec<Vec<u32>> = vec![Vec::new(); NODES.len()];
    let mut sent = [0u32; NODES.len()];
    for round in 0..400u32 {
        for (i, &n) in NODES.iter().enumerate() {
            // Streams end their bursts at different times.
            let eot = (round + i as u32).is_multiple_of(3 + i as u32);
            h.frame(0, n, sent[i], 200, eot);
            sent[i] += 1;
        }
        if round % 50 == 49 {
            h.advance(Duration::from_millis(1)); // the timer writes the rest
        }
        for c in h.completions(0) {
            let i = NODES.iter().position(|&n| n == c.node).unwrap();
            let posted = h.entry(0, c.node);
            match c.kind {
                rx_kind::CLAIM if posted == c.addr => lying_claims += 1,
                rx_kind::STARVED => {
                    assert_ne!(
                        posted, 0,
                        "a real starvation: the host never let one happen"
                    );
                    lying_starved += 1;
                }
                rx_kind::DATA => {
                    delivered[i].extend(h.records(c.addr, c.bytes).iter().map(|r| r.1))
                }
                _ => {}
            }
        }
        for &n in &NODES {
            if h.entry(0, n) == 0 {
                h.post(0, n);
            }
        }
    }
    h.advance(Duration::from_millis(1));
    for c in h.completions(0) {
        if c.kind == rx_kind::DATA {
            let i = NODES.iter().position(|&n| n == c.node).unwrap();
            delivered[i].extend(h.records(c.addr, c.bytes).iter().map(|r| r.1));
        }
    }
    assert!(
        lying_claims > 5 && lying_starved > 5,
        "{lying_claims} {lying_starved}"
    );
    assert_eq!(h.nic.counters.faults_injected, lying_claims + lying_starved);
    for (i, d) in delivered.iter().enumerate() {
        assert_eq!(*d, (0..sent[i]).collect::<Vec<_>>(), "node {}", NODES[i]);
    }
    assert_eq!(h.nic.counters.dma_errors, 0);
}
