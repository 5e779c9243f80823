// SPDX-License-Identifier: GPL-2.0

//! `pagefill-sim`: the pagefill NIC's device model.
//!
//! ```text
//! pagefill-sim serve --socket PATH --fabric DIR --node N [--control PATH]
//!     serve one NIC to QEMU over vfio-user until QEMU disconnects
//! pagefill-sim ctl PATH COMMAND...
//!     send a control command (stats, link up|down, fault MODE [EVERY],
//!     fault off, stall MS, tx-rate FPS, dead) to a NIC's control socket
//! pagefill-sim gen --fabric DIR --nodes A-B --groups A-B --size BYTES
//!     --count N [--rate FPS] [--eot-every N] [--give-up-ms MS [--receiver-pids PID,...]]
//!     --dst-mac MAC --dst-ip IP [--src-ip IP] [--dport PORT] [--group-weight G=N,...]
//!     [--group-dport G=PORT,...] [--weighted-until FILE] [--fill 1]
//!     play virtual remote nodes sending numbered UDP streams (the weighted
//!     groups' streams until FILE exists, with --weighted-until; with
//!     --fill 1, a payload pattern and a real UDP checksum, so a receiver
//!     can verify every byte; the give-up's clock stands still while the
//!     threads of --receiver-pids, a guest's QEMU and device models, wait
//!     for a CPU)
//! ```

use std::net::Ipv4Addr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use pagefill_sim::config_space::ConfigSpace;
use pagefill_sim::fabric::UnixFabric;
use pagefill_sim::generator::{self, GenConfig};
use pagefill_sim::nic::Nic;
use pagefill_sim::server;
use pagefill_sim::vfio::{Backend, Msix, MsixInterrupts, SharedRegions};
use vfio_user::Server;

fn usage() -> ExitCode {
    eprintln!(
        "usage: pagefill-sim serve --socket PATH --fabric DIR --node N [--control PATH]\n\
         \x20      pagefill-sim ctl PATH COMMAND...\n\
         \x20      pagefill-sim gen --fabric DIR --nodes A-B --groups A-B --size N --count N\n\
         \x20                       [--rate FPS] [--eot-every N] [--give-up-ms MS [--receiver-pids PID,...]]\n\
         \x20                       --dst-mac MAC --dst-ip IP\n\
         \x20                       [--src-ip IP] [--dport PORT] [--group-weight G=N,...]\n\
         \x20                       [--group-dport G=PORT,...] [--weighted-until FILE] [--fill 1]"
    );
    ExitCode::from(2)
}

/// `--name value` options.
fn options(args: &[String]) -> Option<std::collections::HashMap<String, String>> {
    let mut m = std::collections::HashMap::new();
    let mut it = args.iter();
    while let Some(k) = it.next() {
        let k = k.strip_prefix("--")?;
        m.insert(k.to_string(), it.next()?.clone());
    }
    Some(m)
}

fn range<T: std::str::FromStr + Copy + Into<u32> + TryFrom<u32>>(s: &str) -> Option<Vec<T>> {
    let mut out = Vec::new();
    for part in s.split(',') {
        let (a, b) = part.split_once('-').unwrap_or((part, part));
        let (a, b): (T, T) = (a.parse().ok()?, b.parse().ok()?);
        for v in a.into()..=b.into() {
            out.push(T::try_from(v).ok()?);
        }
    }
    Some(out)
}

/// `G=V,G=V...`: a value per group.
fn per_group<T: std::str::FromStr>(s: Option<&str>) -> Option<Vec<(u16, T)>> {
    let Some(s) = s else {
        return Some(Vec::new());
    };
    s.split(',')
        .map(|kv| {
            let (g, v) = kv.split_once('=')?;
            Some((g.parse().ok()?, v.parse().ok()?))
        })
        .collect()
}

fn mac(s: &str) -> Option<[u8; 6]> {
    let v: Vec<u8> = s
        .split(':')
        .map(|b| u8::from_str_radix(b, 16))
        .collect::<Result<_, _>>()
        .ok()?;
    v.try_into().ok()
}

fn serve(args: &[String]) -> ExitCode {
    let Some(o) = options(args) else {
        return usage();
    };
    let (Some(socket), Some(fabric_dir), Some(node)) =
        (o.get("socket"), o.get("fabric"), o.get("node"))
    else {
        return usage();
    };
    let Ok(node) = node.parse::<u8>() else {
        return usage();
    };
    if usize::from(node) >= pagefill_abi::MAX_NODES {
        eprintln!(
            "pagefill-sim: node must be below {}",
            pagefill_abi::MAX_NODES
        );
        return ExitCode::from(2);
    }
    let port = match UnixFabric::bind(&PathBuf::from(fabric_dir), node) {
        Ok(p) => p,
        Err(e) => {
            eprintln!("pagefill-sim: cannot join the fabric in {fabric_dir}: {e}");
            return ExitCode::FAILURE;
        }
    };
    let Ok(rx_sock) = port.receiver() else {
        return ExitCode::FAILURE;
    };
    let regions = SharedRegions::default();
    let msix = Arc::new(Mutex::new(Msix::default()));
    let nic = Nic::new(
        node,
        Box::new(regions.clone()),
        Box::new(MsixInterrupts(msix.clone())),
        Box::new(port),
    );
    let nic = Arc::new(Mutex::new(nic));
    {
        let nic = nic.clone();
        std::thread::spawn(move || server::run_engine(nic, rx_sock));
    }
    if let Some(ctl) = o.get("control") {
        let nic = nic.clone();
        let ctl = PathBuf::from(ctl);
        std::thread::spawn(move || {
            if let Err(e) = server::run_control(nic, &ctl) {
                log::error!("control socket: {e}");
            }
        });
    }
    let server = match Server::new(
        &PathBuf::from(socket),
        true,
        Backend::irqs(),
        Backend::regions(),
    ) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("pagefill-sim: cannot listen on {socket}: {e:?}");
            return ExitCode::FAILURE;
        }
    };
    log::info!("serving pagefill NIC node {node} on {socket}");
    let mut backend = Backend {
        config: ConfigSpace::new(),
        nic: nic.clone(),
        regions,
        msix,
    };
    let res = server.run(&mut backend);
    let c = nic.lock().map(|n| n.counters.clone()).unwrap_or_default();
    eprintln!("pagefill-sim: node {node} final counters: {c:?}");
    if c.bad_accesses != 0 || c.dma_errors != 0 {
        eprintln!(
            "pagefill-sim: driver bug: {} refused register accesses, {} refused DMA accesses",
            c.bad_accesses, c.dma_errors
        );
        return ExitCode::from(3);
    }
    match res {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("pagefill-sim: {e:?}");
            ExitCode::FAILURE
        }
    }
}

fn ctl(args: &[String]) -> ExitCode {
    let Some((path, cmd)) = args.split_first() else {
        return usage();
    };
    match server::control_client(&PathBuf::from(path), &cmd.join(" ")) {
        Ok(reply) => {
            print!("{reply}");
            if reply.starts_with("error") {
                ExitCode::FAILURE
            } else {
                ExitCode::SUCCESS
            }
        }
        Err(e) => {
            eprintln!("pagefill-sim: {path}: {e}");
            ExitCode::FAILURE
        }
    }
}

fn gen(args: &[String]) -> ExitCode {
    let Some(o) = options(args) else {
        return usage();
    };
    let get = |k: &str| o.get(k).map(String::as_str);
    let cfg = (|| {
        Some(GenConfig {
            fabric: PathBuf::from(get("fabric")?),
            nodes: range::<u8>(get("nodes")?)?,
            groups: range::<u16>(get("groups")?)?,
            size: get("size")?.parse().ok()?,
            count: get("count")?.parse().ok()?,
            rate: get("rate").unwrap_or("0").parse().ok()?,
            eot_every: get("eot-every").unwrap_or("0").parse().ok()?,
            dst_mac: mac(get("dst-mac")?)?,
            src_ip: get("src-ip")
                .unwrap_or("192.0.2.0")
                .parse::<Ipv4Addr>()
                .ok()?,
            dst_ip: get("dst-ip")?.parse().ok()?,
            dport: get("dport").unwrap_or("9000").parse().ok()?,
            give_up: match get("give-up-ms") {
                Some(ms) => Some(Duration::from_millis(ms.parse().ok()?)),
                None => None,
            },
            receiver_pids: match get("receiver-pids") {
                Some(list) => list
                    .split(',')
                    .filter(|p| !p.is_empty())
                    .map(|p| p.parse().ok())
                    .collect::<Option<Vec<u32>>>()?,
                None => Vec::new(),
            },
            group_weight: per_group(get("group-weight"))?,
            group_dport: per_group(get("group-dport"))?,
            weighted_until: get("weighted-until").map(PathBuf::from),
            fill: match get("fill") {
                None | Some("0") => false,
                Some("1") => true,
                Some(_) => return None,
            },
        })
    })();
    let Some(cfg) = cfg else { return usage() };
    match generator::run(&cfg) {
        Ok(r) => {
            println!(
                "frames {} xoffs {} paused_us {} elapsed_us {}{}",
                r.frames,
                r.xoffs,
                r.paused_time.as_micros(),
                r.elapsed.as_micros(),
                if r.gave_up {
                    format!(
                        " gave_up (streams paused too long; the receiver was held off the CPU \
                         {} ms of the last pause)",
                        r.held_off.as_millis()
                    )
                } else {
                    String::new()
                }
            );
            if r.gave_up {
                ExitCode::FAILURE
            } else {
                ExitCode::SUCCESS
            }
        }
        Err(e) => {
            eprintln!("pagefill-sim gen: {e}");
            ExitCode::FAILURE
        }
    }
}

fn main() -> ExitCode {
    env_logger::Builder::from_env(env_logger::Env::default().default_filter_or("info")).init();
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.split_first() {
        Some((cmd, rest)) if cmd == "serve" => serve(rest),
        Some((cmd, rest)) if cmd == "ctl" => ctl(rest),
        Some((cmd, rest)) if cmd == "gen" => gen(rest),
        _ => usage(),
    }
}
