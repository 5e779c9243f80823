// SPDX-License-Identifier: GPL-2.0

//! Socket buffers.
//!
//! C header: [`include/linux/skbuff.h`](srctree/include/linux/skbuff.h)

use core::ptr::NonNull;

use kernel::{error::to_result, prelude::*};

use crate::ffi;
use crate::net::netdev::{Device, Operations};
use crate::net::page_pool::PoolPage;

/// An owned socket buffer; freed on drop.
///
/// # Invariants
///
/// `self.0` is a valid `sk_buff` that this value owns exclusively.
pub struct SkBuff(NonNull<kernel::bindings::sk_buff>);

// SAFETY: an owned skb may be handed to and freed from any thread.
unsafe impl Send for SkBuff {}

impl SkBuff {
    /// Takes ownership of `skb`.
    ///
    /// # Safety
    ///
    /// `skb` must be a valid socket buffer that the caller owns and gives up.
    pub(crate) unsafe fn from_raw(skb: *mut kernel::bindings::sk_buff) -> Self {
        // INVARIANT: valid and owned, by the caller's guarantee; a valid skb
        // pointer is not null.
        // SAFETY: as above.
        Self(unsafe { NonNull::new_unchecked(skb) })
    }

    /// Gives up ownership, returning the raw pointer.
    pub(crate) fn into_raw(self) -> *mut kernel::bindings::sk_buff {
        let p = self.0.as_ptr();
        core::mem::forget(self);
        p
    }

    fn as_raw(&self) -> *mut kernel::bindings::sk_buff {
        self.0.as_ptr()
    }

    /// Bytes of the frame, head and fragments.
    pub fn len(&self) -> u32 {
        // SAFETY: the skb is valid (type invariant); `len` is a plain field.
        unsafe { (*self.as_raw()).len }
    }

    /// Appends `data` to the linear part. The skb must have been allocated
    /// with room for it (see [`crate::net::napi::Napi::alloc_skb`]).
    pub fn put_data(&mut self, data: &[u8]) -> Result {
        // SAFETY: the skb is valid and ours (type invariant).
        let tailroom = unsafe { ffi::pagefill_skb_tailroom(self.as_raw()) };
        if usize::try_from(tailroom).map_or(true, |t| t < data.len()) {
            return Err(EINVAL);
        }
        // SAFETY: checked above that the data fits the tailroom.
        unsafe {
            ffi::pagefill_skb_put_data(self.as_raw(), data.as_ptr().cast(), data.len() as u32)
        };
        Ok(())
    }

    /// Sets the protocol from the Ethernet header and strips it, as a
    /// received frame on `dev` needs before it goes to the stack.
    pub fn eth_type_trans<T: Operations>(&mut self, dev: &Device<T>) {
        // SAFETY: the skb is ours and holds at least an Ethernet header
        // (the receive path checks the length); `dev` is registered.
        unsafe { ffi::pagefill_skb_eth_type_trans(self.as_raw(), dev.as_raw()) }
    }

    /// Whether the frame is empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The transmit queue the stack picked for the frame.
    pub fn queue_mapping(&self) -> u16 {
        // SAFETY: the skb is valid (type invariant).
        unsafe { ffi::pagefill_skb_queue_mapping(self.as_raw()) }
    }

    /// The linear part of the frame (all of it once linearised).
    pub fn head(&self) -> &[u8] {
        let mut len = 0;
        // SAFETY: the skb is ours (type invariant); its linear part is
        // `len` readable bytes at the returned address while we hold it.
        unsafe {
            let data = ffi::pagefill_skb_head(self.as_raw(), &mut len);
            core::slice::from_raw_parts(data, len as usize)
        }
    }

    /// Appends bytes `range` of `buf` as the skb's next fragment, without a
    /// copy. The skb takes a pool reference of its own to the buffer and is
    /// marked for page_pool recycling, so the buffer goes back to its pool
    /// when the last skb holding part of it is freed. `truesize` is the
    /// memory the fragment accounts for (at least its length).
    pub fn add_pool_frag(
        &mut self,
        buf: &PoolPage,
        range: core::ops::Range<usize>,
        truesize: u32,
    ) -> Result {
        if range.start > range.end || range.end > buf.len() {
            return Err(EINVAL);
        }
        let len = u32::try_from(range.end - range.start)?;
        let off = u32::try_from(range.start)?;
        if truesize < len {
            return Err(EINVAL);
        }
        // SAFETY: the skb is ours (type invariant); `buf` is a live pool
        // buffer and the fragment lies inside it (checked above); the helper
        // takes the reference the fragment needs before attaching it.
        to_result(unsafe {
            ffi::pagefill_skb_add_pool_frag(self.as_raw(), buf.as_raw(), off, len, truesize)
        })
    }
}

impl SkBuff {
    /// Makes the frame one linear buffer (pulls the fragments in).
    pub fn linearize(&mut self) -> Result {
        // SAFETY: the skb is ours (type invariant).
        to_result(unsafe { ffi::pagefill_skb_linearize(self.as_raw()) })
    }

    /// Maps the linear frame for `dev`'s device to read. On failure the skb
    /// comes back unmapped.
    pub fn map_for_tx<T: Operations>(self, dev: &Device<T>) -> Result<TxMapped, (Error, Self)> {
        let mut dma = 0;
        let len = self.len();
        // SAFETY: the skb is ours and linear (callers linearize first; a
        // non-linear skb maps only its head, and `len` then covers more than
        // the mapping, which `TxMapped` would hand to the device: refuse it).
        // SAFETY: `dev` is registered; its parent is the bound DMA device.
        if unsafe { ffi::pagefill_skb_is_nonlinear(self.as_raw()) } {
            return Err((EINVAL, self));
        }
        // SAFETY: as above.
        let ret = unsafe { ffi::pagefill_tx_map(dev.as_raw(), self.as_raw(), &mut dma) };
        if ret != 0 {
            return Err((Error::from_errno(ret), self));
        }
        // INVARIANT: mapped just now, `len` bytes at `dma`.
        Ok(TxMapped {
            skb: core::mem::ManuallyDrop::new(self),
            dma,
            len,
        })
    }
}

/// An skb whose linear data is mapped for the device to read.
///
/// # Invariants
///
/// `len` bytes of `skb`'s data are mapped at `dma` for the parent device of
/// the network device they were mapped for.
pub struct TxMapped {
    skb: core::mem::ManuallyDrop<SkBuff>,
    dma: u64,
    len: u32,
}

impl TxMapped {
    /// The DMA address of the frame.
    pub fn dma_addr(&self) -> u64 {
        self.dma
    }

    /// The frame's length.
    pub fn len(&self) -> u32 {
        self.len
    }

    /// Whether the frame is empty.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Unmaps the frame from `dev` (the device it was mapped for) and frees
    /// the skb.
    pub fn unmap<T: Operations>(mut self, dev: &Device<T>) {
        // SAFETY: mapped for `dev`'s parent with these address and length
        // (type invariant); the device is done with it (the caller saw its
        // completion or reset the device).
        unsafe { ffi::pagefill_tx_unmap(dev.as_raw(), self.dma, self.len) };
        // SAFETY: taken once; `self` is forgotten below so `Drop` does not
        // see the taken value.
        let skb = unsafe { core::mem::ManuallyDrop::take(&mut self.skb) };
        core::mem::forget(self);
        drop(skb);
    }
}

impl Drop for TxMapped {
    fn drop(&mut self) {
        // Dropped without `unmap`: a driver bug. Freeing memory the device
        // may still read is worse than leaking it, so leak (kmemleak and the
        // DMA API debugging will say so) and warn.
        pr_warn!("pagefill: a mapped transmit frame was dropped without unmapping\n");
    }
}

impl Drop for SkBuff {
    fn drop(&mut self) {
        // SAFETY: we own the skb (type invariant); this context may be any,
        // which `dev_kfree_skb_any` handles.
        unsafe { ffi::pagefill_dev_kfree_skb_any(self.as_raw()) }
    }
}
