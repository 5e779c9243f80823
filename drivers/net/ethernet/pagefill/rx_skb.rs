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
use crate::groups;
use crate::iface::ETH_HLEN;
use crate::net::napi::PollCtx;
use crate::net::netdev::{Device, Operations};
use crate::net::page_pool::PoolPage;
use crate::net::skb::{HashL4, RxHash, SkBuff, MAX_FRAGS};
use crate::net::xdp::{self, Action, Ran, XdpBuf};
use crate::rings::RawCqe;
use crate::rx::XdpPoll;
use crate::rx::{RxOffloads, RxState};
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
    pub(crate) buf: PoolPage,
    pub(crate) cqe: RawCqe,
    /// Offset of the next record.
    pub(crate) off: usize,
    /// Records split so far.
    pub(crate) frames: u16,
}

/// A record of a written buffer, its header and frame inside the buffer
/// and the frame at least an Ethernet header long.
struct Record {
    /// Offset of the frame (after the record header).
    start: usize,
    /// Length of the frame.
    len: usize,
    /// [`record_flags`].
    flags: u16,
    /// The header's last word: the frame's sequence number, or its flow
    /// hash ([`record_flags::HASH`]).
    word: u32,
}

/// What the device said of a frame besides its bytes, as far as the
/// offloads in force let the stack rely on it.
#[derive(Clone, Copy)]
struct FrameMeta {
    /// The device checked the layer 4 checksum and found it right.
    csum_ok: bool,
    /// The flow hash, or none.
    hash: RxHash,
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
    fn at(data: &[u8], off: usize) -> Option<Self> {
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

    /// The frame, from the bytes `data` it was found in.
    #[inline]
    fn frame<'a>(&self, data: &'a [u8]) -> &'a [u8] {
        data.get(self.start..self.start + self.len).unwrap_or(&[])
    }

    /// Offset of the next record.
    #[inline]
    fn next(&self) -> usize {
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
    fn meta(&self, offloads: &RxOffloads) -> FrameMeta {
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

impl RxState {
    /// Splits a written buffer into skbs while the poll's budget lasts; a
    /// buffer not done is kept in `self.split` for the next poll.
    pub(crate) fn split_on<T: Operations>(
        &mut self,
        dev: &Device<T>,
        ctx: &PollCtx<'_>,
        xdp: Option<&XdpPoll<'_>>,
        mut sp: Split,
    ) {
        let bytes = sp.cqe.bytes() as usize;
        if bytes > sp.buf.len() {
            self.stats.bad += 1;
            return;
        }
        let buf = &sp.buf;
        let data = buf.data();
        let mut off = sp.off;
        let mut frames = sp.frames;
        while off + record::HEADER_SIZE <= data.len() {
            if ctx.budget_left() == 0 {
                sp.off = off;
                sp.frames = frames;
                self.split = Some(sp);
                return;
            }
            let Some(rec) = Record::at(data, off) else {
                self.stats.bad += 1;
                break;
            };
            // The device vouches for the checksum; the frame's bytes are
            // checked as any other (length here, headers by the stack).
            let meta = rec.meta(&self.offloads);
            if let Some(x) = xdp {
                frames = frames.saturating_add(1);
                self.xdp_frame(dev, ctx, x, rec.frame(data), meta);
                off = rec.next();
                continue;
            }
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
                    self.hand_up(dev, ctx, skb, meta);
                    self.stats.packets += 1;
                    self.stats.bytes += rec.len as u64;
                }
                None => self.stats.dropped += 1,
            }
            off = rec.next();
        }
        if frames != sp.cqe.frames() || off != bytes {
            self.stats.bad += 1;
        }
        // `sp.buf`'s reference goes back to the pool here; fragments keep
        // their own.
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

    /// Hands a frame's skb to the stack through GRO, its checksum marked
    /// checked if the device vouched for it, and counts which; with its flow
    /// hash if it has one.
    fn hand_up<T: Operations>(
        &mut self,
        dev: &Device<T>,
        ctx: &PollCtx<'_>,
        mut skb: SkBuff,
        meta: FrameMeta,
    ) {
        skb.set_hash(meta.hash);
        if meta.csum_ok {
            skb.set_csum_unnecessary();
            self.stats.csum_unnecessary += 1;
        } else {
            self.stats.csum_none += 1;
        }
        skb.eth_type_trans(dev);
        ctx.gro_receive(skb);
    }

    /// A frame through XDP program `prog`: copied into `xdp_buf` after the
    /// headroom XDP promises (the device packs frames with none), run
    /// there, and dropped, handed up, sent back or redirected as the
    /// program says. Frames handed up are copied out into an skb, so the
    /// buffer serves the next frame; one sent back or redirected goes with
    /// its buffer.
    fn xdp_frame<T: Operations>(
        &mut self,
        dev: &Device<T>,
        ctx: &PollCtx<'_>,
        x: &XdpPoll<'_>,
        frame: &[u8],
        meta: FrameMeta,
    ) {
        let prog = x.prog;
        let buf = match self.xdp_buf.take() {
            Some(buf) => Some(buf),
            None => self.alloc_xdp_buf(ctx),
        };
        let (Some(buf), Some(rxq), Some(pool)) = (buf, self.xdp_rxq.as_ref(), self.pool()) else {
            self.stats.dropped += 1;
            ctx.count_consumed();
            return;
        };
        let multi_buf = frame.len() > buf.max_frame();
        let (mut buf, v) = match buf.run(rxq, prog, frame, meta.hash, pool, ctx) {
            Ran::Kept(buf, v) => (buf, v),
            Ran::NotRun(buf) => {
                // Longer than the MTU lets an XDP program see (`xdp_check`):
                // the device's doing.
                self.stats.bad += 1;
                self.keep_xdp_buf(buf);
                ctx.count_consumed();
                return;
            }
            Ran::NoBuffer(buf) => {
                self.stats.dropped += 1;
                self.keep_xdp_buf(buf);
                ctx.count_consumed();
                return;
            }
            Ran::Redirected => {
                self.count_xdp_seen(frame, multi_buf);
                self.stats.xdp_redirect += 1;
                x.redirected.set(true);
                ctx.count_consumed();
                return;
            }
            Ran::RedirectFailed(buf) => {
                self.count_xdp_seen(frame, multi_buf);
                // A redirect to several targets may have queued some
                // before it failed: flushed all the same.
                x.redirected.set(true);
                prog.exception(dev, Action::Redirect);
                self.stats.xdp_errors += 1;
                self.keep_xdp_buf(buf);
                ctx.count_consumed();
                return;
            }
        };
        self.count_xdp_seen(frame, multi_buf);
        match v.act {
            Action::Pass => {
                // Copied whole, from its buffers, into one linear skb.
                let head = buf.frame(&v);
                let skb = (head.len() >= ETH_HLEN)
                    .then(|| ctx.alloc_skb(v.total as u32))
                    .flatten()
                    .and_then(|mut skb| {
                        Iterator::chain(core::iter::once(head), buf.frags())
                            .try_for_each(|part| skb.put_data(part))
                            .ok()
                            .map(|()| skb)
                    });
                match skb {
                    Some(skb) => {
                        // The device's word holds for the bytes it checked:
                        // a frame the program moved or cut is checked again.
                        let kept = v.off == xdp::HEADROOM && v.total == frame.len();
                        let meta = FrameMeta {
                            csum_ok: meta.csum_ok && kept,
                            ..meta
                        };
                        self.hand_up(dev, ctx, skb, meta);
                        self.stats.xdp_pass += 1;
                    }
                    None => {
                        self.stats.dropped += 1;
                        ctx.count_consumed();
                    }
                }
            }
            Action::Drop => {
                self.stats.xdp_drop += 1;
                ctx.count_consumed();
            }
            Action::Aborted | Action::Invalid(_) => {
                prog.exception(dev, v.act);
                self.stats.xdp_aborted += 1;
                ctx.count_consumed();
            }
            Action::Tx => {
                ctx.count_consumed();
                let group = groups::tx_group(buf.frame(&v));
                let sent = match buf.map_for_tx(dev, &v) {
                    Ok(f) => x.tx.lock().xmit_xdp(dev, x.rings, f, group),
                    Err(b) => Err(b),
                };
                match sent {
                    Ok(()) => {
                        self.stats.xdp_tx += 1;
                        return;
                    }
                    // The ring is full, or the mapping failed: dropped.
                    Err(b) => {
                        buf = b;
                        prog.exception(dev, v.act);
                        self.stats.xdp_errors += 1;
                    }
                }
            }
            // `run` carries out a redirect: a verdict never says one.
            Action::Redirect => {
                self.stats.xdp_errors += 1;
                ctx.count_consumed();
            }
        }
        self.keep_xdp_buf(buf);
    }

    /// Keeps `buf` for the next frame, its fragments back in the pool: the
    /// pool's buffers serve the device too.
    fn keep_xdp_buf(&mut self, mut buf: XdpBuf) {
        buf.release_frags();
        self.xdp_buf = Some(buf);
    }

    /// Counts a frame an XDP program saw as received, whatever it does with
    /// it: XDP is the stack's first layer (the netdev queue statistics'
    /// rule).
    #[inline]
    fn count_xdp_seen(&mut self, frame: &[u8], multi_buf: bool) {
        self.stats.packets += 1;
        self.stats.bytes += frame.len() as u64;
        self.stats.xdp_multi_buf += u64::from(multi_buf);
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
