// SPDX-License-Identifier: GPL-2.0

//! Host-side crate root for the pagefill ABI.
//!
//! The definitions live in `abi.rs`, which the kernel driver includes as a
//! module with `#[path]`; this file only makes the same text a `no_std` crate
//! for the device model and the host tests.

#![no_std]

#[path = "../../include/pagefill/abi.rs"]
mod abi;

pub use abi::*;
