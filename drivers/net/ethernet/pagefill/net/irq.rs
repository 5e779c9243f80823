// SPDX-License-Identifier: GPL-2.0

//! A device interrupt whose handler runs with the network device.
//!
//! C header: [`include/linux/interrupt.h`](srctree/include/linux/interrupt.h)
//!
//! For interrupts that do not go through NAPI (link changes, device errors):
//! a [`DeviceIrq`] lives in the device's private data, is requested when the
//! interface opens and freed when it stops.

use core::sync::atomic::{AtomicPtr, AtomicU32, Ordering};

use kernel::{
    ffi::{c_int, c_void},
    prelude::*,
    str::CStr, //
};

use crate::net::netdev::{Device, Operations};

/// The handler of a device interrupt.
pub trait Handler: Operations {
    /// Runs in hard interrupt context.
    fn handle(dev: &Device<Self>);
}

/// A requested interrupt with its device as the cookie.
///
/// # Invariants
///
/// While `irq` is non-zero, interrupt `irq` is requested with the
/// registered network device in whose private data `self` lives as its
/// cookie, and `handler::<T>` for that device's operations `T`.
pub struct DeviceIrq {
    irq: AtomicU32,
    cookie: AtomicPtr<c_void>,
}

/// # Safety
///
/// `cookie` must be a registered network device with operations `T`.
unsafe extern "C" fn handler<T: Handler>(
    _irq: c_int,
    cookie: *mut c_void,
) -> kernel::bindings::irqreturn_t {
    // SAFETY: the interrupt is requested only with such a device as the
    // cookie, and freed before the device goes away.
    let dev = unsafe { Device::<T>::from_raw_ptr(cookie.cast()) };
    T::handle(dev);
    kernel::bindings::irqreturn::IRQ_HANDLED
}

impl DeviceIrq {
    /// An interrupt not yet requested.
    pub const fn new() -> Self {
        Self {
            irq: AtomicU32::new(0),
            cookie: AtomicPtr::new(core::ptr::null_mut()),
        }
    }

    /// Requests interrupt `irq` for `dev`, which must be the device whose
    /// private data holds `self` (checked).
    pub fn request<T: Handler>(&self, dev: &Device<T>, irq: u32, name: &'static CStr) -> Result {
        if irq == 0 || self.irq.load(Ordering::Acquire) != 0 {
            return Err(EINVAL);
        }
        // `self` must live in `dev`'s private data, which outlives the
        // registration (freed in `release` from `ndo_stop`, or on drop).
        let data = core::ptr::from_ref(dev.data()) as usize;
        let me = core::ptr::from_ref(self) as usize;
        if me < data || me >= data + core::mem::size_of::<T::Data>() {
            return Err(EINVAL);
        }
        // SAFETY: the handler only reads the device, which is registered and
        // outlives the request (see above).
        let ret = unsafe {
            kernel::bindings::request_threaded_irq(
                irq,
                Some(handler::<T>),
                None,
                0,
                name.as_char_ptr(),
                dev.as_raw().cast(),
            )
        };
        if ret != 0 {
            return Err(Error::from_errno(ret));
        }
        // INVARIANT: requested with `dev` as the cookie.
        self.cookie.store(dev.as_raw().cast(), Ordering::Release);
        self.irq.store(irq, Ordering::Release);
        Ok(())
    }

    /// Frees the interrupt, waiting for a running handler. Does nothing if
    /// not requested.
    pub fn release(&self) {
        let irq = self.irq.swap(0, Ordering::AcqRel);
        if irq != 0 {
            let cookie = self.cookie.load(Ordering::Acquire);
            // SAFETY: requested with this cookie (type invariant).
            unsafe { kernel::bindings::free_irq(irq, cookie) };
        }
    }
}

impl Drop for DeviceIrq {
    fn drop(&mut self) {
        // The device's private data (holding `self`) is dropped before the
        // device is freed: no handler may run after that.
        self.release();
    }
}
