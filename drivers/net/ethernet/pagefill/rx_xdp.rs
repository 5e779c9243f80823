// SPDX-License-Identifier: GPL-2.0

//! The receive path with an XDP program attached: each frame of a written
//! buffer is copied into the queue's XDP buffer, after the headroom XDP
//! promises (the device packs frames with none), run through the program
//! there, and dropped, handed up, sent back or redirected as it says.
//! Frames handed up are copied out into an skb, so the buffer serves the
//! next frame; one sent back or redirected goes with its buffer.
//!
//! This is the per-frame path of XDP_DROP and XDP_TX: what holds for every
//! frame of a buffer (the queue's registration, its pool, the budget) is
//! checked once for the run, and the counters are summed in locals and
//! added once.

use kernel::sync::SpinLock;

use crate::abi::record;
use crate::frame::ETH_HLEN;
use crate::groups;
use crate::net::napi::PollCtx;
use crate::net::netdev::{Device, Operations};
use crate::net::page_pool::PagePool;
use crate::net::xdp::{Action, Prog, Ran, RxQueue, Verdict, XdpQueue, XdpRunner};
use crate::rings::QueueRings;
use crate::rx_skb::{hand_up, FrameMeta, Record, RxOffloads};
use crate::rx_stats::RxStats;
use crate::tx::TxState;

/// What a poll's frames need when an XDP program is attached: the program,
/// read once for the poll, the queue pair's transmit ring for the frames it
/// sends back (`XDP_TX`), and whether it redirected any.
pub(crate) struct XdpPoll<'a> {
    pub(crate) prog: Prog<'a>,
    pub(crate) tx: &'a SpinLock<TxState>,
    pub(crate) rings: &'a QueueRings,
    /// A frame was redirected: the poll flushes the redirects before it
    /// ends ([`crate::net::xdp::flush_redirects`]).
    pub(crate) redirected: core::cell::Cell<bool>,
}

/// The XDP path's share of a queue's receive state, lent to it for one
/// buffer: the queue's registration and pool, the buffer frames are run in,
/// the counters and the offloads in force.
pub(crate) struct XdpPath<'a> {
    pub(crate) xdp_rxq: Option<&'a RxQueue>,
    pub(crate) pool: Option<&'a PagePool>,
    pub(crate) runner: &'a mut XdpRunner,
    pub(crate) stats: &'a mut RxStats,
    pub(crate) offloads: RxOffloads,
}

impl XdpPath<'_> {
    /// Runs the records of the written bytes `data` from offset `off` on
    /// through `x`'s program while the poll's budget lasts, `frames` of
    /// them run before; returns where the next record starts, the records
    /// run, and whether the buffer is done (`false`: the budget ran out).
    pub(crate) fn split_xdp<T: Operations>(
        self,
        dev: &Device<T>,
        ctx: &PollCtx<'_>,
        x: &XdpPoll<'_>,
        data: &[u8],
        mut off: usize,
        mut frames: u16,
    ) -> (usize, u16, bool) {
        let Self {
            xdp_rxq,
            pool,
            runner,
            stats,
            offloads,
        } = self;
        let Some(q) = xdp_rxq
            .zip(pool)
            .and_then(|(rxq, pool)| XdpQueue::new(rxq, pool))
        else {
            // No registration (never while the queue runs): the buffer's
            // frames are dropped, counted as bad records.
            stats.bad += 1;
            return (data.len(), frames, true);
        };
        let mut left = ctx.budget_left().unsigned_abs();
        // Frames the program saw, their bytes, those it dropped, and those
        // finished without an skb; no more than a buffer's records, so no
        // wrap.
        let (mut seen, mut bytes, mut drops, mut consumed) = (0u64, 0u64, 0u64, 0u32);
        let mut done = true;
        while off + record::HEADER_SIZE <= data.len() {
            if left == 0 {
                done = false;
                break;
            }
            let Some(rec) = Record::at(data, off) else {
                stats.bad += 1;
                break;
            };
            let meta = rec.meta(&offloads);
            let frame = rec.frame(data);
            // A buffer of at most 64 KiB holds fewer than 4096 records.
            frames = frames.wrapping_add(1);
            off = rec.next();
            left = left.wrapping_sub(1);
            let v = match runner.run(q, x.prog, frame, meta.hash, ctx) {
                Ran::Kept(v) => v,
                Ran::NotRun => {
                    // Longer than the MTU lets an XDP program see
                    // (`xdp_check`): the device's doing.
                    stats.bad += 1;
                    consumed = consumed.wrapping_add(1);
                    continue;
                }
                Ran::NoBuffer => {
                    stats.dropped += 1;
                    consumed = consumed.wrapping_add(1);
                    continue;
                }
                Ran::Redirected => {
                    seen = seen.wrapping_add(1);
                    bytes = bytes.wrapping_add(frame.len() as u64);
                    stats.xdp_redirect += 1;
                    x.redirected.set(true);
                    consumed = consumed.wrapping_add(1);
                    continue;
                }
                Ran::RedirectFailed => {
                    seen = seen.wrapping_add(1);
                    bytes = bytes.wrapping_add(frame.len() as u64);
                    // A redirect to several targets may have queued some
                    // before it failed: flushed all the same.
                    x.redirected.set(true);
                    x.prog.exception(dev, Action::Redirect);
                    stats.xdp_errors += 1;
                    runner.done();
                    consumed = consumed.wrapping_add(1);
                    continue;
                }
            };
            // Every frame a program saw counts as received, whatever it
            // does with it: XDP is the stack's first layer (the netdev
            // queue statistics' rule).
            seen = seen.wrapping_add(1);
            bytes = bytes.wrapping_add(frame.len() as u64);
            match v.act() {
                Action::Drop => {
                    drops = drops.wrapping_add(1);
                    consumed = consumed.wrapping_add(1);
                }
                // Counted against the budget as an skb handed up.
                Action::Pass => {
                    if !xdp_pass(stats, runner, dev, ctx, frame, meta, &v) {
                        consumed = consumed.wrapping_add(1);
                    }
                }
                Action::Tx => {
                    xdp_tx(stats, runner, dev, x, &v);
                    consumed = consumed.wrapping_add(1);
                }
                Action::Aborted | Action::Invalid(_) => {
                    x.prog.exception(dev, v.act());
                    stats.xdp_aborted += 1;
                    consumed = consumed.wrapping_add(1);
                }
                // `run` carries out a redirect: a verdict never says one.
                Action::Redirect => {
                    stats.xdp_errors += 1;
                    consumed = consumed.wrapping_add(1);
                }
            }
            runner.done();
        }
        stats.packets += seen;
        stats.bytes += bytes;
        stats.xdp_multi_buf += runner.take_multi_buf();
        stats.xdp_drop += drops;
        ctx.count_consumed_n(consumed);
        (off, frames, done)
    }
}

/// An XDP_PASS frame `v` of `runner`'s buffer, which came in as `frame`:
/// copied whole, from its buffers, into one linear skb and handed up.
/// Whether it was (else it was dropped, and counted).
fn xdp_pass<T: Operations>(
    stats: &mut RxStats,
    runner: &XdpRunner,
    dev: &Device<T>,
    ctx: &PollCtx<'_>,
    frame: &[u8],
    meta: FrameMeta,
    v: &Verdict,
) -> bool {
    let skb = runner.buf().and_then(|buf| {
        let head = buf.frame(v);
        let mut skb = (head.len() >= ETH_HLEN)
            .then(|| ctx.alloc_skb(buf.frame_len(v) as u32))
            .flatten()?;
        Iterator::chain(core::iter::once(head), buf.frags())
            .try_for_each(|part| skb.put_data(part))
            .ok()?;
        Some(skb)
    });
    let Some(skb) = skb else {
        stats.dropped += 1;
        return false;
    };
    // The device's word holds for the bytes it checked: a frame the
    // program moved or cut is checked again.
    let kept = runner.buf().is_some_and(|buf| !buf.has_frags()) && v.unchanged(frame.len());
    let meta = FrameMeta {
        csum_ok: meta.csum_ok && kept,
        ..meta
    };
    hand_up(stats, dev, ctx, skb, meta);
    stats.xdp_pass += 1;
    true
}

/// An XDP_TX frame `v` of `runner`'s buffer: sent back on the queue pair's
/// transmit ring with its buffer; the buffer kept if it could not go.
fn xdp_tx<T: Operations>(
    stats: &mut RxStats,
    runner: &mut XdpRunner,
    dev: &Device<T>,
    x: &XdpPoll<'_>,
    v: &Verdict,
) {
    let Some(buf) = runner.take() else {
        stats.xdp_errors += 1;
        return;
    };
    let group = groups::tx_group(buf.frame(v));
    let sent = match buf.map_for_tx(dev, v) {
        Ok(f) => x.tx.lock().xmit_xdp(dev, x.rings, f, group),
        Err(b) => Err(b),
    };
    match sent {
        Ok(()) => stats.xdp_tx += 1,
        // The ring is full, or the mapping failed: dropped.
        Err(b) => {
            runner.put(b);
            x.prog.exception(dev, v.act());
            stats.xdp_errors += 1;
        }
    }
}
