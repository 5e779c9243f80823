// SPDX-License-Identifier: GPL-2.0

//! One stream's receive buffers, and the only ways each goes back from the
//! device to the CPU.
//!
//! A [`Slot`] holds a source node's buffers in a joined group: the one
//! posted in its node-table entry and the one the device took and is
//! filling. Both are [`DevicePage`]s, which only the `unsafe`
//! [`DevicePage::reclaim`] turns back into the CPU's. This module makes
//! that call in one place, [`reclaim`], with a [`Proof`] that no code
//! outside it can make: each proof is built by the one [`Slot`] method that
//! checks its evidence (the completion's fields against what was posted, and
//! where the device's word alone would not do, the node-table entry itself).
//! The receive path above (`rx.rs`) decides what a completion means;
//! it cannot take a buffer back from the device without that evidence.

use crate::abi::{chunk_list, rx_kind};
use crate::hw::Quiesced;
use crate::net::page_pool::{DevicePage, PoolPage};
use crate::net::xsk::{DeviceXskBufs, XskBufs};
use crate::rings::{Entry, RawCqe, Rings};

/// What a node-table entry holds while the device owns it: a buffer, or in
/// chunk mode a chunk list and the chunks it names.
pub(crate) struct DeviceBuf {
    page: DevicePage,
    chunks: Option<DeviceXskBufs>,
}

impl DeviceBuf {
    /// A buffer.
    pub(crate) fn page(page: DevicePage) -> Self {
        Self { page, chunks: None }
    }

    /// A chunk list, `list`, naming `chunks`.
    pub(crate) fn chunk_list(list: DevicePage, chunks: DeviceXskBufs) -> Self {
        Self {
            page: list,
            chunks: Some(chunks),
        }
    }

    fn dma_addr(&self) -> u64 {
        self.page.dma_addr()
    }

    fn leak(self) {
        self.page.leak();
        if let Some(chunks) = self.chunks {
            chunks.leak();
        }
    }
}

/// A [`DeviceBuf`] back with the CPU: the buffer (or list) with its written
/// bytes synced, and the chunks.
pub(crate) struct CpuBuf {
    pub(crate) page: PoolPage,
    pub(crate) chunks: Option<XskBufs>,
}

/// Why the device is done with a buffer it owned.
///
/// # Invariants
///
/// Made only in this module, by the [`Slot`] method that checked the
/// evidence its variant names, for the buffer it reclaims at once.
#[derive(Clone, Copy)]
enum Proof {
    /// A DATA completion named the buffer the device held for the stream:
    /// the device wrote this many bytes and let go of it.
    Written(usize),
    /// The device took a later buffer from the stream's entry (the entry
    /// read empty) while holding this one, or reported the stream starved
    /// with no take since: either way it closed this buffer with a
    /// completion that was lost, and let go.
    Superseded,
    /// A starvation report counted the take of this buffer (so the device
    /// was done with it), no DATA completion named it, and then the group's
    /// `FLUSHED` marker came, before which every buffer the device held of
    /// the group came back.
    ReportedThenFlushed,
    /// Never published (the entry write failed), or taken back from an
    /// entry that still held it after its group's `FLUSHED` marker, after
    /// which the device reads neither the group's master entry nor its
    /// node table.
    NeverTaken,
    /// The device was reset and not enabled since.
    Reset,
}

/// Takes back a buffer (or chunk list) the device owned, with `proof` that
/// it is done with it; its written bytes are synced for the CPU (a list's
/// whole, the device's records in it).
fn reclaim(buf: DeviceBuf, proof: Proof) -> CpuBuf {
    let written = match proof {
        Proof::Written(_) if buf.chunks.is_some() => chunk_list::SIZE,
        Proof::Written(bytes) => bytes,
        Proof::Superseded | Proof::ReportedThenFlushed | Proof::NeverTaken | Proof::Reset => 0,
    };
    // SAFETY: the device will not access the buffer again, by each proof
    // (checked where it was made: `Proof`'s invariant) and the device's
    // interface (programming-interface.rst):
    // - `Written`: a DATA completion named the buffer the device held for
    //   the stream: the device wrote it and holds no buffer of the stream
    //   after a DATA completion but the next one taken from the entry;
    // - `Superseded`: the device holds one buffer a stream at a time, and
    //   it took a later one from the entry, or reported a starvation
    //   (holding none) with no take since this one;
    // - `ReportedThenFlushed`: the device reported being done with it (the
    //   starvation report that counted its take), and whatever it held of
    //   the group came back before the group's `FLUSHED` marker;
    // - `NeverTaken`: the entry never held the buffer, or it still held it
    //   after `GROUP_FLUSH` and was cleared, and the device reads neither
    //   the group's master entry nor its node table after the flush;
    // - `Reset`: a reset device holds no buffer and does no DMA until it is
    //   enabled again, which the caller did not do.
    // A chunk list's chunks go with it: the device writes a chunk only
    // while it holds the list that names it.
    unsafe {
        CpuBuf {
            page: buf.page.reclaim(written),
            chunks: buf.chunks.map(|c| c.reclaim()),
        }
    }
}

/// The device's `FLUSHED` marker for a group: no completion of it follows
/// on the queue, every buffer the device held of it came back before, and
/// the device no longer reads its node table.
///
/// # Invariants
///
/// Made only by [`Flushed::check`] from a completion that is such a marker,
/// for group `group`.
pub(crate) struct Flushed {
    group: u16,
}

impl Flushed {
    /// The marker, if `cqe` is one: kind `FLUSHED`, every field but its
    /// group and queue 0. (Whether the queue is leaving the group is the
    /// caller's to check.)
    pub(crate) fn check(cqe: &RawCqe) -> Option<Self> {
        let marker = cqe.kind() == rx_kind::FLUSHED
            && cqe.addr() == 0
            && cqe.bytes() == 0
            && cqe.frames() == 0
            && cqe.node() == 0
            && cqe.flags() == 0
            && cqe.taken() == 0;
        // INVARIANT: checked just above.
        marker.then_some(Self { group: cqe.group() })
    }

    /// The group the marker ends.
    pub(crate) fn group(&self) -> u16 {
        self.group
    }
}

/// What a group's flush did to one slot's buffers.
#[derive(Default)]
pub(crate) struct FlushedSlot {
    /// Buffers the device no longer owns: back in the pool, or given up.
    pub(crate) released: u32,
    /// A buffer the device was done with but whose completion was lost:
    /// back in the pool, its frames lost.
    pub(crate) lost: bool,
    /// A buffer taken with no completion before the marker, or held past
    /// it: given up for good (the device broke the flush's promise).
    pub(crate) abandoned: bool,
}

/// The device reported a take the entry does not show: it still holds the
/// buffer posted there.
#[derive(Debug)]
pub(crate) struct NotTaken;

/// One source node's buffers in a joined group. Both are the device's: they
/// come back only through this type's methods, each with its evidence.
#[derive(Default)]
pub(crate) struct Slot {
    /// Posted in the node table entry, the device's to take.
    posted: Option<DeviceBuf>,
    /// Taken by the device, being filled.
    device: Option<DeviceBuf>,
    /// `device` was taken as a starvation report counted (see
    /// [`Self::take_posted_reported_done`]), which says the device is done
    /// with it: unless a `DATA` completion names it, the group's `FLUSHED`
    /// marker ends it as lost, not as held past the flush.
    device_reported_done: bool,
    /// Starvation reports answered with an XON while a buffer was posted,
    /// since a completion last named the stream.
    pub(crate) starved_posted: u16,
    /// The device's count of buffers taken from the entry, as of the last
    /// completion naming the stream (see [`Self::record_taken`]).
    taken: u32,
}

impl Slot {
    /// The device's count of takes from the entry, as of the last
    /// completion naming the stream.
    pub(crate) fn taken(&self) -> u32 {
        self.taken
    }

    /// Whether `cqe` counts a take from the entry that no completion the
    /// driver handled has counted. A completion reporting the posted buffer
    /// taken must: one that does not is a stale copy of a completion already
    /// handled, whose buffer went back to the pool and may be posted again
    /// at the same address, still holding the frames it was split into.
    pub(crate) fn counts_new_take(&self, cqe: &RawCqe) -> bool {
        // Counts wrap: ahead by less than half the range.
        (cqe.taken().wrapping_sub(self.taken) as i32) > 0
    }

    /// A completion naming the stream was handled: its take count is the
    /// one to compare the next with.
    pub(crate) fn record_taken(&mut self, cqe: &RawCqe) {
        self.taken = cqe.taken();
    }

    /// Whether a buffer is posted in the entry.
    pub(crate) fn is_posted(&self) -> bool {
        self.posted.is_some()
    }

    /// The DMA address of the buffer posted in the entry.
    pub(crate) fn posted_addr(&self) -> Option<u64> {
        self.posted.as_ref().map(DeviceBuf::dma_addr)
    }

    /// The DMA address of the buffer the device holds.
    pub(crate) fn held_addr(&self) -> Option<u64> {
        self.device.as_ref().map(DeviceBuf::dma_addr)
    }

    /// Posts `buf` in entry `entry` of node table `table`, which must be
    /// empty. A buffer that could not be published goes back to the pool.
    pub(crate) fn post(
        &mut self,
        rings: &Rings,
        table: usize,
        entry: Entry,
        buf: DeviceBuf,
    ) -> bool {
        if rings.post(table, entry, buf.dma_addr()).is_err() {
            drop(reclaim(buf, Proof::NeverTaken));
            return false;
        }
        // Callers post into empty entries only: a buffer replaced here would
        // be dropped as the device's, which warns and leaks it.
        self.posted = Some(buf);
        self.starved_posted = 0;
        true
    }

    /// The device reported taking the buffer posted in entry `entry` of
    /// node table `table`: it becomes the device's once the entry, which the
    /// device empties as it takes a buffer and only the driver fills, reads
    /// empty. A buffer the device held before is then done with (the device
    /// holds one a stream at a time): its completion was lost, and it is
    /// returned for the caller to drop, its frames lost.
    pub(crate) fn take_posted(
        &mut self,
        rings: &Rings,
        table: usize,
        entry: Entry,
    ) -> Result<Option<CpuBuf>, NotTaken> {
        if self.posted.is_none() || rings.entry(table, entry).ok() != Some(0) {
            return Err(NotTaken);
        }
        self.starved_posted = 0;
        self.device_reported_done = false;
        let old = core::mem::replace(&mut self.device, self.posted.take());
        Ok(old.map(|old| reclaim(old, Proof::Superseded)))
    }

    /// As [`Self::take_posted`], for a take counted by a starvation report:
    /// the device says it took the buffer and is done with it. The entry
    /// being empty proves the take, not that it came before the report: a
    /// report read late finds the entry as the truth would, the device
    /// having taken the buffer since, and its DATA completion follows. So
    /// the buffer stays the device's until that completion, the next take
    /// or starvation, or the group's flush.
    pub(crate) fn take_posted_reported_done(
        &mut self,
        rings: &Rings,
        table: usize,
        entry: Entry,
    ) -> Result<Option<CpuBuf>, NotTaken> {
        let old = self.take_posted(rings, table, entry)?;
        self.device_reported_done = true;
        Ok(old)
    }

    /// A DATA completion for the stream: the buffer the device held, if
    /// it is the one the completion names, comes back with the bytes the
    /// device wrote synced for the CPU.
    pub(crate) fn complete(&mut self, cqe: &RawCqe) -> Option<CpuBuf> {
        if cqe.kind() != rx_kind::DATA || self.held_addr() != Some(cqe.addr()) {
            return None;
        }
        self.device_reported_done = false;
        let written = cqe.bytes() as usize;
        self.device
            .take()
            .map(|buf| reclaim(buf, Proof::Written(written)))
    }

    /// A STARVED report with no take since the last completion naming the
    /// stream (`cqe.taken()` equals the count): the device holds no buffer of
    /// the stream, so one it held closed with a completion that was lost,
    /// and comes back (its frames lost). Nothing for another report.
    pub(crate) fn starved_holding_none(&mut self, cqe: &RawCqe) -> Option<CpuBuf> {
        if cqe.kind() != rx_kind::STARVED || cqe.taken() != self.taken {
            return None;
        }
        self.device
            .take()
            .map(|buf| reclaim(buf, Proof::Superseded))
    }

    /// The group's `FLUSHED` marker: the buffer still in entry `entry` of
    /// node table `table` was never taken and never will be, and is cleared
    /// from it; one taken as a starvation report said, and never named by a
    /// DATA completion, was lost. Either goes back to the pool. Any other
    /// buffer the device took and did not give back before the marker is
    /// given up for good.
    pub(crate) fn flush(
        &mut self,
        rings: &Rings,
        table: usize,
        entry: Entry,
        _marker: &Flushed,
    ) -> FlushedSlot {
        let mut out = FlushedSlot::default();
        if let Some(buf) = self.posted.take() {
            out.released += 1;
            let addr = buf.dma_addr();
            if rings.entry(table, entry).ok() == Some(addr) && rings.post(table, entry, 0).is_ok() {
                drop(reclaim(buf, Proof::NeverTaken));
            } else {
                // Taken with no completion before the marker, which ends
                // them: the device may still write it.
                out.abandoned = true;
                buf.leak();
            }
        }
        if let Some(buf) = self.device.take() {
            out.released += 1;
            if core::mem::take(&mut self.device_reported_done) {
                // Taken as a starvation report said, done with then, and no
                // DATA completion named it before the marker that ends the
                // group.
                out.lost = true;
                drop(reclaim(buf, Proof::ReportedThenFlushed));
            } else {
                // Held past the flush that closes every stream.
                out.abandoned = true;
                buf.leak();
            }
        }
        out
    }

    /// Takes both buffers back from a device that `_reset` proves was
    /// reset.
    pub(crate) fn reset(&mut self, _reset: &Quiesced) {
        for buf in [self.posted.take(), self.device.take()]
            .into_iter()
            .flatten()
        {
            drop(reclaim(buf, Proof::Reset));
        }
    }

    /// Gives up both buffers for good: the device may still write them (a
    /// reset that failed).
    pub(crate) fn abandon(&mut self) {
        for buf in [self.posted.take(), self.device.take()]
            .into_iter()
            .flatten()
        {
            buf.leak();
        }
    }
}
