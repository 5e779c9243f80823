// SPDX-License-Identifier: GPL-2.0

//! `pagefill-sim --socket PATH`: serve one pagefill NIC to QEMU over vfio-user
//! on the UNIX socket PATH, until QEMU disconnects.

use std::path::PathBuf;
use std::process::ExitCode;

use pagefill_sim::vfio::Backend;
use vfio_user::Server;

fn usage() -> ExitCode {
    eprintln!("usage: pagefill-sim --socket PATH");
    ExitCode::from(2)
}

fn main() -> ExitCode {
    env_logger::Builder::from_env(env_logger::Env::default().default_filter_or("info")).init();
    let mut args = std::env::args().skip(1);
    let mut socket = None;
    while let Some(a) = args.next() {
        match a.as_str() {
            "--socket" => socket = args.next().map(PathBuf::from),
            _ => return usage(),
        }
    }
    let Some(socket) = socket else {
        return usage();
    };
    let server = match Server::new(&socket, true, Backend::irqs(), Backend::regions()) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("pagefill-sim: cannot listen on {}: {e:?}", socket.display());
            return ExitCode::FAILURE;
        }
    };
    log::info!("serving a pagefill NIC on {}", socket.display());
    let mut backend = Backend::new();
    let res = server.run(&mut backend);
    if backend.nic.bad_accesses != 0 {
        eprintln!(
            "pagefill-sim: {} refused register accesses (driver bug)",
            backend.nic.bad_accesses
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
