// SPDX-License-Identifier: GPL-2.0

//! Offloads a device offers (`NETIF_F_*`), and the driver's part in
//! turning them on and off (`ndo_set_features`).
//!
//! C header: [`include/linux/netdev_features.h`](srctree/include/linux/netdev_features.h)

use kernel::{error::from_result, ffi::c_int};

use crate::ffi;
use crate::net::netdev::{Device, Operations, Rtnl};

/// Offloads a device offers, as `NETIF_F_*` flags.
#[derive(Clone, Copy, Default, Debug, PartialEq, Eq)]
pub struct Features(pub(super) u32);

impl Features {
    /// None.
    pub const NONE: Self = Self(0);
    /// Scatter-gather: frames may come as a head and page fragments.
    pub const SG: Self = Self(ffi::pagefill_features_PAGEFILL_F_SG);
    /// The device inserts the checksum the stack leaves partial.
    pub const HW_CSUM: Self = Self(ffi::pagefill_features_PAGEFILL_F_HW_CSUM);
    /// The device checks receive checksums (`ethtool -K rx`).
    pub const RXCSUM: Self = Self(ffi::pagefill_features_PAGEFILL_F_RXCSUM);
    /// The stack may chain a flow's received skbs into one (`ethtool -K
    /// rx-gro-list`, a feature of the stack's, which no device offers).
    pub const GRO_FRAGLIST: Self = Self(ffi::pagefill_features_PAGEFILL_F_GRO_FRAGLIST);
    /// The device gives each frame a flow hash (`ethtool -K rxhash`): set
    /// as the skb's hash, and given to XDP programs that ask
    /// (`bpf_xdp_metadata_rx_hash()`).
    pub const RXHASH: Self = Self(ffi::pagefill_features_PAGEFILL_F_RXHASH);
    /// The device steers frames by flow rules (`ethtool -K ntuple`, the
    /// rules of `ethtool -N`).
    pub const NTUPLE: Self = Self(ffi::pagefill_features_PAGEFILL_F_NTUPLE);
    /// The device sends its frames back to its own receive side instead
    /// of the link (`ethtool -K loopback`).
    pub const LOOPBACK: Self = Self(ffi::pagefill_features_PAGEFILL_F_LOOPBACK);

    /// Both sets.
    pub const fn with(self, o: Self) -> Self {
        Self(self.0 | o.0)
    }

    /// Whether every feature of `o` is in this set.
    pub const fn contains(self, o: Self) -> bool {
        self.0 & o.0 == o.0
    }
}

/// `ndo_set_features` of `T`.
///
/// # Safety
///
/// `dev` must be a device registered for `T`; the core calls it under RTNL.
pub(super) unsafe extern "C" fn ndo_set_features<T: Operations>(
    dev: *mut kernel::bindings::net_device,
    features: kernel::bindings::netdev_features_t,
) -> c_int {
    // SAFETY: the core calls `ndo_set_features` with a registered device,
    // under RTNL (`__netdev_update_features()`).
    let (dev, rtnl) = unsafe { (Device::<T>::from_raw_ptr(dev), Rtnl::assume_held()) };
    // SAFETY: the helper has no precondition: it only maps bits of a value.
    let features = Features(unsafe { ffi::pagefill_features_of(features) });
    // 0: the core sets `dev->features` itself once the driver agreed.
    from_result(|| T::set_features(dev, &rtnl, features).map(|()| 0))
}
