// SPDX-License-Identifier: GPL-2.0

//! Receive coalescing: how long the device lets a partly filled buffer
//! wait before it writes it (its coalescing timer). Each queue pair has its
//! own timer (minor version 7), fixed by ethtool (`rx-usecs`, for all
//! queues or `--per-queue`) or, with `adaptive-rx`, chosen by the kernel's
//! `net_dim()` from the queue's interrupts, frames and bytes. The queue's
//! poll applies either as it completes; the device's registers are
//! written only when the value changes.

use core::sync::atomic::{AtomicBool, AtomicU32, Ordering};

use crate::net::dim::Dim;
use crate::net::napi::PollCtx;

/// A queue pair's coalescing as ethtool set it, and the timer its poll
/// last gave the device. Read and written from any context.
pub(crate) struct QueueCoalesce {
    /// The fixed timer, microseconds: in force while `adaptive` is off.
    usecs: AtomicU32,
    /// `net_dim()` chooses the timer.
    adaptive: AtomicBool,
    /// The timer the device holds for the queue, as last applied.
    current: AtomicU32,
}

impl QueueCoalesce {
    pub(crate) const fn new(usecs: u32) -> Self {
        Self {
            usecs: AtomicU32::new(usecs),
            adaptive: AtomicBool::new(false),
            current: AtomicU32::new(usecs),
        }
    }

    /// Sets the fixed timer and whether `net_dim()` chooses instead; the
    /// queue's next poll applies it.
    pub(crate) fn set(&self, usecs: u32, adaptive: bool) {
        self.usecs.store(usecs, Ordering::Relaxed);
        self.adaptive.store(adaptive, Ordering::Relaxed);
    }

    /// The fixed timer.
    pub(crate) fn usecs(&self) -> u32 {
        self.usecs.load(Ordering::Relaxed)
    }

    /// Whether `net_dim()` chooses the timer.
    pub(crate) fn adaptive(&self) -> bool {
        self.adaptive.load(Ordering::Relaxed)
    }

    /// The timer the device holds for the queue.
    pub(crate) fn current(&self) -> u32 {
        self.current.load(Ordering::Relaxed)
    }

    /// The device was given `usecs` for the queue other than by its poll
    /// (at open, or by ethtool).
    pub(crate) fn applied(&self, usecs: u32) {
        self.current.store(usecs, Ordering::Relaxed);
    }
}

/// A queue's moderation, its poll's own: `net_dim()`'s state, the
/// interrupts counted for it, and the timer last applied.
pub(crate) struct Moderation {
    dim: Option<Dim>,
    /// Polls that completed (each one interrupt), wrapping.
    events: u16,
    /// The timer the device holds for the queue.
    applied: u32,
    /// The timer applied is `dim`'s choice.
    following: bool,
}

impl Moderation {
    pub(crate) const fn new() -> Self {
        Self {
            dim: None,
            events: 0,
            applied: 0,
            following: false,
        }
    }

    /// The queue opened with the device holding `usecs` for it; `dim`
    /// becomes its `net_dim()` state if it has none yet (kept across
    /// restarts: what it learnt still holds). Returns `dim` if unused, to
    /// be dropped in process context.
    pub(crate) fn start(&mut self, dim: Option<Dim>, usecs: u32) -> Option<Dim> {
        self.applied = usecs;
        self.following = false;
        if self.dim.is_some() {
            return dim;
        }
        self.dim = dim;
        None
    }

    /// In the queue's poll `ctx`, as it completes (an interrupt comes
    /// next), with the queue's `packets` and `bytes` so far: the timer to
    /// give the device if it changes, from `c`, or from `net_dim()` if
    /// adaptive.
    pub(crate) fn poll(
        &mut self,
        ctx: &PollCtx<'_>,
        c: &QueueCoalesce,
        packets: u64,
        bytes: u64,
    ) -> Option<u32> {
        let want = match (c.adaptive(), self.dim.as_mut()) {
            (true, Some(dim)) => {
                self.events = self.events.wrapping_add(1);
                let chosen = dim.sample(ctx, self.events, packets, bytes);
                match chosen {
                    Some(usecs) => usecs,
                    None if self.following => return None,
                    None => dim.usecs(),
                }
            }
            _ => c.usecs(),
        };
        self.following = c.adaptive() && self.dim.is_some();
        if want == self.applied {
            return None;
        }
        self.applied = want;
        c.applied(want);
        Some(want)
    }
}
