// SPDX-License-Identifier: GPL-2.0

//! NAPI: interrupt-driven polling of a device's completions.
//!
//! C header: [`include/linux/netdevice.h`](srctree/include/linux/netdevice.h)
//!
//! A [`Napi`] lives pinned in a network device's private data. Starting it
//! adds it to the device, enables it and requests the interrupt that
//! schedules it; stopping it undoes all three in reverse order.

use core::{
    cell::{Cell, UnsafeCell},
    marker::{PhantomData, PhantomPinned},
    sync::atomic::{AtomicBool, AtomicPtr, AtomicU32, Ordering},
};

use kernel::{
    ffi::{c_int, c_void},
    prelude::*,
    str::CStr,
    types::Opaque, //
};

use crate::ffi;
use crate::net::netdev::{Device, Operations, Rtnl};
use crate::net::skb::SkBuff;

/// The poll callback of a device's NAPI instance.
pub trait Poll: Operations {
    /// Processes up to `ctx.budget()` units of work; returns how many were
    /// done. The core's rule, that a poll returns less than its budget if
    /// and only if it completed the instance, is kept by the trampoline
    /// whatever this returns: after [`PollCtx::complete_done`] it reports
    /// less than the budget, without it the whole budget (the instance
    /// stays scheduled); a return above the budget also warns.
    fn poll(dev: &Device<Self>, ctx: PollCtx<'_>) -> i32;
}

/// One call of a NAPI instance's poll: the operations only a poll may do
/// (allocate receive skbs from the per-CPU NAPI caches, hand skbs to GRO,
/// complete the instance) are methods of this, which only the poll
/// trampoline makes.
///
/// It also counts the skbs handed to the stack, so that the budget is the
/// stack's count and not the driver's estimate.
///
/// # Invariants
///
/// A value exists only during a call of `napi`'s poll callback, on the CPU
/// running it, in softirq context (or netpoll's, with `budget == 0`). It is
/// neither `Send` nor `Sync` and cannot be cloned or made elsewhere.
pub struct PollCtx<'a> {
    napi: &'a Napi,
    budget: i32,
    delivered: Cell<i32>,
    /// Set once `napi_complete_done` was called: the trampoline makes the
    /// poll's return agree with it.
    completed: &'a Cell<bool>,
    _not_send: PhantomData<*mut ()>,
}

impl<'a> PollCtx<'a> {
    /// The NAPI instance being polled.
    pub fn napi(&self) -> &'a Napi {
        self.napi
    }

    /// The budget of this poll: at most this many skbs go to the stack. A
    /// budget of 0 is netpoll's (possibly with interrupts off): transmit
    /// completions only, no receive and no allocation.
    pub fn budget(&self) -> i32 {
        self.budget
    }

    /// Frames handed to the stack (and consumed otherwise, see
    /// [`Self::count_consumed`]) so far in this poll.
    pub fn delivered(&self) -> i32 {
        self.delivered.get()
    }

    /// How many more frames this poll may hand to the stack or consume.
    pub fn budget_left(&self) -> i32 {
        (self.budget - self.delivered.get()).max(0)
    }

    /// Allocates an skb for a received frame of `len` bytes; `None` with a
    /// budget of 0 (netpoll: no receive).
    pub fn alloc_skb(&self, len: u32) -> Option<SkBuff> {
        if self.budget == 0 {
            return None;
        }
        // SAFETY: in `napi`'s poll, softirq context (type invariant), as
        // `napi_alloc_skb` requires.
        let skb = unsafe { kernel::bindings::napi_alloc_skb(self.napi.as_raw(), len) };
        if skb.is_null() {
            return None;
        }
        // SAFETY: a fresh skb that we own.
        Some(unsafe { SkBuff::from_raw(skb) })
    }

    /// Hands a received frame to the stack through GRO; counts it against
    /// the budget.
    pub fn gro_receive(&self, skb: SkBuff) {
        self.delivered.set(self.delivered.get().saturating_add(1));
        // SAFETY: in `napi`'s poll (type invariant); the stack takes the skb.
        unsafe { ffi::pagefill_napi_gro_receive(self.napi.as_raw(), skb.into_raw()) };
    }

    /// Counts a frame that the poll finished without an skb (an XDP
    /// program dropped it, or sent it elsewhere) against the budget, as a
    /// frame handed to the stack is: the budget bounds the frames a poll
    /// processes, whatever becomes of them.
    pub fn count_consumed(&self) {
        self.count_consumed_n(1);
    }

    /// Counts `n` such frames at once.
    #[inline]
    pub fn count_consumed_n(&self, n: u32) {
        let n = i32::try_from(n).unwrap_or(i32::MAX);
        self.delivered.set(self.delivered.get().saturating_add(n));
    }

    /// Ends a poll that did `work`, if that is below the budget; returns
    /// whether the driver should re-arm its interrupt (false too when
    /// `work` is not below the budget: the instance stays scheduled).
    pub fn complete_done(self, work: i32) -> bool {
        if work >= self.budget {
            return false;
        }
        self.completed.set(true);
        // SAFETY: in `napi`'s poll (type invariant), once (the context is
        // consumed), with work below the budget.
        unsafe { ffi::napi_complete_done(self.napi.as_raw(), work) }
    }

    /// [`Self::complete_done`] for a poll that left work undone for want of
    /// memory: if the instance completes, it polls again in about `ms`
    /// milliseconds from a timer, rather than spinning in softirq context
    /// until memory comes back.
    pub fn complete_done_retry(self, work: i32, ms: u32) -> bool {
        let napi = self.napi;
        let completed = self.complete_done(work);
        if completed {
            // SAFETY: the instance is started (its poll runs) and its retry
            // timer was set up with it; the timer only schedules it.
            unsafe { ffi::pagefill_napi_retry_later(napi.as_raw(), ms) };
        }
        completed
    }
}

/// Room for a C `struct pagefill_napi`: a `struct napi_struct` and the
/// driver's retry timer. `kernel::bindings` declares the NAPI type
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
    /// [`NapiOwned::stopped_mut`] accesses to state it owns that are
    /// running: it does not start meanwhile.
    owned_borrows: AtomicU32,
    #[pin]
    _pin: PhantomPinned,
}

// SAFETY: a `Napi` is only its C storage and two atomics; nothing in it is
// tied to the thread that made it.
unsafe impl Send for Napi {}
// SAFETY: the methods taking `&self` are `start` and `stop`, which take
// the RTNL token, so never run two at once, and which read and write `irq`
// and `queue` atomically; the operations that the C API allows only inside
// the poll are on [`PollCtx`], which is neither `Send` nor `Sync`.
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
    let completed = Cell::new(false);
    // INVARIANT: made here, in the poll callback, and gone when it returns.
    let ctx = PollCtx {
        napi: this,
        budget,
        delivered: Cell::new(0),
        completed: &completed,
        _not_send: PhantomData,
    };
    let work = T::poll(dev, ctx);
    if work > budget {
        kernel::pr_warn_once!("pagefill: a NAPI poll reported more work than its budget\n");
    }
    // A completed instance that reported its whole budget would be put
    // back on the poll list though no longer scheduled; one not completed
    // that reported less would never be polled again.
    if completed.get() {
        work.clamp(0, (budget - 1).max(0))
    } else {
        budget
    }
}

/// State that belongs to one NAPI instance: its poll uses it without a
/// lock, and the driver sets it up and tears it down while the instance is
/// stopped. The instance is the one first passed to [`Self::stopped_mut`].
///
/// # Invariants
///
/// Once `owner` is set (never to another value), `value` is accessed only
/// through [`Self::poll_mut`] (inside a poll of `owner`, whose polls never
/// overlap) and [`Self::stopped_mut`] (while `owner` is stopped under RTNL,
/// so no poll runs and none can start: the owner refuses to start while
/// such an access runs, and `busy` keeps two of them from overlapping).
/// `owner` is only compared, never dereferenced.
pub struct NapiOwned<T> {
    value: UnsafeCell<T>,
    owner: AtomicPtr<Napi>,
    busy: AtomicBool,
}

// SAFETY: the value moves with the owner's data; `T: Send` lets it.
unsafe impl<T: Send> Send for NapiOwned<T> {}
// SAFETY: shared references only reach the value as `&mut T` one at a
// time (type invariant), from whichever thread polls or holds RTNL.
unsafe impl<T: Send> Sync for NapiOwned<T> {}

impl<T> NapiOwned<T> {
    /// `value`, with no owner yet.
    pub fn new(value: T) -> Self {
        Self {
            value: UnsafeCell::new(value),
            owner: AtomicPtr::new(core::ptr::null_mut()),
            busy: AtomicBool::new(false),
        }
    }

    /// The value, in a poll of its owner, for as long as the poll context
    /// is borrowed (the context comes back shared, for the poll-only
    /// operations); `None` in another instance's poll.
    pub fn poll_mut<'a, 'p>(
        &'a self,
        ctx: &'a mut PollCtx<'p>,
    ) -> Option<(&'a mut T, &'a PollCtx<'p>)> {
        if !core::ptr::eq(ctx.napi(), self.owner.load(Ordering::Acquire)) {
            return None;
        }
        // SAFETY: in a poll of the owner (checked above), which runs once
        // at a time; `ctx` stays borrowed for `'a`, so this poll makes no
        // second such reference; the owner polls only while started, so
        // no `stopped_mut` access overlaps (type invariant).
        Some((unsafe { &mut *self.value.get() }, ctx))
    }

    /// Runs `f` with the value while `owner` is stopped, under RTNL, and
    /// makes `owner` the value's owner if it has none; `None` if `owner`
    /// runs or is not the owner, or if a `stopped_mut` access is running
    /// already (a nested call).
    pub fn stopped_mut<R>(
        &self,
        owner: &Napi,
        _rtnl: &Rtnl<'_>,
        f: impl FnOnce(&mut T) -> R,
    ) -> Option<R> {
        let owner_ptr = core::ptr::from_ref(owner).cast_mut();
        let bound = self.owner.compare_exchange(
            core::ptr::null_mut(),
            owner_ptr,
            Ordering::AcqRel,
            Ordering::Acquire,
        );
        if bound.is_err_and(|p| p != owner_ptr) || self.busy.swap(true, Ordering::Acquire) {
            return None;
        }
        // Counted before the check: `start` (under RTNL, as this is, so not
        // at the same time) refuses to start while the count is not 0.
        owner.owned_borrows.fetch_add(1, Ordering::AcqRel);
        let r = if owner.irq.load(Ordering::Acquire) != 0 {
            None
        } else {
            // SAFETY: `owner` is the value's owner and stopped, and cannot
            // start until the count drops again (even from `f`): no poll
            // runs; `busy` keeps out every other `stopped_mut` access.
            Some(f(unsafe { &mut *self.value.get() }))
        };
        owner.owned_borrows.fetch_sub(1, Ordering::AcqRel);
        self.busy.store(false, Ordering::Release);
        r
    }
}

impl Napi {
    /// A stopped NAPI instance.
    pub fn new() -> impl PinInit<Self> {
        pin_init!(Self {
            inner <- Opaque::zeroed(),
            irq: AtomicU32::new(0),
            queue: AtomicU32::new(0),
            owned_borrows: AtomicU32::new(0),
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
    /// netlink reports (`napi-get`, `queue-get`).
    pub fn start<T: Poll>(
        &self,
        _rtnl: &Rtnl<'_>,
        dev: &Device<T>,
        irq: u32,
        name: &'static CStr,
        queue: u32,
    ) -> Result {
        if irq == 0 || self.irq.load(Ordering::Acquire) != 0 {
            return Err(EINVAL);
        }
        // State it owns is being used as a stopped instance's: starting now
        // would let a poll use it too.
        if self.owned_borrows.load(Ordering::Acquire) != 0 {
            return Err(EBUSY);
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
        // SAFETY: added to `dev` above; RTNL is held (the token's
        // invariant); `queue` is one of the device's queues (the core
        // ignores the call otherwise).
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

    /// Schedules a poll, as the interrupt would, unless one is scheduled
    /// or running; does nothing if the instance is not started.
    pub fn schedule(&self) {
        if self.irq.load(Ordering::Acquire) == 0 {
            return;
        }
        // SAFETY: the instance was added to a device and enabled (it was
        // started: `irq` is set only after). If `stop` runs meanwhile,
        // `napi_disable` marks it scheduled for good before it returns, and
        // the state stays so after `netif_napi_del`, so this schedules
        // nothing then; the storage is pinned and lives as long as `self`.
        unsafe { ffi::pagefill_napi_schedule(self.as_raw()) };
    }

    /// Frees the interrupt, disables the instance (waiting for a running
    /// poll) and removes it from its device. Does nothing if not started.
    pub fn stop(&self, _rtnl: &Rtnl<'_>) {
        self.stop_locked();
    }

    /// [`Self::stop`], for a caller that holds RTNL or knows the instance
    /// stopped already (drop, after the device was unregistered).
    fn stop_locked(&self) {
        let irq = self.irq.swap(0, Ordering::AcqRel);
        if irq == 0 {
            return;
        }
        let queue = self.queue.load(Ordering::Acquire);
        // SAFETY: started (type invariant): the interrupt is ours with this
        // cookie; after `free_irq` nothing but the retry timer schedules the
        // NAPI, and `pagefill_netif_napi_del` shuts that down after
        // `napi_disable`. The instance lets go of the interrupt before it is
        // freed, which must find no affinity notifier of the core's on it.
        // The queues forget the instance first: RTNL is held
        // (`stop`'s token), or the instance was stopped already by
        // `ndo_stop` (unregistering runs it before the data is dropped) and
        // this is not reached.
        unsafe {
            let dev = ffi::pagefill_napi_dev(self.as_raw());
            for ty in [
                ffi::netdev_queue_type_NETDEV_QUEUE_TYPE_RX,
                ffi::netdev_queue_type_NETDEV_QUEUE_TYPE_TX,
            ] {
                ffi::netif_queue_set_napi(dev, queue, ty, core::ptr::null_mut());
            }
            ffi::pagefill_netif_napi_set_irq(self.as_raw(), -1);
            kernel::bindings::free_irq(irq, self.as_raw().cast());
            ffi::napi_disable(self.as_raw());
            ffi::pagefill_netif_napi_del(self.as_raw());
        }
    }
}

#[pinned_drop]
impl PinnedDrop for Napi {
    fn drop(self: Pin<&mut Self>) {
        self.stop_locked();
    }
}
