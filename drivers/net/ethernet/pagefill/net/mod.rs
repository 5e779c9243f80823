// SPDX-License-Identifier: GPL-2.0

//! Safe abstractions over the kernel's networking C API, kept apart from the
//! driver's logic so they can move to `rust/kernel/net/` later. The
//! driver's `unsafe` blocks are in here, but for its calls of three
//! `unsafe` functions whose conditions only it can prove:
//! `DevicePage::reclaim` (`rx_slot.rs`), the transmit mappings' `unmap`
//! (`tx.rs`) and `dma_set_mask_and_coherent` (probe).

pub(crate) mod bh;
pub(crate) mod dim;
pub(crate) mod ethtool;
pub(crate) mod ethtool_coalesce;
pub(crate) mod ethtool_rss;
pub(crate) mod ethtool_rxnfc;
pub(crate) mod features;
pub(crate) mod irq;
pub(crate) mod log_line;
pub(crate) mod napi;
pub(crate) mod netdev;
pub(crate) mod page_pool;
pub(crate) mod qstats;
pub(crate) mod registration;
pub(crate) mod restart;
pub(crate) mod skb;
pub(crate) mod xdp;
pub(crate) mod xdp_xmit;
pub(crate) mod xsk;
