// SPDX-License-Identifier: GPL-2.0

//! Device model of the pagefill NIC.
//!
//! A separate process that QEMU exposes to the guest as a PCI device over
//! vfio-user, so the driver under test is a genuine PCI driver doing genuine
//! MMIO, DMA and MSI-X. See
//! `Documentation/networking/device_drivers/ethernet/pagefill/` for the
//! programming interface it implements.

pub mod config_space;
pub mod device;
pub mod vfio;
