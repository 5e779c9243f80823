// SPDX-License-Identifier: GPL-2.0

//! The mailbox through which group changes reach a queue's NAPI: the receive
//! state is NAPI's own (`NapiOwned`), so whoever joins or leaves a group
//! posts the change here and the queue's next poll applies it.

use core::sync::atomic::{AtomicBool, Ordering};

use kernel::{new_spinlock, prelude::*, sync::SpinLock};

use crate::net::bh;
use crate::rings::MAX_JOINED;

/// Group changes for one queue's NAPI, posted by whoever joins or leaves
/// groups (process context, or another queue's poll), and a flag that lets
/// a poll see without the lock that there is nothing to read.
#[pin_data]
pub(crate) struct MailSlot {
    #[pin]
    mail: SpinLock<Mailbox>,
    /// Set under the lock by every post, cleared under it by the reader.
    pending: AtomicBool,
}

impl MailSlot {
    pub(crate) fn new() -> impl PinInit<Self> {
        pin_init!(Self {
            mail <- new_spinlock!(Mailbox::default()),
            pending: AtomicBool::new(false),
        })
    }

    /// Asks for `group` to be joined with node table `table`. Any context
    /// but hard interrupts.
    pub(crate) fn post_join(&self, table: usize, group: u16) {
        self.post(|mail| mail.post_join(table, group));
    }

    /// Asks for `group`, joined with node table `table`, to be left. Any
    /// context but hard interrupts.
    pub(crate) fn post_leave(&self, table: usize, group: u16) {
        self.post(|mail| mail.post_leave(table, group));
    }

    /// Forgets what was posted (the receive state starts anew).
    pub(crate) fn clear(&self) {
        bh::disabled(|| {
            *self.mail.lock() = Mailbox::default();
            self.pending.store(false, Ordering::Relaxed);
        });
    }

    /// Changes the mail under its lock, with bottom halves off: the poll
    /// that reads it runs in a softirq.
    fn post(&self, f: impl FnOnce(&mut Mailbox)) {
        bh::disabled(|| {
            let mut mail = self.mail.lock();
            f(&mut mail);
            self.pending.store(true, Ordering::Release);
        });
    }

    /// What was posted since the last call, if anything.
    pub(crate) fn take(&self) -> Option<Mailbox> {
        if !self.pending.load(Ordering::Acquire) {
            return None;
        }
        let mut mail = self.mail.lock();
        self.pending.store(false, Ordering::Relaxed);
        Some(core::mem::take(&mut *mail))
    }
}

/// The changes in a [`MailSlot`].
pub(crate) struct Mailbox {
    /// Tables whose group to join (bit per table).
    join: u64,
    /// Tables whose group to leave (bit per table).
    leave: u64,
    /// The group of each table named above.
    group: [u16; MAX_JOINED],
}

impl Default for Mailbox {
    fn default() -> Self {
        Self {
            join: 0,
            leave: 0,
            group: [0; MAX_JOINED],
        }
    }
}

impl Mailbox {
    fn post_join(&mut self, table: usize, group: u16) {
        if let Some(g) = self.group.get_mut(table) {
            *g = group;
            self.join |= 1 << table;
        }
    }

    fn post_leave(&mut self, table: usize, group: u16) {
        if let Some(g) = self.group.get_mut(table) {
            *g = group;
            self.leave |= 1 << table;
        }
    }

    /// The (table, group) pairs to join.
    pub(crate) fn joins(&self) -> impl Iterator<Item = (usize, u16)> + '_ {
        self.iter(self.join)
    }

    /// The (table, group) pairs to leave.
    pub(crate) fn leaves(&self) -> impl Iterator<Item = (usize, u16)> + '_ {
        self.iter(self.leave)
    }

    /// The (table, group) pairs of the tables in `mask`.
    fn iter(&self, mask: u64) -> impl Iterator<Item = (usize, u16)> + '_ {
        (0..MAX_JOINED)
            .filter(move |t| mask & (1 << t) != 0)
            .map(|t| (t, self.group[t]))
    }
}
