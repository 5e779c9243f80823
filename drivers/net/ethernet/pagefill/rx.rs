// SPDX-License-Identifier: GPL-2.0

//! The receive path, the seed's design: for every stream of a joined group,
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
//! Frames up to [`COPYBREAK`] bytes are copied into a small skb. Larger ones
//! get their headers copied into the linear part and their payload attached
//! as a fragment that references the buffer, so one buffer serves many skbs
//! and returns to the pool when the last of them is freed.
//!
//! The buffers the device can hold (posted or being filled) are limited by
//! the ring size (`ethtool -G rx`). An entry that cannot get a buffer within
//! the limit waits; buffers coming back go to waiting entries in turn, so a
//! small ring makes streams starve (the device pauses their senders) but
//! loses nothing.

use kernel::prelude::*;

use crate::abi::{self, record, record_flags, rx_flags, rx_kind};
use crate::net::napi::Napi;
use crate::net::netdev::{Device, Operations};
use crate::net::page_pool::{PagePool, PoolPage};
use crate::net::skb::{SkBuff, MAX_FRAGS};
use crate::rings::{RawCqe, Rings, MAX_JOINED};
use crate::udp_merge;

/// Frames up to this size are copied; larger ones become fragments.
pub(crate) const COPYBREAK: usize = 256;
/// Starvation reports in a row, with a buffer posted and no completion
/// naming the stream, after which the stream is stuck. Races account for a
/// few (a report older than the post, one per doorbell in flight); a stuck
/// stream gets there within milliseconds.
const STUCK_STARVATIONS: u16 = 64;
/// Most bytes of headers copied into the linear part of a fragment skb.
const MAX_HEADER: usize = 256;
/// Most bytes of a merged skb whose datagrams are copied: what
/// `napi_alloc_skb()` serves from its page fragments rather than kmalloc.
const MERGE_LINEAR_MAX: usize = 3072;

/// One source node's buffers in a joined group.
#[derive(Default)]
struct Slot {
    /// Posted in the node table entry, the device's to take.
    posted: Option<PoolPage>,
    /// Taken by the device, being filled.
    device: Option<PoolPage>,
    /// Starvation reports answered with an XON while `posted` was in the
    /// entry, since a completion last named the stream.
    starved_posted: u16,
    /// The device's count of buffers taken from the entry, as of the last
    /// completion naming the stream.
    taken: u32,
}

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
    /// Left: the device no longer reads the table; the group goes once the
    /// device has handed back every buffer it held.
    leaving: bool,
}

impl Group {
    fn holds_nothing(&self) -> bool {
        self.slots
            .iter()
            .all(|s| s.posted.is_none() && s.device.is_none())
    }
}

/// Receive counters.
#[derive(Default, Clone, Copy)]
pub(crate) struct RxStats {
    pub(crate) packets: u64,
    pub(crate) bytes: u64,
    /// Frames lost for want of an skb.
    pub(crate) dropped: u64,
    /// Completions or records that failed validation.
    pub(crate) bad: u64,
    /// Buffers taken back from a stream whose completion was lost: the
    /// device reported the next one.
    pub(crate) resync: u64,
    pub(crate) starved: u64,
    pub(crate) xon: u64,
    pub(crate) alloc_failed: u64,
    /// Frames copied whole into a small skb.
    pub(crate) copybreak: u64,
    /// Frames whose payload went up as a fragment of the buffer.
    pub(crate) frags: u64,
    /// Buffers taken from the pool and posted.
    pub(crate) buf_alloc: u64,
    /// Buffers handed back to the pool after their frames were split (they
    /// recycle once the last skb holding a piece of them is freed).
    pub(crate) buf_recycled: u64,
    /// Frames whose checksum the device checked, handed up as such.
    pub(crate) csum_unnecessary: u64,
    /// Frames handed up for the stack to check: the device did not vouch
    /// for them, or receive checksumming is off.
    pub(crate) csum_none: u64,
    /// Merged skbs handed up (`rx-udp-merge`), and the frames they hold
    /// (counted in `packets`, in neither checksum count: they go up
    /// `CHECKSUM_PARTIAL`).
    pub(crate) merged_skbs: u64,
    pub(crate) merged_frames: u64,
}

impl RxStats {
    /// Adds `o`'s counts to these.
    pub(crate) fn add(&mut self, o: &Self) {
        self.packets += o.packets;
        self.bytes += o.bytes;
        self.dropped += o.dropped;
        self.bad += o.bad;
        self.resync += o.resync;
        self.starved += o.starved;
        self.xon += o.xon;
        self.alloc_failed += o.alloc_failed;
        self.copybreak += o.copybreak;
        self.frags += o.frags;
        self.buf_alloc += o.buf_alloc;
        self.buf_recycled += o.buf_recycled;
        self.csum_unnecessary += o.csum_unnecessary;
        self.csum_none += o.csum_none;
        self.merged_skbs += o.merged_skbs;
        self.merged_frames += o.merged_frames;
    }
}

/// The receive offloads in force for one poll.
#[derive(Clone, Copy, Default)]
pub(crate) struct RxOffloads {
    /// Hand up the frames the device checked as such (`ethtool -K rx`).
    pub(crate) csum: bool,
    /// Merge runs of a flow's UDP datagrams (see [`udp_merge`]; the private flag
    /// `rx-udp-merge`). Only with `csum`.
    pub(crate) udp_merge: bool,
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

/// Whether `cqe` counts a take from `slot`'s entry that no completion the
/// driver handled has counted. A completion reporting the posted buffer
/// taken must: one that does not is a stale copy of a completion already
/// handled, whose buffer went back to the pool and may be posted again at
/// the same address, still holding the frames it was split into.
fn counts_new_take(slot: &Slot, cqe: &RawCqe) -> bool {
    // Counts wrap: ahead by less than half the range.
    (cqe.taken.wrapping_sub(slot.taken) as i32) > 0
}

/// A record of a written buffer, its header and frame inside the buffer
/// and the frame at least an Ethernet header long.
struct Record {
    /// Offset of the frame (after the record header).
    start: usize,
    /// Length of the frame.
    len: usize,
    /// [`record_flags`].
    flags: u16,
}

// Called for every frame: inlined, as a call costs more than the body.
impl Record {
    /// The record at `off` in the written bytes `data`, if it is whole.
    #[inline]
    fn at(data: &[u8], off: usize) -> Option<Self> {
        let hdr = data.get(off..off + record::HEADER_SIZE)?;
        let le16 = |at: usize| u16::from_le_bytes([hdr[at], hdr[at + 1]]);
        let rec = Self {
            start: off + record::HEADER_SIZE,
            len: usize::from(le16(record::LEN)),
            flags: le16(record::FLAGS),
        };
        (rec.len >= abi::MIN_FRAME_LEN && rec.start + rec.len <= data.len()).then_some(rec)
    }

    /// The frame, from the bytes `data` it was found in.
    #[inline]
    fn frame<'a>(&self, data: &'a [u8]) -> &'a [u8] {
        data.get(self.start..self.start + self.len).unwrap_or(&[])
    }

    /// Offset of the next record.
    #[inline]
    fn next(&self) -> usize {
        self.start - record::HEADER_SIZE + record::size(self.len)
    }

    /// The device checked the frame's checksum and found it right.
    #[inline]
    fn csum_ok(&self) -> bool {
        self.flags & record_flags::L4_CSUM_OK != 0
    }
}

/// What the receive path owns while the interface is up.
pub(crate) struct RxState {
    pool: Option<PagePool>,
    groups: KVec<Group>,
    /// Node tables of groups this queue finished leaving (bit per table),
    /// for the caller to release.
    retired: u64,
    /// This queue pair's index, and how many are in use: the device steers
    /// stream (group, node) to queue `stream_queue(group, node, num_queues)`.
    queue: u8,
    num_queues: u32,
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
    /// This NIC's node id: no frame comes from it, so its entries stay
    /// empty.
    own_node: u8,
    /// Completions consumed, free running.
    head: u32,
    /// A completion failed validation in this poll: it may have been a
    /// stream's starvation report, which the device does not repeat.
    report_lost: bool,
    /// The offloads in force for this poll.
    offloads: RxOffloads,
    pub(crate) stats: RxStats,
}

const _: () = assert!(MAX_JOINED <= 64);

impl RxState {
    pub(crate) fn new() -> Self {
        Self {
            pool: None,
            groups: KVec::new(),
            retired: 0,
            queue: 0,
            num_queues: 1,
            outstanding: 0,
            ring: RxConfig::DEFAULT.ring,
            cursor: 0,
            own_node: 0,
            head: 0,
            report_lost: false,
            offloads: RxOffloads::default(),
            broken: None,
            alloc_failed: false,
            stats: RxStats::default(),
        }
    }

    /// Starts receiving into `pool`'s buffers from completion 0, with at
    /// most `ring` buffers with the device, as queue `queue` of
    /// `num_queues` of the NIC of node id `own_node`. The rings must be
    /// cleared.
    pub(crate) fn install(
        &mut self,
        pool: PagePool,
        ring: u32,
        own_node: u8,
        queue: u8,
        num_queues: u32,
    ) {
        self.own_node = own_node;
        self.queue = queue;
        self.num_queues = num_queues;
        self.pool = Some(pool);
        self.groups.clear();
        self.retired = 0;
        self.outstanding = 0;
        self.ring = ring;
        self.cursor = 0;
        self.head = 0;
        self.broken = None;
    }

    /// Takes every buffer (the device was reset, so it holds none) and the
    /// pool back, for the caller to drop outside the lock (destroying a pool
    /// may sleep). The groups' buffers return to the pool here.
    pub(crate) fn take(&mut self) -> Option<PagePool> {
        self.groups.clear();
        self.retired = 0;
        self.outstanding = 0;
        self.pool.take()
    }

    /// Whether the interface is up: buffers can be posted.
    pub(crate) fn running(&self) -> bool {
        self.pool.is_some()
    }

    /// The source nodes of `group` whose streams the device steers to
    /// this queue (bit per node), less this NIC's own.
    fn nodes_of(&self, group: u16) -> u32 {
        let mut mask = 0;
        for node in 0..abi::MAX_NODES as u8 {
            if node != self.own_node
                && abi::stream_queue(group, node, self.num_queues) == u32::from(self.queue)
            {
                mask |= 1 << node;
            }
        }
        mask
    }

    /// Joins `group` with node table `table`, its entries empty: a
    /// stream's first frame finds its entry empty and the device reports
    /// it starved, which posts its first buffer. The caller publishes the
    /// table in the master entry once every queue has joined. Callable in
    /// atomic context.
    pub(crate) fn join(&mut self, rings: &Rings, group: u16, table: usize) -> Result {
        if usize::from(group) >= abi::MAX_GROUPS || table >= MAX_JOINED || self.pool.is_none() {
            return Err(EINVAL);
        }
        if self.groups.iter().any(|g| g.id == group) {
            return Err(EBUSY);
        }
        let nodes = self.nodes_of(group);
        for node in 0..abi::MAX_NODES {
            if nodes & (1 << node) != 0 {
                rings.post(table, node, 0)?;
            }
        }
        self.groups.push(
            Group {
                id: group,
                table,
                slots: Default::default(),
                waiting: 0,
                starved: 0,
                xon: 0,
                leaving: false,
            },
            GFP_ATOMIC,
        )?;
        Ok(())
    }

    /// Leaves `group`: the caller cleared its master entry and had the
    /// device flush it, after which the device no longer reads the table.
    /// Takes back the buffers still posted; the ones the device holds come
    /// back with completions, and the group goes when the last has.
    pub(crate) fn leave(&mut self, rings: &Rings, group: u16) {
        let Some(idx) = self.groups.iter().position(|g| g.id == group && !g.leaving) else {
            return;
        };
        let g = &mut self.groups[idx];
        g.leaving = true;
        g.waiting = 0;
        g.starved = 0;
        g.xon = 0;
        for (node, slot) in g.slots.iter_mut().enumerate() {
            // An empty entry whose buffer is still marked posted was taken
            // by the device; the completion that says so is on its way.
            if slot.posted.is_some() && rings.entry(g.table, node).unwrap_or(0) != 0 {
                let _ = rings.post(g.table, node, 0);
                slot.posted = None;
                self.outstanding = self.outstanding.saturating_sub(1);
            }
        }
        self.retire_if_done(idx);
    }

    /// Node tables this queue let go since the last call (bit per table).
    pub(crate) fn take_retired(&mut self) -> u64 {
        core::mem::take(&mut self.retired)
    }

    /// Frees a leaving group's table once it holds no buffer.
    fn retire_if_done(&mut self, idx: usize) {
        let Some(g) = self.groups.get(idx) else {
            return;
        };
        if g.leaving && g.holds_nothing() {
            self.retired |= 1u64 << g.table;
            // Order does not matter: swap the last group into the gap.
            let last = self.groups.len() - 1;
            self.groups.swap(idx, last);
            self.groups.truncate(last);
        }
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
    fn fill_waiting(&mut self, rings: &Rings) {
        self.alloc_failed = false;
        self.fill(rings, true);
        self.fill(rings, false);
    }

    fn fill(&mut self, rings: &Rings, starved_only: bool) {
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
                let Some(buf) = self.pool.as_ref().and_then(PagePool::alloc) else {
                    // Counted; the next poll tries again.
                    self.stats.alloc_failed += 1;
                    self.alloc_failed = true;
                    self.cursor = gi;
                    return;
                };
                let g = &mut self.groups[gi];
                let node = want.trailing_zeros() as usize;
                g.waiting &= !(1 << node);
                if rings.post(g.table, node, buf.dma_addr()).is_err() {
                    continue;
                }
                g.slots[node].posted = Some(buf);
                g.slots[node].starved_posted = 0;
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

    /// Processes completions until `budget` frames went up the stack.
    pub(crate) fn poll<T: Operations>(
        &mut self,
        dev: &Device<T>,
        napi: &Napi,
        rings: &Rings,
        budget: i32,
        offloads: RxOffloads,
    ) -> i32 {
        let Ok(qr) = rings.queue(usize::from(self.queue)) else {
            return 0;
        };
        self.offloads = offloads;
        let mut work = 0;
        while work < budget {
            match qr.cq_ready(self.head) {
                Ok(true) => {}
                _ => break,
            }
            let Ok(cqe) = qr.cq_read(self.head) else {
                break;
            };
            // A buffer's frames go up together: leave it for the next poll
            // if they would overrun this poll's budget.
            if cqe.kind == rx_kind::DATA && work > 0 && work + i32::from(cqe.frames) > budget {
                break;
            }
            self.head = self.head.wrapping_add(1);
            work += self.completion(dev, napi, &cqe).max(1);
        }
        if core::mem::take(&mut self.report_lost) {
            self.owe_xon_everywhere();
        }
        // Refill once per poll, after every buffer of it came back.
        self.fill_waiting(rings);
        let _ = qr.set_consumed(self.head);
        work
    }

    /// After a completion that failed validation: any stream may have
    /// starved unreported, its sender paused until an XON that would never
    /// come. Every stream of this queue with a posted buffer gets an XON
    /// now, every other one a buffer and then its XON (the device ignores
    /// an XON for a stream it did not pause). Streams that never sent get a
    /// buffer too: which of them the lost report named cannot be known.
    fn owe_xon_everywhere(&mut self) {
        for gi in 0..self.groups.len() {
            let nodes = self.nodes_of(self.groups[gi].id);
            let g = &mut self.groups[gi];
            if g.leaving {
                continue;
            }
            for (node, slot) in g.slots.iter().enumerate() {
                let bit = 1u32 << node;
                if nodes & bit == 0 {
                    continue;
                }
                if slot.posted.is_some() {
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

    /// Handles one completion; returns the frames delivered.
    fn completion<T: Operations>(&mut self, dev: &Device<T>, napi: &Napi, cqe: &RawCqe) -> i32 {
        let node = usize::from(cqe.node);
        let gi = self.groups.iter().position(|g| g.id == cqe.group);
        // The stream must be one the device steers to this queue.
        let steered = abi::stream_queue(cqe.group, cqe.node, self.num_queues);
        let (Some(gi), true, true) = (
            gi,
            node < abi::MAX_NODES,
            cqe.queue == self.queue && steered == u32::from(self.queue),
        ) else {
            self.bad_completion();
            return 0;
        };
        let bit = 1u32 << node;
        let mut delivered = 0;
        match cqe.kind {
            rx_kind::CLAIM => {
                let slot = &mut self.groups[gi].slots[node];
                let posted = slot.posted.as_ref().map(PoolPage::dma_addr);
                if posted != Some(cqe.addr) || !counts_new_take(slot, cqe) {
                    self.bad_completion();
                    return 0;
                }
                // The device claims an entry only when it holds nothing.
                self.take_posted(gi, node);
                self.groups[gi].slots[node].taken = cqe.taken;
            }
            rx_kind::DATA => {
                let slot = &self.groups[gi].slots[node];
                if slot.device.as_ref().map(PoolPage::dma_addr) != Some(cqe.addr) {
                    // The posted buffer, its CLAIM lost: the device must
                    // count its take.
                    if slot.posted.as_ref().map(PoolPage::dma_addr) != Some(cqe.addr)
                        || !counts_new_take(slot, cqe)
                    {
                        self.bad_completion();
                        return 0;
                    }
                    self.take_posted(gi, node);
                }
                let slot = &mut self.groups[gi].slots[node];
                if let Some(buf) = slot.device.take() {
                    delivered = self.split(dev, napi, &buf, cqe);
                    // This reference goes back to the pool; fragments keep
                    // their own.
                    drop(buf);
                    self.outstanding = self.outstanding.saturating_sub(1);
                    self.stats.buf_recycled += 1;
                }
                let g = &mut self.groups[gi];
                if cqe.flags & rx_flags::NEXT_TAKEN != 0 {
                    let slot = &mut g.slots[node];
                    if slot.posted.is_none() {
                        self.stats.bad += 1;
                    }
                    slot.device = slot.posted.take();
                }
                let slot = &mut self.groups[gi].slots[node];
                slot.starved_posted = 0;
                slot.taken = cqe.taken;
                if cqe.flags & rx_flags::STARVED != 0 {
                    self.starved(gi, node);
                }
            }
            rx_kind::STARVED => {
                // The device reports a starvation of its own only when it
                // holds no buffer of the stream: one it held closed with a
                // completion that was lost.
                let slot = &mut self.groups[gi].slots[node];
                let held = slot.device.take();
                // It took more buffers than the completions seen say: the
                // one posted last (the only one posted since) was taken and
                // written, and both completions naming it were lost.
                let taken_unseen = cqe.taken != slot.taken;
                slot.taken = cqe.taken;
                let posted = if taken_unseen {
                    slot.posted.take()
                } else {
                    None
                };
                for lost in [held, posted].into_iter().flatten() {
                    self.recycle_lost(lost);
                }
                self.starved(gi, node);
            }
            _ => {
                self.bad_completion();
                return 0;
            }
        }
        let g = &mut self.groups[gi];
        if g.leaving {
            g.waiting = 0;
            g.starved = 0;
            g.xon = 0;
            self.retire_if_done(gi);
        } else if g.slots[node].posted.is_none() && node != usize::from(self.own_node) {
            g.waiting |= bit;
        }
        delivered
    }

    /// Counts a completion that failed validation and was dropped.
    fn bad_completion(&mut self) {
        self.stats.bad += 1;
        self.report_lost = true;
    }

    /// The device reported the buffer posted in `node`'s entry of group `gi`
    /// as taken: it becomes the device's. The device is then done with any
    /// buffer it held before, whose completion was lost or failed
    /// validation: that buffer goes back to the pool, its frames lost (the
    /// bad completion was counted), and the stream carries on.
    fn take_posted(&mut self, gi: usize, node: usize) {
        let slot = &mut self.groups[gi].slots[node];
        slot.starved_posted = 0;
        if let Some(old) = core::mem::replace(&mut slot.device, slot.posted.take()) {
            self.recycle_lost(old);
        }
    }

    /// Returns a buffer the device is done with but whose completion was
    /// lost to the pool; its frames are lost (the bad completion was
    /// counted).
    fn recycle_lost(&mut self, buf: PoolPage) {
        drop(buf);
        self.outstanding = self.outstanding.saturating_sub(1);
        self.stats.buf_recycled += 1;
        self.stats.resync += 1;
    }

    /// The device found `node`'s entry of group `gi` empty and paused the
    /// sender: XON is owed once the entry has a buffer, at once if one was
    /// posted since the device looked.
    ///
    /// A buffer taken with both its completions lost comes back at the
    /// starvation report that follows, by its take count (see
    /// [`Self::completion`]). A stream that keeps starving with a buffer
    /// posted all the same is stuck (a device not keeping its count finds
    /// the entry empty after every XON): the device is reset.
    fn starved(&mut self, gi: usize, node: usize) {
        self.stats.starved += 1;
        let g = &mut self.groups[gi];
        if g.leaving {
            // The flush resumed the sender.
            return;
        }
        let bit = 1 << node;
        let slot = &mut g.slots[node];
        if slot.posted.is_none() {
            g.starved |= bit;
            return;
        }
        slot.starved_posted = slot.starved_posted.saturating_add(1);
        if slot.starved_posted == STUCK_STARVATIONS {
            self.broken = Some(abi::stream_id(g.id, node as u8));
        }
        g.xon |= bit;
    }

    /// Splits a written buffer into skbs; returns the frames delivered.
    fn split<T: Operations>(
        &mut self,
        dev: &Device<T>,
        napi: &Napi,
        buf: &PoolPage,
        cqe: &RawCqe,
    ) -> i32 {
        let bytes = cqe.bytes as usize;
        if bytes > buf.len() {
            self.stats.bad += 1;
            return 0;
        }
        let data = buf.data(bytes);
        let mut off = 0;
        let mut frames = 0u16;
        while off + record::HEADER_SIZE <= data.len() {
            let Some(rec) = Record::at(data, off) else {
                self.stats.bad += 1;
                break;
            };
            // The device vouches for the checksum; the frame's bytes are
            // checked as any other (length here, headers by the stack).
            let csum_ok = self.offloads.csum && rec.csum_ok();
            if self.offloads.udp_merge && csum_ok {
                if let Some((n, next)) = self.merge_run(dev, napi, buf, data, &rec) {
                    frames = frames.saturating_add(n);
                    off = next;
                    continue;
                }
            }
            frames += 1;
            let frame = rec.frame(data);
            let skb = if rec.len <= COPYBREAK {
                self.copy_frame(napi, frame)
            } else {
                self.frag_frame(dev, napi, buf, rec.start, frame)
            };
            match skb {
                Some(mut skb) => {
                    if csum_ok {
                        skb.set_csum_unnecessary();
                        self.stats.csum_unnecessary += 1;
                    } else {
                        self.stats.csum_none += 1;
                    }
                    skb.eth_type_trans(dev);
                    napi.gro_receive(skb);
                    self.stats.packets += 1;
                    self.stats.bytes += rec.len as u64;
                }
                None => self.stats.dropped += 1,
            }
            off = rec.next();
        }
        if frames != cqe.frames || off != bytes {
            self.stats.bad += 1;
        }
        i32::from(frames)
    }

    /// With merging on: the run of one flow's datagrams from `first` on that
    /// can go up as one skb (see [`udp_merge`]), handed up; returns how many
    /// records it took and where the next starts. `None` if fewer than two
    /// make a run: the caller hands `first` up alone.
    fn merge_run<T: Operations>(
        &mut self,
        dev: &Device<T>,
        napi: &Napi,
        buf: &PoolPage,
        data: &[u8],
        first: &Record,
    ) -> Option<(u16, usize)> {
        let head = first.frame(data);
        let seg = udp_merge::udp4_payload(head)?;
        // Short datagrams are copied whole into the linear part; longer
        // ones leave their payload in the buffer, a fragment each.
        let copy = first.len <= COPYBREAK;
        let most = if copy {
            (MERGE_LINEAR_MAX - udp_merge::HEADERS) / seg
        } else {
            MAX_FRAGS
        }
        .min(udp_merge::MAX_SEGS);
        let (mut n, mut payload, mut next) = (1, seg, first.next());
        while n < most {
            let Some(rec) = Record::at(data, next) else {
                break;
            };
            let frame = rec.frame(data);
            let Some(p) = udp_merge::udp4_payload(frame) else {
                break;
            };
            if !rec.csum_ok()
                || p > seg
                || payload + p > udp_merge::MAX_PAYLOAD
                || !udp_merge::same_flow(head, frame)
            {
                break;
            }
            n += 1;
            payload += p;
            next = rec.next();
            // A shorter datagram ends a run, as in the stack's GRO.
            if p < seg {
                break;
            }
        }
        if n < 2 {
            return None;
        }
        let mut hdr = [0u8; udp_merge::HEADERS];
        hdr.copy_from_slice(head.get(..udp_merge::HEADERS)?);
        if !udp_merge::merge_headers(&mut hdr, payload) {
            return None;
        }
        let merged = self.build_merged(napi, buf, data, first, n, &hdr, copy, payload);
        let gso = merged.and_then(|mut skb| {
            skb.set_udp_gso(udp_merge::UDP_OFFSET as u16, seg as u16, n as u16)
                .ok()?;
            Some(skb)
        });
        match gso {
            Some(mut skb) => {
                skb.eth_type_trans(dev);
                napi.gro_receive(skb);
                self.stats.packets += n as u64;
                self.stats.bytes += (n * udp_merge::HEADERS + payload) as u64;
                self.stats.merged_skbs += 1;
                self.stats.merged_frames += n as u64;
            }
            None => self.stats.dropped += n as u64,
        }
        Some((n as u16, next))
    }

    /// The merged skb of the `n` records from `first`: the rewritten
    /// headers `hdr`, then the `payload` bytes of the datagrams, copied or
    /// as fragments of `buf`.
    #[allow(clippy::too_many_arguments)]
    fn build_merged(
        &mut self,
        napi: &Napi,
        buf: &PoolPage,
        data: &[u8],
        first: &Record,
        n: usize,
        hdr: &[u8; udp_merge::HEADERS],
        copy: bool,
        payload: usize,
    ) -> Option<SkBuff> {
        let linear = udp_merge::HEADERS + if copy { payload } else { 0 };
        let mut skb = napi.alloc_skb(linear as u32)?;
        skb.put_data(hdr).ok()?;
        let mut at = first.start - record::HEADER_SIZE;
        for _ in 0..n {
            let rec = Record::at(data, at)?;
            let range = rec.start + udp_merge::HEADERS..rec.start + rec.len;
            if copy {
                skb.put_data(data.get(range)?).ok()?;
            } else {
                skb.add_pool_frag(buf, range, record::size(rec.len) as u32)
                    .ok()?;
            }
            at = rec.next();
        }
        // The records were read twice: a device that rewrote them in
        // between gets its frames dropped, not a skb unlike its headers.
        (skb.len() as usize == udp_merge::HEADERS + payload).then_some(skb)
    }

    /// A short frame, copied whole into a small skb.
    fn copy_frame(&mut self, napi: &Napi, frame: &[u8]) -> Option<SkBuff> {
        let mut skb = napi.alloc_skb(frame.len() as u32)?;
        skb.put_data(frame).ok()?;
        self.stats.copybreak += 1;
        Some(skb)
    }

    /// A longer frame at `start` in `buf`: headers copied into the linear
    /// part, the payload a fragment referencing the buffer.
    fn frag_frame<T: Operations>(
        &mut self,
        dev: &Device<T>,
        napi: &Napi,
        buf: &PoolPage,
        start: usize,
        frame: &[u8],
    ) -> Option<SkBuff> {
        let hlen = dev.eth_headlen(frame).clamp(abi::MIN_FRAME_LEN, MAX_HEADER);
        let mut skb = napi.alloc_skb(hlen as u32)?;
        skb.put_data(frame.get(..hlen)?).ok()?;
        if hlen < frame.len() {
            let truesize = record::size(frame.len()) as u32;
            skb.add_pool_frag(buf, start + hlen..start + frame.len(), truesize)
                .ok()?;
        }
        self.stats.frags += 1;
        Some(skb)
    }
}
