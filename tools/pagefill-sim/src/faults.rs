// SPDX-License-Identifier: GPL-2.0

//! Fault modes: a buggy or hostile device, on demand, for the driver's
//! robustness tests. Each mode corrupts every `every`-th completion (or
//! buffer) it applies to, or for [`FaultMode::ClaimHeld`] lies at every
//! `every`-th chance; the control socket switches them.

use std::str::FromStr;

use pagefill_abi::{self as abi, record};

use crate::nic::Counters;

/// What the device does wrong.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FaultMode {
    /// DATA completions claim more bytes than the buffer holds (in chunk
    /// mode, than the chunks of the list hold together).
    LenPastBuffer,
    /// Completions name a group out of range.
    BadGroup,
    /// Completions name a node out of range.
    BadNode,
    /// Completions name a queue out of range.
    BadQueue,
    /// Completions name a buffer address the host never posted.
    NeverPosted,
    /// DATA completions give one frame more than the records hold.
    FrameCount,
    /// The first record's length runs past the written bytes (in chunk
    /// mode, past the room of the first chunk).
    RecordLen,
    /// Completions are posted twice.
    Duplicate,
    /// The device reports the buffer posted in a stream's node table entry
    /// as taken but leaves it there: a CLAIM naming it, or a STARVED whose
    /// take count is one ahead of the truth (which says the buffer posted
    /// last was taken and written). The buffer stays the host's until the
    /// device really takes it; a host that believes the report recycles a
    /// page the device can still take and write. The chance comes when a
    /// stream's buffer is written at end of transmission or by the
    /// coalescing timer (the stream then holds no buffer, as before a real
    /// CLAIM or STARVED) while its entry holds the next posted buffer; the
    /// two lies take turns.
    ClaimHeld,
    /// As [`FaultMode::ClaimHeld`], but right after each lie the device
    /// really takes the buffer (and posts its CLAIM, with the count the lie
    /// gave): a host reads every lie late, finding the entry empty as the
    /// truth would leave it, which a fast device makes happen now and then
    /// under load. A host that believes the lie and recycles the buffer
    /// gives up a page the device holds and will write.
    ClaimHeldLate,
}

/// What the device says, falsely, about a buffer it left in its entry
/// ([`FaultMode::ClaimHeld`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PostedBufferLie {
    /// A CLAIM completion naming the buffer.
    Claim,
    /// A STARVED completion with a take count one ahead.
    Starved,
}

impl FromStr for FaultMode {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        Ok(match s {
            "len-past-buffer" => Self::LenPastBuffer,
            "bad-group" => Self::BadGroup,
            "bad-node" => Self::BadNode,
            "bad-queue" => Self::BadQueue,
            "never-posted" => Self::NeverPosted,
            "frame-count" => Self::FrameCount,
            "record-len" => Self::RecordLen,
            "duplicate" => Self::Duplicate,
            "claim-held" => Self::ClaimHeld,
            "claim-held-late" => Self::ClaimHeldLate,
            _ => return Err(format!("unknown fault mode {s}")),
        })
    }
}

/// The active fault, if any.
#[derive(Default, Debug)]
pub struct Faults {
    pub mode: Option<FaultMode>,
    /// Apply to every n-th eligible event (1 = all).
    pub every: u64,
    seen: u64,
}

impl Faults {
    pub fn set(&mut self, mode: Option<FaultMode>, every: u64) {
        self.mode = mode;
        self.every = every.max(1);
        self.seen = 0;
    }

    fn fire(&mut self, want: &[FaultMode], c: &mut Counters) -> Option<FaultMode> {
        let m = self.mode.filter(|m| want.contains(m))?;
        self.seen += 1;
        if !self.seen.is_multiple_of(self.every) {
            return None;
        }
        c.faults_injected += 1;
        Some(m)
    }

    /// Corrupts a completion's fields; returns how many copies to post.
    /// `room` is what the buffer the completion names holds: a buffer's
    /// size, or in chunk mode the room of all the list's chunks.
    #[allow(clippy::too_many_arguments)]
    pub fn corrupt_completion(
        &mut self,
        addr: &mut u64,
        bytes: &mut u32,
        frames: &mut u16,
        group: &mut u16,
        node: &mut u8,
        queue: &mut u8,
        room: u32,
        c: &mut Counters,
    ) -> usize {
        use FaultMode::*;
        // Data faults only apply to completions that carry data.
        let applies: &[FaultMode] = if *frames > 0 {
            &[
                LenPastBuffer,
                BadGroup,
                BadNode,
                BadQueue,
                NeverPosted,
                FrameCount,
                Duplicate,
            ]
        } else {
            &[BadGroup, BadNode, BadQueue, Duplicate]
        };
        let fired = self.fire(applies, c);
        if matches!(
            fired,
            Some(LenPastBuffer | BadGroup | BadNode | BadQueue | NeverPosted)
        ) {
            c.frames_spoiled += u64::from(*frames);
        }
        match fired {
            Some(LenPastBuffer) => *bytes = room.saturating_add(64),
            Some(BadGroup) => *group = abi::MAX_GROUPS as u16 + (*group % 64),
            Some(BadNode) => *node = abi::MAX_NODES as u8 + (*node % 8),
            Some(BadQueue) => *queue = 200,
            Some(NeverPosted) => *addr ^= 0x4000_0000,
            Some(FrameCount) => *frames += 1,
            Some(Duplicate) => return 2,
            Some(RecordLen | ClaimHeld | ClaimHeldLate) | None => {}
        }
        1
    }

    /// Whether [`FaultMode::ClaimHeld`] is on: the receive engine then looks
    /// for its chances, which costs a read of the node table entry.
    pub fn claim_held(&self) -> bool {
        matches!(
            self.mode,
            Some(FaultMode::ClaimHeld | FaultMode::ClaimHeldLate)
        )
    }

    /// Whether the device takes the buffer it lied about at once
    /// ([`FaultMode::ClaimHeldLate`]).
    pub fn takes_after_lie(&self) -> bool {
        self.mode == Some(FaultMode::ClaimHeldLate)
    }

    /// A chance for [`FaultMode::ClaimHeld`]: which lie to tell, if this
    /// is an `every`-th one. Claims and starvation reports take turns, so
    /// steady traffic sees both.
    pub fn lie_about_posted_buffer(&mut self, c: &mut Counters) -> Option<PostedBufferLie> {
        self.fire(&[FaultMode::ClaimHeld, FaultMode::ClaimHeldLate], c)?;
        Some(if (self.seen / self.every) % 2 == 1 {
            PostedBufferLie::Claim
        } else {
            PostedBufferLie::Starved
        })
    }

    /// Corrupts a buffer's records (`frames` of them) before the device
    /// writes it.
    pub fn corrupt_records(&mut self, staging: &mut [u8], frames: u16, c: &mut Counters) {
        if staging.len() < record::HEADER_SIZE {
            return;
        }
        if self.fire(&[FaultMode::RecordLen], c).is_some() {
            staging[record::LEN..record::LEN + 2].copy_from_slice(&u16::MAX.to_le_bytes());
            c.frames_spoiled += u64::from(frames);
        }
    }

    /// In chunk mode, corrupts the record header `hdr` of a list's first
    /// chunk (of `room` bytes), the list holding `frames` frames, before
    /// the device writes it: its length runs past the chunk (at the largest
    /// room, which a record's length cannot pass, past the bytes written).
    pub fn corrupt_chunk_record(
        &mut self,
        hdr: &mut [u8],
        room: usize,
        frames: u16,
        c: &mut Counters,
    ) {
        if hdr.len() < record::HEADER_SIZE {
            return;
        }
        if self.fire(&[FaultMode::RecordLen], c).is_some() {
            let len = u16::try_from(room + 1).unwrap_or(u16::MAX);
            hdr[record::LEN..record::LEN + 2].copy_from_slice(&len.to_le_bytes());
            c.frames_spoiled += u64::from(frames);
        }
    }
}
