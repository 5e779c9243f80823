// SPDX-License-Identifier: GPL-2.0

//! A network device's restart, as a [`kernel::workqueue`] work item: asked
//! for from any context ([`Device::schedule_restart`]), run in process
//! context under RTNL ([`Operations::restart`]).
//!
//! `kernel::workqueue` owns a work item through a reference-counted pointer
//! and has no way yet to cancel one; a registration must wait for its
//! device's restart before it frees the device, and no restart may be
//! queued after that, so [`Restart::disable_sync`] adds the one call that is
//! missing (`disable_work_sync`), with the reference a cancelled item held
//! given back.

use core::{marker::PhantomData, ptr::NonNull};

use kernel::{
    new_work,
    prelude::*,
    sync::Arc,
    workqueue::{self, impl_has_work, Work, WorkItem},
};

use crate::ffi;
use crate::net::netdev::{Device, Operations, Rtnl};

/// RTNL, taken: released on drop.
///
/// # Invariants
///
/// This value holds RTNL (taken by [`Self::lock`]); neither `Send` nor
/// `Sync`, so it is released on the thread that took it.
pub struct RtnlGuard(PhantomData<*mut ()>);

impl RtnlGuard {
    /// Takes RTNL, sleeping until it is free. Process context, without
    /// RTNL (it does not nest).
    pub fn lock() -> Self {
        // SAFETY: no precondition but process context, which a sleeping
        // caller is in.
        unsafe { ffi::rtnl_lock() };
        // INVARIANT: taken just above.
        Self(PhantomData)
    }

    /// Proof of holding RTNL, for the operations that need it.
    pub fn rtnl(&self) -> Rtnl<'_> {
        // SAFETY: RTNL is held for as long as `self` lives (type
        // invariant), which the returned value's lifetime is bound to.
        unsafe { Rtnl::assume_held() }
    }
}

impl Drop for RtnlGuard {
    fn drop(&mut self) {
        // SAFETY: RTNL is held by this value (type invariant), on this
        // thread.
        unsafe { ffi::rtnl_unlock() };
    }
}

/// The restart work of a device with operations `T`.
///
/// # Invariants
///
/// `dev` is a `net_device` allocated by [`super::registration::Registration::new`]
/// for `T`; the registration calls [`Self::disable_sync`] before it frees
/// the device, after which the work neither runs nor can be queued again,
/// so the device is valid whenever `run` runs.
#[pin_data]
pub(crate) struct Restart<T: Operations> {
    #[pin]
    work: Work<Restart<T>>,
    dev: NonNull<kernel::bindings::net_device>,
    _t: PhantomData<T>,
}

// SAFETY: `dev` is only used by `run` (on a worker thread) as a
// `&Device<T>`, whose methods may be called from any thread; the work item is
// the workqueue's to run anywhere.
unsafe impl<T: Operations> Send for Restart<T> {}
// SAFETY: shared references give nothing of `dev` out.
unsafe impl<T: Operations> Sync for Restart<T> {}

impl_has_work! {
    impl{T: Operations} HasWork<Restart<T>> for Restart<T> { self.work }
}

impl<T: Operations> Restart<T> {
    /// A restart work item for `dev`.
    ///
    /// # Safety
    ///
    /// `dev` must be allocated for `T` by the registration that owns the
    /// returned value, which calls [`Self::disable_sync`] before it frees
    /// the device.
    pub(crate) unsafe fn new(dev: NonNull<kernel::bindings::net_device>) -> Result<Arc<Self>> {
        // INVARIANT: the caller's guarantee.
        Arc::pin_init(
            pin_init!(Self {
                work <- new_work!("pagefill::restart"),
                dev,
                _t: PhantomData,
            }),
            GFP_KERNEL,
        )
    }

    /// Queues the restart (on the unbound system workqueue: it has no use
    /// for the CPU that asked); false if it was queued already, or the
    /// work is disabled. Any context.
    pub(crate) fn schedule(this: &Arc<Self>) -> bool {
        workqueue::system_unbound().enqueue(this.clone()).is_ok()
    }

    /// Cancels a queued restart, waits for a running one to finish, and
    /// disables the work for good: a later [`Self::schedule`] queues
    /// nothing (`queue_work_on` refuses a disabled work, and the reference
    /// it was given is dropped). Process context, without RTNL (the restart
    /// takes it).
    pub(crate) fn disable_sync(this: &Arc<Self>) {
        let work = core::ptr::from_ref(&this.work);
        // SAFETY: `work` was initialised by `Work::new` and lives as long as
        // `this`.
        let pending = unsafe { ffi::disable_work_sync(Work::raw_get(work)) };
        if pending {
            // SAFETY: a queued item owns the reference that `enqueue` turned
            // into a raw pointer with `Arc::into_raw`, and `run` would have
            // taken it back; cancelled, it never runs, and the reference is
            // given back here, once.
            drop(unsafe { Arc::from_raw(Arc::as_ptr(this)) });
        }
    }
}

impl<T: Operations> WorkItem for Restart<T> {
    type Pointer = Arc<Self>;

    fn run(this: Arc<Self>) {
        let rtnl = RtnlGuard::lock();
        // SAFETY: the device is valid while the work can run (type
        // invariant).
        let dev = unsafe { Device::<T>::from_raw_ptr(this.dev.as_ptr()) };
        // A restart asked for before a stop has nothing left to do.
        if !dev.is_running() {
            return;
        }
        if let Err(e) = T::restart(dev, &rtnl.rtnl()) {
            pr_err!("restart failed: {:?}\n", e);
        }
    }
}
