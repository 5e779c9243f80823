// SPDX-License-Identifier: GPL-2.0

//! The interface's ethtool operations. The device's counters they report
//! are kept in `hw.rs`, the queues' in `rx_stats.rs` and `tx.rs`.

use core::sync::atomic::Ordering;

use kernel::{io::Io, prelude::*, str::CStr};

use crate::abi;
use crate::frame::{mtu_fits, MAX_POOL_BUF_SHIFT};
use crate::hw::{XOFF_RECEIVED, XOFF_SENT};
use crate::iface::{NetdevData, PagefillNetdev, Queue};
use crate::net::bh;
pub(crate) use crate::net::ethtool::EthtoolTable;
use crate::net::ethtool::{
    Channels, Coalesce, EthtoolOps, FlowRule, HashFields, HashFlow, Pause, PauseStats,
    Rings as RingParams, RssHashFunc, RxfhUpdate,
};
use crate::net::netdev::{Device, Features, Rtnl};
use crate::rings::TX_SHIFT_MAX;
use crate::rx::RxConfig;

/// Largest coalescing time `ethtool -C rx-usecs` accepts: 10 ms.
const MAX_COALESCE_USECS: u32 = 10_000;

/// Queue `queue`, whose coalescing ethtool sets apart: none on a device of
/// one timer for all (`EOPNOTSUPP`) or past the device's queues.
fn coalesce_queue(data: &NetdevData, queue: u32) -> Result<&Queue> {
    if !data.queue_coalesce {
        return Err(EOPNOTSUPP);
    }
    data.queues
        .get(queue as usize)
        .filter(|_| queue < data.max_queues)
        .ok_or(EINVAL)
}

#[vtable]
impl EthtoolOps for PagefillNetdev {
    const DRIVER: &'static CStr = c"pagefill";
    const QUEUE_STATS: &'static [(&'static str, &'static str)] = &[
        ("rx", "packets"),
        ("rx", "bytes"),
        ("rx", "dropped"),
        ("rx", "bad_completions"),
        ("rx", "resyncs"),
        ("rx", "starved"),
        ("rx", "xon_doorbells"),
        ("rx", "page_alloc_failed"),
        ("rx", "copybreak"),
        ("rx", "frags"),
        ("rx", "buffers_allocated"),
        ("rx", "buffers_recycled"),
        ("rx", "csum_unnecessary"),
        ("rx", "csum_none"),
        ("rx", "merged_skbs"),
        ("rx", "merged_frames"),
        ("rx", "xdp_pass"),
        ("rx", "xdp_drop"),
        ("rx", "xdp_aborted"),
        ("rx", "xdp_errors"),
        ("rx", "xdp_tx"),
        ("rx", "xdp_redirect"),
        ("rx", "xdp_multi_buf"),
        ("rx", "xsk_fill_empty"),
        ("tx", "packets"),
        ("tx", "bytes"),
        ("tx", "dropped"),
        ("tx", "bad_completions"),
        ("tx", "sg_frames"),
        ("tx", "csum_offload"),
        ("tx", "xdp_frames"),
        ("tx", "xdp_xmit"),
        ("tx", "xdp_xmit_errors"),
        ("tx", "xsk_frames"),
    ];
    const DEVICE_STATS: &'static [&'static CStr] = &[
        c"groups_joined",
        c"group_join_failed",
        c"device_fatal_errors",
        c"tx_timeouts",
        c"restarts",
        c"restarts_failed",
        c"dev_rx_frames",
        c"dev_starved",
        c"dev_drop_unjoined",
        c"dev_drop_overflow",
        c"dev_drop_bad_frame",
        c"dev_drop_link_down",
        c"dev_tx_frames",
        c"dev_tx_bad_desc",
        c"dev_drop_filtered",
        c"dev_xoff_sent",
        c"dev_xoff_received",
    ];

    fn speed(dev: &Device<Self>) -> u32 {
        dev.data().link_mbps
    }

    fn stat_queues(dev: &Device<Self>) -> u32 {
        dev.data().settings().queues
    }

    fn stats(dev: &Device<Self>, out: &mut [u64]) {
        let data = dev.data();
        let mut out = out.iter_mut();
        for q in data.queues.iter().take(Self::stat_queues(dev) as usize) {
            let rx = q.rx_stats.read();
            let tx = bh::disabled(|| q.tx.lock().stats);
            let values = [
                rx.packets,
                rx.bytes,
                rx.dropped,
                rx.bad,
                rx.resync,
                rx.starved,
                rx.xon,
                rx.alloc_failed,
                rx.copybreak,
                rx.frags,
                rx.buf_alloc,
                rx.buf_recycled,
                rx.csum_unnecessary,
                rx.csum_none,
                rx.merged_skbs,
                rx.merged_frames,
                rx.xdp_pass,
                rx.xdp_drop,
                rx.xdp_aborted,
                rx.xdp_errors,
                rx.xdp_tx,
                rx.xdp_redirect,
                rx.xdp_multi_buf,
                rx.xsk_fill_empty,
                tx.packets,
                tx.bytes,
                tx.dropped,
                tx.bad,
                tx.sg,
                tx.csum,
                tx.xdp_tx,
                tx.xdp_xmit,
                tx.xdp_xmit_errors,
                tx.xsk_frames,
            ];
            for (v, o) in Iterator::zip(values.into_iter(), &mut out) {
                *o = v;
            }
        }
        let device = {
            let mut counters = data.device_counters.lock();
            counters.update(&data.bar);
            counters.total
        };
        let values = [
            data.groups_joined(),
            data.join_failed.load(Ordering::Relaxed),
            data.fatal_errors.load(Ordering::Relaxed),
            data.tx_timeouts.load(Ordering::Relaxed),
            data.restarts.load(Ordering::Relaxed),
            data.restarts_failed.load(Ordering::Relaxed),
        ];
        for (o, v) in Iterator::zip(out, Iterator::chain(values.into_iter(), device)) {
            *o = v;
        }
    }

    fn rings(dev: &Device<Self>) -> RingParams {
        let s = dev.data().settings();
        RingParams {
            rx_max: RxConfig::MAX_RING,
            rx: s.rx.ring,
            tx_max: 1 << TX_SHIFT_MAX,
            tx: 1 << s.tx_shift,
            rx_buf_len: 1 << s.rx.buf_shift,
        }
    }

    fn set_rings(dev: &Device<Self>, rtnl: &Rtnl<'_>, r: &RingParams) -> Result {
        let mut new = dev.data().settings();
        if !(RxConfig::MIN_RING..=RxConfig::MAX_RING).contains(&r.rx) {
            return Err(EINVAL);
        }
        new.rx.ring = r.rx;
        // The transmit ring is a power of two: round up.
        let tx_shift = r.tx.max(1).next_power_of_two().trailing_zeros();
        if !(abi::MIN_RING_SHIFT..=TX_SHIFT_MAX).contains(&tx_shift) {
            return Err(EINVAL);
        }
        new.tx_shift = tx_shift;
        // ethtool passes the current size when the user gave none: only a
        // different one is the user's choice.
        if r.rx_buf_len != 0 && r.rx_buf_len != 1 << new.rx.buf_shift {
            let shift = r.rx_buf_len.trailing_zeros();
            if !r.rx_buf_len.is_power_of_two()
                || !(abi::MIN_BUF_SHIFT..=MAX_POOL_BUF_SHIFT).contains(&shift)
                || !mtu_fits(dev.mtu(), shift)
            {
                return Err(EINVAL);
            }
            new.rx.buf_shift = shift;
            new.buf_len_chosen = true;
        }
        Self::apply(dev, rtnl, new)
    }

    fn coalesce(dev: &Device<Self>) -> Coalesce {
        let set = dev.data().settings();
        Coalesce {
            rx_usecs: set.coalesce_usecs,
            use_adaptive_rx: set.adaptive_rx,
        }
    }

    fn set_coalesce(dev: &Device<Self>, _rtnl: &Rtnl<'_>, c: &Coalesce) -> Result {
        let data = dev.data();
        if c.use_adaptive_rx && !data.queue_coalesce {
            return Err(EOPNOTSUPP);
        }
        if c.rx_usecs > MAX_COALESCE_USECS {
            return Err(EINVAL);
        }
        {
            let mut set = data.settings.lock();
            set.coalesce_usecs = c.rx_usecs;
            set.adaptive_rx = c.use_adaptive_rx;
        }
        for q in data.queues.iter() {
            q.coalesce.set(c.rx_usecs, c.use_adaptive_rx);
        }
        // The timer registers may change while the device runs: one write
        // sets every queue's. Adaptive queues' polls apply net_dim()'s.
        if !c.use_adaptive_rx {
            if let Some(bar) = data.bar.try_access() {
                bar.write32(c.rx_usecs, abi::reg::COALESCE_USECS);
                for q in data.queues.iter() {
                    q.coalesce.applied(c.rx_usecs);
                }
            }
        }
        Ok(())
    }

    fn queue_coalesce(dev: &Device<Self>, _rtnl: &Rtnl<'_>, queue: u32) -> Result<Coalesce> {
        let data = dev.data();
        let q = coalesce_queue(data, queue)?;
        Ok(Coalesce {
            // What the device holds: net_dim()'s choice when adaptive.
            rx_usecs: if q.coalesce.adaptive() {
                q.coalesce.current()
            } else {
                q.coalesce.usecs()
            },
            use_adaptive_rx: q.coalesce.adaptive(),
        })
    }

    fn set_queue_coalesce(
        dev: &Device<Self>,
        _rtnl: &Rtnl<'_>,
        queue: u32,
        c: &Coalesce,
    ) -> Result {
        let data = dev.data();
        let q = coalesce_queue(data, queue)?;
        if c.rx_usecs > MAX_COALESCE_USECS {
            return Err(EINVAL);
        }
        q.coalesce.set(c.rx_usecs, c.use_adaptive_rx);
        // Given to the device now (the queue may be idle), and again by
        // the queue's poll if it raced with this.
        let running = queue < data.queues_in_use.load(Ordering::Acquire);
        if let (true, false, Some(bar)) = (running, c.use_adaptive_rx, data.bar.try_access()) {
            bar.try_write32(
                c.rx_usecs,
                abi::reg::queue(queue as usize, abi::reg::Q_COALESCE_USECS),
            )?;
            q.coalesce.applied(c.rx_usecs);
        }
        Ok(())
    }

    fn channels(dev: &Device<Self>) -> Channels {
        let data = dev.data();
        Channels {
            max_combined: data.max_queues,
            combined: data.settings().queues,
        }
    }

    fn set_channels(dev: &Device<Self>, rtnl: &Rtnl<'_>, ch: &Channels) -> Result {
        if !(1..=dev.data().max_queues).contains(&ch.combined) {
            return Err(EINVAL);
        }
        let mut new = dev.data().settings();
        new.queues = ch.combined;
        Self::apply(dev, rtnl, new)?;
        // A table the user set stays (the core refused a count below its
        // entries); the default one spreads over the new count. A restart
        // above enabled the device with the table as it was, whose entries
        // the device takes modulo the count.
        if !dev.rxfh_configured(rtnl) {
            let data = dev.data();
            let mut steering = data.steering.lock();
            let bar = data.bar.try_access();
            steering.spread(bar.as_deref(), ch.combined)?;
        }
        Ok(())
    }

    fn pause(dev: &Device<Self>) -> Pause {
        dev.data().settings().pause
    }

    /// Xoffs are the fabric's pause frames.
    fn pause_stats(dev: &Device<Self>) -> PauseStats {
        let data = dev.data();
        let mut counters = data.device_counters.lock();
        counters.update(&data.bar);
        PauseStats {
            tx_frames: counters.total[XOFF_SENT],
            rx_frames: counters.total[XOFF_RECEIVED],
        }
    }

    /// The device takes pause settings while disabled: a running interface
    /// restarts with them.
    fn set_pause(dev: &Device<Self>, rtnl: &Rtnl<'_>, pause: Pause) -> Result {
        let mut new = dev.data().settings();
        if new.pause == pause {
            return Ok(());
        }
        new.pause = pause;
        Self::apply(dev, rtnl, new)
    }

    const PRIV_FLAGS: &'static [&'static CStr] = &[c"rx-udp-merge"];

    fn priv_flags(dev: &Device<Self>) -> u32 {
        u32::from(dev.data().udp_merge.load(Ordering::Relaxed))
    }

    fn set_priv_flags(dev: &Device<Self>, _rtnl: &Rtnl<'_>, flags: u32) -> Result {
        // Taken up by the next poll: no restart.
        dev.data()
            .udp_merge
            .store(flags & PRIV_UDP_MERGE != 0, Ordering::Relaxed);
        Ok(())
    }

    // Steering: the state is the driver's (`crate::steering`); a change
    // goes to the device's registers at once, which it takes enabled or
    // not, and to every register again when it is next enabled.

    fn rx_ring_count(dev: &Device<Self>) -> Result<u32> {
        Ok(dev.data().settings().queues)
    }

    fn flow_rule_table_size(_dev: &Device<Self>) -> Result<u32> {
        Ok(abi::MAX_FILTERS as u32)
    }

    fn flow_rule_locations(dev: &Device<Self>, f: &mut dyn FnMut(u32)) -> Result {
        dev.data().steering.lock().locations(f);
        Ok(())
    }

    fn flow_rule(dev: &Device<Self>, location: u32) -> Result<FlowRule> {
        dev.data().steering.lock().rule(location)
    }

    /// Only while `ntuple` is on: turning it off deletes every rule.
    fn insert_flow_rule(dev: &Device<Self>, _rtnl: &Rtnl<'_>, rule: &FlowRule) -> Result {
        if !dev.features().contains(Features::NTUPLE) {
            return Err(EOPNOTSUPP);
        }
        let data = dev.data();
        let queues = data.settings().queues;
        let mut steering = data.steering.lock();
        let bar = data.bar.try_access();
        steering.insert(bar.as_deref(), rule, queues)
    }

    fn delete_flow_rule(dev: &Device<Self>, _rtnl: &Rtnl<'_>, location: u32) -> Result {
        let data = dev.data();
        let mut steering = data.steering.lock();
        let bar = data.bar.try_access();
        steering.delete(bar.as_deref(), location)
    }

    const RXFH_KEY_SIZE: u32 = abi::RSS_KEY_BYTES as u32;
    const RXFH_INDIR_SIZE: u32 = abi::RSS_INDIR_SIZE as u32;

    fn rxfh(
        dev: &Device<Self>,
        key: Option<&mut [u8]>,
        indir: Option<&mut [u32]>,
    ) -> Result<RssHashFunc> {
        dev.data().steering.lock().read_rxfh(key, indir);
        Ok(RssHashFunc::Toeplitz)
    }

    fn set_rxfh(dev: &Device<Self>, _rtnl: &Rtnl<'_>, new: &RxfhUpdate<'_>) -> Result {
        if new.hfunc.is_some_and(|f| f != RssHashFunc::Toeplitz) {
            return Err(EOPNOTSUPP);
        }
        let data = dev.data();
        let queues = data.settings().queues;
        let mut steering = data.steering.lock();
        let bar = data.bar.try_access();
        steering.set_rxfh(bar.as_deref(), new.key, new.indir, queues)
    }

    fn rxfh_fields(dev: &Device<Self>, flow: HashFlow) -> Result<HashFields> {
        dev.data().steering.lock().hash_fields(flow)
    }

    fn set_rxfh_fields(
        dev: &Device<Self>,
        _rtnl: &Rtnl<'_>,
        flow: HashFlow,
        fields: HashFields,
    ) -> Result {
        let data = dev.data();
        let mut steering = data.steering.lock();
        let bar = data.bar.try_access();
        steering.set_hash_fields(bar.as_deref(), flow, fields)
    }
}

/// Bit of the private flag `rx-udp-merge`.
const PRIV_UDP_MERGE: u32 = 1 << 0;
