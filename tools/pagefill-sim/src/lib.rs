// SPDX-License-Identifier: GPL-2.0

//! Device model of the pagefill NIC.
//!
//! A separate process that QEMU exposes to the guest as a PCI device over
//! vfio-user, so the driver under test is a genuine PCI driver doing genuine
//! MMIO, DMA and MSI-X. See
//! `Documentation/networking/device_drivers/ethernet/pagefill/` for the
//! programming interface it implements.
//!
//! - [`nic`]: registers, configuration, control;
//! - [`rx`]: the receive engine over the group/node pointer table;
//! - [`steer`]: which queue pair a frame goes to;
//! - [`tx`]: the transmit engine;
//! - [`csum`]: the Internet checksum, inserted and checked;
//! - [`dma`]: host memory as the device may reach it;
//! - [`fabric`]: messages between NICs and their transport;
//! - [`generator`]: virtual remote nodes sending numbered streams;
//! - [`faults`]: a buggy or hostile device on demand;
//! - [`server`], [`vfio`]: running it behind QEMU.

pub mod config_space;
pub mod csum;
pub mod dma;
pub mod fabric;
pub mod faults;
pub mod generator;
pub mod held_off;
pub mod nic;
pub mod rss;
pub mod rx;
pub mod server;
pub mod steer;
pub mod tx;
pub mod vfio;
