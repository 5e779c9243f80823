// SPDX-License-Identifier: GPL-2.0

//! The pagefill NIC's programming interface: PCI identity, BAR0 register map
//! and the values the driver and the device agree on.
//!
//! This one file is compiled into both the kernel driver (as a module) and the
//! device model (as the `pagefill-abi` crate), so the two cannot disagree. It
//! uses `core` only. `Documentation/networking/device_drivers/ethernet/pagefill/`
//! documents every item here; a host test checks that the tables there match.

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
pub const MSIX_VECTORS: u16 = 8;

/// Value of [`reg::ID`]: `"PGFL"` read as a little-endian `u32`.
pub const ID_MAGIC: u32 = u32::from_le_bytes(*b"PGFL");
/// Major version of the interface. A driver refuses a major it does not know.
pub const VERSION_MAJOR: u16 = 1;
/// Minor version: additions that a driver of the same major may ignore.
pub const VERSION_MINOR: u16 = 0;

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

/// BAR0 register offsets. All registers are 32 bits wide and little endian.
pub mod reg {
    /// Read-only: [`super::ID_MAGIC`].
    pub const ID: usize = 0x000;
    /// Read-only: interface version, major in bits 31:16, minor in 15:0.
    pub const VERSION: usize = 0x004;
}
