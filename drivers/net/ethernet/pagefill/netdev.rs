// SPDX-License-Identifier: GPL-2.0

//! The pagefill network interface: its `net_device_ops`, ethtool and
//! netlink statistics.
//!
//! The interface registers with the device's MAC address and MTU limits.
//! Opening it programs the device with its tables and the rings of the
//! queue pairs in use (`ethtool -L`), joins the default group and enables
//! the device; the carrier follows the link the device reports. Stopping it
//! resets the device, which hands every buffer back.
//!
//! Each queue pair has its NAPI instance, MSI-X vector, page pool, receive
//! and transmit state. Receive (`rx.rs`) and transmit completions (`tx.rs`)
//! run in NAPI; the misc vector reports link changes (the carrier follows
//! them) and device errors. Groups (`groups.rs`) are joined and left here,
//! across the queues: the device steers each stream of a group to one
//! queue, whose pool supplies that stream's buffers.

use core::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use kernel::{
    io::Io,
    new_spinlock,
    pci,
    prelude::*,
    str::CStr,
    sync::SpinLock, //
};

use crate::abi;
use crate::groups::{self, GroupSet};
use crate::hw;
use crate::net::bh;
use crate::net::ethtool::{Channels, Coalesce, EthtoolOps, EthtoolTable, Rings as RingParams};
use crate::net::irq::{DeviceIrq, Handler};
use crate::net::napi::{Napi, Poll};
use crate::net::netdev::{
    Device, Features, McList, Operations, QueueStatsRx, QueueStatsTx, Stats64, TxOutcome,
};
use crate::net::page_pool::PagePool;
use crate::net::skb::SkBuff;
use crate::rings::{Rings, MAX_JOINED, TX_SHIFT_DEFAULT, TX_SHIFT_MAX};
use crate::rx::{RxConfig, RxOffloads, RxState, RxStats};
use crate::tx::{TxState, TxStats, Xmit};

/// What ethtool sets; applied when the interface opens.
#[derive(Clone, Copy)]
pub(crate) struct Settings {
    rx: RxConfig,
    tx_shift: u32,
    coalesce_usecs: u32,
    /// Queue pairs in use.
    queues: u32,
    /// Whether the user chose the buffer size (`ethtool -G rx-buf-len`): it
    /// then stays across MTU changes while a frame fits. Otherwise it
    /// follows the MTU ([`default_buf_shift`]).
    buf_len_chosen: bool,
}

impl Settings {
    const DEFAULT: Self = Self {
        rx: RxConfig::DEFAULT,
        tx_shift: TX_SHIFT_DEFAULT,
        coalesce_usecs: 50,
        queues: 1,
        buf_len_chosen: false,
    };
}

/// Largest coalescing time `ethtool -C rx-usecs` accepts: 10 ms.
const MAX_COALESCE_USECS: u32 = 10_000;

/// Interrupt names of the queue pairs' vectors, as /proc/interrupts shows
/// them.
const QUEUE_IRQ_NAMES: [&CStr; abi::MAX_QUEUES] = [
    c"pagefill-q0",
    c"pagefill-q1",
    c"pagefill-q2",
    c"pagefill-q3",
];

/// One queue pair's host side.
#[pin_data]
pub(crate) struct Queue {
    /// Linux interrupt number of its MSI-X vector; 0 if it has none.
    irq: u32,
    #[pin]
    napi: Napi,
    /// Receive state; NAPI polls it, open and stop set it up and tear it
    /// down while NAPI is stopped, group changes join and leave in it.
    #[pin]
    rx: SpinLock<RxState>,
    /// Transmit state; `ndo_start_xmit` and NAPI share it.
    #[pin]
    tx: SpinLock<TxState>,
}

impl Queue {
    fn new(irq: u32) -> impl PinInit<Self, Error> {
        try_pin_init!(Self {
            irq,
            napi <- Napi::new(),
            rx <- new_spinlock!(RxState::new()),
            tx <- new_spinlock!(TxState::new()),
        }? Error)
    }
}

/// Who holds which node table.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Table {
    Free,
    /// Joined by this group.
    Joined(u16),
    /// This group was left; queues still wait for buffers the device held.
    Leaving(u16),
}

/// The node tables of the joined groups, across the queues.
struct Tables {
    state: [Table; MAX_JOINED],
    /// Queues still holding each table.
    holders: [u8; MAX_JOINED],
}

impl Tables {
    const fn new() -> Self {
        Self {
            state: [Table::Free; MAX_JOINED],
            holders: [0; MAX_JOINED],
        }
    }

    fn joined(&self) -> impl Iterator<Item = (usize, u16)> + '_ {
        self.state.iter().enumerate().filter_map(|(t, s)| match s {
            Table::Joined(g) => Some((t, *g)),
            _ => None,
        })
    }

    /// Whether `g` holds a table, joined or leaving.
    fn holds(&self, g: u16) -> bool {
        self.state
            .iter()
            .any(|s| *s == Table::Joined(g) || *s == Table::Leaving(g))
    }

    /// Queues let go of the tables in `mask`; returns whether a table
    /// became free.
    fn release(&mut self, mask: u64) -> bool {
        let mut freed = false;
        for t in 0..MAX_JOINED {
            if mask & (1 << t) == 0 {
                continue;
            }
            self.holders[t] = self.holders[t].saturating_sub(1);
            if self.holders[t] == 0 {
                if let Table::Leaving(_) = self.state[t] {
                    self.state[t] = Table::Free;
                    freed = true;
                }
            }
        }
        freed
    }
}

/// The interface's per-device data.
#[pin_data]
pub(crate) struct NetdevData {
    /// The registers; access is revoked when the PCI device unbinds.
    bar: pci::DevresBar<{ abi::BAR0_SIZE }>,
    rings: Rings,
    /// Queue pairs this NIC can use: the device's, as far as memory and
    /// MSI-X vectors were allocated at probe.
    max_queues: u32,
    /// Linux interrupt number of the misc vector, and its registration.
    misc_irq: u32,
    misc: DeviceIrq,
    /// Fatal device errors reported by the misc vector.
    fatal_errors: AtomicU64,
    /// Transmit queues the watchdog found stuck.
    tx_timeouts: AtomicU64,
    /// Restarts after a fatal error or a transmit timeout, and those that
    /// failed (the device did not come back from its reset).
    restarts: AtomicU64,
    restarts_failed: AtomicU64,
    /// Groups that could not be joined for want of a node table.
    join_failed: AtomicU64,
    /// Private flag `rx-udp-merge`: merge runs of a flow's UDP datagrams
    /// (see [`crate::udp_merge`]). Read once per poll.
    udp_merge: AtomicBool,
    /// Link speed the device reported at probe, Mb/s.
    link_mbps: u32,
    /// The NIC's node id on the fabric.
    node_id: u8,
    #[pin]
    settings: SpinLock<Settings>,
    /// The groups the multicast list asks for (always the default group).
    #[pin]
    wanted: SpinLock<GroupSet>,
    /// Taken after `wanted` and before any queue's receive lock.
    #[pin]
    tables: SpinLock<Tables>,
    #[pin]
    queues: [Queue; abi::MAX_QUEUES],
}

/// What probe found out about the NIC, for [`NetdevData::new`].
pub(crate) struct Probed {
    pub(crate) bar: pci::DevresBar<{ abi::BAR0_SIZE }>,
    pub(crate) rings: Rings,
    /// Linux interrupt numbers of the queue pairs' vectors (0: none).
    pub(crate) queue_irqs: [u32; abi::MAX_QUEUES],
    pub(crate) max_queues: u32,
    /// Queue pairs to use until ethtool -L says otherwise.
    pub(crate) queues: u32,
    pub(crate) misc_irq: u32,
    pub(crate) link_mbps: u32,
    pub(crate) node_id: u8,
}

impl NetdevData {
    /// The receive offloads in force now.
    fn rx_offloads(&self, dev: &Device<PagefillNetdev>) -> RxOffloads {
        let features = dev.features();
        let csum = features.contains(Features::RXCSUM);
        RxOffloads {
            csum,
            // Merging needs the device's checksum check. An XDP program
            // and the stack's fraglist GRO take frames as they came.
            udp_merge: csum
                && self.udp_merge.load(Ordering::Relaxed)
                && !features.contains(Features::GRO_FRAGLIST)
                && !dev.xdp_attached(),
        }
    }

    pub(crate) fn new(p: Probed) -> impl PinInit<Self, Error> {
        let irqs = p.queue_irqs;
        try_pin_init!(Self {
            bar: p.bar,
            rings: p.rings,
            max_queues: p.max_queues,
            misc_irq: p.misc_irq,
            misc: DeviceIrq::new(),
            fatal_errors: AtomicU64::new(0),
            tx_timeouts: AtomicU64::new(0),
            restarts: AtomicU64::new(0),
            restarts_failed: AtomicU64::new(0),
            join_failed: AtomicU64::new(0),
            udp_merge: AtomicBool::new(false),
            link_mbps: p.link_mbps,
            node_id: p.node_id,
            settings <- new_spinlock!(Settings {
                queues: p.queues,
                rx: RxConfig {
                    buf_shift: default_buf_shift(DEFAULT_MTU).unwrap_or(abi::MIN_BUF_SHIFT),
                    ..RxConfig::DEFAULT
                },
                ..Settings::DEFAULT
            }),
            wanted <- new_spinlock!(GroupSet::default_only()),
            tables <- new_spinlock!(Tables::new()),
            queues <- pin_init::pin_init_array_from_fn(|i| Queue::new(irqs[i])),
        }? Error)
    }

    /// Resets the device: it stops and hands back every buffer. May sleep.
    pub(crate) fn reset(&self) -> Result {
        hw::reset_revocable(&self.bar)
    }

    fn settings(&self) -> Settings {
        *self.settings.lock()
    }

    /// The queue pairs in use while the interface is up.
    fn active(&self) -> &[Queue] {
        let n = self.settings().queues as usize;
        &self.queues[..n.min(abi::MAX_QUEUES)]
    }

    /// The receive counters summed over the queues.
    fn rx_stats(&self) -> RxStats {
        let mut sum = RxStats::default();
        for q in self.queues.iter() {
            sum.add(&bh::disabled(|| q.rx.lock().stats));
        }
        sum
    }

    /// The transmit counters summed over the queues.
    fn tx_stats(&self) -> TxStats {
        let mut sum = TxStats::default();
        for q in self.queues.iter() {
            sum.add(&bh::disabled(|| q.tx.lock().stats));
        }
        sum
    }

    /// Joins the wanted groups not joined and leaves the joined ones no
    /// longer wanted, on a running interface. Atomic context is fine.
    fn sync_groups(&self) {
        let Some(bar) = self.bar.try_access() else {
            return;
        };
        let queues = self.active();
        let running = bh::disabled(|| queues.first().is_some_and(|q| q.rx.lock().running()));
        if !running {
            return;
        }
        bh::disabled(|| {
            let wanted = *self.wanted.lock();
            let mut tables = self.tables.lock();
            // Each queue's retired tables are released on their own: a
            // table counts one holder per queue.
            // Leave first: that frees tables for the joins.
            loop {
                let unwanted = tables.joined().find(|(_, g)| !wanted.contains(*g));
                let Some((t, g)) = unwanted else {
                    break;
                };
                tables.state[t] = Table::Leaving(g);
                let _ = self.rings.set_master(g, None);
                // The device closes the group's streams; the read returns
                // once it has, after which it no longer reads the table.
                bar.write32(u32::from(g), abi::reg::GROUP_FLUSH);
                let _ = bar.read32(abi::reg::STATUS);
                for q in queues {
                    let mut rx = q.rx.lock();
                    rx.leave(&self.rings, g);
                    tables.release(rx.take_retired());
                }
            }
            for g in wanted.iter() {
                // A group still leaving is joined again once its table is
                // free (NAPI syncs again then).
                if tables.holds(g) {
                    continue;
                }
                let Some(t) = tables.state.iter().position(|s| *s == Table::Free) else {
                    self.join_failed.fetch_add(1, Ordering::Relaxed);
                    continue;
                };
                let mut joined = 0;
                for q in queues {
                    if q.rx.lock().join(&self.rings, g, t).is_ok() {
                        joined += 1;
                    }
                }
                tables.holders[t] = joined;
                if usize::from(joined) == queues.len() && self.rings.set_master(g, Some(t)).is_ok()
                {
                    tables.state[t] = Table::Joined(g);
                } else {
                    // Undo: no master entry was written, so the device
                    // never saw the table.
                    tables.state[t] = Table::Leaving(g);
                    for q in queues {
                        q.rx.lock().leave(&self.rings, g);
                    }
                    self.join_failed.fetch_add(1, Ordering::Relaxed);
                }
            }
            // Tables freed here are those of joins undone above: they are
            // tried again at the next sync, not at once.
            for q in queues {
                let mut rx = q.rx.lock();
                rx.take_xons(|id| bar.write32(id, abi::reg::XON));
                tables.release(rx.take_retired());
            }
        });
    }

    /// Groups joined, for ethtool.
    fn groups_joined(&self) -> u64 {
        bh::disabled(|| self.tables.lock().joined().count() as u64)
    }
}

/// Largest MTU: a frame of the largest size the fabric carries, less the
/// Ethernet header. Buffers grow to hold such a frame (`change_mtu`).
pub(crate) const MAX_MTU: u32 = (abi::MAX_FRAME_LEN - ETH_HLEN) as u32;

/// The MTU an interface starts with.
pub(crate) const DEFAULT_MTU: u32 = 1500;

/// Bytes of an Ethernet header.
const ETH_HLEN: usize = 14;

/// Whether a frame of an `mtu`-byte payload fits a 2^`buf_shift` buffer
/// with its record header.
fn mtu_fits(mtu: u32, buf_shift: u32) -> bool {
    abi::record::size(mtu as usize + ETH_HLEN) <= 1 << buf_shift
}

/// Largest buffer size (as a power of two) a page pool serves.
const MAX_POOL_BUF_SHIFT: u32 = {
    let shift = abi::MIN_BUF_SHIFT + PagePool::MAX_ORDER;
    if shift < abi::MAX_BUF_SHIFT {
        shift
    } else {
        abi::MAX_BUF_SHIFT
    }
};

/// The smallest buffer size (as a power of two) that holds a frame of an
/// `mtu`-byte payload, if a pool can serve it.
fn buf_shift_for(mtu: u32) -> Option<u32> {
    (abi::MIN_BUF_SHIFT..=MAX_POOL_BUF_SHIFT).find(|s| mtu_fits(mtu, *s))
}

/// Full-sized frames a buffer holds by default.
///
/// Every buffer costs the driver a completion and a refill, and the device
/// a starvation round trip when it fills the posted one before the driver
/// posts the next: a stream of 1500-byte frames in one-page buffers needs a
/// new buffer every two frames and then costs more per frame than a NIC
/// with one descriptor per frame (benchmarks.rst). Sixteen frames make the
/// per-buffer costs small; short frames pack hundreds into the same buffer.
const DEFAULT_FRAMES_PER_BUF: usize = 16;

/// The buffer size (as a power of two) for MTU `mtu` when the user has not
/// chosen one: [`DEFAULT_FRAMES_PER_BUF`] full-sized frames, within what a
/// pool serves; a page at least. `None` if the largest a pool serves
/// cannot hold one frame.
fn default_buf_shift(mtu: u32) -> Option<u32> {
    let want = abi::record::size(mtu as usize + ETH_HLEN).saturating_mul(DEFAULT_FRAMES_PER_BUF);
    let shift = want
        .checked_next_power_of_two()
        .map_or(MAX_POOL_BUF_SHIFT, |b| b.trailing_zeros())
        .clamp(abi::MIN_BUF_SHIFT, MAX_POOL_BUF_SHIFT);
    // Only the clamp to the largest size can leave a frame out.
    mtu_fits(mtu, shift).then_some(shift)
}

/// The pagefill interface's operations.
pub(crate) struct PagefillNetdev;

impl PagefillNetdev {
    /// Tears down what [`Operations::open`] set up; for `ndo_stop` and for
    /// open's failure path.
    fn teardown(dev: &Device<Self>) -> Result {
        let data = dev.data();
        data.misc.release();
        for q in data.queues.iter() {
            q.napi.stop();
        }
        // A device that is gone (unbound) holds nothing to hand back.
        let reset = match data.reset() {
            Err(e) if e != ENODEV => Err(e),
            _ => Ok(()),
        };
        // Destroying a pool may sleep: drop what the locks hand back after
        // they are released.
        for q in data.queues.iter() {
            let pool = bh::disabled(|| q.rx.lock().take());
            drop(pool);
            let slots = bh::disabled(|| q.tx.lock().stop(dev));
            drop(slots);
        }
        // The shared memory is cleared by the next start, before the device
        // sees it again.
        bh::disabled(|| *data.tables.lock() = Tables::new());
        reset
    }

    /// Applies new settings: stored for the next open, and if the interface
    /// is up it restarts with them (the device is reset, so frames it held
    /// are dropped and counted by the device).
    fn apply(dev: &Device<Self>, new: Settings) -> Result {
        Self::apply_with_mtu(dev, new, dev.mtu())
    }

    /// [`Self::apply`] for an interface about to have MTU `mtu`.
    fn apply_with_mtu(dev: &Device<Self>, new: Settings, mtu: u32) -> Result {
        let data = dev.data();
        let running = bh::disabled(|| data.queues[0].rx.lock().running());
        if !running {
            *data.settings.lock() = new;
            return Ok(());
        }
        Self::stop(dev)?;
        let old = core::mem::replace(&mut *data.settings.lock(), new);
        if let Err(e) = Self::start(dev, mtu) {
            // Back to what worked, if it still does.
            *data.settings.lock() = old;
            Self::start(dev, dev.mtu())?;
            data.sync_groups();
            return Err(e);
        }
        data.sync_groups();
        Ok(())
    }

    /// Brings the interface up as for MTU `mtu` (`ndo_open`, and restarts
    /// with new settings).
    fn start(dev: &Device<Self>, mtu: u32) -> Result {
        let data = dev.data();
        let set = data.settings();
        if !mtu_fits(mtu, set.rx.buf_shift) || set.queues > data.max_queues {
            return Err(EINVAL);
        }
        data.reset()?;
        // Allocations and interrupt requests may sleep: they happen before
        // the locks are taken and outside the registers' RCU read section.
        let started = dev
            .set_real_num_queues(set.queues)
            .and_then(|()| data.rings.clear())
            .and_then(|()| {
                (0..set.queues as usize)
                    .try_for_each(|i| Self::open_queue(dev, i, set.queues, &set))
            })
            .and_then(|()| data.misc.request(dev, data.misc_irq, c"pagefill-misc"))
            .and_then(|()| {
                let bar = data.bar.try_access().ok_or(ENODEV)?;
                bar.write32(set.coalesce_usecs, abi::reg::COALESCE_USECS);
                let status =
                    data.rings
                        .enable(&bar, set.queues as usize, set.rx.buf_shift, set.tx_shift)?;
                for i in 0..set.queues as usize {
                    bar.try_write32(
                        abi::arm::RX | abi::arm::TX,
                        abi::reg::queue(i, abi::reg::Q_ARM),
                    )?;
                }
                Ok(status)
            });
        let status = match started {
            Ok(s) => s,
            Err(e) => {
                let _ = Self::teardown(dev);
                return Err(e);
            }
        };
        // The default group, and the multicast list's once the core calls
        // ndo_set_rx_mode right after this.
        data.sync_groups();
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

    /// Sets up queue pair `i` of `n` and joins nothing yet.
    fn open_queue(dev: &Device<Self>, i: usize, n: u32, set: &Settings) -> Result {
        let data = dev.data();
        let q = &data.queues[i];
        let slots = TxState::new_slots(set.tx_shift)?;
        bh::disabled(|| q.tx.lock().install(slots, i as u32));
        let pool = PagePool::new(
            dev,
            &q.napi,
            set.rx.ring,
            set.rx.buf_shift - abi::MIN_BUF_SHIFT,
        )?;
        bh::disabled(|| {
            q.rx.lock()
                .install(pool, set.rx.ring, data.node_id, i as u8, n)
        });
        q.napi.start(dev, q.irq, QUEUE_IRQ_NAMES[i], i as u32)
    }
}

#[vtable]
impl Operations for PagefillNetdev {
    type Data = NetdevData;
    const ETHTOOL: Option<&'static kernel::bindings::ethtool_ops> =
        Some(&EthtoolTable::<Self>::TABLE);

    fn open(dev: &Device<Self>) -> Result {
        Self::start(dev, dev.mtu())
    }

    fn tx_timeout(dev: &Device<Self>, _queue: u32) {
        dev.data().tx_timeouts.fetch_add(1, Ordering::Relaxed);
        dev.schedule_restart();
    }

    /// Resets the device and starts again with the same settings: every
    /// buffer and frame the device held comes back (the frames are dropped,
    /// counted by the device), and the groups are joined again.
    fn restart(dev: &Device<Self>) -> Result {
        let data = dev.data();
        data.restarts.fetch_add(1, Ordering::Relaxed);
        let restarted = Self::stop(dev).and_then(|()| Self::start(dev, dev.mtu()));
        match restarted {
            Ok(()) => {
                data.sync_groups();
                Ok(())
            }
            Err(e) => {
                data.restarts_failed.fetch_add(1, Ordering::Relaxed);
                Err(e)
            }
        }
    }

    fn stop(dev: &Device<Self>) -> Result {
        dev.tx_disable();
        dev.carrier_off();
        Self::teardown(dev)
    }

    fn start_xmit(skb: SkBuff, dev: &Device<Self>) -> TxOutcome {
        let data = dev.data();
        // The stack picks a queue among the real ones, which are the
        // active pairs.
        let i = usize::from(skb.queue_mapping());
        let Some(q) = data.queues.get(i) else {
            return TxOutcome::Ok;
        };
        let Ok(rings) = data.rings.queue(i) else {
            return TxOutcome::Ok;
        };
        let queued = q.tx.lock().xmit(dev, rings, skb);
        match queued {
            Xmit::Queued(tail) => {
                if !dev.xmit_more() || dev.tx_stopped(i as u32) {
                    if let Some(bar) = data.bar.try_access() {
                        let _ = bar.try_write32(tail, abi::reg::queue(i, abi::reg::Q_TX_TAIL));
                    }
                }
                TxOutcome::Ok
            }
            Xmit::Busy(skb) => TxOutcome::Busy(skb),
            Xmit::Dropped => TxOutcome::Ok,
        }
    }

    fn get_stats64(dev: &Device<Self>, stats: &mut Stats64<'_>) {
        let rx = dev.data().rx_stats();
        stats.add_rx(rx.packets, rx.bytes, rx.dropped);
        stats.add_rx_errors(rx.bad);
        let tx = dev.data().tx_stats();
        stats.add_tx(tx.packets, tx.bytes, tx.dropped);
    }

    fn change_mtu(dev: &Device<Self>, mtu: u32) -> Result {
        // Buffers the user has not sized follow the MTU; those the user
        // sized stay while they hold a whole frame and otherwise grow to
        // the smallest that does. A new size restarts a running interface.
        let mut new = dev.data().settings();
        let shift = if !new.buf_len_chosen {
            default_buf_shift(mtu)
        } else if mtu_fits(mtu, new.rx.buf_shift) {
            Some(new.rx.buf_shift)
        } else {
            buf_shift_for(mtu)
        }
        .ok_or(EINVAL)?;
        if shift == new.rx.buf_shift {
            return Ok(());
        }
        new.rx.buf_shift = shift;
        Self::apply_with_mtu(dev, new, mtu)
    }

    fn queue_stats_rx(dev: &Device<Self>, idx: u32) -> QueueStatsRx {
        let rx = dev
            .data()
            .queues
            .get(idx as usize)
            .map(|q| bh::disabled(|| q.rx.lock().stats))
            .unwrap_or_default();
        QueueStatsRx {
            packets: rx.packets,
            bytes: rx.bytes,
            alloc_fail: rx.alloc_failed,
            csum_unnecessary: rx.csum_unnecessary,
            csum_none: rx.csum_none,
        }
    }

    fn queue_stats_tx(dev: &Device<Self>, idx: u32) -> QueueStatsTx {
        let tx = dev
            .data()
            .queues
            .get(idx as usize)
            .map(|q| bh::disabled(|| q.tx.lock().stats))
            .unwrap_or_default();
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
    const QUEUE_STATS: &'static [(&'static str, &'static str)] = &[
        ("rx", "packets"),
        ("rx", "bytes"),
        ("rx", "dropped"),
        ("rx", "bad_completions"),
        ("rx", "resyncs"),
        ("rx", "starved"),
        ("rx", "xon_doorbells"),
        ("rx", "page_alloc_failed"),
        ("rx", "copybreak"),
        ("rx", "frags"),
        ("rx", "buffers_allocated"),
        ("rx", "buffers_recycled"),
        ("rx", "csum_unnecessary"),
        ("rx", "csum_none"),
        ("rx", "merged_skbs"),
        ("rx", "merged_frames"),
        ("tx", "packets"),
        ("tx", "bytes"),
        ("tx", "dropped"),
        ("tx", "bad_completions"),
        ("tx", "sg_frames"),
        ("tx", "csum_offload"),
    ];
    const DEVICE_STATS: &'static [&'static CStr] = &[
        c"groups_joined",
        c"group_join_failed",
        c"device_fatal_errors",
        c"tx_timeouts",
        c"restarts",
        c"restarts_failed",
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

    fn stat_queues(dev: &Device<Self>) -> u32 {
        dev.data().settings().queues
    }

    fn stats(dev: &Device<Self>, out: &mut [u64]) {
        let data = dev.data();
        let mut out = out.iter_mut();
        for q in data.queues.iter().take(Self::stat_queues(dev) as usize) {
            let rx = bh::disabled(|| q.rx.lock().stats);
            let tx = bh::disabled(|| q.tx.lock().stats);
            let values = [
                rx.packets,
                rx.bytes,
                rx.dropped,
                rx.bad,
                rx.resync,
                rx.starved,
                rx.xon,
                rx.alloc_failed,
                rx.copybreak,
                rx.frags,
                rx.buf_alloc,
                rx.buf_recycled,
                rx.csum_unnecessary,
                rx.csum_none,
                rx.merged_skbs,
                rx.merged_frames,
                tx.packets,
                tx.bytes,
                tx.dropped,
                tx.bad,
                tx.sg,
                tx.csum,
            ];
            for (v, o) in Iterator::zip(values.into_iter(), &mut out) {
                *o = v;
            }
        }
        let mut device = [0u64; DEVICE_COUNTERS.len()];
        if let Some(bar) = data.bar.try_access() {
            for (v, reg) in device.iter_mut().zip(DEVICE_COUNTERS) {
                *v = bar.try_read32(reg).map_or(0, u64::from);
            }
        }
        let values = [
            data.groups_joined(),
            data.join_failed.load(Ordering::Relaxed),
            data.fatal_errors.load(Ordering::Relaxed),
            data.tx_timeouts.load(Ordering::Relaxed),
            data.restarts.load(Ordering::Relaxed),
            data.restarts_failed.load(Ordering::Relaxed),
        ];
        for (o, v) in Iterator::zip(out, Iterator::chain(values.into_iter(), device)) {
            *o = v;
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
        // ethtool passes the current size when the user gave none: only a
        // different one is the user's choice.
        if r.rx_buf_len != 0 && r.rx_buf_len != 1 << new.rx.buf_shift {
            let shift = r.rx_buf_len.trailing_zeros();
            if !r.rx_buf_len.is_power_of_two()
                || !(abi::MIN_BUF_SHIFT..=MAX_POOL_BUF_SHIFT).contains(&shift)
                || !mtu_fits(dev.mtu(), shift)
            {
                return Err(EINVAL);
            }
            new.rx.buf_shift = shift;
            new.buf_len_chosen = true;
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

    fn channels(dev: &Device<Self>) -> Channels {
        let data = dev.data();
        Channels {
            max_combined: data.max_queues,
            combined: data.settings().queues,
        }
    }

    fn set_channels(dev: &Device<Self>, ch: &Channels) -> Result {
        if !(1..=dev.data().max_queues).contains(&ch.combined) {
            return Err(EINVAL);
        }
        let mut new = dev.data().settings();
        new.queues = ch.combined;
        Self::apply(dev, new)
    }

    const PRIV_FLAGS: &'static [&'static CStr] = &[c"rx-udp-merge"];

    fn priv_flags(dev: &Device<Self>) -> u32 {
        u32::from(dev.data().udp_merge.load(Ordering::Relaxed))
    }

    fn set_priv_flags(dev: &Device<Self>, flags: u32) -> Result {
        // Taken up by the next poll: no restart.
        dev.data()
            .udp_merge
            .store(flags & PRIV_UDP_MERGE != 0, Ordering::Relaxed);
        Ok(())
    }
}

/// Bit of the private flag `rx-udp-merge`.
const PRIV_UDP_MERGE: u32 = 1 << 0;

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
            pr_warn!("the device reported a fatal error: resetting it\n");
            data.fatal_errors.fetch_add(1, Ordering::Relaxed);
            dev.carrier_off();
            dev.schedule_restart();
        }
        bar.write32(1, abi::reg::MISC_ARM);
    }
}

impl Poll for PagefillNetdev {
    fn poll(dev: &Device<Self>, napi: &Napi, budget: i32) -> i32 {
        let data = dev.data();
        let Some(i) = data
            .queues
            .iter()
            .position(|q| core::ptr::eq(&q.napi, napi))
        else {
            return 0;
        };
        let q = &data.queues[i];
        if let Ok(rings) = data.rings.queue(i) {
            q.tx.lock().clean(dev, rings);
        }
        // netpoll (netconsole) polls with a budget of 0 to reclaim transmit
        // buffers only, possibly with interrupts off: no receive, no page
        // pool, and NAPI stays scheduled (Documentation/networking/napi.rst).
        if budget == 0 {
            return 0;
        }
        let bar = data.bar.try_access();
        let (work, retired, broken, stalled) = {
            let mut rx = q.rx.lock();
            let work = rx.poll(dev, napi, &data.rings, budget, data.rx_offloads(dev));
            if let Some(bar) = &bar {
                rx.take_xons(|id| bar.write32(id, abi::reg::XON));
            }
            (
                work,
                rx.take_retired(),
                rx.take_broken(),
                rx.refill_stalled(),
            )
        };
        if let Some(stream) = broken {
            pr_warn!(
                "stream {}/{} stuck (starving with a buffer posted, its completions lost): resetting the device\n",
                abi::stream_group(stream),
                abi::stream_node(stream)
            );
            data.fatal_errors.fetch_add(1, Ordering::Relaxed);
            dev.schedule_restart();
        }
        // A group that finished leaving may be wanted again.
        if retired != 0 && data.tables.lock().release(retired) {
            data.sync_groups();
        }
        if stalled {
            // Poll again (from ksoftirqd if it lasts) until memory comes back.
            return budget;
        }
        if work < budget && napi.complete_done(work) {
            if let Some(bar) = &bar {
                let _ = bar.try_write32(
                    abi::arm::RX | abi::arm::TX,
                    abi::reg::queue(i, abi::reg::Q_ARM),
                );
            }
        }
        work.min(budget)
    }
}
