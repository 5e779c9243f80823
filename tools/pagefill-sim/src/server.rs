// SPDX-License-Identifier: GPL-2.0

//! Running one NIC: the engine thread that moves fabric traffic and timers
//! through the NIC, and the control socket.
//!
//! Control protocol: one command line per connection, answered with lines
//! and the connection closed.
//!
//! - `stats`: `name value` per device counter, then
//!   `stream GROUP NODE offered written dropped starved xoff_us` per stream;
//! - `link up` / `link down`;
//! - `fault MODE [EVERY]` / `fault off` (see [`crate::faults::FaultMode`]);
//! - `stall MS`: the device stops processing until MS milliseconds from
//!   now, replacing any stall under way (`stall 0` ends one);
//! - `dead`: the device stops answering (MMIO reads all ones, no DMA);
//! - `revive`: it answers again, as it was (the host must reset it).

use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::{UnixDatagram, UnixListener, UnixStream};
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use log::{error, info};

use crate::fabric::{self, MAX_DATAGRAM};
use crate::faults::FaultMode;
use crate::nic::Nic;

/// How long the engine sleeps at a time while the device is stalled.
const STALL_SLICE: Duration = Duration::from_millis(10);

/// Moves fabric traffic into the NIC and runs its timers, forever.
pub fn run_engine(nic: Arc<Mutex<Nic>>, sock: UnixDatagram) {
    let mut buf = vec![0u8; MAX_DATAGRAM];
    let mut deadline: Option<Instant> = None;
    // Reads never block: the engine waits in `wait_readable` instead.
    if sock.set_nonblocking(true).is_err() {
        return;
    }
    loop {
        let (stall, link_paused) = nic
            .lock()
            .map(|n| (n.stalled_until, n.link_paused()))
            .unwrap_or((None, false));
        if let Some(until) = stall {
            let now = Instant::now();
            if until > now {
                // In slices: a new `stall` command (`stall 0` ends it)
                // takes effect within one.
                std::thread::sleep((until - now).min(STALL_SLICE));
                continue;
            }
        }
        let now = Instant::now();
        let wait = deadline
            .map(|d| d.saturating_duration_since(now))
            .unwrap_or(Duration::from_millis(10))
            .clamp(Duration::from_micros(20), Duration::from_millis(10));
        if link_paused {
            // The link waits for held frames to drain (XON doorbells come
            // in on the MMIO thread); the timers still run.
            std::thread::sleep(wait.min(Duration::from_micros(100)));
        } else {
            wait_readable(&sock, wait);
        }
        let Ok(mut n) = nic.lock() else { return };
        let now = Instant::now();
        // Take what is waiting in one pass: one tick per batch.
        for _ in 0..64 {
            if n.link_paused() {
                break;
            }
            let Ok(len) = sock.recv(&mut buf) else { break };
            for m in fabric::parse(&buf[..len]) {
                n.fabric_message(m, now);
            }
        }
        deadline = n.rx_tick(now);
        n.tx_kick();
    }
}

/// Waits until `sock` has a datagram to read or `wait` has passed, to the
/// resolution of a high-resolution timer: `ppoll` keeps it, where a receive
/// timeout (`SO_RCVTIMEO`) is rounded up to jiffies (a 50 µs timeout takes
/// 7 to 8 ms on a `HZ=250` host, and the coalescing timer would fire that
/// late).
fn wait_readable(sock: &UnixDatagram, wait: Duration) {
    use std::os::fd::AsRawFd;
    let mut pfd = libc::pollfd {
        fd: sock.as_raw_fd(),
        events: libc::POLLIN,
        revents: 0,
    };
    let ts = libc::timespec {
        tv_sec: libc::time_t::try_from(wait.as_secs()).unwrap_or(libc::time_t::MAX),
        tv_nsec: libc::c_long::from(wait.subsec_nanos()),
    };
    // SAFETY: one `pollfd` for the open socket `sock` borrows, and a
    // timeout, both living across the call; no signal mask is given.
    // Readiness, a timeout or an interruption are all a reason to look.
    unsafe { libc::ppoll(&mut pfd, 1, &ts, core::ptr::null()) };
}

/// Answers one control command.
pub fn control_command(nic: &Mutex<Nic>, line: &str) -> String {
    let mut words = line.split_whitespace();
    let Ok(mut n) = nic.lock() else {
        return "error: device state poisoned\n".into();
    };
    match (words.next(), words.next(), words.next()) {
        (Some("stats"), None, None) => {
            let c = &n.counters;
            let mut out = format!("{c:?}\n");
            // Debug output "Counters { a: 1, b: 2 }" -> "a 1\nb 2\n".
            out = out
                .trim_start_matches("Counters {")
                .trim_end_matches("}\n")
                .split(',')
                .map(|kv| kv.trim().replacen(": ", " ", 1) + "\n")
                .collect();
            out.push_str(&format!("buffers_held {}\n", n.rx.buffers_held()));
            for (q, c) in n.queues.iter().enumerate() {
                out.push_str(&format!("coalesce_usecs {q} {}\n", c.coalesce_usecs));
            }
            for ((g, node), s) in n.rx.stream_stats() {
                out.push_str(&format!(
                    "stream {g} {node} {} {} {} {} {}\n",
                    s.offered,
                    s.written,
                    s.dropped,
                    s.starved,
                    s.xoff_time.as_micros()
                ));
            }
            out
        }
        (Some("link"), Some(state @ ("up" | "down")), None) => {
            n.set_link(state == "up");
            "ok\n".into()
        }
        (Some("fault"), Some("off"), None) => {
            n.faults.set(None, 1);
            "ok\n".into()
        }
        (Some("fault"), Some(mode), every) => match mode.parse::<FaultMode>() {
            Ok(m) => {
                n.faults
                    .set(Some(m), every.and_then(|e| e.parse().ok()).unwrap_or(1));
                "ok\n".into()
            }
            Err(e) => format!("error: {e}\n"),
        },
        (Some("stall"), Some(ms), None) => match ms.parse::<u64>() {
            Ok(ms) => {
                n.stalled_until = Some(Instant::now() + Duration::from_millis(ms));
                "ok\n".into()
            }
            Err(e) => format!("error: {e}\n"),
        },
        (Some("tx-rate"), Some(fps), None) => match fps.parse::<u32>() {
            Ok(fps) => {
                n.tx.pace.set(fps);
                "ok\n".into()
            }
            Err(e) => format!("error: {e}\n"),
        },
        (Some("dead"), None, None) => {
            n.dead = true;
            "ok\n".into()
        }
        (Some("revive"), None, None) => {
            n.dead = false;
            "ok\n".into()
        }
        _ => format!("error: unknown command: {line}\n"),
    }
}

/// Serves the control socket at `path`, forever.
pub fn run_control(nic: Arc<Mutex<Nic>>, path: &Path) -> std::io::Result<()> {
    let _ = std::fs::remove_file(path);
    let listener = UnixListener::bind(path)?;
    info!("control socket on {}", path.display());
    for conn in listener.incoming() {
        let Ok(conn) = conn else { continue };
        let mut line = String::new();
        let mut reader = BufReader::new(&conn);
        if reader.read_line(&mut line).is_err() {
            continue;
        }
        let reply = control_command(&nic, line.trim());
        if let Err(e) = (&conn).write_all(reply.as_bytes()) {
            error!("control reply: {e}");
        }
    }
    Ok(())
}

/// Sends one control command to the socket at `path`; returns the reply.
pub fn control_client(path: &Path, cmd: &str) -> std::io::Result<String> {
    let mut s = UnixStream::connect(path)?;
    s.write_all(cmd.as_bytes())?;
    s.write_all(b"\n")?;
    s.shutdown(std::net::Shutdown::Write)?;
    let mut out = String::new();
    std::io::Read::read_to_string(&mut s, &mut out)?;
    Ok(out)
}
