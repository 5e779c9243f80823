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
use crate::groups::{self, GroupSet, DEFAULT_GROUP};
use crate::hw;
use crate::net::bh;
use crate::net::ethtool::{Channels, Coalesce, EthtoolOps, EthtoolTable, Rings as RingParams};
use crate::net::irq::{DeviceIrq, Handler};
use crate::net::napi::{Napi, Poll};
use crate::net::netdev::{
    Device, McList, Operations, QueueStatsRx, QueueStatsTx, Stats64, TxOutcome,
};
use crate::net::page_pool::PagePool;
use crate::net::skb::SkBuff;
use crate::rings::{Rings, TX_SHIFT_DEFAULT, TX_SHIFT_MAX};
use crate::rx::{RxConfig, RxState};
use crate::tx::{TxState, Xmit};

/// What ethtool sets; applied when the interface opens.
#[derive(Clone, Copy)]
pub(crate) struct Settings {
    rx: RxConfig,
    tx_shift: u32,
    coalesce_usecs: u32,
}

impl Settings {
    const DEFAULT: Self = Self {
        rx: RxConfig::DEFAULT,
        tx_shift: TX_SHIFT_DEFAULT,
        coalesce_usecs: 50,
    };
}

/// Largest coalescing time `ethtool -C rx-usecs` accepts: 10 ms.
const MAX_COALESCE_USECS: u32 = 10_000;

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
    /// Groups that could not be joined for want of a node table.
    join_failed: AtomicU64,
    /// Link speed the device reported at probe, Mb/s.
    link_mbps: u32,
    /// The NIC's node id on the fabric.
    node_id: u8,
    #[pin]
    settings: SpinLock<Settings>,
    /// The groups the multicast list asks for (always the default group).
    #[pin]
    wanted: SpinLock<GroupSet>,
    #[pin]
    napi: Napi,
    /// Receive state; NAPI polls it, open and stop set it up and tear it
    /// down while NAPI is stopped, `ndo_set_rx_mode` joins and leaves
    /// groups in it.
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
        node_id: u8,
    ) -> impl PinInit<Self, Error> {
        try_pin_init!(Self {
            bar,
            rings,
            irq,
            misc_irq,
            misc: DeviceIrq::new(),
            fatal_errors: AtomicU64::new(0),
            join_failed: AtomicU64::new(0),
            link_mbps,
            node_id,
            settings <- new_spinlock!(Settings::DEFAULT),
            wanted <- new_spinlock!(GroupSet::default_only()),
            napi <- Napi::new(),
            rx <- new_spinlock!(RxState::new()),
            tx <- new_spinlock!(TxState::new()),
        }? Error)
    }

    /// Resets the device: it stops and hands back every buffer. May sleep.
    pub(crate) fn reset(&self) -> Result {
        hw::reset_revocable(&self.bar)
    }

    fn settings(&self) -> Settings {
        *self.settings.lock()
    }

    /// Joins the wanted groups not joined and leaves the joined ones no
    /// longer wanted, on a running interface. Atomic context is fine.
    fn sync_groups(&self) {
        let Some(bar) = self.bar.try_access() else {
            return;
        };
        bh::disabled(|| {
            let wanted = *self.wanted.lock();
            let mut rx = self.rx.lock();
            if !rx.running() {
                return;
            }
            loop {
                let unwanted = rx.joined_groups().find(|g| !wanted.contains(*g));
                let Some(g) = unwanted else {
                    break;
                };
                if rx.unpublish(&self.rings, g).is_err() {
                    break;
                }
                // The device closes the group's streams; the read returns
                // once it has, after which it no longer reads the table.
                bar.write32(u32::from(g), abi::reg::GROUP_FLUSH);
                let _ = bar.read32(abi::reg::STATUS);
                rx.reclaim(&self.rings, g);
            }
            for g in wanted.iter() {
                if rx.joined(g) {
                    continue;
                }
                match rx.join(&self.rings, g) {
                    // Still handing back buffers of an earlier leave: NAPI
                    // syncs again when the group is gone.
                    Err(e) if e == EBUSY => rx.want_resync(),
                    Err(_) => {
                        self.join_failed.fetch_add(1, Ordering::Relaxed);
                    }
                    Ok(()) => {}
                }
            }
            rx.take_xons(|id| bar.write32(id, abi::reg::XON));
        });
    }
}

/// Largest MTU: a frame of the largest size the fabric carries, less the
/// Ethernet header. Frames above a page need `ethtool -G rx-buf-len`.
pub(crate) const MAX_MTU: u32 = (abi::MAX_FRAME_LEN - ETH_HLEN) as u32;

/// Bytes of an Ethernet header.
const ETH_HLEN: usize = 14;

/// Whether a frame of an `mtu`-byte payload fits a 2^`buf_shift` buffer
/// with its record header.
fn mtu_fits(mtu: u32, buf_shift: u32) -> bool {
    abi::record::size(mtu as usize + ETH_HLEN) <= 1 << buf_shift
}

/// The pagefill interface's operations.
pub(crate) struct PagefillNetdev;

impl PagefillNetdev {
    /// Tears down what [`Operations::open`] set up; for `ndo_stop` and for
    /// open's failure path.
    fn teardown(dev: &Device<Self>) -> Result {
        let data = dev.data();
        data.misc.release();
        data.napi.stop();
        // A device that is gone (unbound) holds nothing to hand back.
        let reset = match data.reset() {
            Err(e) if e != ENODEV => Err(e),
            _ => Ok(()),
        };
        // Destroying the pool may sleep: drop what the locks hand back after
        // they are released.
        let pool = bh::disabled(|| data.rx.lock().take(&data.rings));
        drop(pool);
        let slots = bh::disabled(|| data.tx.lock().stop(dev));
        drop(slots);
        reset
    }

    /// Applies new settings: stored for the next open, and if the interface
    /// is up it restarts with them (the device is reset, so frames it held
    /// are dropped and counted by the device).
    fn apply(dev: &Device<Self>, new: Settings) -> Result {
        let data = dev.data();
        let old = core::mem::replace(&mut *data.settings.lock(), new);
        if !bh::disabled(|| data.rx.lock().running()) {
            return Ok(());
        }
        Self::stop(dev)?;
        if let Err(e) = Self::open(dev) {
            // Back to what worked, if it still does.
            *data.settings.lock() = old;
            Self::open(dev)?;
            return Err(e);
        }
        data.sync_groups();
        Ok(())
    }
}

#[vtable]
impl Operations for PagefillNetdev {
    type Data = NetdevData;
    const ETHTOOL: Option<&'static kernel::bindings::ethtool_ops> =
        Some(&EthtoolTable::<Self>::TABLE);

    fn open(dev: &Device<Self>) -> Result {
        let data = dev.data();
        let set = data.settings();
        if !mtu_fits(dev.mtu(), set.rx.buf_shift) {
            return Err(EINVAL);
        }
        data.reset()?;
        // Allocations and interrupt requests may sleep: they happen before
        // the locks are taken and outside the registers' RCU read section.
        let slots = TxState::new_slots(set.tx_shift)?;
        bh::disabled(|| data.tx.lock().install(slots));
        let started = data
            .rings
            .clear()
            .and_then(|()| {
                PagePool::new(
                    dev,
                    &data.napi,
                    set.rx.ring,
                    set.rx.buf_shift - abi::MIN_BUF_SHIFT,
                )
            })
            .and_then(|pool| {
                bh::disabled(|| {
                    let mut rx = data.rx.lock();
                    rx.install(pool, set.rx.ring, data.node_id);
                    rx.join(&data.rings, DEFAULT_GROUP)
                })
            })
            .and_then(|()| data.napi.start(dev, data.irq, c"pagefill", 0))
            .and_then(|()| data.misc.request(dev, data.misc_irq, c"pagefill-misc"))
            .and_then(|()| {
                let bar = data.bar.try_access().ok_or(ENODEV)?;
                bar.write32(set.coalesce_usecs, abi::reg::COALESCE_USECS);
                let status = data.rings.enable(&bar, set.rx.buf_shift, set.tx_shift)?;
                bar.write32(
                    abi::arm::RX | abi::arm::TX,
                    abi::reg::queue(0, abi::reg::Q_ARM),
                );
                Ok(status)
            });
        let status = match started {
            Ok(s) => s,
            Err(e) => {
                let _ = Self::teardown(dev);
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
        dev.tx_disable();
        dev.carrier_off();
        Self::teardown(dev)
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

    fn change_mtu(dev: &Device<Self>, mtu: u32) -> Result {
        // The buffers must hold a whole frame: larger MTUs need larger
        // buffers first (`ethtool -G DEV rx-buf-len`).
        if !mtu_fits(mtu, dev.data().settings().rx.buf_shift) {
            return Err(EINVAL);
        }
        Ok(())
    }

    fn queue_stats_rx(dev: &Device<Self>, _idx: u32) -> QueueStatsRx {
        let rx = bh::disabled(|| dev.data().rx.lock().stats);
        QueueStatsRx {
            packets: rx.packets,
            bytes: rx.bytes,
            alloc_fail: rx.alloc_failed,
        }
    }

    fn queue_stats_tx(dev: &Device<Self>, _idx: u32) -> QueueStatsTx {
        let tx = bh::disabled(|| dev.data().tx.lock().stats);
        QueueStatsTx {
            packets: tx.packets,
            bytes: tx.bytes,
        }
    }

    fn set_rx_mode(dev: &Device<Self>, mc: &McList<'_, Self>) {
        let mut wanted = GroupSet::default_only();
        mc.for_each(|addr| {
            if let Some(g) = groups::group_of_mac(addr) {
                wanted.insert(g);
            }
        });
        let data = dev.data();
        // Bottom halves are off here already (the address lock).
        *data.wanted.lock() = wanted;
        data.sync_groups();
    }
}

/// Device counters, in the order of the `dev_` statistics.
const DEVICE_COUNTERS: [usize; 8] = [
    abi::reg::RX_FRAMES,
    abi::reg::STARVED,
    abi::reg::DROP_UNJOINED,
    abi::reg::DROP_OVERFLOW,
    abi::reg::DROP_BAD_FRAME,
    abi::reg::DROP_LINK_DOWN,
    abi::reg::TX_FRAMES,
    abi::reg::TX_BAD_DESC,
];

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
        c"rx0_copybreak",
        c"rx0_frags",
        c"rx0_buffers_allocated",
        c"rx0_buffers_recycled",
        c"tx0_packets",
        c"tx0_bytes",
        c"tx0_dropped",
        c"tx0_bad_completions",
        c"groups_joined",
        c"group_join_failed",
        c"device_fatal_errors",
        c"dev_rx_frames",
        c"dev_starved",
        c"dev_drop_unjoined",
        c"dev_drop_overflow",
        c"dev_drop_bad_frame",
        c"dev_drop_link_down",
        c"dev_tx_frames",
        c"dev_tx_bad_desc",
    ];

    fn speed(dev: &Device<Self>) -> u32 {
        dev.data().link_mbps
    }

    fn stats(dev: &Device<Self>, out: &mut [u64]) {
        let data = dev.data();
        let (rx, joined) = bh::disabled(|| {
            let rx = data.rx.lock();
            (rx.stats, rx.joined_groups().count() as u64)
        });
        let tx = bh::disabled(|| data.tx.lock().stats);
        let mut device = [0u64; DEVICE_COUNTERS.len()];
        if let Some(bar) = data.bar.try_access() {
            for (v, reg) in device.iter_mut().zip(DEVICE_COUNTERS) {
                *v = bar.try_read32(reg).map_or(0, u64::from);
            }
        }
        let values = [
            rx.packets,
            rx.bytes,
            rx.dropped,
            rx.bad,
            rx.starved,
            rx.xon,
            rx.alloc_failed,
            rx.copybreak,
            rx.frags,
            rx.buf_alloc,
            rx.buf_recycled,
            tx.packets,
            tx.bytes,
            tx.dropped,
            tx.bad,
            joined,
            data.join_failed.load(Ordering::Relaxed),
            data.fatal_errors.load(Ordering::Relaxed),
        ];
        for (o, v) in out
            .iter_mut()
            .zip(Iterator::chain(values.iter(), device.iter()))
        {
            *o = *v;
        }
    }

    fn rings(dev: &Device<Self>) -> RingParams {
        let s = dev.data().settings();
        RingParams {
            rx_max: RxConfig::MAX_RING,
            rx: s.rx.ring,
            tx_max: 1 << TX_SHIFT_MAX,
            tx: 1 << s.tx_shift,
            rx_buf_len: 1 << s.rx.buf_shift,
        }
    }

    fn set_rings(dev: &Device<Self>, r: &RingParams) -> Result {
        let mut new = dev.data().settings();
        if !(RxConfig::MIN_RING..=RxConfig::MAX_RING).contains(&r.rx) {
            return Err(EINVAL);
        }
        new.rx.ring = r.rx;
        // The transmit ring is a power of two: round up.
        let tx_shift = r.tx.max(1).next_power_of_two().trailing_zeros();
        if !(abi::MIN_RING_SHIFT..=TX_SHIFT_MAX).contains(&tx_shift) {
            return Err(EINVAL);
        }
        new.tx_shift = tx_shift;
        if r.rx_buf_len != 0 {
            let shift = r.rx_buf_len.trailing_zeros();
            let max_shift = abi::MIN_BUF_SHIFT + PagePool::MAX_ORDER;
            if !r.rx_buf_len.is_power_of_two()
                || !(abi::MIN_BUF_SHIFT..=max_shift.min(abi::MAX_BUF_SHIFT)).contains(&shift)
                || !mtu_fits(dev.mtu(), shift)
            {
                return Err(EINVAL);
            }
            new.rx.buf_shift = shift;
        }
        Self::apply(dev, new)
    }

    fn coalesce(dev: &Device<Self>) -> Coalesce {
        Coalesce {
            rx_usecs: dev.data().settings().coalesce_usecs,
        }
    }

    fn set_coalesce(dev: &Device<Self>, c: &Coalesce) -> Result {
        if c.rx_usecs > MAX_COALESCE_USECS {
            return Err(EINVAL);
        }
        let data = dev.data();
        data.settings.lock().coalesce_usecs = c.rx_usecs;
        // The timer register may change while the device runs.
        if let Some(bar) = data.bar.try_access() {
            bar.write32(c.rx_usecs, abi::reg::COALESCE_USECS);
        }
        Ok(())
    }

    fn channels(_dev: &Device<Self>) -> Channels {
        Channels {
            max_combined: 1,
            combined: 1,
        }
    }

    fn set_channels(_dev: &Device<Self>, ch: &Channels) -> Result {
        if ch.combined != 1 {
            return Err(EINVAL);
        }
        Ok(())
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
        let bar = data.bar.try_access();
        let (work, resync) = {
            let mut rx = data.rx.lock();
            let work = rx.poll(dev, napi, &data.rings, budget);
            if let Some(bar) = &bar {
                rx.take_xons(|id| bar.write32(id, abi::reg::XON));
            }
            (work, rx.take_resync())
        };
        if resync {
            data.sync_groups();
        }
        if work < budget && napi.complete_done(work) {
            if let Some(bar) = &bar {
                bar.write32(
                    abi::arm::RX | abi::arm::TX,
                    abi::reg::queue(0, abi::reg::Q_ARM),
                );
            }
        }
        work.min(budget)
    }
}
