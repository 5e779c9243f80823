// SPDX-License-Identifier: GPL-2.0

//! Interrupt coalescing: `ethtool -c/-C` and `ethtool --per-queue`.
//!
//! C header: [`include/linux/ethtool.h`](srctree/include/linux/ethtool.h)

use kernel::{error::from_result, ffi::c_int};

use crate::net::ethtool::{EthtoolOps, EthtoolTable};
use crate::net::netdev::{Device, Rtnl};

/// Interrupt coalescing, as `ethtool -c` shows it.
#[derive(Clone, Copy, Default, Debug)]
pub struct Coalesce {
    /// The longest a received frame waits before the device reports it.
    pub rx_usecs: u32,
    /// The driver adapts `rx_usecs` to the traffic (`adaptive-rx`).
    pub use_adaptive_rx: bool,
}

/// The parameters the ethtool core lets through to the driver:
/// `ETHTOOL_COALESCE_RX_USECS` and `ETHTOOL_COALESCE_USE_ADAPTIVE_RX`.
pub(super) const COALESCE_SUPPORTED: u32 = (1 << 0) | (1 << 9);

impl<T: EthtoolOps> EthtoolTable<T> {
    /// # Safety
    ///
    /// `dev` registered for `T`; the structures valid and writable.
    pub(super) unsafe extern "C" fn get_coalesce(
        dev: *mut kernel::bindings::net_device,
        c: *mut kernel::bindings::ethtool_coalesce,
        _kc: *mut kernel::bindings::kernel_ethtool_coalesce,
        _extack: *mut kernel::bindings::netlink_ext_ack,
    ) -> c_int {
        // SAFETY: the ethtool core passes a registered device and valid
        // structures.
        let (dev, c) = unsafe { (Device::<T>::from_raw_ptr(dev), &mut *c) };
        Self::fill_coalesce(c, &T::coalesce(dev));
        0
    }

    /// Writes `from` into the ethtool core's `c`.
    fn fill_coalesce(c: &mut kernel::bindings::ethtool_coalesce, from: &Coalesce) {
        c.rx_coalesce_usecs = from.rx_usecs;
        c.use_adaptive_rx_coalesce = u32::from(from.use_adaptive_rx);
    }

    /// What the ethtool core's `c` asks for.
    fn read_coalesce(c: &kernel::bindings::ethtool_coalesce) -> Coalesce {
        Coalesce {
            rx_usecs: c.rx_coalesce_usecs,
            use_adaptive_rx: c.use_adaptive_rx_coalesce != 0,
        }
    }

    /// # Safety
    ///
    /// `dev` registered for `T`; `c` valid and writable; called under RTNL
    /// (the ethtool ioctl's).
    pub(super) unsafe extern "C" fn get_per_queue_coalesce(
        dev: *mut kernel::bindings::net_device,
        queue: u32,
        c: *mut kernel::bindings::ethtool_coalesce,
    ) -> c_int {
        // SAFETY: the ethtool core passes a registered device and a valid
        // structure, and holds RTNL.
        let (dev, c, rtnl) =
            unsafe { (Device::<T>::from_raw_ptr(dev), &mut *c, Rtnl::assume_held()) };
        from_result(|| {
            Self::fill_coalesce(c, &T::queue_coalesce(dev, &rtnl, queue)?);
            Ok(0)
        })
    }

    /// # Safety
    ///
    /// As for [`Self::get_per_queue_coalesce`].
    pub(super) unsafe extern "C" fn set_per_queue_coalesce(
        dev: *mut kernel::bindings::net_device,
        queue: u32,
        c: *mut kernel::bindings::ethtool_coalesce,
    ) -> c_int {
        // SAFETY: as above.
        let (dev, c, rtnl) = unsafe { (Device::<T>::from_raw_ptr(dev), &*c, Rtnl::assume_held()) };
        let c = Self::read_coalesce(c);
        from_result(|| T::set_queue_coalesce(dev, &rtnl, queue, &c).map(|()| 0))
    }

    /// # Safety
    ///
    /// As for [`Self::get_coalesce`].
    pub(super) unsafe extern "C" fn set_coalesce(
        dev: *mut kernel::bindings::net_device,
        c: *mut kernel::bindings::ethtool_coalesce,
        _kc: *mut kernel::bindings::kernel_ethtool_coalesce,
        _extack: *mut kernel::bindings::netlink_ext_ack,
    ) -> c_int {
        // SAFETY: as above; the core holds RTNL.
        let (dev, c, rtnl) = unsafe { (Device::<T>::from_raw_ptr(dev), &*c, Rtnl::assume_held()) };
        let c = Self::read_coalesce(c);
        from_result(|| T::set_coalesce(dev, &rtnl, &c).map(|()| 0))
    }
}
