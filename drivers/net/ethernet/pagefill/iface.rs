// SPDX-License-Identifier: GPL-2.0

//! The pagefill network interface: its per-device data, its queue pairs,
//! and bringing it up and down. Its `net_device_ops` are in `ndo.rs`, its
//! ethtool operations in `ethtool_ops.rs`, its interrupts and NAPI poll in
//! `interrupts.rs`. The group sets and node tables it keeps are defined in
//! `groups.rs`, the MTU's bounds and the buffer sizes it checks in
//! `frame.rs`.
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
//! them) and device errors. Groups are joined and left across the queues
//! here (`sync_groups`): the device steers each stream of a group to one
//! queue, whose pool supplies that stream's buffers; each queue's receive
//! state belongs to its NAPI instance, which learns of the changes through
//! a mailbox.
//!
//! Locks: `settings`, `steering` and `device_counters` are mutexes,
//! process context only; `steering` is taken before the registers' RCU
//! read section, in which nothing may sleep. `wanted`, then `tables`, then
//! a queue's `mailbox` are spinlocks taken with bottom halves off in
//! process context and from NAPI; a queue's `tx` is shared by
//! `ndo_start_xmit` and NAPI. No lock is held while NAPI hands frames to
//! the stack.

use core::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};

use kernel::{
    io::Io,
    new_mutex,
    new_spinlock,
    pci,
    prelude::*,
    str::CStr,
    sync::{
        barrier::{mb, Write},
        Arc, Mutex, SpinLock,
    }, //
};

use crate::abi;
use crate::coalesce::QueueCoalesce;
use crate::frame::{default_buf_shift, mtu_fits, xdp_fits, xdp_frags_fit, xsk_fits, DEFAULT_MTU};
use crate::groups::{GroupSet, Table, Tables};
use crate::hw::{self, DeviceCounters, Quiesced, DEVICE_COUNTERS};
use crate::net::bh;
use crate::net::dim::Dim;
use crate::net::irq::DeviceIrq;
use crate::net::napi::{Napi, NapiOwned};
use crate::net::netdev::{Device, Features, Operations, Rtnl};
use crate::net::page_pool::PagePool;
use crate::net::xdp::{ProgSlot, RxQueue};
use crate::net::xsk::{XskPool, XskRxQueue};
use crate::rings::{Modes, Rings};
use crate::rx::{RxConfig, RxState};
use crate::rx_mailbox::MailSlot;
use crate::rx_skb::RxOffloads;
use crate::rx_stats::{PublishedRxStats, RxStats};
use crate::rx_xsk::XskRx;
pub(crate) use crate::settings::Settings;
use crate::steering::Steering;
use crate::tx::{TxState, TxStats};

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
    pub(crate) irq: u32,
    #[pin]
    pub(crate) napi: Napi,
    /// Receive state, NAPI's own: its poll uses it without a lock; open
    /// and stop set it up and tear it down while NAPI is stopped.
    pub(crate) rx: NapiOwned<RxState>,
    /// Group joins and leaves for the receive state, which NAPI reads.
    #[pin]
    pub(crate) mailbox: MailSlot,
    /// The receive counters as NAPI last published them.
    pub(crate) rx_stats: PublishedRxStats,
    /// Transmit state; `ndo_start_xmit` and NAPI share it.
    #[pin]
    pub(crate) tx: SpinLock<TxState>,
    /// Receive coalescing as ethtool set it for the queue.
    pub(crate) coalesce: QueueCoalesce,
}

impl Queue {
    fn new(irq: u32) -> impl PinInit<Self, Error> {
        try_pin_init!(Self {
            irq,
            napi <- Napi::new(),
            rx: NapiOwned::new(RxState::new()),
            mailbox <- MailSlot::new(),
            rx_stats: PublishedRxStats::new(),
            coalesce: QueueCoalesce::new(Settings::DEFAULT.coalesce_usecs),
            tx <- new_spinlock!(TxState::new()),
        }? Error)
    }
}

/// The interface's per-device data.
#[pin_data]
pub(crate) struct NetdevData {
    /// The registers; access is revoked when the PCI device unbinds.
    pub(crate) bar: pci::DevresBar<{ abi::BAR0_SIZE }>,
    pub(crate) rings: Rings,
    /// Queue pairs this NIC can use: the device's, as far as memory and
    /// MSI-X vectors were allocated at probe.
    pub(crate) max_queues: u32,
    /// Linux interrupt number of the misc vector, and its registration.
    pub(crate) misc_irq: u32,
    pub(crate) misc: DeviceIrq,
    /// Fatal device errors reported by the misc vector.
    pub(crate) fatal_errors: AtomicU64,
    /// Transmit queues the watchdog found stuck.
    pub(crate) tx_timeouts: AtomicU64,
    /// Restarts after a fatal error or a transmit timeout, and those that
    /// failed (the device did not come back from its reset).
    pub(crate) restarts: AtomicU64,
    pub(crate) restarts_failed: AtomicU64,
    /// Groups that could not be joined for want of a node table.
    pub(crate) join_failed: AtomicU64,
    /// Private flag `rx-udp-merge`: merge runs of a flow's UDP datagrams
    /// (see [`crate::udp_merge`]). Read once per poll.
    pub(crate) udp_merge: AtomicBool,
    /// The XDP program every frame received goes through, if one is
    /// attached; read once per poll.
    pub(crate) xdp: ProgSlot,
    /// Link speed the device reported at probe, Mb/s.
    pub(crate) link_mbps: u32,
    /// The NIC's node id on the fabric.
    pub(crate) node_id: u8,
    /// The device writes flow hashes into its records
    /// ([`crate::hw::Identity::has_rx_hash`]).
    pub(crate) rx_hash: bool,
    /// Each queue pair has its own coalescing timer
    /// ([`crate::hw::Identity::has_queue_coalesce`]).
    pub(crate) queue_coalesce: bool,
    /// Queue pairs in use since the interface last opened: what NAPI and
    /// the address list's updates go by, without the settings' lock.
    pub(crate) queues_in_use: AtomicU32,
    /// Settings, read and written in process context only (ethtool and the
    /// interface's operations): a mutex, so that a softirq that tried to
    /// take it would be caught at once rather than deadlock.
    #[pin]
    pub(crate) settings: Mutex<Settings>,
    /// The RSS key, indirection table and hash fields and the flow rules
    /// (ethtool), changed under RTNL; process context.
    #[pin]
    pub(crate) steering: Mutex<Steering>,
    /// The device's counters, kept 64-bit across its resets; process
    /// context.
    #[pin]
    pub(crate) device_counters: Mutex<DeviceCounters>,
    /// The groups the multicast list asks for (always the default group).
    #[pin]
    pub(crate) wanted: SpinLock<GroupSet>,
    /// Taken after `wanted` and before any queue's receive lock.
    #[pin]
    pub(crate) tables: SpinLock<Tables>,
    #[pin]
    pub(crate) queues: [Queue; abi::MAX_QUEUES],
    /// The XSK pools bound to queues for AF_XDP in zero-copy mode (under
    /// RTNL); a queue with one runs in chunk mode while in use.
    #[pin]
    pub(crate) xsk: Mutex<[Option<Arc<XskPool>>; abi::MAX_QUEUES]>,
    /// Queues with a pool bound (bit per queue), for `ndo_xsk_wakeup`,
    /// which may not sleep.
    pub(crate) xsk_queues: AtomicU32,
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
    pub(crate) rx_hash: bool,
    pub(crate) queue_coalesce: bool,
}

impl NetdevData {
    /// Whether the attached XDP program, if any, sees every frame of an
    /// `mtu`-byte payload whole in buffers of 2^`buf_shift` bytes: in one,
    /// or, for a program that takes fragments (`xdp.frags`), in a few
    /// (`xdp_check`).
    pub(crate) fn xdp_sees_whole(&self, rtnl: &Rtnl<'_>, mtu: u32, buf_shift: u32) -> bool {
        let one_buffer = !self.xdp.needs_one_buffer(rtnl) || xdp_fits(mtu, buf_shift);
        let few_buffers = !self.xdp.is_set() || xdp_frags_fit(mtu, buf_shift);
        one_buffer && few_buffers
    }

    /// The source nodes whose frames may reach the queues (bit per node):
    /// every node but this NIC's own; in loopback, where the device hears
    /// only itself, its own alone.
    pub(crate) fn senders(&self, set: &Settings) -> u32 {
        let own = 1 << self.node_id;
        if set.loopback {
            own
        } else {
            (u32::MAX >> (32 - abi::MAX_NODES)) & !own
        }
    }

    /// The receive offloads in force now.
    pub(crate) fn rx_offloads(&self, dev: &Device<PagefillNetdev>) -> RxOffloads {
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
            hash: features.contains(Features::RXHASH),
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
            xdp: ProgSlot::new(),
            restarts: AtomicU64::new(0),
            restarts_failed: AtomicU64::new(0),
            join_failed: AtomicU64::new(0),
            udp_merge: AtomicBool::new(false),
            link_mbps: p.link_mbps,
            node_id: p.node_id,
            rx_hash: p.rx_hash,
            queue_coalesce: p.queue_coalesce,
            queues_in_use: AtomicU32::new(p.queues),
            settings <- new_mutex!(Settings {
                queues: p.queues,
                rx: RxConfig {
                    buf_shift: default_buf_shift(DEFAULT_MTU).unwrap_or(abi::MIN_BUF_SHIFT),
                    ..RxConfig::DEFAULT
                },
                ..Settings::DEFAULT
            }),
            steering <- new_mutex!(Steering::new(p.queues)),
            device_counters <- new_mutex!(DeviceCounters {
                last: [0; DEVICE_COUNTERS.len()],
                total: [0; DEVICE_COUNTERS.len()],
            }),
            wanted <- new_spinlock!(GroupSet::default_only()),
            tables <- new_spinlock!(Tables::new()),
            queues <- pin_init::pin_init_array_from_fn(|i| Queue::new(irqs[i])),
            xsk <- new_mutex!([const { None }; abi::MAX_QUEUES]),
            xsk_queues: AtomicU32::new(0),
        }? Error)
    }

    /// Whether frames of an `mtu`-byte payload fit every bound XSK pool's
    /// buffers ([`xsk_fits`]).
    pub(crate) fn xsk_fit(&self, mtu: u32) -> bool {
        self.xsk
            .lock()
            .iter()
            .flatten()
            .all(|pool| xsk_fits(mtu, pool.room(), pool.frags()))
    }

    /// Resets the device: it stops and hands back every buffer. May sleep.
    /// Its counters, which the reset clears, are taken into the totals
    /// first.
    pub(crate) fn reset(&self) -> Result<Quiesced> {
        let mut counters = self.device_counters.lock();
        counters.update(&self.bar);
        let reset = hw::reset_revocable(&self.bar);
        // A reset clears the registers; one that failed may not have.
        if reset.is_ok() {
            counters.last = [0; DEVICE_COUNTERS.len()];
        }
        reset
    }

    /// The settings; process context (the lock is a mutex).
    pub(crate) fn settings(&self) -> Settings {
        *self.settings.lock()
    }

    /// The queue pairs in use while the interface is up. Any context.
    pub(crate) fn active(&self) -> &[Queue] {
        let n = self.queues_in_use.load(Ordering::Acquire) as usize;
        &self.queues[..n.min(abi::MAX_QUEUES)]
    }

    /// The receive counters summed over the queues.
    pub(crate) fn rx_stats(&self) -> RxStats {
        let mut sum = RxStats::default();
        for q in self.queues.iter() {
            sum.add(&q.rx_stats.read());
        }
        sum
    }

    /// The transmit counters summed over the queues.
    pub(crate) fn tx_stats(&self) -> TxStats {
        let mut sum = TxStats::default();
        for q in self.queues.iter() {
            sum.add(&bh::disabled(|| q.tx.lock().stats));
        }
        sum
    }
}

impl NetdevData {
    /// Joins the wanted groups not joined and leaves the joined ones no
    /// longer wanted, on a running interface. Any context: the queues'
    /// NAPI instances carry the changes out, told through their mailboxes.
    ///
    /// A leave is posted before the master entry is cleared and the group
    /// flushed, a join after the node table is emptied and before the
    /// master entry points at it: a queue that meets a completion of a
    /// group it does not know reads its mailbox, which has the change.
    pub(crate) fn sync_groups(&self) {
        let Some(bar) = self.bar.try_access() else {
            return;
        };
        bh::disabled(|| {
            let wanted = *self.wanted.lock();
            let mut tables = self.tables.lock();
            if !tables.up {
                return;
            }
            let queues = self.active();
            // Leave first: that frees tables for the joins (once the
            // queues let go of them).
            loop {
                let unwanted = tables.joined().find(|(_, g)| !wanted.contains(*g));
                let Some((t, g)) = unwanted else {
                    break;
                };
                tables.state[t] = Table::Leaving(g);
                for q in queues {
                    q.mailbox.post_leave(t, g);
                }
                let _ = self.rings.set_master(g, None);
                // The device closes the group's streams and marks the end
                // of its completions on every queue; the read returns once
                // it has, after which it no longer reads the table.
                bar.write32(u32::from(g), abi::reg::GROUP_FLUSH);
                let _ = bar.read32(abi::reg::STATUS);
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
                if self.rings.clear_table(t).is_err() {
                    self.join_failed.fetch_add(1, Ordering::Relaxed);
                    continue;
                }
                for q in queues {
                    q.mailbox.post_join(t, g);
                }
                tables.holders[t] = queues.len() as u8;
                tables.state[t] = Table::Joined(g);
                // The mail and the emptied entries before the master entry
                // the device reads.
                mb(Write);
                let _ = self.rings.set_master(g, Some(t));
            }
        });
    }

    /// Groups joined, for ethtool.
    pub(crate) fn groups_joined(&self) -> u64 {
        bh::disabled(|| self.tables.lock().joined().count() as u64)
    }
}

/// The pagefill interface's operations.
pub(crate) struct PagefillNetdev;

impl PagefillNetdev {
    /// Tears down what [`Operations::open`] set up; for `ndo_stop` and for
    /// open's failure path.
    ///
    /// The device's buffers and frames go back only if it was reset: one
    /// that did not come back from its reset loses bus mastering, and what
    /// it was given stays allocated and mapped for good (it may still write
    /// them); the interface can be brought up again once a reset works.
    pub(crate) fn teardown(dev: &Device<Self>, rtnl: &Rtnl<'_>) -> Result {
        let data = dev.data();
        // No more group changes: the queues stop reading their mail.
        bh::disabled(|| data.tables.lock().up = false);
        data.misc.release();
        for q in data.queues.iter() {
            q.napi.stop(rtnl);
        }
        let reset = data.reset();
        if let Err(e) = &reset {
            dev.set_bus_master(false);
            if *e == ENODEV {
                // Unbound: the PCI core disables the device on removal.
                dev.err(format_args!(
                    "the device is gone: bus mastering off, its buffers abandoned"
                ));
            } else {
                dev.err(format_args!(
                    "the device did not come back from its reset ({e:?}): \
                     bus mastering off, its buffers abandoned"
                ));
            }
        }
        // Destroying a pool may sleep: drop what the locks hand back after
        // they are released.
        for q in data.queues.iter() {
            let pool =
                q.rx.stopped_mut(&q.napi, rtnl, |rx| {
                    let pool = match &reset {
                        Ok(quiesced) => rx.take(quiesced),
                        Err(_) => rx.abandon(),
                    };
                    q.rx_stats.publish(&rx.stats);
                    pool
                })
                .flatten();
            let slots = bh::disabled(|| {
                let mut tx = q.tx.lock();
                match &reset {
                    Ok(quiesced) => tx.stop(dev, rtnl, quiesced),
                    Err(_) => tx.abandon(dev, rtnl),
                }
            });
            match (&reset, pool) {
                (Err(_), Some(pool)) => pool.leak(),
                (_, pool) => drop(pool),
            }
            drop(slots);
        }
        // The shared memory is cleared by the next start, before the device
        // sees it again.
        bh::disabled(|| *data.tables.lock() = Tables::new());
        match reset {
            Err(e) if e != ENODEV => Err(e),
            _ => Ok(()),
        }
    }

    /// Applies new settings: stored for the next open, and if the interface
    /// is up it restarts with them (the device is reset, so frames it held
    /// are dropped and counted by the device).
    pub(crate) fn apply(dev: &Device<Self>, rtnl: &Rtnl<'_>, new: Settings) -> Result {
        Self::apply_with_mtu(dev, rtnl, new, dev.mtu())
    }

    /// [`Self::apply`] for an interface about to have MTU `mtu`.
    pub(crate) fn apply_with_mtu(
        dev: &Device<Self>,
        rtnl: &Rtnl<'_>,
        new: Settings,
        mtu: u32,
    ) -> Result {
        let data = dev.data();
        if !data.xdp_sees_whole(rtnl, mtu, new.rx.buf_shift) {
            return Err(EINVAL);
        }
        let running = bh::disabled(|| data.tables.lock().up);
        if !running {
            *data.settings.lock() = new;
            return Ok(());
        }
        Self::stop(dev, rtnl)?;
        let old = core::mem::replace(&mut *data.settings.lock(), new);
        if let Err(e) = Self::start(dev, rtnl, mtu) {
            // Back to what worked, if it still does.
            *data.settings.lock() = old;
            Self::start(dev, rtnl, dev.mtu())?;
            data.sync_groups();
            return Err(e);
        }
        data.sync_groups();
        Ok(())
    }

    /// After queue `queue`'s XSK pool was bound or unbound: a running
    /// interface whose queue is in use restarts, the queue in chunk mode or
    /// out of it.
    pub(crate) fn restart_for_xsk(dev: &Device<Self>, rtnl: &Rtnl<'_>, queue: u32) -> Result {
        let data = dev.data();
        let running = bh::disabled(|| data.tables.lock().up);
        if !running || queue >= data.queues_in_use.load(Ordering::Acquire) {
            return Ok(());
        }
        Self::apply(dev, rtnl, data.settings())
    }

    /// Brings the interface up as for MTU `mtu` (`ndo_open`, and restarts
    /// with new settings).
    pub(crate) fn start(dev: &Device<Self>, rtnl: &Rtnl<'_>, mtu: u32) -> Result {
        let data = dev.data();
        let set = data.settings();
        if !mtu_fits(mtu, set.rx.buf_shift) || set.queues > data.max_queues {
            return Err(EINVAL);
        }
        data.reset()?;
        // A queue with an XSK pool runs in chunk mode, its frames as long
        // as the pool's buffers take (read here: the registers' RCU read
        // section below may not sleep).
        let chunk_rooms: [u32; abi::MAX_QUEUES] = {
            let xsk = data.xsk.lock();
            core::array::from_fn(|i| xsk[i].as_ref().map_or(0, |p| p.room()))
        };
        // Back on after a teardown whose reset failed turned it off: the
        // device was reset now, and holds nothing of before.
        dev.set_bus_master(true);
        // Allocations and interrupt requests may sleep: they happen before
        // the locks are taken and outside the registers' RCU read section.
        let started = dev
            .set_real_num_queues(rtnl, set.queues)
            .and_then(|()| {
                // Nothing runs on the queues now (NAPI is stopped): the
                // count can change under them. It follows the stack's real
                // number of queues, which the queue stats' base relies on.
                data.queues_in_use.store(set.queues, Ordering::Release);
                data.rings.clear()
            })
            .and_then(|()| {
                (0..set.queues as usize).try_for_each(|i| Self::open_queue(dev, rtnl, i, &set))
            })
            .and_then(|()| data.misc.request(dev, data.misc_irq, c"pagefill-misc"))
            .and_then(|()| {
                // Taken before the registers' RCU read section, in which
                // nothing may sleep.
                let steering = data.steering.lock();
                let bar = data.bar.try_access().ok_or(ENODEV)?;
                bar.write32(set.coalesce_usecs, abi::reg::COALESCE_USECS);
                // Queues of a timer of their own (ethtool --per-queue)
                // start with it; adaptive ones with it too, until their
                // poll applies net_dim()'s.
                for (i, q) in data.queues.iter().enumerate().take(set.queues as usize) {
                    let usecs = q.coalesce.usecs();
                    if data.queue_coalesce && usecs != set.coalesce_usecs {
                        bar.try_write32(usecs, abi::reg::queue(i, abi::reg::Q_COALESCE_USECS))?;
                    }
                }
                // The reset cleared the steering registers.
                steering.program(&bar)?;
                // The device hashes every frame when it can: the hash costs
                // it nothing, and the stack's `rxhash` feature decides per
                // poll whether skbs and XDP get it.
                let status = data.rings.enable(
                    &bar,
                    set.queues as usize,
                    set.rx.buf_shift,
                    set.tx_shift,
                    Modes {
                        rx_hash: data.rx_hash,
                        loopback: set.loopback,
                        pause: set.pause,
                    },
                    &chunk_rooms,
                )?;
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
                let _ = Self::teardown(dev, rtnl);
                return Err(e);
            }
        };
        // The default group, and the multicast list's once the core calls
        // ndo_set_rx_mode right after this.
        bh::disabled(|| data.tables.lock().up = true);
        data.sync_groups();
        if status & abi::status::LINK_UP != 0 {
            dev.carrier_on();
        } else {
            dev.carrier_off();
        }
        // The device reads the rings: frames may be queued.
        for q in data.active() {
            bh::disabled(|| q.tx.lock().set_enabled(true));
        }
        // Woken, not only started: after a restart or a ring change, frames
        // the qdisc held while the queues were off go out now.
        dev.tx_wake_all_queues();
        // Link changes from here on come by the misc vector (at once, if
        // one is already pending).
        if let Some(bar) = data.bar.try_access() {
            bar.write32(1, abi::reg::MISC_ARM);
        }
        Ok(())
    }

    /// Sets up queue pair `i` and joins nothing yet.
    pub(crate) fn open_queue(
        dev: &Device<Self>,
        rtnl: &Rtnl<'_>,
        i: usize,
        set: &Settings,
    ) -> Result {
        let data = dev.data();
        let q = &data.queues[i];
        let slots = TxState::new_slots(set.tx_shift)?;
        let xsk = data.xsk.lock()[i].clone();
        bh::disabled(|| q.tx.lock().install(slots, i as u32, xsk.clone()));
        let pool = PagePool::new(
            dev,
            &q.napi,
            set.rx.ring,
            // A buffer of at least 2^buf_shift bytes, in pages of the
            // host's size (a buffer smaller than a page takes a page).
            set.rx
                .buf_shift
                .saturating_sub(kernel::page::PAGE_SHIFT as u32),
        )?;
        let xdp_rxq = RxQueue::new(dev, i as u32, &q.napi, &pool)?;
        let xsk = match xsk {
            Some(xsk) => Some(XskRx::new(
                XskRxQueue::new(dev, i as u32, &q.napi, &xsk)?,
                xsk,
            )?),
            None => None,
        };
        // The queue's timer once the device is enabled (start()); a device
        // of one timer for all has no adaptive coalescing.
        let usecs = if data.queue_coalesce {
            q.coalesce.usecs()
        } else {
            set.coalesce_usecs
        };
        q.coalesce.applied(usecs);
        let dim = if data.queue_coalesce {
            Some(Dim::new()?)
        } else {
            None
        };
        q.mailbox.clear();
        let unused_dim =
            q.rx.stopped_mut(&q.napi, rtnl, |rx| {
                rx.install(pool, xdp_rxq, xsk, set.rx.ring, data.senders(set), i as u8)
                    .map(|()| rx.moderation.start(dim, usecs))
            })
            .ok_or(EBUSY)??;
        drop(unused_dim);
        q.napi.start(rtnl, dev, q.irq, QUEUE_IRQ_NAMES[i], i as u32)
    }
}
