// SPDX-License-Identifier: GPL-2.0

//! ethtool operations.
//!
//! C header: [`include/linux/ethtool.h`](srctree/include/linux/ethtool.h)

use core::marker::PhantomData;

use kernel::{
    ffi::{c_char, c_int},
    str::CStr, //
};

use crate::net::netdev::{Device, Operations};

/// `ETH_GSTRING_LEN`: bytes of one statistic's name.
const ETH_GSTRING_LEN: usize = 32;
/// `ETH_SS_STATS`: the string set of `ethtool -S`.
const ETH_SS_STATS: u32 = 1;

/// The `ethtool_ops` of a driver.
pub trait EthtoolOps: Operations {
    /// Driver name for `ethtool -i`.
    const DRIVER: &'static CStr;
    /// Link speed in Mb/s, for `ethtool DEV`.
    fn speed(dev: &Device<Self>) -> u32;
    /// Names of the statistics of `ethtool -S`, in order.
    const STATS: &'static [&'static CStr];
    /// Fills `out` (`STATS.len()` values) with the statistics.
    fn stats(dev: &Device<Self>, out: &mut [u64]);
}

/// Copies `src` into `dst` as a NUL-terminated string, truncated to fit.
fn copy_cstr(dst: &mut [c_char], src: &CStr) {
    let bytes = src.to_bytes();
    let n = bytes.len().min(dst.len().saturating_sub(1));
    let mut i = 0;
    while i < n {
        dst[i] = bytes[i] as c_char;
        i += 1;
    }
    if let Some(z) = dst.get_mut(n) {
        *z = 0;
    }
}

/// The `ethtool_ops` table of `T`.
pub(crate) struct EthtoolTable<T: EthtoolOps>(PhantomData<T>);

impl<T: EthtoolOps> EthtoolTable<T> {
    /// # Safety
    ///
    /// `dev` must be registered for `T`; `info` valid and writable.
    unsafe extern "C" fn get_drvinfo(
        dev: *mut kernel::bindings::net_device,
        info: *mut kernel::bindings::ethtool_drvinfo,
    ) {
        // SAFETY: the ethtool core passes a valid, writable structure; the
        // bus info (the PCI address) is filled in by the core from the
        // parent device when left empty.
        let info = unsafe { &mut *info };
        copy_cstr(&mut info.driver, T::DRIVER);
        let _ = dev;
    }

    /// # Safety
    ///
    /// `dev` registered for `T`; `ks` valid and writable.
    unsafe extern "C" fn get_link_ksettings(
        dev: *mut kernel::bindings::net_device,
        ks: *mut kernel::bindings::ethtool_link_ksettings,
    ) -> c_int {
        // SAFETY: called with a registered device and a valid structure.
        let (dev, ks) = unsafe { (Device::<T>::from_raw_ptr(dev), &mut *ks) };
        ks.base.speed = T::speed(dev);
        ks.base.duplex = kernel::bindings::DUPLEX_FULL as u8;
        ks.base.port = kernel::bindings::PORT_OTHER as u8;
        ks.base.autoneg = kernel::bindings::AUTONEG_DISABLE as u8;
        0
    }

    /// # Safety
    ///
    /// `dev` registered for `T`.
    unsafe extern "C" fn get_sset_count(
        _dev: *mut kernel::bindings::net_device,
        sset: c_int,
    ) -> c_int {
        if sset as u32 == ETH_SS_STATS {
            T::STATS.len() as c_int
        } else {
            -(kernel::bindings::EOPNOTSUPP as c_int)
        }
    }

    /// # Safety
    ///
    /// `data` must hold `get_sset_count(sset)` strings of `ETH_GSTRING_LEN`.
    unsafe extern "C" fn get_strings(
        _dev: *mut kernel::bindings::net_device,
        sset: u32,
        data: *mut u8,
    ) {
        if sset != ETH_SS_STATS {
            return;
        }
        // SAFETY: the core sized `data` from `get_sset_count`.
        let out = unsafe {
            core::slice::from_raw_parts_mut(data.cast::<c_char>(), T::STATS.len() * ETH_GSTRING_LEN)
        };
        let mut i = 0;
        while i < T::STATS.len() {
            let start = i * ETH_GSTRING_LEN;
            if let Some(slot) = out.get_mut(start..start + ETH_GSTRING_LEN) {
                copy_cstr(slot, T::STATS[i]);
            }
            i += 1;
        }
    }

    /// # Safety
    ///
    /// `dev` registered for `T`; `data` holds `get_sset_count(ETH_SS_STATS)`
    /// values.
    unsafe extern "C" fn get_ethtool_stats(
        dev: *mut kernel::bindings::net_device,
        _stats: *mut kernel::bindings::ethtool_stats,
        data: *mut u64,
    ) {
        // SAFETY: as documented above.
        let (dev, out) = unsafe {
            (
                Device::<T>::from_raw_ptr(dev),
                core::slice::from_raw_parts_mut(data, T::STATS.len()),
            )
        };
        out.fill(0);
        T::stats(dev, out);
    }

    pub(crate) const TABLE: kernel::bindings::ethtool_ops = kernel::bindings::ethtool_ops {
        get_drvinfo: Some(Self::get_drvinfo),
        get_link: Some(kernel::bindings::ethtool_op_get_link),
        get_link_ksettings: Some(Self::get_link_ksettings),
        get_sset_count: Some(Self::get_sset_count),
        get_strings: Some(Self::get_strings),
        get_ethtool_stats: Some(Self::get_ethtool_stats),
        // SAFETY: every other member is an optional function pointer or a
        // capability bit, for which zero is "not supported".
        ..unsafe { core::mem::zeroed() }
    };
}
