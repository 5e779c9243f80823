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
    io::{io_write, Io},
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

/// The shared memory of one NIC.
pub(crate) struct Rings {
    master: Coherent<[u64]>,
    default_group: Coherent<[u64]>,
    cq: Coherent<[u8]>,
    tx: Coherent<[u8]>,
    qsb: Coherent<[u8]>,
}

impl Rings {
    /// Allocates the tables and rings, zeroed: no group joined, no buffer
    /// posted, every completion entry with phase 0 (not yet written).
    pub(crate) fn new(dev: &Device<Bound>) -> Result<Self> {
        Ok(Self {
            master: Coherent::zeroed_slice(dev, abi::MAX_GROUPS, GFP_KERNEL)?,
            default_group: Coherent::zeroed_slice(dev, abi::MAX_NODES, GFP_KERNEL)?,
            cq: Coherent::zeroed_slice(dev, abi::rx_cqe::SIZE << CQ_SHIFT, GFP_KERNEL)?,
            tx: Coherent::zeroed_slice(dev, abi::tx_desc::SIZE << TX_SHIFT, GFP_KERNEL)?,
            qsb: Coherent::zeroed_slice(dev, abi::qsb::SIZE, GFP_KERNEL)?,
        })
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
