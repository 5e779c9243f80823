// SPDX-License-Identifier: GPL-2.0

//! Chunk mode (`reg::Q_CHUNK`): a queue's node-table entries hold chunk
//! lists, and the device writes one frame from the start of each chunk, its
//! record header into the chunk's entry.

mod common;

use common::{Host, ME};
use pagefill_abi::{self as abi, chunk_list, fabric_type, record_flags, reg, rx_flags, rx_kind};
use pagefill_sim::dma::Memory;
use pagefill_sim::faults::FaultMode;

/// Room of each chunk in these tests: a 2 KiB AF_XDP chunk less 256 bytes
/// of headroom.
const ROOM: u32 = 1792;

/// A NIC of one queue in chunk mode.
fn chunk_host() -> Host {
    let mut h = Host::new(1, 6, 12);
    h.write(reg::CTRL, 0);
    h.write(reg::queue(0, reg::Q_CHUNK), ROOM);
    h.write(reg::CTRL, abi::ctrl::ENABLE);
    assert_eq!(
        h.read(reg::STATUS) & abi::status::ENABLED,
        abi::status::ENABLED
    );
    h
}

/// Writes a list of `count` chunks, each at an odd offset in a buffer of
/// its own, into a fresh buffer; returns the list's address and the chunks'.
fn new_list(h: &mut Host, count: usize) -> (u64, Vec<u64>) {
    let list = h.new_buffer();
    let chunks: Vec<u64> = (0..count).map(|_| h.new_buffer() + 0x103).collect();
    let mut bytes = vec![0u8; chunk_list::SIZE];
    bytes[chunk_list::COUNT..chunk_list::COUNT + 2].copy_from_slice(&(count as u16).to_le_bytes());
    for (i, &c) in chunks.iter().enumerate() {
        let at = chunk_list::ENTRIES + i * chunk_list::ENTRY_SIZE + chunk_list::ADDR;
        bytes[at..at + 8].copy_from_slice(&c.to_le_bytes());
    }
    h.mem.write(list, &bytes).unwrap();
    (list, chunks)
}

fn post_list(h: &mut Host, g: u16, n: u8, count: usize) -> (u64, Vec<u64>) {
    let (list, chunks) = new_list(h, count);
    h.mem.write_u64(Host::entry_addr(g, n), list);
    (list, chunks)
}

/// Entry `i`'s record header: (len, flags, word).
fn entry(h: &Host, list: u64, i: usize) -> (u16, u16, u32) {
    let mut hdr = [0u8; 8];
    let at = list + (chunk_list::ENTRIES + i * chunk_list::ENTRY_SIZE + chunk_list::RECORD) as u64;
    h.mem.read(at, &mut hdr).unwrap();
    (
        u16::from_le_bytes([hdr[0], hdr[1]]),
        u16::from_le_bytes([hdr[2], hdr[3]]),
        u32::from_le_bytes([hdr[4], hdr[5], hdr[6], hdr[7]]),
    )
}

fn chunk(h: &Host, addr: u64, len: usize) -> Vec<u8> {
    let mut b = vec![0u8; len];
    h.mem.read(addr, &mut b).unwrap();
    b
}

#[test]
fn each_frame_starts_a_chunk_and_its_header_goes_in_the_chunks_entry() {
    let mut h = chunk_host();
    h.join(5, &[]);
    let (list, chunks) = post_list(&mut h, 5, 2, 4);
    let lens = [64usize, 61, 1500];
    for (i, &len) in lens.iter().enumerate() {
        h.frame(5, 2, i as u32, len, i == lens.len() - 1);
    }
    let c = h.completions(0);
    assert_eq!(c.len(), 2, "CLAIM then DATA: {c:?}");
    assert_eq!((c[0].kind, c[0].addr), (rx_kind::CLAIM, list));
    assert_eq!(
        (c[1].kind, c[1].flags, c[1].addr, c[1].frames),
        (rx_kind::DATA, rx_flags::EOT, list, 3)
    );
    assert_eq!(
        c[1].bytes as usize,
        lens.iter().sum::<usize>(),
        "BYTES: the frames' bytes"
    );
    for (i, &len) in lens.iter().enumerate() {
        assert_eq!(entry(&h, list, i), (len as u16, 0, i as u32));
        assert_eq!(
            chunk(&h, chunks[i], len),
            Host::frame_bytes(5, 2, i as u32, len)
        );
    }
    assert_eq!(
        entry(&h, list, 3),
        (0, 0, 0),
        "the unused chunk's entry is untouched"
    );
    assert_eq!(h.read(reg::RX_FRAMES), 3);
}

#[test]
fn a_frame_longer_than_the_room_goes_on_in_the_next_chunks() {
    let mut h = chunk_host();
    h.join(5, &[]);
    let (list, chunks) = post_list(&mut h, 5, 2, 8);
    let len = 4000;
    h.frame(5, 2, 9, len, true);
    let c = h.completions(0);
    assert_eq!((c[1].frames, c[1].bytes as usize), (1, len));
    let want = Host::frame_bytes(5, 2, 9, len);
    let room = ROOM as usize;
    assert_eq!(entry(&h, list, 0), (ROOM as u16, record_flags::MORE, 9));
    assert_eq!(entry(&h, list, 1), (ROOM as u16, record_flags::MORE, 9));
    assert_eq!(entry(&h, list, 2), ((len - 2 * room) as u16, 0, 9));
    let mut got = chunk(&h, chunks[0], room);
    got.extend(chunk(&h, chunks[1], room));
    got.extend(chunk(&h, chunks[2], len - 2 * room));
    assert_eq!(got, want);
}

#[test]
fn a_full_list_is_written_and_the_next_taken_in_one_completion() {
    let mut h = chunk_host();
    h.join(1, &[]);
    let (first, _) = post_list(&mut h, 1, 4, 3);
    h.frame(1, 4, 0, 64, false);
    let (second, chunks) = post_list(&mut h, 1, 4, 3);
    // Three frames fill the first list; a fourth that needs two chunks
    // does not fit the one left after two more.
    h.frame(1, 4, 1, 64, false);
    h.frame(1, 4, 2, 64, false);
    h.frame(1, 4, 3, 3000, true);
    let c = h.completions(0);
    assert_eq!(c.len(), 3, "{c:?}");
    assert_eq!(
        (c[1].addr, c[1].frames, c[1].flags),
        (first, 3, rx_flags::FULL | rx_flags::NEXT_TAKEN)
    );
    assert_eq!(
        (c[2].addr, c[2].frames, c[2].flags),
        (second, 1, rx_flags::EOT)
    );
    assert_eq!(entry(&h, second, 0).1, record_flags::MORE);
    assert_eq!(chunk(&h, chunks[0], 8), Host::frame_bytes(1, 4, 3, 8));
}

#[test]
fn a_starved_chunk_stream_sends_xoff_holds_its_frames_and_resumes_on_xon() {
    let mut h = chunk_host();
    h.join(2, &[]);
    post_list(&mut h, 2, 9, 2);
    for s in 0..4 {
        h.frame(2, 9, s, 100, false); // the third frame needs a list: none
    }
    let c = h.completions(0);
    assert_eq!(c.last().unwrap().flags, rx_flags::FULL | rx_flags::STARVED);
    let sent = h.take_sent();
    assert_eq!((sent[0].1, sent[0].3), (fabric_type::XOFF, ME));
    h.frame(2, 9, 4, 100, true);
    let (list, _) = post_list(&mut h, 2, 9, 8);
    h.write(reg::XON, abi::stream_id(2, 9));
    let c = h.completions(0);
    assert_eq!(c[0].kind, rx_kind::CLAIM);
    assert_eq!(
        (c[1].addr, c[1].frames, c[1].flags),
        (list, 3, rx_flags::EOT)
    );
    let seqs: Vec<u32> = (0..3).map(|i| entry(&h, list, i).2).collect();
    assert_eq!(seqs, [2, 3, 4], "held frames in order, none lost");
    assert_eq!(h.take_sent()[0].1, fabric_type::XON);
    assert_eq!(h.read(reg::DROP_OVERFLOW), 0);
}

#[test]
fn a_frame_that_no_list_of_the_host_can_hold_is_dropped_and_counted() {
    let mut h = chunk_host();
    h.join(3, &[]);
    post_list(&mut h, 3, 1, 2);
    // Three chunks' worth, in a list of two: dropped whole.
    h.frame(3, 1, 0, 4000, false);
    assert_eq!(h.read(reg::DROP_BAD_FRAME), 1);
    h.frame(3, 1, 1, 64, true);
    let c = h.completions(0);
    assert_eq!((c.last().unwrap().frames, c.last().unwrap().bytes), (1, 64));
}

#[test]
fn a_list_naming_no_chunk_or_too_many_is_a_driver_bug() {
    for count in [0usize, chunk_list::MAX_CHUNKS + 1] {
        let mut h = chunk_host();
        h.join(3, &[]);
        let (list, _) = new_list(&mut h, 1);
        h.mem.write(list, &(count as u16).to_le_bytes()).unwrap();
        h.mem.write_u64(Host::entry_addr(3, 1), list);
        h.frame(3, 1, 0, 64, true);
        assert_ne!(h.read(reg::STATUS) & abi::status::FATAL, 0, "count {count}");
    }
}

#[test]
fn a_chunk_room_out_of_range_refuses_to_enable() {
    for room in [abi::MIN_CHUNK_ROOM - 1, abi::MAX_CHUNK_ROOM + 1] {
        let mut h = Host::new(1, 6, 12);
        h.write(reg::CTRL, 0);
        h.write(reg::queue(0, reg::Q_CHUNK), room);
        assert_eq!(h.read(reg::queue(0, reg::Q_CHUNK)), room);
        h.write(reg::CTRL, abi::ctrl::ENABLE);
        assert_ne!(h.read(reg::STATUS) & abi::status::FATAL, 0, "room {room}");
    }
}

/// A list of four chunks and the DATA completion of its three frames, with
/// fault `mode` on at every chance.
fn faulty_list(mode: FaultMode) -> (Host, u64, Vec<common::Cqe>) {
    let mut h = chunk_host();
    h.join(5, &[]);
    let (list, _) = post_list(&mut h, 5, 2, 4);
    h.nic.faults.set(Some(mode), 1);
    for s in 0..3 {
        h.frame(5, 2, s, 64, s == 2);
    }
    let c = h.completions(0);
    (h, list, c)
}

#[test]
fn fault_modes_spoil_chunk_lists_and_their_completions() {
    let data = |c: &[common::Cqe]| *c.iter().find(|c| c.kind == rx_kind::DATA).unwrap();
    let (h, _, c) = faulty_list(FaultMode::LenPastBuffer);
    assert!(
        data(&c).bytes > 4 * ROOM,
        "BYTES past the room of the list's four chunks: {c:?}"
    );
    assert_eq!(h.nic.counters.frames_spoiled, 3);
    let (h, list, c) = faulty_list(FaultMode::RecordLen);
    assert_eq!(data(&c).bytes, 3 * 64, "the completion is right");
    assert_eq!(
        entry(&h, list, 0).0,
        ROOM as u16 + 1,
        "the first entry's length runs past its chunk"
    );
    assert_eq!(entry(&h, list, 1).0, 64, "the other entries are right");
    assert_eq!(h.nic.counters.frames_spoiled, 3);
    assert_eq!(h.nic.counters.faults_injected, 1);
    let (_, list, c) = faulty_list(FaultMode::FrameCount);
    assert_eq!((data(&c).addr, data(&c).frames), (list, 4));
    let (_, list, c) = faulty_list(FaultMode::NeverPosted);
    assert_ne!(
        data(&c).addr,
        list,
        "the DATA completion names another list"
    );
    let (_, _, c) = faulty_list(FaultMode::BadGroup);
    assert!(c.iter().all(|c| usize::from(c.group) >= abi::MAX_GROUPS));
    let (_, _, c) = faulty_list(FaultMode::BadNode);
    assert!(c.iter().all(|c| usize::from(c.node) >= abi::MAX_NODES));
    let (_, _, c) = faulty_list(FaultMode::BadQueue);
    assert!(c.iter().all(|c| c.queue == 200));
    let (h, list, c) = faulty_list(FaultMode::Duplicate);
    assert_eq!(c.len(), 4, "CLAIM and DATA, twice each: {c:?}");
    assert!(c.iter().all(|c| c.addr == list));
    assert_eq!(h.nic.counters.frames_spoiled, 0);
}

#[test]
fn record_len_past_the_largest_room_runs_past_the_bytes_written() {
    let mut h = Host::new(1, 6, 12);
    h.write(reg::CTRL, 0);
    h.write(reg::queue(0, reg::Q_CHUNK), abi::MAX_CHUNK_ROOM);
    h.write(reg::CTRL, abi::ctrl::ENABLE);
    h.join(5, &[]);
    let (list, _) = post_list(&mut h, 5, 2, 2);
    h.nic.faults.set(Some(FaultMode::RecordLen), 1);
    h.frame(5, 2, 0, 64, true);
    assert_eq!(entry(&h, list, 0).0, u16::MAX);
}
