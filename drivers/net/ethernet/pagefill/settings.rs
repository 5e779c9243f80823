// SPDX-License-Identifier: GPL-2.0

//! The interface's settings as ethtool and the netdev operations set
//! them, kept across restarts and applied when the interface opens.

use crate::net::ethtool::Pause;
use crate::rings::TX_SHIFT_DEFAULT;
use crate::rx::RxConfig;

/// What ethtool sets; applied when the interface opens.
#[derive(Clone, Copy)]
pub(crate) struct Settings {
    pub(crate) rx: RxConfig,
    pub(crate) tx_shift: u32,
    pub(crate) coalesce_usecs: u32,
    /// `net_dim()` chooses each queue's coalescing timer (`adaptive-rx`).
    pub(crate) adaptive_rx: bool,
    /// Queue pairs in use.
    pub(crate) queues: u32,
    /// Whether the user chose the buffer size (`ethtool -G rx-buf-len`): it
    /// then stays across MTU changes while a frame fits. Otherwise it
    /// follows the MTU ([`crate::frame::default_buf_shift`]).
    pub(crate) buf_len_chosen: bool,
    /// The device sends its frames back to itself (`ethtool -K loopback`).
    pub(crate) loopback: bool,
    /// Link flow control (`ethtool -A`).
    pub(crate) pause: Pause,
}

impl Settings {
    pub(crate) const DEFAULT: Self = Self {
        rx: RxConfig::DEFAULT,
        tx_shift: TX_SHIFT_DEFAULT,
        coalesce_usecs: 50,
        adaptive_rx: false,
        queues: 1,
        buf_len_chosen: false,
        loopback: false,
        // The fabric's design: a receiver short of buffers holds its
        // senders off rather than drop.
        pause: Pause { rx: true, tx: true },
    };
}
