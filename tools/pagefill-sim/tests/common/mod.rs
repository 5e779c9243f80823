// SPDX-License-Identifier: GPL-2.0

//! A fake host for driving the model through its registers: fake memory
//! laid out like a driver would, fake interrupts, and a fabric port that
//! records what the NIC sent.

#![allow(dead_code)]

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use pagefill_abi::{self as abi, reg, rx_cqe};
use pagefill_sim::dma::{FakeMemory, Memory};
use pagefill_sim::fabric::{self, RecordingPort, Sent};
use pagefill_sim::nic::{Interrupts, Nic};

pub const BASE: u64 = 0x1000_0000;
pub const MASTER: u64 = BASE;
pub const NODE_TABLES: u64 = BASE + 0x1_0000;
pub const CQS: u64 = BASE + 0x20_0000;
pub const TX_RINGS: u64 = BASE + 0x30_0000;
pub const QSBS: u64 = BASE + 0x38_0000;
pub const TX_DATA: u64 = BASE + 0x40_0000;
pub const BUFFERS: u64 = BASE + 0x80_0000;
pub const MEM_SIZE: usize = 0x200_0000;
pub const ME: u8 = 1;

#[derive(Clone, Default)]
pub struct FakeIrq(pub Arc<Mutex<Vec<u16>>>);

impl Interrupts for FakeIrq {
    fn raise(&mut self, vector: u16) {
        self.0.lock().unwrap().push(vector);
    }
}

/// A decoded completion.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cqe {
    pub addr: u64,
    pub bytes: u32,
    pub frames: u16,
    pub group: u16,
    pub node: u8,
    pub queue: u8,
    pub kind: u8,
    pub flags: u8,
    pub taken: u32,
}

/// A sent message: (to, type, group, src, dst, data); a frame's data is its
/// sequence number, an EOT byte, then the frame.
pub type SentMsg = (Option<u8>, u8, u16, u8, u8, Vec<u8>);

pub struct Host {
    pub nic: Nic,
    pub mem: Arc<FakeMemory>,
    pub irqs: Arc<Mutex<Vec<u16>>>,
    pub sent: Sent,
    pub now: Instant,
    pub buf_shift: u32,
    pub cq_shift: u32,
    pub num_queues: usize,
    next_buf: u64,
    /// Per queue: completions consumed, and the next index to read.
    consumed: Vec<u32>,
    pub tx_written: Vec<u32>,
    tx_data_next: u64,
}

impl Host {
    /// A NIC configured like a driver would and enabled.
    pub fn new(num_queues: usize, cq_shift: u32, buf_shift: u32) -> Self {
        let mem = Arc::new(FakeMemory::new(BASE, MEM_SIZE));
        let irq = FakeIrq::default();
        let port = RecordingPort::default();
        let (irqs, sent) = (irq.0.clone(), port.sent.clone());
        let mut nic = Nic::new(ME, Box::new(mem.clone()), Box::new(irq), Box::new(port));
        // What the driver's pci_set_master() does through the config space.
        nic.set_bus_master(true);
        let mut h = Self {
            nic,
            mem,
            irqs,
            sent,
            now: Instant::now(),
            buf_shift,
            cq_shift,
            num_queues,
            next_buf: BUFFERS,
            consumed: vec![0; num_queues],
            tx_written: vec![0; num_queues],
            tx_data_next: TX_DATA,
        };
        h.configure();
        h.write(reg::CTRL, abi::ctrl::ENABLE);
        h
    }

    pub fn configure(&mut self) {
        self.write(reg::MASTER_LO, MASTER as u32);
        self.write(reg::MASTER_HI, (MASTER >> 32) as u32);
        self.write(reg::BUF_SHIFT, self.buf_shift);
        self.write(reg::NUM_QUEUES, self.num_queues as u32);
        self.write(reg::COALESCE_USECS, 100);
        for q in 0..self.num_queues {
            let cq = CQS + q as u64 * 0x1_0000;
            self.write(reg::queue(q, reg::Q_CQ_LO), cq as u32);
            self.write(reg::queue(q, reg::Q_CQ_HI), (cq >> 32) as u32);
            self.write(reg::queue(q, reg::Q_CQ_SHIFT), self.cq_shift);
            let tx = TX_RINGS + q as u64 * 0x1_0000;
            self.write(reg::queue(q, reg::Q_TX_LO), tx as u32);
            self.write(reg::queue(q, reg::Q_TX_HI), (tx >> 32) as u32);
            self.write(reg::queue(q, reg::Q_TX_SHIFT), 6);
            let qsb = QSBS + q as u64 * 0x100;
            self.write(reg::queue(q, reg::Q_QSB_LO), qsb as u32);
            self.write(reg::queue(q, reg::Q_QSB_HI), (qsb >> 32) as u32);
            let v = 1 + q as u32;
            self.write(reg::queue(q, reg::Q_VECTORS), v | v << 8);
        }
    }

    /// Zeroes the completion rings and status blocks and the host's ring
    /// positions, as a driver does before enabling again after a reset.
    pub fn reset_rings(&mut self) {
        let zero = vec![0u8; 0x1_0000];
        for q in 0..self.num_queues {
            self.mem.write(CQS + q as u64 * 0x1_0000, &zero).unwrap();
            self.mem
                .write(QSBS + q as u64 * 0x100, &zero[..0x100])
                .unwrap();
        }
        self.consumed.iter_mut().for_each(|c| *c = 0);
        self.tx_written.iter_mut().for_each(|c| *c = 0);
    }

    pub fn write(&mut self, offset: usize, v: u32) {
        self.nic
            .bar0_write(offset as u64, &v.to_le_bytes(), self.now);
    }

    pub fn read(&mut self, offset: usize) -> u32 {
        let mut b = [0u8; 4];
        self.nic.bar0_read(offset as u64, &mut b);
        u32::from_le_bytes(b)
    }

    pub fn buf_size(&self) -> usize {
        1 << self.buf_shift
    }

    pub fn new_buffer(&mut self) -> u64 {
        let a = self.next_buf;
        self.next_buf += self.buf_size() as u64;
        a
    }

    pub fn entry_addr(g: u16, n: u8) -> u64 {
        Self::lane_entry_addr(g, 0, n)
    }

    /// The entry of node `n` in queue pair `q`'s column (`ctrl::STEER`).
    pub fn lane_entry_addr(g: u16, q: usize, n: u8) -> u64 {
        NODE_TABLES
            + u64::from(g) * abi::NODE_TABLE_BYTES as u64
            + abi::node_entry(q, usize::from(n)) as u64
    }

    pub fn lane_entry(&self, g: u16, q: usize, n: u8) -> u64 {
        self.mem.read_u64(Self::lane_entry_addr(g, q, n)).unwrap()
    }

    /// Posts a fresh buffer in (g, n)'s entry of queue pair `q`'s column.
    pub fn post_lane(&mut self, g: u16, q: usize, n: u8) -> u64 {
        let a = self.new_buffer();
        self.mem.write_u64(Self::lane_entry_addr(g, q, n), a);
        a
    }

    /// Publishes group `g`'s node table in the master table (entries as
    /// they are).
    pub fn publish(&mut self, g: u16) {
        let table = NODE_TABLES + u64::from(g) * abi::NODE_TABLE_BYTES as u64;
        self.mem.write_u64(MASTER + u64::from(g) * 8, table);
    }

    pub fn entry(&self, g: u16, n: u8) -> u64 {
        self.mem.read_u64(Self::entry_addr(g, n)).unwrap()
    }

    /// Posts a fresh buffer in (g, n)'s entry; returns its address.
    pub fn post(&mut self, g: u16, n: u8) -> u64 {
        let a = self.new_buffer();
        self.mem.write_u64(Self::entry_addr(g, n), a);
        a
    }

    /// Joins group `g`, posting a buffer for each of `nodes`.
    pub fn join(&mut self, g: u16, nodes: &[u8]) {
        for &n in nodes {
            self.post(g, n);
        }
        let table = NODE_TABLES + u64::from(g) * abi::NODE_TABLE_BYTES as u64;
        self.mem.write_u64(MASTER + u64::from(g) * 8, table);
    }

    /// A frame of `len` bytes whose bytes encode (g, n, seq).
    pub fn frame_bytes(g: u16, n: u8, seq: u32, len: usize) -> Vec<u8> {
        let mut f = vec![0u8; len];
        f[0..2].copy_from_slice(&g.to_le_bytes());
        f[2] = n;
        f[4..8].copy_from_slice(&seq.to_le_bytes());
        f
    }

    pub fn frame(&mut self, g: u16, n: u8, seq: u32, len: usize, eot: bool) {
        let f = Self::frame_bytes(g, n, seq, len);
        self.nic.rx_frame(g, n, seq, eot, &f, self.now);
    }

    pub fn advance(&mut self, d: Duration) {
        self.now += d;
        self.nic.rx_tick(self.now);
    }

    /// New completions of queue `q`, by phase; marks them consumed.
    pub fn completions(&mut self, q: usize) -> Vec<Cqe> {
        let size = 1u32 << self.cq_shift;
        let mut out = Vec::new();
        loop {
            let i = self.consumed[q];
            let addr = CQS + q as u64 * 0x1_0000 + u64::from(i & (size - 1)) * rx_cqe::SIZE as u64;
            let mut e = [0u8; rx_cqe::SIZE];
            self.mem.read(addr, &mut e).unwrap();
            let want = ((i >> self.cq_shift) & 1) ^ 1;
            let phase = u32::from_le_bytes(e[rx_cqe::PHASE..rx_cqe::PHASE + 4].try_into().unwrap());
            if phase & 1 != want {
                break;
            }
            out.push(Cqe {
                addr: u64::from_le_bytes(e[0..8].try_into().unwrap()),
                bytes: u32::from_le_bytes(e[8..12].try_into().unwrap()),
                frames: u16::from_le_bytes(e[12..14].try_into().unwrap()),
                group: u16::from_le_bytes(e[14..16].try_into().unwrap()),
                node: e[rx_cqe::NODE],
                queue: e[rx_cqe::QUEUE],
                kind: e[rx_cqe::KIND],
                flags: e[rx_cqe::FLAGS],
                taken: u32::from_le_bytes(e[rx_cqe::TAKEN..rx_cqe::TAKEN + 4].try_into().unwrap()),
            });
            self.consumed[q] = i.wrapping_add(1);
        }
        let qsb = QSBS + q as u64 * 0x100 + abi::qsb::RX_CONSUMED as u64;
        self.mem.write_u32(qsb, self.consumed[q]).unwrap();
        out
    }

    /// All completions of all queues.
    pub fn all_completions(&mut self) -> Vec<Cqe> {
        (0..self.num_queues)
            .flat_map(|q| self.completions(q))
            .collect()
    }

    /// Records of a written buffer: (len, flags, last header word, frame).
    fn walk_records(&self, addr: u64, bytes: u32) -> Vec<(u16, u16, u32, Vec<u8>)> {
        let mut buf = vec![0u8; bytes as usize];
        self.mem.read(addr, &mut buf).unwrap();
        let mut out = Vec::new();
        let mut off = 0;
        while off + 8 <= buf.len() {
            let len = u16::from_le_bytes([buf[off], buf[off + 1]]);
            let flags = u16::from_le_bytes([buf[off + 2], buf[off + 3]]);
            let word = u32::from_le_bytes(buf[off + 4..off + 8].try_into().unwrap());
            let data = buf[off + 8..off + 8 + usize::from(len)].to_vec();
            out.push((len, flags, word, data));
            off += abi::record::size(usize::from(len));
        }
        out
    }

    /// Records of a written buffer: (len, seq, first bytes of the frame).
    pub fn records(&self, addr: u64, bytes: u32) -> Vec<(u16, u32, Vec<u8>)> {
        self.walk_records(addr, bytes)
            .into_iter()
            .map(|(len, _, word, data)| (len, word, data))
            .collect()
    }

    /// The [`abi::record_flags`] of each record of a written buffer.
    pub fn record_flags(&self, addr: u64, bytes: u32) -> Vec<u16> {
        self.walk_records(addr, bytes)
            .into_iter()
            .map(|(_, flags, _, _)| flags)
            .collect()
    }

    pub fn take_irqs(&self) -> Vec<u16> {
        std::mem::take(&mut *self.irqs.lock().unwrap())
    }

    /// Messages the NIC sent, decoded: (to, type, group, src, dst, data).
    pub fn take_sent(&self) -> Vec<SentMsg> {
        let sent = std::mem::take(&mut *self.sent.lock().unwrap());
        let mut out = Vec::new();
        for (to, m) in sent {
            for msg in fabric::parse(&m) {
                out.push(match msg {
                    fabric::Msg::Frame {
                        group,
                        src,
                        seq,
                        eot,
                        data,
                    } => {
                        let mut d = seq.to_le_bytes().to_vec();
                        d.push(u8::from(eot));
                        d.extend_from_slice(data);
                        (to, abi::fabric_type::FRAME, group, src, 0, d)
                    }
                    fabric::Msg::Xoff { group, src, dst } => {
                        (to, abi::fabric_type::XOFF, group, src, dst, vec![])
                    }
                    fabric::Msg::Xon { group, src, dst } => {
                        (to, abi::fabric_type::XON, group, src, dst, vec![])
                    }
                });
            }
        }
        out
    }

    /// Writes a transmit frame of `data` split into `parts` descriptors.
    pub fn tx(&mut self, q: usize, group: u16, data: &[u8], parts: usize) {
        let chunk = data.len().div_ceil(parts);
        let pieces: Vec<&[u8]> = data.chunks(chunk).collect();
        for (i, p) in pieces.iter().enumerate() {
            let addr = self.tx_data_next;
            self.tx_data_next += 0x1000;
            self.mem.write(addr, p).unwrap();
            let mut flags = 0;
            if i == 0 {
                flags |= abi::tx_flags::SOF;
            }
            if i == pieces.len() - 1 {
                flags |= abi::tx_flags::EOF;
            }
            self.tx_desc(q, addr, p.len() as u16, group, flags);
        }
    }

    pub fn tx_desc(&mut self, q: usize, addr: u64, len: u16, group: u16, flags: u8) {
        let idx = self.tx_written[q];
        let slot = TX_RINGS + q as u64 * 0x1_0000 + u64::from(idx & 63) * 16;
        let mut d = [0u8; 16];
        d[0..8].copy_from_slice(&addr.to_le_bytes());
        d[8..10].copy_from_slice(&len.to_le_bytes());
        d[10..12].copy_from_slice(&group.to_le_bytes());
        d[12] = flags;
        self.mem.write(slot, &d).unwrap();
        self.tx_written[q] = idx + 1;
    }

    pub fn tx_doorbell(&mut self, q: usize) {
        let v = self.tx_written[q];
        self.write(reg::queue(q, reg::Q_TX_TAIL), v);
    }

    pub fn tx_done(&self, q: usize) -> u32 {
        self.mem
            .read_u32(QSBS + q as u64 * 0x100 + abi::qsb::TX_DONE as u64)
            .unwrap()
    }
}
