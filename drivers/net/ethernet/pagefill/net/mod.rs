// SPDX-License-Identifier: GPL-2.0

//! Safe abstractions over the kernel's networking C API, kept apart from the
//! driver's logic so they can move to `rust/kernel/net/` later. All of the
//! driver's `unsafe` is in here.

pub(crate) mod bh;
pub(crate) mod dim;
pub(crate) mod ethtool;
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
