// SPDX-License-Identifier: GPL-2.0

//! End to end on the host: the traffic generator plays 31 virtual nodes on a
//! real UNIX-socket fabric, a NIC's engine thread receives into fake host
//! memory, and a minimal host loop plays the driver (refill on CLAIM and
//! NEXT_TAKEN, XON on starvation). With one buffer per stream the streams
//! starve all the time; flow control must still deliver every frame, in
//! order.

mod common;

use std::collections::HashMap;
use std::net::Ipv4Addr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use common::{CQS, MASTER, NODE_TABLES, QSBS};
use pagefill_abi::{self as abi, reg, rx_cqe, rx_flags, rx_kind};
use pagefill_sim::dma::{FakeMemory, Memory};
use pagefill_sim::fabric::UnixFabric;
use pagefill_sim::generator::{self, GenConfig};
use pagefill_sim::nic::{Interrupts, Nic};

struct NoIrq;
impl Interrupts for NoIrq {
    fn raise(&mut self, _: u16) {}
}

const BUF_SHIFT: u32 = 12;
const CQ_SHIFT: u32 = 10;

fn write(nic: &Mutex<Nic>, off: usize, v: u32) {
    nic.lock()
        .unwrap()
        .bar0_write(off as u64, &v.to_le_bytes(), Instant::now());
}

#[test]
fn generator_streams_arrive_complete_and_in_order_through_starvation() {
    let dir = std::env::temp_dir().join(format!("pf-e2e-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let mem = Arc::new(FakeMemory::new(common::BASE, common::MEM_SIZE));
    let port = UnixFabric::bind(&dir, 0).unwrap();
    let sock = port.receiver().unwrap();
    let mut nic = Nic::new(0, Box::new(mem.clone()), Box::new(NoIrq), Box::new(port));
    // What the driver's pci_set_master() does through the config space.
    nic.set_bus_master(true);
    let nic = Arc::new(Mutex::new(nic));
    // Configure like a driver: one queue, 4 KiB buffers, coalescing 20 us.
    for (r, v) in [
        (reg::MASTER_LO, MASTER as u32),
        (reg::BUF_SHIFT, BUF_SHIFT),
        (reg::NUM_QUEUES, 1),
        (reg::COALESCE_USECS, 20),
        (reg::queue(0, reg::Q_CQ_LO), CQS as u32),
        (reg::queue(0, reg::Q_CQ_SHIFT), CQ_SHIFT),
        (reg::queue(0, reg::Q_TX_LO), common::TX_RINGS as u32),
        (reg::queue(0, reg::Q_TX_SHIFT), 6),
        (reg::queue(0, reg::Q_QSB_LO), QSBS as u32),
        (reg::CTRL, abi::ctrl::ENABLE),
    ] {
        write(&nic, r, v);
    }
    let groups: Vec<u16> = vec![0, 1, 2];
    let nodes: Vec<u8> = (1..32).collect();
    // Join: one buffer per (group, node).
    // Buffers are handed out round robin from the fake memory; far more
    // than are ever in flight at once.
    let mut next_buf = common::BUFFERS;
    let mut fresh = move || {
        let a = next_buf;
        next_buf += 1 << BUF_SHIFT;
        if next_buf >= common::BASE + common::MEM_SIZE as u64 {
            next_buf = common::BUFFERS;
        }
        a
    };
    let entry = |g: u16, n: u8| NODE_TABLES + u64::from(g) * 256 + u64::from(n) * 8;
    for &g in &groups {
        for &n in &nodes {
            mem.write_u64(entry(g, n), fresh());
        }
        mem.write_u64(MASTER + u64::from(g) * 8, NODE_TABLES + u64::from(g) * 256);
    }
    {
        let nic = nic.clone();
        std::thread::spawn(move || pagefill_sim::server::run_engine(nic, sock));
    }
    let count = 300u64;
    let cfg = GenConfig {
        fabric: dir.clone(),
        nodes: nodes.clone(),
        groups: groups.clone(),
        size: 64,
        count,
        rate: 0,
        eot_every: 37,
        give_up: None,
        receiver_pids: Vec::new(),
        group_weight: Vec::new(),
        group_dport: Vec::new(),
        weighted_until: None,
        fill: false,
        dst_mac: abi::node_mac(0),
        src_ip: Ipv4Addr::new(192, 0, 2, 0),
        dst_ip: Ipv4Addr::new(192, 0, 2, 100),
        dport: 9000,
    };
    let gen = std::thread::spawn(move || generator::run(&cfg).unwrap());

    // The host loop.
    let mut expect: HashMap<(u16, u8), u64> = HashMap::new();
    let mut consumed = 0u32;
    let mut got = 0u64;
    let total = count * (groups.len() * nodes.len()) as u64;
    let deadline = Instant::now() + Duration::from_secs(20);
    let mut starved_seen = 0;
    let mut lazy: Vec<(u16, u8)> = Vec::new();
    while got < total && Instant::now() < deadline {
        let size = 1u32 << CQ_SHIFT;
        let addr = CQS + u64::from(consumed & (size - 1)) * rx_cqe::SIZE as u64;
        let mut e = [0u8; rx_cqe::SIZE];
        mem.read(addr, &mut e).unwrap();
        let phase = u32::from_le_bytes(e[28..32].try_into().unwrap()) & 1;
        if phase != ((consumed >> CQ_SHIFT) & 1) ^ 1 {
            std::thread::sleep(Duration::from_micros(50));
            continue;
        }
        consumed = consumed.wrapping_add(1);
        mem.write_u32(QSBS + abi::qsb::RX_CONSUMED as u64, consumed)
            .unwrap();
        let (kind, flags) = (e[rx_cqe::KIND], e[rx_cqe::FLAGS]);
        let g = u16::from_le_bytes([e[14], e[15]]);
        let n = e[rx_cqe::NODE];
        if kind == rx_kind::DATA {
            let buf = u64::from_le_bytes(e[0..8].try_into().unwrap());
            let bytes = u32::from_le_bytes(e[8..12].try_into().unwrap());
            let mut data = vec![0u8; bytes as usize];
            mem.read(buf, &mut data).unwrap();
            let mut off = 0;
            while off < data.len() {
                let len = usize::from(u16::from_le_bytes([data[off], data[off + 1]]));
                let f = &data[off + 8..off + 8 + len];
                assert_eq!(&f[42..46], b"PFGN");
                let (fg, fnode) = (u16::from_le_bytes([f[46], f[47]]), f[48]);
                assert_eq!((fg, fnode), (g, n), "frame in its stream's buffer");
                let seq = u64::from_le_bytes(f[50..58].try_into().unwrap());
                let want = expect.entry((g, n)).or_insert(0);
                assert_eq!(seq, *want, "stream ({g},{n}) in order, nothing lost");
                *want += 1;
                got += 1;
                off += abi::record::size(len);
            }
        }
        // A slow host: it refills taken entries in batches of 64, so
        // streams run dry; a starved stream it refills at once, with XON.
        if kind == rx_kind::CLAIM || flags & rx_flags::NEXT_TAKEN != 0 {
            lazy.push((g, n));
        }
        if lazy.len() >= 64 {
            for (g, n) in lazy.drain(..) {
                if mem.read_u64(entry(g, n)).unwrap() == 0 {
                    mem.write_u64(entry(g, n), fresh());
                }
            }
        }
        if kind == rx_kind::STARVED || flags & rx_flags::STARVED != 0 {
            starved_seen += 1;
            if mem.read_u64(entry(g, n)).unwrap() == 0 {
                mem.write_u64(entry(g, n), fresh());
            }
            write(&nic, reg::XON, abi::stream_id(g, n));
        }
    }
    let c = nic.lock().unwrap().counters.clone();
    let stalled: Vec<_> = nic
        .lock()
        .unwrap()
        .rx
        .stream_stats()
        .into_iter()
        .filter(|((g, n), s)| {
            s.written != expect.get(&(*g, *n)).copied().unwrap_or(0) || s.offered != count
        })
        .collect();
    // Check before joining the generator, which would wait forever for an
    // xon that never comes.
    assert_eq!(
        got, total,
        "every frame delivered; device {c:?}; streams behind: {stalled:?}"
    );
    let report = gen.join().unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(report.frames, total);
    assert_eq!(
        c.drop_overflow + c.drop_unjoined + c.drop_bad_frame,
        0,
        "{c:?}"
    );
    assert!(
        starved_seen > 0 && c.xoff_sent > 0,
        "flow control was exercised: {c:?}"
    );
    assert_eq!(c.xon_sent, c.xoff_sent);
}
