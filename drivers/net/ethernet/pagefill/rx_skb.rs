// SPDX-License-Identifier: GPL-2.0

//! The receive path's second half: a written buffer, back from the device,
//! split into skbs and handed to the stack (`rx.rs` has the first: which
//! buffer each stream has, and the completions that move them).
//!
//! Frames up to [`COPYBREAK`] bytes are copied into a small skb. Larger ones
//! get their headers copied into the linear part and their payload attached
//! as a fragment that references the buffer, so one buffer serves many skbs
//! and returns to the pool when the last of them is freed. With
//! `rx-udp-merge`, runs of one flow's UDP datagrams go up as one skb
//! ([`crate::udp_merge`]). A poll hands up at most its budget of skbs: a
//! buffer it could not finish is split on in the next.

use crate::abi::{self, record, record_flags};
use crate::net::napi::PollCtx;
use crate::net::netdev::{Device, Operations};
use crate::net::page_pool::PoolPage;
use crate::net::skb::{HashL4, RxHash, SkBuff, MAX_FRAGS};
use crate::net::xsk::XskBufs;
use crate::rings::RawCqe;
use crate::rx_stats::RxStats;
use crate::udp_merge;

/// Frames up to this size are copied; larger ones become fragments.
pub(crate) const COPYBREAK: usize = 256;

/// Most bytes of headers copied into the linear part of a fragment skb.
const MAX_HEADER: usize = 256;

/// Most bytes of a merged skb whose datagrams are copied: what
/// `napi_alloc_skb()` serves from its page fragments rather than kmalloc.
const MERGE_LINEAR_MAX: usize = 3072;

/// A written buffer being split into skbs across polls: a poll stops when
/// its budget is spent, and the next goes on from `off`.
pub(crate) struct Split {
    /// The buffer, or in chunk mode the chunk list.
    pub(crate) buf: PoolPage,
    /// In chunk mode, the list's chunks not run yet.
    pub(crate) chunks: Option<XskBufs>,
    pub(crate) cqe: RawCqe,
    /// Offset of the next record; in chunk mode, index of the next chunk.
    pub(crate) off: usize,
    /// Records split so far.
    pub(crate) frames: u16,
    /// In chunk mode, the frame bytes run so far.
    pub(crate) seen: usize,
}

/// The receive offloads in force for one poll.
#[derive(Clone, Copy, Default)]
pub(crate) struct RxOffloads {
    /// Hand up the frames the device checked as such (`ethtool -K rx`).
    pub(crate) csum: bool,
    /// Merge runs of a flow's UDP datagrams (see [`udp_merge`]; the private flag
    /// `rx-udp-merge`). Only with `csum`.
    pub(crate) udp_merge: bool,
    /// Give skbs and XDP programs the device's flow hash (`ethtool -K
    /// rxhash`).
    pub(crate) hash: bool,
}

/// A record of a written buffer, its header and frame inside the buffer
/// and the frame at least an Ethernet header long.
pub(crate) struct Record {
    /// Offset of the frame (after the record header).
    pub(crate) start: usize,
    /// Length of the frame.
    pub(crate) len: usize,
    /// [`record_flags`].
    flags: u16,
    /// The header's last word: the frame's sequence number, or its flow
    /// hash ([`record_flags::HASH`]).
    word: u32,
}

/// What the device said of a frame besides its bytes, as far as the
/// offloads in force let the stack rely on it.
#[derive(Clone, Copy)]
pub(crate) struct FrameMeta {
    /// The device checked the layer 4 checksum and found it right.
    pub(crate) csum_ok: bool,
    /// The flow hash, or none.
    pub(crate) hash: RxHash,
}

/// The kind of flow hash (value 0) of each combination of a record's hash
/// flags, which are bits 1 to 4: one table read per frame instead of a
/// decision per flag. Any combination is safe to use: without `HASH`, no
/// hash; both protocol bits (never set together by the device), a layer 4
/// hash of no named protocol.
const HASH_KINDS: [RxHash; 16] = {
    let mut kinds = [RxHash::NONE; 16];
    let mut i = 0;
    while i < kinds.len() {
        let flags = (i as u16) << 1;
        if flags & record_flags::HASH != 0 {
            let l4 = match flags & (record_flags::HASH_TCP | record_flags::HASH_UDP) {
                0 => HashL4::None,
                record_flags::HASH_TCP => HashL4::Tcp,
                record_flags::HASH_UDP => HashL4::Udp,
                _ => HashL4::Unknown,
            };
            kinds[i] = RxHash::new(0, flags & record_flags::HASH_IPV6 != 0, l4);
        }
        i += 1;
    }
    kinds
};

// The table's index: the hash flags are bits 1 to 4 of the record's flags.
const _: () = assert!(
    record_flags::HASH | record_flags::HASH_IPV6 | record_flags::HASH_TCP | record_flags::HASH_UDP
        == 0xf << 1
);

// Called for every frame: inlined, as a call costs more than the body.
impl Record {
    /// The record at `off` in the written bytes `data`, if it is whole.
    #[inline]
    pub(crate) fn at(data: &[u8], off: usize) -> Option<Self> {
        let hdr = data.get(off..off + record::HEADER_SIZE)?;
        let le16 = |at: usize| u16::from_le_bytes([hdr[at], hdr[at + 1]]);
        let le32 = |at: usize| u32::from_le_bytes([hdr[at], hdr[at + 1], hdr[at + 2], hdr[at + 3]]);
        let rec = Self {
            start: off + record::HEADER_SIZE,
            len: usize::from(le16(record::LEN)),
            flags: le16(record::FLAGS),
            word: le32(record::HASH),
        };
        (rec.len >= abi::MIN_FRAME_LEN && rec.start + rec.len <= data.len()).then_some(rec)
    }

    /// The record header at `off` in `data`, for a frame written elsewhere
    /// (a chunk list's entry, for its chunk); `start` is meaningless.
    #[inline]
    pub(crate) fn header(data: &[u8], off: usize) -> Option<Self> {
        let hdr = data.get(off..off + record::HEADER_SIZE)?;
        let le16 = |at: usize| u16::from_le_bytes([hdr[at], hdr[at + 1]]);
        let le32 = |at: usize| u32::from_le_bytes([hdr[at], hdr[at + 1], hdr[at + 2], hdr[at + 3]]);
        Some(Self {
            start: 0,
            len: usize::from(le16(record::LEN)),
            flags: le16(record::FLAGS),
            word: le32(record::HASH),
        })
    }

    /// Its [`record_flags`].
    #[inline]
    pub(crate) fn flags(&self) -> u16 {
        self.flags
    }

    /// The frame, from the bytes `data` it was found in.
    #[inline]
    pub(crate) fn frame<'a>(&self, data: &'a [u8]) -> &'a [u8] {
        data.get(self.start..self.start + self.len).unwrap_or(&[])
    }

    /// Offset of the next record.
    #[inline]
    pub(crate) fn next(&self) -> usize {
        self.start - record::HEADER_SIZE + record::size(self.len)
    }

    /// The device checked the frame's checksum and found it right.
    #[inline]
    fn csum_ok(&self) -> bool {
        self.flags & record_flags::L4_CSUM_OK != 0
    }

    /// The frame's flow hash, if the device wrote one ([`HASH_KINDS`]). Any
    /// value is safe to use as a hash.
    #[inline]
    fn hash(&self) -> RxHash {
        HASH_KINDS[usize::from(self.flags >> 1) & 0xf].with_value(self.word)
    }

    /// What the stack may take from the device about this frame, under
    /// `offloads`.
    #[inline]
    pub(crate) fn meta(&self, offloads: &RxOffloads) -> FrameMeta {
        FrameMeta {
            csum_ok: offloads.csum && self.csum_ok(),
            hash: if offloads.hash {
                self.hash()
            } else {
                RxHash::NONE
            },
        }
    }
}

/// The skb path's share of a queue's receive state, lent to it for one
/// buffer: the counters and the offloads in force.
pub(crate) struct SkbPath<'a> {
    pub(crate) stats: &'a mut RxStats,
    pub(crate) offloads: RxOffloads,
}

impl SkbPath<'_> {
    /// Splits the records of `buf` from offset `off` on into skbs while the
    /// poll's budget lasts, `frames` of them split before; returns where
    /// the next record starts, the records split, and whether the buffer is
    /// done (`false`: the budget ran out).
    pub(crate) fn split_skbs<T: Operations>(
        &mut self,
        dev: &Device<T>,
        ctx: &PollCtx<'_>,
        buf: &PoolPage,
        mut off: usize,
        mut frames: u16,
    ) -> (usize, u16, bool) {
        let data = buf.data();
        while off + record::HEADER_SIZE <= data.len() {
            if ctx.budget_left() == 0 {
                return (off, frames, false);
            }
            let Some(rec) = Record::at(data, off) else {
                self.stats.bad += 1;
                break;
            };
            // The device vouches for the checksum; the frame's bytes are
            // checked as any other (length here, headers by the stack).
            let meta = rec.meta(&self.offloads);
            if self.offloads.udp_merge && meta.csum_ok {
                if let Some((n, next)) = self.merge_run(dev, ctx, buf, data, &rec) {
                    frames = frames.saturating_add(n);
                    off = next;
                    continue;
                }
            }
            frames = frames.saturating_add(1);
            let frame = rec.frame(data);
            let skb = if rec.len <= COPYBREAK {
                self.copy_frame(ctx, frame)
            } else {
                self.frag_frame(dev, ctx, buf, rec.start, frame)
            };
            match skb {
                Some(skb) => {
                    hand_up(self.stats, dev, ctx, skb, meta);
                    self.stats.packets += 1;
                    self.stats.bytes += rec.len as u64;
                }
                None => self.stats.dropped += 1,
            }
            off = rec.next();
        }
        (off, frames, true)
    }

    /// With merging on: the run of one flow's datagrams from `first` on that
    /// can go up as one skb (see [`udp_merge`]), handed up; returns how many
    /// records it took and where the next starts. `None` if fewer than two
    /// make a run: the caller hands `first` up alone.
    fn merge_run<T: Operations>(
        &mut self,
        dev: &Device<T>,
        ctx: &PollCtx<'_>,
        buf: &PoolPage,
        data: &[u8],
        first: &Record,
    ) -> Option<(u16, usize)> {
        let head = first.frame(data);
        let seg = udp_merge::udp4_payload(head)?;
        // Short datagrams are copied whole into the linear part; longer
        // ones leave their payload in the buffer, a fragment each.
        let copy = first.len <= COPYBREAK;
        let most = if copy {
            (MERGE_LINEAR_MAX - udp_merge::HEADERS) / seg
        } else {
            MAX_FRAGS
        }
        .min(udp_merge::MAX_SEGS);
        let (mut n, mut payload, mut next) = (1, seg, first.next());
        while n < most {
            let Some(rec) = Record::at(data, next) else {
                break;
            };
            let frame = rec.frame(data);
            let Some(p) = udp_merge::udp4_payload(frame) else {
                break;
            };
            if !rec.csum_ok()
                || p > seg
                || payload + p > udp_merge::MAX_PAYLOAD
                || !udp_merge::same_flow(head, frame)
            {
                break;
            }
            n += 1;
            payload += p;
            next = rec.next();
            // A shorter datagram ends a run, as in the stack's GRO.
            if p < seg {
                break;
            }
        }
        if n < 2 {
            return None;
        }
        let mut hdr = [0u8; udp_merge::HEADERS];
        hdr.copy_from_slice(head.get(..udp_merge::HEADERS)?);
        if !udp_merge::merge_headers(&mut hdr, payload) {
            return None;
        }
        let merged = self.build_merged(ctx, buf, data, first, n, &hdr, copy, payload);
        let gso = merged.and_then(|mut skb| {
            skb.set_udp_gso(udp_merge::UDP_OFFSET as u16, seg as u16, n as u16)
                .ok()?;
            Some(skb)
        });
        match gso {
            Some(mut skb) => {
                // One flow: the first datagram's hash is every one's.
                skb.set_hash(first.meta(&self.offloads).hash);
                skb.eth_type_trans(dev);
                ctx.gro_receive(skb);
                self.stats.packets += n as u64;
                self.stats.bytes += (n * udp_merge::HEADERS + payload) as u64;
                self.stats.merged_skbs += 1;
                self.stats.merged_frames += n as u64;
            }
            None => self.stats.dropped += n as u64,
        }
        Some((n as u16, next))
    }

    /// The merged skb of the `n` records from `first`: the rewritten
    /// headers `hdr`, then the `payload` bytes of the datagrams, copied or
    /// as fragments of `buf`.
    #[allow(clippy::too_many_arguments)]
    fn build_merged(
        &mut self,
        ctx: &PollCtx<'_>,
        buf: &PoolPage,
        data: &[u8],
        first: &Record,
        n: usize,
        hdr: &[u8; udp_merge::HEADERS],
        copy: bool,
        payload: usize,
    ) -> Option<SkBuff> {
        let linear = udp_merge::HEADERS + if copy { payload } else { 0 };
        let mut skb = ctx.alloc_skb(linear as u32)?;
        skb.put_data(hdr).ok()?;
        let mut at = first.start - record::HEADER_SIZE;
        for _ in 0..n {
            let rec = Record::at(data, at)?;
            let range = rec.start + udp_merge::HEADERS..rec.start + rec.len;
            if copy {
                skb.put_data(data.get(range)?).ok()?;
            } else {
                skb.add_pool_frag(buf, range, record::size(rec.len) as u32)
                    .ok()?;
            }
            at = rec.next();
        }
        // The records were read twice: a device that rewrote them in
        // between gets its frames dropped, not a skb unlike its headers.
        (skb.len() as usize == udp_merge::HEADERS + payload).then_some(skb)
    }

    /// A short frame, copied whole into a small skb.
    fn copy_frame(&mut self, ctx: &PollCtx<'_>, frame: &[u8]) -> Option<SkBuff> {
        let mut skb = ctx.alloc_skb(frame.len() as u32)?;
        skb.put_data(frame).ok()?;
        self.stats.copybreak += 1;
        Some(skb)
    }

    /// A longer frame at `start` in `buf`: headers copied into the linear
    /// part, the payload a fragment referencing the buffer.
    fn frag_frame<T: Operations>(
        &mut self,
        dev: &Device<T>,
        ctx: &PollCtx<'_>,
        buf: &PoolPage,
        start: usize,
        frame: &[u8],
    ) -> Option<SkBuff> {
        let hlen = dev.eth_headlen(frame).clamp(abi::MIN_FRAME_LEN, MAX_HEADER);
        let mut skb = ctx.alloc_skb(hlen as u32)?;
        skb.put_data(frame.get(..hlen)?).ok()?;
        if hlen < frame.len() {
            let truesize = record::size(frame.len()) as u32;
            skb.add_pool_frag(buf, start + hlen..start + frame.len(), truesize)
                .ok()?;
        }
        self.stats.frags += 1;
        Some(skb)
    }
}

/// Hands a frame's skb to the stack through GRO, its checksum marked
/// checked if the device vouched for it, and counts which in `stats`; with
/// its flow hash if it has one.
pub(crate) fn hand_up<T: Operations>(
    stats: &mut RxStats,
    dev: &Device<T>,
    ctx: &PollCtx<'_>,
    mut skb: SkBuff,
    meta: FrameMeta,
) {
    skb.set_hash(meta.hash);
    if meta.csum_ok {
        skb.set_csum_unnecessary();
        stats.csum_unnecessary += 1;
    } else {
        stats.csum_none += 1;
    }
    skb.eth_type_trans(dev);
    ctx.gro_receive(skb);
}
