// SPDX-License-Identifier: GPL-2.0

//! Receive-side scaling: the receive ring count (`ETHTOOL_GRXRINGS`), the
//! hash key and indirection table (`ethtool -x`, `-X`) and the header
//! fields each flow type's hash covers (`ethtool -n/-N DEV rx-flow-hash`),
//! of the default RSS context only: a driver with these offers no other.
//!
//! C header: [`include/linux/ethtool.h`](srctree/include/linux/ethtool.h)

use kernel::{
    bindings,
    error::from_result,
    ffi::c_int,
    prelude::*, //
};

use crate::ffi;
use crate::net::ethtool::{EthtoolOps, EthtoolTable};
use crate::net::netdev::{Device, Operations, Rtnl};

/// An RSS hash function (`ETH_RSS_HASH_*`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RssHashFunc {
    /// Toeplitz (`toeplitz`, `ETH_RSS_HASH_TOP`).
    Toeplitz,
    /// XOR (`xor`, `ETH_RSS_HASH_XOR`).
    Xor,
    /// CRC32 (`crc32`, `ETH_RSS_HASH_CRC32`).
    Crc32,
}

impl RssHashFunc {
    /// The function's `ETH_RSS_HASH_*` bit.
    const fn bit(self) -> u8 {
        1 << match self {
            Self::Toeplitz => bindings::ETH_RSS_HASH_TOP_BIT,
            Self::Xor => bindings::ETH_RSS_HASH_XOR_BIT,
            Self::Crc32 => bindings::ETH_RSS_HASH_CRC32_BIT,
        }
    }

    /// The function `hfunc` names; `None` for `ETH_RSS_HASH_NO_CHANGE`.
    fn from_bits(hfunc: u8) -> Result<Option<Self>> {
        if hfunc == bindings::ETH_RSS_HASH_NO_CHANGE as u8 {
            return Ok(None);
        }
        [Self::Toeplitz, Self::Xor, Self::Crc32]
            .into_iter()
            .find(|f| f.bit() == hfunc)
            .map(Some)
            .ok_or(EINVAL)
    }
}

/// What `ethtool -X` changes: each part that is `None` stays as it is.
#[derive(Clone, Copy, Debug)]
pub struct RxfhUpdate<'a> {
    pub hfunc: Option<RssHashFunc>,
    /// The key, [`EthtoolOps::RXFH_KEY_SIZE`] bytes.
    pub key: Option<&'a [u8]>,
    /// The indirection table, [`EthtoolOps::RXFH_INDIR_SIZE`] entries,
    /// each below [`EthtoolOps::rx_ring_count`] (the core checked). A reset
    /// to the default (`ethtool -X DEV default`) comes as the default
    /// table; [`Device::rxfh_configured`] tells the two apart once the
    /// call returned.
    pub indir: Option<&'a [u32]>,
}

/// The flow types whose hash fields ethtool names (`flow_type` of
/// `ETHTOOL_GRXFH` and `ETHTOOL_SRXFH`, `rx-flow-hash tcp4` and the
/// others).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HashFlow {
    /// Any frame that is not IP (`ETHER_FLOW`).
    Ether,
    /// IPv4 of no protocol named below (`IPV4_FLOW`).
    Ip4,
    Tcp4,
    Udp4,
    Sctp4,
    /// IPsec AH or ESP over IPv4 (`AH_ESP_V4_FLOW`).
    AhEsp4,
    Ah4,
    Esp4,
    /// IPv6 of no protocol named below (`IPV6_FLOW`).
    Ip6,
    Tcp6,
    Udp6,
    Sctp6,
    AhEsp6,
    Ah6,
    Esp6,
}

impl HashFlow {
    /// The flow type `flow_type` names; `EOPNOTSUPP` for one not above.
    fn of(flow_type: u32) -> Result<Self> {
        Ok(match flow_type {
            bindings::ETHER_FLOW => Self::Ether,
            bindings::IPV4_FLOW => Self::Ip4,
            bindings::TCP_V4_FLOW => Self::Tcp4,
            bindings::UDP_V4_FLOW => Self::Udp4,
            bindings::SCTP_V4_FLOW => Self::Sctp4,
            bindings::AH_ESP_V4_FLOW => Self::AhEsp4,
            bindings::AH_V4_FLOW => Self::Ah4,
            bindings::ESP_V4_FLOW => Self::Esp4,
            bindings::IPV6_FLOW => Self::Ip6,
            bindings::TCP_V6_FLOW => Self::Tcp6,
            bindings::UDP_V6_FLOW => Self::Udp6,
            bindings::SCTP_V6_FLOW => Self::Sctp6,
            bindings::AH_ESP_V6_FLOW => Self::AhEsp6,
            bindings::AH_V6_FLOW => Self::Ah6,
            bindings::ESP_V6_FLOW => Self::Esp6,
            _ => return Err(EOPNOTSUPP),
        })
    }
}

/// Header fields a flow hash covers (`RXH_*` bits).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HashFields(u32);

impl HashFields {
    /// None: the flow type is not hashed.
    pub const NONE: Self = Self(0);
    /// The IP source address (`s`).
    pub const IP_SRC: Self = Self(bindings::RXH_IP_SRC);
    /// The IP destination address (`d`).
    pub const IP_DST: Self = Self(bindings::RXH_IP_DST);
    /// Bytes 0 and 1 of the layer 4 header, TCP's and UDP's source port
    /// (`f`).
    pub const L4_B_0_1: Self = Self(bindings::RXH_L4_B_0_1);
    /// Bytes 2 and 3 of the layer 4 header, the destination port (`n`).
    pub const L4_B_2_3: Self = Self(bindings::RXH_L4_B_2_3);

    /// The fields of `RXH_*` bits `bits`, those not named above included.
    pub const fn from_bits(bits: u32) -> Self {
        Self(bits)
    }

    /// The `RXH_*` bits.
    pub const fn bits(self) -> u32 {
        self.0
    }

    /// Both sets.
    pub const fn with(self, o: Self) -> Self {
        Self(self.0 | o.0)
    }
}

impl<T: Operations> Device<T> {
    /// Whether the user set the RSS indirection table (`ethtool -X`), as
    /// the core records it: it then refuses a ring count (`ethtool -L`)
    /// that an entry would exceed. Otherwise the table is the default
    /// spread over the rings, which a driver recomputes when their count
    /// changes.
    pub fn rxfh_configured(&self, _rtnl: &Rtnl<'_>) -> bool {
        // SAFETY: the device is valid (type invariant); the core changes
        // the record only under RTNL, which the token proves is held.
        unsafe { ffi::netif_is_rxfh_configured(self.as_raw()) }
    }
}

impl<T: EthtoolOps> EthtoolTable<T> {
    /// # Safety
    ///
    /// `dev` registered for `T`.
    pub(super) unsafe extern "C" fn get_rx_ring_count(dev: *mut bindings::net_device) -> u32 {
        // SAFETY: the ethtool core passes a registered device.
        T::rx_ring_count(unsafe { Device::<T>::from_raw_ptr(dev) }).unwrap_or(0)
    }

    pub(super) extern "C" fn get_rxfh_key_size(_dev: *mut bindings::net_device) -> u32 {
        T::RXFH_KEY_SIZE
    }

    pub(super) extern "C" fn get_rxfh_indir_size(_dev: *mut bindings::net_device) -> u32 {
        T::RXFH_INDIR_SIZE
    }

    /// # Safety
    ///
    /// `dev` registered for `T`; `rxfh` valid and writable, its `key` NULL
    /// or `RXFH_KEY_SIZE` writable bytes, its `indir` NULL or
    /// `RXFH_INDIR_SIZE` writable entries.
    pub(super) unsafe extern "C" fn get_rxfh(
        dev: *mut bindings::net_device,
        rxfh: *mut bindings::ethtool_rxfh_param,
    ) -> c_int {
        // SAFETY: the ethtool core passes a registered device and a valid,
        // writable structure.
        let (dev, rxfh) = unsafe { (Device::<T>::from_raw_ptr(dev), &mut *rxfh) };
        let key = (!rxfh.key.is_null()).then(|| {
            // SAFETY: the core sized the key from `get_rxfh_key_size()`,
            // `RXFH_KEY_SIZE`, and nothing else uses it during the call.
            unsafe { core::slice::from_raw_parts_mut(rxfh.key, T::RXFH_KEY_SIZE as usize) }
        });
        let indir = (!rxfh.indir.is_null()).then(|| {
            // SAFETY: as for the key, from `get_rxfh_indir_size()` (the
            // core does not always set `indir_size`).
            unsafe { core::slice::from_raw_parts_mut(rxfh.indir, T::RXFH_INDIR_SIZE as usize) }
        });
        from_result(|| {
            rxfh.hfunc = T::rxfh(dev, key, indir)?.bit();
            // No input transformation (`RXH_XFRM_*` none).
            rxfh.input_xfrm = 0;
            Ok(0)
        })
    }

    /// # Safety
    ///
    /// `dev` registered for `T`; `rxfh` valid, its `key` NULL or
    /// `RXFH_KEY_SIZE` bytes, its `indir` NULL or `RXFH_INDIR_SIZE`
    /// entries.
    pub(super) unsafe extern "C" fn set_rxfh(
        dev: *mut bindings::net_device,
        rxfh: *mut bindings::ethtool_rxfh_param,
        _extack: *mut bindings::netlink_ext_ack,
    ) -> c_int {
        // SAFETY: the ethtool core passes a registered device and a valid
        // structure, under RTNL.
        let (dev, rxfh, rtnl) =
            unsafe { (Device::<T>::from_raw_ptr(dev), &*rxfh, Rtnl::assume_held()) };
        from_result(|| {
            // Other contexts are the core's to refuse (no
            // `create_rxfh_context`); refused here as well.
            if rxfh.rss_context != 0 || rxfh.rss_delete != 0 {
                return Err(EOPNOTSUPP);
            }
            if rxfh.input_xfrm != bindings::RXH_XFRM_NO_CHANGE as u8 && rxfh.input_xfrm != 0 {
                return Err(EOPNOTSUPP);
            }
            let key = (!rxfh.key.is_null()).then(|| {
                // SAFETY: the core sized the key from
                // `get_rxfh_key_size()`, `RXFH_KEY_SIZE`, and nothing
                // changes it during the call.
                unsafe { core::slice::from_raw_parts(rxfh.key, T::RXFH_KEY_SIZE as usize) }
            });
            let indir = (!rxfh.indir.is_null()).then(|| {
                // SAFETY: as for the key, from `get_rxfh_indir_size()`.
                unsafe { core::slice::from_raw_parts(rxfh.indir, T::RXFH_INDIR_SIZE as usize) }
            });
            let new = RxfhUpdate {
                hfunc: RssHashFunc::from_bits(rxfh.hfunc)?,
                key,
                indir,
            };
            T::set_rxfh(dev, &rtnl, &new).map(|()| 0)
        })
    }

    /// # Safety
    ///
    /// `dev` registered for `T`; `fields` valid and writable.
    pub(super) unsafe extern "C" fn get_rxfh_fields(
        dev: *mut bindings::net_device,
        fields: *mut bindings::ethtool_rxfh_fields,
    ) -> c_int {
        // SAFETY: the ethtool core passes a registered device and a valid,
        // writable structure.
        let (dev, fields) = unsafe { (Device::<T>::from_raw_ptr(dev), &mut *fields) };
        from_result(|| {
            if fields.rss_context != 0 {
                return Err(EOPNOTSUPP);
            }
            fields.data = T::rxfh_fields(dev, HashFlow::of(fields.flow_type)?)?.bits();
            Ok(0)
        })
    }

    /// # Safety
    ///
    /// `dev` registered for `T`; `fields` valid.
    pub(super) unsafe extern "C" fn set_rxfh_fields(
        dev: *mut bindings::net_device,
        fields: *const bindings::ethtool_rxfh_fields,
        _extack: *mut bindings::netlink_ext_ack,
    ) -> c_int {
        // SAFETY: the ethtool core passes a registered device and a valid
        // structure, under RTNL.
        let (dev, fields, rtnl) = unsafe {
            (
                Device::<T>::from_raw_ptr(dev),
                &*fields,
                Rtnl::assume_held(),
            )
        };
        from_result(|| {
            if fields.rss_context != 0 {
                return Err(EOPNOTSUPP);
            }
            let flow = HashFlow::of(fields.flow_type)?;
            T::set_rxfh_fields(dev, &rtnl, flow, HashFields::from_bits(fields.data)).map(|()| 0)
        })
    }
}
