// SPDX-License-Identifier: GPL-2.0

//! The pagefill network interface: its `net_device_ops`.
//!
//! This is the first step of the data path: the interface registers with the
//! device's MAC address and MTU limits and comes up and down. The receive and
//! transmit rings are not wired yet, so the carrier stays off and frames the
//! stack hands over are dropped and counted as `tx_dropped`.

use core::sync::atomic::{AtomicU64, Ordering};

use kernel::prelude::*;

use crate::abi;
use crate::net::netdev::{Device, Operations, Stats64, TxOutcome};
use crate::net::skb::SkBuff;

/// The interface's per-device data.
#[pin_data]
pub(crate) struct NetdevData {
    tx_dropped: AtomicU64,
}

impl NetdevData {
    pub(crate) fn new() -> impl PinInit<Self, Error> {
        try_pin_init!(Self {
            tx_dropped: AtomicU64::new(0),
        }? Error)
    }
}

/// Largest MTU: a frame of the largest size the fabric carries, less the
/// Ethernet header, and it must fit a 4 KiB buffer with its record header
/// (larger buffers come with `ethtool -G rx-buf-len`).
pub(crate) const MAX_MTU: u32 = {
    let in_buffer = (1 << abi::MIN_BUF_SHIFT) - abi::record::HEADER_SIZE;
    let frame = if abi::MAX_FRAME_LEN < in_buffer {
        abi::MAX_FRAME_LEN
    } else {
        in_buffer
    };
    (frame - ETH_HLEN) as u32
};

/// Bytes of an Ethernet header.
const ETH_HLEN: usize = 14;

/// The pagefill interface's operations.
pub(crate) struct PagefillNetdev;

#[vtable]
impl Operations for PagefillNetdev {
    type Data = NetdevData;

    fn open(dev: &Device<Self>) -> Result {
        dev.tx_start_all_queues();
        Ok(())
    }

    fn stop(dev: &Device<Self>) -> Result {
        dev.tx_disable();
        dev.carrier_off();
        Ok(())
    }

    fn start_xmit(skb: SkBuff, dev: &Device<Self>) -> TxOutcome {
        // No transmit ring yet: drop and count.
        dev.data().tx_dropped.fetch_add(1, Ordering::Relaxed);
        drop(skb);
        TxOutcome::Ok
    }

    fn get_stats64(dev: &Device<Self>, stats: &mut Stats64<'_>) {
        stats.add_tx(0, 0, dev.data().tx_dropped.load(Ordering::Relaxed));
    }
}
