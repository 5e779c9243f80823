// SPDX-License-Identifier: GPL-2.0

//! The transmit path: one descriptor per frame, the frame's data mapped in
//! place (no copy), a doorbell per batch (`xmit_more`), byte queue limits,
//! and completions read from the queue status block in NAPI.

use kernel::prelude::*;

use crate::abi;
use crate::groups;
use crate::net::netdev::{Device, Operations};
use crate::net::skb::{SkBuff, TxMapped};
use crate::rings::QueueRings;

/// Transmit counters.
#[derive(Default, Clone, Copy)]
pub(crate) struct TxStats {
    pub(crate) packets: u64,
    pub(crate) bytes: u64,
    pub(crate) dropped: u64,
    /// Done counts from the device that made no sense.
    pub(crate) bad: u64,
}

impl TxStats {
    /// Adds `o`'s counts to these.
    pub(crate) fn add(&mut self, o: &Self) {
        self.packets += o.packets;
        self.bytes += o.bytes;
        self.dropped += o.dropped;
        self.bad += o.bad;
    }
}

/// The transmit ring's host side.
pub(crate) struct TxState {
    /// The frame behind each descriptor until it completes.
    slots: KVec<Option<TxMapped>>,
    /// Descriptors written, free running.
    tail: u32,
    /// Descriptors completed, free running.
    clean: u32,
    /// Descriptors in the ring, as a power of two.
    shift: u32,
    /// The queue pair's index, which is also the stack's transmit queue.
    queue: u32,
    pub(crate) stats: TxStats,
}

/// What `xmit` did.
pub(crate) enum Xmit {
    /// Queued; ring the doorbell with this tail unless more frames follow.
    Queued(u32),
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
            clean: 0,
            shift: 0,
            queue: 0,
            stats: TxStats::default(),
        }
    }

    /// The empty slots of a ring of 2^`shift` descriptors; made outside
    /// the transmit lock (it allocates, which may sleep).
    pub(crate) fn new_slots(shift: u32) -> Result<KVec<Option<TxMapped>>> {
        let n = 1usize << shift;
        let mut slots = KVec::with_capacity(n, GFP_KERNEL)?;
        for _ in 0..n {
            slots.push(None, GFP_KERNEL)?;
        }
        Ok(slots)
    }

    /// Starts transmitting on queue `queue` from descriptor 0 with `slots`
    /// (a power of two of them, from [`Self::new_slots`]).
    pub(crate) fn install(&mut self, slots: KVec<Option<TxMapped>>, queue: u32) {
        self.queue = queue;
        self.shift = slots.len().trailing_zeros();
        self.slots = slots;
        self.tail = 0;
        self.clean = 0;
    }

    fn ring(&self) -> u32 {
        1 << self.shift
    }

    /// Unmaps and frees every frame still in the ring (the device was reset
    /// or disabled, so it reads none of them any more) and returns the slots
    /// for the caller to free outside the lock.
    pub(crate) fn stop<T: Operations>(&mut self, dev: &Device<T>) -> KVec<Option<TxMapped>> {
        for slot in self.slots.iter_mut() {
            if let Some(frame) = slot.take() {
                frame.unmap(dev);
                self.stats.dropped += 1;
            }
        }
        dev.tx_reset(self.queue);
        core::mem::take(&mut self.slots)
    }

    /// Queues a frame for the device.
    pub(crate) fn xmit<T: Operations>(
        &mut self,
        dev: &Device<T>,
        rings: &QueueRings,
        mut skb: SkBuff,
    ) -> Xmit {
        if self.slots.is_empty() || self.tail.wrapping_sub(self.clean) >= self.ring() {
            dev.tx_stop(self.queue);
            return Xmit::Busy(skb);
        }
        let len = skb.len();
        if !(abi::MIN_FRAME_LEN as u32..=abi::MAX_FRAME_LEN as u32).contains(&len)
            || skb.linearize().is_err()
        {
            self.stats.dropped += 1;
            return Xmit::Dropped;
        }
        let group = groups::tx_group(skb.head());
        let frame = match skb.map_for_tx(dev) {
            Ok(f) => f,
            Err((_, skb)) => {
                drop(skb);
                self.stats.dropped += 1;
                return Xmit::Dropped;
            }
        };
        let idx = self.tail;
        if rings
            .tx_write(idx, self.shift, frame.dma_addr(), len as u16, group)
            .is_err()
        {
            frame.unmap(dev);
            self.stats.dropped += 1;
            return Xmit::Dropped;
        }
        let slot = (idx & (self.ring() - 1)) as usize;
        self.slots[slot] = Some(frame);
        self.tail = idx.wrapping_add(1);
        dev.tx_sent(self.queue, len);
        if self.tail.wrapping_sub(self.clean) >= self.ring() {
            dev.tx_stop(self.queue);
        }
        Xmit::Queued(self.tail)
    }

    /// Frees what the device completed; wakes the queue if it had stopped.
    pub(crate) fn clean<T: Operations>(&mut self, dev: &Device<T>, rings: &QueueRings) {
        let Ok(done) = rings.tx_done() else {
            return;
        };
        // The device may only complete what was written: anything else is a
        // broken device, and the ring is left as it is.
        if done.wrapping_sub(self.clean) > self.tail.wrapping_sub(self.clean) {
            self.stats.bad += 1;
            return;
        }
        let (mut pkts, mut bytes) = (0u32, 0u32);
        while self.clean != done {
            let slot = (self.clean & (self.ring() - 1)) as usize;
            if let Some(frame) = self.slots.get_mut(slot).and_then(Option::take) {
                pkts += 1;
                bytes += frame.len();
                frame.unmap(dev);
            }
            self.clean = self.clean.wrapping_add(1);
        }
        if pkts > 0 {
            self.stats.packets += u64::from(pkts);
            self.stats.bytes += u64::from(bytes);
            dev.tx_completed(self.queue, pkts, bytes);
            if dev.tx_stopped(self.queue) && self.tail.wrapping_sub(self.clean) < self.ring() / 2 {
                dev.tx_wake(self.queue);
            }
        }
    }
}
