// SPDX-License-Identifier: GPL-2.0

//! Bus mastering: while the host has it disabled in the PCI command
//! register the device makes no DMA access at all. What needed one is
//! dropped (a frame) or waits (timers, transmit descriptors); each refused
//! access is counted, and none is a device error.

mod common;

use std::time::Duration;

use common::Host;
use pagefill_abi::{self as abi, fabric_type, reg, rx_flags, rx_kind};

/// The device is running, not in the fatal state, with no DMA error.
fn assert_healthy(h: &mut Host) {
    let status = h.read(reg::STATUS);
    assert_ne!(status & abi::status::ENABLED, 0);
    assert_eq!(status & abi::status::FATAL, 0);
    assert_eq!(h.nic.counters.dma_errors, 0);
}

#[test]
fn a_frame_is_not_written_while_bus_mastering_is_off() {
    let mut h = Host::new(1, 6, 12);
    h.join(0, &[1]);
    let buf = h.entry(0, 1);
    h.nic.set_bus_master(false);
    h.frame(0, 1, 0, 64, true);
    assert_eq!(h.entry(0, 1), buf, "the buffer was not taken");
    assert!(h.completions(0).is_empty());
    assert_eq!(h.read(reg::RX_FRAMES), 0);
    assert_eq!(h.nic.counters.dma_refused_no_master, 1);
    assert_healthy(&mut h);

    // The same frame with bus mastering on is claimed, written, completed.
    h.nic.set_bus_master(true);
    h.frame(0, 1, 0, 64, true);
    assert_eq!(h.entry(0, 1), 0);
    let c = h.completions(0);
    assert_eq!(
        c.iter().map(|c| (c.kind, c.addr)).collect::<Vec<_>>(),
        [(rx_kind::CLAIM, buf), (rx_kind::DATA, buf)]
    );
    let recs = h.records(buf, c[1].bytes);
    assert_eq!(recs.len(), 1);
    assert_eq!(recs[0].2, Host::frame_bytes(0, 1, 0, 64));
    assert_eq!(h.nic.counters.dma_refused_no_master, 1);
    assert_healthy(&mut h);
}

/// A buffer the coalescing timer would write waits, untouched, for bus
/// mastering, and is written by the first tick after it is back.
#[test]
fn a_timer_that_runs_out_waits_for_bus_mastering() {
    let mut h = Host::new(1, 6, 12);
    h.join(0, &[1]);
    h.frame(0, 1, 0, 64, false);
    assert_eq!(h.completions(0)[0].kind, rx_kind::CLAIM);
    h.nic.set_bus_master(false);
    h.advance(Duration::from_millis(1));
    assert!(h.completions(0).is_empty());
    assert_eq!(h.nic.rx.buffers_held(), 1);
    h.nic.set_bus_master(true);
    h.advance(Duration::from_micros(1));
    let c = h.completions(0);
    assert_eq!(
        c.iter()
            .map(|c| (c.kind, c.flags, c.frames))
            .collect::<Vec<_>>(),
        [(rx_kind::DATA, rx_flags::TIMEOUT, 1)]
    );
    assert_healthy(&mut h);
}

/// Descriptors rung in while bus mastering is off wait; the engine sends
/// them once it is back.
#[test]
fn transmit_waits_for_bus_mastering() {
    let mut h = Host::new(1, 6, 12);
    h.nic.set_bus_master(false);
    h.tx(0, 3, &Host::frame_bytes(0, 0, 0, 100), 1);
    h.tx_doorbell(0);
    h.nic.tx_kick();
    assert!(h.take_sent().is_empty());
    assert_eq!(h.tx_done(0), 0);
    assert_eq!(
        h.nic.counters.dma_refused_no_master, 1,
        "the doorbell's read"
    );
    h.nic.set_bus_master(true);
    h.nic.tx_kick();
    let sent = h.take_sent();
    assert_eq!(sent.len(), 1);
    assert_eq!((sent[0].1, sent[0].2), (fabric_type::FRAME, 3));
    assert_eq!(h.tx_done(0), 1);
    assert_healthy(&mut h);
}

/// A flush cannot return buffers without DMA: refused whole, it leaves the
/// streams as they were, and works once bus mastering is back.
#[test]
fn a_group_flush_is_refused_whole_while_bus_mastering_is_off() {
    let mut h = Host::new(1, 6, 12);
    h.join(5, &[1]);
    h.frame(5, 1, 0, 64, false);
    h.completions(0);
    h.mem.write_u64(common::MASTER + 5 * 8, 0);
    h.nic.set_bus_master(false);
    h.write(reg::GROUP_FLUSH, 5);
    assert_eq!(h.nic.counters.dma_refused_no_master, 1);
    assert_eq!(h.nic.rx.buffers_held(), 1);
    h.nic.set_bus_master(true);
    assert!(h.completions(0).is_empty());
    h.write(reg::GROUP_FLUSH, 5);
    let c = h.completions(0);
    assert_eq!(
        c.iter().map(|c| (c.kind, c.flags)).collect::<Vec<_>>(),
        [(rx_kind::DATA, rx_flags::FLUSH), (rx_kind::FLUSHED, 0)]
    );
    assert_healthy(&mut h);
}

#[test]
fn the_control_socket_reports_refused_accesses() {
    let mut h = Host::new(1, 6, 12);
    h.join(0, &[1]);
    h.nic.set_bus_master(false);
    h.frame(0, 1, 0, 64, true);
    h.frame(0, 1, 1, 64, true);
    let nic = std::sync::Mutex::new(h.nic);
    let stats = pagefill_sim::server::control_command(&nic, "stats");
    assert!(
        stats.lines().any(|l| l == "dma_refused_no_master 2"),
        "{stats}"
    );
}

/// Bus mastering belongs to the config space: a device reset leaves it,
/// and the count of refused accesses, as they were.
#[test]
fn a_device_reset_leaves_bus_mastering_and_its_count() {
    let mut h = Host::new(1, 6, 12);
    h.join(0, &[1]);
    h.nic.set_bus_master(false);
    h.frame(0, 1, 0, 64, true);
    h.write(reg::CTRL, abi::ctrl::RESET);
    assert!(!h.nic.bus_master());
    assert_eq!(h.nic.counters.dma_refused_no_master, 1);
    h.nic.set_bus_master(true);
    h.write(reg::CTRL, abi::ctrl::RESET);
    assert!(h.nic.bus_master());
}
