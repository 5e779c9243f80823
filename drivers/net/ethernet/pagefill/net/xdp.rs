// SPDX-License-Identifier: GPL-2.0

//! XDP: eBPF programs that see each received frame before any skb exists.
//!
//! C headers: [`include/net/xdp.h`](srctree/include/net/xdp.h),
//! [`include/linux/filter.h`](srctree/include/linux/filter.h)
//!
//! A driver's native XDP has four parts here: the program the core hands
//! over at attach ([`BpfProg`]), kept in a [`ProgSlot`] that each poll
//! reads once ([`ProgSlot::get`] gives a [`Prog`] that lives as long as
//! the poll); the per-queue registration the programs see as their receive
//! queue ([`RxQueue`]); and the buffer a frame is run in ([`XdpBuf`]), a
//! page pool buffer the CPU alone owns, with the headroom and tailroom XDP
//! promises a program, kept from frame to frame in an [`XdpRunner`], whose
//! [`XdpRunner::run`] also carries out a redirect.
//! Frames go out as [`XdpTxFrame`] (sent back, `XDP_TX`) and, redirected
//! here from elsewhere, as [`super::xdp_xmit::XdpFrame`].

use core::{
    marker::PhantomData,
    ptr::NonNull,
    sync::atomic::{AtomicPtr, Ordering},
};

use kernel::{error::from_err_ptr, ffi::c_int, prelude::*};

use crate::ffi;
use crate::net::napi::{Napi, PollCtx};
use crate::net::netdev::{Device, Operations, Rtnl};
use crate::net::page_pool::PagePool;
use crate::net::xsk::XskPool;

mod buf;

pub use buf::{Ran, Verdict, XdpBuf, XdpQueue, XdpRunner, XdpTxFrame, MAX_FRAGS};

/// Bytes before a frame that a program may claim (`XDP_PACKET_HEADROOM`).
pub const HEADROOM: usize = ffi::pagefill_xdp_room_PAGEFILL_XDP_HEADROOM as usize;

/// Bytes after a frame's buffer space kept for `skb_shared_info`, as an skb
/// built around the buffer needs (`SKB_DATA_ALIGN(sizeof(struct
/// skb_shared_info))`).
pub const TAILROOM: usize = ffi::pagefill_xdp_room_PAGEFILL_XDP_TAILROOM as usize;

/// A reference to an eBPF program, given up on drop (`bpf_prog_put`).
///
/// # Invariants
///
/// `prog` is a live program of which this value owns one reference.
pub struct BpfProg {
    prog: NonNull<kernel::bindings::bpf_prog>,
}

// SAFETY: a program reference may be put from any thread.
unsafe impl Send for BpfProg {}
// SAFETY: shared access only reads the program's immutable flags.
unsafe impl Sync for BpfProg {}

impl BpfProg {
    /// Whether the program handles frames in several buffers (`xdp.frags`).
    pub fn has_frags(&self) -> bool {
        // SAFETY: a live program (type invariant).
        unsafe { ffi::pagefill_bpf_prog_has_frags(self.prog.as_ptr()) }
    }
}

impl Drop for BpfProg {
    fn drop(&mut self) {
        // SAFETY: we own one reference (type invariant). The core frees a
        // program only an RCU grace period after its last reference went,
        // so a poll still running it (an RCU reader) keeps a valid program.
        unsafe { ffi::pagefill_bpf_prog_put(self.prog.as_ptr()) }
    }
}

/// The program of a device's receive path: set under RTNL, read by each
/// poll without a lock.
///
/// # Invariants
///
/// `prog` is null or a program of which the slot owns one reference.
pub struct ProgSlot {
    prog: AtomicPtr<kernel::bindings::bpf_prog>,
}

impl ProgSlot {
    /// An empty slot.
    pub const fn new() -> Self {
        Self {
            prog: AtomicPtr::new(core::ptr::null_mut()),
        }
    }

    /// Puts `prog` in the slot and returns the program it held. Polls that
    /// read the old one finish with it; the next reads the new one. RTNL
    /// serialises replacements (the core attaches programs under it).
    pub fn replace(&self, prog: Option<BpfProg>, _rtnl: &Rtnl<'_>) -> Option<BpfProg> {
        let new = prog.map_or(core::ptr::null_mut(), |p| {
            let p = core::mem::ManuallyDrop::new(p);
            p.prog.as_ptr()
        });
        // INVARIANT: the slot takes `prog`'s reference (not dropped above)
        // and gives the old one to the caller.
        let old = self.prog.swap(new, Ordering::AcqRel);
        NonNull::new(old).map(|prog| BpfProg { prog })
    }

    /// Whether a program is attached.
    pub fn is_set(&self) -> bool {
        !self.prog.load(Ordering::Relaxed).is_null()
    }

    /// Whether a program is attached that takes frames in one buffer only
    /// (no `xdp.frags`). Under RTNL, which keeps the program attached.
    pub fn needs_one_buffer(&self, _rtnl: &Rtnl<'_>) -> bool {
        let prog = self.prog.load(Ordering::Acquire);
        // SAFETY: the slot holds a reference to a non-null `prog` (type
        // invariant), which only `replace`, under RTNL, gives up.
        !prog.is_null() && !unsafe { ffi::pagefill_bpf_prog_has_frags(prog) }
    }

    /// The program, for the rest of the poll `ctx`: read once, so that a
    /// poll runs every frame through the same program. None in netpoll's
    /// poll (a budget of 0), which sets up no `bpf_net_context` for a
    /// program's redirects.
    pub fn get<'a>(&self, ctx: &PollCtx<'a>) -> Option<Prog<'a>> {
        if ctx.budget() == 0 {
            return None;
        }
        let prog = NonNull::new(self.prog.load(Ordering::Acquire))?;
        // INVARIANT: the slot held a reference when it was read; a poll runs
        // with bottom halves off, an RCU read-side critical section, and
        // `'a` ends with the poll (`PollCtx`'s invariant): a program
        // replaced meanwhile is freed only after it.
        Some(Prog {
            prog,
            _poll: PhantomData,
        })
    }
}

impl Default for ProgSlot {
    fn default() -> Self {
        Self::new()
    }
}

impl Drop for ProgSlot {
    fn drop(&mut self) {
        if let Some(prog) = NonNull::new(*self.prog.get_mut()) {
            // INVARIANT: the slot's own reference, given up once.
            drop(BpfProg { prog });
        }
    }
}

/// A program read by a poll, valid until the poll ends.
///
/// # Invariants
///
/// `prog` is a program that stays live for `'a`.
#[derive(Clone, Copy)]
pub struct Prog<'a> {
    prog: NonNull<kernel::bindings::bpf_prog>,
    _poll: PhantomData<(&'a (), *mut ())>,
}

/// What a program decided for a frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Action {
    /// The program failed: the frame is dropped and traced.
    Aborted,
    /// Drop the frame.
    Drop,
    /// Hand the frame to the stack.
    Pass,
    /// Send the frame back out of the device it came in on.
    Tx,
    /// Send the frame where the program's redirect helper said.
    Redirect,
    /// An action value the kernel does not know.
    Invalid(u32),
}

impl Action {
    fn from_raw(act: u32) -> Self {
        match act {
            kernel::bindings::xdp_action_XDP_ABORTED => Self::Aborted,
            kernel::bindings::xdp_action_XDP_DROP => Self::Drop,
            kernel::bindings::xdp_action_XDP_PASS => Self::Pass,
            kernel::bindings::xdp_action_XDP_TX => Self::Tx,
            kernel::bindings::xdp_action_XDP_REDIRECT => Self::Redirect,
            other => Self::Invalid(other),
        }
    }

    fn to_raw(self) -> u32 {
        match self {
            Self::Aborted => kernel::bindings::xdp_action_XDP_ABORTED,
            Self::Drop => kernel::bindings::xdp_action_XDP_DROP,
            Self::Pass => kernel::bindings::xdp_action_XDP_PASS,
            Self::Tx => kernel::bindings::xdp_action_XDP_TX,
            Self::Redirect => kernel::bindings::xdp_action_XDP_REDIRECT,
            Self::Invalid(a) => a,
        }
    }
}

impl Prog<'_> {
    /// The program, for a run the caller makes in the poll it was read in.
    pub(crate) fn as_raw(&self) -> *mut kernel::bindings::bpf_prog {
        self.prog.as_ptr()
    }

    /// Whether the program takes frames in several buffers (`xdp.frags`).
    pub fn has_frags(&self) -> bool {
        // SAFETY: a live program (type invariant).
        unsafe { ffi::pagefill_bpf_prog_has_frags(self.prog.as_ptr()) }
    }

    /// Reports a frame that `act` did not take as the program meant: the
    /// `xdp_exception` tracepoint, after a warning for an action the
    /// kernel does not know (`bpf_warn_invalid_xdp_action`).
    pub fn exception<T: Operations>(&self, dev: &Device<T>, act: Action) {
        // SAFETY: the device is valid and the program live (type
        // invariants); both only identify the event.
        unsafe {
            ffi::pagefill_xdp_exception(
                dev.as_raw(),
                self.prog.as_ptr(),
                act.to_raw(),
                matches!(act, Action::Invalid(_)),
            )
        }
    }
}

/// A receive queue as XDP programs see it (`xdp_rxq_info`), registered with
/// the memory model of the page pool its buffers come from.
///
/// # Invariants
///
/// `rxq` was made by `pagefill_xdp_rxq_new` and is owned by this value; it
/// is registered with the memory model of `pool`.
pub struct RxQueue {
    rxq: NonNull<ffi::xdp_rxq_info>,
    pool: NonNull<kernel::bindings::page_pool>,
}

// SAFETY: registered and unregistered in process context on any thread;
// programs only read it.
unsafe impl Send for RxQueue {}
// SAFETY: shared access only passes it to programs, which read it.
unsafe impl Sync for RxQueue {}

impl RxQueue {
    /// Registers queue `queue` of `dev`, polled by `napi`, whose buffers
    /// come from `pool` (and whose frames take whole buffers of it as
    /// fragments). Process context (it allocates).
    pub fn new<T: Operations>(
        dev: &Device<T>,
        queue: u32,
        napi: &Napi,
        pool: &PagePool,
    ) -> Result<Self> {
        // SAFETY: the device is registered, `napi` and `pool` are live; the
        // helper copies what it needs from them (the NAPI id; the pool is
        // held by its memory model until unregistration).
        let rxq = from_err_ptr(unsafe {
            ffi::pagefill_xdp_rxq_new(
                dev.as_raw(),
                queue,
                napi.as_raw_for_pool(),
                pool.as_raw(),
                pool.buf_len() as u32,
            )
        })?;
        // INVARIANT: made above, not an error, with `pool`'s model.
        Ok(Self {
            rxq: NonNull::new(rxq).ok_or(ENOMEM)?,
            pool: NonNull::new(pool.as_raw()).ok_or(EINVAL)?,
        })
    }
}

impl Drop for RxQueue {
    fn drop(&mut self) {
        // SAFETY: owned (type invariant); no poll runs a program with it
        // any more: it lives in the queue's NAPI-owned state, dropped while
        // NAPI is stopped.
        unsafe { ffi::pagefill_xdp_rxq_free(self.rxq.as_ptr()) }
    }
}

/// Sends the frames this poll's programs redirected on their way
/// (`xdp_do_flush`): due once per poll that redirected any, before it ends.
/// Nothing in netpoll's poll, where no program runs ([`ProgSlot::get`]).
pub fn flush_redirects(ctx: &PollCtx<'_>) {
    if ctx.budget() == 0 {
        return;
    }
    // SAFETY: a NAPI poll (the token's) with a `bpf_net_context` (not
    // netpoll's: budget above 0), where the redirects were queued.
    unsafe { ffi::pagefill_xdp_do_flush() }
}

/// The extended acknowledgment of a configuration request: where a driver
/// says why it refused.
pub struct ExtAck {
    extack: *mut kernel::bindings::netlink_ext_ack,
}

impl ExtAck {
    /// Sets the message the user sees with the error.
    pub fn set_msg(&self, msg: &'static CStr) {
        if self.extack.is_null() {
            return;
        }
        // SAFETY: a live extack of the current request (non-null); the
        // message is static, as netlink keeps the pointer.
        unsafe { ffi::pagefill_extack_set_msg(self.extack, msg.as_char_ptr()) }
    }
}

/// `ndo_bpf` of `T`.
///
/// # Safety
///
/// `dev` must be a device registered for `T` and `bpf` a valid request; the
/// core calls it under RTNL.
pub(crate) unsafe extern "C" fn ndo_bpf<T: Operations>(
    dev: *mut kernel::bindings::net_device,
    bpf: *mut ffi::netdev_bpf,
) -> c_int {
    // SAFETY: the core calls `ndo_bpf` with a registered device and a valid
    // request, under RTNL.
    let (dev, rtnl) = unsafe { (Device::<T>::from_raw(dev), Rtnl::assume_held()) };
    // SAFETY: `bpf` is valid for the call.
    let command = unsafe { ffi::pagefill_netdev_bpf_command(bpf) };
    if command == ffi::pagefill_bpf_command_PAGEFILL_BPF_SETUP_XSK_POOL {
        // SAFETY: `bpf` is a valid request (the core's), of this command.
        return unsafe { xsk_setup::<T>(dev, &rtnl, bpf) };
    }
    if command != ffi::pagefill_bpf_command_PAGEFILL_BPF_SETUP_PROG {
        return EINVAL.to_errno();
    }
    // SAFETY: as above.
    let (raw, extack) = unsafe {
        (
            ffi::pagefill_netdev_bpf_prog(bpf),
            ExtAck {
                extack: ffi::pagefill_netdev_bpf_extack(bpf),
            },
        )
    };
    // INVARIANT: the core moved one reference of the program into this
    // call ("drivers assume refcnt is already incremented"); it puts it
    // back itself if the call fails, so it is only owned here once the
    // check passed.
    let prog = core::mem::ManuallyDrop::new(NonNull::new(raw).map(|prog| BpfProg { prog }));
    if let Err(e) = T::xdp_check(dev, &rtnl, prog.as_ref(), &extack) {
        return e.to_errno();
    }
    T::xdp_install(dev, &rtnl, core::mem::ManuallyDrop::into_inner(prog));
    0
}

/// `XDP_SETUP_XSK_POOL`: binds the request's pool to its queue, or unbinds
/// the queue's.
///
/// # Safety
///
/// `bpf` is a valid `XDP_SETUP_XSK_POOL` request for `dev`.
unsafe fn xsk_setup<T: Operations>(
    dev: &Device<T>,
    rtnl: &Rtnl<'_>,
    bpf: *mut ffi::netdev_bpf,
) -> c_int {
    if !T::HAS_XSK_BIND {
        return EOPNOTSUPP.to_errno();
    }
    // SAFETY: `bpf` is valid for the call (the caller's guarantee).
    let (pool, queue) = unsafe {
        (
            ffi::pagefill_netdev_bpf_xsk_pool(bpf),
            ffi::pagefill_netdev_bpf_xsk_queue(bpf),
        )
    };
    let queue = u32::from(queue);
    let done = match NonNull::new(pool) {
        // SAFETY: the pool of this bind of `dev`; `T::xsk_bind` keeps it no
        // longer than the queue's unbind (the trait's contract).
        Some(pool) => unsafe { XskPool::map(dev, rtnl, pool) }
            .and_then(|pool| T::xsk_bind(dev, rtnl, queue, pool)),
        None => T::xsk_unbind(dev, rtnl, queue),
    };
    match done {
        Ok(()) => 0,
        Err(e) => e.to_errno(),
    }
}

/// The XDP actions a device carries out, as it advertises them
/// (`xdp_features`, `NETDEV_XDP_ACT_*`).
#[derive(Clone, Copy, Default, Debug)]
pub struct Features(u32);

impl Features {
    /// `XDP_ABORTED`, `XDP_DROP`, `XDP_PASS` and `XDP_TX`.
    pub const BASIC: Self = Self(ffi::pagefill_xdp_features_PAGEFILL_XDP_ACT_BASIC);
    /// `XDP_REDIRECT`.
    pub const REDIRECT: Self = Self(ffi::pagefill_xdp_features_PAGEFILL_XDP_ACT_REDIRECT);
    /// Frames redirected to the device are sent (`ndo_xdp_xmit`).
    pub const NDO_XMIT: Self = Self(ffi::pagefill_xdp_features_PAGEFILL_XDP_ACT_NDO_XMIT);
    /// Programs with `xdp.frags` see frames in several buffers.
    pub const RX_SG: Self = Self(ffi::pagefill_xdp_features_PAGEFILL_XDP_ACT_RX_SG);
    /// Frames in several buffers redirected to the device are sent.
    pub const NDO_XMIT_SG: Self = Self(ffi::pagefill_xdp_features_PAGEFILL_XDP_ACT_NDO_XMIT_SG);
    /// AF_XDP sockets bind in zero-copy mode (`XDP_SETUP_XSK_POOL`).
    pub const XSK_ZEROCOPY: Self = Self(ffi::pagefill_xdp_features_PAGEFILL_XDP_ACT_XSK_ZEROCOPY);

    /// Both sets.
    pub const fn with(self, o: Self) -> Self {
        Self(self.0 | o.0)
    }

    /// The `NETDEV_XDP_ACT_*` bits.
    pub(crate) fn bits(self) -> u32 {
        self.0
    }
}
