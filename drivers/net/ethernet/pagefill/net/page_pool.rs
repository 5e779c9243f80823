// SPDX-License-Identifier: GPL-2.0

//! Page pools: pages kept DMA-mapped for a device, recycled in place.
//!
//! C header: [`include/net/page_pool/helpers.h`](srctree/include/net/page_pool/helpers.h)

use core::{
    ptr::NonNull,
    sync::atomic::{AtomicBool, Ordering},
};

use kernel::{error::from_err_ptr, prelude::*};

use crate::ffi;
use crate::net::napi::{Napi, PollCtx};
use crate::net::netdev::{Device, Operations};

/// A page pool of buffers (2^order pages each) mapped for the device to
/// write; destroyed on drop (the core frees it once every buffer is back).
///
/// # Invariants
///
/// `pool` is a live pool made by `page_pool_create` that this value owns,
/// whose buffers are `buf_len` bytes.
pub struct PagePool {
    pool: NonNull<kernel::bindings::page_pool>,
    /// The NAPI instance whose poll alone allocates from the pool.
    napi: *const Napi,
    buf_len: usize,
}

// SAFETY: a pool may be created and destroyed on any thread; allocation,
// the one operation tied to a context, takes that context's proof.
unsafe impl Send for PagePool {}
// SAFETY: the only `&self` operations are `buf_len` (a plain read) and
// `alloc`, which needs a `PollCtx` of the pool's NAPI instance: allocations
// are therefore serialised by NAPI, as the pool's lockless cache requires.
unsafe impl Sync for PagePool {}

impl PagePool {
    /// Largest buffer order a pool serves (`PAGE_ALLOC_COSTLY_ORDER`: larger
    /// allocations fail too easily once memory is fragmented).
    pub const MAX_ORDER: u32 = 3;

    /// Creates a pool of `size` buffers of 2^`order` pages for `dev`'s DMA,
    /// consumed by `napi`.
    pub fn new<T: Operations>(dev: &Device<T>, napi: &Napi, size: u32, order: u32) -> Result<Self> {
        if order > Self::MAX_ORDER {
            return Err(EINVAL);
        }
        // SAFETY: `dev` is a registered device whose parent is the bound DMA
        // device; `napi` is pinned and lives in the device's private data.
        let pool = from_err_ptr(unsafe {
            ffi::pagefill_page_pool_create(dev.as_raw(), napi.as_raw_for_pool(), size, order)
        })?;
        // INVARIANT: created above with buffers of this size; `from_err_ptr`
        // ruled out errors.
        Ok(Self {
            pool: NonNull::new(pool).ok_or(ENOMEM)?,
            napi: core::ptr::from_ref(napi),
            buf_len: kernel::page::PAGE_SIZE << order,
        })
    }

    /// Bytes of each buffer.
    #[inline]
    pub fn buf_len(&self) -> usize {
        self.buf_len
    }

    pub(crate) fn as_raw(&self) -> *mut kernel::bindings::page_pool {
        self.pool.as_ptr()
    }

    /// Takes a buffer from the pool, DMA-mapped and synced for the device,
    /// in a poll of the NAPI instance the pool belongs to; `None` from any
    /// other instance's poll, in netpoll's (budget 0), or without memory.
    pub fn alloc(&self, ctx: &PollCtx<'_>) -> Option<PoolPage> {
        if !core::ptr::eq(ctx.napi(), self.napi) || ctx.budget() == 0 {
            return None;
        }
        // SAFETY: the pool is live (type invariant), and this is its NAPI
        // instance's poll, which serialises allocations.
        let raw = unsafe { ffi::pagefill_page_pool_dev_alloc_pages(self.pool.as_ptr()) };
        let page = NonNull::new(raw)?;
        // INVARIANT: a buffer of this pool, owned by us, that nobody else
        // accesses (fresh from the pool); nothing of it is synced for the CPU.
        Some(PoolPage {
            buf: PoolBuf {
                page,
                pool: self.pool,
                len: self.buf_len,
            },
            synced: 0,
        })
    }

    /// As [`Self::alloc`], for a buffer the device reads: `write` fills its
    /// first `len` bytes (clamped to the buffer), which are then synced for
    /// the device, and the buffer goes to the device as
    /// [`PoolPage::post`] gives it.
    pub fn alloc_written(
        &self,
        ctx: &PollCtx<'_>,
        len: usize,
        write: impl FnOnce(&mut [u8]),
    ) -> Option<DevicePage> {
        let page = self.alloc(ctx)?;
        let len = len.min(page.buf.len);
        // SAFETY: a live buffer of this pool, `buf.len` bytes of directly
        // mapped memory from its head page, fresh from the pool: nobody
        // else holds a reference to it (no skb fragment, and the device has
        // not been given it), so nothing else reads or writes it now.
        let bytes = unsafe {
            core::slice::from_raw_parts_mut(
                ffi::pagefill_page_address(page.buf.page.as_ptr()).cast::<u8>(),
                len,
            )
        };
        write(bytes);
        // SAFETY: a live buffer of a mapping pool, `len` bytes of it written
        // by the CPU above, for the device to read.
        unsafe {
            ffi::pagefill_page_pool_dma_sync_for_device(
                self.pool.as_ptr(),
                page.buf.page.as_ptr(),
                len as u32,
            )
        };
        Some(page.post())
    }
}

impl PagePool {
    /// Gives up the pool for good, with every buffer it handed out: for a
    /// device that may still write them (a reset that failed). Destroying
    /// the pool would unmap its buffers once their last reference went, and
    /// could hand their bus addresses to someone else; a leaked pool keeps
    /// them mapped. Process context, with the pool's NAPI instance stopped.
    pub fn leak(self) {
        // SAFETY: the pool is live (type invariant); the caller stopped its
        // NAPI instance, so no poll allocates or recycles meanwhile, and
        // this may sleep (process context). The pool then no longer points
        // at the instance, which may go away before the pool's pages.
        unsafe { ffi::page_pool_disable_direct_recycling(self.pool.as_ptr()) };
        core::mem::forget(self);
    }
}

impl Drop for PagePool {
    fn drop(&mut self) {
        // SAFETY: we own the pool; pages still out keep it alive in the core
        // until they return.
        unsafe { ffi::page_pool_destroy(self.pool.as_ptr()) };
    }
}

/// A pool buffer and the pool reference held to it, whoever owns it: what
/// [`PoolPage`] and [`DevicePage`] share.
///
/// # Invariants
///
/// `page` is the head page of a `len`-byte buffer from `pool`, and this
/// value stands for one pool reference to it; the pool outlives the buffer
/// (the core keeps a destroyed pool until its buffers return).
struct PoolBuf {
    page: NonNull<kernel::bindings::page>,
    pool: NonNull<kernel::bindings::page_pool>,
    len: usize,
}

impl PoolBuf {
    fn dma_addr(&self) -> u64 {
        // SAFETY: a live page of a mapping pool (type invariant).
        unsafe { ffi::pagefill_page_pool_get_dma_addr(self.page.as_ptr()) }
    }
}

/// A buffer taken from a [`PagePool`], owned by the CPU; this value's
/// reference returns to the pool on drop. skbs may hold references of their
/// own to parts of it (see [`crate::net::skb::SkBuff::add_pool_frag`]).
///
/// A buffer given to the device is a [`DevicePage`]: [`Self::post`] turns
/// one into the other, and only [`DevicePage::reclaim`], which is `unsafe`,
/// turns it back.
///
/// # Invariants
///
/// The device does not access the buffer, and its first `synced <=
/// buf.len` bytes are synced for the CPU and written by nobody while this
/// value or an skb fragment of it exists.
pub struct PoolPage {
    buf: PoolBuf,
    synced: usize,
}

// SAFETY: a pool page may be returned from any context.
unsafe impl Send for PoolPage {}
// SAFETY: shared access only reads the page's address and its synced
// contents, which nobody writes (type invariant).
unsafe impl Sync for PoolPage {}

impl PoolPage {
    /// The page's DMA address.
    pub fn dma_addr(&self) -> u64 {
        self.buf.dma_addr()
    }

    /// Bytes of the buffer.
    pub fn len(&self) -> usize {
        self.buf.len
    }

    /// Whether the buffer is empty (never: a buffer is at least a page).
    pub fn is_empty(&self) -> bool {
        self.buf.len == 0
    }

    pub(crate) fn as_raw(&self) -> *mut kernel::bindings::page {
        self.buf.page.as_ptr()
    }

    /// The pool the buffer belongs to.
    pub(crate) fn pool_raw(&self) -> *mut kernel::bindings::page_pool {
        self.buf.pool.as_ptr()
    }

    /// The bytes the device wrote, as [`DevicePage::reclaim`] synced them
    /// for the CPU (none for a buffer the device never had).
    pub fn data(&self) -> &[u8] {
        // SAFETY: a live buffer of this pool, `len` bytes of directly mapped
        // memory from its head page (pool pages are never highmem); its
        // first `synced <= len` bytes are synced for the CPU and nobody
        // writes them while this value exists (type invariant).
        unsafe {
            core::slice::from_raw_parts(
                ffi::pagefill_page_address(self.buf.page.as_ptr()).cast(),
                self.synced,
            )
        }
    }

    /// Gives the buffer to the device: the caller is about to publish its
    /// address where the device takes buffers from. The pool synced it for
    /// the device when it handed it out (`PP_FLAG_DMA_SYNC_DEV`), and again
    /// when it recycled it.
    pub fn post(self) -> DevicePage {
        let this = core::mem::ManuallyDrop::new(self);
        // INVARIANT: the reference moves from `this`, which is not dropped.
        DevicePage {
            buf: PoolBuf { ..this.buf },
        }
    }
}

impl Drop for PoolPage {
    fn drop(&mut self) {
        // SAFETY: we hold one pool reference to the buffer (type invariant)
        // and give it up here; the buffer recycles when the last goes, and
        // the device does not access it.
        unsafe {
            ffi::pagefill_page_pool_put_full_page(self.buf.pool.as_ptr(), self.buf.page.as_ptr())
        };
    }
}

/// A buffer from a [`PagePool`] that the device owns: posted where it takes
/// buffers from, or taken and being written. Only its DMA address is
/// readable. Dropping it leaks the buffer (and keeps its pool from being
/// freed) rather than recycle memory the device may still write: the way
/// back is [`Self::reclaim`].
///
/// # Invariants
///
/// The device may access the buffer at any time.
pub struct DevicePage {
    buf: PoolBuf,
}

// SAFETY: only the address is read; the reference may move between threads.
unsafe impl Send for DevicePage {}
// SAFETY: as above.
unsafe impl Sync for DevicePage {}

impl DevicePage {
    /// The page's DMA address, where the device takes it.
    pub fn dma_addr(&self) -> u64 {
        self.buf.dma_addr()
    }

    /// Takes the buffer back from the device, its first `written` bytes
    /// (clamped to the buffer) synced for the CPU to read.
    ///
    /// # Safety
    ///
    /// The device will not access the buffer again: it reported it written
    /// and let go, it was reset, or it never took the buffer and can no
    /// longer find it.
    pub unsafe fn reclaim(self, written: usize) -> PoolPage {
        let this = core::mem::ManuallyDrop::new(self);
        let synced = written.min(this.buf.len);
        if synced > 0 {
            // SAFETY: a live buffer of a mapping pool (`PoolBuf`'s
            // invariant), now the CPU's (the caller's guarantee).
            unsafe {
                ffi::pagefill_page_pool_dma_sync_for_cpu(
                    this.buf.pool.as_ptr(),
                    this.buf.page.as_ptr(),
                    synced as u32,
                )
            };
        }
        // INVARIANT: the reference moves from `this`; the device is done
        // with the buffer and its first `synced` bytes were synced above.
        PoolPage {
            buf: PoolBuf { ..this.buf },
            synced,
        }
    }

    /// Gives up the buffer for good: the device may still own it (a reset
    /// that failed). The page stays allocated and mapped, and the pool
    /// stays in the core's list of pools waiting for pages.
    pub fn leak(self) {
        core::mem::forget(self);
    }
}

impl Drop for DevicePage {
    fn drop(&mut self) {
        // Not recycled: the device may still write it. Driver code gives a
        // buffer back with `reclaim` once the device is done with it. A bug
        // that drops one drops many: one warning.
        static WARNED: AtomicBool = AtomicBool::new(false);
        kernel::warn_on!(!WARNED.swap(true, Ordering::Relaxed));
    }
}
