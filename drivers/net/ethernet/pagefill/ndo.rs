// SPDX-License-Identifier: GPL-2.0

//! The interface's `net_device_ops`.

use core::sync::atomic::Ordering;

use kernel::{io::Io, prelude::*, sync::Arc};

use crate::abi;
use crate::ethtool_ops::EthtoolTable;
use crate::frame::{buf_shift_for, default_buf_shift, mtu_fits, xdp_fits, xdp_frags_fit, xsk_fits};
use crate::groups::{self, GroupSet};
use crate::iface::{NetdevData, PagefillNetdev};
use crate::net::bh;
use crate::net::netdev::{
    Device, Features, McList, Operations, QueueStatsRx, QueueStatsTx, Rtnl, Stats64, TxOutcome,
    XmitCtx,
};
use crate::net::skb::SkBuff;
use crate::net::xdp::{BpfProg, ExtAck};
use crate::net::xdp_xmit::XmitFrames;
use crate::net::xsk::XskPool;
use crate::tx::Xmit;

#[vtable]
impl Operations for PagefillNetdev {
    type Data = NetdevData;
    const ETHTOOL: Option<&'static kernel::bindings::ethtool_ops> =
        Some(&EthtoolTable::<Self>::TABLE);

    fn open(dev: &Device<Self>, rtnl: &Rtnl<'_>) -> Result {
        Self::start(dev, rtnl, dev.mtu())
    }

    /// A program sees each frame whole: in one buffer, with XDP's headroom
    /// and tailroom, or, if it takes frames in several buffers
    /// (`xdp.frags`), in that one and a few more.
    fn xdp_check(
        dev: &Device<Self>,
        _rtnl: &Rtnl<'_>,
        prog: Option<&BpfProg>,
        extack: &ExtAck,
    ) -> Result {
        let Some(prog) = prog else {
            return Ok(());
        };
        let (mtu, buf_shift) = (dev.mtu(), dev.data().settings().rx.buf_shift);
        if !prog.has_frags() && !xdp_fits(mtu, buf_shift) {
            extack.set_msg(
                c"MTU too large for XDP without multi-buffer support: a frame with \
                  XDP's headroom and tailroom must fit one receive buffer \
                  (ethtool -G rx-buf-len), or the program must take fragments (xdp.frags)",
            );
            return Err(EINVAL);
        }
        if !xdp_frags_fit(mtu, buf_shift) {
            extack.set_msg(c"MTU too large for XDP: a frame would take more than 5 buffers");
            return Err(EINVAL);
        }
        Ok(())
    }

    /// No reset: the next poll of each queue reads the new program.
    fn xdp_install(dev: &Device<Self>, rtnl: &Rtnl<'_>, prog: Option<BpfProg>) {
        drop(dev.data().xdp.replace(prog, rtnl));
    }

    /// Each CPU sends on the queue pair of its number (modulo the pairs),
    /// beside the stack's frames and under the same lock; the frames take
    /// one descriptor each and leave the stack its room.
    fn xdp_xmit(dev: &Device<Self>, frames: &mut XmitFrames<'_>, flush: bool) -> Result {
        let data = dev.data();
        let active = data.active();
        if active.is_empty() {
            return Err(ENETDOWN);
        }
        let i = kernel::cpu::CpuId::current().as_u32() as usize % active.len();
        let q = &active[i];
        let rings = data.rings.queue(i)?;
        let mut tx = q.tx.lock();
        // Between a stop's start and the next start's end the ring is not
        // enabled (`TxState::set_enabled`); a stopped queue is also full.
        if !dev.is_running() || !tx.is_enabled() || dev.tx_stopped(i as u32) {
            tx.count_xmit_refused(frames.remaining());
            return Err(ENETDOWN);
        }
        frames.send_each(|f| tx.xmit_redirected(dev, rings, f));
        tx.count_xmit_refused(frames.remaining());
        if flush {
            if let Some(bar) = data.bar.try_access() {
                tx.ring_doorbell(|tail| {
                    let _ = bar.try_write32(tail, abi::reg::queue(i, abi::reg::Q_TX_TAIL));
                });
            }
        }
        Ok(())
    }

    /// The queue runs in chunk mode from the next start (at once, if the
    /// interface is up: it restarts). A frame must fit one of the pool's
    /// buffers, or [`XSK_MAX_SEGS`](crate::frame::XSK_MAX_SEGS) for sockets
    /// that take frames in several.
    fn xsk_bind(dev: &Device<Self>, rtnl: &Rtnl<'_>, queue: u32, pool: XskPool) -> Result {
        let data = dev.data();
        let q = queue as usize;
        if queue >= data.max_queues
            || !(abi::MIN_CHUNK_ROOM..=abi::MAX_CHUNK_ROOM).contains(&pool.room())
            || !xsk_fits(dev.mtu(), pool.room(), pool.frags())
        {
            return Err(EINVAL);
        }
        let pool = Arc::new(pool, GFP_KERNEL)?;
        {
            let mut slots = data.xsk.lock();
            if slots[q].is_some() {
                return Err(EBUSY);
            }
            slots[q] = Some(pool);
        }
        data.xsk_queues.fetch_or(1 << q, Ordering::AcqRel);
        let restarted = Self::restart_for_xsk(dev, rtnl, queue);
        if restarted.is_err() {
            data.xsk_queues.fetch_and(!(1 << q), Ordering::AcqRel);
            drop(data.xsk.lock()[q].take());
        }
        restarted
    }

    /// The queue's pool goes, after the queue gave back every buffer of it
    /// (a running interface restarts).
    fn xsk_unbind(dev: &Device<Self>, rtnl: &Rtnl<'_>, queue: u32) -> Result {
        let data = dev.data();
        let q = queue as usize;
        if q >= abi::MAX_QUEUES {
            return Err(EINVAL);
        }
        data.xsk_queues.fetch_and(!(1 << q), Ordering::AcqRel);
        let Some(pool) = data.xsk.lock()[q].take() else {
            return Ok(());
        };
        let restarted = Self::restart_for_xsk(dev, rtnl, queue);
        // Stopped or not, the queue holds no buffer of the pool now.
        drop(pool);
        restarted
    }

    fn xsk_wakeup(dev: &Device<Self>, queue: u32) -> Result {
        let data = dev.data();
        if !dev.is_running() {
            return Err(ENETDOWN);
        }
        let bound = data.xsk_queues.load(Ordering::Acquire);
        if queue >= data.queues_in_use.load(Ordering::Acquire) || bound & (1 << queue) == 0 {
            return Err(EINVAL);
        }
        data.queues[queue as usize].napi.schedule();
        Ok(())
    }

    /// Turning `ntuple` off deletes every flow rule; `loopback` restarts a
    /// running interface in or out of loopback; the other features are
    /// read where they apply.
    fn set_features(dev: &Device<Self>, rtnl: &Rtnl<'_>, features: Features) -> Result {
        let loopback = features.contains(Features::LOOPBACK);
        if loopback != dev.features().contains(Features::LOOPBACK) {
            let mut new = dev.data().settings();
            new.loopback = loopback;
            Self::apply(dev, rtnl, new)?;
        }
        if dev.features().contains(Features::NTUPLE) && !features.contains(Features::NTUPLE) {
            let data = dev.data();
            let mut steering = data.steering.lock();
            let bar = data.bar.try_access();
            steering.clear_rules(bar.as_deref())?;
        }
        Ok(())
    }

    fn tx_timeout(dev: &Device<Self>, _queue: u32) {
        dev.data().tx_timeouts.fetch_add(1, Ordering::Relaxed);
        dev.schedule_restart();
    }

    /// Resets the device and starts again with the same settings: every
    /// buffer and frame the device held comes back (the frames are dropped,
    /// counted by the device), and the groups are joined again.
    fn restart(dev: &Device<Self>, rtnl: &Rtnl<'_>) -> Result {
        let data = dev.data();
        data.restarts.fetch_add(1, Ordering::Relaxed);
        let restarted = Self::stop(dev, rtnl).and_then(|()| Self::start(dev, rtnl, dev.mtu()));
        match restarted {
            Ok(()) => {
                data.sync_groups();
                Ok(())
            }
            Err(e) => {
                data.restarts_failed.fetch_add(1, Ordering::Relaxed);
                Err(e)
            }
        }
    }

    fn stop(dev: &Device<Self>, rtnl: &Rtnl<'_>) -> Result {
        // No frame queued from here on, and no completion wakes the
        // stack's queue that `tx_disable` stops.
        for q in dev.data().queues.iter() {
            bh::disabled(|| q.tx.lock().set_enabled(false));
        }
        dev.tx_disable(rtnl);
        // The link interrupt first: it would turn the carrier back on.
        dev.data().misc.release();
        dev.carrier_off();
        Self::teardown(dev, rtnl)
    }

    fn start_xmit(skb: SkBuff, dev: &Device<Self>, ctx: &XmitCtx<'_>) -> TxOutcome {
        let data = dev.data();
        // The stack picks a queue among the real ones, which are the
        // active pairs.
        let i = ctx.queue() as usize;
        let Some(q) = data.queues.get(i) else {
            return TxOutcome::Ok;
        };
        let Ok(rings) = data.rings.queue(i) else {
            return TxOutcome::Ok;
        };
        let mut tx = q.tx.lock();
        let (outcome, ring) = match tx.xmit(dev, ctx, rings, skb) {
            // The doorbell waits while the stack has more frames coming
            // and the queue runs.
            Xmit::Queued if ctx.xmit_more() && !dev.tx_stopped(i as u32) => (TxOutcome::Ok, false),
            Xmit::Queued => (TxOutcome::Ok, true),
            Xmit::Busy(skb) => (TxOutcome::Busy(skb), true),
            Xmit::Dropped => (TxOutcome::Ok, true),
        };
        if ring {
            if let Some(bar) = data.bar.try_access() {
                tx.ring_doorbell(|tail| {
                    let _ = bar.try_write32(tail, abi::reg::queue(i, abi::reg::Q_TX_TAIL));
                });
            }
        }
        drop(tx);
        outcome
    }

    fn get_stats64(dev: &Device<Self>, stats: &mut Stats64<'_>) {
        let rx = dev.data().rx_stats();
        stats.add_rx(rx.packets, rx.bytes, rx.dropped);
        stats.add_rx_errors(rx.bad);
        let tx = dev.data().tx_stats();
        stats.add_tx(tx.packets, tx.bytes, tx.dropped);
    }

    fn change_mtu(dev: &Device<Self>, rtnl: &Rtnl<'_>, mtu: u32) -> Result {
        // Buffers the user has not sized follow the MTU; those the user
        // sized stay while they hold a whole frame and otherwise grow to
        // the smallest that does. A new size restarts a running interface.
        let mut new = dev.data().settings();
        let shift = if !new.buf_len_chosen {
            default_buf_shift(mtu)
        } else if mtu_fits(mtu, new.rx.buf_shift) {
            Some(new.rx.buf_shift)
        } else {
            buf_shift_for(mtu)
        }
        .ok_or(EINVAL)?;
        if !dev.data().xdp_sees_whole(rtnl, mtu, shift) {
            // The program would not see its frames whole (`xdp_check`).
            return Err(EINVAL);
        }
        if !dev.data().xsk_fit(mtu) {
            // A frame would not fit an AF_XDP socket's buffer.
            return Err(EINVAL);
        }
        if shift == new.rx.buf_shift {
            return Ok(());
        }
        new.rx.buf_shift = shift;
        Self::apply_with_mtu(dev, rtnl, new, mtu)
    }

    fn queue_stats_rx(dev: &Device<Self>, idx: u32) -> QueueStatsRx {
        let rx = dev
            .data()
            .queues
            .get(idx as usize)
            .map(|q| q.rx_stats.read())
            .unwrap_or_default();
        QueueStatsRx {
            packets: rx.packets,
            bytes: rx.bytes,
            alloc_fail: rx.alloc_failed,
            csum_unnecessary: rx.csum_unnecessary,
            csum_none: rx.csum_none,
        }
    }

    fn queue_stats_base(dev: &Device<Self>) -> (QueueStatsRx, QueueStatsTx) {
        let data = dev.data();
        let in_use = data.active().len() as u32;
        let (mut rx, mut tx) = (QueueStatsRx::default(), QueueStatsTx::default());
        for idx in in_use..abi::MAX_QUEUES as u32 {
            let (r, t) = (
                Self::queue_stats_rx(dev, idx),
                Self::queue_stats_tx(dev, idx),
            );
            rx.packets += r.packets;
            rx.bytes += r.bytes;
            rx.alloc_fail += r.alloc_fail;
            rx.csum_unnecessary += r.csum_unnecessary;
            rx.csum_none += r.csum_none;
            tx.packets += t.packets;
            tx.bytes += t.bytes;
        }
        (rx, tx)
    }

    fn queue_stats_tx(dev: &Device<Self>, idx: u32) -> QueueStatsTx {
        let tx = dev
            .data()
            .queues
            .get(idx as usize)
            .map(|q| bh::disabled(|| q.tx.lock().stats))
            .unwrap_or_default();
        QueueStatsTx {
            packets: tx.packets,
            bytes: tx.bytes,
        }
    }

    fn set_rx_mode(dev: &Device<Self>, mc: &McList<'_, Self>) {
        let mut wanted = GroupSet::default_only();
        mc.for_each(|addr| {
            if let Some(g) = groups::group_of_mac(addr) {
                wanted.insert(g);
            }
        });
        let data = dev.data();
        // Bottom halves are off here already (the address lock).
        *data.wanted.lock() = wanted;
        data.sync_groups();
    }
}
