// SPDX-License-Identifier: GPL-2.0

//! Bottom halves.
//!
//! C header: [`include/linux/bottom_half.h`](srctree/include/linux/bottom_half.h)
//!
//! State that NAPI (a softirq) and process context share is locked with
//! softirqs disabled in process context, as `spin_lock_bh` does in C; lockdep
//! insists, and rightly: a softirq taking the lock on the CPU that holds it
//! would deadlock.

use crate::ffi;

/// Runs `f` with softirqs disabled on this CPU.
pub fn disabled<R>(f: impl FnOnce() -> R) -> R {
    // SAFETY: always allowed outside hard interrupt context, and paired with
    // the enable below on every path (the kernel does not unwind).
    unsafe { ffi::pagefill_local_bh_disable() };
    let r = f();
    // SAFETY: pairs with the disable above.
    unsafe { ffi::pagefill_local_bh_enable() };
    r
}
