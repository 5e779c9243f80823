// SPDX-License-Identifier: GPL-2.0

//! Per-queue statistics, as the netdev netlink family reports them
//! (`netdev_stat_ops`; `ynl --family netdev --dump qstats-get`).
//!
//! C header: [`include/net/netdev_queues.h`](srctree/include/net/netdev_queues.h)

use core::marker::PhantomData;

use kernel::ffi::c_int;

use crate::ffi;
use crate::net::netdev::{Device, Operations};

/// Counters of one receive queue since the device was registered.
#[derive(Clone, Copy, Default, Debug)]
pub struct QueueStatsRx {
    pub packets: u64,
    pub bytes: u64,
    /// Times a buffer could not be allocated.
    pub alloc_fail: u64,
    /// Frames handed up with their checksum checked by the device
    /// (`CHECKSUM_UNNECESSARY`).
    pub csum_unnecessary: u64,
    /// Frames handed up unchecked (`CHECKSUM_NONE`): the stack checks.
    pub csum_none: u64,
}

/// Counters of one transmit queue since the device was registered.
#[derive(Clone, Copy, Default, Debug)]
pub struct QueueStatsTx {
    pub packets: u64,
    pub bytes: u64,
}

/// The `netdev_stat_ops` of `T`.
pub(super) struct StatOpsTable<T: Operations>(PhantomData<T>);

impl<T: Operations> StatOpsTable<T> {
    /// # Safety
    ///
    /// `dev` registered for `T`; `stats` valid and writable.
    unsafe extern "C" fn rx(
        dev: *mut kernel::bindings::net_device,
        idx: c_int,
        stats: *mut ffi::netdev_queue_stats_rx,
    ) {
        // SAFETY: the core passes a registered device and a valid structure.
        let (dev, stats) = unsafe { (Device::<T>::from_raw(dev), &mut *stats) };
        let q = T::queue_stats_rx(dev, idx as u32);
        stats.packets = q.packets;
        stats.bytes = q.bytes;
        stats.alloc_fail = q.alloc_fail;
        stats.csum_unnecessary = q.csum_unnecessary;
        stats.csum_none = q.csum_none;
    }

    /// # Safety
    ///
    /// As for [`Self::rx`].
    unsafe extern "C" fn tx(
        dev: *mut kernel::bindings::net_device,
        idx: c_int,
        stats: *mut ffi::netdev_queue_stats_tx,
    ) {
        // SAFETY: the core passes a registered device and a valid structure.
        let (dev, stats) = unsafe { (Device::<T>::from_raw(dev), &mut *stats) };
        let q = T::queue_stats_tx(dev, idx as u32);
        stats.packets = q.packets;
        stats.bytes = q.bytes;
    }

    /// The counters of the queues not in use.
    ///
    /// # Safety
    ///
    /// `dev` as for [`Self::rx`]; `rx` and `tx` valid and writable.
    unsafe extern "C" fn base(
        dev: *mut kernel::bindings::net_device,
        rx: *mut ffi::netdev_queue_stats_rx,
        tx: *mut ffi::netdev_queue_stats_tx,
    ) {
        // SAFETY: the core passes a registered device and valid structures.
        let (dev, rx, tx) = unsafe { (Device::<T>::from_raw(dev), &mut *rx, &mut *tx) };
        let (r, t) = T::queue_stats_base(dev);
        rx.packets = r.packets;
        rx.bytes = r.bytes;
        rx.alloc_fail = r.alloc_fail;
        rx.csum_unnecessary = r.csum_unnecessary;
        rx.csum_none = r.csum_none;
        tx.packets = t.packets;
        tx.bytes = t.bytes;
    }

    pub(super) const TABLE: ffi::netdev_stat_ops = ffi::netdev_stat_ops {
        get_queue_stats_rx: Some(Self::rx),
        get_queue_stats_tx: Some(Self::tx),
        get_base_stats: Some(Self::base),
    };
}
