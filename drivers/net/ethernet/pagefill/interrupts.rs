// SPDX-License-Identifier: GPL-2.0

//! The interrupts: the misc vector's handler and the queues' NAPI poll.

use core::sync::atomic::Ordering;

use kernel::io::Io;

use crate::abi;
use crate::iface::PagefillNetdev;
use crate::net::irq::Handler;
use crate::net::napi::{Poll, PollCtx};
use crate::net::netdev::Device;
use crate::net::xdp;
use crate::rx_xdp::XdpPoll;

impl Handler for PagefillNetdev {
    fn handle(dev: &Device<Self>) {
        let data = dev.data();
        let Some(bar) = data.bar.try_access() else {
            return;
        };
        let cause = bar.read32(abi::reg::MISC_CAUSE);
        bar.write32(cause, abi::reg::MISC_CAUSE);
        if cause & abi::misc::LINK_CHANGE != 0 {
            if bar.read32(abi::reg::STATUS) & abi::status::LINK_UP != 0 {
                dev.carrier_on();
            } else {
                dev.carrier_off();
            }
        }
        if cause & abi::misc::ERROR != 0 {
            dev.warn_ratelimited(format_args!(
                "the device reported a fatal error: resetting it"
            ));
            data.fatal_errors.fetch_add(1, Ordering::Relaxed);
            dev.carrier_off();
            dev.schedule_restart();
        }
        bar.write32(1, abi::reg::MISC_ARM);
    }
}

impl Poll for PagefillNetdev {
    fn poll(dev: &Device<Self>, mut ctx: PollCtx<'_>) -> i32 {
        let data = dev.data();
        let Some(i) = data
            .queues
            .iter()
            .position(|q| core::ptr::eq(&q.napi, ctx.napi()))
        else {
            // Not one of ours: nothing to do, and nothing to poll again for.
            ctx.complete_done(0);
            return 0;
        };
        let q = &data.queues[i];
        if let Ok(rings) = data.rings.queue(i) {
            q.tx.lock().clean(dev, &ctx, rings);
        }
        // netpoll (netconsole) polls with a budget of 0 to reclaim transmit
        // buffers only, possibly with interrupts off: no receive, no page
        // pool, and NAPI stays scheduled (Documentation/networking/napi.rst).
        let budget = ctx.budget();
        if budget == 0 {
            return 0;
        }
        let bar = data.bar.try_access();
        let offloads = data.rx_offloads(dev);
        let qrings = data.rings.queue(i);
        let xdp = data
            .xdp
            .get(&ctx)
            .zip(qrings.as_ref().ok())
            .map(|(prog, rings)| XdpPoll {
                prog,
                tx: &q.tx,
                rings,
                redirected: core::cell::Cell::new(false),
            });
        let Some((rx, pctx)) = q.rx.poll_mut(&mut ctx) else {
            ctx.complete_done(0);
            return 0;
        };
        let work = rx.poll(dev, pctx, &data.rings, &q.mailbox, offloads, xdp.as_ref());
        if xdp.as_ref().is_some_and(|x| x.redirected.get()) {
            xdp::flush_redirects(pctx);
        }
        // The frames XDP sent back (`XDP_TX`), and those of the queue's
        // AF_XDP socket in zero-copy mode, go with one doorbell a poll.
        let mut xsk_more = false;
        if let (true, Some(bar)) = (xdp.is_some() || rx.xsk.is_some(), &bar) {
            let mut tx = q.tx.lock();
            if let (true, Ok(rings)) = (rx.xsk.is_some(), &qrings) {
                xsk_more = tx.xmit_xsk(pctx, rings, XSK_TX_BUDGET);
            }
            tx.ring_doorbell(|tail| {
                let _ = bar.try_write32(tail, abi::reg::queue(i, abi::reg::Q_TX_TAIL));
            });
        }
        if let Some(bar) = &bar {
            rx.take_xons(|id| bar.write32(id, abi::reg::XON));
        }
        let (retired, broken, stalled) = (rx.take_retired(), rx.take_broken(), rx.refill_stalled());
        q.rx_stats.publish(&rx.stats);
        if let Some(stream) = broken {
            dev.warn_ratelimited(format_args!(
                "stream {}/{} stuck (starving with a buffer posted, its completions lost): \
                 resetting the device",
                abi::stream_group(stream),
                abi::stream_node(stream)
            ));
            data.fatal_errors.fetch_add(1, Ordering::Relaxed);
            dev.schedule_restart();
        }
        // A group that finished leaving may be wanted again.
        if retired != 0 && data.tables.lock().release(retired) {
            data.sync_groups();
        }
        // An AF_XDP socket with more to send: polled again.
        if work >= budget || xsk_more {
            return budget;
        }
        // Completing: an interrupt comes next, the event net_dim() counts.
        if let (true, Some(bar)) = (data.queue_coalesce, &bar) {
            let (packets, bytes) = (rx.stats.packets, rx.stats.bytes);
            if let Some(usecs) = rx.moderation.poll(pctx, &q.coalesce, packets, bytes) {
                let _ = bar.try_write32(usecs, abi::reg::queue(i, abi::reg::Q_COALESCE_USECS));
            }
        }
        // A paused stream that waits for a page gets no completion to retry
        // the refill: a timer polls again, rather than a loop in softirq
        // context until memory comes back.
        let completed = if stalled {
            ctx.complete_done_retry(work, ALLOC_RETRY_MS)
        } else {
            ctx.complete_done(work)
        };
        if completed {
            if let Some(bar) = &bar {
                let _ = bar.try_write32(
                    abi::arm::RX | abi::arm::TX,
                    abi::reg::queue(i, abi::reg::Q_ARM),
                );
            }
        }
        work
    }
}

/// Frames a poll takes from an AF_XDP socket's TX ring (zero-copy): a
/// poll's worth, as NAPI's budget is for receive.
const XSK_TX_BUDGET: u32 = 64;

/// How long NAPI waits before it tries again to allocate pages for streams
/// that wait for one.
const ALLOC_RETRY_MS: u32 = 10;
