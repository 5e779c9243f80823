// SPDX-License-Identifier: GPL-2.0

//! NAPI: interrupt-driven polling of a device's completions.
//!
//! C header: [`include/linux/netdevice.h`](srctree/include/linux/netdevice.h)
//!
//! A [`Napi`] lives pinned in a network device's private data. Starting it
//! adds it to the device, enables it and requests the interrupt that
//! schedules it; stopping it undoes all three in reverse order.

use core::{
    marker::PhantomPinned,
    sync::atomic::{AtomicU32, Ordering},
};

use kernel::{
    ffi::{c_int, c_void},
    prelude::*,
    str::CStr,
    types::Opaque, //
};

use crate::ffi;
use crate::net::netdev::{Device, Operations};
use crate::net::skb::SkBuff;

/// The poll callback of a device's NAPI instance.
pub trait Poll: Operations {
    /// Processes up to `budget` units of work; returns how many were done.
    /// A return below `budget` means the work is done and the driver has
    /// called [`Napi::complete_done`].
    fn poll(dev: &Device<Self>, napi: &Napi, budget: i32) -> i32;
}

/// Room for a C `struct napi_struct`. `kernel::bindings` declares the type
/// opaque (zero-sized), so its size and alignment come from the C compiler,
/// through the driver's bindgen run.
#[repr(C, align(8))]
struct NapiStorage([u8; ffi::pagefill_sizes_PAGEFILL_NAPI_STRUCT_SIZE as usize]);

const _: () = assert!(ffi::pagefill_sizes_PAGEFILL_NAPI_STRUCT_ALIGN as usize <= 8);

/// A NAPI instance with its interrupt.
///
/// # Invariants
///
/// `inner` is only ever in pinned memory (the type is `!Unpin` and made only
/// by a pin initialiser). While `irq` is non-zero, `inner` is added to a
/// device and enabled, and interrupt `irq` is requested with `inner` as its
/// cookie.
#[repr(C)]
#[pin_data(PinnedDrop)]
pub struct Napi {
    #[pin]
    inner: Opaque<NapiStorage>,
    irq: AtomicU32,
    /// The queue pair it serves while started.
    queue: AtomicU32,
    #[pin]
    _pin: PhantomPinned,
}

// SAFETY: the NAPI core serialises polls; the methods here are callable
// from any context the C API allows.
unsafe impl Send for Napi {}
// SAFETY: as above.
unsafe impl Sync for Napi {}

/// Schedules the NAPI instance an interrupt belongs to.
///
/// # Safety
///
/// `cookie` must be the `napi_struct` of a started [`Napi`].
unsafe extern "C" fn napi_irq(_irq: c_int, cookie: *mut c_void) -> kernel::bindings::irqreturn_t {
    // SAFETY: the interrupt is requested only while the NAPI is started,
    // with its `napi_struct` as the cookie.
    unsafe { ffi::pagefill_napi_schedule(cookie.cast()) };
    kernel::bindings::irqreturn::IRQ_HANDLED
}

/// The poll trampoline.
///
/// # Safety
///
/// `napi` must be the `napi_struct` of a [`Napi`] started on a device with
/// operations `T`.
unsafe extern "C" fn poll<T: Poll>(
    napi: *mut kernel::bindings::napi_struct,
    budget: c_int,
) -> c_int {
    // SAFETY: `Napi` is `repr(C)` with `inner` first, so the pointer to
    // `inner` is a pointer to the `Napi`, which is pinned and started.
    let this = unsafe { &*napi.cast::<Napi>() };
    // SAFETY: a started NAPI is added to a device registered for `T`, which
    // outlives it.
    let dev = unsafe { Device::<T>::from_raw_ptr(ffi::pagefill_napi_dev(napi)) };
    T::poll(dev, this, budget)
}

impl Napi {
    /// A stopped NAPI instance.
    pub fn new() -> impl PinInit<Self> {
        pin_init!(Self {
            inner <- Opaque::zeroed(),
            irq: AtomicU32::new(0),
            queue: AtomicU32::new(0),
            _pin: PhantomPinned,
        })
    }

    fn as_raw(&self) -> *mut kernel::bindings::napi_struct {
        self.inner.get().cast()
    }

    /// The `napi_struct`, for a page pool that recycles into this instance.
    pub(crate) fn as_raw_for_pool(&self) -> *mut kernel::bindings::napi_struct {
        self.as_raw()
    }

    /// Adds the instance to `dev` as its NAPI `queue` (whose ID and
    /// settings persist while the device lives), enables it, requests
    /// interrupt `irq` (named `name`) to schedule it, and records it (with
    /// its interrupt) as serving receive and transmit queue `queue`, which
    /// netlink reports (`napi-get`, `queue-get`). Called under RTNL
    /// (`ndo_open`).
    pub fn start<T: Poll>(
        &self,
        dev: &Device<T>,
        irq: u32,
        name: &'static CStr,
        queue: u32,
    ) -> Result {
        if irq == 0 || self.irq.load(Ordering::Acquire) != 0 {
            return Err(EINVAL);
        }
        // SAFETY: `dev` is a valid, registered device.
        if queue >= unsafe { ffi::pagefill_netdev_num_napi_configs(dev.as_raw()) } {
            return Err(EINVAL);
        }
        let index = c_int::try_from(queue)?;
        // SAFETY: `self` is pinned (type invariant) and not added to any
        // device; `dev` is registered and outlives its NAPI instances, which
        // the driver stops in `ndo_stop` (and `Drop` stops at the latest);
        // `index` is below the device's NAPI configs (checked above).
        unsafe {
            ffi::pagefill_netif_napi_add(dev.as_raw(), self.as_raw(), Some(poll::<T>), index);
            ffi::pagefill_netif_napi_set_irq(self.as_raw(), irq as c_int);
            ffi::napi_enable(self.as_raw());
        }
        // SAFETY: the handler only schedules the NAPI, which stays started
        // until `free_irq` returns in `stop`.
        let ret = unsafe {
            kernel::bindings::request_threaded_irq(
                irq,
                Some(napi_irq),
                None,
                0,
                name.as_char_ptr(),
                self.as_raw().cast(),
            )
        };
        if ret != 0 {
            // SAFETY: added and enabled above, never scheduled by us.
            unsafe {
                ffi::napi_disable(self.as_raw());
                ffi::pagefill_netif_napi_del(self.as_raw());
            }
            return Err(Error::from_errno(ret));
        }
        // SAFETY: added to `dev` above; the caller holds RTNL; `queue` is
        // one of the device's queues (the core ignores the call otherwise).
        unsafe {
            ffi::netif_queue_set_napi(
                dev.as_raw(),
                queue,
                ffi::netdev_queue_type_NETDEV_QUEUE_TYPE_RX,
                self.as_raw(),
            );
            ffi::netif_queue_set_napi(
                dev.as_raw(),
                queue,
                ffi::netdev_queue_type_NETDEV_QUEUE_TYPE_TX,
                self.as_raw(),
            );
        }
        // INVARIANT: added, enabled and with its interrupt.
        self.irq.store(irq, Ordering::Release);
        self.queue.store(queue, Ordering::Release);
        Ok(())
    }

    /// Frees the interrupt, disables the instance (waiting for a running
    /// poll) and removes it from its device. Does nothing if not started.
    pub fn stop(&self) {
        let irq = self.irq.swap(0, Ordering::AcqRel);
        if irq == 0 {
            return;
        }
        let queue = self.queue.load(Ordering::Acquire);
        // SAFETY: started (type invariant): the interrupt is ours with this
        // cookie; after `free_irq` nothing schedules the NAPI any more. The
        // queues forget the instance first (RTNL is held: `ndo_stop`, or
        // the device is being unregistered).
        unsafe {
            let dev = ffi::pagefill_napi_dev(self.as_raw());
            for ty in [
                ffi::netdev_queue_type_NETDEV_QUEUE_TYPE_RX,
                ffi::netdev_queue_type_NETDEV_QUEUE_TYPE_TX,
            ] {
                ffi::netif_queue_set_napi(dev, queue, ty, core::ptr::null_mut());
            }
            kernel::bindings::free_irq(irq, self.as_raw().cast());
            ffi::napi_disable(self.as_raw());
            ffi::pagefill_netif_napi_del(self.as_raw());
        }
    }

    /// Ends a poll that did `work` (less than its budget); returns whether
    /// the driver should re-arm its interrupt.
    pub fn complete_done(&self, work: i32) -> bool {
        // SAFETY: called from this instance's poll, as the C API requires.
        unsafe { ffi::napi_complete_done(self.as_raw(), work) }
    }

    /// Allocates an skb for a received frame of `len` bytes.
    pub fn alloc_skb(&self, len: u32) -> Option<SkBuff> {
        // SAFETY: called from this instance's poll (softirq context).
        let skb = unsafe { kernel::bindings::napi_alloc_skb(self.as_raw(), len) };
        if skb.is_null() {
            return None;
        }
        // SAFETY: a fresh skb that we own.
        Some(unsafe { SkBuff::from_raw(skb) })
    }

    /// Hands a received frame to the stack through GRO.
    pub fn gro_receive(&self, skb: SkBuff) {
        // SAFETY: called from this instance's poll; the stack takes the skb.
        unsafe { ffi::pagefill_napi_gro_receive(self.as_raw(), skb.into_raw()) };
    }
}

#[pinned_drop]
impl PinnedDrop for Napi {
    fn drop(self: Pin<&mut Self>) {
        self.stop();
    }
}
