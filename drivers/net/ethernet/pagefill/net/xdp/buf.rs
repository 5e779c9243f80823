// SPDX-License-Identifier: GPL-2.0

//! The buffer an XDP program runs a frame in, and the frame it sends back.
//!
//! C header: [`include/net/xdp.h`](srctree/include/net/xdp.h)
//!
//! An [`XdpBuf`] is a page pool buffer the CPU alone owns, with the
//! headroom and tailroom XDP promises a program and, for a frame longer
//! than one buffer, more buffers of the pool as fragments. A receive queue
//! keeps one in an [`XdpRunner`] from frame to frame: [`XdpRunner::run`]
//! copies a frame in, runs a program over it and carries out a redirect,
//! and the buffer stays where it is unless the frame leaves with it. A
//! frame sent back (`XDP_TX`) is mapped as an [`XdpTxFrame`], given back
//! only by its `unsafe` `unmap`.
//!
//! This is the per-frame path of XDP: the accessors a frame passes through
//! are inlined, and the buffer is not moved per frame, since at the
//! kernel's opt-level "s" the calls and copies otherwise cost more than
//! XDP_DROP's own work.

use core::{mem::MaybeUninit, ptr::NonNull, sync::atomic::Ordering};

use super::{Action, Prog, RxQueue, HEADROOM, TAILROOM};
use crate::ffi;
use crate::net::napi::PollCtx;
use crate::net::netdev::{Device, Operations};
use crate::net::page_pool::{PagePool, PoolPage};
use crate::net::skb::{RxHash, TxMapping, TxParts};

/// What became of a frame [`XdpRunner::run`] was given.
#[derive(Clone, Copy, Debug)]
pub enum Ran {
    /// The program decided, and the frame is in the runner's buffer as it
    /// left it (any action but a redirect carried out).
    Kept(Verdict),
    /// The program redirected the frame, and the frame went, with its
    /// buffers, where it said (`XDP_REDIRECT`).
    Redirected,
    /// The program redirected the frame, and the target refused it: the
    /// frame is dropped, its buffer kept.
    RedirectFailed,
    /// Nothing ran: the frame is longer than a buffer takes alone and the
    /// program takes frames in one buffer only, or longer than a buffer and
    /// [`MAX_FRAGS`] more hold; the queue is not of the pool's; or the
    /// program left the frame outside its buffer.
    NotRun,
    /// Nothing ran: the pool gave no buffer for the frame.
    NoBuffer,
}

/// Most buffers after the first that a frame is run in (multi-buffer XDP):
/// a frame sent back takes a transmit descriptor for each.
pub const MAX_FRAGS: usize = ffi::pagefill_xdp_room_PAGEFILL_XDP_MAX_FRAGS as usize;

// A frame sent back goes out whole: its buffers are within the parts a
// frame is mapped in.
const _: () = assert!(MAX_FRAGS < crate::net::skb::TX_MAX_PARTS);

/// Where a frame is after its program ran, in an [`XdpRunner`]'s buffer.
/// Only [`XdpRunner::run`] makes one.
#[derive(Clone, Copy, Debug)]
pub struct Verdict {
    act: Action,
    /// The frame's offset in the buffer, after any head adjustment.
    off: usize,
    /// The length of the frame's part in the first buffer, after any head
    /// or tail adjustment.
    len: usize,
}

impl Verdict {
    /// What the program decided.
    #[inline]
    pub fn act(&self) -> Action {
        self.act
    }

    /// Whether the frame, in one buffer, is as it came in, `len` bytes:
    /// not moved, not cut nor grown.
    #[inline]
    pub fn unchanged(&self, len: usize) -> bool {
        self.off == HEADROOM && self.len == len
    }
}

/// A receive queue's XDP registration with the pool its buffers come from,
/// checked to be the pool the registration's memory model names: the core
/// returns a redirected frame's buffers there. Made once for a run of
/// frames, as the check holds for all of them.
#[derive(Clone, Copy)]
pub struct XdpQueue<'a> {
    rxq: &'a RxQueue,
    pool: &'a PagePool,
}

impl<'a> XdpQueue<'a> {
    /// `rxq` with `pool`, if `rxq` was registered with `pool`'s memory
    /// model.
    #[inline]
    pub fn new(rxq: &'a RxQueue, pool: &'a PagePool) -> Option<Self> {
        (rxq.pool.as_ptr() == pool.as_raw()).then_some(Self { rxq, pool })
    }
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
/// [`HEADROOM`] + [`TAILROOM`] bytes long and whose kernel address is
/// `base`. The first `frags` (at most [`MAX_FRAGS`]) fragments of the
/// `skb_shared_info` at its end are buffers of the same pool, of which this
/// value holds one reference each and which nobody else accesses either.
pub struct XdpBuf {
    page: PoolPage,
    base: NonNull<u8>,
    frags: u8,
}

// SAFETY: `base` is only the address of the buffer this value owns, as
// `page` is, which may move between threads; `&self` methods only read it.
unsafe impl Send for XdpBuf {}
// SAFETY: as above.
unsafe impl Sync for XdpBuf {}

impl XdpBuf {
    /// A buffer of `pool` for XDP, in a poll of the pool's NAPI instance;
    /// `None` where [`PagePool::alloc`] gives none.
    pub fn alloc(pool: &PagePool, ctx: &PollCtx<'_>) -> Option<Self> {
        let page = pool.alloc(ctx)?;
        if page.len() < HEADROOM + TAILROOM {
            return None;
        }
        // SAFETY: a live pool page (its invariant); pool pages are never
        // highmem.
        let base = NonNull::new(unsafe { ffi::pagefill_page_address(page.as_raw()) }.cast())?;
        // INVARIANT: fresh from the pool, so nobody else holds it; its
        // address; no fragments.
        Some(Self {
            page,
            base,
            frags: 0,
        })
    }

    /// Longest frame the buffer takes alone.
    #[inline]
    pub fn max_frame(&self) -> usize {
        // No wrap: the buffer is longer than both (type invariant).
        self.page.len().wrapping_sub(HEADROOM + TAILROOM)
    }

    /// Longest frame the buffer takes with [`MAX_FRAGS`] more of its pool.
    #[inline]
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
    /// first part at most.
    #[inline]
    fn release_frags(&mut self) {
        if self.frags != 0 {
            self.put_frags();
        }
    }

    #[cold]
    fn put_frags(&mut self) {
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

    /// [`XdpRunner::run`]'s work on its buffer, counting in `multi_buf` a
    /// frame run in several buffers. After [`Ran::Redirected`] the buffer
    /// belongs to the redirect's target: the caller forgets `self`.
    #[inline]
    fn run(
        &mut self,
        q: XdpQueue<'_>,
        prog: Prog<'_>,
        frame: &[u8],
        hash: RxHash,
        ctx: &PollCtx<'_>,
        multi_buf: &mut u64,
    ) -> Ran {
        self.release_frags();
        // The core returns a redirected frame's buffers to the pool the
        // queue's memory model names (`q`'s): they must be its.
        if self.page.pool_raw() != q.pool.as_raw() {
            return Ran::NotRun;
        }
        let pool = q.pool;
        // Written by `copy_frags` for a frame in several buffers only; the
        // core reads the first `nr_frags`.
        let mut frags = [const { MaybeUninit::<*mut kernel::bindings::page>::uninit() }; MAX_FRAGS];
        let mut frag_lens = [const { MaybeUninit::<u32>::uninit() }; MAX_FRAGS];
        let max = self.max_frame();
        let (first, n) = if frame.len() <= max {
            (frame, 0)
        } else {
            if frame.len() > self.max_frame_frags() || !prog.has_frags() {
                return Ran::NotRun;
            }
            let (first, rest) = frame.split_at(max);
            match Self::copy_frags(rest, self.page.len(), pool, ctx, &mut frags, &mut frag_lens) {
                Some(n) => {
                    *multi_buf = multi_buf.wrapping_add(1);
                    (first, n)
                }
                None => return Ran::NoBuffer,
            }
        };
        let mut f = ffi::pagefill_xdp_run_frame {
            frags: frags.as_ptr().cast(),
            frag_lens: frag_lens.as_ptr().cast(),
            off: HEADROOM as u32,
            len: first.len() as u32,
            nr_frags: n as u32,
            hash: hash.value(),
            rss_type: hash.rss_type(),
            redirect_err: 0,
        };
        // SAFETY: the frame's first part, `first.len()` bytes of another
        // object's memory (so no overlap), fits after the headroom (checked
        // above) in the buffer, which only this value accesses (type
        // invariant), where the helper copies it. `prog` is live for this
        // poll (its invariant) and `q`'s queue registered with the memory
        // model of the buffers' pool (checked above and by
        // `XdpQueue::new`); the program may read and write the buffer's
        // `len()` bytes (its frame size) and the `n <= MAX_FRAGS` fragment
        // buffers, whose entries `copy_frags` wrote and which nobody else
        // accesses, and the core may give fragments back to the pool (it
        // reports those left in `nr_frags`). This is a NAPI
        // poll (`Prog`'s lifetime is one), where the core's redirect state
        // lives until the poll flushes it.
        let act = unsafe {
            ffi::pagefill_xdp_run(
                prog.prog.as_ptr(),
                q.rxq.rxq.as_ptr(),
                self.page.as_raw(),
                self.page.len() as u32,
                first.as_ptr().cast(),
                &mut f,
            )
        };
        let act = Action::from_raw(act);
        if act == Action::Redirect && f.redirect_err == 0 {
            // The pool references this value held went with the frame: the
            // core gives the buffers back to the pool once the target is
            // done with them (`xdp_return_frame`). The caller forgets it.
            return Ran::Redirected;
        }
        // INVARIANT: the fragments the core left in the `skb_shared_info`,
        // the program having dropped any others (the core gave those back).
        self.frags = f.nr_frags.min(MAX_FRAGS as u32) as u8;
        if act == Action::Redirect {
            return Ran::RedirectFailed;
        }
        let (off, len) = (f.off as usize, f.len as usize);
        // The core keeps a frame inside its buffer whatever the program
        // does; checked anyway, as `frame` relies on it.
        match off.checked_add(len) {
            Some(end) if end <= self.page.len() => Ran::Kept(Verdict { act, off, len }),
            _ => Ran::NotRun,
        }
    }

    /// Copies `rest`, the part of a frame after its first buffer, into
    /// buffers of `pool` of `buf_len` bytes each, whose pages and lengths it
    /// writes to `frags` and `frag_lens`; how many it took, or `None` (and
    /// none taken) if the pool ran out or `rest` needs more than
    /// [`MAX_FRAGS`]. Each page's reference is the caller's.
    #[cold]
    fn copy_frags(
        mut rest: &[u8],
        buf_len: usize,
        pool: &PagePool,
        ctx: &PollCtx<'_>,
        frags: &mut [MaybeUninit<*mut kernel::bindings::page>; MAX_FRAGS],
        frag_lens: &mut [MaybeUninit<u32>; MAX_FRAGS],
    ) -> Option<usize> {
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
            slot.write(page.as_raw());
            slot_len.write(part.len() as u32);
            // The reference goes to the caller (the first buffer's
            // `skb_shared_info`, the invariant's `frags`).
            core::mem::forget(page);
            n += 1;
            rest = after;
        }
        if rest.is_empty() {
            return Some(n);
        }
        // The pool gave no buffer for the rest.
        for page in frags.iter().take(n) {
            // SAFETY: the first `n` entries were written above, each a
            // buffer of the pool whose reference was kept for the frame
            // (forgotten above), given back once.
            unsafe { ffi::pagefill_page_pool_put_full_page(pool.as_raw(), page.assume_init()) };
        }
        None
    }

    /// The frame's whole length, as a [`Verdict`] of this buffer's last run
    /// describes it: its part in the first buffer and its fragments.
    pub fn frame_len(&self, v: &Verdict) -> usize {
        self.frame(v).len() + self.frags().map(<[u8]>::len).sum::<usize>()
    }

    /// Whether the frame is in more than one buffer.
    #[inline]
    pub fn has_frags(&self) -> bool {
        self.frags != 0
    }

    /// The frame's part in the first buffer, as a [`Verdict`] of this
    /// buffer's last run describes it; [`Self::frags`] holds the rest.
    #[inline]
    pub fn frame(&self, v: &Verdict) -> &[u8] {
        // `run` makes only verdicts inside the buffer; anything else (a
        // verdict of another buffer) is nothing.
        if v.off
            .checked_add(v.len)
            .is_none_or(|end| end > self.page.len())
        {
            return &[];
        }
        // SAFETY: `off + len` is within the buffer at `base` (checked
        // above), which only this value accesses and which stays borrowed
        // for the slice's life.
        unsafe { core::slice::from_raw_parts(self.base.as_ptr().add(v.off), v.len) }
    }
}

impl Drop for XdpBuf {
    fn drop(&mut self) {
        self.release_frags();
    }
}

/// The buffer a receive queue runs its frames through XDP programs in,
/// kept from one frame to the next while programs drop, pass or abort
/// them: a frame sent back or redirected leaves with it, and the next
/// frame takes a new one from the pool.
#[derive(Default)]
pub struct XdpRunner {
    buf: Option<XdpBuf>,
    /// Frames run in more than one buffer since [`Self::take_multi_buf`].
    multi_buf: u64,
}

impl XdpRunner {
    /// A runner with no buffer yet.
    pub const fn new() -> Self {
        Self {
            buf: None,
            multi_buf: 0,
        }
    }

    /// How many frames ran in more than one buffer since the last call
    /// (counted where the rest of a frame is copied, off the path of a
    /// frame in one buffer).
    #[inline]
    pub fn take_multi_buf(&mut self) -> u64 {
        core::mem::take(&mut self.multi_buf)
    }

    /// Copies `frame` into the buffer after the headroom, and what does
    /// not fit into more buffers of `q`'s pool if `prog` takes fragments
    /// (`xdp.frags`), and runs `prog` on it, as a frame of `q`'s receive
    /// queue, in a poll `ctx` of the queue's NAPI instance. A frame the
    /// program redirects goes with its buffers; the poll must then end with
    /// [`super::flush_redirects`].
    /// `hash` is what the program's `bpf_xdp_metadata_rx_hash()` finds
    /// ([`RxHash::NONE`]: `-ENODATA`).
    #[inline]
    pub fn run(
        &mut self,
        q: XdpQueue<'_>,
        prog: Prog<'_>,
        frame: &[u8],
        hash: RxHash,
        ctx: &PollCtx<'_>,
    ) -> Ran {
        if self.buf.is_none() {
            self.buf = XdpBuf::alloc(q.pool, ctx);
        }
        let Some(buf) = self.buf.as_mut() else {
            return Ran::NoBuffer;
        };
        let ran = buf.run(q, prog, frame, hash, ctx, &mut self.multi_buf);
        if let Ran::Redirected = ran {
            // The buffer went with the frame (`run`'s contract).
            core::mem::forget(self.buf.take());
        }
        ran
    }

    /// The buffer of the last frame that [`Self::run`] kept.
    #[inline]
    pub fn buf(&self) -> Option<&XdpBuf> {
        self.buf.as_ref()
    }

    /// Takes the buffer, to send its frame (`XDP_TX`); the next frame runs
    /// in a new one.
    #[inline]
    pub fn take(&mut self) -> Option<XdpBuf> {
        self.buf.take()
    }

    /// Keeps `buf` for the next frame, its fragments back in the pool: the
    /// pool's buffers serve the device too.
    #[inline]
    pub fn put(&mut self, mut buf: XdpBuf) {
        buf.release_frags();
        self.buf = Some(buf);
    }

    /// Done with the last frame: its fragments go back to the pool now
    /// rather than at the next frame.
    #[inline]
    pub fn done(&mut self) {
        if let Some(buf) = self.buf.as_mut() {
            buf.release_frags();
        }
    }

    /// Gives the buffer back to its pool (the queue stops).
    pub fn clear(&mut self) {
        self.buf = None;
    }
}

impl XdpBuf {
    /// Gives the frame a [`Verdict`] of this buffer's last run describes, its
    /// part in the first buffer and its fragments, to `dev`'s parent to
    /// read (`XDP_TX`), through the pool's mappings; the buffer back if the
    /// pool maps for another device.
    pub fn map_for_tx<T: Operations>(
        self,
        dev: &Device<T>,
        v: &Verdict,
    ) -> core::result::Result<XdpTxFrame, Self> {
        if v.len == 0 || v.off.saturating_add(v.len) > self.page.len() {
            return Err(self);
        }
        let mut parts = TxParts::new();
        let pool = self.page.pool_raw();
        let mut ok = sync_part(dev, pool, &mut parts, self.page.as_raw(), v.off, v.len);
        for i in 0..usize::from(self.frags) {
            ok = ok
                && self.frag(i).is_some_and(|(page, off, len)| {
                    sync_part(dev, pool, &mut parts, page.as_ptr(), off, len)
                });
        }
        if !ok {
            // SAFETY: the device never saw these parts.
            unsafe { parts.unmap(dev) };
            return Err(self);
        }
        // INVARIANT: every part of the frame synced above for `dev`'s
        // parent to read, in the pool's mapping for it, which lasts as long
        // as the buffers are the frame's.
        Ok(XdpTxFrame {
            buf: core::mem::ManuallyDrop::new(self),
            parts,
        })
    }
}

/// Syncs `len` bytes at `off` of `page`, a buffer of `pool` that an
/// [`XdpBuf`] holds, for `dev`'s parent to read, as the next of `parts`,
/// in the pool's mapping; `false` if the pool maps for another device or
/// `parts` is full.
#[inline]
fn sync_part<T: Operations>(
    dev: &Device<T>,
    pool: *mut kernel::bindings::page_pool,
    parts: &mut TxParts,
    page: *mut kernel::bindings::page,
    off: usize,
    len: usize,
) -> bool {
    let (off, len) = (off as u32, len as u32);
    let mut dma = 0;
    // SAFETY: `dev` is registered, its parent bound; `page` is a buffer of
    // the live `pool`, which mapped it both ways when it handed it out
    // (`PP_FLAG_DMA_MAP`); `off + len` lies within it (its callers check).
    let r = unsafe { ffi::pagefill_xdp_tx_sync(dev.as_raw(), pool, page, off, len, &mut dma) };
    // SAFETY: the pool's mapping for `dev`'s parent (checked by the helper),
    // synced above to read; it lasts while the pool has the buffer, which
    // the frame holds.
    r == 0 && unsafe { parts.push_mapped(dma, len, TxMapping::Pool) }
}

/// A frame of an [`XdpBuf`] the device may read (`XDP_TX`), through the
/// page pool's mappings of its buffers. Like a mapped skb, it is only given
/// back by [`Self::unmap`], which is `unsafe`; dropped, it leaks and warns
/// rather than recycle memory the device may still read.
///
/// # Invariants
///
/// `parts` gives the frame in `buf`'s buffers, in order, to the parent of
/// the network device it was made for, to read, through the pool's
/// mappings of the buffers; nothing writes the buffers meanwhile.
pub struct XdpTxFrame {
    buf: core::mem::ManuallyDrop<XdpBuf>,
    parts: TxParts,
}

impl XdpTxFrame {
    /// The frame's parts, in order.
    #[inline]
    pub fn parts(&self) -> &TxParts {
        &self.parts
    }

    /// How many parts the frame is in.
    #[inline]
    pub fn nr_parts(&self) -> usize {
        self.parts.len()
    }

    /// The frame's length.
    #[inline]
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
    pub unsafe fn unmap<T: Operations>(self, _dev: &Device<T>) -> XdpBuf {
        let mut this = core::mem::ManuallyDrop::new(self);
        // The parts are the pool's mappings (type invariant), which stay
        // while the pool has the buffers: nothing to unmap.
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
