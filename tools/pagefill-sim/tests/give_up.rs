// SPDX-License-Identifier: GPL-2.0

//! The generator's give-up: a receiver that pauses a stream and never lets
//! it go is given up on after the give-up's time, and the time the
//! receiver's threads waited for a CPU does not count.

use std::net::Ipv4Addr;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

use pagefill_abi as abi;
use pagefill_sim::fabric::{self, UnixFabric};
use pagefill_sim::generator::{self, GenConfig, GenReport};
use pagefill_sim::nic::FabricPort;

const GROUP: u16 = 3;
const SOURCE: u8 = 5;
const RECEIVER: u8 = 0;

/// Runs a generator of one stream that node `RECEIVER` pauses for good.
fn paused_for_good(dir: &Path, give_up: Duration, receiver_pids: Vec<u32>) -> GenReport {
    let _ = std::fs::remove_dir_all(dir);
    let mut receiver = UnixFabric::bind(dir, RECEIVER).expect("receiver node");
    let sock = receiver.receiver().expect("receiver socket");
    sock.set_nonblocking(true).expect("nonblocking");
    let cfg = GenConfig {
        fabric: dir.to_path_buf(),
        nodes: vec![SOURCE],
        groups: vec![GROUP],
        size: 64,
        count: 1_000_000,
        rate: 100,
        eot_every: 0,
        give_up: Some(give_up),
        receiver_pids,
        group_weight: Vec::new(),
        group_dport: Vec::new(),
        weighted_until: None,
        fill: false,
        dst_mac: abi::node_mac(RECEIVER),
        src_ip: Ipv4Addr::new(192, 0, 2, 0),
        dst_ip: Ipv4Addr::new(192, 0, 2, 1),
        dport: 9000,
    };
    let done = Arc::new(AtomicBool::new(false));
    let pauser = {
        let done = done.clone();
        let source = fabric::node_path(dir, SOURCE);
        std::thread::spawn(move || {
            let mut buf = vec![0u8; fabric::MAX_DATAGRAM];
            let xoff = fabric::control(abi::fabric_type::XOFF, GROUP, RECEIVER, SOURCE);
            while !done.load(Ordering::Acquire) {
                while sock.recv(&mut buf).is_ok() {}
                if source.exists() {
                    receiver.send_to(SOURCE, &xoff);
                }
                std::thread::sleep(Duration::from_millis(5));
            }
        })
    };
    let report = generator::run(&cfg).expect("generator");
    done.store(true, Ordering::Release);
    pauser.join().expect("pauser");
    let _ = std::fs::remove_dir_all(dir);
    report
}

fn fabric_dir(name: &str) -> PathBuf {
    std::env::temp_dir().join(format!("pf-give-up-{name}-{}", std::process::id()))
}

#[test]
fn a_stream_paused_for_good_is_given_up_on() {
    let t = Instant::now();
    let r = paused_for_good(&fabric_dir("plain"), Duration::from_millis(300), Vec::new());
    assert!(r.gave_up);
    assert!(r.paused_time >= Duration::from_millis(300), "{r:?}");
    assert!(t.elapsed() < Duration::from_secs(10), "{:?}", t.elapsed());
}

#[test]
fn time_the_receiver_waited_for_a_cpu_does_not_count() {
    // The "receiver": a process of two threads that spin on CPU 0 and take
    // turns, each waiting for the CPU about half the time.
    let child = std::process::Command::new(std::env::current_exe().expect("test binary"))
        .args(["--exact", "spin_on_cpu_0", "--ignored", "--nocapture"])
        .env("PF_SPIN_SECS", "20")
        .spawn()
        .expect("spinner");
    std::thread::sleep(Duration::from_millis(300));
    let r = paused_for_good(
        &fabric_dir("held"),
        Duration::from_millis(400),
        vec![child.id()],
    );
    let mut child = child;
    let _ = child.kill();
    let _ = child.wait();
    assert!(r.gave_up);
    if !Path::new("/proc/self/schedstat").exists() {
        return; // a kernel without CONFIG_SCHED_INFO: wall time only
    }
    // Given up once 400 ms passed in which the receiver did not wait: with
    // it waiting about half the time, after about 800 ms paused.
    assert!(r.held_off >= Duration::from_millis(150), "{r:?}");
    assert!(r.paused_time >= Duration::from_millis(550), "{r:?}");
    assert!(
        r.paused_time.saturating_sub(r.held_off) >= Duration::from_millis(400),
        "{r:?}"
    );
}

/// Not a test of its own: the spinning receiver of the test above.
#[test]
#[ignore]
fn spin_on_cpu_0() {
    let secs: u64 = std::env::var("PF_SPIN_SECS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    let start = Arc::new(Barrier::new(2));
    let spin = |start: Arc<Barrier>| {
        move || {
            // SAFETY: `set` is a zeroed `cpu_set_t` that `CPU_SET` fills
            // in; pid 0 is the calling thread.
            unsafe {
                let mut set: libc::cpu_set_t = core::mem::zeroed();
                libc::CPU_SET(0, &mut set);
                libc::sched_setaffinity(0, core::mem::size_of::<libc::cpu_set_t>(), &set);
            }
            start.wait();
            let until = Instant::now() + Duration::from_secs(secs);
            while Instant::now() < until {
                std::hint::spin_loop();
            }
        }
    };
    let a = std::thread::spawn(spin(start.clone()));
    let b = std::thread::spawn(spin(start));
    let _ = a.join();
    let _ = b.join();
}
