// SPDX-License-Identifier: GPL-2.0

//! The pagefill network interface: its `net_device_ops`.
//!
//! The interface registers with the device's MAC address and MTU limits.
//! Opening it programs the device with its tables and rings (joining the
//! default group) and enables it; the carrier follows the link the device
//! reports. Stopping it resets the device, which hands every buffer back.
//!
//! Receive (`rx.rs`) and transmit completions (`tx.rs`) run in NAPI; the
//! misc vector reports link changes (the carrier follows them) and device
//! errors.

use core::sync::atomic::{AtomicU64, Ordering};

use kernel::{
    io::Io,
    new_spinlock,
    pci,
    prelude::*,
    str::CStr,
    sync::SpinLock, //
};

use crate::abi;
use crate::hw;
use crate::net::bh;
use crate::net::ethtool::{EthtoolOps, EthtoolTable};
use crate::net::irq::{DeviceIrq, Handler};
use crate::net::napi::{Napi, Poll};
use crate::net::netdev::{Device, Operations, Stats64, TxOutcome};
use crate::net::skb::SkBuff;
use crate::rings::Rings;
use crate::rx::{RxBuffers, RxState};
use crate::tx::{TxState, Xmit};

/// The interface's per-device data.
#[pin_data]
pub(crate) struct NetdevData {
    /// The registers; access is revoked when the PCI device unbinds.
    bar: pci::DevresBar<{ abi::BAR0_SIZE }>,
    rings: Rings,
    /// Linux interrupt number of queue 0's MSI-X vector.
    irq: u32,
    /// Linux interrupt number of the misc vector, and its registration.
    misc_irq: u32,
    misc: DeviceIrq,
    /// Fatal device errors reported by the misc vector.
    fatal_errors: AtomicU64,
    /// Link speed the device reported at probe, Mb/s.
    link_mbps: u32,
    #[pin]
    napi: Napi,
    /// Receive state; NAPI polls it, open and stop set it up and tear it
    /// down while NAPI is stopped.
    #[pin]
    rx: SpinLock<RxState>,
    /// Transmit state; `ndo_start_xmit` and NAPI share it.
    #[pin]
    tx: SpinLock<TxState>,
}

impl NetdevData {
    pub(crate) fn new(
        bar: pci::DevresBar<{ abi::BAR0_SIZE }>,
        rings: Rings,
        irq: u32,
        misc_irq: u32,
        link_mbps: u32,
    ) -> impl PinInit<Self, Error> {
        try_pin_init!(Self {
            bar,
            rings,
            irq,
            misc_irq,
            misc: DeviceIrq::new(),
            fatal_errors: AtomicU64::new(0),
            link_mbps,
            napi <- Napi::new(),
            rx <- new_spinlock!(RxState::new()),
            tx <- new_spinlock!(TxState::new()),
        }? Error)
    }

    /// Resets the device: it stops and hands back every buffer. May sleep.
    pub(crate) fn reset(&self) -> Result {
        hw::reset_revocable(&self.bar)
    }
}

/// Largest MTU: a frame of the largest size the fabric carries, less the
/// Ethernet header, and it must fit a 4 KiB buffer with its record header
/// (larger buffers come with `ethtool -G rx-buf-len`).
pub(crate) const MAX_MTU: u32 = {
    let in_buffer = (1 << abi::MIN_BUF_SHIFT) - abi::record::HEADER_SIZE;
    let frame = if abi::MAX_FRAME_LEN < in_buffer {
        abi::MAX_FRAME_LEN
    } else {
        in_buffer
    };
    (frame - ETH_HLEN) as u32
};

/// Bytes of an Ethernet header.
const ETH_HLEN: usize = 14;

/// The pagefill interface's operations.
pub(crate) struct PagefillNetdev;

#[vtable]
impl Operations for PagefillNetdev {
    type Data = NetdevData;
    const ETHTOOL: Option<&'static kernel::bindings::ethtool_ops> =
        Some(&EthtoolTable::<Self>::TABLE);

    fn open(dev: &Device<Self>) -> Result {
        let data = dev.data();
        data.reset()?;
        // Allocations and interrupt requests may sleep: they happen before
        // the locks are taken and outside the registers' RCU read section.
        let slots = TxState::new_slots()?;
        bh::disabled(|| data.tx.lock().install(slots));
        let buffers = RxBuffers::new(dev, &data.napi, &data.rings)?;
        bh::disabled(|| data.rx.lock().install(buffers));
        let started = data
            .napi
            .start(dev, data.irq, c"pagefill")
            .and_then(|()| data.misc.request(dev, data.misc_irq, c"pagefill-misc"))
            .and_then(|()| {
                let bar = data.bar.try_access().ok_or(ENODEV)?;
                let status = data.rings.enable(&bar)?;
                bar.write32(
                    abi::arm::RX | abi::arm::TX,
                    abi::reg::queue(0, abi::reg::Q_ARM),
                );
                Ok(status)
            });
        let status = match started {
            Ok(s) => s,
            Err(e) => {
                data.misc.release();
                data.napi.stop();
                let _ = data.reset();
                // Separate statements: the guards go before what they
                // hand back is dropped.
                let buffers = bh::disabled(|| data.rx.lock().take(&data.rings));
                drop(buffers);
                let slots = bh::disabled(|| data.tx.lock().stop(dev));
                drop(slots);
                return Err(e);
            }
        };
        if status & abi::status::LINK_UP != 0 {
            dev.carrier_on();
        }
        dev.tx_start_all_queues();
        // Link changes from here on come by the misc vector (at once, if
        // one is already pending).
        if let Some(bar) = data.bar.try_access() {
            bar.write32(1, abi::reg::MISC_ARM);
        }
        Ok(())
    }

    fn stop(dev: &Device<Self>) -> Result {
        let data = dev.data();
        dev.tx_disable();
        dev.carrier_off();
        data.misc.release();
        data.napi.stop();
        // A device that is gone (unbound) holds nothing to hand back.
        let reset = match data.reset() {
            Err(e) if e != ENODEV => Err(e),
            _ => Ok(()),
        };
        // Destroying the pool may sleep: drop what the locks hand back after
        // they are released.
        let buffers = bh::disabled(|| data.rx.lock().take(&data.rings));
        drop(buffers);
        let slots = bh::disabled(|| data.tx.lock().stop(dev));
        drop(slots);
        reset
    }

    fn start_xmit(skb: SkBuff, dev: &Device<Self>) -> TxOutcome {
        let data = dev.data();
        let queued = data.tx.lock().xmit(dev, &data.rings, skb);
        match queued {
            Xmit::Queued(tail) => {
                if !dev.xmit_more() || dev.tx_stopped() {
                    if let Some(bar) = data.bar.try_access() {
                        bar.write32(tail, abi::reg::queue(0, abi::reg::Q_TX_TAIL));
                    }
                }
                TxOutcome::Ok
            }
            Xmit::Busy(skb) => TxOutcome::Busy(skb),
            Xmit::Dropped => TxOutcome::Ok,
        }
    }

    fn get_stats64(dev: &Device<Self>, stats: &mut Stats64<'_>) {
        let rx = bh::disabled(|| dev.data().rx.lock().stats);
        stats.add_rx(rx.packets, rx.bytes, rx.dropped);
        stats.add_rx_errors(rx.bad);
        let tx = bh::disabled(|| dev.data().tx.lock().stats);
        stats.add_tx(tx.packets, tx.bytes, tx.dropped);
    }
}

impl EthtoolOps for PagefillNetdev {
    const DRIVER: &'static CStr = c"pagefill";
    const STATS: &'static [&'static CStr] = &[
        c"rx0_packets",
        c"rx0_bytes",
        c"rx0_dropped",
        c"rx0_bad_completions",
        c"rx0_starved",
        c"rx0_xon_doorbells",
        c"rx0_page_alloc_failed",
        c"tx0_packets",
        c"tx0_bytes",
        c"tx0_dropped",
        c"tx0_bad_completions",
        c"device_fatal_errors",
    ];

    fn speed(dev: &Device<Self>) -> u32 {
        dev.data().link_mbps
    }

    fn stats(dev: &Device<Self>, out: &mut [u64]) {
        let data = dev.data();
        let rx = bh::disabled(|| data.rx.lock().stats);
        let tx = bh::disabled(|| data.tx.lock().stats);
        let values = [
            rx.packets,
            rx.bytes,
            rx.dropped,
            rx.bad,
            rx.starved,
            rx.xon,
            rx.alloc_failed,
            tx.packets,
            tx.bytes,
            tx.dropped,
            tx.bad,
            data.fatal_errors.load(Ordering::Relaxed),
        ];
        for (i, v) in values.iter().enumerate() {
            if let Some(o) = out.get_mut(i) {
                *o = *v;
            }
        }
    }
}

impl Handler for PagefillNetdev {
    fn handle(dev: &Device<Self>) {
        let data = dev.data();
        let Some(bar) = data.bar.try_access() else {
            return;
        };
        let cause = bar.read32(abi::reg::MISC_CAUSE);
        bar.write32(cause, abi::reg::MISC_CAUSE);
        if cause & abi::misc::LINK_CHANGE != 0 {
            if bar.read32(abi::reg::STATUS) & abi::status::LINK_UP != 0 {
                dev.carrier_on();
            } else {
                dev.carrier_off();
            }
        }
        if cause & abi::misc::ERROR != 0 {
            data.fatal_errors.fetch_add(1, Ordering::Relaxed);
            dev.carrier_off();
        }
        bar.write32(1, abi::reg::MISC_ARM);
    }
}

impl Poll for PagefillNetdev {
    fn poll(dev: &Device<Self>, napi: &Napi, budget: i32) -> i32 {
        let data = dev.data();
        data.tx.lock().clean(dev, &data.rings);
        let res = data.rx.lock().poll(dev, napi, &data.rings, budget);
        let bar = data.bar.try_access();
        if let Some(bar) = &bar {
            for id in res.xon.iter() {
                bar.write32(*id, abi::reg::XON);
            }
        }
        if res.work < budget && napi.complete_done(res.work) {
            if let Some(bar) = &bar {
                bar.write32(
                    abi::arm::RX | abi::arm::TX,
                    abi::reg::queue(0, abi::reg::Q_ARM),
                );
            }
        }
        res.work.min(budget)
    }
}
