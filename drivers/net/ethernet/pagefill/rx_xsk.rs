// SPDX-License-Identifier: GPL-2.0

//! Zero-copy AF_XDP receive: a queue bound to an XSK pool runs in the
//! device's chunk mode, its streams' node-table entries holding chunk lists
//! of the pool's buffers (one frame from the start of each), and each frame
//! the device wrote goes through the queue's XDP program in its own buffer,
//! which a redirect hands to the socket as it is.
//!
//! A list names up to [`CHUNKS_PER_LIST`] buffers (as many as recent lists
//! used, [`XskRx`]), or fewer when the socket's fill ring has fewer; one
//! for a umem of unaligned chunks, whose frames must take the buffers in
//! the fill ring's order (each address carries the offset the program
//! chose for the frame it expects there), which a list closed before its
//! end would break: its unused buffers would come after the next list's.
//! With none in the fill ring, the stream's entry waits (counted in
//! `xsk_fill_empty`), the device pauses the stream's sender when it needs
//! the entry, and the poll tries again when the program gives buffers
//! (`ndo_xsk_wakeup`, or the poll's retry timer): a slow consumer holds the
//! senders off and loses nothing.

use kernel::{prelude::*, sync::Arc};

use crate::abi::{self, chunk_list, record_flags};
use crate::frame::XSK_MAX_SEGS;
use crate::net::napi::PollCtx;
use crate::net::netdev::{Device, Operations};
use crate::net::page_pool::PagePool;
use crate::net::xdp::Prog;
use crate::net::xsk::{XskBuf, XskBufs, XskPool, XskRxQueue, XskVerdict};
use crate::rx_skb::{hand_up, FrameMeta, Record, RxOffloads, Split};
use crate::rx_slot::DeviceBuf;
use crate::rx_stats::RxStats;
use crate::rx_xdp::XdpPoll;

/// Buffers a chunk list names, as many as one takes: each list costs a
/// completion, a page and a refill, so the more frames share them the
/// better. A fill ring with fewer buffers gives shorter lists (two lists
/// for each of a group's 31 other nodes take 3906 buffers at the most).
pub(crate) const CHUNKS_PER_LIST: usize = chunk_list::MAX_CHUNKS;

const _: () = assert!(CHUNKS_PER_LIST <= chunk_list::MAX_CHUNKS);

/// Buffers a list of the queue names at least, as it adapts.
const MIN_CHUNKS_PER_LIST: usize = 8;

/// Buffers a list left unused, kept for the next lists rather than given
/// back to the pool and taken again.
const SPARE_BUFS: usize = 2 * CHUNKS_PER_LIST;

/// A queue in zero-copy mode: its XSK pool, and its registration as XDP
/// programs see it, which the pool's buffers point to (held, and dropped
/// first: the pool outlives it).
pub(crate) struct XskRx {
    _rxq: XskRxQueue,
    /// Buffers lists came back with unused, the first to be used last;
    /// given back before the pool.
    spare: KVec<XskBuf>,
    /// Buffers the next list names: lists closed by the timer or the end of
    /// a transmission hold fewer frames than a list's 63 (long frames come
    /// slowly), and a list costs a write and a sync for each buffer it
    /// names. Twice what the last list used, or more after a full one.
    want: usize,
    /// Buffers a list names at least: those of the longest frame, which
    /// the device drops if a list it starts has fewer.
    min: usize,
    pub(crate) pool: Arc<XskPool>,
}

impl XskRx {
    /// For `pool` and its registration `rxq`; allocates (process context).
    pub(crate) fn new(rxq: XskRxQueue, pool: Arc<XskPool>) -> Result<Self> {
        let room = (pool.room() as usize).max(1);
        let min = if pool.frags() {
            abi::MAX_FRAME_LEN.div_ceil(room).min(XSK_MAX_SEGS as usize)
        } else {
            1
        };
        Ok(Self {
            _rxq: rxq,
            spare: KVec::with_capacity(SPARE_BUFS, GFP_KERNEL)?,
            want: if pool.unaligned() {
                min
            } else {
                CHUNKS_PER_LIST
            },
            min,
            pool,
        })
    }

    /// A list came back having used `used` of its buffers, full or not;
    /// `rest` are those it did not use, in the list's order.
    fn returned(&mut self, used: usize, full: bool, rest: impl DoubleEndedIterator<Item = XskBuf>) {
        self.want = if self.pool.unaligned() {
            self.min
        } else if full {
            (self.want * 2).min(CHUNKS_PER_LIST)
        } else {
            (used * 2).clamp(MIN_CHUNKS_PER_LIST.max(self.min), CHUNKS_PER_LIST)
        };
        self.keep(rest);
    }

    /// Keeps `bufs` for the next lists, which take them in `bufs`' order;
    /// past the spare's room, back to the pool (dropped).
    fn keep(&mut self, bufs: impl DoubleEndedIterator<Item = XskBuf>) {
        for buf in bufs.rev() {
            let _ = self.spare.push_within_capacity(buf);
        }
    }
}

/// Why no chunk list could be made.
pub(crate) enum NoList {
    /// No page for the list.
    Memory,
    /// No buffer in the socket's fill ring.
    FillEmpty,
}

/// A chunk list of as many of `xsk`'s buffers as it wants, spare ones
/// first, then from the fill ring, in a page of `pool`, for the device.
pub(crate) fn chunk_list(
    ctx: &PollCtx<'_>,
    pool: &PagePool,
    xsk: &mut XskRx,
) -> Result<DeviceBuf, NoList> {
    let mut bufs = XskBufs::new(&xsk.pool).map_err(|_| NoList::Memory)?;
    while bufs.len() < xsk.want {
        let Some(buf) = xsk.spare.pop() else {
            break;
        };
        if let Err(buf) = bufs.push(buf) {
            let _ = xsk.spare.push_within_capacity(buf);
            break;
        }
    }
    let want = xsk.want.saturating_sub(bufs.len());
    bufs.fill(&xsk.pool, ctx, want);
    let count = bufs.len();
    if count < xsk.min {
        // Kept for the list made when the program gives more.
        xsk.keep((0..count).filter_map(|i| bufs.take(i)));
        return Err(NoList::FillEmpty);
    }
    // The buffers go back to the fill ring's pool if there is no page.
    let list = pool
        .alloc_written(
            ctx,
            chunk_list::ENTRIES + count * chunk_list::ENTRY_SIZE,
            |mem| {
                // The device reads the header and the entries the count names.
                mem[..chunk_list::ENTRIES].fill(0);
                mem[chunk_list::COUNT..chunk_list::COUNT + 2]
                    .copy_from_slice(&(count as u16).to_le_bytes());
                for i in 0..count {
                    let at = chunk_list::ENTRIES + i * chunk_list::ENTRY_SIZE;
                    let addr = bufs.dma_addr(i).unwrap_or(0);
                    const _: () = assert!(
                        chunk_list::ADDR == 0
                            && chunk_list::RECORD == 8
                            && chunk_list::ENTRY_SIZE == 16
                    );
                    // The address and a cleared record, in one store: an
                    // entry the device did not write must not read as a
                    // frame's record that the reused page held.
                    if let Some(entry) = mem
                        .get_mut(at..at + chunk_list::ENTRY_SIZE)
                        .and_then(|m| <&mut [u8; chunk_list::ENTRY_SIZE]>::try_from(m).ok())
                    {
                        *entry = u128::from(addr).to_le_bytes();
                    }
                }
            },
        )
        .ok_or(NoList::Memory)?;
    Ok(DeviceBuf::chunk_list(list, bufs.post()))
}

/// The zero-copy path's share of a queue's receive state, lent to it for
/// one chunk list: the queue's XSK pool, the counters and the offloads in
/// force.
pub(crate) struct XskPath<'a> {
    pub(crate) xsk: Option<&'a mut XskRx>,
    pub(crate) stats: &'a mut RxStats,
    pub(crate) offloads: RxOffloads,
}

impl XskPath<'_> {
    /// Runs the frames of a written chunk list, `sp`, through the queue's
    /// program (or hands them up, with none) while the poll's budget lasts;
    /// returns a list not done, for the next poll. The list's records are
    /// checked as a buffer's are ([`chunk_ok`]), and records that disagree
    /// with the completion are the device's errors.
    pub(crate) fn split_chunks<T: Operations>(
        &mut self,
        dev: &Device<T>,
        ctx: &PollCtx<'_>,
        xdp: Option<&XdpPoll<'_>>,
        mut sp: Split,
    ) -> Option<Split> {
        let (room, frags) = self
            .xsk
            .as_ref()
            .map_or((0, false), |x| (x.pool.room() as usize, x.pool.frags()));
        let chunks = sp.chunks.as_mut()?;
        let prog = xdp.map(|x| x.prog);
        let list = sp.buf.data();
        let frames = sp.cqe.frames();
        // A completion that claims more bytes than the list's chunks hold
        // is the device's error, and none of its frames goes up (as a
        // buffer's): checked before the first. A frame count past the
        // records stops the walk where they end (an entry not written
        // reads as no frame), the frames before it up, as in a buffer.
        let claims_too_much = sp.off == 0 && sp.cqe.bytes() as usize > chunks.len() * room;
        if claims_too_much {
            self.stats.bad += 1;
        }
        // Counted in locals, given to the poll and the counters once: the
        // frames left in the budget, those finished without an skb, and
        // those redirected.
        let mut left = ctx.budget_left();
        let mut ran = Ran::default();
        let mut done = true;
        while !claims_too_much && sp.frames < frames {
            if left == 0 {
                done = false;
                break;
            }
            left -= 1;
            let at = sp.off;
            let (Some(rec), Some(buf)) = (Record::header(list, entry(at)), chunks.take(at)) else {
                self.stats.bad += 1;
                break;
            };
            if rec.flags() & record_flags::MORE != 0 {
                // A frame in several chunks: out of the loop's way, which
                // the frames of one keep to themselves.
                let Some((len, used)) = self.multi_chunk_frame(
                    dev, ctx, prog, list, chunks, at, rec, buf, room, frags, &mut ran,
                ) else {
                    self.stats.bad += 1;
                    break;
                };
                sp.off += used;
                sp.frames += 1;
                sp.seen += len;
                continue;
            }
            if !chunk_ok(&rec, false, room) {
                self.stats.bad += 1;
                break;
            }
            sp.off += 1;
            sp.frames += 1;
            sp.seen += rec.len;
            let meta = rec.meta(&self.offloads);
            // Every frame the program saw counts as received, whatever it
            // does with it (the netdev queue statistics' rule).
            self.stats.packets += 1;
            self.stats.bytes += rec.len as u64;
            let verdict = match buf.frame(rec.len as u32) {
                Some(frame) => frame.run(ctx, prog, meta.hash),
                None => XskVerdict::Failed,
            };
            self.account(dev, ctx, prog, verdict, meta, &mut ran);
        }
        ctx.count_consumed_n(ran.consumed);
        if ran.redirected > 0 {
            self.stats.xdp_redirect += ran.redirected;
            if let Some(x) = xdp {
                x.redirected.set(true);
            }
        }
        if !done {
            return Some(sp);
        }
        if sp.frames == frames && sp.seen != sp.cqe.bytes() as usize {
            self.stats.bad += 1;
        }
        // The list's unused buffers are kept for the next lists (those of a
        // list that stopped at a bad entry too: the device wrote none of
        // them); its page goes back to the pool with `sp`.
        if let (Some(x), Some(chunks)) = (self.xsk.as_mut(), sp.chunks.as_mut()) {
            let (used, len) = (sp.off, chunks.len());
            let full = sp.cqe.flags() & crate::abi::rx_flags::FULL != 0;
            x.returned(used, full, (used..len).filter_map(|i| chunks.take(i)));
        }
        None
    }

    /// The frame whose first chunk is entry `at` of `list`, with record
    /// `rec` and buffer `buf`, and goes on in the next: its chunks are
    /// added to it as fragments (if the socket takes a frame in several,
    /// `frags`, up to [`XSK_MAX_SEGS`]; else it is dropped, counted) and it
    /// runs as [`Self::split_chunks`] runs a frame. Returns its bytes and
    /// how many chunks it took, read to its end whether or not the socket
    /// takes it; `None` for a chunk that is the device's error.
    #[cold]
    #[inline(never)]
    #[allow(clippy::too_many_arguments)]
    fn multi_chunk_frame<T: Operations>(
        &mut self,
        dev: &Device<T>,
        ctx: &PollCtx<'_>,
        prog: Option<Prog<'_>>,
        list: &[u8],
        chunks: &mut XskBufs,
        at: usize,
        rec: Record,
        buf: XskBuf,
        room: usize,
        frags: bool,
        ran: &mut Ran,
    ) -> Option<(usize, usize)> {
        if !chunk_ok(&rec, true, room) {
            return None;
        }
        let mut frame = buf.frame(rec.len as u32);
        let (mut len, mut used) = (rec.len, 1);
        let mut more = true;
        while more {
            let i = at + used;
            let next = Record::header(list, entry(i))?;
            let buf = chunks.take(i)?;
            more = next.flags() & record_flags::MORE != 0;
            if !chunk_ok(&next, more, room) {
                return None;
            }
            used += 1;
            len += next.len;
            if !frags || used > XSK_MAX_SEGS as usize {
                frame = None;
            }
            if let Some(f) = frame.as_mut() {
                if !f.add_frag(buf, next.len as u32) {
                    frame = None;
                }
            }
        }
        let Some(frame) = frame else {
            // Longer than the socket takes: from a sender of a larger MTU.
            self.stats.dropped += 1;
            ran.consumed += 1;
            return Some((len, used));
        };
        self.stats.xdp_multi_buf += 1;
        self.stats.packets += 1;
        self.stats.bytes += len as u64;
        let meta = rec.meta(&self.offloads);
        let verdict = if prog.is_some_and(|p| !p.has_frags()) {
            // A program that cannot see the frame whole.
            drop(frame);
            XskVerdict::Failed
        } else {
            frame.run(ctx, prog, meta.hash)
        };
        self.account(dev, ctx, prog, verdict, meta, ran);
        Some((len, used))
    }

    /// Counts what became of a frame that ran, `verdict`, and hands up an
    /// skb the program passed.
    #[inline(always)]
    fn account<T: Operations>(
        &mut self,
        dev: &Device<T>,
        ctx: &PollCtx<'_>,
        prog: Option<Prog<'_>>,
        verdict: XskVerdict,
        meta: FrameMeta,
        ran: &mut Ran,
    ) {
        let stats = &mut *self.stats;
        match verdict {
            XskVerdict::Redirected => {
                ran.redirected += 1;
                ran.consumed += 1;
            }
            XskVerdict::Pass(skb) => {
                // A program may have changed the bytes the device
                // checked: their checksum is checked again.
                let meta = FrameMeta {
                    csum_ok: meta.csum_ok && prog.is_none(),
                    ..meta
                };
                if prog.is_some() {
                    stats.xdp_pass += 1;
                }
                hand_up(stats, dev, ctx, skb, meta);
            }
            XskVerdict::Tx => {
                stats.xdp_tx += 1;
                ran.consumed += 1;
            }
            XskVerdict::Dropped => {
                stats.xdp_drop += 1;
                ran.consumed += 1;
            }
            XskVerdict::Aborted => {
                stats.xdp_aborted += 1;
                ran.consumed += 1;
            }
            XskVerdict::Failed => {
                if prog.is_some() {
                    stats.xdp_errors += 1;
                } else {
                    stats.dropped += 1;
                }
                ran.consumed += 1;
            }
        }
    }
}

/// Frames of a list finished without an skb and redirected, counted in
/// [`XskPath::split_chunks`]'s loop and given to the poll after it.
#[derive(Default)]
struct Ran {
    consumed: u32,
    redirected: u64,
}

/// Offset of the record of entry `i` of a chunk list.
#[inline]
fn entry(i: usize) -> usize {
    chunk_list::ENTRIES + i * chunk_list::ENTRY_SIZE + chunk_list::RECORD
}

/// Whether `rec` can be a chunk's record: some bytes, within the room, and
/// all of it if the frame goes on in the next chunk (`more`). Otherwise, as
/// a chunk not in the list or already taken, or `MORE` on a list's last
/// chunk, it is the device's error.
#[inline]
fn chunk_ok(rec: &Record, more: bool, room: usize) -> bool {
    rec.len != 0 && rec.len <= room && (!more || rec.len == room)
}
