// SPDX-License-Identifier: GPL-2.0

//! AF_XDP zero-copy receive: an XSK buffer pool bound to one of the
//! device's queues, its buffers as the CPU and the device own them in turn,
//! and a frame's run through the queue's XDP program.
//!
//! C header: [`include/net/xdp_sock_drv.h`](srctree/include/net/xdp_sock_drv.h)
//!
//! The core hands the driver a pool at `XDP_SETUP_XSK_POOL` ([`XskPool`],
//! mapped for the device while it lives). The queue's poll takes buffers
//! from it a chunk list's worth at a time ([`XskBufs`], the CPU's: the
//! user-space program gave them in its fill ring), gives them to the device
//! ([`XskBufs::post`] makes [`DeviceXskBufs`], which only the `unsafe`
//! [`DeviceXskBufs::reclaim`] turns back), and runs each written one
//! through the program as an [`XskBuf`] ([`XskBuf::run`]), which redirects
//! it to its socket without a copy.

use core::{
    ptr::NonNull,
    sync::atomic::{AtomicBool, Ordering},
};

use kernel::{error::from_err_ptr, prelude::*};

use crate::ffi;
use crate::net::napi::{Napi, PollCtx};
use crate::net::netdev::{Device, Operations, Rtnl};
use crate::net::skb::{RxHash, SkBuff};
use crate::net::xdp::Prog;

/// An XSK buffer pool bound to one of the device's queues in zero-copy
/// mode, mapped for the device; unmapped on drop.
///
/// # Invariants
///
/// `pool` is a pool the core bound to a queue of the device this value was
/// made for, mapped for that device, and stays so while this value lives:
/// the core frees it only after the driver's unbind call returns, and the
/// driver drops every [`XskPool`] of a queue (and every buffer from it)
/// before it returns from that call.
pub struct XskPool {
    pool: NonNull<ffi::xsk_buff_pool>,
    room: u32,
    unaligned: bool,
    frags: bool,
}

// SAFETY: the pool may be used and unmapped from any thread; what the core
// allows only in the queue's poll takes a [`PollCtx`].
unsafe impl Send for XskPool {}
// SAFETY: shared access reads `room` and calls into the core with a poll's
// token, polls of one queue never overlapping.
unsafe impl Sync for XskPool {}

impl XskPool {
    /// Maps `pool`, which the core is binding to a queue of `dev`, for the
    /// device.
    ///
    /// # Safety
    ///
    /// `pool` is the pool of an `XDP_SETUP_XSK_POOL` bind of `dev` in
    /// progress, and the caller follows the type invariant.
    pub(crate) unsafe fn map<T: Operations>(
        dev: &Device<T>,
        _rtnl: &Rtnl<'_>,
        pool: NonNull<ffi::xsk_buff_pool>,
    ) -> Result<Self> {
        // SAFETY: a pool being bound to `dev` (the caller's guarantee),
        // whose parent is the DMA device.
        kernel::error::to_result(unsafe {
            ffi::pagefill_xsk_pool_dma_map(pool.as_ptr(), dev.as_raw())
        })?;
        // SAFETY: a live pool, mapped above.
        let room = unsafe { ffi::pagefill_xsk_pool_get_rx_frame_size(pool.as_ptr()) };
        // SAFETY: as above.
        let unaligned = unsafe { ffi::pagefill_xsk_pool_unaligned(pool.as_ptr()) };
        // SAFETY: as above.
        let frags = unsafe { ffi::pagefill_xsk_pool_frags(pool.as_ptr()) };
        // INVARIANT: bound and mapped; the caller keeps the rest.
        Ok(Self {
            pool,
            room,
            unaligned,
            frags,
        })
    }

    /// Whether the umem's buffers are unaligned chunks
    /// (`XDP_UMEM_UNALIGNED_CHUNK_FLAG`): each fill-ring address carries
    /// an offset of its own, which the program chose for the frame it
    /// expects there, in the ring's order.
    pub fn unaligned(&self) -> bool {
        self.unaligned
    }

    /// The bytes of a frame a buffer holds, from where the device writes.
    pub fn room(&self) -> u32 {
        self.room
    }

    /// Whether the pool's sockets take a frame in several buffers
    /// (`XDP_USE_SG`), up to the device's `xdp_zc_max_segs`.
    pub fn frags(&self) -> bool {
        self.frags
    }

    /// Tells the user-space program, if it asked to be told
    /// (`XDP_USE_NEED_WAKEUP`), whether the poll waits for it to give
    /// buffers and be woken (`on`), or polls on its own.
    pub fn set_need_wakeup(&self, _ctx: &PollCtx<'_>, on: bool) {
        // SAFETY: a live pool (type invariant), in the queue's poll.
        unsafe { ffi::pagefill_xsk_set_rx_need_wakeup(self.pool.as_ptr(), on) }
    }
}

/// A frame an AF_XDP socket queued for transmission in zero-copy mode.
pub struct XskTxFrame {
    /// Where the device reads it (the pool's mapping, synced for it).
    pub dma: u64,
    /// Its length.
    pub len: u32,
    /// Its first bytes (the destination address), 0 past its end.
    pub dst: [u8; 6],
    /// The frame goes on in the next one (a socket's frame in several
    /// buffers, `XDP_PKT_CONTD`).
    pub more: bool,
}

impl XskPool {
    /// Takes up to `max` buffers from the socket's TX ring, whole frames
    /// only, in the poll of the queue the pool is bound to, handing each to
    /// `queue`, which must queue it for the device: each is reported done,
    /// in order, by [`Self::tx_completed`]. Returns how many it took.
    pub fn tx_take(&self, _ctx: &PollCtx<'_>, max: u32, mut queue: impl FnMut(XskTxFrame)) -> u32 {
        // SAFETY: a live pool (type invariant); its TX ring has one
        // consumer, this queue's poll.
        let n = unsafe { ffi::pagefill_xsk_tx_take(self.pool.as_ptr(), max) };
        for i in 0..n {
            let mut f = XskTxFrame {
                dma: 0,
                len: 0,
                dst: [0; 6],
                more: false,
            };
            // SAFETY: `i` is below the count the take returned, whose
            // descriptors the pool holds until the next take.
            unsafe {
                ffi::pagefill_xsk_tx_desc(
                    self.pool.as_ptr(),
                    i,
                    &mut f.dma,
                    &mut f.len,
                    f.dst.as_mut_ptr(),
                    &mut f.more,
                )
            };
            queue(f);
        }
        n
    }

    /// Reports `n` more buffers taken by [`Self::tx_take`] done (sent, or
    /// dropped by a reset), in the order they were taken; their buffers go
    /// back to the socket's completion ring. From the queue's transmit
    /// cleanup, which its transmit lock serialises.
    pub fn tx_completed(&self, n: u32) {
        // SAFETY: a live pool (type invariant); the caller reports frames
        // it took, once each, one caller at a time.
        unsafe { ffi::pagefill_xsk_tx_completed(self.pool.as_ptr(), n) }
    }

    /// Asks the socket, if it asked to be asked (`XDP_USE_NEED_WAKEUP`), to
    /// wake the queue (`sendto()`) when it queues frames to send.
    pub fn set_tx_need_wakeup(&self, _ctx: &PollCtx<'_>) {
        // SAFETY: a live pool (type invariant), in the queue's poll.
        unsafe { ffi::pagefill_xsk_set_tx_need_wakeup(self.pool.as_ptr()) }
    }
}

impl Drop for XskPool {
    fn drop(&mut self) {
        // SAFETY: a live, mapped pool (type invariant) that no buffer of
        // the device's is taken from any more.
        unsafe { ffi::pagefill_xsk_pool_dma_unmap(self.pool.as_ptr()) }
    }
}

/// A buffer of an [`XskPool`] that the CPU owns; back to the pool on drop.
///
/// # Invariants
///
/// `xdp` is a buffer of a live pool, owned by this value, with `room`
/// bytes for a frame; the device does not access it.
pub struct XskBuf {
    xdp: NonNull<ffi::xdp_buff>,
    room: u32,
}

// SAFETY: a buffer may be given back from any context.
unsafe impl Send for XskBuf {}

/// What became of a frame [`XskFrame::run`] ran through the program.
pub enum XskVerdict {
    /// Redirected (to its socket, without a copy); the poll flushes the
    /// redirects before it ends.
    Redirected,
    /// For the stack: a copy, the buffer back in the pool.
    Pass(SkBuff),
    /// Sent back out of the device (a copy).
    Tx,
    /// Dropped by the program.
    Dropped,
    /// The program failed, or returned an action the kernel does not know.
    Aborted,
    /// A redirect or transmit that failed, or no memory for the copy.
    Failed,
}

impl XskBuf {
    /// Where the device writes the frame.
    pub fn dma_addr(&self) -> u64 {
        // SAFETY: a live buffer (type invariant).
        unsafe { ffi::pagefill_xsk_buff_xdp_get_dma(self.xdp.as_ptr()) }
    }

    /// The frame of the `len` bytes the device wrote, for [`XskFrame::run`];
    /// `None` (the buffer back in the pool) for no bytes or beyond the
    /// buffer's room.
    #[inline]
    pub fn frame(self, len: u32) -> Option<XskFrame> {
        if len == 0 || len > self.room {
            return None;
        }
        let this = core::mem::ManuallyDrop::new(self);
        // INVARIANT: the ownership moves to the frame, which holds `len`
        // bytes the device wrote, not set up yet.
        Some(XskFrame {
            xdp: this.xdp,
            room: this.room,
            unset: len,
        })
    }
}

/// A frame the device wrote into buffers of an [`XskPool`], for the queue's
/// XDP program: its first buffer, and the others as its fragments. Back to
/// the pool on drop.
///
/// # Invariants
///
/// `xdp` is a buffer of a live pool owned by this value, owning the
/// fragments added to it; the device accesses none of them. It holds the
/// bytes the device wrote (at most `room`): `unset` of them, not set up for
/// the program yet (set up with the first fragment, or at the run), or, if
/// `unset` is 0, set up.
pub struct XskFrame {
    xdp: NonNull<ffi::xdp_buff>,
    room: u32,
    unset: u32,
}

// SAFETY: a frame's buffers may be given back from any context.
unsafe impl Send for XskFrame {}

impl XskFrame {
    /// Adds `buf`, holding the frame's next `len` bytes, as its next
    /// fragment (the device's chunks of one frame); false if it cannot
    /// take more fragments or `len` is none or beyond the buffer's room
    /// (`buf` goes back to the pool).
    pub fn add_frag(&mut self, buf: XskBuf, len: u32) -> bool {
        if len == 0 || len > buf.room || buf.room != self.room {
            return false;
        }
        // SAFETY: `self.xdp` holds `self.unset` bytes not set up, or is set
        // up (0) (type invariant); `buf` is a buffer of the same pool (same
        // room) that the CPU owns, with `len` bytes within its room.
        let added = unsafe {
            ffi::pagefill_xsk_add_frag(self.xdp.as_ptr(), self.unset, buf.xdp.as_ptr(), len)
        };
        // INVARIANT: the helper set the first buffer up, whether or not
        // it added `buf`.
        self.unset = 0;
        if added {
            // INVARIANT: the frame owns it now.
            core::mem::forget(buf);
        }
        added
    }

    /// Runs `prog` (none: the frame goes to the stack) on the frame, with
    /// flow hash `hash`, in the poll `ctx`, and carries out its verdict.
    #[inline]
    pub fn run(self, _ctx: &PollCtx<'_>, prog: Option<Prog<'_>>, hash: RxHash) -> XskVerdict {
        let this = core::mem::ManuallyDrop::new(self);
        let mut skb = core::ptr::null_mut();
        // SAFETY: a live frame of the CPU's, holding `unset` bytes not set
        // up or set up (type invariant), given up here (the helper
        // consumes it in every case); a live program for the poll
        // (`Prog`'s invariant) or none; a NAPI poll (the token's), where
        // redirects are queued and GRO runs.
        let verdict = unsafe {
            ffi::pagefill_xsk_run(
                prog.map_or(core::ptr::null_mut(), |p| p.as_raw()),
                this.xdp.as_ptr(),
                this.unset,
                hash.value(),
                hash.rss_type(),
                &mut skb,
            )
        };
        match verdict {
            ffi::pagefill_xsk_verdict_PAGEFILL_XSK_REDIRECT => XskVerdict::Redirected,
            ffi::pagefill_xsk_verdict_PAGEFILL_XSK_PASS if !skb.is_null() => {
                // SAFETY: a new skb the helper made and gives up.
                XskVerdict::Pass(unsafe { SkBuff::from_raw(skb) })
            }
            ffi::pagefill_xsk_verdict_PAGEFILL_XSK_TX => XskVerdict::Tx,
            ffi::pagefill_xsk_verdict_PAGEFILL_XSK_DROP => XskVerdict::Dropped,
            ffi::pagefill_xsk_verdict_PAGEFILL_XSK_ABORTED => XskVerdict::Aborted,
            _ => XskVerdict::Failed,
        }
    }
}

impl Drop for XskFrame {
    fn drop(&mut self) {
        // SAFETY: a live frame we own and give back with its fragments
        // (type invariant).
        unsafe { ffi::pagefill_xsk_buff_free(self.xdp.as_ptr()) }
    }
}

impl Drop for XskBuf {
    fn drop(&mut self) {
        // SAFETY: a live buffer we own and give back (type invariant).
        unsafe { ffi::pagefill_xsk_buff_free(self.xdp.as_ptr()) }
    }
}

/// Most buffers an [`XskBufs`] holds: as many as a chunk list names.
pub const MAX_BUFS: usize = crate::abi::chunk_list::MAX_CHUNKS;

/// Room for the buffers of one chunk list.
type BufArray = [Option<NonNull<ffi::xdp_buff>>; MAX_BUFS];

/// Buffers of an [`XskPool`] that the CPU owns, kept together (the chunks
/// of one chunk list); those left go back to the pool on drop.
///
/// # Invariants
///
/// Every `Some` entry of `bufs` is a buffer of a live pool, owned by this
/// value, with `room` bytes for a frame; the device does not access them.
/// Entries from `len` on are `None`.
pub struct XskBufs {
    bufs: KBox<BufArray>,
    len: usize,
    room: u32,
}

// SAFETY: buffers may be given back from any context.
unsafe impl Send for XskBufs {}

impl XskBufs {
    /// An empty set for buffers of `pool`; allocates (atomic).
    pub fn new(pool: &XskPool) -> Result<Self> {
        // INVARIANT: no buffer.
        Ok(Self {
            bufs: KBox::new([None; MAX_BUFS], GFP_ATOMIC)?,
            len: 0,
            room: pool.room,
        })
    }

    /// Adds `buf` after the others; gives it back if the set is full or
    /// `buf` is of another room.
    pub fn push(&mut self, buf: XskBuf) -> core::result::Result<(), XskBuf> {
        if self.len == MAX_BUFS || buf.room != self.room {
            return Err(buf);
        }
        let buf = core::mem::ManuallyDrop::new(buf);
        // INVARIANT: the buffer's ownership moves into the set, at `len`.
        self.bufs[self.len] = Some(buf.xdp);
        self.len += 1;
        Ok(())
    }

    /// Adds up to `max` more buffers (within [`MAX_BUFS`]) that the
    /// user-space program gave `pool` (its fill ring), in the poll of the
    /// queue the pool is bound to; returns how many.
    pub fn fill(&mut self, pool: &XskPool, _ctx: &PollCtx<'_>, max: usize) -> usize {
        if pool.room != self.room {
            return 0;
        }
        let max = max.min(MAX_BUFS - self.len);
        // `Option<NonNull<T>>` is laid out as a pointer, `None` as null.
        let slots = self.bufs[self.len..]
            .as_mut_ptr()
            .cast::<*mut ffi::xdp_buff>();
        // SAFETY: a live pool (its invariant) whose fill ring has one
        // consumer, this queue's poll; `slots` has room for `max` pointers
        // and the helper writes at most that many.
        let n =
            unsafe { ffi::pagefill_xsk_buff_alloc_batch(pool.pool.as_ptr(), slots, max as u32) };
        let n = (n as usize).min(max);
        // INVARIANT: the helper handed over `n` buffers of the pool, after
        // the others; the rest stay null.
        self.len += n;
        n
    }

    /// Buffers taken into the set (some may have been taken out since).
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether it got none.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Where the device writes buffer `i`'s frame.
    pub fn dma_addr(&self, i: usize) -> Option<u64> {
        let xdp = (*self.bufs.get(i)?)?;
        // SAFETY: a live buffer (type invariant).
        Some(unsafe { ffi::pagefill_xsk_buff_xdp_get_dma(xdp.as_ptr()) })
    }

    /// Takes buffer `i` out of the set.
    pub fn take(&mut self, i: usize) -> Option<XskBuf> {
        let xdp = self.bufs.get_mut(i)?.take()?;
        // INVARIANT: the ownership moves out of the set.
        Some(XskBuf {
            xdp,
            room: self.room,
        })
    }

    /// Gives the buffers to the device: the caller is about to publish
    /// their addresses where the device takes buffers from.
    pub fn post(self) -> DeviceXskBufs {
        let this = core::mem::ManuallyDrop::new(self);
        // SAFETY: `this` is not dropped: its box moves out once.
        let bufs = unsafe { core::ptr::read(&this.bufs) };
        // INVARIANT: the ownership moves from `this`.
        DeviceXskBufs {
            bufs,
            len: this.len,
            room: this.room,
        }
    }
}

impl Drop for XskBufs {
    fn drop(&mut self) {
        for xdp in self.bufs[..self.len].iter_mut().filter_map(Option::take) {
            // SAFETY: a live buffer this set owns and gives back (type
            // invariant).
            unsafe { ffi::pagefill_xsk_buff_free(xdp.as_ptr()) }
        }
    }
}

/// Buffers of an [`XskPool`] that the device owns: named in a chunk list
/// it may take, or being written. Dropping them leaks them rather than
/// give the program memory the device may still write: the way back is
/// [`Self::reclaim`].
///
/// # Invariants
///
/// Every `Some` entry of `bufs` is a buffer of a live pool owned by this
/// value, which the device may access at any time.
pub struct DeviceXskBufs {
    bufs: KBox<BufArray>,
    len: usize,
    room: u32,
}

// SAFETY: only the value moves between threads.
unsafe impl Send for DeviceXskBufs {}
// SAFETY: shared access reads nothing of the buffers.
unsafe impl Sync for DeviceXskBufs {}

impl DeviceXskBufs {
    /// Takes the buffers back from the device (a frame's bytes are synced
    /// for the CPU when it is run).
    ///
    /// # Safety
    ///
    /// The device will not access any of the buffers again.
    pub unsafe fn reclaim(self) -> XskBufs {
        let this = core::mem::ManuallyDrop::new(self);
        // SAFETY: `this` is not dropped: its box moves out once.
        let bufs = unsafe { core::ptr::read(&this.bufs) };
        // INVARIANT: the ownership moves from `this`; the device is done
        // with the buffers (the caller's guarantee).
        XskBufs {
            bufs,
            len: this.len,
            room: this.room,
        }
    }

    /// Gives up the buffers for good: the device may still write them (a
    /// reset that failed, which also turned bus mastering off).
    pub fn leak(self) {
        core::mem::forget(self);
    }
}

impl Drop for DeviceXskBufs {
    fn drop(&mut self) {
        // As `DevicePage`'s: not given back, the device may still write
        // them.
        static WARNED: AtomicBool = AtomicBool::new(false);
        kernel::warn_on!(!WARNED.swap(true, Ordering::Relaxed));
    }
}

/// A receive queue as XDP programs see it in zero-copy mode
/// (`xdp_rxq_info` with the XSK pool's memory model), given to the pool
/// for its buffers.
///
/// # Invariants
///
/// `rxq` was made by `pagefill_xsk_rxq_new` and is owned by this value.
pub struct XskRxQueue {
    rxq: NonNull<ffi::xdp_rxq_info>,
}

// SAFETY: registered and unregistered in process context on any thread;
// programs only read it.
unsafe impl Send for XskRxQueue {}
// SAFETY: shared access reads nothing.
unsafe impl Sync for XskRxQueue {}

impl XskRxQueue {
    /// Registers queue `queue` of `dev`, polled by `napi`, whose frames are
    /// `pool`'s buffers. Process context (it allocates).
    pub fn new<T: Operations>(
        dev: &Device<T>,
        queue: u32,
        napi: &Napi,
        pool: &XskPool,
    ) -> Result<Self> {
        // SAFETY: the device is registered, `napi` pinned and `pool` live
        // (its invariant); the pool keeps the registration for its buffers,
        // and the queue drops this value before the pool goes.
        let rxq = from_err_ptr(unsafe {
            ffi::pagefill_xsk_rxq_new(
                dev.as_raw(),
                queue,
                napi.as_raw_for_pool(),
                pool.pool.as_ptr(),
            )
        })?;
        // INVARIANT: made above, not an error.
        Ok(Self {
            rxq: NonNull::new(rxq).ok_or(ENOMEM)?,
        })
    }
}

impl Drop for XskRxQueue {
    fn drop(&mut self) {
        // SAFETY: owned (type invariant); no poll runs a frame with it any
        // more: it lives in the queue's NAPI-owned state, dropped while NAPI
        // is stopped.
        unsafe { ffi::pagefill_xdp_rxq_free(self.rxq.as_ptr()) }
    }
}
