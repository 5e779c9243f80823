// SPDX-License-Identifier: GPL-2.0

//! The pagefill NIC's programming interface: PCI identity, limits, the BAR0
//! register map and the layouts of everything the driver and the device share
//! in host memory.
//!
//! This one file is compiled into both the kernel driver (as a module) and the
//! device model (as the `pagefill-abi` crate), so the two cannot disagree. It
//! uses `core` only. `Documentation/networking/device_drivers/ethernet/pagefill/`
//! documents every item here; a host test checks that the tables there match.
//!
//! All multi-byte values, in registers and in memory, are little endian.

/// PCI vendor ID: Red Hat's range for QEMU virtual devices, which the model
/// is; a silicon NIC would carry its vendor's ID.
pub const PCI_VENDOR_ID: u16 = 0x1b36;
/// PCI device ID of the pagefill NIC.
pub const PCI_DEVICE_ID: u16 = 0x00fe;
/// PCI revision of the interface described here.
pub const PCI_REVISION: u8 = 1;

/// Size of BAR0, the only BAR: registers, then the MSI-X table and PBA.
pub const BAR0_SIZE: usize = 0x4000;
/// Offset of the MSI-X table in BAR0.
pub const MSIX_TABLE_OFFSET: u32 = 0x2000;
/// Offset of the MSI-X pending bit array in BAR0.
pub const MSIX_PBA_OFFSET: u32 = 0x3000;
/// Number of MSI-X vectors the device offers.
pub const MSIX_VECTORS: u16 = 16;
/// The MSI-X vector for link changes and device errors.
pub const MISC_VECTOR: u16 = 0;

/// Value of [`reg::ID`]: `"PGFL"` read as a little-endian `u32`.
pub const ID_MAGIC: u32 = u32::from_le_bytes(*b"PGFL");
/// Major version of the interface. A driver refuses a major it does not know.
pub const VERSION_MAJOR: u16 = 1;
/// Minor version: additions that a driver of the same major may ignore.
/// 1 added [`record_flags`]; 2 added [`rx_kind::FLUSHED`]; 3 added the
/// flow hash ([`ctrl::RX_HASH`], [`record_flags::HASH`]); 4 added chunk
/// mode ([`reg::Q_CHUNK`], [`chunk_list`]); 5 added steering
/// ([`ctrl::STEER`], the RSS and filter registers); 6 added loopback and
/// pause control ([`ctrl::LOOPBACK`], [`ctrl::NO_XOFF`],
/// [`ctrl::IGNORE_XOFF`], the xoff counters); 7 added a coalescing timer
/// per queue pair ([`reg::Q_COALESCE_USECS`]).
pub const VERSION_MINOR: u16 = 7;

/// Groups (broadcast domains) on the fabric, and entries in the master table.
pub const MAX_GROUPS: usize = 4096;
/// Nodes on the fabric, and entries in a node table.
pub const MAX_NODES: usize = 32;
/// Queue pairs (a receive completion ring and a transmit ring each).
pub const MAX_QUEUES: usize = 4;
/// Smallest receive buffer, as a power of two: one 4 KiB page.
pub const MIN_BUF_SHIFT: u32 = 12;
/// Largest receive buffer, as a power of two: 64 KiB.
pub const MAX_BUF_SHIFT: u32 = 16;
/// Largest Ethernet frame (without FCS) the fabric carries.
pub const MAX_FRAME_LEN: usize = 9216;
/// Smallest Ethernet frame (without FCS) the fabric carries.
pub const MIN_FRAME_LEN: usize = 14;
/// Link and bus speed in Mb/s.
pub const LINK_SPEED_MBPS: u32 = 2500;
/// Smallest and largest completion or transmit ring, as powers of two.
pub const MIN_RING_SHIFT: u32 = 6;
/// Largest completion or transmit ring, as a power of two.
pub const MAX_RING_SHIFT: u32 = 15;

/// Bytes of the master table: one 64-bit entry per group.
pub const MASTER_TABLE_BYTES: usize = MAX_GROUPS * 8;
/// Bytes of a node table: a column of one 64-bit entry per source node for
/// each queue pair ([`node_entry`]). Without [`ctrl::STEER`] the device
/// uses the first column only.
pub const NODE_TABLE_BYTES: usize = MAX_QUEUES * MAX_NODES * 8;

/// Offset in a node table of the entry through which queue pair `queue`
/// receives the stream from `node`.
pub const fn node_entry(queue: usize, node: usize) -> usize {
    (queue * MAX_NODES + node) * 8
}
/// Alignment of every DMA address the driver programs (tables, rings,
/// buffers, queue status blocks): 256 bytes; buffers are also aligned to
/// their size's page.
pub const DMA_ALIGN: u64 = 256;

/// Smallest room a chunk may give a frame ([`reg::Q_CHUNK`]).
pub const MIN_CHUNK_ROOM: u32 = 64;
/// Largest room a chunk may give a frame: what a record's length holds.
pub const MAX_CHUNK_ROOM: u32 = 0xffff;

/// Bytes of the steering hash's key ([`reg::RSS_KEY`]).
pub const RSS_KEY_BYTES: usize = 40;
/// Entries of the indirection table ([`reg::RSS_INDIR`]).
pub const RSS_INDIR_SIZE: usize = 128;
/// Flow filters ([`reg::FILTER_BASE`]).
pub const MAX_FILTERS: usize = 32;

/// Packs a major and minor version the way [`reg::VERSION`] reports them.
pub const fn version(major: u16, minor: u16) -> u32 {
    ((major as u32) << 16) | minor as u32
}

/// Major part of a [`reg::VERSION`] value.
pub const fn version_major(v: u32) -> u16 {
    (v >> 16) as u16
}

/// Minor part of a [`reg::VERSION`] value.
pub const fn version_minor(v: u32) -> u16 {
    v as u16
}

/// BAR0 register offsets. All registers are 32 bits wide and accessed only as
/// naturally aligned 32-bit reads and writes.
pub mod reg {
    /// RO: [`super::ID_MAGIC`].
    pub const ID: usize = 0x000;
    /// RO: interface version, major in bits 31:16, minor in 15:0.
    pub const VERSION: usize = 0x004;
    /// RO: [`super::MAX_GROUPS`].
    pub const MAX_GROUPS: usize = 0x008;
    /// RO: [`super::MAX_NODES`].
    pub const MAX_NODES: usize = 0x00c;
    /// RO: [`super::MAX_QUEUES`].
    pub const MAX_QUEUES: usize = 0x010;
    /// RO: smallest buffer shift in bits 7:0, largest in 15:8.
    pub const BUF_SHIFTS: usize = 0x014;
    /// RO: this NIC's node id on the fabric (0..MAX_NODES).
    pub const NODE_ID: usize = 0x018;
    /// RO: link speed in Mb/s.
    pub const LINK_SPEED: usize = 0x01c;
    /// RO: MAC address bytes 0..3 (byte 0 in bits 7:0).
    pub const MAC_LO: usize = 0x020;
    /// RO: MAC address bytes 4..5 in bits 15:0.
    pub const MAC_HI: usize = 0x024;
    /// RW: [`super::ctrl`] bits.
    pub const CTRL: usize = 0x040;
    /// RO: [`super::status`] bits.
    pub const STATUS: usize = 0x044;
    /// RW while disabled: master table DMA address, bits 31:0.
    pub const MASTER_LO: usize = 0x048;
    /// RW while disabled: master table DMA address, bits 63:32.
    pub const MASTER_HI: usize = 0x04c;
    /// RW while disabled: receive buffer size as a power of two.
    pub const BUF_SHIFT: usize = 0x050;
    /// RW: coalescing timer in microseconds: the longest a frame waits in a
    /// partly filled buffer before the buffer is written. 0 writes every
    /// buffer as soon as no further frame of its stream is waiting. A write
    /// sets every queue pair's [`Q_COALESCE_USECS`] too (minor 7).
    pub const COALESCE_USECS: usize = 0x054;
    /// RW while disabled: queue pairs in use, 1..=MAX_QUEUES.
    pub const NUM_QUEUES: usize = 0x058;
    /// RW1C: [`super::misc`] cause bits; the misc vector fires when a bit
    /// is set while armed.
    pub const MISC_CAUSE: usize = 0x05c;
    /// WO: write 1 to arm the misc vector.
    pub const MISC_ARM: usize = 0x060;
    /// WO: the host refilled the entry of a stream the device reported
    /// starved; see [`super::stream_id`].
    pub const XON: usize = 0x064;
    /// WO: close every stream of a group and return its buffers; the value is
    /// the group, whose master entry the host cleared first. Completions with
    /// [`super::rx_flags::FLUSH`] follow, then one
    /// [`super::rx_kind::FLUSHED`] on every queue in use.
    pub const GROUP_FLUSH: usize = 0x068;
    /// RO: frames dropped because their group was not joined.
    pub const DROP_UNJOINED: usize = 0x080;
    /// RO: frames dropped because a starved stream overflowed the device's
    /// holding buffer (the sender ignored xoff for too long).
    pub const DROP_OVERFLOW: usize = 0x084;
    /// RO: frames dropped as malformed (length out of range).
    pub const DROP_BAD_FRAME: usize = 0x088;
    /// RO: times a stream found its node table entry empty (starved).
    pub const STARVED: usize = 0x08c;
    /// RO: frames written to host buffers.
    pub const RX_FRAMES: usize = 0x090;
    /// RO: frames sent to the fabric.
    pub const TX_FRAMES: usize = 0x094;
    /// RO: frames dropped: the link was down, or they came from it in loopback.
    pub const DROP_LINK_DOWN: usize = 0x098;
    /// RO: descriptors refused as malformed (length, flags, group).
    pub const TX_BAD_DESC: usize = 0x09c;
    /// RO: frames dropped by a flow filter ([`super::filter::DROP`]).
    pub const DROP_FILTERED: usize = 0x0a0;
    /// RO: xoffs sent (minor version 6).
    pub const XOFF_SENT: usize = 0x0a4;
    /// RO: xoffs received for this node's streams (minor version 6).
    pub const XOFF_RECEIVED: usize = 0x0a8;
    /// First queue pair's registers; queue `q` is at `QUEUE_BASE + q * QUEUE_STRIDE`.
    pub const QUEUE_BASE: usize = 0x100;
    /// Distance between two queue pairs' register blocks.
    pub const QUEUE_STRIDE: usize = 0x40;
    /// Queue register: receive completion ring address, bits 31:0.
    pub const Q_CQ_LO: usize = 0x00;
    /// Queue register: receive completion ring address, bits 63:32.
    pub const Q_CQ_HI: usize = 0x04;
    /// Queue register: receive completion ring entries as a power of two.
    pub const Q_CQ_SHIFT: usize = 0x08;
    /// Queue register: transmit ring address, bits 31:0.
    pub const Q_TX_LO: usize = 0x0c;
    /// Queue register: transmit ring address, bits 63:32.
    pub const Q_TX_HI: usize = 0x10;
    /// Queue register: transmit ring entries as a power of two.
    pub const Q_TX_SHIFT: usize = 0x14;
    /// Queue register: queue status block address, bits 31:0.
    pub const Q_QSB_LO: usize = 0x18;
    /// Queue register: queue status block address, bits 63:32.
    pub const Q_QSB_HI: usize = 0x1c;
    /// Queue register: MSI-X vectors, receive in bits 7:0, transmit in 15:8.
    pub const Q_VECTORS: usize = 0x20;
    /// Queue register, WO: [`super::arm`] bits.
    pub const Q_ARM: usize = 0x24;
    /// Queue register, WO: transmit doorbell, the free-running count of
    /// descriptors the host has written.
    pub const Q_TX_TAIL: usize = 0x28;
    /// Queue register (while disabled): 0 for buffer mode; otherwise chunk
    /// mode, and the bytes the device may write at each chunk's address
    /// ([`super::MIN_CHUNK_ROOM`]..=[`super::MAX_CHUNK_ROOM`]): the node
    /// table entries of the queue's streams hold [`super::chunk_list`]s.
    pub const Q_CHUNK: usize = 0x2c;
    /// Queue register (minor 7): the coalescing timer, in microseconds, of
    /// the buffers whose frames go to the queue pair; a write of
    /// [`COALESCE_USECS`] sets every queue pair's.
    pub const Q_COALESCE_USECS: usize = 0x30;

    /// Offset of register `r` of queue pair `q`.
    pub const fn queue(q: usize, r: usize) -> usize {
        QUEUE_BASE + q * QUEUE_STRIDE + r
    }
    /// End of the queue pairs' registers.
    pub const QUEUE_END: usize = QUEUE_BASE + super::MAX_QUEUES * QUEUE_STRIDE;

    /// RW: the steering hash's key, [`super::RSS_KEY_BYTES`] bytes in ten
    /// registers, byte `4 * i + j` in bits `8 * j + 7..8 * j` of register
    /// `i`. A reset loads [`super::RSS_KEY`].
    pub const RSS_KEY: usize = 0x400;
    /// RW: the indirection table, [`super::RSS_INDIR_SIZE`] one-byte
    /// queue-pair numbers packed as the key's bytes are. The device takes
    /// an entry modulo [`NUM_QUEUES`]. A reset loads entry `i` with `i`
    /// modulo [`super::MAX_QUEUES`].
    pub const RSS_INDIR: usize = 0x440;
    /// RW: [`super::rss_fields`] bits, which fields the hash covers. A reset
    /// sets them all.
    pub const RSS_FIELDS: usize = 0x4c0;
    /// Flow filter 0's registers; filter `f` is at
    /// `FILTER_BASE + f * FILTER_STRIDE` ([`super::filter`]).
    pub const FILTER_BASE: usize = 0x800;
    /// Distance between two filters' registers.
    pub const FILTER_STRIDE: usize = 0x80;
    /// End of the filters' registers.
    pub const FILTER_END: usize = FILTER_BASE + super::MAX_FILTERS * FILTER_STRIDE;

    /// Offset of register `r` of filter `f`.
    pub const fn filter(f: usize, r: usize) -> usize {
        FILTER_BASE + f * FILTER_STRIDE + r
    }
    /// End of the register space.
    pub const END: usize = FILTER_END;
}

/// [`reg::CTRL`] bits.
pub mod ctrl {
    /// Start receiving and transmitting with the programmed tables and rings.
    pub const ENABLE: u32 = 1 << 0;
    /// Reset: stop, forget every buffer (all return to the host), clear the
    /// configuration and counters. Reads back 0 when the reset is done.
    pub const RESET: u32 = 1 << 1;
    /// Write each frame's flow hash into its record ([`super::record_flags::HASH`])
    /// in place of the sequence number. May change while enabled: it applies
    /// from the next frame placed. Minor version 3 added it; it reads back
    /// as written.
    pub const RX_HASH: u32 = 1 << 2;
    /// Steer each frame (written while disabled; minor version 5): a
    /// frame goes to the queue pair the first matching [`super::filter`]
    /// names or, if none matches, to [`reg::RSS_INDIR`]'s entry for its
    /// hash modulo [`super::RSS_INDIR_SIZE`]: its flow hash
    /// ([`super::record_flags::HASH`]) or, for a frame with none, the
    /// Toeplitz hash of its group (two bytes, big endian) and source node
    /// under the same key. A stream then has a node-table entry and a
    /// buffer for each queue pair ([`super::node_entry`]). Clear: every
    /// frame of a stream goes to [`super::stream_queue`] through the first
    /// column.
    pub const STEER: u32 = 1 << 3;
    /// Loopback (written while disabled; minor version 6): sent frames
    /// come back as the stream (their group, this node), with its flow
    /// control; nothing goes to or comes from the link.
    pub const LOOPBACK: u32 = 1 << 4;
    /// Send no xoff (written while disabled; minor version 6): a starved
    /// stream holds what its FIFO takes and drops the rest
    /// ([`reg::DROP_OVERFLOW`]) until refilled (`ethtool -A tx off`).
    pub const NO_XOFF: u32 = 1 << 5;
    /// Ignore xoff (written while disabled; minor version 6): sending
    /// never waits for a receiver (`ethtool -A rx off`).
    pub const IGNORE_XOFF: u32 = 1 << 6;
}

/// [`reg::RSS_FIELDS`] bits: for which protocols the steering hash covers
/// the ports as well as the addresses.
pub mod rss_fields {
    /// TCP over IPv4.
    pub const TCP4_PORTS: u32 = 1 << 0;
    /// UDP over IPv4.
    pub const UDP4_PORTS: u32 = 1 << 1;
    /// TCP over IPv6.
    pub const TCP6_PORTS: u32 = 1 << 2;
    /// UDP over IPv6.
    pub const UDP6_PORTS: u32 = 1 << 3;
    /// Every bit: what a reset sets.
    pub const ALL: u32 = 0xf;
}

/// A flow filter's registers (offsets within its block,
/// [`reg::filter`]) and [`CTRL`] bits. The device reads a filter's match
/// when [`CTRL`] is written with [`VALID`]; a host changes a valid filter
/// by writing [`CTRL`] 0 first. Addresses are bytes as on the wire (IPv4 in
/// the first four), packed as the key's bytes are; ports are numbers. A
/// frame matches if, under each mask, its stream and fields equal the
/// filter's, and it is of the filter's flow type.
pub mod filter {
    /// RW: [`VALID`], [`DROP`], the flow type and the queue pair.
    pub const CTRL: usize = 0x00;
    /// RW: group in bits 15:0, source node in 23:16.
    pub const STREAM: usize = 0x04;
    /// RW: the bits of [`STREAM`] that must match.
    pub const STREAM_MASK: usize = 0x08;
    /// RW: source port in bits 15:0, destination port in 31:16.
    pub const PORTS: usize = 0x0c;
    /// RW: the bits of [`PORTS`] that must match.
    pub const PORTS_MASK: usize = 0x10;
    /// RW: source address, 16 bytes.
    pub const SRC: usize = 0x20;
    /// RW: the bits of [`SRC`] that must match.
    pub const SRC_MASK: usize = 0x30;
    /// RW: destination address, 16 bytes.
    pub const DST: usize = 0x40;
    /// RW: the bits of [`DST`] that must match.
    pub const DST_MASK: usize = 0x50;

    /// [`CTRL`]: the filter is in use.
    pub const VALID: u32 = 1 << 0;
    /// [`CTRL`]: a matching frame is dropped (and counted) instead.
    pub const DROP: u32 = 1 << 1;
    /// [`CTRL`]: the flow type, bits 7:4 ([`FLOW_ANY`] and the others).
    pub const FLOW_SHIFT: u32 = 4;
    /// [`CTRL`]: the queue pair, bits 15:8, taken modulo
    /// [`super::reg::NUM_QUEUES`].
    pub const QUEUE_SHIFT: u32 = 8;
    /// Flow type: any frame (only the stream is matched).
    pub const FLOW_ANY: u32 = 0;
    /// Flow type: TCP over IPv4 (not a fragment).
    pub const FLOW_TCP4: u32 = 1;
    /// Flow type: UDP over IPv4 (not a fragment).
    pub const FLOW_UDP4: u32 = 2;
    /// Flow type: TCP over IPv6 (no extension header).
    pub const FLOW_TCP6: u32 = 3;
    /// Flow type: UDP over IPv6 (no extension header).
    pub const FLOW_UDP6: u32 = 4;
    /// Flow type: any IPv4 (addresses only).
    pub const FLOW_IP4: u32 = 5;
    /// Flow type: any IPv6 (addresses only).
    pub const FLOW_IP6: u32 = 6;
}

/// [`reg::STATUS`] bits.
pub mod status {
    /// The device is enabled.
    pub const ENABLED: u32 = 1 << 0;
    /// The link is up.
    pub const LINK_UP: u32 = 1 << 1;
    /// The device hit an error it cannot recover from without a reset (a bad
    /// DMA address, a malformed configuration). See [`super::misc::ERROR`].
    pub const FATAL: u32 = 1 << 2;
}

/// [`reg::MISC_CAUSE`] bits.
pub mod misc {
    /// The link changed state.
    pub const LINK_CHANGE: u32 = 1 << 0;
    /// The device hit a fatal error.
    pub const ERROR: u32 = 1 << 1;
}

/// [`reg::Q_ARM`] bits.
pub mod arm {
    /// Arm the receive vector: it fires once at the next completion (at
    /// once if completions the host has not consumed are already posted).
    pub const RX: u32 = 1 << 0;
    /// Arm the transmit vector: it fires once when descriptors complete.
    pub const TX: u32 = 1 << 1;
}

/// The 32-bit stream id of [`reg::XON`]: group in bits 11:0, node in 20:16.
pub const fn stream_id(group: u16, node: u8) -> u32 {
    (group as u32 & 0xfff) | ((node as u32 & 0x1f) << 16)
}

/// Group of a [`stream_id`].
pub const fn stream_group(id: u32) -> u16 {
    (id & 0xfff) as u16
}

/// Node of a [`stream_id`].
pub const fn stream_node(id: u32) -> u8 {
    ((id >> 16) & 0x1f) as u8
}

/// The queue a stream's completions go to without [`ctrl::STEER`]: a hash
/// of group and node, so a stream always lands on one queue and streams
/// spread over all of them.
pub const fn stream_queue(group: u16, node: u8, num_queues: u32) -> u32 {
    let mut h = stream_id(group, node).wrapping_mul(0x9e37_79b1);
    h ^= h >> 16;
    if num_queues == 0 {
        0
    } else {
        h % num_queues
    }
}

/// A receive completion: 32 bytes in the completion ring. The device writes
/// bytes 0..28, then the last word with the phase bit, so a host that sees
/// the expected phase (after a read barrier) sees the whole entry.
pub mod rx_cqe {
    /// Size of an entry.
    pub const SIZE: usize = 32;
    /// u64: DMA address of the buffer the completion is about, as the host
    /// posted it; 0 for a [`super::rx_kind::STARVED`] or
    /// [`super::rx_kind::FLUSHED`] completion.
    pub const ADDR: usize = 0;
    /// u32: bytes of the buffer the device wrote (records with padding).
    pub const BYTES: usize = 8;
    /// u16: records in the buffer.
    pub const FRAMES: usize = 12;
    /// u16: group of the stream.
    pub const GROUP: usize = 14;
    /// u8: source node of the stream.
    pub const NODE: usize = 16;
    /// u8: the queue whose ring this is.
    pub const QUEUE: usize = 17;
    /// u8: [`super::rx_kind`].
    pub const KIND: usize = 18;
    /// u8: [`super::rx_flags`].
    pub const FLAGS: usize = 19;
    /// u32: buffers the device has taken from the stream's entry since the
    /// group was joined or the device reset, free running, as of this
    /// completion. A [`super::rx_kind::STARVED`] completion whose count is
    /// ahead of the host's tells it that the buffer it posted last was
    /// taken and written even though both completions naming it were lost.
    pub const TAKEN: usize = 20;
    /// u32: bit 0 is the phase: 1 in the first pass over the ring, then
    /// flipped at every wrap.
    pub const PHASE: usize = 28;
}

/// [`rx_cqe::KIND`] values.
pub mod rx_kind {
    /// The device wrote a buffer: `BYTES` bytes holding `FRAMES` records.
    pub const DATA: u8 = 1;
    /// The device took the entry's buffer as the first buffer of a stream
    /// that had none; nothing written yet. The entry is empty now.
    pub const CLAIM: u8 = 2;
    /// A stream that had no buffer found its entry empty: the device paused
    /// the sender (xoff) until the host refills the entry and writes
    /// [`super::reg::XON`].
    pub const STARVED: u8 = 3;
    /// The end of a group the host left: after a write of the group to
    /// [`super::reg::GROUP_FLUSH`], the device posts one on every queue in
    /// use, behind every completion of the group already queued for that
    /// queue (the flush's own [`super::rx_flags::FLUSH`] completions
    /// included), and posts nothing naming the group on that queue after it
    /// until the host sets the group's master entry again. `GROUP` and
    /// `QUEUE` say which; `NODE`, `ADDR`, `BYTES`, `FRAMES`, `FLAGS` and
    /// `TAKEN` are 0. Once the host has consumed it on every queue, no
    /// completion of the group is left to come and the host may forget the
    /// group. Minor version 2 added it.
    pub const FLUSHED: u8 = 4;
}

/// [`rx_cqe::FLAGS`] bits of a [`rx_kind::DATA`] completion.
pub mod rx_flags {
    /// Written because the next frame did not fit.
    pub const FULL: u8 = 1 << 0;
    /// Written because the sender signalled end of transmission.
    pub const EOT: u8 = 1 << 1;
    /// Written because the coalescing timer ran out.
    pub const TIMEOUT: u8 = 1 << 2;
    /// Written because the host flushed the group or reset the device.
    pub const FLUSH: u8 = 1 << 3;
    /// The device took the entry's buffer as this stream's next buffer; the
    /// entry is empty now.
    pub const NEXT_TAKEN: u8 = 1 << 4;
    /// The device needed a next buffer and found the entry empty: sender
    /// paused until the host refills the entry and writes XON.
    pub const STARVED: u8 = 1 << 5;
}

/// A record in a receive buffer: an 8-byte header, then the frame, then
/// padding to [`record::ALIGN`]. Records follow each other from offset 0.
pub mod record {
    /// Size of the header.
    pub const HEADER_SIZE: usize = 8;
    /// Alignment of every record.
    pub const ALIGN: usize = 8;
    /// u16: length of the frame that follows the header.
    pub const LEN: usize = 0;
    /// u16: [`super::record_flags`] (0 from a device of minor version 0).
    pub const FLAGS: usize = 2;
    /// u32: the frame's sequence number in its stream; or, with
    /// [`super::record_flags::HASH`], its flow hash.
    pub const SEQ: usize = 4;
    /// u32: the flow hash, at the sequence number's place
    /// ([`super::record_flags::HASH`]).
    pub const HASH: usize = 4;

    /// Bytes a record of a `len`-byte frame takes, padding included.
    // Called per frame on the receive path: a call costs more than the sum.
    #[inline]
    pub const fn size(len: usize) -> usize {
        (HEADER_SIZE + len + ALIGN - 1) & !(ALIGN - 1)
    }
}

/// [`record::FLAGS`] bits.
pub mod record_flags {
    /// The device checked the frame's layer 4 checksum and found it right:
    /// the frame is IPv4 (header checksum right, not a fragment, length
    /// consistent with the frame) or IPv6 (no extension header, length
    /// consistent), carrying TCP or UDP whose checksum over the pseudo-header
    /// and the segment is right; a UDP checksum of 0 over IPv4 (none sent)
    /// counts as right. Clear for any other frame, and for one whose
    /// checksum is wrong: the host checks those itself.
    pub const L4_CSUM_OK: u16 = 1 << 0;
    /// [`super::record::HASH`] holds the frame's flow hash, not its sequence
    /// number ([`super::ctrl::RX_HASH`] set): the Toeplitz hash
    /// ([`super::toeplitz`]) under the key in [`super::reg::RSS_KEY`] of an
    /// IPv4 or IPv6 frame's source and destination addresses and, with
    /// [`HASH_TCP`] or [`HASH_UDP`], its source and destination ports, in
    /// that order, as they are on the wire; the ports count where
    /// [`super::reg::RSS_FIELDS`] says so for the protocol. A frame that is
    /// neither IPv4 nor IPv6 gets no hash.
    pub const HASH: u16 = 1 << 1;
    /// With [`HASH`]: the frame is IPv6 (IPv4 otherwise).
    pub const HASH_IPV6: u16 = 1 << 2;
    /// With [`HASH`]: the hash covers TCP ports (an IPv4 frame that is not a
    /// fragment, or an IPv6 frame with no extension header, carrying TCP).
    pub const HASH_TCP: u16 = 1 << 3;
    /// With [`HASH`]: the hash covers UDP ports (as [`HASH_TCP`], for UDP).
    /// Never set with [`HASH_TCP`].
    pub const HASH_UDP: u16 = 1 << 4;
    /// In a [`super::chunk_list`] entry: the frame goes on in the next
    /// chunk (this chunk holds [`super::record::LEN`] bytes of it, the room).
    pub const MORE: u16 = 1 << 5;
}

/// A chunk list, what a node-table entry of a queue in chunk mode
/// ([`reg::Q_CHUNK`]) points to in place of a buffer: the host names up to
/// [`chunk_list::MAX_CHUNKS`] chunks, each a DMA address anywhere in host
/// memory, and the device writes one frame from the start of each (a frame
/// longer than the room goes on in the next chunks, [`record_flags::MORE`]),
/// and the frame's record header into the chunk's entry. The list is taken,
/// reported and given back as a buffer is; it is [`DMA_ALIGN`]-aligned.
pub mod chunk_list {
    /// Bytes of a list: its header and [`MAX_CHUNKS`] entries.
    pub const SIZE: usize = 1024;
    /// u16 in the header, host writes: chunks the list names, 1..=[`MAX_CHUNKS`].
    pub const COUNT: usize = 0;
    /// Offset of the first entry.
    pub const ENTRIES: usize = 16;
    /// Bytes of an entry.
    pub const ENTRY_SIZE: usize = 16;
    /// Most chunks a list names.
    pub const MAX_CHUNKS: usize = (SIZE - ENTRIES) / ENTRY_SIZE;
    /// u64 in an entry, host writes: where the device writes the chunk's
    /// bytes (any alignment).
    pub const ADDR: usize = 0;
    /// In an entry, device writes: the [`super::record`] header of the bytes
    /// it wrote at [`ADDR`].
    pub const RECORD: usize = 8;
}

/// The key of the device's flow hash ([`record_flags::HASH`]) after a
/// reset ([`reg::RSS_KEY`]): the Toeplitz key of Microsoft's RSS
/// specification, which many NICs use by default, so the hash of a flow
/// can be checked against published values.
pub static RSS_KEY: [u8; 40] = [
    0x6d, 0x5a, 0x56, 0xda, 0x25, 0x5b, 0x0e, 0xc2, 0x41, 0x67, 0x25, 0x3d, 0x43, 0xa3, 0x8f, 0xb0,
    0xd0, 0xca, 0x2b, 0xcb, 0xae, 0x7b, 0x30, 0xb4, 0x77, 0xcb, 0x2d, 0xa3, 0x80, 0x30, 0xf2, 0x0c,
    0x6a, 0x42, 0xb7, 0x3b, 0xbe, 0xac, 0x01, 0xfa,
];

/// The Toeplitz hash of `input` under `key`: for each bit of `input` that
/// is set, from the most significant bit of its first byte on, the 32 bits
/// of `key` starting at that bit's position are XORed into the result.
/// `key` must hold at least 4 bytes more than `input`; a shorter key is
/// taken as padded with zero bits.
pub fn toeplitz(key: &[u8], input: &[u8]) -> u32 {
    let key_byte = |i: usize| u32::from(key.get(i).copied().unwrap_or(0));
    // The key's 32-bit window at the current bit, and the bits that follow.
    let mut window = (key_byte(0) << 24) | (key_byte(1) << 16) | (key_byte(2) << 8) | key_byte(3);
    let mut hash = 0u32;
    for (i, &byte) in input.iter().enumerate() {
        let next = key_byte(i + 4);
        for bit in 0..8 {
            if byte & (0x80 >> bit) != 0 {
                hash ^= window;
            }
            window = (window << 1) | ((next >> (7 - bit)) & 1);
        }
    }
    hash
}

/// A transmit descriptor: 16 bytes in the transmit ring. A frame is one or
/// more descriptors, the first with [`tx_flags::SOF`], the last with
/// [`tx_flags::EOF`].
pub mod tx_desc {
    /// Size of a descriptor.
    pub const SIZE: usize = 16;
    /// u64: DMA address of the data.
    pub const ADDR: usize = 0;
    /// u16: bytes of data.
    pub const LEN: usize = 8;
    /// u16: destination group (the same in every descriptor of a frame).
    pub const GROUP: usize = 10;
    /// u8: [`super::tx_flags`].
    pub const FLAGS: usize = 12;
    /// u8, first descriptor of a frame with [`super::tx_flags::CSUM`]:
    /// where the checksum goes, in bytes from `CSUM_START`.
    pub const CSUM_OFFSET: usize = 13;
    /// u16, first descriptor of a frame with [`super::tx_flags::CSUM`]:
    /// offset in the frame where checksumming starts.
    pub const CSUM_START: usize = 14;
}

/// [`tx_desc::FLAGS`] bits.
pub mod tx_flags {
    /// First descriptor of a frame.
    pub const SOF: u8 = 1 << 0;
    /// Last descriptor of a frame.
    pub const EOF: u8 = 1 << 1;
    /// On the first descriptor: the device sums the frame from `CSUM_START`
    /// to its end (the Internet checksum, over what the host left in the
    /// checksum field, typically the pseudo-header sum) and stores the
    /// complement at `CSUM_START + CSUM_OFFSET` (0xffff for a zero), as
    /// Linux's `CHECKSUM_PARTIAL` asks.
    pub const CSUM: u8 = 1 << 2;
}

/// The queue status block: 64 bytes of host memory per queue pair, where the
/// host and the device tell each other their ring positions without MMIO.
pub mod qsb {
    /// Size of the block.
    pub const SIZE: usize = 64;
    /// u32, written by the host: receive completions consumed (free running).
    /// The device reads it only when the ring looks full, and at arming.
    pub const RX_CONSUMED: usize = 0;
    /// u32, written by the device: transmit descriptors done (free running).
    pub const TX_DONE: usize = 8;
}

/// A message on the fabric between NICs (and the traffic generator's virtual
/// nodes): a 16-byte header, then for a frame its Ethernet bytes. The driver
/// never sees these; they are here because they are part of the hardware.
pub mod fabric {
    /// Size of the header.
    pub const HEADER_SIZE: usize = 16;
    /// u16: [`super::FABRIC_MAGIC`].
    pub const MAGIC: usize = 0;
    /// u8: [`super::fabric_type`].
    pub const TYPE: usize = 2;
    /// u8: [`super::fabric_flags`].
    pub const FLAGS: usize = 3;
    /// u16: group the frame is sent to, or the stream's group for xoff/xon.
    pub const GROUP: usize = 4;
    /// u8: sending node.
    pub const SRC: usize = 6;
    /// u8: for xoff/xon, the node whose stream is paused or resumed.
    pub const DST: usize = 7;
    /// u16: Ethernet frame length.
    pub const LEN: usize = 8;
    /// u32: sequence number of the frame in its (group, source) stream.
    pub const SEQ: usize = 12;
}

/// Value of [`fabric::MAGIC`].
pub const FABRIC_MAGIC: u16 = 0x5046;

/// [`fabric::TYPE`] values.
pub mod fabric_type {
    /// An Ethernet frame.
    pub const FRAME: u8 = 1;
    /// Pause the stream (group, DST) until xon: the receiver is starved.
    pub const XOFF: u8 = 2;
    /// Resume the stream (group, DST).
    pub const XON: u8 = 3;
}

/// [`fabric::FLAGS`] bits.
pub mod fabric_flags {
    /// The sender has nothing more queued for now: end of transmission.
    pub const EOT: u8 = 1 << 0;
}

/// The MAC address of node `node`: locally administered, `02:50:46:4c:00:NN`.
pub const fn node_mac(node: u8) -> [u8; 6] {
    [0x02, 0x50, 0x46, 0x4c, 0x00, node]
}
