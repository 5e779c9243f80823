// SPDX-License-Identifier: GPL-2.0

//! Register-level access to the pagefill NIC: reset, identity and the
//! device's counters.
//!
//! Everything read here comes from the device and is validated before the
//! driver relies on it: a device that reports limits beyond what the
//! interface allows, or an id or version the driver does not know, is
//! refused at probe.

use kernel::{
    io::{poll::read_poll_timeout, Io},
    pci,
    prelude::*,
    time::Delta, //
};

use crate::abi;

/// The oldest minor version of the interface the driver works with.
const MIN_VERSION_MINOR: u16 = 6;

/// BAR0 of a pagefill NIC, sized so register offsets are checked at build time.
pub(crate) type Bar0<'bound> = pci::Bar<'bound, { abi::BAR0_SIZE }>;

/// What the NIC says about itself, validated.
///
/// # Invariants
///
/// `max_groups <= abi::MAX_GROUPS`, `max_nodes <= abi::MAX_NODES`,
/// `node < max_nodes`, `1 <= max_queues <= abi::MAX_QUEUES` and
/// `abi::MIN_BUF_SHIFT <= min_buf_shift <= max_buf_shift <= abi::MAX_BUF_SHIFT`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Identity {
    pub(crate) version: u32,
    pub(crate) node: u8,
    pub(crate) mac: [u8; 6],
    pub(crate) max_groups: u32,
    pub(crate) max_nodes: u32,
    pub(crate) max_queues: u32,
    pub(crate) min_buf_shift: u32,
    pub(crate) max_buf_shift: u32,
    pub(crate) link_mbps: u32,
}

/// Proof that the NIC was reset and not enabled since: it holds no buffer
/// and does no DMA, so what it was given may go back to the host.
///
/// # Invariants
///
/// Made only by [`reset_revocable`] after the device said its reset was
/// done; the caller keeps it only until it enables the device again (the
/// `'static`-free, non-`Clone` value is dropped at the end of teardown).
pub(crate) struct Quiesced(());

/// Resets the NIC behind a revocable mapping and waits until it says the
/// reset is done. Each access holds the mapping only for itself: the wait
/// sleeps, which it may not do inside the mapping's RCU read section.
pub(crate) fn reset_revocable(bar: &pci::DevresBar<{ abi::BAR0_SIZE }>) -> Result<Quiesced> {
    bar.try_access()
        .ok_or(ENODEV)?
        .write32(abi::ctrl::RESET, abi::reg::CTRL);
    read_poll_timeout(
        || Ok(bar.try_access().ok_or(ENODEV)?.read32(abi::reg::CTRL)),
        |ctrl: &u32| *ctrl & abi::ctrl::RESET == 0,
        Delta::from_micros(10),
        Delta::from_millis(100),
    )?;
    // INVARIANT: the device said its reset is done.
    Ok(Quiesced(()))
}

/// Resets the NIC and waits until it says the reset is done.
pub(crate) fn reset(bar: &Bar0<'_>) -> Result {
    bar.write32(abi::ctrl::RESET, abi::reg::CTRL);
    read_poll_timeout(
        || Ok(bar.read32(abi::reg::CTRL)),
        |ctrl: &u32| *ctrl & abi::ctrl::RESET == 0,
        Delta::from_micros(10),
        Delta::from_millis(100),
    )?;
    Ok(())
}

impl Identity {
    /// Reads and validates the identity registers.
    pub(crate) fn read(pdev: &pci::Device, bar: &Bar0<'_>) -> Result<Self> {
        let id = bar.read32(abi::reg::ID);
        if id != abi::ID_MAGIC {
            dev_err!(pdev, "not a pagefill NIC: id register reads {:#010x}\n", id);
            return Err(ENODEV);
        }
        let version = bar.read32(abi::reg::VERSION);
        // Minor 5 brought steering, whose node-table columns the driver
        // posts in (and minor 2 the FLUSHED marker, without which it cannot
        // tell when a left group's completions end).
        if abi::version_major(version) != abi::VERSION_MAJOR
            || abi::version_minor(version) < MIN_VERSION_MINOR
        {
            dev_err!(
                pdev,
                "unsupported interface version {}.{} (driver speaks {}.{} and later minors)\n",
                abi::version_major(version),
                abi::version_minor(version),
                abi::VERSION_MAJOR,
                MIN_VERSION_MINOR
            );
            return Err(ENODEV);
        }
        let shifts = bar.read32(abi::reg::BUF_SHIFTS);
        let lo = bar.read32(abi::reg::MAC_LO).to_le_bytes();
        let hi = bar.read32(abi::reg::MAC_HI).to_le_bytes();
        let node = bar.read32(abi::reg::NODE_ID);
        let this = Self {
            version,
            node: node as u8,
            mac: [lo[0], lo[1], lo[2], lo[3], hi[0], hi[1]],
            max_groups: bar.read32(abi::reg::MAX_GROUPS),
            max_nodes: bar.read32(abi::reg::MAX_NODES),
            max_queues: bar.read32(abi::reg::MAX_QUEUES),
            min_buf_shift: shifts & 0xff,
            max_buf_shift: (shifts >> 8) & 0xff,
            link_mbps: bar.read32(abi::reg::LINK_SPEED),
        };
        let valid = (1..=abi::MAX_GROUPS as u32).contains(&this.max_groups)
            && (1..=abi::MAX_NODES as u32).contains(&this.max_nodes)
            && node < this.max_nodes
            && (1..=abi::MAX_QUEUES as u32).contains(&this.max_queues)
            && abi::MIN_BUF_SHIFT <= this.min_buf_shift
            && this.min_buf_shift <= this.max_buf_shift
            && this.max_buf_shift <= abi::MAX_BUF_SHIFT;
        if !valid {
            dev_err!(pdev, "device reports impossible limits: {:?}\n", this);
            return Err(ENODEV);
        }
        // INVARIANT: every bound of the type invariant was checked above.
        Ok(this)
    }

    /// Whether the device writes flow hashes into its records when asked
    /// ([`abi::ctrl::RX_HASH`], minor version 3). The bit is reserved
    /// before that, so an older device is not asked, and the driver
    /// offers no `rxhash` on it.
    pub(crate) fn has_rx_hash(&self) -> bool {
        abi::version_minor(self.version) >= 3
    }

    /// Whether each queue pair has its own coalescing timer
    /// ([`abi::reg::Q_COALESCE_USECS`], minor version 7); before, the
    /// register is not there, and the driver offers neither per-queue nor
    /// adaptive coalescing.
    pub(crate) fn has_queue_coalesce(&self) -> bool {
        abi::version_minor(self.version) >= 7
    }
}

/// The device's 32-bit counters as 64-bit totals since probe: each read
/// adds what a register counted since the last (modulo 2^32), and a reset,
/// which clears them, is preceded by a read. A register wraps in no less
/// than about 19 minutes (64-byte frames at the link's rate); reading less
/// often than that loses counts.
pub(crate) struct DeviceCounters {
    pub(crate) last: [u32; DEVICE_COUNTERS.len()],
    pub(crate) total: [u64; DEVICE_COUNTERS.len()],
}

impl DeviceCounters {
    /// Reads the registers into the totals (nothing if the device is gone).
    pub(crate) fn update(&mut self, bar: &pci::DevresBar<{ abi::BAR0_SIZE }>) {
        let Some(bar) = bar.try_access() else {
            return;
        };
        // A device that stopped answering reads all ones everywhere.
        if bar.read32(abi::reg::ID) != abi::ID_MAGIC {
            return;
        }
        for ((last, total), reg) in self
            .last
            .iter_mut()
            .zip(&mut self.total)
            .zip(DEVICE_COUNTERS)
        {
            if let Ok(v) = bar.try_read32(reg) {
                *total += u64::from(v.wrapping_sub(*last));
                *last = v;
            }
        }
    }
}

/// Device counters, in the order of the `dev_` statistics.
pub(crate) const DEVICE_COUNTERS: [usize; 11] = [
    abi::reg::RX_FRAMES,
    abi::reg::STARVED,
    abi::reg::DROP_UNJOINED,
    abi::reg::DROP_OVERFLOW,
    abi::reg::DROP_BAD_FRAME,
    abi::reg::DROP_LINK_DOWN,
    abi::reg::TX_FRAMES,
    abi::reg::TX_BAD_DESC,
    abi::reg::DROP_FILTERED,
    abi::reg::XOFF_SENT,
    abi::reg::XOFF_RECEIVED,
];

/// Where [`abi::reg::XOFF_SENT`] and [`abi::reg::XOFF_RECEIVED`] are in
/// [`DEVICE_COUNTERS`].
pub(crate) const XOFF_SENT: usize = 9;
pub(crate) const XOFF_RECEIVED: usize = 10;
const _: () = assert!(DEVICE_COUNTERS[XOFF_SENT] == abi::reg::XOFF_SENT);
const _: () = assert!(DEVICE_COUNTERS[XOFF_RECEIVED] == abi::reg::XOFF_RECEIVED);
