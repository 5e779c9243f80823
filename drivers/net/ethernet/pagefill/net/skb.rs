// SPDX-License-Identifier: GPL-2.0

//! Socket buffers.
//!
//! C header: [`include/linux/skbuff.h`](srctree/include/linux/skbuff.h)

use core::ptr::NonNull;

use crate::ffi;

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
