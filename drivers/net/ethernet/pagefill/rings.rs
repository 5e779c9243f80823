// SPDX-License-Identifier: GPL-2.0

//! The host memory the NIC shares with the driver: the master table, the
//! default group's node table, the completion ring, the transmit ring and
//! the queue status block, allocated once at probe as coherent DMA memory.
//!
//! The driver programs their addresses when the interface opens; a reset on
//! stop hands everything back to the host before the next open.

use kernel::{
    device::{Bound, Device},
    dma::Coherent,
    io::{io_read, io_write, Io},
    prelude::*, //
};

use crate::abi;
use crate::hw::Bar0;

/// Completion ring entries, as a power of two.
pub(crate) const CQ_SHIFT: u32 = 10;
/// Transmit ring entries, as a power of two.
pub(crate) const TX_SHIFT: u32 = 9;
/// The group a freshly loaded NIC joins and transmits to.
pub(crate) const DEFAULT_GROUP: u16 = 0;
/// The MSI-X vector of queue 0 (0 is the misc vector).
const QUEUE0_VECTOR: u32 = 1;

/// 64-bit words of a completion entry.
const CQE_WORDS: usize = abi::rx_cqe::SIZE / 8;

/// The shared memory of one NIC.
pub(crate) struct Rings {
    master: Coherent<[u64]>,
    default_group: Coherent<[u64]>,
    /// Completion entries as 64-bit words, little endian as the device
    /// writes them (the driver targets little-endian hosts; see
    /// [`RawCqe`]).
    cq: Coherent<[u64]>,
    tx: Coherent<[u64]>,
    qsb: Coherent<[u32]>,
}

/// A completion entry as read from the ring, not yet validated.
#[derive(Clone, Copy, Debug)]
pub(crate) struct RawCqe {
    pub(crate) addr: u64,
    pub(crate) bytes: u32,
    pub(crate) frames: u16,
    pub(crate) group: u16,
    pub(crate) node: u8,
    pub(crate) queue: u8,
    pub(crate) kind: u8,
    pub(crate) flags: u8,
}

impl Rings {
    /// Allocates the tables and rings, zeroed: no group joined, no buffer
    /// posted, every completion entry with phase 0 (not yet written).
    pub(crate) fn new(dev: &Device<Bound>) -> Result<Self> {
        Ok(Self {
            master: Coherent::zeroed_slice(dev, abi::MAX_GROUPS, GFP_KERNEL)?,
            default_group: Coherent::zeroed_slice(dev, abi::MAX_NODES, GFP_KERNEL)?,
            cq: Coherent::zeroed_slice(dev, CQE_WORDS << CQ_SHIFT, GFP_KERNEL)?,
            tx: Coherent::zeroed_slice(dev, (abi::tx_desc::SIZE / 8) << TX_SHIFT, GFP_KERNEL)?,
            qsb: Coherent::zeroed_slice(dev, abi::qsb::SIZE / 4, GFP_KERNEL)?,
        })
    }

    /// Clears what a previous run left: completions (a reset device starts
    /// again at entry 0, phase 1), the status block and the node table.
    pub(crate) fn clear(&self) -> Result {
        for i in 0..self.cq.len() {
            io_write!(&self.cq, [try: i], 0);
        }
        for i in 0..self.qsb.len() {
            io_write!(&self.qsb, [try: i], 0);
        }
        for n in 0..abi::MAX_NODES {
            self.post(n, 0)?;
        }
        Ok(())
    }

    /// Writes buffer `addr` into source node `node`'s entry of the default
    /// group's node table (0 empties it).
    pub(crate) fn post(&self, node: usize, addr: u64) -> Result {
        io_write!(&self.default_group, [try: node], addr);
        Ok(())
    }

    /// Whether completion `index` (free running) is new: its phase bit is
    /// the one the device writes in that pass over the ring.
    pub(crate) fn cq_ready(&self, index: u32) -> Result<bool> {
        let slot = (index & ((1 << CQ_SHIFT) - 1)) as usize;
        let word: u64 = io_read!(&self.cq, [try: slot * CQE_WORDS + 3]);
        let phase = (word >> 32) as u32 & 1;
        Ok(phase == ((index >> CQ_SHIFT) & 1) ^ 1)
    }

    /// Reads completion `index`, after [`Self::cq_ready`] said it is new.
    pub(crate) fn cq_read(&self, index: u32) -> Result<RawCqe> {
        // The phase was read first; the rest of the entry must not be read
        // before it (the device writes the phase word last).
        core::sync::atomic::fence(core::sync::atomic::Ordering::Acquire);
        let base = (index & ((1 << CQ_SHIFT) - 1)) as usize * CQE_WORDS;
        let w0: u64 = io_read!(&self.cq, [try: base]);
        let w1: u64 = io_read!(&self.cq, [try: base + 1]);
        let w2: u64 = io_read!(&self.cq, [try: base + 2]);
        Ok(RawCqe {
            addr: w0,
            bytes: w1 as u32,
            frames: (w1 >> 32) as u16,
            group: (w1 >> 48) as u16,
            node: w2 as u8,
            queue: (w2 >> 8) as u8,
            kind: (w2 >> 16) as u8,
            flags: (w2 >> 24) as u8,
        })
    }

    /// Writes transmit descriptor `index` (free running): one whole frame of
    /// `len` bytes at `addr`, to `group`.
    pub(crate) fn tx_write(&self, index: u32, addr: u64, len: u16, group: u16) -> Result {
        let base = (index & ((1 << TX_SHIFT) - 1)) as usize * (abi::tx_desc::SIZE / 8);
        let flags = abi::tx_flags::SOF | abi::tx_flags::EOF;
        io_write!(&self.tx, [try: base], addr);
        let word = u64::from(len) | u64::from(group) << 16 | u64::from(flags) << 32;
        io_write!(&self.tx, [try: base + 1], word);
        Ok(())
    }

    /// The device's count of transmit descriptors done (free running).
    pub(crate) fn tx_done(&self) -> Result<u32> {
        Ok(io_read!(&self.qsb, [try: abi::qsb::TX_DONE / 4]))
    }

    /// Tells the device how many completions the driver consumed.
    pub(crate) fn set_consumed(&self, count: u32) -> Result {
        io_write!(&self.qsb, [try: abi::qsb::RX_CONSUMED / 4], count);
        Ok(())
    }

    /// Programs the device with this memory and enables it; returns the
    /// status register afterwards.
    pub(crate) fn enable(&self, bar: &Bar0<'_>) -> Result<u32> {
        // Join the default group: its node table in the master entry.
        let group = usize::from(DEFAULT_GROUP);
        io_write!(&self.master, [try: group], self.default_group.dma_address());
        let lo_hi = |a: u64| (a as u32, (a >> 32) as u32);
        let (lo, hi) = lo_hi(self.master.dma_address());
        bar.write32(lo, abi::reg::MASTER_LO);
        bar.write32(hi, abi::reg::MASTER_HI);
        bar.write32(abi::MIN_BUF_SHIFT, abi::reg::BUF_SHIFT);
        bar.write32(1, abi::reg::NUM_QUEUES);
        let q = |r| abi::reg::queue(0, r);
        let (lo, hi) = lo_hi(self.cq.dma_address());
        bar.write32(lo, q(abi::reg::Q_CQ_LO));
        bar.write32(hi, q(abi::reg::Q_CQ_HI));
        bar.write32(CQ_SHIFT, q(abi::reg::Q_CQ_SHIFT));
        let (lo, hi) = lo_hi(self.tx.dma_address());
        bar.write32(lo, q(abi::reg::Q_TX_LO));
        bar.write32(hi, q(abi::reg::Q_TX_HI));
        bar.write32(TX_SHIFT, q(abi::reg::Q_TX_SHIFT));
        let (lo, hi) = lo_hi(self.qsb.dma_address());
        bar.write32(lo, q(abi::reg::Q_QSB_LO));
        bar.write32(hi, q(abi::reg::Q_QSB_HI));
        bar.write32(QUEUE0_VECTOR | QUEUE0_VECTOR << 8, q(abi::reg::Q_VECTORS));
        bar.write32(abi::ctrl::ENABLE, abi::reg::CTRL);
        let status = bar.read32(abi::reg::STATUS);
        if status & abi::status::FATAL != 0 {
            return Err(EIO);
        }
        Ok(status)
    }
}
