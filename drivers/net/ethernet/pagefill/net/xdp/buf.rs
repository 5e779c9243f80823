// SPDX-License-Identifier: GPL-2.0

//! The buffer an XDP program runs a frame in, and the frame it sends back.
//!
//! C header: [`include/net/xdp.h`](srctree/include/net/xdp.h)
//!
//! An [`XdpBuf`] is a page pool buffer the CPU alone owns, with the
//! headroom and tailroom XDP promises a program and, for a frame longer
//! than one buffer, more buffers of the pool as fragments; [`XdpBuf::run`]
//! runs a program over it and carries out a redirect. A frame sent back
//! (`XDP_TX`) is mapped as an [`XdpTxFrame`], given back only by its
//! `unsafe` `unmap`.

use core::{ptr::NonNull, sync::atomic::Ordering};

use super::{Action, Prog, RxQueue, HEADROOM, TAILROOM};
use crate::ffi;
use crate::net::napi::PollCtx;
use crate::net::netdev::{Device, Operations};
use crate::net::page_pool::{PagePool, PoolPage};
use crate::net::skb::{RxHash, TxParts};

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
