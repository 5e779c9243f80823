// SPDX-License-Identifier: GPL-2.0

//! Network devices.
//!
//! C header: [`include/linux/netdevice.h`](srctree/include/linux/netdevice.h)
//!
//! A driver describes its `net_device_ops` with [`Operations`], and owns a
//! registered device through a [`Registration`], which keeps the driver's
//! per-device data in the device's private area, initialised in place.
//!
//! [`Registration`]: super::registration::Registration

use core::marker::PhantomData;

use kernel::{
    error::{from_result, to_result},
    ffi::{c_int, c_uint, c_void},
    prelude::*,
    types::Opaque, //
};

use crate::ffi;
pub use crate::net::features::Features;
use crate::net::log_line::LogLine;
use crate::net::napi::PollCtx;
pub use crate::net::qstats::{QueueStatsRx, QueueStatsTx};
use crate::net::registration::Priv;
use crate::net::restart::Restart;
use crate::net::skb::SkBuff;
use crate::net::xdp::{BpfProg, ExtAck};
use crate::net::xdp_xmit::XmitFrames;
use crate::net::xsk::XskPool;

/// Proof that the caller holds RTNL, the lock that serialises the
/// configuration of network devices: the operations the core calls under
/// it receive one, and the operations that need it take one.
///
/// # Invariants
///
/// RTNL is held for `'a`. Only the trampolines of operations the core
/// calls under RTNL make one; it is neither `Send` nor `Sync`.
pub struct Rtnl<'a>(PhantomData<(&'a (), *mut ())>);

impl Rtnl<'_> {
    /// # Safety
    ///
    /// RTNL must be held for the life of the value.
    pub(crate) unsafe fn assume_held() -> Self {
        // INVARIANT: the caller's guarantee.
        Self(PhantomData)
    }
}

/// One call of `ndo_start_xmit` on transmit queue `queue()`: the operations
/// that need that queue's transmit lock or the transmit path's per-CPU
/// state (byte queue limits, `xmit_more`).
///
/// # Invariants
///
/// Exists only during an `ndo_start_xmit` call for queue `queue`, whose
/// transmit lock the core holds; neither `Send` nor `Sync`.
pub struct XmitCtx<'a> {
    queue: u32,
    _not_send: PhantomData<(&'a (), *mut ())>,
}

impl XmitCtx<'_> {
    /// The transmit queue the stack picked (`skb_get_queue_mapping`), at
    /// most the number of real queues.
    pub fn queue(&self) -> u32 {
        self.queue
    }

    /// Whether the stack has more frames coming right after this one, so
    /// the doorbell may wait.
    pub fn xmit_more(&self) -> bool {
        // SAFETY: reads the current CPU's transmit state, in
        // `ndo_start_xmit` (type invariant).
        unsafe { ffi::pagefill_xmit_more() }
    }

    /// Byte queue limits: `bytes` were queued to the device on this queue.
    pub fn tx_sent<T: Operations>(&self, dev: &Device<T>, bytes: u32) {
        // SAFETY: the device is valid; the helper ignores a queue it lacks;
        // the queue's transmit lock is held (type invariant), as BQL
        // requires.
        unsafe { ffi::pagefill_tx_sent(dev.as_raw(), self.queue, bytes) }
    }
}

/// `NETDEV_ALIGN`: the private area's alignment.
pub(super) const NETDEV_ALIGN: usize = 32;

/// What `ndo_start_xmit` did with a frame.
pub enum TxOutcome {
    /// The driver took the frame (sent, queued or dropped and counted).
    Ok,
    /// The driver's queue is full: the stack keeps the frame and retries.
    /// The driver must have stopped the queue.
    Busy(SkBuff),
}

/// 64-bit interface statistics, as `ndo_get_stats64` reports them.
///
/// # Invariants
///
/// `self.0` points to a valid, writable `rtnl_link_stats64` for the life of
/// the value.
pub struct Stats64<'a>(&'a mut ffi::rtnl_link_stats64);

impl Stats64<'_> {
    /// Adds receive counters.
    pub fn add_rx(&mut self, packets: u64, bytes: u64, dropped: u64) {
        self.0.rx_packets += packets;
        self.0.rx_bytes += bytes;
        self.0.rx_dropped += dropped;
    }

    /// Adds transmit counters.
    pub fn add_tx(&mut self, packets: u64, bytes: u64, dropped: u64) {
        self.0.tx_packets += packets;
        self.0.tx_bytes += bytes;
        self.0.tx_dropped += dropped;
    }

    /// Adds receive errors (frames the device delivered malformed).
    pub fn add_rx_errors(&mut self, errors: u64) {
        self.0.rx_errors += errors;
    }
}

/// The `net_device_ops` of a driver.
#[vtable]
pub trait Operations: Sized + 'static {
    /// Per-device data of the driver, kept in the device's private area.
    type Data: Send + Sync;

    /// The device's `ethtool_ops`, if any (see [`crate::net::ethtool`]).
    const ETHTOOL: Option<&'static kernel::bindings::ethtool_ops> = None;

    /// Brings the interface up (`ndo_open`).
    fn open(dev: &Device<Self>, rtnl: &Rtnl<'_>) -> Result;

    /// Brings the interface down (`ndo_stop`).
    fn stop(dev: &Device<Self>, rtnl: &Rtnl<'_>) -> Result;

    /// Transmits a frame (`ndo_start_xmit`).
    fn start_xmit(skb: SkBuff, dev: &Device<Self>, ctx: &XmitCtx<'_>) -> TxOutcome;

    /// Reports statistics (`ndo_get_stats64`).
    fn get_stats64(_dev: &Device<Self>, _stats: &mut Stats64<'_>) {
        build_error!(kernel::error::VTABLE_DEFAULT_ERROR)
    }

    /// Changes the MTU (`ndo_change_mtu`), already checked against the
    /// device's minimum and maximum.
    fn change_mtu(_dev: &Device<Self>, _rtnl: &Rtnl<'_>, _mtu: u32) -> Result {
        build_error!(kernel::error::VTABLE_DEFAULT_ERROR)
    }

    /// Counters of receive queue `idx` for netlink's `qstats-get`
    /// (`netdev_stat_ops`); only called for queues that exist.
    fn queue_stats_rx(_dev: &Device<Self>, _idx: u32) -> QueueStatsRx {
        build_error!(kernel::error::VTABLE_DEFAULT_ERROR)
    }

    /// Counters of transmit queue `idx`, as for [`Self::queue_stats_rx`].
    /// Implemented together with it.
    fn queue_stats_tx(_dev: &Device<Self>, _idx: u32) -> QueueStatsTx {
        build_error!(kernel::error::VTABLE_DEFAULT_ERROR)
    }

    /// Counters of the queues that are not in use (beyond the real number
    /// of queues), for which the core adds no per-queue counters: with
    /// them, the per-queue counters add up to the device's totals after a
    /// queue count shrinks. Implemented with [`Self::queue_stats_rx`].
    fn queue_stats_base(_dev: &Device<Self>) -> (QueueStatsRx, QueueStatsTx) {
        build_error!(kernel::error::VTABLE_DEFAULT_ERROR)
    }

    /// The multicast list or the receive flags changed
    /// (`ndo_set_rx_mode`). Atomic context: the address lock is held, with
    /// bottom halves off.
    fn set_rx_mode(_dev: &Device<Self>, _mc: &McList<'_, Self>) {
        build_error!(kernel::error::VTABLE_DEFAULT_ERROR)
    }

    /// Transmit queue `queue` has been stopped longer than the watchdog
    /// allows (`ndo_tx_timeout`). Atomic context (the watchdog timer):
    /// a driver that recovers asks for [`Self::restart`].
    fn tx_timeout(_dev: &Device<Self>, _queue: u32) {
        build_error!(kernel::error::VTABLE_DEFAULT_ERROR)
    }

    /// Offloads change to `features` (`ndo_set_features`), under RTNL;
    /// an error keeps them as they are.
    fn set_features(_dev: &Device<Self>, _rtnl: &Rtnl<'_>, _features: Features) -> Result {
        build_error!(kernel::error::VTABLE_DEFAULT_ERROR)
    }

    /// Restarts the device, as asked by [`Device::schedule_restart`]: in
    /// process context, under RTNL, only while the interface is up.
    fn restart(_dev: &Device<Self>, _rtnl: &Rtnl<'_>) -> Result {
        build_error!(kernel::error::VTABLE_DEFAULT_ERROR)
    }

    /// Whether XDP program `prog` (or none, to detach) may be attached now;
    /// the reason of a refusal goes to `extack` (`ndo_bpf`,
    /// `XDP_SETUP_PROG`). Under RTNL.
    fn xdp_check(
        _dev: &Device<Self>,
        _rtnl: &Rtnl<'_>,
        _prog: Option<&BpfProg>,
        _extack: &ExtAck,
    ) -> Result {
        build_error!(kernel::error::VTABLE_DEFAULT_ERROR)
    }

    /// Attaches `prog` (or detaches the program) after [`Self::xdp_check`]
    /// accepted it. Under RTNL. Implemented with it.
    fn xdp_install(_dev: &Device<Self>, _rtnl: &Rtnl<'_>, _prog: Option<BpfProg>) {
        build_error!(kernel::error::VTABLE_DEFAULT_ERROR)
    }

    /// Sends frames that XDP programs elsewhere redirected here
    /// (`ndo_xdp_xmit`), taking as many as it can; with `flush`, tells the
    /// device now. Bottom halves off. An error, where no frame was taken,
    /// makes the caller drop them all.
    fn xdp_xmit(_dev: &Device<Self>, _frames: &mut XmitFrames<'_>, _flush: bool) -> Result {
        build_error!(kernel::error::VTABLE_DEFAULT_ERROR)
    }

    /// Binds `pool` to queue `queue` for AF_XDP in zero-copy mode
    /// (`ndo_bpf`, `XDP_SETUP_XSK_POOL`). Under RTNL. The driver keeps the
    /// pool until [`Self::xsk_unbind`] of the queue, and gives back every
    /// buffer it took from it before that returns.
    fn xsk_bind(_dev: &Device<Self>, _rtnl: &Rtnl<'_>, _queue: u32, _pool: XskPool) -> Result {
        build_error!(kernel::error::VTABLE_DEFAULT_ERROR)
    }

    /// Unbinds queue `queue`'s pool: the driver drops it, and every buffer
    /// of it, before returning. Under RTNL. Implemented with
    /// [`Self::xsk_bind`].
    fn xsk_unbind(_dev: &Device<Self>, _rtnl: &Rtnl<'_>, _queue: u32) -> Result {
        build_error!(kernel::error::VTABLE_DEFAULT_ERROR)
    }

    /// The user-space program of queue `queue`'s pool gave buffers, or
    /// frames to send, and wants the queue polled (`ndo_xsk_wakeup`).
    /// Process or softirq context.
    fn xsk_wakeup(_dev: &Device<Self>, _queue: u32) -> Result {
        build_error!(kernel::error::VTABLE_DEFAULT_ERROR)
    }
}

/// A device's multicast address list, readable while the core holds the
/// address lock (in `ndo_set_rx_mode`).
///
/// # Invariants
///
/// The device's address lock is held for `'a`.
pub struct McList<'a, T: Operations>(&'a Device<T>);

impl<T: Operations> McList<'_, T> {
    /// Calls `f` with each multicast address.
    pub fn for_each<F: FnMut(&[u8; 6])>(&self, mut f: F) {
        /// # Safety
        ///
        /// `ctx` must be the `F` passed below, `addr` an Ethernet address.
        unsafe extern "C" fn call<F: FnMut(&[u8; 6])>(ctx: *mut c_void, addr: *const u8) {
            // SAFETY: as documented; the address is `ETH_ALEN` bytes long
            // and not changed while the address lock is held.
            let (f, addr) = unsafe { (&mut *ctx.cast::<F>(), &*addr.cast::<[u8; 6]>()) };
            f(addr)
        }
        // SAFETY: the address lock is held (type invariant), so the list is
        // stable; `f` outlives the call.
        unsafe {
            ffi::pagefill_netdev_walk_mc_addrs(
                self.0.as_raw(),
                Some(call::<F>),
                core::ptr::from_mut(&mut f).cast(),
            )
        }
    }
}

/// A network device, as the driver's operations see it.
///
/// # Invariants
///
/// The wrapped `net_device` was allocated by
/// [`Registration::new`](super::registration::Registration::new) for
/// operations `T`, so its private area holds an initialised `Priv<T>`, and it
/// stays allocated for as long as a `&Device<T>` exists.
#[repr(transparent)]
pub struct Device<T: Operations>(Opaque<kernel::bindings::net_device>, PhantomData<T>);

impl<T: Operations> Device<T> {
    /// # Safety
    ///
    /// `ptr` must be a `net_device` allocated by
    /// [`Registration::new`](super::registration::Registration::new) for
    /// `T`, valid for `'a`.
    pub(crate) unsafe fn from_raw_ptr<'a>(ptr: *mut kernel::bindings::net_device) -> &'a Self {
        // SAFETY: as for `from_raw`.
        unsafe { Self::from_raw(ptr) }
    }

    /// # Safety
    ///
    /// As for [`Self::from_raw_ptr`].
    pub(super) unsafe fn from_raw<'a>(ptr: *mut kernel::bindings::net_device) -> &'a Self {
        // SAFETY: `Device<T>` is a transparent wrapper of `net_device`; the
        // caller guarantees validity for `'a` and the type invariant.
        unsafe { &*ptr.cast() }
    }

    pub(crate) fn as_raw(&self) -> *mut kernel::bindings::net_device {
        self.0.get()
    }

    /// The device's private area.
    fn priv_area(&self) -> &Priv<T> {
        // SAFETY: by the type invariant the private area holds an
        // initialised `Priv<T>`, alive as long as the device.
        unsafe { &*ffi::pagefill_netdev_priv(self.as_raw()).cast::<Priv<T>>() }
    }

    /// The driver's data for this device.
    pub fn data(&self) -> &T::Data {
        &self.priv_area().data
    }

    /// Whether the interface is up (`netif_running`).
    pub fn is_running(&self) -> bool {
        // SAFETY: the device is valid (type invariant).
        unsafe { ffi::pagefill_netif_running(self.as_raw()) }
    }

    /// Tells the stack the link is up.
    pub fn carrier_on(&self) {
        // SAFETY: the device is valid (type invariant).
        unsafe { ffi::netif_carrier_on(self.as_raw()) }
    }

    /// Tells the stack the link is down.
    pub fn carrier_off(&self) {
        // SAFETY: the device is valid (type invariant).
        unsafe { ffi::netif_carrier_off(self.as_raw()) }
    }

    /// Allows the stack to transmit on every queue, and has it send what
    /// its queueing disciplines hold (`netif_tx_wake_all_queues`).
    pub fn tx_wake_all_queues(&self) {
        // SAFETY: the device is valid (type invariant).
        unsafe { ffi::pagefill_netif_tx_wake_all_queues(self.as_raw()) }
    }

    /// Stops every transmit queue and waits for running transmits to end:
    /// the stack's, and the `ndo_xdp_xmit` calls (frames redirected to the
    /// device) that started before. Process context (it sleeps: RTNL is
    /// held).
    pub fn tx_disable(&self, _rtnl: &Rtnl<'_>) {
        // SAFETY: the device is valid (type invariant).
        unsafe { ffi::pagefill_netif_tx_disable(self.as_raw()) }
    }

    /// Stops transmit queue `q`: its ring is full.
    pub fn tx_stop(&self, q: u32) {
        // SAFETY: the device is valid (type invariant); the helper ignores a
        // queue the device does not have.
        unsafe { ffi::pagefill_tx_stop(self.as_raw(), q) }
    }

    /// Wakes transmit queue `q`: its ring has room again.
    pub fn tx_wake(&self, q: u32) {
        // SAFETY: the device is valid; the helper ignores a queue it lacks.
        unsafe { ffi::pagefill_tx_wake(self.as_raw(), q) }
    }

    /// Whether transmit queue `q` is stopped.
    pub fn tx_stopped(&self, q: u32) -> bool {
        // SAFETY: the device is valid; the helper ignores a queue it lacks.
        unsafe { ffi::pagefill_tx_stopped(self.as_raw(), q) }
    }

    /// Byte queue limits: `pkts` frames of `bytes` completed on queue `q`,
    /// from the poll of the NAPI instance that serves it (completions of a
    /// queue must not race each other).
    pub fn tx_completed(&self, _ctx: &PollCtx<'_>, q: u32, pkts: u32, bytes: u32) {
        // SAFETY: the device is valid; the helper ignores a queue it lacks;
        // in a NAPI poll (the context's invariant), which runs once at a time.
        unsafe { ffi::pagefill_tx_completed(self.as_raw(), q, pkts, bytes) }
    }

    /// Byte queue limits: forget what was in flight on queue `q` (its ring
    /// was reset), under RTNL with the queue disabled.
    pub fn tx_reset(&self, _rtnl: &Rtnl<'_>, q: u32) {
        // SAFETY: the device is valid; the helper ignores a queue it lacks;
        // RTNL is held (the token's invariant).
        unsafe { ffi::pagefill_tx_reset(self.as_raw(), q) }
    }

    /// Sets how many receive and transmit queues the stack uses (at most
    /// as many as the device was allocated with).
    pub fn set_real_num_queues(&self, _rtnl: &Rtnl<'_>, n: u32) -> Result {
        // SAFETY: the device is valid; RTNL is held (the token's
        // invariant), as the core requires for a registered device.
        to_result(unsafe { ffi::netif_set_real_num_queues(self.as_raw(), n, n) })
    }

    /// Bytes of `frame`'s protocol headers (Ethernet, IP, transport) as the
    /// flow dissector finds them: what a receive path puts in an skb's
    /// linear part, leaving the payload in fragments.
    pub fn eth_headlen(&self, frame: &[u8]) -> usize {
        let len = frame.len().min(u32::MAX as usize) as u32;
        // SAFETY: the device is valid (type invariant); the dissector reads
        // at most `len` bytes of `frame`.
        let hlen = unsafe { ffi::eth_get_headlen(self.as_raw(), frame.as_ptr().cast(), len) };
        (hlen as usize).min(frame.len())
    }

    /// The offloads turned on now (of those the device offers).
    pub fn features(&self) -> Features {
        // SAFETY: the device is valid (type invariant); the helper reads the
        // features once, as they may change under RTNL meanwhile.
        Features(unsafe { ffi::pagefill_netdev_features(self.as_raw()) })
    }

    /// Whether a generic XDP program is attached (one that runs on skbs, in
    /// the core), which must see every frame as it came.
    pub fn xdp_attached(&self) -> bool {
        // SAFETY: the device is valid (type invariant); the helper only
        // tests the program pointer.
        unsafe { ffi::pagefill_netdev_has_xdp(self.as_raw()) }
    }

    /// The current MTU.
    pub fn mtu(&self) -> u32 {
        // SAFETY: the device is valid (type invariant).
        unsafe { ffi::pagefill_netdev_mtu(self.as_raw()) }
    }

    /// Logs an error with the device's name (`netdev_err`).
    pub fn err(&self, args: core::fmt::Arguments<'_>) {
        self.log(ffi::pagefill_log_level_PAGEFILL_LOG_ERR, &args);
    }

    /// Logs a warning with the device's name (`netdev_warn`), at most as
    /// often as `net_ratelimit()` allows: for NAPI and interrupt context,
    /// where a device can cause it at any rate.
    pub fn warn_ratelimited(&self, args: core::fmt::Arguments<'_>) {
        self.log(ffi::pagefill_log_level_PAGEFILL_LOG_WARN_RATELIMITED, &args);
    }

    fn log(&self, level: ffi::pagefill_log_level, args: &core::fmt::Arguments<'_>) {
        let mut line = LogLine::new();
        // A message longer than the line is cut, not an error.
        let _ = core::fmt::write(&mut line, *args);
        // SAFETY: the device is valid (type invariant); the line is a
        // NUL-terminated string that outlives the call.
        unsafe { ffi::pagefill_netdev_log(self.as_raw(), level, line.as_ptr()) }
    }

    /// Lets the parent PCI device master the bus, or stops it
    /// (`pci_set_master`, `pci_clear_master`): off for a device that did not
    /// come back from a reset and must not reach memory the host takes
    /// back, on again once a reset works. Does nothing for a parent that is
    /// not a PCI device.
    pub fn set_bus_master(&self, on: bool) {
        // SAFETY: the device is valid (type invariant); its parent is bound
        // while the device is registered (`Registration::new`).
        unsafe { ffi::pagefill_set_bus_master(self.as_raw(), on) }
    }

    /// Asks for [`Operations::restart`] in process context, from any
    /// context; false if a restart is already pending or `T` has none.
    pub fn schedule_restart(&self) -> bool {
        self.priv_area()
            .restart
            .as_ref()
            .is_some_and(Restart::schedule)
    }
}

/// The `net_device_ops` table of `T`.
pub(super) struct OpsTable<T: Operations>(PhantomData<T>);

impl<T: Operations> OpsTable<T> {
    /// # Safety
    ///
    /// `dev` must be a device registered by
    /// [`Registration::new`](super::registration::Registration::new) for `T`.
    unsafe extern "C" fn open(dev: *mut kernel::bindings::net_device) -> c_int {
        // SAFETY: the stack calls `ndo_open` with a registered device,
        // under RTNL.
        let (dev, rtnl) = unsafe { (Device::from_raw(dev), Rtnl::assume_held()) };
        from_result(|| T::open(dev, &rtnl).map(|()| 0))
    }

    /// # Safety
    ///
    /// As for [`Self::open`].
    unsafe extern "C" fn stop(dev: *mut kernel::bindings::net_device) -> c_int {
        // SAFETY: the stack calls `ndo_stop` with a registered device,
        // under RTNL.
        let (dev, rtnl) = unsafe { (Device::from_raw(dev), Rtnl::assume_held()) };
        from_result(|| T::stop(dev, &rtnl).map(|()| 0))
    }

    /// # Safety
    ///
    /// `skb` must be a valid socket buffer the stack hands over, `dev` as
    /// for [`Self::open`].
    unsafe extern "C" fn start_xmit(
        skb: *mut kernel::bindings::sk_buff,
        dev: *mut kernel::bindings::net_device,
    ) -> ffi::netdev_tx_t {
        // SAFETY: `ndo_start_xmit` hands the driver ownership of `skb`
        // unless it returns NETDEV_TX_BUSY, in which case the driver gives
        // it back below.
        let skb = unsafe { SkBuff::from_raw(skb) };
        let queue = u32::from(skb.queue_mapping());
        // SAFETY: the stack calls `ndo_start_xmit` with a registered device.
        let dev = unsafe { Device::from_raw(dev) };
        // INVARIANT: in `ndo_start_xmit` for the skb's queue, whose transmit
        // lock the core holds.
        let ctx = XmitCtx {
            queue,
            _not_send: PhantomData,
        };
        match T::start_xmit(skb, dev, &ctx) {
            TxOutcome::Ok => ffi::netdev_tx_NETDEV_TX_OK,
            TxOutcome::Busy(skb) => {
                // The stack keeps ownership of a frame it gets back busy.
                let _ = skb.into_raw();
                ffi::netdev_tx_NETDEV_TX_BUSY
            }
        }
    }

    /// # Safety
    ///
    /// `dev` as for [`Self::open`]; `stats` must be valid for reads and
    /// writes, and need not be aligned.
    unsafe extern "C" fn get_stats64(
        dev: *mut kernel::bindings::net_device,
        stats: *mut ffi::rtnl_link_stats64,
    ) {
        // SAFETY: the stack calls `ndo_get_stats64` with a registered device.
        let dev = unsafe { Device::<T>::from_raw(dev) };
        // `stats` may be only 4-byte aligned: `rtnl_fill_stats()` passes the
        // data of a netlink attribute, which `nla_reserve_64bit()` pads to 8
        // bytes only where unaligned access is slow (not on x86). No
        // reference to it, then: the driver fills an aligned copy.
        // SAFETY: the stack passes a structure valid for reads (zeroed by
        // `dev_get_stats()`); `read_unaligned` needs no alignment.
        let mut aligned = unsafe { stats.read_unaligned() };
        // INVARIANT: `aligned` is valid and writable while it is borrowed.
        T::get_stats64(dev, &mut Stats64(&mut aligned));
        // SAFETY: the structure is valid for writes for the duration of the
        // call; `write_unaligned` needs no alignment.
        unsafe { stats.write_unaligned(aligned) };
    }

    /// # Safety
    ///
    /// `dev` as for [`Self::open`].
    unsafe extern "C" fn change_mtu(dev: *mut kernel::bindings::net_device, mtu: c_int) -> c_int {
        // SAFETY: the stack calls `ndo_change_mtu` with a registered device,
        // under RTNL, after checking `mtu` against min_mtu and max_mtu.
        let (dev, rtnl) = unsafe { (Device::<T>::from_raw(dev), Rtnl::assume_held()) };
        from_result(|| {
            let mtu = u32::try_from(mtu).map_err(|_| EINVAL)?;
            T::change_mtu(dev, &rtnl, mtu)?;
            // SAFETY: the device is valid and RTNL is held by the caller.
            unsafe { ffi::pagefill_netdev_set_mtu(dev.as_raw(), mtu) };
            Ok(0)
        })
    }

    /// # Safety
    ///
    /// `dev` as for [`Self::open`], with its address lock held.
    unsafe extern "C" fn set_rx_mode(dev: *mut kernel::bindings::net_device) {
        // SAFETY: the core calls `ndo_set_rx_mode` with a registered device
        // and its address lock held.
        let dev = unsafe { Device::<T>::from_raw(dev) };
        // INVARIANT: the address lock is held for this call.
        T::set_rx_mode(dev, &McList(dev));
    }

    /// # Safety
    ///
    /// `dev` as for [`Self::open`].
    unsafe extern "C" fn xsk_wakeup(
        dev: *mut kernel::bindings::net_device,
        queue: u32,
        _flags: u32,
    ) -> c_int {
        // SAFETY: the core calls `ndo_xsk_wakeup` with a registered device.
        let dev = unsafe { Device::<T>::from_raw(dev) };
        match T::xsk_wakeup(dev, queue) {
            Ok(()) => 0,
            Err(e) => e.to_errno(),
        }
    }

    /// # Safety
    ///
    /// `dev` as for [`Self::open`].
    unsafe extern "C" fn tx_timeout(dev: *mut kernel::bindings::net_device, queue: c_uint) {
        // SAFETY: the watchdog calls `ndo_tx_timeout` with a registered
        // device.
        let dev = unsafe { Device::<T>::from_raw(dev) };
        T::tx_timeout(dev, queue);
    }

    pub(super) const TABLE: ffi::net_device_ops = ffi::net_device_ops {
        ndo_tx_timeout: if T::HAS_TX_TIMEOUT {
            Some(Self::tx_timeout)
        } else {
            None
        },
        ndo_set_rx_mode: if T::HAS_SET_RX_MODE {
            Some(Self::set_rx_mode)
        } else {
            None
        },
        ndo_open: Some(Self::open),
        ndo_stop: Some(Self::stop),
        ndo_start_xmit: Some(Self::start_xmit),
        ndo_get_stats64: if T::HAS_GET_STATS64 {
            Some(Self::get_stats64)
        } else {
            None
        },
        ndo_bpf: if T::HAS_XDP_CHECK {
            Some(crate::net::xdp::ndo_bpf::<T>)
        } else {
            None
        },
        ndo_xdp_xmit: if T::HAS_XDP_XMIT {
            Some(crate::net::xdp_xmit::ndo_xdp_xmit::<T>)
        } else {
            None
        },
        ndo_xsk_wakeup: if T::HAS_XSK_WAKEUP {
            Some(Self::xsk_wakeup)
        } else {
            None
        },
        ndo_set_features: if T::HAS_SET_FEATURES {
            Some(crate::net::features::ndo_set_features::<T>)
        } else {
            None
        },
        ndo_change_mtu: if T::HAS_CHANGE_MTU {
            Some(Self::change_mtu)
        } else {
            None
        },
        // SAFETY: every other member is an optional function pointer, for
        // which all zeroes is `None`.
        ..unsafe { core::mem::zeroed() }
    };
}

/// How many receive queues a multi-queue device should use by default:
/// one per physical core, at most the core's cap
/// (`netif_get_num_default_rss_queues()`).
pub fn default_rss_queues() -> u32 {
    // SAFETY: no preconditions; it only reads the online CPU mask.
    let n = unsafe { ffi::netif_get_num_default_rss_queues() };
    u32::try_from(n).unwrap_or(1).max(1)
}
