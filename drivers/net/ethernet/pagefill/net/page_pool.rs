// SPDX-License-Identifier: GPL-2.0

//! Page pools: pages kept DMA-mapped for a device, recycled in place.
//!
//! C header: [`include/net/page_pool/helpers.h`](srctree/include/net/page_pool/helpers.h)

use core::ptr::NonNull;

use kernel::{error::from_err_ptr, prelude::*};

use crate::ffi;
use crate::net::napi::Napi;
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
    buf_len: usize,
}

// SAFETY: the pool's allocation and recycling are safe from any context the
// C API documents; ownership may move between threads.
unsafe impl Send for PagePool {}
// SAFETY: shared use only allocates pages, which the pool serialises.
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
            buf_len: kernel::page::PAGE_SIZE << order,
        })
    }

    /// Bytes of each buffer.
    pub fn buf_len(&self) -> usize {
        self.buf_len
    }

    /// Takes a buffer from the pool, DMA-mapped and synced for the device.
    pub fn alloc(&self) -> Option<PoolPage> {
        // SAFETY: the pool is live (type invariant).
        let page =
            NonNull::new(unsafe { ffi::pagefill_page_pool_dev_alloc_pages(self.pool.as_ptr()) })?;
        // INVARIANT: a buffer of this pool, owned by us.
        Some(PoolPage {
            page,
            pool: self.pool,
            len: self.buf_len,
        })
    }
}

impl Drop for PagePool {
    fn drop(&mut self) {
        // SAFETY: we own the pool; pages still out keep it alive in the core
        // until they return.
        unsafe { ffi::page_pool_destroy(self.pool.as_ptr()) };
    }
}

/// A buffer taken from a [`PagePool`]; this value's reference returns to
/// the pool on drop. skbs may hold references of their own to parts of it
/// (see [`crate::net::skb::SkBuff::add_pool_frag`]).
///
/// # Invariants
///
/// `page` is the head page of a `len`-byte buffer from `pool`, and this
/// value holds one pool reference to it; the pool outlives the buffer (the
/// core keeps a destroyed pool until its buffers return).
pub struct PoolPage {
    page: NonNull<kernel::bindings::page>,
    pool: NonNull<kernel::bindings::page_pool>,
    len: usize,
}

// SAFETY: a pool page may be returned from any context.
unsafe impl Send for PoolPage {}
// SAFETY: shared access only reads the page's address and contents.
unsafe impl Sync for PoolPage {}

impl PoolPage {
    /// The page's DMA address, to hand to the device.
    pub fn dma_addr(&self) -> u64 {
        // SAFETY: a live page of a mapping pool (type invariant).
        unsafe { ffi::pagefill_page_pool_get_dma_addr(self.page.as_ptr()) }
    }

    /// Bytes of the buffer.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the buffer is empty (never: a buffer is at least a page).
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    pub(crate) fn as_raw(&self) -> *mut kernel::bindings::page {
        self.page.as_ptr()
    }

    /// The first `len` bytes of the buffer as the device wrote them, synced
    /// for the CPU. `len` is clamped to the buffer.
    pub fn data(&self, len: usize) -> &[u8] {
        let len = len.min(self.len);
        // SAFETY: a live buffer of this pool, `self.len` bytes of directly
        // mapped memory from its head page (type invariant; pool pages are
        // never highmem); the device handed it back before the driver reads
        // it, and nobody writes it while references to it exist.
        unsafe {
            ffi::pagefill_page_pool_dma_sync_for_cpu(
                self.pool.as_ptr(),
                self.page.as_ptr(),
                len as u32,
            );
            core::slice::from_raw_parts(ffi::pagefill_page_address(self.page.as_ptr()).cast(), len)
        }
    }
}

impl Drop for PoolPage {
    fn drop(&mut self) {
        // SAFETY: we hold one pool reference to the buffer (type invariant)
        // and give it up here; the buffer recycles when the last goes.
        unsafe { ffi::pagefill_page_pool_put_full_page(self.pool.as_ptr(), self.page.as_ptr()) };
    }
}
