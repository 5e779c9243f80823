// SPDX-License-Identifier: GPL-2.0

//! Page pools: pages kept DMA-mapped for a device, recycled in place.
//!
//! C header: [`include/net/page_pool/helpers.h`](srctree/include/net/page_pool/helpers.h)

use core::ptr::NonNull;

use kernel::{error::from_err_ptr, prelude::*};

use crate::ffi;
use crate::net::napi::Napi;
use crate::net::netdev::{Device, Operations};

/// A page pool of order-0 pages mapped for the device to write; destroyed on
/// drop (the core frees it once every page is back).
///
/// # Invariants
///
/// `self.0` is a live pool made by `page_pool_create` that this value owns.
pub struct PagePool(NonNull<kernel::bindings::page_pool>);

// SAFETY: the pool's allocation and recycling are safe from any context the
// C API documents; ownership may move between threads.
unsafe impl Send for PagePool {}
// SAFETY: shared use only allocates pages, which the pool serialises.
unsafe impl Sync for PagePool {}

impl PagePool {
    /// Creates a pool of `size` pages for `dev`'s DMA, consumed by `napi`.
    pub fn new<T: Operations>(dev: &Device<T>, napi: &Napi, size: u32) -> Result<Self> {
        // SAFETY: `dev` is a registered device whose parent is the bound DMA
        // device; `napi` is pinned and lives in the device's private data.
        let pool = from_err_ptr(unsafe {
            ffi::pagefill_page_pool_create(dev.as_raw(), napi.as_raw_for_pool(), size)
        })?;
        // INVARIANT: created above; `from_err_ptr` ruled out errors.
        Ok(Self(NonNull::new(pool).ok_or(ENOMEM)?))
    }

    /// Takes a page from the pool, DMA-mapped and synced for the device.
    pub fn alloc(&self) -> Option<PoolPage> {
        // SAFETY: the pool is live (type invariant).
        let page =
            NonNull::new(unsafe { ffi::pagefill_page_pool_dev_alloc_pages(self.0.as_ptr()) })?;
        // INVARIANT: a page of this pool, owned by us.
        Some(PoolPage { page, pool: self.0 })
    }
}

impl Drop for PagePool {
    fn drop(&mut self) {
        // SAFETY: we own the pool; pages still out keep it alive in the core
        // until they return.
        unsafe { ffi::page_pool_destroy(self.0.as_ptr()) };
    }
}

/// A page taken from a [`PagePool`]; returns to it on drop.
///
/// # Invariants
///
/// `page` came from `pool` and this value holds its only reference; the
/// pool outlives the page (the core keeps a destroyed pool until its pages
/// return).
pub struct PoolPage {
    page: NonNull<kernel::bindings::page>,
    pool: NonNull<kernel::bindings::page_pool>,
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

    /// The first `len` bytes of the page as the device wrote them, synced
    /// for the CPU. `len` is clamped to the page.
    pub fn data(&self, len: usize) -> &[u8] {
        let len = len.min(kernel::page::PAGE_SIZE);
        // SAFETY: a live page of this pool (type invariant); the device
        // handed it back before the driver reads it.
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
        // SAFETY: we hold the page's only reference (type invariant).
        unsafe { ffi::pagefill_page_pool_put_full_page(self.pool.as_ptr(), self.page.as_ptr()) };
    }
}
