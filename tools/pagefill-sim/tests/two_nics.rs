// SPDX-License-Identifier: GPL-2.0

//! Two NICs on one fabric: what one transmits to a group, the other
//! receives if it joined that group, through the real UNIX-socket transport
//! and the engine thread.

mod common;

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use common::Host;
use pagefill_abi::{reg, rx_kind};
use pagefill_sim::dma::FakeMemory;
use pagefill_sim::fabric::{RecordingPort, UnixFabric};
use pagefill_sim::nic::Nic;

#[test]
fn a_frame_sent_to_a_group_reaches_the_other_nic_that_joined_it() {
    let dir = std::env::temp_dir().join(format!("pf-two-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    // NIC A: a Host whose fabric port is real.
    let mut a = Host::new(1, 6, 12);
    a.nic.port = Box::new(UnixFabric::bind(&dir, 1).unwrap());
    // NIC B: node 2, configured by its Host, then driven by its engine
    // thread; `b` keeps the view of B's memory.
    let mut b = Host::new(1, 6, 12);
    b.join(5, &[1]);
    let port_b = UnixFabric::bind(&dir, 2).unwrap();
    let sock_b = port_b.receiver().unwrap();
    b.nic.port = Box::new(port_b);
    b.nic.node_id = 2;
    let placeholder = Nic::new(
        0,
        Box::new(FakeMemory::new(0, 8)),
        Box::new(common::FakeIrq::default()),
        Box::new(RecordingPort::default()),
    );
    let nic_b = Arc::new(Mutex::new(std::mem::replace(&mut b.nic, placeholder)));
    {
        let nic_b = nic_b.clone();
        std::thread::spawn(move || pagefill_sim::server::run_engine(nic_b, sock_b));
    }
    std::thread::sleep(Duration::from_millis(250)); // let A see B's socket
    let payload = Host::frame_bytes(5, 1, 0, 200);
    a.tx(0, 5, &payload, 2);
    a.tx(0, 6, &payload, 1); // group 6: B did not join
    a.tx_doorbell(0);
    let deadline = Instant::now() + Duration::from_secs(10);
    let mut got = Vec::new();
    while got.iter().all(|c: &common::Cqe| c.kind != rx_kind::DATA) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(5));
        got.extend(b.completions(0));
    }
    let d = got
        .iter()
        .find(|c| c.kind == rx_kind::DATA)
        .expect("B received a buffer");
    assert_eq!((d.group, d.node, d.frames), (5, 1, 1));
    let recs = b.records(d.addr, d.bytes);
    assert_eq!(recs[0].2, payload);
    assert_eq!(recs[0].1, 0, "first frame of A's stream to group 5");
    let mut unjoined = 0;
    while unjoined == 0 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(5));
        let mut v = [0u8; 4];
        nic_b
            .lock()
            .unwrap()
            .bar0_read(reg::DROP_UNJOINED as u64, &mut v);
        unjoined = u32::from_le_bytes(v);
    }
    assert_eq!(
        unjoined, 1,
        "the frame to group 6 was dropped: B never joined it"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
