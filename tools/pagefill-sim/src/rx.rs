// SPDX-License-Identifier: GPL-2.0

//! The receive engine: streams over the group/node pointer table.
//!
//! Per (group, source node) stream and queue pair the device holds at most
//! one buffer, the one it is filling (a lane; without `ctrl::STEER` a
//! stream uses one lane, [`abi::stream_queue`]'s). It takes a buffer by
//! swapping the lane's node table entry with 0, packs frames behind record headers into a staging copy, and writes the
//! buffer to host memory in one burst when the next frame does not fit, when
//! the sender signals end of transmission, when the coalescing timer runs out,
//! or on a flush. Each take is reported (CLAIM, or NEXT_TAKEN on the full
//! buffer's completion) so the host knows to refill; an empty entry starves
//! the stream: the sender is told xoff and frames in flight are held until the
//! host refills the entry and rings XON.

use std::collections::VecDeque;
use std::time::{Duration, Instant};

use pagefill_abi::{self as abi, chunk_list, record, record_flags, rx_cqe, rx_flags, rx_kind};

use crate::dma::Memory;
use crate::fabric;
use crate::faults::PostedBufferLie;
use crate::nic::{Counters, FabricPort, Nic};
use crate::rss::Flow;
use crate::steer::Verdict;

/// Frames a starved stream holds before it drops (and counts) more: the
/// device's per-stream FIFO. It must cover what a sender can have in flight
/// between the moment the stream starves and the moment its xoff arrives;
/// senders on this fabric keep at most [`crate::fabric::MAX_IN_FLIGHT`]
/// bytes queued and [`crate::fabric::WIRE_BYTES`] on the wire, 32 KiB: 431
/// minimal frames (60 bytes and the fabric's 16-byte header). That does
/// not cover the xoff's own way to the sender, a message between host
/// processes as late as the host schedules them: the engine stops reading
/// the wire before the space runs out ([`RxEngine::link_paused`]).
pub const HOLD_LIMIT: usize = 512;

/// Frames one datagram from the fabric can bring: broadcasts are packed up
/// to [`crate::fabric::PACK_LIMIT`] bytes, each frame at least 76 with its
/// header (a longer datagram is one frame).
const FRAMES_PER_DATAGRAM: usize = crate::fabric::PACK_LIMIT / 76 + 1;

/// A frame to place: its bytes borrowed (`&[u8]`) as it comes, or owned
/// (`Vec<u8>`) while its stream is starved and holds it.
struct Frame<D> {
    /// The queue pair it was steered to when it came.
    queue: usize,
    /// Its flow hash and record flags, if it has one and the device
    /// steers or writes hashes.
    hash: Option<(u32, u16)>,
    seq: u32,
    eot: bool,
    data: D,
}

type HeldFrame = Frame<Vec<u8>>;

impl HeldFrame {
    fn borrowed(&self) -> Frame<&[u8]> {
        Frame {
            queue: self.queue,
            hash: self.hash,
            seq: self.seq,
            eot: self.eot,
            data: &self.data,
        }
    }
}

/// Counters of one stream, reported by the control socket.
#[derive(Default, Clone, Debug)]
pub struct StreamStats {
    /// Frames that arrived from the fabric for this stream.
    pub offered: u64,
    /// Frames written to host buffers.
    pub written: u64,
    /// Frames dropped (holding space overflowed, group left, reset).
    pub dropped: u64,
    /// Times the stream starved.
    pub starved: u64,
    /// Time the sender spent paused by xoff.
    pub xoff_time: Duration,
}

/// A stream's buffer for one queue pair.
#[derive(Default)]
struct Lane {
    /// DMA address of the buffer being filled; 0 when the lane has none.
    buf_addr: u64,
    /// The buffer's contents so far: records, in chunk mode one a chunk.
    staging: Vec<u8>,
    frames: u16,
    /// In chunk mode, the chunks of the list being filled (empty in buffer
    /// mode), and how many of them hold a record.
    chunks: Vec<u64>,
    pieces: usize,
    /// When the coalescing timer writes the buffer.
    deadline: Option<Instant>,
    /// Buffers taken from the entry since the group was joined or the
    /// device reset, free running: every completion carries it.
    taken: u32,
}

impl Lane {
    /// Forgets the buffer and what was placed in it.
    fn clear(&mut self) {
        self.buf_addr = 0;
        self.staging.clear();
        self.frames = 0;
        self.chunks.clear();
        self.pieces = 0;
        self.deadline = None;
    }
}

/// One (group, source node) stream.
#[derive(Default)]
struct Stream {
    lanes: [Lane; abi::MAX_QUEUES],
    /// Xoff sent; waiting for XON: a frame for this queue pair found its
    /// lane's entry empty.
    starved: Option<usize>,
    xoff_since: Option<Instant>,
    held: VecDeque<HeldFrame>,
    stats: StreamStats,
}

/// One receive queue's completion ring state.
#[derive(Default)]
pub struct RxQueue {
    /// Completions posted, free running.
    prod: u32,
    /// The host's consumed count, as last read from the status block.
    consumed: u32,
    pub(crate) armed: bool,
    /// Completions waiting for room in the ring, in order.
    pending: VecDeque<[u8; rx_cqe::SIZE]>,
}

/// The receive engine's state.
#[derive(Default)]
pub struct RxEngine {
    streams: Vec<Option<Box<Stream>>>,
    pub(crate) queues: Vec<RxQueue>,
    /// Lanes whose buffer holds frames (coalescing timer running): stream
    /// id and queue pair.
    open: Vec<(u32, usize)>,
    /// Frames held by starved streams, all streams together.
    held_total: usize,
}

/// Chunks a frame of `len` bytes takes, `room` bytes a chunk.
fn pieces(len: usize, room: usize) -> usize {
    len.div_ceil(room)
}

fn stream_index(group: u16, node: u8) -> usize {
    usize::from(group) * abi::MAX_NODES + usize::from(node)
}

impl RxEngine {
    /// Prepares for an enabled device.
    pub(crate) fn start(&mut self, _buf_size: usize, num_queues: usize) {
        if self.streams.is_empty() {
            self.streams = (0..abi::MAX_GROUPS * abi::MAX_NODES)
                .map(|_| None)
                .collect();
        }
        self.queues = (0..num_queues).map(|_| RxQueue::default()).collect();
        self.open.clear();
    }

    /// Forgets every buffer and held frame (reset, disable): ownership of
    /// every buffer returns to the host. Paused senders are released.
    pub(crate) fn forget_all(&mut self, port: &mut dyn FabricPort, me: u8, c: &mut Counters) {
        for (i, slot) in self.streams.iter_mut().enumerate() {
            let Some(s) = slot else { continue };
            for lane in &mut s.lanes {
                lane.clear();
                lane.taken = 0;
            }
            s.stats.dropped += s.held.len() as u64;
            s.held.clear();
            if s.starved.take().is_some() {
                s.xoff_since = None;
                let (g, n) = ((i / abi::MAX_NODES) as u16, (i % abi::MAX_NODES) as u8);
                // This node's own (loopback): the caller releases it.
                if n != me {
                    port.send_to(n, &fabric::control(abi::fabric_type::XON, g, me, n));
                }
                c.xon_sent += 1;
            }
        }
        for q in &mut self.queues {
            q.pending.clear();
            q.armed = false;
        }
        self.open.clear();
        self.held_total = 0;
    }

    /// Whether the device stops taking frames from the link: its holding
    /// space could not take one more datagram's frames. An xoff paces one
    /// stream's sender, but frames keep coming while it is on its way;
    /// this is the backstop, as a NIC's shared receive buffer sends a
    /// link-level pause: the frames wait on the wire, which fills and
    /// blocks the senders, and nothing is dropped. Held frames drain when
    /// the host refills their streams (XON), a flush or a reset.
    pub fn link_paused(&self) -> bool {
        self.held_total + FRAMES_PER_DATAGRAM > HOLD_LIMIT
    }

    /// Frames held by starved streams, all streams together.
    pub fn held_frames(&self) -> usize {
        self.held_total
    }

    /// Per-stream counters of every stream that saw traffic.
    pub fn stream_stats(&self) -> Vec<((u16, u8), StreamStats)> {
        self.streams
            .iter()
            .enumerate()
            .filter_map(|(i, s)| {
                let s = s.as_ref()?;
                Some((
                    ((i / abi::MAX_NODES) as u16, (i % abi::MAX_NODES) as u8),
                    s.stats.clone(),
                ))
            })
            .collect()
    }

    /// Buffers the device holds now (for leak accounting in tests).
    pub fn buffers_held(&self) -> usize {
        self.streams
            .iter()
            .flatten()
            .flat_map(|s| &s.lanes)
            .filter(|l| l.buf_addr != 0)
            .count()
    }
}

/// A completion entry before the phase word.
struct Cqe {
    addr: u64,
    bytes: u32,
    frames: u16,
    group: u16,
    node: u8,
    queue: u8,
    kind: u8,
    flags: u8,
    taken: u32,
}

impl Cqe {
    fn encode(&self) -> [u8; rx_cqe::SIZE] {
        let mut e = [0u8; rx_cqe::SIZE];
        e[rx_cqe::ADDR..rx_cqe::ADDR + 8].copy_from_slice(&self.addr.to_le_bytes());
        e[rx_cqe::BYTES..rx_cqe::BYTES + 4].copy_from_slice(&self.bytes.to_le_bytes());
        e[rx_cqe::FRAMES..rx_cqe::FRAMES + 2].copy_from_slice(&self.frames.to_le_bytes());
        e[rx_cqe::GROUP..rx_cqe::GROUP + 2].copy_from_slice(&self.group.to_le_bytes());
        e[rx_cqe::NODE] = self.node;
        e[rx_cqe::QUEUE] = self.queue;
        e[rx_cqe::KIND] = self.kind;
        e[rx_cqe::FLAGS] = self.flags;
        e[rx_cqe::TAKEN..rx_cqe::TAKEN + 4].copy_from_slice(&self.taken.to_le_bytes());
        e
    }
}

impl Nic {
    /// A frame arrives from the fabric for `group` from node `src`.
    pub fn rx_frame(
        &mut self,
        group: u16,
        src: u8,
        seq: u32,
        eot: bool,
        frame: &[u8],
        now: Instant,
    ) {
        if !self.running() {
            return;
        }
        if !self.link_up {
            self.counters.drop_link_down += 1;
            return;
        }
        if usize::from(group) >= abi::MAX_GROUPS || usize::from(src) >= abi::MAX_NODES {
            self.counters.drop_bad_frame += 1;
            return;
        }
        // The hash is computed once, where steering or the records need it.
        let flow = (self.steer || self.rx_hash)
            .then(|| Flow::parse(frame))
            .flatten();
        let hash = self.steering.flow_hash(flow.as_ref());
        let q = if self.steer {
            match self
                .steering
                .steer(group, src, flow.as_ref(), hash, self.num_queues as usize)
            {
                Verdict::Queue(q) => q,
                Verdict::Drop => {
                    self.counters.drop_filtered += 1;
                    return;
                }
            }
        } else {
            abi::stream_queue(group, src, self.num_queues) as usize
        };
        if !(abi::MIN_FRAME_LEN..=abi::MAX_FRAME_LEN).contains(&frame.len())
            || match self.chunk_room(q) {
                0 => record::size(frame.len()) > self.buf_size(),
                room => pieces(frame.len(), room) > chunk_list::MAX_CHUNKS,
            }
        {
            self.counters.drop_bad_frame += 1;
            return;
        }
        let node_table = match self.node_table(group) {
            Some(0) => {
                self.counters.drop_unjoined += 1;
                return;
            }
            Some(t) => t,
            None => return,
        };
        let idx = stream_index(group, src);
        let mut s = self.rx.streams[idx].take().unwrap_or_default();
        s.stats.offered += 1;
        let f = Frame {
            queue: q,
            hash,
            seq,
            eot,
            data: frame,
        };
        if s.starved.is_some() || !s.held.is_empty() {
            self.hold(&mut s, f);
        } else {
            self.place(&mut s, node_table, group, src, f, now);
        }
        self.rx.streams[idx] = Some(s);
    }

    /// The master table's entry for `group`: its node table, or 0 if the
    /// host has not joined it; `None` after a refused DMA read.
    fn node_table(&mut self, group: u16) -> Option<u64> {
        match self.mem.read_u64(self.master + u64::from(group) * 8) {
            Ok(t) => Some(t),
            Err(e) => {
                self.dma_failed("reading the master table", e);
                None
            }
        }
    }

    /// The address of the node-table entry of lane `q` of node `src`'s
    /// stream: its queue pair's column, or the first without steering.
    fn entry_addr(&self, node_table: u64, q: usize, src: u8) -> u64 {
        let column = if self.steer { q } else { 0 };
        node_table + abi::node_entry(column, usize::from(src)) as u64
    }

    /// The room of each chunk of queue pair `q`, 0 in buffer mode.
    fn chunk_room(&self, q: usize) -> usize {
        self.queues.get(q).map_or(0, |c| c.chunk_room as usize)
    }

    /// The lane of queue pair `q` takes `addr` from its entry; in chunk
    /// mode it reads the list's chunks. False if it cannot (the list is
    /// malformed, a driver bug: the device enters the fatal state).
    fn adopt(&mut self, lane: &mut Lane, q: usize, addr: u64) -> bool {
        lane.buf_addr = addr;
        lane.chunks.clear();
        if self.chunk_room(q) == 0 {
            return true;
        }
        let mut list = [0u8; chunk_list::SIZE];
        if let Err(e) = self.mem.read(addr, &mut list) {
            self.dma_failed("reading a chunk list", e);
            return false;
        }
        let at = chunk_list::COUNT;
        let count = usize::from(u16::from_le_bytes([list[at], list[at + 1]]));
        if !(1..=chunk_list::MAX_CHUNKS).contains(&count) {
            log::error!("driver bug: chunk list {addr:#x} names {count} chunks");
            self.set_fatal();
            return false;
        }
        lane.chunks.extend(
            list[chunk_list::ENTRIES..]
                .chunks_exact(chunk_list::ENTRY_SIZE)
                .take(count)
                .map(|e| {
                    let a = &e[chunk_list::ADDR..chunk_list::ADDR + 8];
                    u64::from_le_bytes([a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7]])
                }),
        );
        true
    }

    fn hold(&mut self, s: &mut Stream, f: Frame<&[u8]>) {
        if s.held.len() >= HOLD_LIMIT {
            self.counters.drop_overflow += 1;
            s.stats.dropped += 1;
        } else {
            s.held.push_back(Frame {
                queue: f.queue,
                hash: f.hash,
                seq: f.seq,
                eot: f.eot,
                data: f.data.to_vec(),
            });
            self.rx.held_total += 1;
        }
    }

    /// Takes the buffer in the entry at `entry`, or 0 if empty.
    fn take_entry(&mut self, entry: u64) -> Option<u64> {
        let taken = self.mem.take_u64(entry);
        log::trace!("take entry at {entry:#x}: {taken:x?}");
        match taken {
            Ok(a) if a != 0 && a % abi::DMA_ALIGN != 0 => {
                log::error!("driver bug: posted buffer {a:#x} is not aligned");
                self.set_fatal();
                None
            }
            Ok(a) => Some(a),
            Err(e) => {
                self.dma_failed("taking a node table entry", e);
                None
            }
        }
    }

    /// Places a frame of a stream that is not starved.
    fn place(
        &mut self,
        s: &mut Stream,
        node_table: u64,
        group: u16,
        src: u8,
        f: Frame<&[u8]>,
        now: Instant,
    ) {
        let q = f.queue;
        let entry = self.entry_addr(node_table, q, src);
        if s.lanes[q].buf_addr == 0 {
            match self.take_entry(entry) {
                Some(0) => {
                    self.starve(s, group, src, q, now, None);
                    return self.hold(s, f);
                }
                Some(a) => {
                    let lane = &mut s.lanes[q];
                    lane.taken = lane.taken.wrapping_add(1);
                    self.post(group, src, q, rx_kind::CLAIM, 0, a, 0, 0, lane.taken);
                    if !self.adopt(lane, q, a) {
                        return;
                    }
                }
                None => return,
            }
        }
        let room = self.chunk_room(q);
        let buf_size = self.buf_size();
        let len = f.data.len();
        let fits = |l: &Lane| match room {
            0 => l.staging.len() + record::size(len) <= buf_size,
            room => l.pieces + pieces(len, room) <= l.chunks.len(),
        };
        if !fits(&s.lanes[q]) && s.lanes[q].pieces > 0 {
            match self.take_entry(entry) {
                Some(0) => {
                    self.close(s, group, src, q, rx_flags::FULL | rx_flags::STARVED);
                    self.starve(s, group, src, q, now, Some(()));
                    return self.hold(s, f);
                }
                Some(next) => {
                    s.lanes[q].taken = s.lanes[q].taken.wrapping_add(1);
                    self.close(s, group, src, q, rx_flags::FULL | rx_flags::NEXT_TAKEN);
                    if !self.adopt(&mut s.lanes[q], q, next) {
                        return;
                    }
                }
                None => return,
            }
        }
        if !fits(&s.lanes[q]) {
            // A chunk list too short for the frame even empty: the frame
            // cannot be placed.
            self.counters.drop_bad_frame += 1;
            s.stats.dropped += 1;
            return;
        }
        let frame = f.data;
        let mut flags = if crate::csum::l4_checksum_ok(frame) {
            record_flags::L4_CSUM_OK
        } else {
            0
        };
        let mut word = f.seq;
        if self.rx_hash {
            if let Some((hash, hash_flags)) = f.hash {
                word = hash;
                flags |= hash_flags;
            }
        }
        let lane = &mut s.lanes[q];
        // One record, or in chunk mode one a chunk, each but the last with
        // MORE: the frame goes on in the next.
        let piece_len = if room == 0 { frame.len() } else { room };
        let mut rest = frame;
        while !rest.is_empty() {
            let (piece, tail) = rest.split_at(rest.len().min(piece_len));
            rest = tail;
            let more = if rest.is_empty() {
                0
            } else {
                record_flags::MORE
            };
            let off = lane.staging.len();
            lane.staging.resize(off + record::size(piece.len()), 0);
            let hdr = &mut lane.staging[off..off + record::HEADER_SIZE];
            hdr[record::LEN..record::LEN + 2].copy_from_slice(&(piece.len() as u16).to_le_bytes());
            hdr[record::FLAGS..record::FLAGS + 2].copy_from_slice(&(flags | more).to_le_bytes());
            // The sequence number's word, or the hash in its place.
            hdr[record::SEQ..record::SEQ + 4].copy_from_slice(&word.to_le_bytes());
            let data = off + record::HEADER_SIZE;
            lane.staging[data..data + piece.len()].copy_from_slice(piece);
            lane.pieces += 1;
        }
        lane.frames += 1;
        if lane.deadline.is_none() {
            let usecs = self.queues[q].coalesce_usecs;
            lane.deadline = Some(now + Duration::from_micros(u64::from(usecs)));
            self.rx.open.push((abi::stream_id(group, src), q));
        }
        if f.eot {
            self.close(s, group, src, q, rx_flags::EOT);
        }
    }

    /// Lane `q` of the stream needs a buffer and its entry is empty: xoff
    /// the sender and report it (as a STARVED completion if no DATA
    /// completion carries it).
    fn starve(
        &mut self,
        s: &mut Stream,
        group: u16,
        src: u8,
        q: usize,
        now: Instant,
        reported: Option<()>,
    ) {
        s.starved = Some(q);
        s.stats.starved += 1;
        self.counters.starved += 1;
        if reported.is_none() {
            let taken = s.lanes[q].taken;
            self.post(group, src, q, rx_kind::STARVED, 0, 0, 0, 0, taken);
        }
        if s.xoff_since.is_none() && !self.no_xoff {
            s.xoff_since = Some(now);
            self.counters.xoff_sent += 1;
            self.signal_sender(abi::fabric_type::XOFF, group, src);
        }
    }

    /// Writes lane `q`'s buffer to host memory and posts its DATA
    /// completion; the lane then holds no buffer.
    fn close(&mut self, s: &mut Stream, group: u16, src: u8, q: usize, flags: u8) {
        let lane = &mut s.lanes[q];
        let addr = lane.buf_addr;
        // What the buffer holds, or the list's chunks together.
        let room = if lane.chunks.is_empty() {
            self.buf_size()
        } else {
            lane.chunks.len() * self.chunk_room(q)
        };
        let bytes = if lane.chunks.is_empty() {
            self.faults
                .corrupt_records(&mut lane.staging, lane.frames, &mut self.counters);
            if let Err(e) = self.mem.write(addr, &lane.staging) {
                return self.dma_failed("writing a receive buffer", e);
            }
            lane.staging.len() as u32
        } else {
            match self.write_chunks(lane, q) {
                Some(bytes) => bytes,
                None => return,
            }
        };
        let lane = &mut s.lanes[q];
        self.counters.rx_frames += u64::from(lane.frames);
        self.counters.rx_bytes += u64::from(bytes);
        self.counters.rx_buffers += 1;
        s.stats.written += u64::from(lane.frames);
        let (frames, taken) = (lane.frames, lane.taken);
        lane.clear();
        self.post_holding(
            group,
            src,
            q,
            rx_kind::DATA,
            flags,
            addr,
            bytes,
            frames,
            taken,
            u32::try_from(room).unwrap_or(u32::MAX),
        );
        if flags & (rx_flags::EOT | rx_flags::TIMEOUT) != 0 && self.faults.claim_held() {
            self.lie_about_posted_buffer(&mut s.lanes[q], group, src, q);
        }
    }

    /// Writes a chunk list's records: each record's bytes to its chunk, its
    /// header to the chunk's entry. Returns the frame bytes written, `None`
    /// after a refused DMA write.
    /// The record-len fault spoils the first entry's length (the bytes
    /// written to the chunk stay the frame's).
    fn write_chunks(&mut self, lane: &Lane, q: usize) -> Option<u32> {
        let room = self.chunk_room(q);
        let mut off = 0;
        let mut bytes = 0;
        for (i, &chunk) in lane.chunks.iter().enumerate().take(lane.pieces) {
            let mut hdr = [0u8; record::HEADER_SIZE];
            hdr.copy_from_slice(&lane.staging[off..off + record::HEADER_SIZE]);
            let len = usize::from(u16::from_le_bytes([hdr[record::LEN], hdr[record::LEN + 1]]));
            let data = &lane.staging[off + record::HEADER_SIZE..off + record::HEADER_SIZE + len];
            if i == 0 {
                self.faults
                    .corrupt_chunk_record(&mut hdr, room, lane.frames, &mut self.counters);
            }
            let entry = lane.buf_addr + (chunk_list::ENTRIES + i * chunk_list::ENTRY_SIZE) as u64;
            let written = self
                .mem
                .write(chunk, data)
                .and_then(|()| self.mem.write(entry + chunk_list::RECORD as u64, &hdr));
            if let Err(e) = written {
                self.dma_failed("writing a chunk", e);
                return None;
            }
            bytes += len as u32;
            off += record::size(len);
        }
        Some(bytes)
    }

    /// The claim-held fault's chance: the lane holds no buffer now, and
    /// if its entry holds the one the host posted next, the device may
    /// report that buffer taken (CLAIM) or written (STARVED, its count one
    /// ahead) while it leaves it in the entry. The lane's own count does
    /// not move, so when the device really takes the buffer, that take is
    /// reported with the count the lie gave: at the stream's next frame, or
    /// at once in the claim-held-late mode.
    fn lie_about_posted_buffer(&mut self, lane: &mut Lane, group: u16, src: u8, q: usize) {
        let node_table = match self.node_table(group) {
            Some(0) | None => return,
            Some(t) => t,
        };
        let entry = self.entry_addr(node_table, q, src);
        let posted = match self.mem.read_u64(entry) {
            Ok(0) => return,
            Ok(a) => a,
            Err(e) => return self.dma_failed("reading a node table entry", e),
        };
        let ahead = lane.taken.wrapping_add(1);
        match self.faults.lie_about_posted_buffer(&mut self.counters) {
            Some(PostedBufferLie::Claim) => {
                self.post(group, src, q, rx_kind::CLAIM, 0, posted, 0, 0, ahead)
            }
            Some(PostedBufferLie::Starved) => {
                self.post(group, src, q, rx_kind::STARVED, 0, 0, 0, 0, ahead)
            }
            None => return,
        }
        if self.faults.takes_after_lie() {
            // The take a slow host's read of the lie comes after.
            if let Some(a) = self.take_entry(entry).filter(|&a| a != 0) {
                lane.taken = ahead;
                self.post(group, src, q, rx_kind::CLAIM, 0, a, 0, 0, ahead);
                self.adopt(lane, q, a);
            }
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn post(
        &mut self,
        group: u16,
        node: u8,
        q: usize,
        kind: u8,
        flags: u8,
        addr: u64,
        bytes: u32,
        frames: u16,
        taken: u32,
    ) {
        let room = self.buf_size() as u32;
        self.post_holding(
            group, node, q, kind, flags, addr, bytes, frames, taken, room,
        );
    }

    /// As [`Self::post`], for a completion naming a buffer (or chunk list)
    /// that holds `room` bytes: what the len-past-buffer fault claims
    /// more than.
    #[allow(clippy::too_many_arguments)]
    fn post_holding(
        &mut self,
        group: u16,
        node: u8,
        q: usize,
        kind: u8,
        flags: u8,
        addr: u64,
        bytes: u32,
        frames: u16,
        taken: u32,
        room: u32,
    ) {
        let mut cqe = Cqe {
            addr,
            bytes,
            frames,
            group,
            node,
            queue: q as u8,
            kind,
            flags,
            taken,
        };
        let copies = self.faults.corrupt_completion(
            &mut cqe.addr,
            &mut cqe.bytes,
            &mut cqe.frames,
            &mut cqe.group,
            &mut cqe.node,
            &mut cqe.queue,
            room,
            &mut self.counters,
        );
        log::trace!(
            "completion kind {kind} group {group} node {node} addr {addr:#x} frames {frames} flags {flags:#x} copies {copies} spoiled {}",
            cqe.group != group || cqe.node != node || cqe.queue != q as u8 || cqe.addr != addr
        );
        let e = cqe.encode();
        for _ in 0..copies {
            self.rx.queues[q].pending.push_back(e);
        }
        self.drain(q);
    }

    /// Posts the FLUSHED completion of `group` on every queue in use. Each
    /// queue's completions reach its ring in order, through its `pending`
    /// queue, so this one lands behind every completion of the group
    /// already posted or waiting for room there. It goes around the fault
    /// modes: they spoil a stream's completions, and this one belongs to no
    /// stream.
    fn post_flushed(&mut self, group: u16) {
        for q in 0..self.rx.queues.len() {
            let cqe = Cqe {
                addr: 0,
                bytes: 0,
                frames: 0,
                group,
                node: 0,
                queue: q as u8,
                kind: rx_kind::FLUSHED,
                flags: 0,
                taken: 0,
            };
            log::trace!(
                "completion kind {} group {group} queue {q}",
                rx_kind::FLUSHED
            );
            self.rx.queues[q].pending.push_back(cqe.encode());
            self.drain(q);
        }
    }

    /// Whether the host has not consumed everything posted to queue `q`.
    pub(crate) fn rx_unconsumed(&mut self, q: usize) -> bool {
        self.refresh_consumed(q);
        let rq = &self.rx.queues[q];
        rq.prod != rq.consumed || !rq.pending.is_empty()
    }

    fn refresh_consumed(&mut self, q: usize) {
        let addr = self.queues[q].qsb_addr + abi::qsb::RX_CONSUMED as u64;
        match self.mem.read_u32(addr) {
            Ok(c) => {
                let rq = &mut self.rx.queues[q];
                // A count beyond what was posted is a host bug; ignore it.
                if rq.prod.wrapping_sub(c) <= rq.prod.wrapping_sub(rq.consumed) {
                    rq.consumed = c;
                }
            }
            Err(e) => self.dma_failed("reading a queue status block", e),
        }
    }

    /// Writes pending completions of queue `q` while the ring has room.
    pub(crate) fn drain(&mut self, q: usize) {
        let shift = self.queues[q].cq_shift;
        let size = 1u32 << shift;
        let mut posted = false;
        while let Some(e) = self.rx.queues[q].pending.front().copied() {
            let rq = &self.rx.queues[q];
            if rq.prod.wrapping_sub(rq.consumed) >= size {
                self.refresh_consumed(q);
                let rq = &self.rx.queues[q];
                if rq.prod.wrapping_sub(rq.consumed) >= size || !self.running() {
                    break;
                }
            }
            let prod = self.rx.queues[q].prod;
            let addr = self.queues[q].cq_addr + u64::from(prod & (size - 1)) * rx_cqe::SIZE as u64;
            let phase = ((prod >> shift) & 1) ^ 1;
            let body = self.mem.write(addr, &e[..rx_cqe::PHASE]);
            // The phase word goes last: a host that sees it sees the entry.
            std::sync::atomic::fence(std::sync::atomic::Ordering::Release);
            let res = body.and_then(|()| self.mem.write_u32(addr + rx_cqe::PHASE as u64, phase));
            if let Err(e) = res {
                return self.dma_failed("writing a completion", e);
            }
            let rq = &mut self.rx.queues[q];
            rq.pending.pop_front();
            rq.prod = prod.wrapping_add(1);
            self.counters.rx_completions += 1;
            posted = true;
        }
        if posted {
            self.fire_rx(q);
        }
    }

    /// The host refilled a starved stream's entry (XON doorbell).
    pub(crate) fn rx_xon(&mut self, group: u16, src: u8, now: Instant) {
        let idx = stream_index(group, src);
        let Some(mut s) = self.rx.streams[idx].take() else {
            return;
        };
        log::trace!(
            "xon group {group} node {src} starved {:?} held {}",
            s.starved,
            s.held.len()
        );
        if s.starved.is_some() {
            self.resume(&mut s, group, src, now);
        }
        self.rx.streams[idx] = Some(s);
    }

    fn resume(&mut self, s: &mut Stream, group: u16, src: u8, now: Instant) {
        let Some(node_table) = self.node_table(group) else {
            return;
        };
        if node_table == 0 {
            return;
        }
        s.starved = None;
        // Only this stream's frames move (a frame that starves it again is
        // held anew): the total changes by the change of its queue.
        let others = self.rx.held_total.saturating_sub(s.held.len());
        while let Some(f) = s.held.pop_front() {
            self.place(s, node_table, group, src, f.borrowed(), now);
            if s.starved.is_some() {
                // Starved again: the frame was put back at the end; restore order.
                if let Some(last) = s.held.pop_back() {
                    s.held.push_front(last);
                }
                break;
            }
        }
        self.rx.held_total = others + s.held.len();
        if s.starved.is_some() {
            return;
        }
        if let Some(since) = s.xoff_since.take() {
            s.stats.xoff_time += now.saturating_duration_since(since);
            self.counters.xon_sent += 1;
            self.signal_sender(abi::fabric_type::XON, group, src);
        }
    }

    /// Closes every stream of `group` (the host left it) with FLUSH, then
    /// posts FLUSHED on every queue. The host cleared the group's master
    /// entry before, so from here on no frame of the group reaches its node
    /// table and nothing more is posted for it until the host joins again.
    pub(crate) fn rx_flush_group(&mut self, group: u16, now: Instant) {
        for src in 0..abi::MAX_NODES as u8 {
            self.flush_stream(group, src, now);
        }
        self.post_flushed(group);
    }

    /// Closes every stream with FLUSH (the device is being disabled).
    pub(crate) fn rx_flush_all(&mut self, now: Instant) {
        for idx in 0..self.rx.streams.len() {
            if self.rx.streams[idx].is_some() {
                let (g, n) = ((idx / abi::MAX_NODES) as u16, (idx % abi::MAX_NODES) as u8);
                self.flush_stream(g, n, now);
            }
        }
    }

    fn flush_stream(&mut self, group: u16, src: u8, now: Instant) {
        let idx = stream_index(group, src);
        let Some(mut s) = self.rx.streams[idx].take() else {
            return;
        };
        for q in 0..abi::MAX_QUEUES {
            if s.lanes[q].buf_addr != 0 {
                self.close(&mut s, group, src, q, rx_flags::FLUSH);
            }
            // The host's count starts again when it joins the group again.
            s.lanes[q].taken = 0;
        }
        s.stats.dropped += s.held.len() as u64;
        self.counters.drop_unjoined += s.held.len() as u64;
        self.rx.held_total = self.rx.held_total.saturating_sub(s.held.len());
        s.held.clear();
        if s.starved.take().is_some() {
            if let Some(since) = s.xoff_since.take() {
                s.stats.xoff_time += now.saturating_duration_since(since);
            }
            self.counters.xon_sent += 1;
            self.signal_sender(abi::fabric_type::XON, group, src);
        }
        self.rx.streams[idx] = Some(s);
    }

    /// Runs the coalescing timers and retries pending completions; returns
    /// the next deadline, if any.
    pub fn rx_tick(&mut self, now: Instant) -> Option<Instant> {
        // Without bus mastering nothing can be written: the timers and the
        // completions waiting for room wait for it, untouched, and the
        // engine's idle tick looks again.
        if !self.running() || !self.bus_master() {
            return None;
        }
        let mut next: Option<Instant> = None;
        let mut i = 0;
        while i < self.rx.open.len() {
            let (id, q) = self.rx.open[i];
            let (g, n) = (abi::stream_group(id), abi::stream_node(id));
            let idx = stream_index(g, n);
            let Some(mut s) = self.rx.streams[idx].take() else {
                self.rx.open.swap_remove(i);
                continue;
            };
            match s.lanes[q].deadline {
                Some(d) if d <= now => {
                    self.close(&mut s, g, n, q, rx_flags::TIMEOUT);
                    self.rx.open.swap_remove(i);
                }
                Some(d) => {
                    next = Some(next.map_or(d, |x| x.min(d)));
                    i += 1;
                }
                None => {
                    self.rx.open.swap_remove(i);
                }
            }
            self.rx.streams[idx] = Some(s);
        }
        for q in 0..self.rx.queues.len() {
            if !self.rx.queues[q].pending.is_empty() {
                self.drain(q);
            }
        }
        next
    }
}
