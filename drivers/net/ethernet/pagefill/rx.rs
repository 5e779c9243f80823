// SPDX-License-Identifier: GPL-2.0

//! The receive path, the seed's design: a page per source node posted in the
//! default group's node table ahead of need; the NIC packs frames into it and
//! reports it; NAPI polls completions (by phase, no MMIO read), checks every
//! field against what the driver posted, splits the page into skbs, refills
//! the entry, and rings XON only for a stream the device reported starved.
//!
//! Frames are copied out of the page into skbs (a copybreak for every
//! size); the page returns to the pool at once. Fragments that reference the
//! page come next.

use kernel::prelude::*;

use crate::abi::{self, record, rx_flags, rx_kind};
use crate::net::napi::Napi;
use crate::net::netdev::Device;
use crate::net::page_pool::{PagePool, PoolPage};
use crate::rings::{RawCqe, Rings, DEFAULT_GROUP};

/// Pages the pool keeps ready.
pub(crate) const POOL_SIZE: u32 = 256;

/// One source node's pages in the default group.
#[derive(Default)]
struct Slot {
    /// In the node table entry, the device's to take.
    posted: Option<PoolPage>,
    /// Taken by the device, being filled.
    device: Option<PoolPage>,
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
    pub(crate) starved: u64,
    pub(crate) xon: u64,
    pub(crate) alloc_failed: u64,
}

/// The pool and the pages posted in the default group's node table: made
/// and dropped outside the receive lock, since creating and destroying a
/// pool may sleep.
pub(crate) struct RxBuffers {
    // Dropped in this order: the pages go back to the pool before it goes.
    slots: KVec<Slot>,
    pool: PagePool,
}

impl RxBuffers {
    /// Creates the pool and posts a page for every source node.
    pub(crate) fn new<T: crate::net::netdev::Operations>(
        dev: &Device<T>,
        napi: &Napi,
        rings: &Rings,
    ) -> Result<Self> {
        rings.clear()?;
        let pool = PagePool::new(dev, napi, POOL_SIZE)?;
        let mut slots = KVec::with_capacity(abi::MAX_NODES, GFP_KERNEL)?;
        for node in 0..abi::MAX_NODES {
            let page = pool.alloc().ok_or(ENOMEM)?;
            rings.post(node, page.dma_addr())?;
            slots.push(
                Slot {
                    posted: Some(page),
                    device: None,
                },
                GFP_KERNEL,
            )?;
        }
        Ok(Self { slots, pool })
    }
}

/// What the receive path owns while the interface is up.
pub(crate) struct RxState {
    pool: Option<PagePool>,
    slots: KVec<Slot>,
    /// Completions consumed, free running.
    head: u32,
    pub(crate) stats: RxStats,
}

/// What a poll asks of the caller once the lock is dropped.
pub(crate) struct PollResult {
    pub(crate) work: i32,
    /// Streams to ring XON for.
    pub(crate) xon: KVec<u32>,
}

impl RxState {
    pub(crate) fn new() -> Self {
        Self {
            pool: None,
            slots: KVec::new(),
            head: 0,
            stats: RxStats::default(),
        }
    }

    /// Starts receiving into `buffers` from completion 0.
    pub(crate) fn install(&mut self, buffers: RxBuffers) {
        self.slots = buffers.slots;
        self.pool = Some(buffers.pool);
        self.head = 0;
    }

    /// Takes every page (the device was reset, so it holds none) and the
    /// pool back, for the caller to drop outside the lock.
    pub(crate) fn take(&mut self, rings: &Rings) -> Option<RxBuffers> {
        let _ = rings.clear();
        let slots = core::mem::take(&mut self.slots);
        self.pool.take().map(|pool| RxBuffers { slots, pool })
    }

    /// Posts a fresh page in `node`'s entry if it is empty.
    fn refill(&mut self, rings: &Rings, node: usize) {
        let Some(slot) = self.slots.get_mut(node) else {
            return;
        };
        if slot.posted.is_some() {
            return;
        }
        match self.pool.as_ref().and_then(PagePool::alloc) {
            Some(page) => {
                if rings.post(node, page.dma_addr()).is_ok() {
                    slot.posted = Some(page);
                }
            }
            // The stream will starve and report it; the next completion
            // tries again.
            None => self.stats.alloc_failed += 1,
        }
    }

    /// Processes completions until `budget` frames went up the stack.
    pub(crate) fn poll<T: crate::net::netdev::Operations>(
        &mut self,
        dev: &Device<T>,
        napi: &Napi,
        rings: &Rings,
        budget: i32,
    ) -> PollResult {
        let mut res = PollResult {
            work: 0,
            xon: KVec::new(),
        };
        while res.work < budget {
            match rings.cq_ready(self.head) {
                Ok(true) => {}
                _ => break,
            }
            let Ok(cqe) = rings.cq_read(self.head) else {
                break;
            };
            // A buffer's frames go up together: leave it for the next poll
            // if they would overrun this poll's budget.
            if cqe.kind == rx_kind::DATA
                && res.work > 0
                && res.work + i32::from(cqe.frames) > budget
            {
                break;
            }
            self.head = self.head.wrapping_add(1);
            res.work += self.completion(dev, napi, rings, &cqe, &mut res.xon).max(1);
        }
        let _ = rings.set_consumed(self.head);
        res
    }

    /// Handles one completion; returns the frames delivered.
    fn completion<T: crate::net::netdev::Operations>(
        &mut self,
        dev: &Device<T>,
        napi: &Napi,
        rings: &Rings,
        cqe: &RawCqe,
        xon: &mut KVec<u32>,
    ) -> i32 {
        let node = usize::from(cqe.node);
        // Only the default group is joined, on queue 0.
        if cqe.group != DEFAULT_GROUP || node >= self.slots.len() || cqe.queue != 0 {
            self.stats.bad += 1;
            return 0;
        }
        let mut delivered = 0;
        let starved = match cqe.kind {
            rx_kind::CLAIM => {
                let slot = &mut self.slots[node];
                let posted = slot.posted.as_ref().map(PoolPage::dma_addr);
                if slot.device.is_some() || posted != Some(cqe.addr) {
                    self.stats.bad += 1;
                    return 0;
                }
                slot.device = slot.posted.take();
                false
            }
            rx_kind::DATA => {
                let slot = &mut self.slots[node];
                let held = slot.device.as_ref().map(PoolPage::dma_addr);
                if held != Some(cqe.addr) {
                    self.stats.bad += 1;
                    return 0;
                }
                if let Some(page) = slot.device.take() {
                    delivered = self.split(dev, napi, &page, cqe);
                }
                // The page returns to the pool here; the frames were copied.
                if cqe.flags & rx_flags::NEXT_TAKEN != 0 {
                    let slot = &mut self.slots[node];
                    if slot.posted.is_none() {
                        self.stats.bad += 1;
                    }
                    slot.device = slot.posted.take();
                }
                cqe.flags & rx_flags::STARVED != 0
            }
            rx_kind::STARVED => true,
            _ => {
                self.stats.bad += 1;
                return 0;
            }
        };
        self.refill(rings, node);
        if starved {
            self.stats.starved += 1;
            if xon
                .push(abi::stream_id(cqe.group, cqe.node), GFP_ATOMIC)
                .is_ok()
            {
                self.stats.xon += 1;
            }
        }
        delivered
    }

    /// Splits a written page into skbs; returns the frames delivered.
    fn split<T: crate::net::netdev::Operations>(
        &mut self,
        dev: &Device<T>,
        napi: &Napi,
        page: &PoolPage,
        cqe: &RawCqe,
    ) -> i32 {
        let bytes = cqe.bytes as usize;
        if bytes > kernel::page::PAGE_SIZE {
            self.stats.bad += 1;
            return 0;
        }
        let data = page.data(bytes);
        let mut off = 0;
        let mut frames = 0u16;
        while off + record::HEADER_SIZE <= data.len() {
            let len = usize::from(u16::from_le_bytes([
                data[off + record::LEN],
                data[off + record::LEN + 1],
            ]));
            let start = off + record::HEADER_SIZE;
            let Some(frame) = data.get(start..start + len) else {
                self.stats.bad += 1;
                break;
            };
            if len < abi::MIN_FRAME_LEN {
                self.stats.bad += 1;
                break;
            }
            frames += 1;
            let skb = napi.alloc_skb(len as u32).and_then(|mut skb| {
                skb.put_data(frame).ok()?;
                skb.eth_type_trans(dev);
                Some(skb)
            });
            match skb {
                Some(skb) => {
                    napi.gro_receive(skb);
                    self.stats.packets += 1;
                    self.stats.bytes += len as u64;
                }
                None => self.stats.dropped += 1,
            }
            off += record::size(len);
        }
        if frames != cqe.frames || off != bytes {
            self.stats.bad += 1;
        }
        i32::from(frames)
    }
}
