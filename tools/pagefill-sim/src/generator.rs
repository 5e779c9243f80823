// SPDX-License-Identifier: GPL-2.0

//! The traffic generator: virtual remote nodes sending UDP frames over the
//! fabric, streams of groups x nodes, with per-stream sequence numbers in the
//! payload so a receiver can prove order and zero loss. It honours xoff/xon.
//!
//! Frame: Ethernet (to `dst_mac`, from the node's MAC), IPv4 from
//! `src_ip` with the node in the last byte, to `dst_ip`, UDP to `dport`; the
//! payload starts with [`PAYLOAD_MAGIC`], group (u16), node (u8), 0, and the
//! stream's sequence number (u64), all little endian. The rest of the
//! payload is zero and the UDP checksum 0 (none), or, with
//! [`GenConfig::fill`], a pattern and the real checksum.

use std::collections::HashSet;
use std::net::Ipv4Addr;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use pagefill_abi as abi;

use crate::csum;
use crate::fabric::{self, UnixFabric};
use crate::held_off::HeldOff;
use crate::nic::FabricPort;

/// How far a paced generator may fall behind its schedule before it
/// starts the schedule again from the present.
const MAX_PACE_LAG: Duration = Duration::from_millis(50);

/// First four payload bytes of a generated frame: "PFGN".
pub const PAYLOAD_MAGIC: [u8; 4] = *b"PFGN";
/// Bytes of Ethernet, IPv4 and UDP headers.
pub const HEADERS: usize = 14 + 20 + 8;
/// Smallest frame the generator makes: headers plus the payload's 16 bytes.
pub const MIN_SIZE: usize = HEADERS + 16;

/// What to send.
#[derive(Clone, Debug)]
pub struct GenConfig {
    pub fabric: PathBuf,
    pub nodes: Vec<u8>,
    pub groups: Vec<u16>,
    /// Ethernet frame length, without FCS.
    pub size: usize,
    /// Frames per stream.
    pub count: u64,
    /// Frames per second over all streams; 0 = as fast as the fabric takes.
    pub rate: u64,
    /// Mark every n-th frame of a stream end-of-transmission (0: only the last).
    pub eot_every: u64,
    pub dst_mac: [u8; 6],
    pub src_ip: Ipv4Addr,
    pub dst_ip: Ipv4Addr,
    pub dport: u16,
    /// Stop when every stream left has been paused this long (a receiver
    /// that never answers); None: wait for ever. Time the receiver spent
    /// held off the CPU (see [`GenConfig::receiver_pids`]) does not count.
    pub give_up: Option<Duration>,
    /// The host processes that make up the receiver (a guest's QEMU, its
    /// device models): while their threads wait for a CPU, the receiver
    /// cannot answer, and [`GenConfig::give_up`]'s clock stands still.
    pub receiver_pids: Vec<u32>,
    /// Groups whose streams send more: (group, weight), a stream of the
    /// group sending `weight` frames for each one of a stream of any other
    /// group (and `count` times `weight` in all, so every stream sends to
    /// the end). One group can load the receiver while the others carry
    /// traffic that a slower check counts whole.
    pub group_weight: Vec<(u16, u64)>,
    /// Groups whose frames go to another UDP port: (group, port).
    pub group_dport: Vec<(u16, u16)>,
    /// With weighted groups: their streams send on, past `count` times
    /// `weight`, until this file exists and the other streams are done
    /// (which they do at the weights' pace, as without it). A test whose
    /// receiver changes state for as long as it takes (leaves and joins a
    /// group on a slow guest) keeps that group loaded to the end, however
    /// long that is in host time.
    pub weighted_until: Option<PathBuf>,
    /// Fill the payload past its 16-byte header with a pattern that changes
    /// with the byte's position and the frame (byte `i` of the payload is
    /// `seq + i`, mod 256), and send the real UDP checksum. A frame copied
    /// in pieces (by a driver's multi-buffer XDP path, say) must arrive
    /// byte for byte: with the NIC's receive checksum offload off, the
    /// receiving stack verifies the UDP checksum over every byte and drops
    /// a frame that was torn or shifted, which an all-zero payload would
    /// hide. Off, the payload is zero past its header and the checksum 0
    /// (none), the frames tests and benchmarks expect.
    pub fill: bool,
}

impl GenConfig {
    /// Frames a stream of `group` sends for each one of an unweighted stream.
    pub fn weight(&self, group: u16) -> u64 {
        self.group_weight
            .iter()
            .find(|(g, _)| *g == group)
            .map_or(1, |&(_, w)| w)
    }

    /// The UDP destination port of `group`'s frames.
    pub fn dport(&self, group: u16) -> u16 {
        self.group_dport
            .iter()
            .find(|(g, _)| *g == group)
            .map_or(self.dport, |&(_, p)| p)
    }
}

/// What was sent.
#[derive(Debug, Default)]
pub struct GenReport {
    pub frames: u64,
    pub xoffs: u64,
    pub paused_time: Duration,
    pub elapsed: Duration,
    /// Stopped by [`GenConfig::give_up`] with frames unsent.
    pub gave_up: bool,
    /// With `gave_up`: how long of the last pause the receiver was held
    /// off the CPU.
    pub held_off: Duration,
}

fn ipv4_checksum(h: &[u8]) -> u16 {
    !csum::fold(csum::ones_sum(h, 0))
}

/// Builds the frame for (group, node, seq) into `out`.
pub fn build_frame(cfg: &GenConfig, group: u16, node: u8, seq: u64, out: &mut Vec<u8>) {
    let size = cfg.size.max(MIN_SIZE);
    out.clear();
    out.resize(size, 0);
    out[0..6].copy_from_slice(&cfg.dst_mac);
    out[6..12].copy_from_slice(&abi::node_mac(node));
    out[12..14].copy_from_slice(&0x0800u16.to_be_bytes());
    let ip = &mut out[14..34];
    ip[0] = 0x45;
    ip[2..4].copy_from_slice(&((size - 14) as u16).to_be_bytes());
    ip[6] = 0x40; // don't fragment
    ip[8] = 64;
    ip[9] = 17;
    let mut src = cfg.src_ip.octets();
    src[3] = node;
    ip[12..16].copy_from_slice(&src);
    ip[16..20].copy_from_slice(&cfg.dst_ip.octets());
    let csum = ipv4_checksum(ip);
    ip[10..12].copy_from_slice(&csum.to_be_bytes());
    let udp = &mut out[34..42];
    udp[0..2].copy_from_slice(&(10000 + u16::from(node)).to_be_bytes());
    udp[2..4].copy_from_slice(&cfg.dport(group).to_be_bytes());
    udp[4..6].copy_from_slice(&((size - 34) as u16).to_be_bytes());
    let p = &mut out[HEADERS..HEADERS + 16];
    p[0..4].copy_from_slice(&PAYLOAD_MAGIC);
    p[4..6].copy_from_slice(&group.to_le_bytes());
    p[6] = node;
    p[8..16].copy_from_slice(&seq.to_le_bytes());
    if cfg.fill {
        // Varies with the frame as well as the position, so a piece from
        // another frame, or from elsewhere in this one, does not match.
        let first = seq as u8;
        for (i, b) in out[HEADERS..].iter_mut().enumerate().skip(16) {
            *b = first.wrapping_add(i as u8);
        }
        let pseudo = csum::pseudo_sum(&out[26..34], csum::IPPROTO_UDP, size - 34);
        // The field is inside the frame (`size` is at least MIN_SIZE).
        let inserted = csum::insert_checksum_with(out, 34, 6, pseudo);
        debug_assert!(inserted);
    }
}

/// Runs the generator to completion.
pub fn run(cfg: &GenConfig) -> std::io::Result<GenReport> {
    let Some(&first) = cfg.nodes.first() else {
        return Ok(GenReport::default());
    };
    // A node id in use belongs to someone else (a NIC): taking it over
    // would cut that node off the fabric.
    for &n in &cfg.nodes {
        let p = fabric::node_path(&cfg.fabric, n);
        if std::fs::symlink_metadata(&p).is_ok() {
            return Err(std::io::Error::new(
                std::io::ErrorKind::AddrInUse,
                format!("fabric node {n} is in use ({})", p.display()),
            ));
        }
    }
    let mut port = UnixFabric::bind(&cfg.fabric, first)?;
    let mut links = Vec::new();
    for &n in &cfg.nodes[1..] {
        let p = fabric::node_path(&cfg.fabric, n);
        std::os::unix::fs::symlink(fabric::node_path(&cfg.fabric, first), &p)?;
        links.push(p);
    }
    // Streams a receiver paused: (group, node, receiver).
    let paused: Arc<Mutex<HashSet<(u16, u8, u8)>>> = Arc::default();
    let xoffs = Arc::new(std::sync::atomic::AtomicU64::new(0));
    {
        let sock = port.receiver()?;
        let paused = paused.clone();
        let xoffs = xoffs.clone();
        std::thread::spawn(move || {
            let mut buf = vec![0u8; fabric::MAX_DATAGRAM];
            while let Ok(len) = sock.recv(&mut buf) {
                let Ok(mut p) = paused.lock() else { return };
                for m in fabric::parse(&buf[..len]) {
                    match m {
                        fabric::Msg::Xoff { group, src, dst } => {
                            xoffs.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                            p.insert((group, dst, src));
                        }
                        fabric::Msg::Xon { group, src, dst } => {
                            p.remove(&(group, dst, src));
                        }
                        fabric::Msg::Frame { .. } => {}
                    }
                }
            }
        });
    }
    let streams: Vec<(u16, u8)> = cfg
        .groups
        .iter()
        .flat_map(|&g| cfg.nodes.iter().map(move |&n| (g, n)))
        .collect();
    let weights: Vec<u64> = streams.iter().map(|&(g, _)| cfg.weight(g)).collect();
    // A weighted stream sending until a file exists has no count of its own.
    let open_ended = |w: u64| w > 1 && cfg.weighted_until.is_some();
    let mut counts: Vec<u64> = weights
        .iter()
        .map(|&w| {
            if open_ended(w) {
                u64::MAX
            } else {
                cfg.count * w
            }
        })
        .collect();
    // One pass over the streams: a stream of weight w appears w times,
    // spread over the pass.
    let most = weights.iter().copied().max().unwrap_or(1);
    let weights = &weights;
    let pass: Vec<usize> = (0..most)
        .flat_map(|w| (0..weights.len()).filter(move |&i| weights[i] > w))
        .collect();
    let mut next = vec![0u64; streams.len()];
    let mut frame = Vec::new();
    let mut msg = Vec::new();
    let mut report = GenReport::default();
    let start = Instant::now();
    // Open-ended streams are given a count once the others are done and
    // the file exists (looked for every 10 ms): until then they keep their
    // share of the rate, and the others never send alone at all of it.
    let mut until_seen = !counts.contains(&u64::MAX);
    let mut until_checked = start;
    // Frames to send in all: the counted streams', and the open-ended
    // ones' once they have a count.
    let mut total: u64 = counts.iter().filter(|&&c| c != u64::MAX).sum();
    let mut paused_since: Option<Instant> = None;
    // The pacing schedule's origin: frames sent after it are due at the
    // rate from it.
    let mut pace_from = (start, 0u64);
    let mut held_off = HeldOff::new(cfg.receiver_pids.clone());
    // Whether this pause has taken the receiver's delays to count from,
    // and when the give-up's clock was last read past its limit.
    let mut held_off_started = false;
    let mut held_off_read: Option<Instant> = None;
    while !until_seen || report.frames < total {
        if !until_seen && until_checked.elapsed() >= Duration::from_millis(10) {
            until_checked = Instant::now();
            let counted_done = next
                .iter()
                .zip(&counts)
                .all(|(&n, &c)| c == u64::MAX || n >= c);
            until_seen = counted_done && cfg.weighted_until.as_ref().is_some_and(|f| f.exists());
            if until_seen {
                for (i, c) in counts.iter_mut().enumerate() {
                    if *c == u64::MAX {
                        // Ends the stream after its next frame, marked last.
                        *c = next[i] + 1;
                        total += *c;
                    }
                }
            }
        }
        let blocked: HashSet<(u16, u8)> = match paused.lock() {
            Ok(p) => p.iter().map(|&(g, n, _)| (g, n)).collect(),
            Err(_) => break,
        };
        let mut sent_any = false;
        for &i in &pass {
            let (g, n) = streams[i];
            if next[i] >= counts[i] || blocked.contains(&(g, n)) {
                continue;
            }
            let seq = next[i];
            next[i] += 1;
            let last = next[i] == counts[i];
            let eot = last || (cfg.eot_every != 0 && next[i].is_multiple_of(cfg.eot_every));
            build_frame(cfg, g, n, seq, &mut frame);
            msg.clear();
            fabric::push_frame(&mut msg, g, n, seq as u32, eot, &frame);
            port.broadcast(&msg);
            report.frames += 1;
            sent_any = true;
        }
        if !sent_any {
            let since = *paused_since.get_or_insert_with(|| {
                held_off_started = false;
                held_off_read = None;
                Instant::now()
            });
            if let Some(g) = cfg.give_up {
                // The receiver's delays are read (a walk through /proc)
                // only in a pause that lasts, never at full rate's many
                // short ones: its first 100 ms count as wall time.
                if !held_off_started && since.elapsed() >= Duration::from_millis(100) {
                    held_off.start();
                    held_off_started = true;
                }
                // Paused for the give-up's time in wall time; then at most
                // every 100 ms, whether the receiver had the CPU as long.
                if since.elapsed() >= g
                    && held_off_read.is_none_or(|t| t.elapsed() >= Duration::from_millis(100))
                {
                    held_off_read = Some(Instant::now());
                    let held = if held_off_started {
                        held_off.since_start()
                    } else {
                        Duration::ZERO
                    };
                    if since.elapsed().saturating_sub(held) >= g {
                        report.paused_time += since.elapsed();
                        report.held_off = held;
                        report.gave_up = true;
                        break;
                    }
                }
            }
            std::thread::sleep(Duration::from_micros(200));
            continue;
        }
        if let Some(since) = paused_since.take() {
            report.paused_time += since.elapsed();
            pace_from = (Instant::now(), report.frames);
        }
        // Pace to the rate, and keep the send queue short. A sender held
        // off (by xoff, or waiting for a CPU itself) resumes at the rate,
        // as one paced by its link does, not in a burst that makes up the
        // time lost: the schedule starts again from where it is.
        if cfg.rate > 0 {
            let (t0, f0) = pace_from;
            let due = t0 + Duration::from_secs_f64((report.frames - f0) as f64 / cfg.rate as f64);
            let now = Instant::now();
            if due > now {
                std::thread::sleep(due - now);
            } else if now - due > MAX_PACE_LAG {
                pace_from = (now, report.frames);
            }
        }
        while port.backlog() > fabric::MAX_IN_FLIGHT {
            std::thread::sleep(Duration::from_micros(20));
        }
    }
    while port.backlog() > 0 {
        std::thread::sleep(Duration::from_millis(1));
    }
    report.elapsed = start.elapsed();
    report.xoffs = xoffs.load(std::sync::atomic::Ordering::Relaxed);
    for p in links {
        let _ = std::fs::remove_file(p);
    }
    let _ = std::fs::remove_file(fabric::node_path(&cfg.fabric, first));
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg() -> GenConfig {
        GenConfig {
            fabric: PathBuf::new(),
            nodes: vec![5],
            groups: vec![3],
            size: 64,
            count: 1,
            rate: 0,
            eot_every: 0,
            give_up: None,
            receiver_pids: Vec::new(),
            group_weight: Vec::new(),
            group_dport: Vec::new(),
            weighted_until: None,
            fill: false,
            dst_mac: [0x02, 0x50, 0x46, 0x4c, 0, 1],
            src_ip: Ipv4Addr::new(192, 0, 2, 0),
            dst_ip: Ipv4Addr::new(192, 0, 2, 1),
            dport: 9000,
        }
    }

    #[test]
    fn frames_are_valid_ipv4_udp_with_the_stream_in_the_payload() {
        let mut f = Vec::new();
        build_frame(&cfg(), 3, 5, 77, &mut f);
        assert_eq!(f.len(), 64);
        assert_eq!(&f[12..14], &[0x08, 0x00]);
        assert_eq!(ipv4_checksum(&f[14..34]), 0, "header checksum verifies");
        assert_eq!(&f[26..30], &[192, 0, 2, 5]);
        assert_eq!(u16::from_be_bytes([f[36], f[37]]), 9000);
        assert_eq!(&f[42..46], b"PFGN");
        assert_eq!(u16::from_le_bytes([f[46], f[47]]), 3);
        assert_eq!(f[48], 5);
        assert_eq!(u64::from_le_bytes(f[50..58].try_into().unwrap()), 77);
    }

    #[test]
    fn a_group_can_have_its_own_port() {
        let mut c = cfg();
        c.group_dport = vec![(7, 9001)];
        let mut f = Vec::new();
        build_frame(&c, 7, 5, 0, &mut f);
        assert_eq!(u16::from_be_bytes([f[36], f[37]]), 9001);
        build_frame(&c, 3, 5, 0, &mut f);
        assert_eq!(u16::from_be_bytes([f[36], f[37]]), 9000);
        assert_eq!((c.weight(3), c.weight(7)), (1, 1));
        c.group_weight = vec![(7, 4)];
        assert_eq!((c.weight(3), c.weight(7)), (1, 4));
    }

    #[test]
    fn small_sizes_are_raised_to_fit_the_payload() {
        let mut c = cfg();
        c.size = 20;
        let mut f = Vec::new();
        build_frame(&c, 0, 0, 0, &mut f);
        assert_eq!(f.len(), MIN_SIZE);
    }

    #[test]
    fn filled_frames_carry_a_pattern_and_a_udp_checksum_that_verifies() {
        let mut c = cfg();
        c.fill = true;
        let mut f = Vec::new();
        for size in [64, 1500, 4014, 9014] {
            for seq in [0, 1, 77, 255, 256, 0x1234_5678_9abc] {
                c.size = size;
                build_frame(&c, 3, 5, seq, &mut f);
                assert_eq!(f.len(), size);
                assert_eq!(u64::from_le_bytes(f[50..58].try_into().unwrap()), seq);
                for (i, &b) in f[HEADERS..].iter().enumerate().skip(16) {
                    assert_eq!(b, (seq as u8).wrapping_add(i as u8), "size {size} byte {i}");
                }
                assert_ne!(u16::from_be_bytes([f[40], f[41]]), 0, "a checksum is sent");
                assert!(csum::l4_checksum_ok(&f), "size {size} seq {seq}");
                let last = f.len() - 1;
                for at in [HEADERS + 16, HEADERS + 17, (HEADERS + size) / 2, last] {
                    let mut torn = f.clone();
                    torn[at] ^= 0x01;
                    assert!(
                        !csum::l4_checksum_ok(&torn),
                        "size {size} seq {seq} byte {at}"
                    );
                }
            }
        }
    }

    #[test]
    fn without_fill_frames_are_zero_past_the_payload_header_and_unchecksummed() {
        let mut f = Vec::new();
        for size in [64, 1500, 9014] {
            let mut c = cfg();
            c.size = size;
            build_frame(&c, 3, 5, 77, &mut f);
            assert_eq!(&f[40..42], &[0, 0], "no UDP checksum");
            assert!(f[HEADERS + 16..].iter().all(|&b| b == 0));
        }
    }
}
