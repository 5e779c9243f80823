// SPDX-License-Identifier: GPL-2.0

//! ethtool operations.
//!
//! C header: [`include/linux/ethtool.h`](srctree/include/linux/ethtool.h)

use core::marker::PhantomData;

use kernel::{
    error::from_result,
    ffi::{c_char, c_int},
    prelude::*,
    str::CStr, //
};

pub(crate) use crate::net::ethtool_coalesce::Coalesce;
use crate::net::ethtool_coalesce::COALESCE_SUPPORTED;
pub use crate::net::ethtool_rss::{HashFields, HashFlow, RssHashFunc, RxfhUpdate};
pub use crate::net::ethtool_rxnfc::{FlowAction, FlowRule, FlowType};
use crate::net::netdev::{Device, Operations, Rtnl};

/// `ETH_GSTRING_LEN`: bytes of one statistic's name.
const ETH_GSTRING_LEN: usize = 32;
/// `ETH_SS_STATS`: the string set of `ethtool -S`.
const ETH_SS_STATS: u32 = 1;
/// `ETH_SS_PRIV_FLAGS`: the string set of `ethtool --show-priv-flags`.
const ETH_SS_PRIV_FLAGS: u32 = 2;

/// The `ethtool_ops` of a driver.
///
/// The operations of receive flow steering, from [`Self::rx_ring_count`]
/// on, are optional: the core finds no operation for those a driver does
/// not implement, and says they are not supported.
#[vtable]
pub trait EthtoolOps: Operations {
    /// Driver name for `ethtool -i`.
    const DRIVER: &'static CStr;
    /// Link speed in Mb/s, for `ethtool DEV`.
    fn speed(dev: &Device<Self>) -> u32;
    /// Statistics of each queue, as (direction, name): `ethtool -S` shows
    /// them as `{direction}{queue}_{name}`, e.g. `rx0_packets`.
    const QUEUE_STATS: &'static [(&'static str, &'static str)];
    /// Statistics of the device as a whole, shown after the queues'.
    const DEVICE_STATS: &'static [&'static CStr];
    /// Queues whose statistics `ethtool -S` shows.
    fn stat_queues(dev: &Device<Self>) -> u32;
    /// Fills `out` with the statistics: `QUEUE_STATS` for each of
    /// `stat_queues` queues in turn, then `DEVICE_STATS`.
    fn stats(dev: &Device<Self>, out: &mut [u64]);
    /// Ring sizes and their limits, for `ethtool -g`.
    fn rings(dev: &Device<Self>) -> Rings;
    /// Sets the ring sizes of `ethtool -G` (limits already checked by the
    /// core against [`Self::rings`]).
    fn set_rings(dev: &Device<Self>, rtnl: &Rtnl<'_>, rings: &Rings) -> Result;
    /// Coalescing, for `ethtool -c`.
    fn coalesce(dev: &Device<Self>) -> Coalesce;
    /// Sets the coalescing of `ethtool -C` (only the parameters in
    /// `COALESCE_SUPPORTED` reach the driver).
    fn set_coalesce(dev: &Device<Self>, rtnl: &Rtnl<'_>, c: &Coalesce) -> Result;
    /// Coalescing of receive queue `queue`, for `ethtool --per-queue
    /// ... --show-coalesce`; none without per-queue coalescing.
    fn queue_coalesce(_dev: &Device<Self>, _rtnl: &Rtnl<'_>, _queue: u32) -> Result<Coalesce> {
        Err(EOPNOTSUPP)
    }
    /// Sets the coalescing of receive queue `queue` (`ethtool --per-queue
    /// ... --coalesce`).
    fn set_queue_coalesce(
        _dev: &Device<Self>,
        _rtnl: &Rtnl<'_>,
        _queue: u32,
        _c: &Coalesce,
    ) -> Result {
        Err(EOPNOTSUPP)
    }
    /// Channels, for `ethtool -l`.
    fn channels(dev: &Device<Self>) -> Channels;
    /// Sets the channels of `ethtool -L` (within the maximum).
    fn set_channels(dev: &Device<Self>, rtnl: &Rtnl<'_>, ch: &Channels) -> Result;
    /// Names of the driver's private flags (`ethtool --show-priv-flags`),
    /// bit 0 first; at most 32.
    const PRIV_FLAGS: &'static [&'static CStr] = &[];
    /// The private flags set (bit per [`Self::PRIV_FLAGS`] entry).
    fn priv_flags(_dev: &Device<Self>) -> u32 {
        0
    }
    /// Sets the private flags of `ethtool --set-priv-flags` (bits beyond
    /// [`Self::PRIV_FLAGS`] already refused).
    fn set_priv_flags(_dev: &Device<Self>, _rtnl: &Rtnl<'_>, _flags: u32) -> Result {
        Err(EOPNOTSUPP)
    }

    /// Receive rings that flow rules and the RSS indirection table may
    /// name (`ETHTOOL_GRXRINGS`): the core refuses entries and rules
    /// beyond them.
    fn rx_ring_count(_dev: &Device<Self>) -> Result<u32> {
        Err(EOPNOTSUPP)
    }

    /// Size of the flow rule table: rules sit at locations below it
    /// (`ethtool -n`; `ethtool -N` picks a free location from it).
    fn flow_rule_table_size(_dev: &Device<Self>) -> Result<u32> {
        Err(EOPNOTSUPP)
    }

    /// Calls `f` with the location of each flow rule, lowest first.
    /// Implemented with [`Self::flow_rule`].
    fn flow_rule_locations(_dev: &Device<Self>, _f: &mut dyn FnMut(u32)) -> Result {
        Err(EOPNOTSUPP)
    }

    /// The flow rule at `location`; `ENOENT` if there is none.
    fn flow_rule(_dev: &Device<Self>, _location: u32) -> Result<FlowRule> {
        Err(EOPNOTSUPP)
    }

    /// Puts `rule` at its location, in place of the rule there if any
    /// (`ethtool -N DEV flow-type ...`).
    fn insert_flow_rule(_dev: &Device<Self>, _rtnl: &Rtnl<'_>, _rule: &FlowRule) -> Result {
        Err(EOPNOTSUPP)
    }

    /// Deletes the flow rule at `location` (`ethtool -N DEV delete`).
    /// Implemented with [`Self::insert_flow_rule`].
    fn delete_flow_rule(_dev: &Device<Self>, _rtnl: &Rtnl<'_>, _location: u32) -> Result {
        Err(EOPNOTSUPP)
    }

    /// Bytes of the RSS hash key, with [`Self::rxfh`]. A constant: the
    /// core sizes the buffers it hands [`Self::rxfh`] and
    /// [`Self::set_rxfh`] from it.
    const RXFH_KEY_SIZE: u32 = 0;
    /// Entries of the RSS indirection table, with [`Self::rxfh`]; a
    /// constant as [`Self::RXFH_KEY_SIZE`] is.
    const RXFH_INDIR_SIZE: u32 = 0;

    /// The RSS hash function, with the key and the indirection table
    /// written into `key` and `indir` where the core asks for them
    /// (`ethtool -x`).
    fn rxfh(
        _dev: &Device<Self>,
        _key: Option<&mut [u8]>,
        _indir: Option<&mut [u32]>,
    ) -> Result<RssHashFunc> {
        Err(EOPNOTSUPP)
    }

    /// Changes what `new` gives (`ethtool -X`); an error changes nothing.
    fn set_rxfh(_dev: &Device<Self>, _rtnl: &Rtnl<'_>, _new: &RxfhUpdate<'_>) -> Result {
        Err(EOPNOTSUPP)
    }

    /// The header fields the hash of `flow` covers (`ethtool -n DEV
    /// rx-flow-hash`); `EOPNOTSUPP` for a flow type the device does not
    /// hash.
    fn rxfh_fields(_dev: &Device<Self>, _flow: HashFlow) -> Result<HashFields> {
        Err(EOPNOTSUPP)
    }

    /// Sets them (`ethtool -N DEV rx-flow-hash`).
    fn set_rxfh_fields(
        _dev: &Device<Self>,
        _rtnl: &Rtnl<'_>,
        _flow: HashFlow,
        _fields: HashFields,
    ) -> Result {
        Err(EOPNOTSUPP)
    }

    /// Link flow control (`ethtool -a`).
    fn pause(_dev: &Device<Self>) -> Pause {
        Pause::default()
    }

    /// Sets it (`ethtool -A`); an error changes nothing.
    fn set_pause(_dev: &Device<Self>, _rtnl: &Rtnl<'_>, _pause: Pause) -> Result {
        Err(EOPNOTSUPP)
    }

    /// Pause frames sent and received (`ethtool -I -a`), which a driver
    /// that offers [`Self::pause`] reports.
    fn pause_stats(_dev: &Device<Self>) -> PauseStats {
        PauseStats::default()
    }
}

/// Ring sizes, as `ethtool -g` shows them.
#[derive(Clone, Copy, Default, Debug)]
pub struct Rings {
    pub rx_max: u32,
    pub rx: u32,
    pub tx_max: u32,
    pub tx: u32,
    /// Receive buffer length in bytes (`rx-buf-len`); 0 leaves it as is.
    pub rx_buf_len: u32,
}

/// Link flow control, as `ethtool -a` shows it: pause frames (xoff)
/// honoured and sent. Negotiating it with the link partner (`autoneg`) is
/// not offered: a request for it is refused.
#[derive(Clone, Copy, Default, Debug, PartialEq, Eq)]
pub struct Pause {
    /// Received pause frames stop the sending (`rx`).
    pub rx: bool,
    /// A receiver short of buffers sends pause frames (`tx`).
    pub tx: bool,
}

/// Pause frames counted, as `ethtool -I -a` shows them.
#[derive(Clone, Copy, Default, Debug)]
pub struct PauseStats {
    /// Sent (`tx_pause_frames`).
    pub tx_frames: u64,
    /// Received (`rx_pause_frames`).
    pub rx_frames: u64,
}

/// Channels (queue pairs with their interrupt), as `ethtool -l` shows them.
#[derive(Clone, Copy, Default, Debug)]
pub struct Channels {
    pub max_combined: u32,
    pub combined: u32,
}

/// Writes `parts` one after the other into `dst` as a NUL-terminated
/// string, truncated to fit.
fn write_parts(dst: &mut [c_char], parts: &[&[u8]]) {
    let room = dst.len().saturating_sub(1);
    let mut n = 0;
    for b in parts.iter().flat_map(|p| p.iter()) {
        if n == room {
            break;
        }
        dst[n] = *b as c_char;
        n += 1;
    }
    if let Some(z) = dst.get_mut(n) {
        *z = 0;
    }
}

/// The decimal digits of `v`, in a buffer and its used length.
fn decimal(mut v: u32) -> ([u8; 10], usize) {
    let mut buf = [0u8; 10];
    let mut i = buf.len();
    loop {
        i -= 1;
        buf[i] = b'0' + (v % 10) as u8;
        v /= 10;
        if v == 0 {
            break;
        }
    }
    let len = buf.len() - i;
    buf.copy_within(i.., 0);
    (buf, len)
}

/// Copies `src` into `dst` as a NUL-terminated string, truncated to fit.
fn copy_cstr(dst: &mut [c_char], src: &CStr) {
    write_parts(dst, &[src.to_bytes()]);
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
        // SAFETY: the ethtool core calls this op (installed only on
        // devices registered for `T`) with such a device and a valid,
        // writable `ks`, as this function's contract requires.
        let (dev, ks) = unsafe { (Device::<T>::from_raw_ptr(dev), &mut *ks) };
        ks.base.speed = T::speed(dev);
        ks.base.duplex = kernel::bindings::DUPLEX_FULL as u8;
        ks.base.port = kernel::bindings::PORT_OTHER as u8;
        ks.base.autoneg = kernel::bindings::AUTONEG_DISABLE as u8;
        0
    }

    /// Statistics `ethtool -S` shows for `dev`.
    fn stats_len(dev: &Device<T>) -> usize {
        T::stat_queues(dev) as usize * T::QUEUE_STATS.len() + T::DEVICE_STATS.len()
    }

    /// # Safety
    ///
    /// `dev` registered for `T`.
    unsafe extern "C" fn get_sset_count(
        dev: *mut kernel::bindings::net_device,
        sset: c_int,
    ) -> c_int {
        match sset as u32 {
            // SAFETY: the ethtool core passes a registered device.
            ETH_SS_STATS => Self::stats_len(unsafe { Device::<T>::from_raw_ptr(dev) }) as c_int,
            ETH_SS_PRIV_FLAGS => T::PRIV_FLAGS.len() as c_int,
            _ => -(kernel::bindings::EOPNOTSUPP as c_int),
        }
    }

    /// # Safety
    ///
    /// `dev` registered for `T`; `data` must hold `get_sset_count(sset)`
    /// strings of `ETH_GSTRING_LEN` (the core calls both under RTNL, so the
    /// count cannot change in between).
    unsafe extern "C" fn get_strings(
        dev: *mut kernel::bindings::net_device,
        sset: u32,
        data: *mut u8,
    ) {
        if sset == ETH_SS_PRIV_FLAGS {
            // SAFETY: the core sized `data` from `get_sset_count`, one
            // string per private flag.
            let out = unsafe {
                core::slice::from_raw_parts_mut(
                    data.cast::<c_char>(),
                    T::PRIV_FLAGS.len() * ETH_GSTRING_LEN,
                )
            };
            let mut slots = out.chunks_exact_mut(ETH_GSTRING_LEN);
            for name in T::PRIV_FLAGS {
                if let Some(slot) = slots.next() {
                    copy_cstr(slot, name);
                }
            }
            return;
        }
        if sset != ETH_SS_STATS {
            return;
        }
        // SAFETY: the ethtool core passes a registered device.
        let dev = unsafe { Device::<T>::from_raw_ptr(dev) };
        let len = Self::stats_len(dev);
        // SAFETY: the core sized `data` from `get_sset_count`.
        let out = unsafe {
            core::slice::from_raw_parts_mut(data.cast::<c_char>(), len * ETH_GSTRING_LEN)
        };
        let mut slots = out.chunks_exact_mut(ETH_GSTRING_LEN);
        for q in 0..T::stat_queues(dev) {
            let (digits, n) = decimal(q);
            for (dir, name) in T::QUEUE_STATS {
                if let Some(slot) = slots.next() {
                    write_parts(slot, &[dir.as_bytes(), &digits[..n], b"_", name.as_bytes()]);
                }
            }
        }
        for name in T::DEVICE_STATS {
            if let Some(slot) = slots.next() {
                copy_cstr(slot, name);
            }
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
        // SAFETY: the ethtool core passes a registered device.
        let dev = unsafe { Device::<T>::from_raw_ptr(dev) };
        // SAFETY: `data` holds `get_sset_count` values, which is this
        // length (the core holds RTNL across both calls).
        let out = unsafe { core::slice::from_raw_parts_mut(data, Self::stats_len(dev)) };
        out.fill(0);
        T::stats(dev, out);
    }

    /// # Safety
    ///
    /// `dev` registered for `T`; the structures valid and writable.
    unsafe extern "C" fn get_ringparam(
        dev: *mut kernel::bindings::net_device,
        ring: *mut kernel::bindings::ethtool_ringparam,
        kring: *mut kernel::bindings::kernel_ethtool_ringparam,
        _extack: *mut kernel::bindings::netlink_ext_ack,
    ) {
        // SAFETY: the ethtool core passes a registered device and valid
        // structures.
        let (dev, ring, kring) =
            unsafe { (Device::<T>::from_raw_ptr(dev), &mut *ring, &mut *kring) };
        let r = T::rings(dev);
        ring.rx_max_pending = r.rx_max;
        ring.rx_pending = r.rx;
        ring.tx_max_pending = r.tx_max;
        ring.tx_pending = r.tx;
        kring.rx_buf_len = r.rx_buf_len;
    }

    /// # Safety
    ///
    /// As for [`Self::get_ringparam`].
    unsafe extern "C" fn set_ringparam(
        dev: *mut kernel::bindings::net_device,
        ring: *mut kernel::bindings::ethtool_ringparam,
        kring: *mut kernel::bindings::kernel_ethtool_ringparam,
        _extack: *mut kernel::bindings::netlink_ext_ack,
    ) -> c_int {
        // SAFETY: as above; the core holds RTNL.
        let (dev, ring, kring, rtnl) = unsafe {
            (
                Device::<T>::from_raw_ptr(dev),
                &*ring,
                &*kring,
                Rtnl::assume_held(),
            )
        };
        let r = Rings {
            rx_max: ring.rx_max_pending,
            rx: ring.rx_pending,
            tx_max: ring.tx_max_pending,
            tx: ring.tx_pending,
            rx_buf_len: kring.rx_buf_len,
        };
        from_result(|| T::set_rings(dev, &rtnl, &r).map(|()| 0))
    }

    /// # Safety
    ///
    /// `dev` registered for `T`; `ch` valid and writable.
    unsafe extern "C" fn get_channels(
        dev: *mut kernel::bindings::net_device,
        ch: *mut kernel::bindings::ethtool_channels,
    ) {
        // SAFETY: the ethtool core passes a registered device and a valid
        // structure.
        let (dev, ch) = unsafe { (Device::<T>::from_raw_ptr(dev), &mut *ch) };
        let c = T::channels(dev);
        ch.max_combined = c.max_combined;
        ch.combined_count = c.combined;
    }

    /// # Safety
    ///
    /// As for [`Self::get_channels`].
    unsafe extern "C" fn set_channels(
        dev: *mut kernel::bindings::net_device,
        ch: *mut kernel::bindings::ethtool_channels,
    ) -> c_int {
        // SAFETY: as above; the core holds RTNL and checked the counts
        // against the maxima.
        let (dev, ch, rtnl) =
            unsafe { (Device::<T>::from_raw_ptr(dev), &*ch, Rtnl::assume_held()) };
        if ch.rx_count != 0 || ch.tx_count != 0 || ch.other_count != 0 {
            return EINVAL.to_errno();
        }
        let c = Channels {
            max_combined: ch.max_combined,
            combined: ch.combined_count,
        };
        from_result(|| T::set_channels(dev, &rtnl, &c).map(|()| 0))
    }

    /// # Safety
    ///
    /// `dev` registered for `T`.
    unsafe extern "C" fn get_priv_flags(dev: *mut kernel::bindings::net_device) -> u32 {
        // SAFETY: the ethtool core passes a registered device.
        T::priv_flags(unsafe { Device::<T>::from_raw_ptr(dev) })
    }

    /// # Safety
    ///
    /// `dev` registered for `T`.
    unsafe extern "C" fn set_priv_flags(
        dev: *mut kernel::bindings::net_device,
        flags: u32,
    ) -> c_int {
        // SAFETY: the ethtool core passes a registered device, under RTNL.
        let (dev, rtnl) = unsafe { (Device::<T>::from_raw_ptr(dev), Rtnl::assume_held()) };
        let known = 1u64
            .checked_shl(T::PRIV_FLAGS.len() as u32)
            .map_or(u32::MAX, |b| (b - 1) as u32);
        if flags & !known != 0 {
            return EINVAL.to_errno();
        }
        from_result(|| T::set_priv_flags(dev, &rtnl, flags).map(|()| 0))
    }

    /// # Safety
    ///
    /// `dev` registered for `T`; `pause` valid and writable.
    unsafe extern "C" fn get_pauseparam(
        dev: *mut kernel::bindings::net_device,
        pause: *mut kernel::bindings::ethtool_pauseparam,
    ) {
        // SAFETY: the ethtool core passes a registered device and a valid
        // structure.
        let (dev, pause) = unsafe { (Device::<T>::from_raw_ptr(dev), &mut *pause) };
        let p = T::pause(dev);
        pause.autoneg = 0;
        pause.rx_pause = u32::from(p.rx);
        pause.tx_pause = u32::from(p.tx);
    }

    /// # Safety
    ///
    /// As for [`Self::get_pauseparam`].
    unsafe extern "C" fn set_pauseparam(
        dev: *mut kernel::bindings::net_device,
        pause: *mut kernel::bindings::ethtool_pauseparam,
    ) -> c_int {
        // SAFETY: as above; the core holds RTNL.
        let (dev, pause, rtnl) =
            unsafe { (Device::<T>::from_raw_ptr(dev), &*pause, Rtnl::assume_held()) };
        if pause.autoneg != 0 {
            return EOPNOTSUPP.to_errno();
        }
        let p = Pause {
            rx: pause.rx_pause != 0,
            tx: pause.tx_pause != 0,
        };
        from_result(|| T::set_pause(dev, &rtnl, p).map(|()| 0))
    }

    /// # Safety
    ///
    /// `dev` registered for `T`; `stats` valid and writable.
    unsafe extern "C" fn get_pause_stats(
        dev: *mut kernel::bindings::net_device,
        stats: *mut kernel::bindings::ethtool_pause_stats,
    ) {
        // SAFETY: the ethtool core passes a registered device.
        let dev = unsafe { Device::<T>::from_raw_ptr(dev) };
        let s = T::pause_stats(dev);
        // SAFETY: `stats` is valid and writable (the core's, for this call).
        unsafe { crate::ffi::pagefill_pause_stats_set(stats, s.tx_frames, s.rx_frames) };
    }

    pub(crate) const TABLE: kernel::bindings::ethtool_ops = kernel::bindings::ethtool_ops {
        supported_coalesce_params: COALESCE_SUPPORTED,
        supported_ring_params:
            kernel::bindings::ethtool_supported_ring_param_ETHTOOL_RING_USE_RX_BUF_LEN,
        get_ringparam: Some(Self::get_ringparam),
        set_ringparam: Some(Self::set_ringparam),
        get_coalesce: Some(Self::get_coalesce),
        set_coalesce: Some(Self::set_coalesce),
        get_per_queue_coalesce: Some(Self::get_per_queue_coalesce),
        set_per_queue_coalesce: Some(Self::set_per_queue_coalesce),
        get_channels: Some(Self::get_channels),
        set_channels: Some(Self::set_channels),
        get_drvinfo: Some(Self::get_drvinfo),
        get_link: Some(kernel::bindings::ethtool_op_get_link),
        get_link_ksettings: Some(Self::get_link_ksettings),
        get_sset_count: Some(Self::get_sset_count),
        get_strings: Some(Self::get_strings),
        get_ethtool_stats: Some(Self::get_ethtool_stats),
        get_priv_flags: Some(Self::get_priv_flags),
        set_priv_flags: Some(Self::set_priv_flags),
        get_rx_ring_count: if T::HAS_RX_RING_COUNT {
            Some(Self::get_rx_ring_count)
        } else {
            None
        },
        get_rxnfc: if T::HAS_FLOW_RULE {
            Some(Self::get_rxnfc)
        } else {
            None
        },
        set_rxnfc: if T::HAS_INSERT_FLOW_RULE {
            Some(Self::set_rxnfc)
        } else {
            None
        },
        get_rxfh_key_size: if T::HAS_RXFH {
            Some(Self::get_rxfh_key_size)
        } else {
            None
        },
        get_rxfh_indir_size: if T::HAS_RXFH {
            Some(Self::get_rxfh_indir_size)
        } else {
            None
        },
        get_rxfh: if T::HAS_RXFH {
            Some(Self::get_rxfh)
        } else {
            None
        },
        set_rxfh: if T::HAS_SET_RXFH {
            Some(Self::set_rxfh)
        } else {
            None
        },
        get_rxfh_fields: if T::HAS_RXFH_FIELDS {
            Some(Self::get_rxfh_fields)
        } else {
            None
        },
        set_rxfh_fields: if T::HAS_SET_RXFH_FIELDS {
            Some(Self::set_rxfh_fields)
        } else {
            None
        },
        get_pauseparam: if T::HAS_PAUSE {
            Some(Self::get_pauseparam)
        } else {
            None
        },
        set_pauseparam: if T::HAS_SET_PAUSE {
            Some(Self::set_pauseparam)
        } else {
            None
        },
        get_pause_stats: if T::HAS_PAUSE_STATS {
            Some(Self::get_pause_stats)
        } else {
            None
        },
        // The indirection table and the key keep their sizes
        // (`rxfh_indir_space` and `rxfh_key_space` 0), and there is no RSS
        // context but the default (`rxfh_max_num_contexts` 0 with no
        // `create_rxfh_context`), nor a flow rule spread by one
        // (`cap_rss_rxnfc_adds` 0).
        // SAFETY: every other member is an optional function pointer, a
        // capability bit or a size, for which zero is "not supported".
        ..unsafe { core::mem::zeroed() }
    };
}
