// SPDX-License-Identifier: GPL-2.0

//! The transmit engine: descriptor rings, gather, send to the fabric,
//! completion by the free-running done count in the queue status block.

use std::collections::HashSet;
use std::time::Instant;

use pagefill_abi::{self as abi, tx_desc, tx_flags};

use crate::dma::Memory;
use crate::fabric;
use crate::nic::Nic;

/// Descriptors one frame may span before the device calls it malformed.
pub const MAX_DESCS_PER_FRAME: u32 = 32;

/// One transmit queue's state.
#[derive(Default)]
pub struct TxQueue {
    /// Descriptors done, free running.
    pub(crate) head: u32,
    /// Descriptors the host has written (doorbell), free running.
    pub(crate) tail: u32,
    pub(crate) armed: bool,
    /// Descriptors completed since the vector last fired.
    pub(crate) done_unseen: bool,
}

/// The transmit engine's state.
#[derive(Default)]
pub struct TxEngine {
    pub(crate) queues: [TxQueue; abi::MAX_QUEUES],
    /// Next sequence number of each group's stream from this node.
    seq: Vec<u32>,
    /// Streams (group, receiver) a receiver paused with xoff.
    paused: HashSet<(u16, u8)>,
    /// This node's own stream was resumed (loopback): the queues go on at
    /// the end of the register write that did it.
    pub(crate) resume: bool,
    /// Scratch space for gathering a frame.
    frame: Vec<u8>,
    msg: Vec<u8>,
    /// The link's rate (a control command's), which reset leaves alone.
    pub(crate) pace: LinkPace,
}

/// The rate at which the link takes frames, as a real one sends at its
/// line rate however fast the host fills the ring: a token bucket of 10 ms
/// of frames, refilled with time. Rate 0 (the default): as fast as the
/// fabric takes them.
#[derive(Default)]
pub struct LinkPace {
    /// Frames a second; 0: unpaced.
    rate: u32,
    /// Frames the link may send now.
    credit: f64,
    /// When the credit was last refilled.
    at: Option<Instant>,
}

impl LinkPace {
    /// Sets the rate, frames a second (0: unpaced), with a full bucket.
    pub fn set(&mut self, rate: u32) {
        *self = Self {
            rate,
            ..Self::default()
        };
        self.credit = self.burst();
    }

    /// The bucket's size: 10 ms of the rate, at least one frame.
    fn burst(&self) -> f64 {
        (f64::from(self.rate) / 100.0).max(1.0)
    }

    /// Whether the link is paced at all.
    pub fn paced(&self) -> bool {
        self.rate != 0
    }

    /// Whether a frame may go at `now`, the credit refilled first.
    pub fn may_send(&mut self, now: Instant) -> bool {
        if self.rate == 0 {
            return true;
        }
        let since = self
            .at
            .map_or(0.0, |at| now.saturating_duration_since(at).as_secs_f64());
        self.credit = (self.credit + since * f64::from(self.rate)).min(self.burst());
        self.at = Some(now);
        self.credit >= 1.0
    }

    /// A frame went: one less in the bucket.
    pub fn sent(&mut self) {
        if self.rate != 0 {
            self.credit -= 1.0;
        }
    }
}

impl TxEngine {
    fn paused(&self, group: u16) -> bool {
        !self.paused.is_empty() && self.paused.iter().any(|&(g, _)| g == group)
    }

    /// Forgets queue positions (enable, reset); pauses and sequence numbers
    /// belong to the fabric and stay.
    pub(crate) fn reset_queues(&mut self) {
        self.queues = Default::default();
    }
}

struct Desc {
    addr: u64,
    len: u16,
    group: u16,
    flags: u8,
    csum_offset: u8,
    csum_start: u16,
}

pub use crate::csum::insert_checksum;

impl Nic {
    fn read_desc(&mut self, q: usize, idx: u32) -> Option<Desc> {
        let cfg = self.queues[q];
        let slot = u64::from(idx & ((1 << cfg.tx_shift) - 1));
        let mut d = [0u8; tx_desc::SIZE];
        if let Err(e) = self
            .mem
            .read(cfg.tx_addr + slot * tx_desc::SIZE as u64, &mut d)
        {
            self.dma_failed("reading a transmit descriptor", e);
            return None;
        }
        let u16_at = |o: usize| u16::from_le_bytes([d[o], d[o + 1]]);
        let mut a = [0u8; 8];
        a.copy_from_slice(&d[tx_desc::ADDR..tx_desc::ADDR + 8]);
        Some(Desc {
            addr: u64::from_le_bytes(a),
            len: u16_at(tx_desc::LEN),
            group: u16_at(tx_desc::GROUP),
            flags: d[tx_desc::FLAGS],
            csum_offset: d[tx_desc::CSUM_OFFSET],
            csum_start: u16_at(tx_desc::CSUM_START),
        })
    }

    /// Sends every complete frame between head and tail of queue `q`.
    pub(crate) fn tx_process(&mut self, q: usize) {
        let start = self.tx.queues[q].head;
        let mut frame = std::mem::take(&mut self.tx.frame);
        while self.running() {
            let (head, tail) = (self.tx.queues[q].head, self.tx.queues[q].tail);
            // A tail more than a ring ahead is a host bug: stop at a ring.
            if head == tail || tail.wrapping_sub(head) > 1 << self.queues[q].tx_shift {
                break;
            }
            if self.port.backlog() > fabric::MAX_IN_FLIGHT
                || (self.tx.pace.paced() && !self.tx.pace.may_send(Instant::now()))
            {
                break; // the link is busy: the engine's tick resumes us
            }
            frame.clear();
            let mut idx = head;
            let mut group = None;
            let mut csum = None;
            let mut bad = false;
            let mut complete = false;
            while idx != tail {
                let Some(d) = self.read_desc(q, idx) else {
                    break;
                };
                idx = idx.wrapping_add(1);
                if group.is_none() {
                    bad |= d.flags & tx_flags::SOF == 0;
                    if d.flags & tx_flags::CSUM != 0 {
                        csum = Some((usize::from(d.csum_start), usize::from(d.csum_offset)));
                    }
                }
                let g = *group.get_or_insert(d.group);
                bad |= d.group != g || usize::from(d.group) >= abi::MAX_GROUPS || d.len == 0;
                bad |= frame.len() + usize::from(d.len) > abi::MAX_FRAME_LEN;
                if !bad {
                    let off = frame.len();
                    frame.resize(off + usize::from(d.len), 0);
                    if let Err(e) = self.mem.read(d.addr, &mut frame[off..]) {
                        self.dma_failed("reading transmit data", e);
                        break;
                    }
                }
                if d.flags & tx_flags::EOF != 0 || idx.wrapping_sub(head) >= MAX_DESCS_PER_FRAME {
                    bad |= d.flags & tx_flags::EOF == 0;
                    complete = true;
                    break;
                }
            }
            if !complete || !self.running() {
                break; // the rest of the frame is not written yet
            }
            let group = group.unwrap_or(0);
            bad |= frame.len() < abi::MIN_FRAME_LEN;
            if let (Some((start, offset)), false) = (csum, bad) {
                bad |= !insert_checksum(&mut frame, start, offset);
            }
            if bad {
                self.counters.tx_bad_desc += u64::from(idx.wrapping_sub(head));
            } else if !self.ignore_xoff && self.tx.paused(group) {
                break; // a receiver is starved: wait for its xon
            } else if !self.link_up {
                self.counters.drop_link_down += 1;
            } else {
                if self.tx.seq.is_empty() {
                    self.tx.seq = vec![0; abi::MAX_GROUPS];
                }
                let seq = self.tx.seq[usize::from(group)];
                self.tx.seq[usize::from(group)] = seq.wrapping_add(1);
                let eot = idx == tail;
                if self.loopback {
                    let me = self.node_id;
                    self.rx_frame(group, me, seq, eot, &frame, Instant::now());
                } else {
                    let mut msg = std::mem::take(&mut self.tx.msg);
                    msg.clear();
                    fabric::push_frame(&mut msg, group, self.node_id, seq, eot, &frame);
                    self.port.broadcast(&msg);
                    self.tx.msg = msg;
                }
                self.counters.tx_frames += 1;
                self.counters.tx_bytes += frame.len() as u64;
                self.tx.pace.sent();
            }
            self.tx.queues[q].head = idx;
        }
        self.tx.frame = frame;
        let head = self.tx.queues[q].head;
        if head != start {
            let addr = self.queues[q].qsb_addr + abi::qsb::TX_DONE as u64;
            if let Err(e) = self.mem.write_u32(addr, head) {
                return self.dma_failed("writing a queue status block", e);
            }
            self.tx.queues[q].done_unseen = true;
            self.fire_tx(q);
        }
    }

    /// Resumes queues with descriptors waiting (after backpressure). Without
    /// bus mastering the descriptors cannot be read: they wait for it.
    pub fn tx_kick(&mut self) {
        if !self.bus_master() {
            return;
        }
        for q in 0..self.num_queues as usize {
            if self.running() && self.tx.queues[q].head != self.tx.queues[q].tail {
                self.tx_process(q);
            }
        }
    }

    /// A receiver paused (xoff) or resumed (xon) our stream to `group`.
    pub fn tx_flow(&mut self, group: u16, receiver: u8, pause: bool) {
        if pause {
            self.counters.xoff_received += 1;
            self.tx.paused.insert((group, receiver));
        } else if self.tx.paused.remove(&(group, receiver)) {
            for q in 0..self.num_queues as usize {
                self.tx_process(q);
            }
        }
    }

    /// Tells the sender of stream (`group`, `src`) to pause (`kind` XOFF)
    /// or go on (XON): over the fabric, or, for this node's own stream
    /// (loopback), straight to the transmit engine.
    pub(crate) fn signal_sender(&mut self, kind: u8, group: u16, src: u8) {
        if src != self.node_id {
            let msg = fabric::control(kind, group, self.node_id, src);
            self.port.send_to(src, &msg);
        } else if kind == abi::fabric_type::XOFF {
            self.counters.xoff_received += 1;
            self.tx.paused.insert((group, src));
        } else if self.tx.paused.remove(&(group, src)) {
            // Not here: the receive side that resumed it is mid-update.
            self.tx.resume = true;
        }
    }

    /// The receive side forgot every stream (reset, disable): this node's
    /// own streams no longer pause it.
    pub(crate) fn release_own_streams(&mut self) {
        let me = self.node_id;
        self.tx.paused.retain(|&(_, r)| r != me);
    }

    /// Handles one message from the fabric.
    pub fn fabric_message(&mut self, msg: fabric::Msg<'_>, now: Instant) {
        match msg {
            // In loopback the receive side hears only this node.
            fabric::Msg::Frame { .. } if self.loopback => self.counters.drop_link_down += 1,
            fabric::Msg::Frame {
                group,
                src,
                seq,
                eot,
                data,
            } => self.rx_frame(group, src, seq, eot, data, now),
            fabric::Msg::Xoff { group, src, dst } if dst == self.node_id => {
                self.tx_flow(group, src, true)
            }
            fabric::Msg::Xon { group, src, dst } if dst == self.node_id => {
                self.tx_flow(group, src, false)
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::LinkPace;
    use std::time::{Duration, Instant};

    #[test]
    fn unpaced_link_always_sends() {
        let mut p = LinkPace::default();
        let now = Instant::now();
        assert!(!p.paced());
        for _ in 0..1000 {
            assert!(p.may_send(now));
            p.sent();
        }
    }

    #[test]
    fn paced_link_sends_its_rate() {
        let mut p = LinkPace::default();
        p.set(10_000);
        let t0 = Instant::now();
        // A full bucket: 10 ms of frames at once, then none.
        let mut n = 0;
        while p.may_send(t0) {
            p.sent();
            n += 1;
        }
        assert_eq!(n, 100);
        // A second later, 10 000 frames more, sent as they are earned.
        for ms in 1..=1000 {
            let now = t0 + Duration::from_millis(ms);
            while p.may_send(now) {
                p.sent();
                n += 1;
            }
        }
        assert!((10_090..=10_110).contains(&n), "{n}");
        // Idle time earns no more than a bucket.
        let later = t0 + Duration::from_secs(10);
        let mut burst = 0;
        while p.may_send(later) {
            p.sent();
            burst += 1;
        }
        assert_eq!(burst, 100);
    }
}
