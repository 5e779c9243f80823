// SPDX-License-Identifier: GPL-2.0

//! The fabric between NICs: messages (frames, xoff, xon) and a local
//! transport for them.
//!
//! The transport is a folder of UNIX datagram sockets, `node-N.sock` for node
//! N. A datagram carries one or more messages back to back. A broadcast goes
//! to every other node's socket; a node that has not joined the group drops
//! the frame in its receive engine. The traffic generator, which plays many
//! virtual nodes, binds one socket and links `node-N.sock` to it for each.

use std::collections::HashMap;
use std::io;
use std::os::unix::net::UnixDatagram;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use pagefill_abi::{self as abi, fabric, fabric_flags, fabric_type};

use crate::nic::FabricPort;

/// A decoded fabric message.
#[derive(Debug, PartialEq, Eq)]
pub enum Msg<'a> {
    Frame {
        group: u16,
        src: u8,
        seq: u32,
        eot: bool,
        data: &'a [u8],
    },
    Xoff {
        group: u16,
        src: u8,
        dst: u8,
    },
    Xon {
        group: u16,
        src: u8,
        dst: u8,
    },
}

fn header(
    ty: u8,
    flags: u8,
    group: u16,
    src: u8,
    dst: u8,
    len: u16,
    seq: u32,
) -> [u8; fabric::HEADER_SIZE] {
    let mut h = [0u8; fabric::HEADER_SIZE];
    h[fabric::MAGIC..fabric::MAGIC + 2].copy_from_slice(&abi::FABRIC_MAGIC.to_le_bytes());
    h[fabric::TYPE] = ty;
    h[fabric::FLAGS] = flags;
    h[fabric::GROUP..fabric::GROUP + 2].copy_from_slice(&group.to_le_bytes());
    h[fabric::SRC] = src;
    h[fabric::DST] = dst;
    h[fabric::LEN..fabric::LEN + 2].copy_from_slice(&len.to_le_bytes());
    h[fabric::SEQ..fabric::SEQ + 4].copy_from_slice(&seq.to_le_bytes());
    h
}

/// Appends a frame message to `out`.
pub fn push_frame(out: &mut Vec<u8>, group: u16, src: u8, seq: u32, eot: bool, data: &[u8]) {
    let flags = if eot { fabric_flags::EOT } else { 0 };
    out.extend_from_slice(&header(
        fabric_type::FRAME,
        flags,
        group,
        src,
        0,
        data.len() as u16,
        seq,
    ));
    out.extend_from_slice(data);
}

/// An xoff or xon message for stream (group, dst), from `src`.
pub fn control(ty: u8, group: u16, src: u8, dst: u8) -> [u8; fabric::HEADER_SIZE] {
    header(ty, 0, group, src, dst, 0, 0)
}

fn u16_at(b: &[u8], o: usize) -> u16 {
    u16::from_le_bytes([b[o], b[o + 1]])
}

/// Splits a datagram into messages; stops at the first malformed one.
pub fn parse(mut buf: &[u8]) -> impl Iterator<Item = Msg<'_>> {
    std::iter::from_fn(move || {
        if buf.len() < fabric::HEADER_SIZE || u16_at(buf, fabric::MAGIC) != abi::FABRIC_MAGIC {
            return None;
        }
        let len = usize::from(u16_at(buf, fabric::LEN));
        let (group, src, dst) = (
            u16_at(buf, fabric::GROUP),
            buf[fabric::SRC],
            buf[fabric::DST],
        );
        let msg = match buf[fabric::TYPE] {
            fabric_type::FRAME => {
                let data = buf.get(fabric::HEADER_SIZE..fabric::HEADER_SIZE + len)?;
                let s = fabric::SEQ;
                Msg::Frame {
                    group,
                    src,
                    seq: u32::from_le_bytes([buf[s], buf[s + 1], buf[s + 2], buf[s + 3]]),
                    eot: buf[fabric::FLAGS] & fabric_flags::EOT != 0,
                    data,
                }
            }
            fabric_type::XOFF => Msg::Xoff { group, src, dst },
            fabric_type::XON => Msg::Xon { group, src, dst },
            _ => return None,
        };
        let used = if matches!(msg, Msg::Frame { .. }) {
            fabric::HEADER_SIZE + len
        } else {
            fabric::HEADER_SIZE
        };
        buf = &buf[used..];
        Some(msg)
    })
}

/// Largest datagram the transport sends.
pub const MAX_DATAGRAM: usize = 64 * 1024;

/// Bytes a sender keeps queued for the fabric at most. With
/// [`WIRE_BYTES`], the stand-in for the wire's latency: together they bound
/// how many frames of a stream can still arrive after the receiver sent
/// xoff.
pub const MAX_IN_FLIGHT: usize = 16 * 1024;

/// Bytes of datagrams a sender may have sent that their receivers have not
/// read yet: the wire's capacity. The kernel charges a unix datagram to its
/// sender's send buffer until the receiver reads it, so the send buffer
/// bounds it whatever the host's `net.unix.max_dgram_qlen` (the count of
/// datagrams a socket queues: 10 by default, 512 where systemd sets it).
pub const WIRE_BYTES: usize = 16 * 1024;

/// Queued broadcasts are packed into one datagram up to this many bytes (a
/// larger frame goes alone): a few datagrams fill the wire, so it holds few
/// frames.
pub const PACK_LIMIT: usize = 2 * 1024;

/// Sets `sock`'s send buffer so that at most `bytes` of its datagrams
/// (counted as the kernel counts them, overhead included) wait unread.
fn set_send_buffer(sock: &UnixDatagram, bytes: usize) -> io::Result<()> {
    use std::os::fd::AsRawFd;
    // Linux doubles the value given, for its bookkeeping overhead.
    let half = libc::c_int::try_from(bytes / 2).map_err(|_| io::ErrorKind::InvalidInput)?;
    // SAFETY: the descriptor is the open socket `sock` borrows, and the
    // option value points to a `c_int` that lives across the call, its
    // size passed with it.
    let rc = unsafe {
        libc::setsockopt(
            sock.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_SNDBUF,
            (&half as *const libc::c_int).cast(),
            core::mem::size_of::<libc::c_int>() as libc::socklen_t,
        )
    };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// The socket path of node `n` in fabric folder `dir`.
pub fn node_path(dir: &Path, n: u8) -> PathBuf {
    dir.join(format!("node-{n}.sock"))
}

/// Outgoing traffic queued for the sending thread.
enum Out {
    Broadcast(Vec<u8>),
    To(u8, Vec<u8>),
}

/// One endpoint on a UNIX-socket fabric.
///
/// Sends go through a queue to a thread of their own, which may block on a
/// full peer without holding up the NIC (which must keep receiving, or two
/// NICs sending to each other would deadlock). The queue's size in bytes is
/// the backlog the transmit engine watches to stop taking descriptors:
/// link-level backpressure, no loss.
pub struct UnixFabric {
    sock: UnixDatagram,
    tx: std::sync::mpsc::Sender<Out>,
    backlog: std::sync::Arc<std::sync::atomic::AtomicUsize>,
}

/// The sending side: peers and the socket.
struct Sender {
    dir: PathBuf,
    me: u8,
    sock: UnixDatagram,
    /// Peers' sockets, one per distinct socket (the generator's virtual
    /// nodes share one), refreshed from the folder now and then.
    peers: Vec<PathBuf>,
    refreshed: Option<Instant>,
}

impl Sender {
    fn refresh(&mut self) {
        let now = Instant::now();
        if self
            .refreshed
            .is_some_and(|t| now - t < Duration::from_millis(200))
        {
            return;
        }
        self.refreshed = Some(now);
        let me = std::fs::canonicalize(node_path(&self.dir, self.me)).ok();
        let mut seen: HashMap<PathBuf, ()> = HashMap::new();
        let mut peers = Vec::new();
        for n in 0..abi::MAX_NODES as u8 {
            let p = node_path(&self.dir, n);
            let Ok(real) = std::fs::canonicalize(&p) else {
                continue;
            };
            if Some(&real) == me.as_ref() || seen.insert(real, ()).is_some() {
                continue;
            }
            peers.push(p);
        }
        self.peers = peers;
    }

    fn send(&self, buf: &[u8], to: &Path) {
        // A peer that went away loses the datagram, as a cable to a dead
        // node would; a full peer makes us wait.
        let _ = self.sock.send_to(buf, to);
    }

    fn run(
        mut self,
        rx: std::sync::mpsc::Receiver<Out>,
        backlog: std::sync::Arc<std::sync::atomic::AtomicUsize>,
    ) {
        use std::sync::atomic::Ordering;
        let mut batch: Vec<u8> = Vec::with_capacity(MAX_DATAGRAM);
        let mut next = None;
        loop {
            let first = match next.take() {
                Some(m) => m,
                None => match rx.recv() {
                    Ok(m) => m,
                    Err(_) => return,
                },
            };
            match first {
                Out::To(node, m) => {
                    self.send(&m, &node_path(&self.dir, node));
                    backlog.fetch_sub(m.len(), Ordering::AcqRel);
                }
                Out::Broadcast(m) => {
                    // Pack queued broadcasts into one datagram.
                    batch.clear();
                    batch.extend_from_slice(&m);
                    let mut bytes = m.len();
                    while let Ok(o) = rx.try_recv() {
                        match o {
                            Out::Broadcast(m) if batch.len() + m.len() <= PACK_LIMIT => {
                                batch.extend_from_slice(&m);
                                bytes += m.len();
                            }
                            other => {
                                next = Some(other);
                                break;
                            }
                        }
                    }
                    self.refresh();
                    for p in &self.peers {
                        self.send(&batch, p);
                    }
                    backlog.fetch_sub(bytes, Ordering::AcqRel);
                }
            }
        }
    }
}

impl UnixFabric {
    /// Binds node `me`'s socket in `dir` and starts its sending thread.
    pub fn bind(dir: &Path, me: u8) -> io::Result<Self> {
        std::fs::create_dir_all(dir)?;
        let path = node_path(dir, me);
        let _ = std::fs::remove_file(&path);
        let sock = UnixDatagram::bind(&path)?;
        // Sends go out on a socket of their own: the receiving side toggles
        // O_NONBLOCK on its socket, a flag a cloned descriptor would share.
        let out = UnixDatagram::unbound()?;
        set_send_buffer(&out, WIRE_BYTES)?;
        let sender = Sender {
            dir: dir.to_path_buf(),
            me,
            sock: out,
            peers: Vec::new(),
            refreshed: None,
        };
        let (tx, rx) = std::sync::mpsc::channel();
        let backlog = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let b = backlog.clone();
        std::thread::Builder::new()
            .name(format!("fabric-tx-{me}"))
            .spawn(move || sender.run(rx, b))?;
        Ok(Self { sock, tx, backlog })
    }

    /// A second handle on the socket, for the receiving thread.
    pub fn receiver(&self) -> io::Result<UnixDatagram> {
        self.sock.try_clone()
    }

    fn queue(&mut self, o: Out, len: usize) {
        self.backlog
            .fetch_add(len, std::sync::atomic::Ordering::AcqRel);
        if self.tx.send(o).is_err() {
            self.backlog
                .fetch_sub(len, std::sync::atomic::Ordering::AcqRel);
        }
    }
}

impl FabricPort for UnixFabric {
    fn broadcast(&mut self, msg: &[u8]) {
        self.queue(Out::Broadcast(msg.to_vec()), msg.len());
    }

    fn send_to(&mut self, node: u8, msg: &[u8]) {
        self.queue(Out::To(node, msg.to_vec()), msg.len());
    }

    fn backlog(&self) -> usize {
        self.backlog.load(std::sync::atomic::Ordering::Acquire)
    }
}

/// What a [`RecordingPort`] saw: (destination node or None for a broadcast,
/// message).
pub type Sent = std::sync::Arc<std::sync::Mutex<Vec<(Option<u8>, Vec<u8>)>>>;

/// A fabric port that goes nowhere, for tests and benchmarks that record
/// what was sent.
#[derive(Default)]
pub struct RecordingPort {
    pub sent: Sent,
}

impl FabricPort for RecordingPort {
    fn broadcast(&mut self, msg: &[u8]) {
        if let Ok(mut s) = self.sent.lock() {
            s.push((None, msg.to_vec()));
        }
    }
    fn send_to(&mut self, node: u8, msg: &[u8]) {
        if let Ok(mut s) = self.sent.lock() {
            s.push((Some(node), msg.to_vec()));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What a receiver that reads nothing can have queued from one sender:
    /// at most the wire's capacity, and the send buffer is what stops the
    /// sender (long before the host's datagram count limit would).
    #[test]
    fn the_wire_holds_at_most_wire_bytes() {
        let dir = std::env::temp_dir().join(format!("pf-wire-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("rx.sock");
        let _rx = UnixDatagram::bind(&path).unwrap();
        let tx = UnixDatagram::unbound().unwrap();
        set_send_buffer(&tx, WIRE_BYTES).unwrap();
        tx.set_nonblocking(true).unwrap();
        // Datagrams of 4 KiB: without the send buffer, the ten a socket
        // queues by default would be 40 KiB.
        let datagram = [0u8; 4096];
        let mut sent = 0;
        while tx.send_to(&datagram, &path).is_ok() {
            sent += datagram.len();
            assert!(sent <= WIRE_BYTES, "{sent} bytes on the wire");
        }
        assert!(sent >= datagram.len(), "nothing could be sent");
        // A frame as large as the largest MTU still goes out alone.
        let big = UnixDatagram::unbound().unwrap();
        set_send_buffer(&big, WIRE_BYTES).unwrap();
        let rx2 = dir.join("rx2.sock");
        let _r2 = UnixDatagram::bind(&rx2).unwrap();
        big.send_to(&vec![0u8; 9216 + 16], &rx2).unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn messages_round_trip_back_to_back() {
        let mut d = Vec::new();
        push_frame(&mut d, 7, 3, 42, true, &[1; 60]);
        d.extend_from_slice(&control(fabric_type::XOFF, 9, 1, 2));
        push_frame(&mut d, 4095, 31, u32::MAX, false, &[2; 14]);
        let msgs: Vec<_> = parse(&d).collect();
        assert_eq!(msgs.len(), 3);
        assert_eq!(
            msgs[0],
            Msg::Frame {
                group: 7,
                src: 3,
                seq: 42,
                eot: true,
                data: &[1; 60]
            }
        );
        assert_eq!(
            msgs[1],
            Msg::Xoff {
                group: 9,
                src: 1,
                dst: 2
            }
        );
        assert!(matches!(
            msgs[2],
            Msg::Frame {
                group: 4095,
                src: 31,
                eot: false,
                ..
            }
        ));
    }

    #[test]
    fn truncated_or_foreign_datagrams_stop_parsing() {
        let mut d = Vec::new();
        push_frame(&mut d, 1, 1, 1, false, &[0; 64]);
        assert_eq!(parse(&d[..d.len() - 1]).count(), 0);
        assert_eq!(parse(&[0u8; 32]).count(), 0);
    }

    #[test]
    fn broadcast_reaches_other_nodes_once_each() {
        let dir = std::env::temp_dir().join(format!("pf-fabric-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let mut a = UnixFabric::bind(&dir, 0).unwrap();
        let b = UnixFabric::bind(&dir, 1).unwrap();
        // Node 2 and 3 are one process's virtual nodes: one socket.
        let c = UnixFabric::bind(&dir, 2).unwrap();
        std::os::unix::fs::symlink(node_path(&dir, 2), node_path(&dir, 3)).unwrap();
        a.broadcast(b"hello");
        let mut buf = [0u8; 16];
        let t = Some(Duration::from_secs(5));
        b.sock.set_read_timeout(t).unwrap();
        c.sock.set_read_timeout(t).unwrap();
        assert_eq!(b.sock.recv(&mut buf).unwrap(), 5);
        assert_eq!(c.sock.recv(&mut buf).unwrap(), 5);
        c.sock.set_nonblocking(true).unwrap();
        std::thread::sleep(Duration::from_millis(50));
        assert!(c.sock.recv(&mut buf).is_err(), "one copy per socket");
        a.sock.set_nonblocking(true).unwrap();
        assert!(a.sock.recv(&mut buf).is_err(), "not to itself");
        assert_eq!(a.backlog(), 0);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
