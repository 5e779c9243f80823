// SPDX-License-Identifier: GPL-2.0

//! The transmit path: a descriptor for the frame's linear part and one for
//! each page fragment, all mapped in place (no copy), the checksum left to
//! the device when the stack leaves it partial, a doorbell per batch
//! (`xmit_more`), byte queue limits, and completions read from the queue
//! status block in NAPI.

use kernel::{prelude::*, sync::Arc};

use crate::abi;
use crate::groups;
use crate::hw::Quiesced;
use crate::net::napi::PollCtx;
use crate::net::netdev::{Device, Operations, Rtnl, XmitCtx};
use crate::net::skb::{SkBuff, TxMapped, TxParts, TX_MAX_PARTS};
use crate::net::xdp::{XdpBuf, XdpTxFrame};
use crate::net::xdp_xmit::{XdpFrame, XdpFrameTx};
use crate::net::xsk::XskPool;
use crate::rings::{QueueRings, TxDesc};

/// Transmit counters.
#[derive(Default, Clone, Copy)]
pub(crate) struct TxStats {
    pub(crate) packets: u64,
    pub(crate) bytes: u64,
    pub(crate) dropped: u64,
    /// Done counts from the device that made no sense.
    pub(crate) bad: u64,
    /// Frames sent as more than one part (linear part and fragments).
    pub(crate) sg: u64,
    /// Frames whose checksum the device inserted.
    pub(crate) csum: u64,
    /// Frames an XDP program sent back out (`XDP_TX`), done; counted in
    /// `packets` and `bytes` too (the netdev queue statistics' rule), not
    /// in byte queue limits.
    pub(crate) xdp_tx: u64,
    /// Frames XDP programs elsewhere redirected to the device
    /// (`ndo_xdp_xmit`), done, counted as `xdp_tx` is; and those refused
    /// (ring full, mapping failed, interface down), which the redirect's
    /// caller dropped.
    pub(crate) xdp_xmit: u64,
    pub(crate) xdp_xmit_errors: u64,
    /// Frames of an AF_XDP socket in zero-copy mode, done; counted as
    /// `xdp_tx` is.
    pub(crate) xsk_frames: u64,
}

impl TxStats {
    /// Adds `o`'s counts to these.
    pub(crate) fn add(&mut self, o: &Self) {
        self.packets += o.packets;
        self.bytes += o.bytes;
        self.dropped += o.dropped;
        self.bad += o.bad;
        self.sg += o.sg;
        self.csum += o.csum;
        self.xdp_tx += o.xdp_tx;
        self.xdp_xmit += o.xdp_xmit;
        self.xdp_xmit_errors += o.xdp_xmit_errors;
        self.xsk_frames += o.xsk_frames;
    }
}

/// A frame in the ring: its mappings and how many descriptors it took.
pub(crate) struct TxSlot {
    frame: TxFrame,
    descs: u32,
}

/// A frame from the stack, one an XDP program sent back (`XDP_TX`), one
/// redirected to the device (`ndo_xdp_xmit`), or one of an AF_XDP socket
/// in zero-copy mode, `len` bytes in `bufs` of its umem's buffers (mapped
/// by its pool: nothing to unmap; each is reported done to the pool).
enum TxFrame {
    Skb(TxMapped),
    Xdp(XdpTxFrame),
    Redirected(XdpFrameTx),
    Xsk { len: u32, bufs: u32 },
}

impl TxFrame {
    /// # Safety
    ///
    /// As for [`TxMapped::unmap`]: the device reads the frame no more.
    unsafe fn unmap<T: Operations>(self, dev: &Device<T>) {
        match self {
            // SAFETY: the caller's guarantee.
            Self::Skb(f) => unsafe { f.unmap(dev) },
            // SAFETY: the caller's guarantee; the buffer goes back to its
            // pool.
            Self::Xdp(f) => drop(unsafe { f.unmap(dev) }),
            // SAFETY: the caller's guarantee; the frame goes back to the
            // owner of its memory.
            Self::Redirected(f) => drop(unsafe { f.unmap(dev) }),
            Self::Xsk { .. } => {}
        }
    }

    fn leak(self) {
        match self {
            Self::Skb(f) => f.leak(),
            Self::Xdp(f) => f.leak(),
            Self::Redirected(f) => f.leak(),
            Self::Xsk { .. } => {}
        }
    }
}

/// The transmit ring's host side.
pub(crate) struct TxState {
    /// The frame starting at each descriptor, until it completes.
    slots: KVec<Option<TxSlot>>,
    /// Descriptors written, free running.
    tail: u32,
    /// The tail as the device was last told it (doorbell).
    rung: u32,
    /// Descriptors completed, free running.
    clean: u32,
    /// Descriptors in the ring, as a power of two.
    shift: u32,
    /// The queue pair's index, which is also the stack's transmit queue.
    queue: u32,
    /// The device reads the ring: from the end of the interface's start to
    /// the start of its stop. Frames are only queued, and the stack's
    /// queue only woken, while it does.
    enabled: bool,
    /// The XSK pool bound to the queue (zero-copy AF_XDP), whose socket's
    /// frames go out here too.
    xsk: Option<Arc<XskPool>>,
    pub(crate) stats: TxStats,
}

/// What `xmit` did.
pub(crate) enum Xmit {
    /// Queued; ring the doorbell ([`TxState::ring_doorbell`]) unless more
    /// frames follow.
    Queued,
    /// The ring is full: the stack keeps the frame.
    Busy(SkBuff),
    /// Dropped and counted.
    Dropped,
}

impl TxState {
    pub(crate) fn new() -> Self {
        Self {
            slots: KVec::new(),
            tail: 0,
            rung: 0,
            clean: 0,
            shift: 0,
            enabled: false,
            xsk: None,
            queue: 0,
            stats: TxStats::default(),
        }
    }

    /// The empty slots of a ring of 2^`shift` descriptors; made outside
    /// the transmit lock (it allocates, which may sleep).
    pub(crate) fn new_slots(shift: u32) -> Result<KVec<Option<TxSlot>>> {
        let n = 1usize << shift;
        let mut slots = KVec::with_capacity(n, GFP_KERNEL)?;
        for _ in 0..n {
            slots.push(None, GFP_KERNEL)?;
        }
        Ok(slots)
    }

    /// Starts transmitting on queue `queue` from descriptor 0 with `slots`
    /// (a power of two of them, from [`Self::new_slots`]), and the frames
    /// of `xsk`'s socket too.
    pub(crate) fn install(
        &mut self,
        slots: KVec<Option<TxSlot>>,
        queue: u32,
        xsk: Option<Arc<XskPool>>,
    ) {
        self.queue = queue;
        self.xsk = xsk;
        self.shift = slots.len().trailing_zeros();
        self.slots = slots;
        self.tail = 0;
        self.rung = 0;
        self.clean = 0;
        self.enabled = false;
    }

    /// The device reads the ring from now on (`true`: the interface's start
    /// enabled it), or is about to stop (`false`: the first step of a stop,
    /// before the stack's queue is disabled, so that nothing wakes it).
    pub(crate) fn set_enabled(&mut self, on: bool) {
        self.enabled = on && !self.slots.is_empty();
    }

    /// Whether frames may be queued (see [`Self::set_enabled`]).
    pub(crate) fn is_enabled(&self) -> bool {
        self.enabled
    }

    #[inline]
    fn ring(&self) -> u32 {
        1 << self.shift
    }

    /// Unmaps and frees every frame still in the ring, which `_reset`
    /// proves the device reads no more, and returns the slots for the
    /// caller to free outside the lock.
    pub(crate) fn stop<T: Operations>(
        &mut self,
        dev: &Device<T>,
        rtnl: &Rtnl<'_>,
        _reset: &Quiesced,
    ) -> KVec<Option<TxSlot>> {
        let mut xsk_done = 0;
        // From the oldest: an AF_XDP socket's frames are reported done in
        // the order it queued them.
        for i in 0..self.slots.len() as u32 {
            let at = (self.clean.wrapping_add(i) & (self.ring() - 1)) as usize;
            if let Some(s) = self.slots.get_mut(at).and_then(Option::take) {
                if let TxFrame::Xsk { bufs, .. } = s.frame {
                    xsk_done += bufs;
                }
                // SAFETY: the device was reset (`_reset`) and not enabled
                // since: it reads no descriptor and no frame.
                unsafe { s.frame.unmap(dev) };
                self.stats.dropped += 1;
            }
        }
        if let Some(pool) = self.xsk.take() {
            if xsk_done > 0 {
                pool.tx_completed(xsk_done);
            }
        }
        self.enabled = false;
        dev.tx_reset(rtnl, self.queue);
        core::mem::take(&mut self.slots)
    }

    /// After a reset that failed: the device may still read every frame in
    /// the ring, so they stay mapped and allocated for good.
    pub(crate) fn abandon<T: Operations>(
        &mut self,
        dev: &Device<T>,
        rtnl: &Rtnl<'_>,
    ) -> KVec<Option<TxSlot>> {
        for slot in self.slots.iter_mut() {
            if let Some(s) = slot.take() {
                s.frame.leak();
                self.stats.dropped += 1;
            }
        }
        // The socket's frames the device may still read are not reported
        // done: their buffers stay the device's.
        self.xsk = None;
        self.enabled = false;
        dev.tx_reset(rtnl, self.queue);
        core::mem::take(&mut self.slots)
    }

    /// Tells the device of every descriptor written since it was last told,
    /// through `write` (the write of the tail to the doorbell register), if
    /// there are any. The write happens here, under the transmit lock (this
    /// takes `&mut self`): the stack's doorbells and those of XDP's polls
    /// (`XDP_TX`) reach the device in the order of their tails, never an
    /// older tail after a newer one.
    ///
    /// A frame queued with `xmit_more` leaves its doorbell to the next; if
    /// that one is dropped or refused, the doorbell is rung for the ones
    /// before it all the same, or they would wait for the next frame.
    pub(crate) fn ring_doorbell(&mut self, write: impl FnOnce(u32)) {
        if self.tail == self.rung {
            return;
        }
        self.rung = self.tail;
        write(self.tail);
    }

    /// Descriptors free in the ring.
    #[inline]
    fn free(&self) -> u32 {
        self.ring() - self.tail.wrapping_sub(self.clean)
    }

    /// Queues a frame for the device.
    pub(crate) fn xmit<T: Operations>(
        &mut self,
        dev: &Device<T>,
        ctx: &XmitCtx<'_>,
        rings: &QueueRings,
        mut skb: SkBuff,
    ) -> Xmit {
        // Room for any frame is kept (the queue stops below otherwise);
        // this is for a stack that sends anyway, or one woken by a
        // completion while the interface stops.
        if !self.enabled || self.free() < TX_MAX_PARTS as u32 {
            dev.tx_stop(self.queue);
            return Xmit::Busy(skb);
        }
        let len = skb.len();
        if !(abi::MIN_FRAME_LEN as u32..=abi::MAX_FRAME_LEN as u32).contains(&len) {
            self.stats.dropped += 1;
            return Xmit::Dropped;
        }
        // More fragments than parts: one linear buffer (rare: short frames
        // and GSO segments have few).
        if skb.nr_frags() as usize + 1 > TX_MAX_PARTS && skb.linearize().is_err() {
            self.stats.dropped += 1;
            return Xmit::Dropped;
        }
        // The device takes a checksum offset of a byte; anything else (not
        // seen from TCP or UDP) is done here.
        let csum = match skb.csum_partial() {
            Some((start, off)) => match (u16::try_from(start), u8::try_from(off)) {
                (Ok(s), Ok(o)) => Some((s, o)),
                _ if skb.checksum_help().is_ok() => None,
                _ => {
                    self.stats.dropped += 1;
                    return Xmit::Dropped;
                }
            },
            None => None,
        };
        let group = groups::tx_group(skb.head());
        let frame = match skb.map_for_tx(dev) {
            Ok(f) => f,
            Err((_, skb)) => {
                drop(skb);
                self.stats.dropped += 1;
                return Xmit::Dropped;
            }
        };
        let Some(parts) = self.write_parts(rings, frame.parts(), group, csum) else {
            // SAFETY: the tail was not moved: the device never saw these
            // descriptors.
            unsafe { frame.unmap(dev) };
            self.stats.dropped += 1;
            return Xmit::Dropped;
        };
        self.push(TxFrame::Skb(frame), parts);
        self.stats.sg += u64::from(parts > 1);
        self.stats.csum += u64::from(csum.is_some());
        ctx.tx_sent(dev, len);
        if self.free() < TX_MAX_PARTS as u32 {
            dev.tx_stop(self.queue);
        }
        Xmit::Queued
    }

    /// Writes the descriptors of a frame's `parts` (empty ones skipped) from
    /// the tail on, the first marked as the frame's start (with `csum`'s
    /// checksum request), the last as its end. The tail is not moved (the
    /// caller moves it past the descriptors, or leaves them unseen); the
    /// descriptors written, `None` if there were none or a write failed.
    /// Inlined always (a descriptor's write is less than the call), as the
    /// other steps of a frame's way out: at the kernel's opt-level "s"
    /// rustc would call them.
    #[inline(always)]
    fn write_parts(
        &self,
        rings: &QueueRings,
        parts: &TxParts,
        group: u16,
        csum: Option<(u16, u8)>,
    ) -> Option<u32> {
        let sof = if csum.is_some() {
            abi::tx_flags::SOF | abi::tx_flags::CSUM
        } else {
            abi::tx_flags::SOF
        };
        // Most frames are in one part: an XDP frame, a short skb.
        if parts.len() != 1 {
            return self.write_many(rings, parts, group, csum, sof);
        }
        let (addr, len) = parts.get(0)?;
        let d = TxDesc::new(addr, len, group, sof | abi::tx_flags::EOF, csum)?;
        rings.tx_write(self.tail, self.shift, &d).ok()?;
        Some(1)
    }

    /// [`Self::write_parts`] for a frame in several parts, the first
    /// flagged `sof`.
    #[inline(never)]
    fn write_many(
        &self,
        rings: &QueueRings,
        parts: &TxParts,
        group: u16,
        csum: Option<(u16, u8)>,
        sof: u8,
    ) -> Option<u32> {
        let n = parts.nonempty();
        let mut idx = self.tail;
        let mut i = 0;
        for j in 0..parts.len() {
            let (addr, len) = parts.get(j)?;
            if len == 0 {
                continue;
            }
            let mut flags = if i == 0 { sof } else { 0 };
            if i + 1 == n {
                flags |= abi::tx_flags::EOF;
            }
            rings
                .tx_write(
                    idx,
                    self.shift,
                    &TxDesc::new(addr, len, group, flags, csum)?,
                )
                .ok()?;
            idx = idx.wrapping_add(1);
            i += 1;
        }
        (n > 0).then_some(n as u32)
    }

    /// Records a frame of `descs` descriptors written at the tail, and moves
    /// the tail past them. The frame is freed at its first descriptor's
    /// completion's turn, once the device's done count passed all of them.
    #[inline]
    fn push(&mut self, frame: TxFrame, descs: u32) {
        let slot = (self.tail & (self.ring() - 1)) as usize;
        self.slots[slot] = Some(TxSlot { frame, descs });
        self.tail = self.tail.wrapping_add(descs);
    }

    /// Queues a frame an XDP program sent back (`XDP_TX`), a descriptor for
    /// each of its buffers, in a poll of the queue's NAPI instance; the
    /// doorbell waits for the poll's end ([`Self::ring_doorbell`]). The
    /// buffer back, unmapped, if the ring is full or the stack's queue is
    /// stopped: as `ndo_xdp_xmit` does, XDP_TX then waits for the ring to
    /// drain to where [`Self::clean`] wakes the stack, which a program
    /// sending back faster than the link sends would otherwise keep above
    /// that mark until the watchdog reset the device.
    pub(crate) fn xmit_xdp<T: Operations>(
        &mut self,
        dev: &Device<T>,
        rings: &QueueRings,
        frame: XdpTxFrame,
        group: u16,
    ) -> core::result::Result<(), XdpBuf> {
        // A stopped stack queue means a ring at least half full (the cleanup
        // wakes it below that), so its state is read only then, not for
        // every frame of a ring with room.
        let stack_stopped =
            self.tail.wrapping_sub(self.clean) >= self.ring() / 2 && dev.tx_stopped(self.queue);
        let descs = (self.xdp_fits(frame.len() as usize, frame.nr_parts()) && !stack_stopped)
            .then(|| self.write_parts(rings, frame.parts(), group, None))
            .flatten();
        let Some(descs) = descs else {
            // SAFETY: the tail was not moved: the device never saw the
            // frame.
            return Err(unsafe { frame.unmap(dev) });
        };
        self.push(TxFrame::Xdp(frame), descs);
        Ok(())
    }

    /// Whether an XDP frame of `len` bytes in `parts` buffers may be
    /// queued: the ring is enabled, the frame one the device takes, and the
    /// stack's frames keep their room (the stack stops its queue below that
    /// much, and would otherwise find the ring full).
    #[inline]
    fn xdp_fits(&self, len: usize, parts: usize) -> bool {
        Self::xdp_frame_ok(len, parts) && self.xdp_room(parts)
    }

    /// Whether an XDP frame of `len` bytes in `parts` buffers is one the
    /// driver sends at all.
    #[inline]
    fn xdp_frame_ok(len: usize, parts: usize) -> bool {
        (abi::MIN_FRAME_LEN..=abi::MAX_FRAME_LEN).contains(&len)
            && (1..=TX_MAX_PARTS).contains(&parts)
    }

    /// Whether the ring takes `parts` more descriptors of XDP now: it is
    /// enabled, and the stack's frames keep their room.
    #[inline]
    fn xdp_room(&self, parts: usize) -> bool {
        self.enabled && self.free() as usize >= TX_MAX_PARTS + parts
    }

    /// Queues a frame redirected to the device (`ndo_xdp_xmit`), a
    /// descriptor for each of its buffers, with bottom halves off; the
    /// doorbell waits for the batch's end ([`Self::ring_doorbell`]). The
    /// frame back if it cannot go now: the ring is full, or a mapping
    /// failed (the batch stops there, and its caller drops the rest). A
    /// frame that can never go (its length, or more buffers than
    /// [`TX_MAX_PARTS`] from a multi-buffer program elsewhere) is taken,
    /// dropped and counted, so that the frames after it still go.
    pub(crate) fn xmit_redirected<T: Operations>(
        &mut self,
        dev: &Device<T>,
        rings: &QueueRings,
        frame: XdpFrame,
    ) -> core::result::Result<(), XdpFrame> {
        let parts = frame.nr_frags() + 1;
        if !Self::xdp_frame_ok(frame.total_len(), parts) {
            drop(frame);
            self.stats.xdp_xmit_errors += 1;
            return Ok(());
        }
        if !self.xdp_room(parts) {
            return Err(frame);
        }
        let group = groups::tx_group(frame.data());
        let frame = frame.map_for_tx(dev)?;
        let Some(descs) = self.write_parts(rings, frame.parts(), group, None) else {
            // SAFETY: the tail was not moved: the device never saw the
            // frame.
            return Err(unsafe { frame.unmap(dev) });
        };
        self.push(TxFrame::Redirected(frame), descs);
        Ok(())
    }

    /// Queues frames of the AF_XDP socket bound to the queue (zero-copy), a
    /// descriptor for each of their buffers, at most `budget` buffers, in a
    /// poll of the queue's NAPI instance, leaving the stack's frames their
    /// room; the doorbell waits for the poll's end. Returns whether the
    /// socket may have more.
    pub(crate) fn xmit_xsk(&mut self, ctx: &PollCtx<'_>, rings: &QueueRings, budget: u32) -> bool {
        let Some(pool) = self.xsk.take() else {
            return false;
        };
        let room = if self.enabled {
            self.free().saturating_sub(TX_MAX_PARTS as u32)
        } else {
            0
        };
        let max = room.min(budget);
        // The frame being queued: its buffers so far, their bytes, and the
        // group its first names (every descriptor of a frame carries it).
        let (mut bufs, mut len, mut group) = (0u32, 0u32, 0u16);
        let taken = if max > 0 {
            pool.tx_take(ctx, max, |f| {
                if bufs == 0 {
                    group = groups::tx_group(&f.dst);
                }
                // Taken from the socket, the frame must complete in its
                // turn: one the device refuses (a length, or a descriptor
                // left out here) is refused by the device (counted in its
                // `TX_BAD_DESC`) and completes.
                let part = f.len.clamp(1, u32::from(u16::MAX));
                let mut flags = if f.more { 0 } else { abi::tx_flags::EOF };
                if bufs == 0 {
                    flags |= abi::tx_flags::SOF;
                }
                if let Some(d) = TxDesc::new(f.dma, part, group, flags, None) {
                    let _ = rings.tx_write(self.tail.wrapping_add(bufs), self.shift, &d);
                }
                bufs += 1;
                len = len.saturating_add(f.len);
                if !f.more {
                    self.push(TxFrame::Xsk { len, bufs }, bufs);
                    (bufs, len) = (0, 0);
                }
            })
        } else {
            0
        };
        if bufs > 0 {
            // The core takes whole frames; were one cut short, its buffers
            // must still be reported done, after the device refused it.
            self.push(TxFrame::Xsk { len, bufs }, bufs);
        }
        pool.set_tx_need_wakeup(ctx);
        self.xsk = Some(pool);
        max > 0 && taken == max
    }

    /// Counts frames redirected to the device that it did not take, which
    /// the redirect's caller drops.
    pub(crate) fn count_xmit_refused(&mut self, frames: usize) {
        self.stats.xdp_xmit_errors += frames as u64;
    }

    /// Frees what the device completed; wakes the queue if it had stopped.
    pub(crate) fn clean<T: Operations>(
        &mut self,
        dev: &Device<T>,
        ctx: &PollCtx<'_>,
        rings: &QueueRings,
    ) {
        let Ok(done) = rings.tx_done() else {
            return;
        };
        // The device may only complete what was written: anything else is a
        // broken device, and the ring is left as it is.
        if done.wrapping_sub(self.clean) > self.tail.wrapping_sub(self.clean) {
            self.stats.bad += 1;
            return;
        }
        let (mut pkts, mut bytes, mut xsk_done) = (0u32, 0u32, 0u32);
        let before = self.clean;
        while self.clean != done {
            let slot = (self.clean & (self.ring() - 1)) as usize;
            let Some(Some(s)) = self.slots.get(slot) else {
                // No frame starts here: a device that completed part of a
                // frame (counted) or nothing to free.
                self.stats.bad += 1;
                self.clean = done;
                break;
            };
            // A frame is freed once the device is past all of it. netpoll's
            // polls (budget 0) may not call XDP or page pool code: XDP's
            // frames wait for the next poll (the ring completes in order).
            if done.wrapping_sub(self.clean) < s.descs
                || (ctx.budget() == 0 && !matches!(s.frame, TxFrame::Skb(_)))
            {
                break;
            }
            let descs = s.descs;
            if let Some(s) = self.slots.get_mut(slot).and_then(Option::take) {
                // Byte queue limits count the stack's frames only.
                match &s.frame {
                    TxFrame::Skb(f) => {
                        pkts += 1;
                        bytes += f.len();
                    }
                    TxFrame::Xdp(f) => {
                        self.stats.xdp_tx += 1;
                        self.stats.packets += 1;
                        self.stats.bytes += u64::from(f.len());
                    }
                    TxFrame::Redirected(f) => {
                        self.stats.xdp_xmit += 1;
                        self.stats.packets += 1;
                        self.stats.bytes += u64::from(f.len());
                    }
                    TxFrame::Xsk { len, bufs } => {
                        xsk_done += bufs;
                        self.stats.xsk_frames += 1;
                        self.stats.packets += 1;
                        self.stats.bytes += u64::from(*len);
                    }
                }
                // SAFETY: the device's done count passed every descriptor
                // of the frame (checked above against what was written):
                // it reads none of them again.
                unsafe { s.frame.unmap(dev) };
            }
            self.clean = self.clean.wrapping_add(descs);
        }
        if let (true, Some(pool)) = (xsk_done > 0, &self.xsk) {
            pool.tx_completed(xsk_done);
        }
        if pkts > 0 {
            self.stats.packets += u64::from(pkts);
            self.stats.bytes += u64::from(bytes);
            dev.tx_completed(ctx, self.queue, pkts, bytes);
        }
        // Whatever was freed (XDP's frames fill the ring too), but not
        // while the interface stops: its stack queue stays off.
        if self.clean != before
            && self.enabled
            && dev.tx_stopped(self.queue)
            && self.tail.wrapping_sub(self.clean) < self.ring() / 2
        {
            dev.tx_wake(self.queue);
        }
    }
}
