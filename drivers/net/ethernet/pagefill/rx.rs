// SPDX-License-Identifier: GPL-2.0

//! The receive path: for every stream of a joined group,
//! a buffer posted in the group's node table ahead of need; the NIC packs
//! frames into it and reports it; NAPI polls completions (by phase, no MMIO
//! read), checks every field against what the driver posted, splits the
//! buffer into skbs, refills the entry, and rings XON only for a stream the
//! device reported starved.
//!
//! A stream gets its first buffer when it first sends: joining a group posts
//! nothing, the device reports the stream starved (pausing its sender, the
//! frames held), and the driver posts and rings XON. From then on its entry
//! is refilled ahead of need. So the pages pinned follow the streams that
//! have sent since the group was joined, not the table's 31 nodes a group.
//!
//! The buffers that come back written are split into skbs in `rx_skb.rs`,
//! their frames run through an XDP program in `rx_xdp.rs`, or in zero-copy
//! mode handed to an AF_XDP socket in `rx_xsk.rs`: each of these paths is
//! lent the part of the state it uses (the counters, the offloads in force,
//! its own queue state), and none of them sees the streams. Group changes
//! reach the state through `rx_mailbox.rs`, and its counters the statistics
//! paths through `rx_stats.rs`.
//!
//! The buffers the device can hold (posted or being filled) are limited by
//! the ring size (`ethtool -G rx`). An entry that cannot get a buffer within
//! the limit waits; buffers coming back go to waiting entries in turn, so a
//! small ring makes streams starve (the device pauses their senders) but
//! loses nothing.

use kernel::prelude::*;

use crate::abi;
use crate::coalesce::Moderation;
use crate::hw::Quiesced;
use crate::net::napi::PollCtx;
use crate::net::netdev::{Device, Operations};
use crate::net::page_pool::PagePool;
use crate::net::xdp::{RxQueue, XdpRunner};
use crate::rings::{Entry, Rings, MAX_JOINED};
use crate::rx_mailbox::MailSlot;
use crate::rx_skb::{RxOffloads, SkbPath, Split};
use crate::rx_slot::{DeviceBuf, Slot};
use crate::rx_stats::RxStats;
use crate::rx_xdp::{XdpPath, XdpPoll};
use crate::rx_xsk::{NoList, XskPath, XskRx};

mod completion;

/// Starvation reports in a row, with a buffer posted and no completion
/// naming the stream, after which the stream is stuck. Races account for a
/// few (a report older than the post, one per doorbell in flight); a stuck
/// stream gets there within milliseconds.
const STUCK_STARVATIONS: u16 = 64;

/// A joined group.
struct Group {
    id: u16,
    /// Index of its node table in [`Rings`].
    table: usize,
    slots: [Slot; abi::MAX_NODES],
    /// Nodes whose entry is empty and wants a buffer (bit per node).
    waiting: u32,
    /// Nodes the device reported starved that are owed an XON once their
    /// entry has a buffer.
    starved: u32,
    /// Nodes refilled after starving: XON to ring (bit per node).
    xon: u32,
    /// Being left: nothing is posted for it; the group goes at the
    /// device's FLUSHED marker, which says that no completion of the group
    /// follows on this queue.
    leaving: bool,
}

/// Receive settings, from ethtool.
#[derive(Clone, Copy)]
pub(crate) struct RxConfig {
    /// Buffers the device may hold at once (posted or being filled).
    pub(crate) ring: u32,
    /// Buffer size as a power of two, 12 (a page) and up.
    pub(crate) buf_shift: u32,
}

impl RxConfig {
    pub(crate) const DEFAULT: Self = Self {
        ring: 1024,
        buf_shift: abi::MIN_BUF_SHIFT,
    };
    /// Two buffers for each of the 31 other nodes of a group and a spare:
    /// below that, a single busy group starves by design.
    pub(crate) const MIN_RING: u32 = 64;
    pub(crate) const MAX_RING: u32 = 16384;
}

/// What the receive path owns while the interface is up.
pub(crate) struct RxState {
    /// The pool the queue's buffers come from, while it has one.
    pool: Option<PagePool>,
    /// Room for [`MAX_JOINED`] from install on: a join never allocates.
    groups: KVVec<Group>,
    /// Node tables of groups this queue finished leaving (bit per table),
    /// for the caller to release.
    retired: u64,
    /// This queue pair's index: its column of every node table.
    queue: u8,
    /// Buffers posted or held by the device.
    outstanding: u32,
    ring: u32,
    /// Where the next search for a waiting entry starts (group index).
    cursor: usize,
    /// A stream found stuck (see [`STUCK_STARVATIONS`]): the device needs a
    /// reset.
    broken: Option<u32>,
    /// The last refill stopped for want of a page.
    alloc_failed: bool,
    /// The source nodes whose frames the device may steer to this queue
    /// (bit per node): the others get no buffers.
    senders: u32,
    /// Completions consumed, free running.
    head: u32,
    /// A completion failed validation in this poll: it may have been a
    /// stream's starvation report, which the device does not repeat.
    report_lost: bool,
    /// The buffer being split, if the last poll's budget ran out in it.
    split: Option<Split>,
    /// The queue as XDP programs see it, registered with `pool`.
    xdp_rxq: Option<RxQueue>,
    /// The buffer frames are run through an XDP program in, kept from one
    /// frame to the next while programs drop or pass them.
    xdp_runner: XdpRunner,
    /// In zero-copy mode (an AF_XDP socket's pool bound to the queue), the
    /// pool whose buffers the device writes frames into, in chunk mode.
    pub(crate) xsk: Option<XskRx>,

    /// The offloads in force for this poll.
    offloads: RxOffloads,
    pub(crate) stats: RxStats,
    /// The queue's coalescing timer, as its poll applies it.
    pub(crate) moderation: Moderation,
}

const _: () = assert!(MAX_JOINED <= 64);

impl RxState {
    pub(crate) fn new() -> Self {
        Self {
            pool: None,
            groups: KVVec::new(),
            retired: 0,
            queue: 0,
            outstanding: 0,
            ring: RxConfig::DEFAULT.ring,
            cursor: 0,
            senders: 0,
            head: 0,
            report_lost: false,
            split: None,
            xdp_rxq: None,
            xdp_runner: XdpRunner::new(),
            xsk: None,
            offloads: RxOffloads::default(),
            broken: None,
            alloc_failed: false,
            stats: RxStats::default(),
            moderation: Moderation::new(),
        }
    }

    /// Starts receiving into `pool`'s buffers from completion 0, with at
    /// most `ring` buffers with the device, as queue `queue`, from the
    /// source nodes in `senders` (bit per node); with `xsk`, in chunk
    /// mode, into its buffers (`pool` then holds the chunk lists). The
    /// rings must be cleared.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn install(
        &mut self,
        pool: PagePool,
        xdp_rxq: RxQueue,
        xsk: Option<XskRx>,
        ring: u32,
        senders: u32,
        queue: u8,
    ) -> Result {
        // Joins happen in NAPI, where nothing may sleep: room for every
        // group the interface can join is made here.
        self.groups = KVVec::with_capacity(MAX_JOINED, GFP_KERNEL)?;
        self.split = None;
        self.senders = senders;
        self.queue = queue;
        self.pool = Some(pool);
        self.xdp_rxq = Some(xdp_rxq);
        self.xsk = xsk;
        self.xdp_runner.clear();
        self.retired = 0;
        self.outstanding = 0;
        self.ring = ring;
        self.cursor = 0;
        self.head = 0;
        self.broken = None;
        Ok(())
    }

    /// Takes every buffer back from the device, which `_reset` proves was
    /// reset (so it holds none), and returns the pool for the caller to
    /// drop outside the lock (destroying a pool may sleep).
    pub(crate) fn take(&mut self, reset: &Quiesced) -> Option<PagePool> {
        for mut g in core::mem::take(&mut self.groups) {
            for slot in g.slots.iter_mut() {
                slot.reset(reset);
            }
        }
        self.split = None;
        self.xdp_runner.clear();
        self.xdp_rxq = None;
        // After every buffer of its pool went back.
        self.xsk = None;
        self.retired = 0;
        self.outstanding = 0;
        self.pool.take()
    }

    /// After a reset that failed: the device may still write any buffer it
    /// was given, so none goes back to the pool; they stay allocated and
    /// mapped for good (the pool with them). The pool is returned to be
    /// dropped: the core frees it only once every page came back, never.
    pub(crate) fn abandon(&mut self) -> Option<PagePool> {
        for mut g in core::mem::take(&mut self.groups) {
            for slot in g.slots.iter_mut() {
                slot.abandon();
            }
        }
        self.split = None;
        self.xdp_runner.clear();
        self.xdp_rxq = None;
        self.xsk = None;
        self.retired = 0;
        self.outstanding = 0;
        self.pool.take()
    }

    /// This queue pair's node-table entry for `node`.
    fn entry(&self, node: usize) -> Option<Entry> {
        Entry::of(usize::from(self.queue), node)
    }

    /// Joins `group` with node table `table`, whose entries the caller
    /// emptied: a stream's first frame finds its entry empty and the device
    /// reports it starved, which posts its first buffer. The caller
    /// publishes the table in the master entry after it posted the join to
    /// every queue's mailbox. Never allocates (room was made at install).
    fn join(&mut self, group: u16, table: usize) {
        if usize::from(group) >= abi::MAX_GROUPS
            || table >= MAX_JOINED
            || self.pool.is_none()
            || self
                .groups
                .iter()
                .any(|g| g.id == group || g.table == table)
        {
            self.stats.bad_mail += 1;
            return;
        }
        let g = Group {
            id: group,
            table,
            slots: Default::default(),
            waiting: 0,
            starved: 0,
            xon: 0,
            leaving: false,
        };
        if self.groups.push_within_capacity(g).is_err() {
            self.stats.bad_mail += 1;
        }
    }

    /// Starts leaving `group`: the caller is about to clear its master
    /// entry and flush it. No buffer is posted for it any more; those
    /// still posted come back at the device's FLUSHED marker, those it
    /// holds with their completions, and the group goes with the last.
    fn leave(&mut self, group: u16) {
        let Some(g) = self.groups.iter_mut().find(|g| g.id == group && !g.leaving) else {
            self.stats.bad_mail += 1;
            return;
        };
        g.leaving = true;
        g.waiting = 0;
        g.starved = 0;
        g.xon = 0;
    }

    /// Applies the group changes in `mailbox`: joins first (a table is
    /// reused only after every queue let go of it, so a join never follows
    /// a leave of the same table in one batch).
    fn read_mail(&mut self, mailbox: &MailSlot) {
        let Some(mail) = mailbox.take() else {
            return;
        };
        for (t, group) in mail.joins() {
            self.join(group, t);
        }
        for (_, group) in mail.leaves() {
            self.leave(group);
        }
    }

    /// Node tables this queue let go since the last call (bit per table).
    pub(crate) fn take_retired(&mut self) -> u64 {
        core::mem::take(&mut self.retired)
    }

    /// Forgets group `idx` and lets go of its table.
    fn retire(&mut self, idx: usize) {
        let Some(g) = self.groups.get(idx) else {
            return;
        };
        self.retired |= 1u64 << g.table;
        // Order does not matter: swap the last group into the gap.
        let last = self.groups.len() - 1;
        self.groups.swap(idx, last);
        self.groups.truncate(last);
    }

    /// Posts buffers in waiting entries, round-robin over the groups:
    /// first the entries of streams the device reported starved (their
    /// senders are paused and have frames to send), while the ring limit
    /// allows; then, ahead of need, other empty entries, but only while
    /// that leaves one buffer of the limit free. A buffer posted ahead of
    /// need can sit in the entry of a stream that has stopped sending, and
    /// the host cannot take a posted buffer back; keeping one free means a
    /// starved stream always gets a buffer once the device hands one back,
    /// however small the ring.
    fn fill_waiting(&mut self, ctx: &PollCtx<'_>, rings: &Rings) {
        self.alloc_failed = false;
        self.fill(ctx, rings, true);
        self.fill(ctx, rings, false);
        if let Some(x) = &self.xsk {
            // Woken by the program when it gives buffers, if it asked to
            // be (else the retry timer polls).
            x.pool.set_need_wakeup(ctx, self.alloc_failed);
        }
    }

    /// A buffer for an entry, or in zero-copy mode a chunk list; `None`
    /// (counted) without memory or, in zero-copy mode, without a buffer in
    /// the socket's fill ring.
    fn alloc_buf(&mut self, ctx: &PollCtx<'_>) -> Option<DeviceBuf> {
        let pool = self.pool.as_ref()?;
        let made = match &mut self.xsk {
            None => pool
                .alloc(ctx)
                .map(|p| DeviceBuf::page(p.post()))
                .ok_or(NoList::Memory),
            Some(x) => crate::rx_xsk::chunk_list(ctx, pool, x),
        };
        match made {
            Ok(buf) => Some(buf),
            Err(why) => {
                match why {
                    NoList::Memory => self.stats.alloc_failed += 1,
                    NoList::FillEmpty => self.stats.xsk_fill_empty += 1,
                }
                self.alloc_failed = true;
                None
            }
        }
    }

    fn fill(&mut self, ctx: &PollCtx<'_>, rings: &Rings, starved_only: bool) {
        let n = self.groups.len();
        let reserve = if starved_only { 0 } else { 1 };
        for i in 0..n {
            let gi = (self.cursor + i) % n;
            loop {
                let g = &self.groups[gi];
                let want = if starved_only {
                    g.waiting & g.starved
                } else {
                    g.waiting
                };
                if want == 0 {
                    break;
                }
                if self.outstanding + reserve >= self.ring {
                    self.cursor = gi;
                    return;
                }
                let Some(buf) = self.alloc_buf(ctx) else {
                    // Counted; the next poll tries again.
                    self.cursor = gi;
                    return;
                };
                let g = &mut self.groups[gi];
                let node = want.trailing_zeros() as usize;
                g.waiting &= !(1 << node);
                let table = g.table;
                let Some(entry) = Entry::of(usize::from(self.queue), node) else {
                    continue;
                };
                if !g.slots[node].post(rings, table, entry, buf) {
                    continue;
                }
                self.outstanding += 1;
                self.stats.buf_alloc += 1;
                if g.starved & (1 << node) != 0 {
                    g.starved &= !(1 << node);
                    g.xon |= 1 << node;
                }
            }
        }
        if !starved_only {
            self.cursor = if n == 0 { 0 } else { (self.cursor + 1) % n };
        }
    }

    /// Processes completions until the poll's budget of skbs went up the
    /// stack; returns the work done (skbs, and completions that delivered
    /// none), at most the budget. A buffer whose frames would overrun the
    /// budget is split on in the next poll.
    pub(crate) fn poll<T: Operations>(
        &mut self,
        dev: &Device<T>,
        ctx: &PollCtx<'_>,
        rings: &Rings,
        mailbox: &MailSlot,
        offloads: RxOffloads,
        xdp: Option<&XdpPoll<'_>>,
    ) -> i32 {
        let Ok(qr) = rings.queue(usize::from(self.queue)) else {
            return 0;
        };
        let budget = ctx.budget();
        self.offloads = offloads;
        self.read_mail(mailbox);
        let mut idle = 0;
        if let Some(sp) = self.split.take() {
            self.split_on(dev, ctx, xdp, sp);
        }
        while self.split.is_none() && ctx.delivered() + idle < budget {
            match qr.cq_ready(self.head) {
                Ok(true) => {}
                _ => break,
            }
            let Ok(cqe) = qr.cq_read(self.head) else {
                break;
            };
            self.head = self.head.wrapping_add(1);
            let before = ctx.delivered();
            self.completion(dev, ctx, xdp, rings, mailbox, &cqe);
            if ctx.delivered() == before {
                idle += 1;
            }
        }
        if core::mem::take(&mut self.report_lost) {
            self.owe_xon_everywhere();
        }
        // Refill once per poll, after every buffer of it came back.
        self.fill_waiting(ctx, rings);
        let _ = qr.set_consumed(self.head);
        if self.split.is_some() {
            // More frames of this buffer to go: poll again.
            return budget;
        }
        (ctx.delivered() + idle).min(budget)
    }

    /// Hands a written buffer to the path its frames take (skbs, an XDP
    /// program, or in zero-copy mode the AF_XDP socket's pool) while the
    /// poll's budget lasts, lending it the part of the state it uses; a
    /// buffer not done is kept in `self.split` for the next poll.
    fn split_on<T: Operations>(
        &mut self,
        dev: &Device<T>,
        ctx: &PollCtx<'_>,
        xdp: Option<&XdpPoll<'_>>,
        mut sp: Split,
    ) {
        if sp.chunks.is_some() {
            let mut path = XskPath {
                xsk: self.xsk.as_mut(),
                stats: &mut self.stats,
                offloads: self.offloads,
            };
            if let Some(rest) = path.split_chunks(dev, ctx, xdp, sp) {
                self.split = Some(rest);
            }
            return;
        }
        let bytes = sp.cqe.bytes() as usize;
        if bytes > sp.buf.len() {
            self.stats.bad += 1;
            return;
        }
        let (off, frames, done) = match xdp {
            Some(x) => XdpPath {
                xdp_rxq: self.xdp_rxq.as_ref(),
                pool: self.pool.as_ref(),
                runner: &mut self.xdp_runner,
                stats: &mut self.stats,
                offloads: self.offloads,
            }
            .split_xdp(dev, ctx, x, sp.buf.data(), sp.off, sp.frames),
            None => SkbPath {
                stats: &mut self.stats,
                offloads: self.offloads,
            }
            .split_skbs(dev, ctx, &sp.buf, sp.off, sp.frames),
        };
        if !done {
            sp.off = off;
            sp.frames = frames;
            self.split = Some(sp);
            return;
        }
        if frames != sp.cqe.frames() || off != bytes {
            self.stats.bad += 1;
        }
        // `sp.buf`'s reference goes back to the pool here; fragments keep
        // their own.
    }

    /// After a completion that failed validation: any stream may have
    /// starved unreported, its sender paused until an XON that would never
    /// come. Every stream of this queue with a posted buffer gets an XON
    /// now, every other one a buffer and then its XON (the device ignores
    /// an XON for a stream it did not pause). Streams that never sent get a
    /// buffer too: which of them the lost report named cannot be known.
    fn owe_xon_everywhere(&mut self) {
        for gi in 0..self.groups.len() {
            let nodes = self.senders;
            let g = &mut self.groups[gi];
            if g.leaving {
                continue;
            }
            for (node, slot) in g.slots.iter().enumerate() {
                let bit = 1u32 << node;
                if nodes & bit == 0 {
                    continue;
                }
                if slot.is_posted() {
                    g.xon |= bit;
                } else {
                    g.starved |= bit;
                    g.waiting |= bit;
                }
            }
        }
    }

    /// Whether a stream the device paused waits for a buffer that could
    /// not be allocated: no completion will come to retry the refill, so the
    /// caller keeps polling.
    pub(crate) fn refill_stalled(&self) -> bool {
        self.alloc_failed && self.groups.iter().any(|g| g.waiting & g.starved != 0)
    }

    /// A stream found stuck since the last call, if any: the caller resets
    /// the device.
    pub(crate) fn take_broken(&mut self) -> Option<u32> {
        self.broken.take()
    }

    /// Hands `ring` the stream id of every stream refilled after it
    /// starved, to ring XON for, once each.
    pub(crate) fn take_xons(&mut self, mut ring: impl FnMut(u32)) {
        for g in self.groups.iter_mut() {
            while g.xon != 0 {
                let node = g.xon.trailing_zeros();
                g.xon &= !(1 << node);
                ring(abi::stream_id(g.id, node as u8));
                self.stats.xon += 1;
            }
        }
    }
}
