// SPDX-License-Identifier: GPL-2.0

//! Socket buffers.
//!
//! C header: [`include/linux/skbuff.h`](srctree/include/linux/skbuff.h)

use core::ptr::NonNull;

use kernel::prelude::*;

use crate::ffi;
use crate::net::netdev::{Device, Operations};

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
}

impl Drop for SkBuff {
    fn drop(&mut self) {
        // SAFETY: we own the skb (type invariant); this context may be any,
        // which `dev_kfree_skb_any` handles.
        unsafe { ffi::pagefill_dev_kfree_skb_any(self.as_raw()) }
    }
}
