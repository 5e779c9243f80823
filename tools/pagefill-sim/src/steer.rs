// SPDX-License-Identifier: GPL-2.0

//! Steering (`ctrl::STEER`): the queue pair each frame goes to. The first
//! valid flow filter that matches names it (or drops the frame); otherwise
//! the indirection table's entry for the frame's hash does.

use pagefill_abi::{self as abi, filter, reg, rss_fields};

use crate::csum::{IPPROTO_TCP, IPPROTO_UDP};
use crate::rss::Flow;

/// Registers of one filter, as the host wrote them.
const FILTER_REGS: usize = reg::FILTER_STRIDE / 4;

/// Where a frame goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    Queue(usize),
    Drop,
}

/// A valid filter's match, read from its registers when its `CTRL` was
/// written.
#[derive(Clone, Copy, Debug)]
struct Filter {
    flow: u32,
    drop: bool,
    queue: usize,
    stream: u32,
    stream_mask: u32,
    ports: u32,
    ports_mask: u32,
    src: [u8; 16],
    src_mask: [u8; 16],
    dst: [u8; 16],
    dst_mask: [u8; 16],
}

/// Whether `a` and `b` agree on every bit `mask` sets.
fn masked_eq(a: &[u8; 16], b: &[u8; 16], mask: &[u8; 16]) -> bool {
    a.iter()
        .zip(b)
        .zip(mask)
        .all(|((a, b), m)| (a ^ b) & m == 0)
}

impl Filter {
    fn matches(&self, group: u16, node: u8, flow: Option<&Flow>) -> bool {
        let stream = u32::from(group) | u32::from(node) << 16;
        if (stream ^ self.stream) & self.stream_mask != 0 {
            return false;
        }
        let (v6, proto) = match self.flow {
            filter::FLOW_ANY => return true,
            filter::FLOW_TCP4 => (false, Some(IPPROTO_TCP)),
            filter::FLOW_UDP4 => (false, Some(IPPROTO_UDP)),
            filter::FLOW_TCP6 => (true, Some(IPPROTO_TCP)),
            filter::FLOW_UDP6 => (true, Some(IPPROTO_UDP)),
            filter::FLOW_IP4 => (false, None),
            filter::FLOW_IP6 => (true, None),
            _ => return false,
        };
        let Some(f) = flow.filter(|f| f.v6 == v6) else {
            return false;
        };
        if proto.is_some_and(|p| p != f.proto) {
            return false;
        }
        let ports_ok = match f.ports {
            Some((s, d)) => {
                ((u32::from(s) | u32::from(d) << 16) ^ self.ports) & self.ports_mask == 0
            }
            None => self.ports_mask == 0,
        };
        ports_ok
            && masked_eq(&f.src, &self.src, &self.src_mask)
            && masked_eq(&f.dst, &self.dst, &self.dst_mask)
    }
}

/// The steering registers and what the device made of them.
pub struct Steering {
    key: [u8; abi::RSS_KEY_BYTES],
    indir: [u8; abi::RSS_INDIR_SIZE],
    fields: u32,
    regs: [[u32; FILTER_REGS]; abi::MAX_FILTERS],
    filters: [Option<Filter>; abi::MAX_FILTERS],
}

impl Default for Steering {
    /// What a reset loads.
    fn default() -> Self {
        Self {
            key: abi::RSS_KEY,
            indir: core::array::from_fn(|i| (i % abi::MAX_QUEUES) as u8),
            fields: rss_fields::ALL,
            regs: [[0; FILTER_REGS]; abi::MAX_FILTERS],
            filters: [None; abi::MAX_FILTERS],
        }
    }
}

/// Four bytes of `bytes` from `at` as one register reads them.
fn word(bytes: &[u8], at: usize) -> u32 {
    u32::from_le_bytes([bytes[at], bytes[at + 1], bytes[at + 2], bytes[at + 3]])
}

fn set_word(bytes: &mut [u8], at: usize, v: u32) {
    bytes[at..at + 4].copy_from_slice(&v.to_le_bytes());
}

impl Steering {
    /// The steering register at `offset`, if it is one.
    pub fn read(&self, offset: usize) -> Option<u32> {
        Some(match offset {
            o if (reg::RSS_KEY..reg::RSS_KEY + abi::RSS_KEY_BYTES).contains(&o) => {
                word(&self.key, o - reg::RSS_KEY)
            }
            o if (reg::RSS_INDIR..reg::RSS_INDIR + abi::RSS_INDIR_SIZE).contains(&o) => {
                word(&self.indir, o - reg::RSS_INDIR)
            }
            reg::RSS_FIELDS => self.fields,
            o if (reg::FILTER_BASE..reg::FILTER_END).contains(&o) => {
                let (f, r) = (
                    (o - reg::FILTER_BASE) / reg::FILTER_STRIDE,
                    o % reg::FILTER_STRIDE,
                );
                self.regs[f][r / 4]
            }
            _ => return None,
        })
    }

    /// Writes the steering register at `offset`; false if it is not one.
    /// `offset` is 4-byte aligned (the caller refuses other accesses).
    pub fn write(&mut self, offset: usize, v: u32) -> bool {
        match offset {
            o if (reg::RSS_KEY..reg::RSS_KEY + abi::RSS_KEY_BYTES).contains(&o) => {
                set_word(&mut self.key, o - reg::RSS_KEY, v)
            }
            o if (reg::RSS_INDIR..reg::RSS_INDIR + abi::RSS_INDIR_SIZE).contains(&o) => {
                set_word(&mut self.indir, o - reg::RSS_INDIR, v)
            }
            reg::RSS_FIELDS => self.fields = v & rss_fields::ALL,
            o if (reg::FILTER_BASE..reg::FILTER_END).contains(&o) => {
                let (f, r) = (
                    (o - reg::FILTER_BASE) / reg::FILTER_STRIDE,
                    o % reg::FILTER_STRIDE,
                );
                self.regs[f][r / 4] = v;
                if r == filter::CTRL {
                    self.filters[f] = (v & filter::VALID != 0).then(|| self.latch(f));
                }
            }
            _ => return false,
        }
        true
    }

    fn latch(&self, f: usize) -> Filter {
        let regs = &self.regs[f];
        let bytes16 = |at: usize| {
            let mut b = [0u8; 16];
            for (i, chunk) in b.chunks_exact_mut(4).enumerate() {
                chunk.copy_from_slice(&regs[at / 4 + i].to_le_bytes());
            }
            b
        };
        let ctrl = regs[filter::CTRL / 4];
        Filter {
            flow: (ctrl >> filter::FLOW_SHIFT) & 0xf,
            drop: ctrl & filter::DROP != 0,
            queue: ((ctrl >> filter::QUEUE_SHIFT) & 0xff) as usize,
            stream: regs[filter::STREAM / 4],
            stream_mask: regs[filter::STREAM_MASK / 4],
            ports: regs[filter::PORTS / 4],
            ports_mask: regs[filter::PORTS_MASK / 4],
            src: bytes16(filter::SRC),
            src_mask: bytes16(filter::SRC_MASK),
            dst: bytes16(filter::DST),
            dst_mask: bytes16(filter::DST_MASK),
        }
    }

    /// The flow hash of `frame` and its record flags under the programmed
    /// key and fields, if it has a flow.
    pub fn flow_hash(&self, flow: Option<&Flow>) -> Option<(u32, u16)> {
        flow.map(|f| f.hash(&self.key, self.fields))
    }

    /// Where a frame of stream (`group`, `node`) with `flow` and flow hash
    /// `hash` ([`Self::flow_hash`]) goes, among `num_queues` queue pairs
    /// (at least one).
    pub fn steer(
        &self,
        group: u16,
        node: u8,
        flow: Option<&Flow>,
        hash: Option<(u32, u16)>,
        num_queues: usize,
    ) -> Verdict {
        let n = num_queues.max(1);
        if let Some(f) = self
            .filters
            .iter()
            .flatten()
            .find(|f| f.matches(group, node, flow))
        {
            return if f.drop {
                Verdict::Drop
            } else {
                Verdict::Queue(f.queue % n)
            };
        }
        let hash = match hash {
            Some((h, _)) => h,
            None => {
                let g = group.to_be_bytes();
                abi::toeplitz(&self.key, &[g[0], g[1], node])
            }
        };
        Verdict::Queue(usize::from(self.indir[hash as usize % abi::RSS_INDIR_SIZE]) % n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::csum::{ETH_HLEN, ETH_P_IPV4};

    fn udp4(src: [u8; 4], dst: [u8; 4], sport: u16, dport: u16) -> Vec<u8> {
        let mut f = vec![0u8; ETH_HLEN + 28];
        f[12..14].copy_from_slice(&ETH_P_IPV4.to_be_bytes());
        let ip = &mut f[ETH_HLEN..];
        ip[0] = 0x45;
        ip[2..4].copy_from_slice(&28u16.to_be_bytes());
        ip[9] = IPPROTO_UDP;
        ip[12..16].copy_from_slice(&src);
        ip[16..20].copy_from_slice(&dst);
        ip[20..22].copy_from_slice(&sport.to_be_bytes());
        ip[22..24].copy_from_slice(&dport.to_be_bytes());
        f
    }

    fn program(s: &mut Steering, f: usize, regs: &[(usize, u32)], ctrl: u32) {
        for &(r, v) in regs {
            assert!(s.write(reg::filter(f, r), v));
        }
        assert!(s.write(reg::filter(f, filter::CTRL), ctrl));
    }

    fn steer_among(s: &Steering, group: u16, node: u8, frame: &[u8], n: usize) -> Verdict {
        let flow = Flow::parse(frame);
        s.steer(group, node, flow.as_ref(), s.flow_hash(flow.as_ref()), n)
    }

    fn steer(s: &Steering, group: u16, node: u8, frame: &[u8]) -> Verdict {
        steer_among(s, group, node, frame, 4)
    }

    #[test]
    fn the_indirection_table_takes_the_flow_hash() {
        let mut s = Steering::default();
        let f = udp4([10, 0, 0, 1], [10, 0, 0, 2], 1000, 9000);
        let (hash, _) = s.flow_hash(Flow::parse(&f).as_ref()).unwrap();
        let slot = hash as usize % abi::RSS_INDIR_SIZE;
        assert_eq!(steer(&s, 0, 1, &f), Verdict::Queue(slot % abi::MAX_QUEUES));
        // Every entry to queue 3 but this flow's, which names 1.
        for i in (0..abi::RSS_INDIR_SIZE).step_by(4) {
            let v = if (i..i + 4).contains(&slot) {
                u32::from_le_bytes(core::array::from_fn(|j| if i + j == slot { 1 } else { 3 }))
            } else {
                0x0303_0303
            };
            assert!(s.write(reg::RSS_INDIR + i, v));
        }
        assert_eq!(steer(&s, 0, 1, &f), Verdict::Queue(1));
        let other = udp4([10, 0, 0, 9], [10, 0, 0, 2], 1000, 9000);
        let (h2, _) = s.flow_hash(Flow::parse(&other).as_ref()).unwrap();
        if h2 as usize % abi::RSS_INDIR_SIZE != slot {
            assert_eq!(steer(&s, 0, 1, &other), Verdict::Queue(3));
        }
        // Entries are taken modulo the queues in use.
        assert_eq!(steer_among(&s, 0, 1, &other, 2), Verdict::Queue(1));
    }

    #[test]
    fn the_key_and_fields_change_the_hash() {
        let mut s = Steering::default();
        let f = udp4([10, 0, 0, 1], [10, 0, 0, 2], 1000, 9000);
        let flow = Flow::parse(&f).unwrap();
        let (h, flags) = s.flow_hash(Some(&flow)).unwrap();
        assert_eq!(
            flags & pagefill_abi::record_flags::HASH_UDP,
            pagefill_abi::record_flags::HASH_UDP
        );
        assert!(s.write(reg::RSS_FIELDS, rss_fields::ALL & !rss_fields::UDP4_PORTS));
        let (h3, flags3) = s.flow_hash(Some(&flow)).unwrap();
        assert_eq!(flags3 & pagefill_abi::record_flags::HASH_UDP, 0);
        assert_eq!(
            h3,
            abi::toeplitz(&abi::RSS_KEY, &[10, 0, 0, 1, 10, 0, 0, 2])
        );
        assert!(s.write(reg::RSS_FIELDS, rss_fields::ALL));
        assert!(s.write(reg::RSS_KEY, 0x1234_5678));
        assert_eq!(s.read(reg::RSS_KEY), Some(0x1234_5678));
        let (h2, _) = s.flow_hash(Some(&flow)).unwrap();
        assert_ne!(h, h2);
    }

    #[test]
    fn a_filter_on_ports_and_addresses_steers_and_the_first_match_wins() {
        let mut s = Steering::default();
        let hit = udp4([10, 0, 0, 1], [10, 0, 0, 2], 1000, 9000);
        let other_port = udp4([10, 0, 0, 1], [10, 0, 0, 2], 1000, 9001);
        // Filter 5: UDP to port 9000 from 10.0.0.0/24, queue 2.
        let src = u32::from_le_bytes([10, 0, 0, 0]);
        let src_mask = u32::from_le_bytes([255, 255, 255, 0]);
        program(
            &mut s,
            5,
            &[
                (filter::PORTS, 9000 << 16),
                (filter::PORTS_MASK, 0xffff << 16),
                (filter::SRC, src),
                (filter::SRC_MASK, src_mask),
            ],
            filter::VALID | filter::FLOW_UDP4 << filter::FLOW_SHIFT | 2 << filter::QUEUE_SHIFT,
        );
        assert_eq!(steer(&s, 0, 1, &hit), Verdict::Queue(2));
        let to_2_by_rss = steer(&Steering::default(), 0, 1, &other_port);
        assert_eq!(steer(&s, 0, 1, &other_port), to_2_by_rss);
        // A TCP filter does not match UDP.
        program(
            &mut s,
            1,
            &[],
            filter::VALID | filter::FLOW_TCP4 << filter::FLOW_SHIFT | 3 << filter::QUEUE_SHIFT,
        );
        assert_eq!(steer(&s, 0, 1, &hit), Verdict::Queue(2));
        // Filter 0 drops stream (7, 3) whatever it carries, and comes first.
        program(
            &mut s,
            0,
            &[
                (filter::STREAM, 7 | 3 << 16),
                (filter::STREAM_MASK, 0x1f_ffff),
            ],
            filter::VALID | filter::DROP,
        );
        assert_eq!(steer(&s, 7, 3, &hit), Verdict::Drop);
        assert_eq!(steer(&s, 7, 3, &[0u8; 60]), Verdict::Drop);
        assert_eq!(steer(&s, 7, 4, &hit), Verdict::Queue(2));
        // Written invalid, it matches nothing.
        assert!(s.write(reg::filter(0, filter::CTRL), 0));
        assert_eq!(steer(&s, 7, 3, &hit), Verdict::Queue(2));
        assert_eq!(s.read(reg::filter(5, filter::PORTS)), Some(9000 << 16));
    }

    #[test]
    fn a_frame_without_a_flow_is_steered_by_its_stream() {
        let s = Steering::default();
        let frame = [0u8; 60];
        let g = 300u16.to_be_bytes();
        let hash = abi::toeplitz(&abi::RSS_KEY, &[g[0], g[1], 9]);
        let want = hash as usize % abi::RSS_INDIR_SIZE % abi::MAX_QUEUES;
        assert_eq!(steer(&s, 300, 9, &frame), Verdict::Queue(want));
    }
}
