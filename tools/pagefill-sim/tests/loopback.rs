// SPDX-License-Identifier: GPL-2.0

//! Loopback (`ctrl::LOOPBACK`): frames the transmit engine sends come back
//! as this node's own stream, nothing reaches the link or comes from it,
//! and the stream's flow control pauses the transmit engine itself.

mod common;

use common::{Host, ME};
use pagefill_abi::{self as abi, reg, rx_kind};

const GROUP: u16 = 0;

/// A NIC with one queue pair, enabled in loopback.
fn looped() -> Host {
    let mut h = Host::new(1, 6, 12);
    h.write(reg::CTRL, abi::ctrl::RESET);
    h.configure();
    h.write(reg::CTRL, abi::ctrl::ENABLE | abi::ctrl::LOOPBACK);
    assert_eq!(h.read(reg::CTRL), abi::ctrl::ENABLE | abi::ctrl::LOOPBACK);
    h
}

fn frame(seq: u32) -> Vec<u8> {
    Host::frame_bytes(GROUP, ME, seq, 60)
}

/// Queue pair 0's DATA completions.
fn data(h: &mut Host) -> Vec<common::Cqe> {
    let mut c = h.completions(0);
    c.retain(|c| c.kind == rx_kind::DATA);
    c
}

#[test]
fn sent_frames_come_back_as_the_own_stream_and_not_to_the_link() {
    let mut h = looped();
    let buf = h.post(GROUP, ME);
    h.publish(GROUP);
    for seq in 0..3 {
        h.tx(0, GROUP, &frame(seq), 2);
    }
    h.tx_doorbell(0);
    assert_eq!(h.tx_done(0), 6);
    assert!(h.take_sent().is_empty(), "nothing goes to the link");
    // The last frame of the doorbell ends the transmission: written at once.
    let c = data(&mut h);
    assert_eq!(c.len(), 1);
    assert_eq!(
        (c[0].kind, c[0].group, c[0].node),
        (rx_kind::DATA, GROUP, ME)
    );
    assert_eq!(c[0].addr, buf);
    let recs = h.records(buf, c[0].bytes);
    let seqs: Vec<u32> = recs.iter().map(|r| r.1).collect();
    assert_eq!(seqs, [0, 1, 2]);
    assert!(recs.iter().enumerate().all(|(i, r)| r.2 == frame(i as u32)));
    assert_eq!(h.read(reg::TX_FRAMES), 3);
    assert_eq!(h.read(reg::RX_FRAMES), 3);
}

#[test]
fn frames_from_the_link_are_dropped_in_loopback() {
    let mut h = looped();
    h.join(GROUP, &[3]);
    h.frame(GROUP, 3, 0, 60, true);
    let msg = pagefill_sim::fabric::Msg::Frame {
        group: GROUP,
        src: 3,
        seq: 1,
        eot: true,
        data: &Host::frame_bytes(GROUP, 3, 1, 60),
    };
    let now = h.now;
    h.nic.fabric_message(msg, now);
    assert_eq!(h.read(reg::DROP_LINK_DOWN), 1);
    assert_eq!(
        h.read(reg::RX_FRAMES),
        1,
        "only the frame given to the receive side"
    );
}

#[test]
fn a_starved_own_stream_pauses_the_transmit_engine_until_xon() {
    let mut h = looped();
    // The group is joined, but no buffer waits for the own stream.
    h.publish(GROUP);
    for seq in 0..4 {
        h.tx(0, GROUP, &frame(seq), 1);
    }
    h.tx_doorbell(0);
    // The first frame starved the stream and is held; the rest wait in
    // the ring.
    assert_eq!(h.tx_done(0), 1);
    let c = h.completions(0);
    assert_eq!(c.len(), 1);
    assert_eq!((c[0].kind, c[0].node), (rx_kind::STARVED, ME));
    assert!(h.take_sent().is_empty(), "no xoff on the link");
    assert_eq!((h.read(reg::XOFF_SENT), h.read(reg::XOFF_RECEIVED)), (1, 1));
    let buf = h.post(GROUP, ME);
    h.write(reg::XON, abi::stream_id(GROUP, ME));
    // XON: the held frame is placed, the engine goes on with the ring.
    assert_eq!(h.tx_done(0), 4);
    assert_eq!(h.read(reg::DROP_OVERFLOW), 0);
    let c = data(&mut h);
    assert_eq!(c.len(), 1);
    let seqs: Vec<u32> = h.records(buf, c[0].bytes).iter().map(|r| r.1).collect();
    assert_eq!(seqs, [0, 1, 2, 3]);
}

#[test]
fn loopback_is_written_only_while_disabled() {
    let mut h = Host::new(1, 6, 12);
    h.write(reg::CTRL, abi::ctrl::ENABLE | abi::ctrl::LOOPBACK);
    assert_eq!(h.read(reg::CTRL), abi::ctrl::ENABLE);
}

#[test]
fn without_xoff_a_starved_own_stream_drops_beyond_its_fifo_and_sending_goes_on() {
    let mut h = Host::new(1, 6, 12);
    h.write(reg::CTRL, abi::ctrl::RESET);
    h.configure();
    let ctrl = abi::ctrl::ENABLE | abi::ctrl::LOOPBACK | abi::ctrl::NO_XOFF;
    h.write(reg::CTRL, ctrl);
    assert_eq!(h.read(reg::CTRL), ctrl);
    h.publish(GROUP);
    let total = pagefill_sim::rx::HOLD_LIMIT as u32 + 64;
    let mut sent = 0;
    while sent < total {
        for _ in 0..32 {
            h.tx(0, GROUP, &frame(sent), 1);
            sent += 1;
        }
        h.tx_doorbell(0);
        assert_eq!(h.tx_done(0), sent, "the transmit engine is not paused");
    }
    assert_eq!(
        h.read(reg::DROP_OVERFLOW),
        64,
        "what the FIFO could not hold"
    );
    assert_eq!(h.read(reg::XOFF_SENT), 0);
    // The host refills: what the FIFO held comes first, in order.
    h.post(GROUP, ME);
    h.write(reg::XON, abi::stream_id(GROUP, ME));
    let c = data(&mut h);
    assert_eq!(c.len(), 1);
    let seqs: Vec<u32> = h
        .records(c[0].addr, c[0].bytes)
        .iter()
        .map(|r| r.1)
        .collect();
    assert!(seqs.len() > 1 && seqs.iter().enumerate().all(|(i, s)| *s == i as u32));
}

#[test]
fn ignoring_xoff_the_transmit_engine_sends_to_a_paused_group() {
    let mut h = Host::new(1, 6, 12);
    h.write(reg::CTRL, abi::ctrl::RESET);
    h.configure();
    h.write(reg::CTRL, abi::ctrl::ENABLE | abi::ctrl::IGNORE_XOFF);
    h.nic.tx_flow(GROUP, 4, true);
    assert_eq!(h.read(reg::XOFF_RECEIVED), 1);
    h.tx(0, GROUP, &frame(0), 1);
    h.tx_doorbell(0);
    assert_eq!(h.tx_done(0), 1);
    assert_eq!(h.take_sent().len(), 1);
}
