// SPDX-License-Identifier: GPL-2.0

//! The NIC: its registers, its configuration and control, and the state the
//! receive (`rx.rs`) and transmit (`tx.rs`) engines share.
//!
//! Register accesses are checked, not trusted: the host may only make
//! naturally aligned 32-bit accesses to registers that exist. Anything else
//! is a driver bug, which the model logs and counts, reading as all ones like
//! a master abort would. DMA goes through [`BusMaster`], which refuses every
//! access while the host has bus mastering disabled (counted; what needed it
//! waits or is dropped, as on a real function), and through [`Memory`], which
//! refuses addresses outside what the host mapped; such a refusal is a driver
//! bug and puts the device in the fatal state.

use std::time::Instant;

use log::{debug, error, warn};
use pagefill_abi::{self as abi, reg};

use crate::dma::{BusMaster, DmaError, DmaRefusal, Memory};
use crate::faults::Faults;
use crate::rx::RxEngine;
use crate::steer::Steering;
use crate::tx::TxEngine;

/// Where the NIC raises its MSI-X vectors.
pub trait Interrupts: Send {
    fn raise(&mut self, vector: u16);
}

/// Where the NIC sends fabric messages.
pub trait FabricPort: Send {
    /// Sends a frame to every other node.
    fn broadcast(&mut self, msg: &[u8]);
    /// Sends a control message (xoff/xon) to one node.
    fn send_to(&mut self, node: u8, msg: &[u8]);
    /// Bytes queued and not yet on the wire: the transmit engine stops
    /// taking descriptors while this is high.
    fn backlog(&self) -> usize {
        0
    }
}

/// Why a BAR0 access was refused.
#[derive(Debug, PartialEq, Eq)]
pub enum AccessError {
    /// Not a naturally aligned 4-byte access.
    Width { offset: u64, len: usize },
    /// No register at that offset, or not writable/readable.
    NoRegister { offset: u64 },
}

/// The device's counters, as its registers and control socket report them.
#[derive(Default, Clone, Debug)]
pub struct Counters {
    pub drop_unjoined: u64,
    pub drop_overflow: u64,
    pub drop_bad_frame: u64,
    pub drop_link_down: u64,
    pub starved: u64,
    /// Frames a flow filter dropped.
    pub drop_filtered: u64,
    pub rx_frames: u64,
    pub rx_bytes: u64,
    pub rx_buffers: u64,
    pub rx_completions: u64,
    pub tx_frames: u64,
    pub tx_bytes: u64,
    pub tx_bad_desc: u64,
    pub xoff_sent: u64,
    pub xoff_received: u64,
    pub xon_sent: u64,
    pub xon_doorbells: u64,
    pub irqs: u64,
    /// Register accesses refused: driver bugs.
    pub bad_accesses: u64,
    /// DMA accesses refused: driver bugs.
    pub dma_errors: u64,
    /// DMA accesses the device could not make because the host had bus
    /// mastering disabled in the PCI command register: not performed, and
    /// no device error.
    pub dma_refused_no_master: u64,
    /// Injected faults so far.
    pub faults_injected: u64,
    /// Frames written in buffers whose completion or records a fault
    /// spoiled: the host cannot deliver them, and should count the bad
    /// completion instead.
    pub frames_spoiled: u64,
}

/// A queue pair's host-programmed configuration.
#[derive(Clone, Copy, Debug)]
pub struct QueueConfig {
    pub cq_addr: u64,
    pub cq_shift: u32,
    pub tx_addr: u64,
    pub tx_shift: u32,
    pub qsb_addr: u64,
    pub rx_vector: u16,
    pub tx_vector: u16,
    /// `Q_CHUNK`: 0 in buffer mode, else the room of each chunk.
    pub chunk_room: u32,
    /// `Q_COALESCE_USECS`: the coalescing timer of the buffers whose
    /// frames go to this queue pair.
    pub coalesce_usecs: u32,
}

/// The coalescing timer after reset, in microseconds.
const DEFAULT_COALESCE_USECS: u32 = 50;

impl Default for QueueConfig {
    fn default() -> Self {
        Self {
            cq_addr: 0,
            cq_shift: 0,
            tx_addr: 0,
            tx_shift: 0,
            qsb_addr: 0,
            rx_vector: 0,
            tx_vector: 0,
            chunk_room: 0,
            coalesce_usecs: DEFAULT_COALESCE_USECS,
        }
    }
}

/// The NIC.
pub struct Nic {
    pub node_id: u8,
    /// Host memory, through the bus-master port the PCI command register
    /// opens and closes.
    pub mem: BusMaster,
    pub irq: Box<dyn Interrupts>,
    pub port: Box<dyn FabricPort>,
    pub counters: Counters,
    pub faults: Faults,
    pub(crate) enabled: bool,
    pub(crate) fatal: bool,
    /// Link state as the fabric gives it (the control socket can flap it).
    pub(crate) link_up: bool,
    pub(crate) master: u64,
    pub(crate) buf_shift: u32,
    pub(crate) coalesce_usecs: u32,
    /// `ctrl::RX_HASH`: records carry the flow hash, not the sequence number.
    pub(crate) rx_hash: bool,
    /// `ctrl::STEER`: each frame steered, a lane per queue pair.
    pub(crate) steer: bool,
    /// `ctrl::LOOPBACK`: sent frames come back to the receive side.
    pub(crate) loopback: bool,
    /// `ctrl::NO_XOFF`: a starved stream drops rather than pause its sender.
    pub(crate) no_xoff: bool,
    /// `ctrl::IGNORE_XOFF`: the transmit engine sends whatever receivers ask.
    pub(crate) ignore_xoff: bool,
    pub(crate) steering: Steering,
    pub(crate) num_queues: u32,
    pub(crate) misc_cause: u32,
    pub(crate) misc_armed: bool,
    pub(crate) queues: [QueueConfig; abi::MAX_QUEUES],
    pub rx: RxEngine,
    pub(crate) tx: TxEngine,
    /// The device stopped answering (a fault mode): MMIO reads all ones,
    /// nothing is processed.
    pub dead: bool,
    /// The engine processes nothing until then (a fault mode).
    pub stalled_until: Option<Instant>,
}

impl Nic {
    /// A NIC fresh from power-on, as fabric node `node_id`, reaching host
    /// memory `mem` once the host enables bus mastering
    /// ([`Nic::set_bus_master`]).
    pub fn new(
        node_id: u8,
        mem: Box<dyn Memory>,
        irq: Box<dyn Interrupts>,
        port: Box<dyn FabricPort>,
    ) -> Self {
        Self {
            node_id,
            mem: BusMaster::new(mem),
            irq,
            port,
            counters: Counters::default(),
            faults: Faults::default(),
            enabled: false,
            fatal: false,
            link_up: true,
            master: 0,
            buf_shift: abi::MIN_BUF_SHIFT,
            coalesce_usecs: DEFAULT_COALESCE_USECS,
            rx_hash: false,
            steer: false,
            loopback: false,
            no_xoff: false,
            ignore_xoff: false,
            steering: Steering::default(),
            num_queues: 1,
            misc_cause: 0,
            misc_armed: false,
            queues: [QueueConfig::default(); abi::MAX_QUEUES],
            rx: RxEngine::default(),
            tx: TxEngine::default(),
            dead: false,
            stalled_until: None,
        }
    }

    /// Reset: stop, forget every buffer (ownership returns to the host with
    /// no completion), clear configuration and counters. Bus mastering is
    /// the PCI command register's, which this reset leaves alone. The counts
    /// of the host's conduct (refused register and DMA accesses) stay, for
    /// the report when QEMU disconnects.
    pub fn reset(&mut self) {
        self.rx
            .forget_all(&mut *self.port, self.node_id, &mut self.counters);
        self.release_own_streams();
        let c = &self.counters;
        let keep = (c.bad_accesses, c.dma_errors, c.dma_refused_no_master);
        self.counters = Counters::default();
        let c = &mut self.counters;
        (c.bad_accesses, c.dma_errors, c.dma_refused_no_master) = keep;
        self.enabled = false;
        self.fatal = false;
        self.master = 0;
        self.buf_shift = abi::MIN_BUF_SHIFT;
        self.coalesce_usecs = DEFAULT_COALESCE_USECS;
        self.rx_hash = false;
        self.steer = false;
        self.loopback = false;
        self.no_xoff = false;
        self.ignore_xoff = false;
        self.steering = Steering::default();
        self.num_queues = 1;
        self.misc_cause = 0;
        self.misc_armed = false;
        self.queues = [QueueConfig::default(); abi::MAX_QUEUES];
        self.tx.reset_queues();
    }

    /// Whether the device stops taking frames from the link while its
    /// starved streams' FIFOs are nearly full (the xoffs they sent are
    /// on their way). Without xoff it takes them, and the FIFOs drop.
    pub fn link_paused(&self) -> bool {
        !self.no_xoff && self.rx.link_paused()
    }

    /// Whether the device may touch host memory and move frames.
    pub fn running(&self) -> bool {
        self.enabled && !self.fatal && !self.dead
    }

    pub fn buf_size(&self) -> usize {
        1 << self.buf_shift
    }

    /// Whether the host lets the device master the bus (PCI command
    /// register, Bus Master Enable).
    pub fn bus_master(&self) -> bool {
        self.mem.enabled()
    }

    /// The host set or cleared Bus Master Enable in the PCI command
    /// register (the vfio-user server forwards config space writes here).
    pub fn set_bus_master(&mut self, enabled: bool) {
        if enabled == self.mem.enabled() {
            return;
        }
        if !enabled && self.running() {
            warn!("bus mastering disabled while the device is enabled: its DMA is refused");
        }
        self.mem.set_enabled(enabled);
    }

    /// Records a DMA access the device could not make. With bus mastering
    /// disabled that is no error: a function cannot master the bus then,
    /// and the caller leaves its work undone (a frame dropped, a completion
    /// or a timer waiting). Anything else is a driver bug: the device stops.
    pub(crate) fn dma_failed(&mut self, what: &str, e: DmaError) {
        if e.cause == DmaRefusal::NoBusMaster {
            self.counters.dma_refused_no_master += 1;
            debug!("{what}: {e}");
            return;
        }
        self.counters.dma_errors += 1;
        error!("driver bug: {what}: {e}; device enters the fatal state");
        self.set_fatal();
    }

    /// Whether an operation whose every step is DMA may start; if bus
    /// mastering is disabled, counts the operation as one refused access.
    /// For operations that must not stop half way, such as a flush, which
    /// writes each stream's buffer and then forgets the stream.
    pub(crate) fn may_master(&mut self, what: &str) -> bool {
        if self.mem.enabled() {
            return true;
        }
        self.counters.dma_refused_no_master += 1;
        debug!("{what}: refused, bus mastering disabled");
        false
    }

    pub(crate) fn set_fatal(&mut self) {
        if !self.fatal {
            self.fatal = true;
            self.raise_misc(abi::misc::ERROR);
        }
    }

    pub(crate) fn raise_misc(&mut self, cause: u32) {
        self.misc_cause |= cause;
        if self.misc_armed {
            self.misc_armed = false;
            self.counters.irqs += 1;
            self.irq.raise(abi::MISC_VECTOR);
        }
    }

    /// Sets the link state, as the fabric or a link flap does.
    pub fn set_link(&mut self, up: bool) {
        if self.link_up != up {
            self.link_up = up;
            self.raise_misc(abi::misc::LINK_CHANGE);
        }
    }

    fn status(&self) -> u32 {
        let mut s = 0;
        if self.enabled {
            s |= abi::status::ENABLED;
        }
        if self.enabled && self.link_up {
            s |= abi::status::LINK_UP;
        }
        if self.fatal {
            s |= abi::status::FATAL;
        }
        s
    }

    /// Value of the 32-bit register at `offset`.
    pub fn read_reg(&self, offset: usize) -> Result<u32, AccessError> {
        let c = &self.counters;
        let mac = abi::node_mac(self.node_id);
        Ok(match offset {
            reg::ID => abi::ID_MAGIC,
            reg::VERSION => abi::version(abi::VERSION_MAJOR, abi::VERSION_MINOR),
            reg::MAX_GROUPS => abi::MAX_GROUPS as u32,
            reg::MAX_NODES => abi::MAX_NODES as u32,
            reg::MAX_QUEUES => abi::MAX_QUEUES as u32,
            reg::BUF_SHIFTS => abi::MIN_BUF_SHIFT | abi::MAX_BUF_SHIFT << 8,
            reg::NODE_ID => u32::from(self.node_id),
            reg::LINK_SPEED => abi::LINK_SPEED_MBPS,
            reg::MAC_LO => u32::from_le_bytes([mac[0], mac[1], mac[2], mac[3]]),
            reg::MAC_HI => u32::from_le_bytes([mac[4], mac[5], 0, 0]),
            reg::CTRL => {
                let enable = if self.enabled { abi::ctrl::ENABLE } else { 0 };
                let modes = [
                    (self.rx_hash, abi::ctrl::RX_HASH),
                    (self.steer, abi::ctrl::STEER),
                    (self.loopback, abi::ctrl::LOOPBACK),
                    (self.no_xoff, abi::ctrl::NO_XOFF),
                    (self.ignore_xoff, abi::ctrl::IGNORE_XOFF),
                ];
                let modes = modes.iter().filter(|m| m.0).fold(0, |a, m| a | m.1);
                enable | modes
            }
            reg::STATUS => self.status(),
            reg::MASTER_LO => self.master as u32,
            reg::MASTER_HI => (self.master >> 32) as u32,
            reg::BUF_SHIFT => self.buf_shift,
            reg::COALESCE_USECS => self.coalesce_usecs,
            reg::NUM_QUEUES => self.num_queues,
            reg::MISC_CAUSE => self.misc_cause,
            reg::DROP_UNJOINED => c.drop_unjoined as u32,
            reg::DROP_OVERFLOW => c.drop_overflow as u32,
            reg::DROP_BAD_FRAME => c.drop_bad_frame as u32,
            reg::STARVED => c.starved as u32,
            reg::RX_FRAMES => c.rx_frames as u32,
            reg::TX_FRAMES => c.tx_frames as u32,
            reg::DROP_LINK_DOWN => c.drop_link_down as u32,
            reg::TX_BAD_DESC => c.tx_bad_desc as u32,
            reg::DROP_FILTERED => c.drop_filtered as u32,
            reg::XOFF_SENT => c.xoff_sent as u32,
            reg::XOFF_RECEIVED => c.xoff_received as u32,
            o if (reg::QUEUE_BASE..reg::QUEUE_END).contains(&o) => {
                let q = &self.queues[(o - reg::QUEUE_BASE) / reg::QUEUE_STRIDE];
                match (o - reg::QUEUE_BASE) % reg::QUEUE_STRIDE {
                    reg::Q_CQ_LO => q.cq_addr as u32,
                    reg::Q_CQ_HI => (q.cq_addr >> 32) as u32,
                    reg::Q_CQ_SHIFT => q.cq_shift,
                    reg::Q_TX_LO => q.tx_addr as u32,
                    reg::Q_TX_HI => (q.tx_addr >> 32) as u32,
                    reg::Q_TX_SHIFT => q.tx_shift,
                    reg::Q_QSB_LO => q.qsb_addr as u32,
                    reg::Q_QSB_HI => (q.qsb_addr >> 32) as u32,
                    reg::Q_VECTORS => u32::from(q.rx_vector) | u32::from(q.tx_vector) << 8,
                    reg::Q_CHUNK => q.chunk_room,
                    reg::Q_COALESCE_USECS => q.coalesce_usecs,
                    _ => return Err(AccessError::NoRegister { offset: o as u64 }),
                }
            }
            o => match self.steering.read(o) {
                Some(v) => v,
                None => return Err(AccessError::NoRegister { offset: o as u64 }),
            },
        })
    }

    /// Writes the 32-bit register at `offset`.
    pub fn write_reg(&mut self, offset: usize, v: u32, now: Instant) -> Result<(), AccessError> {
        let lo = |old: u64| (old & !0xffff_ffff) | u64::from(v);
        let hi = |old: u64| (old & 0xffff_ffff) | u64::from(v) << 32;
        let cfg = !self.enabled;
        match offset {
            reg::CTRL => {
                self.rx_hash = v & abi::ctrl::RX_HASH != 0;
                if cfg {
                    self.steer = v & abi::ctrl::STEER != 0;
                    self.loopback = v & abi::ctrl::LOOPBACK != 0;
                    self.no_xoff = v & abi::ctrl::NO_XOFF != 0;
                    self.ignore_xoff = v & abi::ctrl::IGNORE_XOFF != 0;
                }
                if v & abi::ctrl::RESET != 0 {
                    self.reset();
                } else if v & abi::ctrl::ENABLE != 0 && !self.enabled {
                    self.enable();
                } else if v & abi::ctrl::ENABLE == 0 && self.enabled {
                    self.disable(now);
                }
            }
            reg::MASTER_LO if cfg => self.master = lo(self.master),
            reg::MASTER_HI if cfg => self.master = hi(self.master),
            reg::BUF_SHIFT if cfg => self.buf_shift = v,
            reg::NUM_QUEUES if cfg => self.num_queues = v,
            reg::MASTER_LO | reg::MASTER_HI | reg::BUF_SHIFT | reg::NUM_QUEUES => {}
            reg::COALESCE_USECS => {
                self.coalesce_usecs = v;
                for q in &mut self.queues {
                    q.coalesce_usecs = v;
                }
            }
            reg::MISC_CAUSE => self.misc_cause &= !v,
            reg::MISC_ARM => {
                if v & 1 != 0 {
                    self.misc_armed = true;
                    if self.misc_cause != 0 {
                        self.raise_misc(0);
                    }
                }
            }
            reg::XON => {
                self.counters.xon_doorbells += 1;
                if self.running() {
                    self.rx_xon(abi::stream_group(v), abi::stream_node(v), now);
                }
            }
            reg::GROUP_FLUSH => {
                if self.running()
                    && (v as usize) < abi::MAX_GROUPS
                    && self.may_master("flushing a group")
                {
                    self.rx_flush_group(v as u16, now);
                }
            }
            o if (reg::QUEUE_BASE..reg::QUEUE_END).contains(&o) => {
                let qi = (o - reg::QUEUE_BASE) / reg::QUEUE_STRIDE;
                let q = &mut self.queues[qi];
                match (o - reg::QUEUE_BASE) % reg::QUEUE_STRIDE {
                    reg::Q_CQ_LO if cfg => q.cq_addr = lo(q.cq_addr),
                    reg::Q_CQ_HI if cfg => q.cq_addr = hi(q.cq_addr),
                    reg::Q_CQ_SHIFT if cfg => q.cq_shift = v,
                    reg::Q_TX_LO if cfg => q.tx_addr = lo(q.tx_addr),
                    reg::Q_TX_HI if cfg => q.tx_addr = hi(q.tx_addr),
                    reg::Q_TX_SHIFT if cfg => q.tx_shift = v,
                    reg::Q_QSB_LO if cfg => q.qsb_addr = lo(q.qsb_addr),
                    reg::Q_QSB_HI if cfg => q.qsb_addr = hi(q.qsb_addr),
                    reg::Q_VECTORS if cfg => {
                        q.rx_vector = (v & 0xff) as u16;
                        q.tx_vector = ((v >> 8) & 0xff) as u16;
                    }
                    reg::Q_CHUNK if cfg => q.chunk_room = v,
                    reg::Q_COALESCE_USECS => q.coalesce_usecs = v,
                    reg::Q_CQ_LO
                    | reg::Q_CQ_HI
                    | reg::Q_CQ_SHIFT
                    | reg::Q_TX_LO
                    | reg::Q_TX_HI
                    | reg::Q_TX_SHIFT
                    | reg::Q_QSB_LO
                    | reg::Q_QSB_HI
                    | reg::Q_VECTORS
                    | reg::Q_CHUNK => {}
                    reg::Q_ARM => {
                        if self.running() && qi < self.num_queues as usize {
                            self.arm(qi, v);
                        }
                    }
                    reg::Q_TX_TAIL => {
                        if self.running() && qi < self.num_queues as usize {
                            self.tx.queues[qi].tail = v;
                            // A stalled device takes the doorbell but moves
                            // nothing: the engine does, once the stall ends.
                            if self.stalled_until.is_none_or(|until| until <= now) {
                                self.tx_process(qi);
                            }
                        }
                    }
                    _ => return Err(AccessError::NoRegister { offset: o as u64 }),
                }
            }
            o if o % 4 == 0 && self.steering.write(o, v) => {}
            o => return Err(AccessError::NoRegister { offset: o as u64 }),
        }
        if std::mem::take(&mut self.tx.resume) {
            self.tx_kick();
        }
        Ok(())
    }

    /// Checks the configuration and starts, or enters the fatal state.
    fn enable(&mut self) {
        let aligned = |a: u64| a != 0 && a.is_multiple_of(abi::DMA_ALIGN);
        let ring_ok = |s: u32| (abi::MIN_RING_SHIFT..=abi::MAX_RING_SHIFT).contains(&s);
        let mut ok = aligned(self.master)
            && (abi::MIN_BUF_SHIFT..=abi::MAX_BUF_SHIFT).contains(&self.buf_shift)
            && (1..=abi::MAX_QUEUES as u32).contains(&self.num_queues);
        for q in self.queues.iter().take(self.num_queues as usize) {
            ok &= aligned(q.cq_addr) && aligned(q.tx_addr) && aligned(q.qsb_addr);
            ok &= ring_ok(q.cq_shift) && ring_ok(q.tx_shift);
            ok &= q.rx_vector < abi::MSIX_VECTORS && q.tx_vector < abi::MSIX_VECTORS;
            ok &= q.chunk_room == 0
                || (abi::MIN_CHUNK_ROOM..=abi::MAX_CHUNK_ROOM).contains(&q.chunk_room);
        }
        if !ok {
            error!(
                "driver bug: enable with an invalid configuration; device enters the fatal state"
            );
            self.set_fatal();
            return;
        }
        self.rx.start(self.buf_size(), self.num_queues as usize);
        self.tx.reset_queues();
        self.enabled = true;
        if self.link_up {
            self.raise_misc(abi::misc::LINK_CHANGE);
        }
    }

    /// Stops: every stream's buffer is written with a FLUSH completion. With
    /// bus mastering disabled nothing can be written: the buffers are
    /// forgotten as on a reset, and ownership returns to the host.
    fn disable(&mut self, now: Instant) {
        if self.running() && self.may_master("flushing every stream to disable") {
            self.rx_flush_all(now);
        }
        self.rx
            .forget_all(&mut *self.port, self.node_id, &mut self.counters);
        self.release_own_streams();
        self.enabled = false;
        self.raise_misc(abi::misc::LINK_CHANGE);
    }

    /// Arms a queue's vectors; fires at once if work is already waiting.
    fn arm(&mut self, q: usize, bits: u32) {
        if bits & abi::arm::RX != 0 {
            self.rx.queues[q].armed = true;
            if self.rx_unconsumed(q) {
                self.fire_rx(q);
            }
        }
        if bits & abi::arm::TX != 0 {
            self.tx.queues[q].armed = true;
            if self.tx.queues[q].done_unseen {
                self.fire_tx(q);
            }
        }
    }

    pub(crate) fn fire_rx(&mut self, q: usize) {
        if self.rx.queues[q].armed {
            self.rx.queues[q].armed = false;
            self.counters.irqs += 1;
            self.irq.raise(self.queues[q].rx_vector);
        }
    }

    pub(crate) fn fire_tx(&mut self, q: usize) {
        if self.tx.queues[q].armed {
            self.tx.queues[q].armed = false;
            self.tx.queues[q].done_unseen = false;
            self.counters.irqs += 1;
            self.irq.raise(self.queues[q].tx_vector);
        }
    }

    fn check(offset: u64, len: usize) -> Result<usize, AccessError> {
        if len != 4 || !offset.is_multiple_of(4) {
            return Err(AccessError::Width { offset, len });
        }
        usize::try_from(offset)
            .ok()
            .filter(|&o| o < reg::END)
            .ok_or(AccessError::NoRegister { offset })
    }

    /// A BAR0 read as it arrives from the host.
    pub fn bar0_read(&mut self, offset: u64, data: &mut [u8]) {
        if self.dead {
            data.fill(0xff);
            return;
        }
        match Self::check(offset, data.len()).and_then(|o| self.read_reg(o)) {
            Ok(v) => data.copy_from_slice(&v.to_le_bytes()),
            Err(e) => {
                self.counters.bad_accesses += 1;
                error!("driver bug: BAR0 read refused: {e:?}");
                data.fill(0xff);
            }
        }
    }

    /// A BAR0 write as it arrives from the host.
    pub fn bar0_write(&mut self, offset: u64, data: &[u8], now: Instant) {
        if self.dead {
            return;
        }
        let res = Self::check(offset, data.len()).and_then(|o| {
            let mut v = [0u8; 4];
            v.copy_from_slice(data);
            self.write_reg(o, u32::from_le_bytes(v), now)
        });
        if let Err(e) = res {
            self.counters.bad_accesses += 1;
            error!("driver bug: BAR0 write refused: {e:?}");
        }
    }
}
