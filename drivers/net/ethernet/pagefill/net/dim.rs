// SPDX-License-Identifier: GPL-2.0

//! Dynamic interrupt moderation: the kernel's `net_dim()` choosing a
//! receive queue's coalescing time from its NAPI counts.
//!
//! C header: [`include/linux/dim.h`](srctree/include/linux/dim.h)

use core::ptr::NonNull;

use kernel::prelude::*;

use crate::ffi;
use crate::net::napi::PollCtx;

/// One queue's moderation state: the counts of its last samples and the
/// profile `net_dim()` chose, among its receive profiles measured from a
/// completion.
///
/// # Invariants
///
/// `dim` is a live `struct dim` from `pagefill_dim_new()`, owned by this
/// value and freed on drop.
pub struct Dim {
    dim: NonNull<ffi::dim>,
}

// SAFETY: the state is only touched through `&mut self` (or read through
// `&self`), and `net_dim()`'s work item, which touches nothing, may run on
// any CPU; it may be freed from any thread in process context.
unsafe impl Send for Dim {}

impl Dim {
    /// A new state at `net_dim()`'s default profile. Process context.
    pub fn new() -> Result<Self> {
        // SAFETY: no precondition but process context (the allocation).
        let dim = unsafe { ffi::pagefill_dim_new() };
        // INVARIANT: a new state from the allocator, ours.
        Ok(Self {
            dim: NonNull::new(dim).ok_or(ENOMEM)?,
        })
    }

    /// Gives `net_dim()` the queue's counts in its poll `ctx`: `events`
    /// interrupts, `packets` and `bytes` received (counted from any start,
    /// wrapping). Returns the coalescing time of the profile it chose, if
    /// it chose another: the caller applies it.
    pub fn sample(
        &mut self,
        _ctx: &PollCtx<'_>,
        events: u16,
        packets: u64,
        bytes: u64,
    ) -> Option<u32> {
        let mut usecs = 0;
        // SAFETY: a live state (type invariant), with one caller: `&mut
        // self`.
        let chosen = unsafe {
            ffi::pagefill_dim_sample(self.dim.as_ptr(), events, packets, bytes, &mut usecs)
        };
        chosen.then_some(usecs)
    }

    /// The coalescing time of the present profile, in microseconds.
    pub fn usecs(&self) -> u32 {
        // SAFETY: a live state (type invariant), only read.
        unsafe { ffi::pagefill_dim_usecs(self.dim.as_ptr()) }
    }
}

impl Drop for Dim {
    fn drop(&mut self) {
        // SAFETY: a live state we own (type invariant), not used again.
        unsafe { ffi::pagefill_dim_free(self.dim.as_ptr()) }
    }
}
