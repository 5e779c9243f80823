// SPDX-License-Identifier: GPL-2.0

//! A queue's receive counters, and their copy that the statistics paths
//! read without taking NAPI's state.

use core::sync::atomic::{AtomicU64, Ordering};

/// Receive counters.
#[derive(Default, Clone, Copy)]
pub(crate) struct RxStats {
    pub(crate) packets: u64,
    pub(crate) bytes: u64,
    /// Frames lost for want of an skb, or longer than an AF_XDP socket in
    /// zero-copy mode takes.
    pub(crate) dropped: u64,
    /// Completions or records that failed validation.
    pub(crate) bad: u64,
    /// Buffers taken back from a stream whose completion was lost: the
    /// device reported the next one.
    pub(crate) resync: u64,
    pub(crate) starved: u64,
    pub(crate) xon: u64,
    pub(crate) alloc_failed: u64,
    /// Frames copied whole into a small skb.
    pub(crate) copybreak: u64,
    /// Frames whose payload went up as a fragment of the buffer.
    pub(crate) frags: u64,
    /// Buffers taken from the pool and posted.
    pub(crate) buf_alloc: u64,
    /// Buffers handed back to the pool after their frames were split (they
    /// recycle once the last skb holding a piece of them is freed).
    pub(crate) buf_recycled: u64,
    /// Frames whose checksum the device checked, handed up as such.
    pub(crate) csum_unnecessary: u64,
    /// Frames handed up for the stack to check: the device did not vouch
    /// for them, or receive checksumming is off.
    pub(crate) csum_none: u64,
    /// Merged skbs handed up (`rx-udp-merge`), and the frames they hold
    /// (counted in `packets`, in neither checksum count: they go up
    /// `CHECKSUM_PARTIAL`).
    pub(crate) merged_skbs: u64,
    pub(crate) merged_frames: u64,
    /// Group changes that made no sense (a driver bug: counted, ignored).
    pub(crate) bad_mail: u64,
    /// Frames an XDP program passed to the stack, dropped, or aborted on
    /// (all of them counted in `packets` too, as every frame an XDP program
    /// saw is) (with actions the kernel does not
    /// know); and frames whose action the driver could not carry out
    /// (dropped, as the `xdp_exception` tracepoint reports).
    pub(crate) xdp_pass: u64,
    pub(crate) xdp_drop: u64,
    pub(crate) xdp_aborted: u64,
    pub(crate) xdp_errors: u64,
    /// Frames an XDP program sent back out, queued for the device
    /// (`XDP_TX`; the transmit counters count them sent).
    pub(crate) xdp_tx: u64,
    /// Frames an XDP program redirected that the core took for the target
    /// (`XDP_REDIRECT`; the target may still drop them; those refused at
    /// once count in `xdp_errors`).
    pub(crate) xdp_redirect: u64,
    /// Frames an XDP program saw in more than one buffer (multi-buffer XDP:
    /// longer than a buffer holds after XDP's headroom and tailroom).
    pub(crate) xdp_multi_buf: u64,
    /// Times a stream's chunk list could not be posted (zero-copy AF_XDP)
    /// for want of a buffer in the socket's fill ring: the stream waits,
    /// its sender paused if it starves, until the program gives some.
    pub(crate) xsk_fill_empty: u64,
}

impl RxStats {
    /// Counters in the structure.
    const FIELDS: usize = 25;

    /// Adds `o`'s counts to these.
    pub(crate) fn add(&mut self, o: &Self) {
        self.packets += o.packets;
        self.bytes += o.bytes;
        self.dropped += o.dropped;
        self.bad += o.bad;
        self.resync += o.resync;
        self.starved += o.starved;
        self.xon += o.xon;
        self.alloc_failed += o.alloc_failed;
        self.copybreak += o.copybreak;
        self.frags += o.frags;
        self.buf_alloc += o.buf_alloc;
        self.buf_recycled += o.buf_recycled;
        self.csum_unnecessary += o.csum_unnecessary;
        self.csum_none += o.csum_none;
        self.merged_skbs += o.merged_skbs;
        self.merged_frames += o.merged_frames;
        self.bad_mail += o.bad_mail;
        self.xdp_pass += o.xdp_pass;
        self.xdp_drop += o.xdp_drop;
        self.xdp_aborted += o.xdp_aborted;
        self.xdp_errors += o.xdp_errors;
        self.xdp_tx += o.xdp_tx;
        self.xdp_redirect += o.xdp_redirect;
        self.xdp_multi_buf += o.xdp_multi_buf;
        self.xsk_fill_empty += o.xsk_fill_empty;
    }

    fn values(&self) -> [u64; Self::FIELDS] {
        [
            self.packets,
            self.bytes,
            self.dropped,
            self.bad,
            self.resync,
            self.starved,
            self.xon,
            self.alloc_failed,
            self.copybreak,
            self.frags,
            self.buf_alloc,
            self.buf_recycled,
            self.csum_unnecessary,
            self.csum_none,
            self.merged_skbs,
            self.merged_frames,
            self.bad_mail,
            self.xdp_pass,
            self.xdp_drop,
            self.xdp_aborted,
            self.xdp_errors,
            self.xdp_tx,
            self.xdp_redirect,
            self.xdp_multi_buf,
            self.xsk_fill_empty,
        ]
    }

    fn from_values(v: [u64; Self::FIELDS]) -> Self {
        // The fields in the order of `values` (a struct expression
        // evaluates its fields in the order written).
        let mut v = v.into_iter();
        let mut next = || v.next().unwrap_or(0);
        Self {
            packets: next(),
            bytes: next(),
            dropped: next(),
            bad: next(),
            resync: next(),
            starved: next(),
            xon: next(),
            alloc_failed: next(),
            copybreak: next(),
            frags: next(),
            buf_alloc: next(),
            buf_recycled: next(),
            csum_unnecessary: next(),
            csum_none: next(),
            merged_skbs: next(),
            merged_frames: next(),
            bad_mail: next(),
            xdp_pass: next(),
            xdp_drop: next(),
            xdp_aborted: next(),
            xdp_errors: next(),
            xdp_tx: next(),
            xdp_redirect: next(),
            xdp_multi_buf: next(),
            xsk_fill_empty: next(),
        }
    }
}

/// Receive counters as the statistics paths read them, without a lock:
/// the queue's NAPI publishes its counters at the end of each poll (and
/// teardown, with NAPI stopped, at the end of a run). One writer at a time;
/// readers see each counter whole (64-bit loads: the driver is 64-bit only).
pub(crate) struct PublishedRxStats([AtomicU64; RxStats::FIELDS]);

impl PublishedRxStats {
    pub(crate) fn new() -> Self {
        Self([const { AtomicU64::new(0) }; RxStats::FIELDS])
    }

    /// Publishes `s`; called by the counters' one writer.
    pub(crate) fn publish(&self, s: &RxStats) {
        for (slot, v) in self.0.iter().zip(s.values()) {
            slot.store(v, Ordering::Relaxed);
        }
    }

    /// The counters as last published.
    pub(crate) fn read(&self) -> RxStats {
        let mut v = [0; RxStats::FIELDS];
        for (o, slot) in v.iter_mut().zip(&self.0) {
            *o = slot.load(Ordering::Relaxed);
        }
        RxStats::from_values(v)
    }
}
