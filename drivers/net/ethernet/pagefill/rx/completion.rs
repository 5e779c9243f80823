// SPDX-License-Identifier: GPL-2.0

//! The receive completions: each checked against what the driver posted
//! before anything in it is believed, then acted on (a buffer written, a
//! buffer claimed, a stream starved, a group's end). A child of `rx`, whose
//! stream state it reads and changes.

use crate::abi::{self, rx_flags, rx_kind};
use crate::net::napi::PollCtx;
use crate::net::netdev::{Device, Operations};
use crate::rings::{Entry, RawCqe, Rings};
use crate::rx_mailbox::MailSlot;
use crate::rx_skb::Split;
use crate::rx_slot::{CpuBuf, Flushed, NotTaken};
use crate::rx_stats::RxStats;
use crate::rx_xdp::XdpPoll;

use super::{RxState, STUCK_STARVATIONS};

impl RxState {
    /// Handles one completion.
    pub(super) fn completion<T: Operations>(
        &mut self,
        dev: &Device<T>,
        ctx: &PollCtx<'_>,
        xdp: Option<&XdpPoll<'_>>,
        rings: &Rings,
        mailbox: &MailSlot,
        cqe: &RawCqe,
    ) {
        let node = usize::from(cqe.node());
        // A group joined or left since this poll read its mail is in the
        // mailbox: the join or leave was posted before the master entry
        // changed, and so before the device could name the group.
        let known = |this: &Self| {
            this.groups
                .iter()
                .any(|g| g.id == cqe.group() && (cqe.kind() != rx_kind::FLUSHED || g.leaving))
        };
        if !known(self) {
            self.read_mail(mailbox);
        }
        let gi = self.groups.iter().position(|g| g.id == cqe.group());
        // The device steers any stream to any queue, each through the
        // queue's own column of entries: a completion names one of this
        // queue's.
        let (Some(gi), true, true) = (gi, node < abi::MAX_NODES, cqe.queue() == self.queue) else {
            // A left group's marker names no stream: node 0 may be steered
            // elsewhere.
            match Flushed::check(cqe) {
                Some(marker) if cqe.queue() == self.queue => self.flushed(rings, &marker),
                _ => self.bad_completion(),
            }
            return;
        };
        let bit = 1u32 << node;
        match cqe.kind() {
            rx_kind::CLAIM => {
                let slot = &self.groups[gi].slots[node];
                // The device claims an entry only when it holds nothing.
                if slot.posted_addr() != Some(cqe.addr())
                    || !slot.counts_new_take(cqe)
                    || self.take_posted(rings, gi, node, false).is_err()
                {
                    self.bad_completion();
                    return;
                }
                self.groups[gi].slots[node].record_taken(cqe);
            }
            rx_kind::DATA => {
                let slot = &self.groups[gi].slots[node];
                if slot.held_addr() != Some(cqe.addr()) {
                    // The posted buffer, its CLAIM lost: the device must
                    // count its take, and have taken it.
                    if slot.posted_addr() != Some(cqe.addr())
                        || !slot.counts_new_take(cqe)
                        || self.take_posted(rings, gi, node, false).is_err()
                    {
                        self.bad_completion();
                        return;
                    }
                }
                let written = self.groups[gi].slots[node].complete(cqe);
                if let Some(buf) = written {
                    self.outstanding = self.outstanding.saturating_sub(1);
                    self.stats.buf_recycled += 1;
                    self.split_on(
                        dev,
                        ctx,
                        xdp,
                        Split {
                            buf: buf.page,
                            chunks: buf.chunks,
                            cqe: *cqe,
                            off: 0,
                            frames: 0,
                            seen: 0,
                        },
                    );
                }
                // The next buffer must have left the entry before the
                // driver counts it as the device's.
                if cqe.flags() & rx_flags::NEXT_TAKEN != 0
                    && self.take_posted(rings, gi, node, false).is_err()
                {
                    self.stats.bad += 1;
                }
                let slot = &mut self.groups[gi].slots[node];
                slot.starved_posted = 0;
                slot.record_taken(cqe);
                if cqe.flags() & rx_flags::STARVED != 0 {
                    self.starved(gi, node);
                }
            }
            rx_kind::STARVED => {
                // The device reports a starvation of its own only when it
                // holds no buffer of the stream: one it held closed with a
                // completion that was lost.
                let slot = &self.groups[gi].slots[node];
                // It took more buffers than the completions seen say: the
                // one posted last (the only one posted since) was taken and
                // written, and both completions naming it were lost. Unless
                // it is still in the entry: then the count is a lie.
                if cqe.taken() != slot.taken() {
                    // The entry being empty proves the take, not that it
                    // came before the report: a lie read late finds the
                    // entry as the truth would, the device having taken
                    // the buffer since, and its DATA completion follows.
                    // So the buffer stays the device's until that
                    // completion, the next take or starvation, or the
                    // group's flush settles it; the one it held before
                    // goes back.
                    if self.take_posted(rings, gi, node, true).is_err() {
                        self.bad_completion();
                        return;
                    }
                } else if let Some(held) = self.groups[gi].slots[node].starved_holding_none(cqe) {
                    Self::recycle_lost(&mut self.outstanding, &mut self.stats, held);
                }
                self.groups[gi].slots[node].record_taken(cqe);
                self.starved(gi, node);
            }
            rx_kind::FLUSHED => {
                match Flushed::check(cqe) {
                    Some(marker) => self.flushed(rings, &marker),
                    None => self.bad_completion(),
                }
                return;
            }
            _ => {
                self.bad_completion();
                return;
            }
        }
        let g = &mut self.groups[gi];
        if !g.leaving && !g.slots[node].is_posted() && self.senders & bit != 0 {
            g.waiting |= bit;
        }
    }

    /// The device's FLUSHED marker for `group`: no completion of it follows
    /// on this queue, and the device no longer reads its node table. The
    /// buffers still posted there come back, and the group goes. A group
    /// this queue is not leaving gets no marker.
    fn flushed(&mut self, rings: &Rings, marker: &Flushed) {
        let group = marker.group();
        let Some(gi) = self.groups.iter().position(|g| g.id == group && g.leaving) else {
            self.bad_completion();
            return;
        };
        let g = &mut self.groups[gi];
        let mut broken = false;
        for (node, slot) in g.slots.iter_mut().enumerate() {
            let Some(entry) = Entry::of(usize::from(self.queue), node) else {
                continue;
            };
            let out = slot.flush(rings, g.table, entry, marker);
            self.outstanding = self.outstanding.saturating_sub(out.released);
            if out.lost {
                self.stats.buf_recycled += 1;
                self.stats.resync += 1;
            }
            broken |= out.abandoned;
        }
        if broken {
            self.stats.bad += 1;
        }
        self.retire(gi);
    }

    /// Counts a completion that failed validation and was dropped.
    fn bad_completion(&mut self) {
        self.stats.bad += 1;
        self.report_lost = true;
    }

    /// The device reported taking the buffer posted in `node`'s entry of
    /// group `gi` (and, with `reported_done`, being done with it: see
    /// [`Slot::take_posted_reported_done`]): it becomes the device's if the
    /// entry shows the take. The device is then done with any buffer it
    /// held before, whose completion was lost or failed validation: that
    /// buffer goes back to the pool, its frames lost (the bad completion was
    /// counted), and the stream carries on.
    fn take_posted(
        &mut self,
        rings: &Rings,
        gi: usize,
        node: usize,
        reported_done: bool,
    ) -> Result<(), NotTaken> {
        let entry = self.entry(node).ok_or(NotTaken)?;
        let g = &mut self.groups[gi];
        let slot = &mut g.slots[node];
        let old = if reported_done {
            slot.take_posted_reported_done(rings, g.table, entry)?
        } else {
            slot.take_posted(rings, g.table, entry)?
        };
        if let Some(old) = old {
            Self::recycle_lost(&mut self.outstanding, &mut self.stats, old);
        }
        Ok(())
    }

    /// Returns a buffer the device is done with but whose completion was
    /// lost to the pool; its frames are lost (the bad completion was
    /// counted). `outstanding` and `stats` are the [`RxState`]'s own,
    /// apart so that a caller may hold one of its groups meanwhile.
    fn recycle_lost(outstanding: &mut u32, stats: &mut RxStats, buf: CpuBuf) {
        drop(buf);
        *outstanding = outstanding.saturating_sub(1);
        stats.buf_recycled += 1;
        stats.resync += 1;
    }

    /// The device found `node`'s entry of group `gi` empty and paused the
    /// sender: XON is owed once the entry has a buffer, at once if one was
    /// posted since the device looked.
    ///
    /// A buffer taken with both its completions lost comes back at the
    /// starvation report that follows, by its take count (see
    /// [`Self::completion`]). A stream that keeps starving with a buffer
    /// posted all the same is stuck (a device not keeping its count finds
    /// the entry empty after every XON): the device is reset.
    fn starved(&mut self, gi: usize, node: usize) {
        self.stats.starved += 1;
        let g = &mut self.groups[gi];
        if g.leaving {
            // The flush resumed the sender.
            return;
        }
        let bit = 1 << node;
        let slot = &mut g.slots[node];
        if !slot.is_posted() {
            g.starved |= bit;
            return;
        }
        slot.starved_posted = slot.starved_posted.saturating_add(1);
        if slot.starved_posted == STUCK_STARVATIONS {
            self.broken = Some(abi::stream_id(g.id, node as u8));
        }
        g.xon |= bit;
    }
}
