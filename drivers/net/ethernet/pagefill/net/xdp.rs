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
//! promises a program, where [`XdpBuf::run`] also carries out a redirect.
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
use crate::net::page_pool::{PagePool, PoolPage};
use crate::net::skb::{RxHash, TxParts};

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
    /// poll runs every frame through the same program.
    pub fn get<'a>(&self, _ctx: &PollCtx<'a>) -> Option<Prog<'a>> {
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

/// What became of a frame [`XdpBuf::run`] was given.
pub enum Ran {
    /// The program decided, and the frame is in the buffer as it left it
    /// (any action but a redirect carried out).
    Kept(XdpBuf, Verdict),
    /// The program redirected the frame, and the frame went, with its
    /// buffers, where it said (`XDP_REDIRECT`).
    Redirected,
    /// The program redirected the frame, and the target refused it: the
    /// frame is dropped, its buffer back.
    RedirectFailed(XdpBuf),
    /// Nothing ran: the frame is longer than [`XdpBuf::max_frame`] and the
    /// program takes frames in one buffer only, or longer than a buffer and
    /// [`MAX_FRAGS`] more hold; the queue is not of the buffer's pool; or the
    /// program left the frame outside its buffer.
    NotRun(XdpBuf),
    /// Nothing ran: the pool gave no buffer for the rest of the frame.
    NoBuffer(XdpBuf),
}

/// Most buffers after the first that a frame is run in (multi-buffer XDP):
/// a frame sent back takes a transmit descriptor for each.
pub const MAX_FRAGS: usize = ffi::pagefill_xdp_room_PAGEFILL_XDP_MAX_FRAGS as usize;

// A frame sent back goes out whole: its buffers are within the parts a
// frame is mapped in.
const _: () = assert!(MAX_FRAGS < crate::net::skb::TX_MAX_PARTS);

/// Sends the frames this poll's programs redirected on their way
/// (`xdp_do_flush`): due once per poll that redirected any, before it ends.
pub fn flush_redirects(_ctx: &PollCtx<'_>) {
    // SAFETY: a NAPI poll (the token's), where the redirects were queued.
    unsafe { ffi::pagefill_xdp_do_flush() }
}

/// Where a frame is after its program ran, in an [`XdpBuf`].
#[derive(Clone, Copy, Debug)]
pub struct Verdict {
    /// What the program decided.
    pub act: Action,
    /// The frame's offset in the buffer, after any head adjustment.
    pub off: usize,
    /// The length of the frame's part in the first buffer, after any head
    /// or tail adjustment.
    pub len: usize,
    /// The frame's whole length: the first buffer's part and the fragments.
    pub total: usize,
}

/// A page pool buffer that the CPU alone owns and writes: no skb fragment
/// or device holds it. A frame is copied into it, after [`HEADROOM`]
/// bytes, and run through a program there; a frame longer than the buffer
/// takes more buffers of the pool, as fragments (multi-buffer XDP), listed
/// in the `skb_shared_info` of the buffer's [`TAILROOM`].
///
/// # Invariants
///
/// Nobody but this value accesses the buffer, which is at least
/// [`HEADROOM`] + [`TAILROOM`] bytes long. The first `frags` (at most
/// [`MAX_FRAGS`]) fragments of the `skb_shared_info` at its end are buffers
/// of the same pool, of which this value holds one reference each and which
/// nobody else accesses either.
pub struct XdpBuf {
    page: PoolPage,
    frags: u8,
}

impl XdpBuf {
    /// A buffer of `pool` for XDP, in a poll of the pool's NAPI instance;
    /// `None` where [`PagePool::alloc`] gives none.
    pub fn alloc(pool: &PagePool, ctx: &PollCtx<'_>) -> Option<Self> {
        let page = pool.alloc(ctx)?;
        // INVARIANT: fresh from the pool, so nobody else holds it; every
        // pool buffer is at least a page; no fragments.
        (page.len() >= HEADROOM + TAILROOM).then_some(Self { page, frags: 0 })
    }

    /// Longest frame the buffer takes alone.
    pub fn max_frame(&self) -> usize {
        self.page.len() - HEADROOM - TAILROOM
    }

    /// Longest frame the buffer takes with [`MAX_FRAGS`] more of its pool.
    pub fn max_frame_frags(&self) -> usize {
        self.max_frame() + MAX_FRAGS * self.page.len()
    }

    /// Fragment `i` of the frame: its page, offset and length, checked to
    /// lie within a buffer of the pool.
    fn frag(&self, i: usize) -> Option<(NonNull<kernel::bindings::page>, usize, usize)> {
        if i >= usize::from(self.frags) {
            return None;
        }
        let (mut off, mut len) = (0u32, 0u32);
        // SAFETY: the buffer is this value's alone (type invariant), and its
        // `skb_shared_info` lists `frags > i` fragments.
        let page = unsafe {
            ffi::pagefill_xdp_frag(
                self.page.as_raw(),
                self.page.len() as u32,
                i as u32,
                &mut off,
                &mut len,
            )
        };
        let (off, len) = (off as usize, len as usize);
        let page = NonNull::new(page)?;
        (off.checked_add(len)? <= self.page.len()).then_some((page, off, len))
    }

    /// The frame's fragments after its part in the first buffer, in order
    /// (none for a frame in one buffer).
    pub fn frags(&self) -> impl Iterator<Item = &[u8]> + '_ {
        (0..usize::from(self.frags)).filter_map(move |i| {
            let (page, off, len) = self.frag(i)?;
            // SAFETY: a buffer of the pool that this value holds and nobody
            // else accesses (type invariant), directly mapped (pool pages
            // are never highmem); `off + len` is within it (checked by
            // `frag`); it stays held while `self` is borrowed.
            Some(unsafe {
                core::slice::from_raw_parts(
                    ffi::pagefill_page_address(page.as_ptr())
                        .cast::<u8>()
                        .add(off),
                    len,
                )
            })
        })
    }

    /// Gives the fragments back to the pool: the buffer holds one frame's
    /// first part at most. Done with a frame, a driver keeping the buffer
    /// for the next frame calls this, or its fragments stay out of the pool
    /// until then.
    pub fn release_frags(&mut self) {
        for i in 0..usize::from(self.frags) {
            if let Some((page, _, _)) = self.frag(i) {
                // SAFETY: a buffer of this buffer's pool of which we hold one
                // reference (type invariant), given up once: `frags` is
                // cleared below.
                unsafe {
                    ffi::pagefill_page_pool_put_full_page(self.page.pool_raw(), page.as_ptr())
                };
            }
        }
        // INVARIANT: no fragment held any more.
        self.frags = 0;
    }

    /// Copies `frame` in after the headroom, and what does not fit into
    /// more buffers of `pool` if `prog` takes fragments (`xdp.frags`), and
    /// runs `prog` on it, as a frame of receive queue `rxq` (whose buffers
    /// come from `pool`), in a poll `ctx` of the queue's NAPI instance. A
    /// frame the program redirects goes with its buffers; the poll must then
    /// end with [`flush_redirects`]. `hash` is what the program's
    /// `bpf_xdp_metadata_rx_hash()` finds ([`RxHash::NONE`]: `-ENODATA`).
    pub fn run(
        mut self,
        rxq: &RxQueue,
        prog: Prog<'_>,
        frame: &[u8],
        hash: RxHash,
        pool: &PagePool,
        ctx: &PollCtx<'_>,
    ) -> Ran {
        self.release_frags();
        let buf_len = self.page.len();
        // The core returns a redirected frame's buffers to the pool the
        // queue's memory model names: they must be its.
        if self.page.pool_raw() != rxq.pool.as_ptr()
            || pool.as_raw() != rxq.pool.as_ptr()
            || frame.len() > self.max_frame_frags()
            || (frame.len() > self.max_frame() && !prog.has_frags())
        {
            return Ran::NotRun(self);
        }
        let (first, mut rest) = frame.split_at(frame.len().min(self.max_frame()));
        let mut frags = [core::ptr::null_mut(); MAX_FRAGS];
        let mut frag_lens = [0u32; MAX_FRAGS];
        let mut n = 0;
        for (slot, slot_len) in frags.iter_mut().zip(frag_lens.iter_mut()) {
            if rest.is_empty() {
                break;
            }
            let Some(page) = pool.alloc(ctx) else {
                break;
            };
            let (part, after) = rest.split_at(rest.len().min(buf_len));
            // SAFETY: fresh from the pool, nobody else accesses the
            // buffer, `buf_len` bytes of directly mapped memory (pool pages
            // are never highmem) that `part` fits; `part` is another
            // object's memory.
            unsafe {
                core::ptr::copy_nonoverlapping(
                    part.as_ptr(),
                    ffi::pagefill_page_address(page.as_raw()).cast::<u8>(),
                    part.len(),
                )
            };
            *slot = page.as_raw();
            *slot_len = part.len() as u32;
            // The reference goes in the first buffer's `skb_shared_info`
            // below (the invariant's `frags`).
            core::mem::forget(page);
            n += 1;
            rest = after;
        }
        if !rest.is_empty() {
            // The pool gave no buffer for the rest.
            for &page in frags.iter().take(n) {
                // SAFETY: a buffer of the pool taken above, whose reference
                // was kept for the frame (forgotten above), given back once.
                unsafe { ffi::pagefill_page_pool_put_full_page(pool.as_raw(), page) };
            }
            return Ran::NoBuffer(self);
        }
        let base = ffi_page_address(&self.page);
        // SAFETY: the buffer is `len()` bytes of directly mapped memory
        // that only this value accesses (type invariant), and the frame's
        // first part fits after the headroom (checked above); `frame` is
        // another object's memory, so the two do not overlap.
        unsafe { core::ptr::copy_nonoverlapping(first.as_ptr(), base.add(HEADROOM), first.len()) };
        let mut off = HEADROOM as u32;
        let mut len = first.len() as u32;
        let mut nr_frags = n as u32;
        let mut redirect_err = 0;
        // SAFETY: `prog` is live for this poll (its invariant) and `rxq`
        // registered with the memory model of the buffers' pool (checked
        // above); the program may read and write the buffer's `len()`
        // bytes (its frame size) and the `n <= MAX_FRAGS` fragment buffers,
        // which nobody else accesses, and the core may give fragments back
        // to the pool (it reports those left in `nr_frags`). This is a NAPI
        // poll (`Prog`'s lifetime is one), where the core's redirect state
        // lives until the poll flushes it.
        let act = unsafe {
            ffi::pagefill_xdp_run(
                prog.prog.as_ptr(),
                rxq.rxq.as_ptr(),
                self.page.as_raw(),
                self.page.len() as u32,
                &mut off,
                &mut len,
                frags.as_ptr(),
                frag_lens.as_ptr(),
                &mut nr_frags,
                hash.value(),
                hash.rss_type(),
                &mut redirect_err,
            )
        };
        let act = Action::from_raw(act);
        if act == Action::Redirect && redirect_err == 0 {
            // The pool references this value held went with the frame: the
            // core gives the buffers back to the pool once the target is
            // done with them (`xdp_return_frame`).
            core::mem::forget(self);
            return Ran::Redirected;
        }
        // INVARIANT: the fragments the core left in the `skb_shared_info`,
        // the program having dropped any others (the core gave those back).
        self.frags = nr_frags.min(MAX_FRAGS as u32) as u8;
        if act == Action::Redirect {
            return Ran::RedirectFailed(self);
        }
        let (off, len) = (off as usize, len as usize);
        let total = len + self.frags().map(<[u8]>::len).sum::<usize>();
        // The core keeps a frame inside its buffer whatever the program
        // does; checked anyway, as `frame` relies on it.
        match off.checked_add(len) {
            Some(end) if end <= self.page.len() => Ran::Kept(
                self,
                Verdict {
                    act,
                    off,
                    len,
                    total,
                },
            ),
            _ => Ran::NotRun(self),
        }
    }

    /// The frame's part in the first buffer, as a [`Verdict`] of
    /// [`Self::run`] describes it; [`Self::frags`] holds the rest.
    pub fn frame(&self, v: &Verdict) -> &[u8] {
        // `run` makes only verdicts inside the buffer; anything else (a
        // verdict of another buffer) is nothing.
        if v.off
            .checked_add(v.len)
            .is_none_or(|end| end > self.page.len())
        {
            return &[];
        }
        let base = ffi_page_address(&self.page);
        // SAFETY: `off + len` is within the buffer (checked above), which
        // only this value accesses and which stays borrowed for the slice's
        // life.
        unsafe { core::slice::from_raw_parts(base.add(v.off), v.len) }
    }
}

impl Drop for XdpBuf {
    fn drop(&mut self) {
        self.release_frags();
    }
}

impl XdpBuf {
    /// Maps the frame a [`Verdict`] of [`Self::run`] describes, its part
    /// in the first buffer and its fragments, for `dev`'s parent to read
    /// (`XDP_TX`); the buffer back if a mapping failed.
    pub fn map_for_tx<T: Operations>(
        self,
        dev: &Device<T>,
        v: &Verdict,
    ) -> core::result::Result<XdpTxFrame, Self> {
        if v.len == 0 || v.off.saturating_add(v.len) > self.page.len() {
            return Err(self);
        }
        let mut parts = TxParts::new();
        let mut ok = true;
        let pieces = Iterator::chain(
            core::iter::once((self.page.as_raw(), v.off, v.len)),
            (0..usize::from(self.frags))
                .filter_map(|i| self.frag(i).map(|(p, off, len)| (p.as_ptr(), off, len))),
        );
        for (page, off, len) in pieces {
            let mut dma = 0;
            // SAFETY: the device is registered, its parent bound; the range
            // is inside a buffer of this value (checked above and by
            // `frag`), which only it accesses and which stays allocated
            // while mapped (the frame owns it).
            let r = unsafe {
                ffi::pagefill_xdp_tx_map(dev.as_raw(), page, off as u32, len as u32, &mut dma)
            };
            // SAFETY: mapped above as a page, for `dev`, to read, `len`
            // bytes.
            ok = r == 0 && unsafe { parts.push_mapped(dma, len as u32, true) };
            if !ok {
                if r == 0 {
                    // SAFETY: mapped above, never given to the device.
                    unsafe { ffi::pagefill_tx_unmap_frag(dev.as_raw(), dma, len as u32) };
                }
                break;
            }
        }
        if !ok {
            // SAFETY: the device never saw these mappings.
            unsafe { parts.unmap(dev) };
            return Err(self);
        }
        // INVARIANT: every part of the frame mapped above, for reading.
        Ok(XdpTxFrame {
            buf: core::mem::ManuallyDrop::new(self),
            parts,
        })
    }
}

/// A frame of an [`XdpBuf`] mapped for the device to read (`XDP_TX`). Like
/// a mapped skb, it is only given back by [`Self::unmap`], which is
/// `unsafe`; dropped mapped, it leaks and warns rather than recycle memory
/// the device may still read.
///
/// # Invariants
///
/// `parts` maps the frame in `buf`'s buffers, in order, for the parent of
/// the network device it was mapped for, to read; nothing writes the
/// buffers meanwhile.
pub struct XdpTxFrame {
    buf: core::mem::ManuallyDrop<XdpBuf>,
    parts: TxParts,
}

impl XdpTxFrame {
    /// The frame's parts, as (bus address, length), in order.
    pub fn parts(&self) -> impl Iterator<Item = (u64, u32)> + Clone + '_ {
        self.parts.iter()
    }

    /// The frame's length.
    pub fn len(&self) -> u32 {
        self.parts.bytes()
    }

    /// Whether the frame is empty (never: `map_for_tx` refuses that).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Unmaps the frame and gives back its buffers.
    ///
    /// # Safety
    ///
    /// The device does not read the frame any more: it reported it sent, it
    /// was reset, or it never saw the frame's descriptors.
    pub unsafe fn unmap<T: Operations>(self, dev: &Device<T>) -> XdpBuf {
        let mut this = core::mem::ManuallyDrop::new(self);
        // SAFETY: mapped for `dev`'s parent (type invariant); the device is
        // done (the caller's guarantee).
        unsafe { this.parts.unmap(dev) };
        // SAFETY: `buf` is taken once, and `this` is not dropped.
        unsafe { core::mem::ManuallyDrop::take(&mut this.buf) }
    }

    /// Gives up the frame for good: the device may still read it (a reset
    /// that failed). The mappings and the buffers stay.
    pub fn leak(self) {
        core::mem::forget(self);
    }
}

impl Drop for XdpTxFrame {
    fn drop(&mut self) {
        // Dropped without `unmap` or `leak`: a driver bug; the buffer is
        // leaked (`buf` is never dropped here), and a warning says so once.
        static WARNED: core::sync::atomic::AtomicBool = core::sync::atomic::AtomicBool::new(false);
        kernel::warn_on!(!WARNED.swap(true, Ordering::Relaxed));
    }
}

fn ffi_page_address(page: &PoolPage) -> *mut u8 {
    // SAFETY: a live pool page (its invariant); pool pages are never
    // highmem.
    unsafe { ffi::pagefill_page_address(page.as_raw()).cast() }
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

    /// Both sets.
    pub const fn with(self, o: Self) -> Self {
        Self(self.0 | o.0)
    }

    /// The `NETDEV_XDP_ACT_*` bits.
    pub(crate) fn bits(self) -> u32 {
        self.0
    }
}
