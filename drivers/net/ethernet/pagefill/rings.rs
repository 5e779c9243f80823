// SPDX-License-Identifier: GPL-2.0

//! The host memory the NIC shares with the driver: the master table, the
//! node tables of the groups the interface joins, and per queue pair the
//! completion ring, the transmit ring and the queue status block, allocated
//! once at probe as coherent DMA memory.
//!
//! Node tables come from one block of [`MAX_JOINED`] tables (256 bytes
//! each): a joined group takes one, an unjoined group costs only its master
//! entry. The driver programs the addresses when the interface opens; a
//! reset on stop hands everything back to the host before the next open.

use kernel::{
    device::{Bound, Device},
    dma::Coherent,
    io::{io_read, io_write, Io},
    prelude::*,
    sync::barrier::{dma_mb, Read}, //
};

use crate::abi;
use crate::hw::Bar0;
use crate::net::ethtool::Pause;

/// Completion ring entries, as a power of two.
pub(crate) const CQ_SHIFT: u32 = 10;
/// Transmit ring entries by default, as a power of two.
pub(crate) const TX_SHIFT_DEFAULT: u32 = 9;
/// Largest transmit ring the driver allocates, as a power of two.
pub(crate) const TX_SHIFT_MAX: u32 = 12;
/// Groups an interface can join at once: node tables allocated at probe.
pub(crate) const MAX_JOINED: usize = 64;
/// The MSI-X vector of queue pair `q` (0 is the misc vector).
pub(crate) const fn queue_vector(q: usize) -> u32 {
    q as u32 + 1
}

/// 64-bit words of a completion entry.
const CQE_WORDS: usize = abi::rx_cqe::SIZE / 8;

/// The rings of one queue pair.
pub(crate) struct QueueRings {
    /// Completion entries as 64-bit words, little endian as the device
    /// writes them (converted on every read).
    cq: Coherent<[u64]>,
    /// Room for `1 << TX_SHIFT_MAX` descriptors; the configured ring uses
    /// the start of it.
    tx: Coherent<[u64]>,
    qsb: Coherent<[u32]>,
}

/// Entries of a node table: a column for each queue pair.
const TABLE_ENTRIES: usize = abi::NODE_TABLE_BYTES / 8;

/// The node-table entry through which one queue pair receives one source
/// node's stream.
///
/// # Invariants
///
/// `self.0 < TABLE_ENTRIES`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Entry(usize);

impl Entry {
    /// Queue pair `queue`'s entry for node `node`, if both are in range.
    pub(crate) fn of(queue: usize, node: usize) -> Option<Self> {
        // INVARIANT: the node table holds a column of `MAX_NODES` entries
        // for each of `MAX_QUEUES` queue pairs.
        (queue < abi::MAX_QUEUES && node < abi::MAX_NODES)
            .then(|| Self(abi::node_entry(queue, node) / 8))
    }
}

/// What the device does besides receiving and transmitting
/// ([`abi::reg::CTRL`]).
#[derive(Clone, Copy)]
pub(crate) struct Modes {
    /// Records carry flow hashes ([`abi::ctrl::RX_HASH`]).
    pub(crate) rx_hash: bool,
    /// Sent frames come back to the receive side ([`abi::ctrl::LOOPBACK`]).
    pub(crate) loopback: bool,
    /// Xoff sent and honoured (clear: [`abi::ctrl::NO_XOFF`],
    /// [`abi::ctrl::IGNORE_XOFF`]).
    pub(crate) pause: Pause,
}

impl Modes {
    fn bits(self) -> u32 {
        [
            (self.rx_hash, abi::ctrl::RX_HASH),
            (self.loopback, abi::ctrl::LOOPBACK),
            (!self.pause.tx, abi::ctrl::NO_XOFF),
            (!self.pause.rx, abi::ctrl::IGNORE_XOFF),
        ]
        .iter()
        .filter(|(on, _)| *on)
        .fold(0, |bits, (_, bit)| bits | bit)
    }
}

/// The shared memory of one NIC.
pub(crate) struct Rings {
    master: Coherent<[u64]>,
    /// [`MAX_JOINED`] node tables of [`TABLE_ENTRIES`] entries each.
    tables: Coherent<[u64]>,
    queues: KVec<QueueRings>,
}

/// A transmit descriptor to write.
pub(crate) struct TxDesc {
    pub(crate) addr: u64,
    pub(crate) len: u16,
    pub(crate) group: u16,
    pub(crate) flags: u8,
    pub(crate) csum_offset: u8,
    pub(crate) csum_start: u16,
}

impl TxDesc {
    /// The descriptor of `len` bytes at `addr` for `group`, with `flags`
    /// and, on a frame's first descriptor, `csum`'s checksum request (start,
    /// offset); `None` for a length a descriptor cannot hold (0, or more
    /// than 16 bits).
    #[inline]
    pub(crate) fn new(
        addr: u64,
        len: u32,
        group: u16,
        flags: u8,
        csum: Option<(u16, u8)>,
    ) -> Option<Self> {
        let (csum_start, csum_offset) = csum.unwrap_or((0, 0));
        Some(Self {
            addr,
            len: u16::try_from(len).ok().filter(|&l| l > 0)?,
            group,
            flags,
            csum_offset,
            csum_start,
        })
    }
}

/// A completion entry as read from the ring, not yet validated.
///
/// # Invariants
///
/// Made only by [`QueueRings::cq_read`]: its fields are what the device
/// wrote in a completion entry (copies of one read value may be kept). The
/// receive path takes buffers back from the device on its evidence
/// (`rx_slot.rs`), so no other code can make one up.
#[derive(Clone, Copy, Debug)]
pub(crate) struct RawCqe {
    addr: u64,
    bytes: u32,
    frames: u16,
    group: u16,
    node: u8,
    queue: u8,
    kind: u8,
    flags: u8,
    taken: u32,
}

impl RawCqe {
    /// The bus address of the buffer the completion names.
    pub(crate) fn addr(&self) -> u64 {
        self.addr
    }

    /// Bytes the device wrote in the buffer.
    pub(crate) fn bytes(&self) -> u32 {
        self.bytes
    }

    /// Frame records the device wrote in the buffer.
    pub(crate) fn frames(&self) -> u16 {
        self.frames
    }

    /// The stream's group.
    pub(crate) fn group(&self) -> u16 {
        self.group
    }

    /// The stream's source node.
    pub(crate) fn node(&self) -> u8 {
        self.node
    }

    /// The queue the device wrote the completion for.
    pub(crate) fn queue(&self) -> u8 {
        self.queue
    }

    /// What the completion reports ([`abi::rx_kind`]).
    pub(crate) fn kind(&self) -> u8 {
        self.kind
    }

    /// [`abi::rx_flags`].
    pub(crate) fn flags(&self) -> u8 {
        self.flags
    }

    /// Buffers the device took from the stream's entry so far.
    pub(crate) fn taken(&self) -> u32 {
        self.taken
    }
}

impl QueueRings {
    fn new(dev: &Device<Bound>) -> Result<Self> {
        Ok(Self {
            cq: Coherent::zeroed_slice(dev, CQE_WORDS << CQ_SHIFT, GFP_KERNEL)?,
            tx: Coherent::zeroed_slice(dev, (abi::tx_desc::SIZE / 8) << TX_SHIFT_MAX, GFP_KERNEL)?,
            qsb: Coherent::zeroed_slice(dev, abi::qsb::SIZE / 4, GFP_KERNEL)?,
        })
    }

    /// Clears what a previous run left: completions (a reset device starts
    /// again at entry 0, phase 1) and the status block.
    fn clear(&self) -> Result {
        for i in 0..self.cq.len() {
            io_write!(&self.cq, [try: i], 0);
        }
        for i in 0..self.qsb.len() {
            io_write!(&self.qsb, [try: i], 0);
        }
        Ok(())
    }

    /// Whether completion `index` (free running) is new: its phase bit is
    /// the one the device writes in that pass over the ring.
    pub(crate) fn cq_ready(&self, index: u32) -> Result<bool> {
        let slot = (index & ((1 << CQ_SHIFT) - 1)) as usize;
        let word = u64::from_le(io_read!(&self.cq, [try: slot * CQE_WORDS + 3]));
        let phase = (word >> 32) as u32 & 1;
        Ok(phase == ((index >> CQ_SHIFT) & 1) ^ 1)
    }

    /// Reads completion `index`, after [`Self::cq_ready`] said it is new.
    pub(crate) fn cq_read(&self, index: u32) -> Result<RawCqe> {
        // The phase was read first; the rest of the entry must not be read
        // before it (the device writes the phase word last). A compiler
        // fence orders no loads on a weakly ordered CPU: this is the
        // kernel's barrier for reads of coherent DMA memory.
        dma_mb(Read);
        let base = (index & ((1 << CQ_SHIFT) - 1)) as usize * CQE_WORDS;
        let w0 = u64::from_le(io_read!(&self.cq, [try: base]));
        let w1 = u64::from_le(io_read!(&self.cq, [try: base + 1]));
        let w2 = u64::from_le(io_read!(&self.cq, [try: base + 2]));
        // INVARIANT: the fields of the entry the device wrote.
        Ok(RawCqe {
            addr: w0,
            bytes: w1 as u32,
            frames: (w1 >> 32) as u16,
            group: (w1 >> 48) as u16,
            node: w2 as u8,
            queue: (w2 >> 8) as u8,
            kind: (w2 >> 16) as u8,
            flags: (w2 >> 24) as u8,
            taken: (w2 >> 32) as u32,
        })
    }

    /// Writes transmit descriptor `index` (free running) of a ring of
    /// 2^`shift` entries: `len` bytes at `addr` of a frame to `group`, with
    /// `flags` ([`abi::tx_flags`]) and, for a first descriptor with
    /// `CSUM`, where the checksum starts and goes.
    #[inline]
    pub(crate) fn tx_write(&self, index: u32, shift: u32, d: &TxDesc) -> Result {
        let base = (index & ((1 << shift) - 1)) as usize * (abi::tx_desc::SIZE / 8);
        io_write!(&self.tx, [try: base], d.addr.to_le());
        let word = u64::from(d.len)
            | u64::from(d.group) << 16
            | u64::from(d.flags) << 32
            | u64::from(d.csum_offset) << 40
            | u64::from(d.csum_start) << 48;
        io_write!(&self.tx, [try: base + 1], word.to_le());
        Ok(())
    }

    /// The device's count of transmit descriptors done (free running).
    pub(crate) fn tx_done(&self) -> Result<u32> {
        Ok(u32::from_le(
            io_read!(&self.qsb, [try: abi::qsb::TX_DONE / 4]),
        ))
    }

    /// Tells the device how many completions the driver consumed.
    pub(crate) fn set_consumed(&self, count: u32) -> Result {
        io_write!(&self.qsb, [try: abi::qsb::RX_CONSUMED / 4], count.to_le());
        Ok(())
    }
}

impl Rings {
    /// Allocates the tables and the rings of `queues` queue pairs, zeroed:
    /// no group joined, no buffer posted, every completion entry with phase
    /// 0 (not yet written).
    pub(crate) fn new(dev: &Device<Bound>, queues: usize) -> Result<Self> {
        let mut q = KVec::with_capacity(queues, GFP_KERNEL)?;
        for _ in 0..queues {
            q.push(QueueRings::new(dev)?, GFP_KERNEL)?;
        }
        Ok(Self {
            master: Coherent::zeroed_slice(dev, abi::MAX_GROUPS, GFP_KERNEL)?,
            tables: Coherent::zeroed_slice(dev, MAX_JOINED * TABLE_ENTRIES, GFP_KERNEL)?,
            queues: q,
        })
    }

    /// The rings of queue pair `q`.
    pub(crate) fn queue(&self, q: usize) -> Result<&QueueRings> {
        self.queues.get(q).ok_or(EINVAL)
    }

    /// Clears what a previous run left: every queue's completions and
    /// status block, the master table and every node table.
    pub(crate) fn clear(&self) -> Result {
        for q in self.queues.iter() {
            q.clear()?;
        }
        for i in 0..self.master.len() {
            io_write!(&self.master, [try: i], 0);
        }
        for i in 0..self.tables.len() {
            io_write!(&self.tables, [try: i], 0);
        }
        Ok(())
    }

    /// Points group `group`'s master entry at node table `table` (joins
    /// the group), or with `None` clears it (the device stops looking).
    pub(crate) fn set_master(&self, group: u16, table: Option<usize>) -> Result {
        let addr = match table {
            Some(t) if t < MAX_JOINED => {
                self.tables.dma_address() + (t * abi::NODE_TABLE_BYTES) as u64
            }
            Some(_) => return Err(EINVAL),
            None => 0,
        };
        io_write!(&self.master, [try: usize::from(group)], addr.to_le());
        Ok(())
    }

    /// Writes buffer `addr` into entry `entry` of node table `table` (0
    /// empties it).
    pub(crate) fn post(&self, table: usize, entry: Entry, addr: u64) -> Result {
        if table >= MAX_JOINED {
            return Err(EINVAL);
        }
        io_write!(&self.tables, [try: table * TABLE_ENTRIES + entry.0], addr.to_le());
        Ok(())
    }

    /// Reads entry `entry` of node table `table`: 0 once the device took
    /// the buffer posted there.
    pub(crate) fn entry(&self, table: usize, entry: Entry) -> Result<u64> {
        if table >= MAX_JOINED {
            return Err(EINVAL);
        }
        Ok(u64::from_le(
            io_read!(&self.tables, [try: table * TABLE_ENTRIES + entry.0]),
        ))
    }

    /// Empties every entry of node table `table`.
    pub(crate) fn clear_table(&self, table: usize) -> Result {
        if table >= MAX_JOINED {
            return Err(EINVAL);
        }
        for i in 0..TABLE_ENTRIES {
            io_write!(&self.tables, [try: table * TABLE_ENTRIES + i], 0);
        }
        Ok(())
    }

    /// Programs the device with this memory for `queues` queue pairs,
    /// buffers of 2^`buf_shift` bytes and transmit rings of 2^`tx_shift`
    /// entries, and enables it in `modes`, each queue in chunk mode whose
    /// `chunk_rooms` entry is not 0 ([`abi::reg::Q_CHUNK`]); returns the
    /// status register afterwards.
    pub(crate) fn enable(
        &self,
        bar: &Bar0<'_>,
        queues: usize,
        buf_shift: u32,
        tx_shift: u32,
        modes: Modes,
        chunk_rooms: &[u32; abi::MAX_QUEUES],
    ) -> Result<u32> {
        if !(abi::MIN_RING_SHIFT..=TX_SHIFT_MAX).contains(&tx_shift)
            || !(abi::MIN_BUF_SHIFT..=abi::MAX_BUF_SHIFT).contains(&buf_shift)
            || !(1..=self.queues.len()).contains(&queues)
        {
            return Err(EINVAL);
        }
        let lo_hi = |a: u64| (a as u32, (a >> 32) as u32);
        let (lo, hi) = lo_hi(self.master.dma_address());
        bar.write32(lo, abi::reg::MASTER_LO);
        bar.write32(hi, abi::reg::MASTER_HI);
        bar.write32(buf_shift, abi::reg::BUF_SHIFT);
        bar.write32(queues as u32, abi::reg::NUM_QUEUES);
        for (i, q) in self.queues.iter().take(queues).enumerate() {
            let reg = |r| abi::reg::queue(i, r);
            let w = |v: u32, r| bar.try_write32(v, reg(r));
            let (lo, hi) = lo_hi(q.cq.dma_address());
            w(lo, abi::reg::Q_CQ_LO)?;
            w(hi, abi::reg::Q_CQ_HI)?;
            w(CQ_SHIFT, abi::reg::Q_CQ_SHIFT)?;
            let (lo, hi) = lo_hi(q.tx.dma_address());
            w(lo, abi::reg::Q_TX_LO)?;
            w(hi, abi::reg::Q_TX_HI)?;
            w(tx_shift, abi::reg::Q_TX_SHIFT)?;
            let (lo, hi) = lo_hi(q.qsb.dma_address());
            w(lo, abi::reg::Q_QSB_LO)?;
            w(hi, abi::reg::Q_QSB_HI)?;
            let v = queue_vector(i);
            w(v | v << 8, abi::reg::Q_VECTORS)?;
            w(chunk_rooms[i], abi::reg::Q_CHUNK)?;
        }
        bar.write32(
            abi::ctrl::ENABLE | abi::ctrl::STEER | modes.bits(),
            abi::reg::CTRL,
        );
        let status = bar.read32(abi::reg::STATUS);
        if status & abi::status::FATAL != 0 {
            return Err(EIO);
        }
        Ok(status)
    }
}
