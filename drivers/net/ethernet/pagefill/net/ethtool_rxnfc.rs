// SPDX-License-Identifier: GPL-2.0

//! Receive flow rules (ntuple filters): `ethtool -n` and `ethtool -N DEV
//! flow-type ...`, the `ETHTOOL_GRXCLSRL*` and `ETHTOOL_SRXCLSRL*`
//! commands of `get_rxnfc` and `set_rxnfc`.
//!
//! A rule is a [`FlowRule`]: what the abstraction can express, which is
//! what a rule of `struct ethtool_rx_flow_spec` becomes, or the rule is
//! refused (`EINVAL` for a field it cannot match on, `EOPNOTSUPP` for a
//! flow type or action it does not know), never matched on fewer fields
//! than asked.
//!
//! C header: [`include/uapi/linux/ethtool.h`](srctree/include/uapi/linux/ethtool.h)

use kernel::{
    bindings,
    error::from_result,
    ffi::c_int,
    prelude::*, //
};

use crate::net::ethtool::{EthtoolOps, EthtoolTable};
use crate::net::netdev::{Device, Rtnl};

/// The frames a [`FlowRule`] matches (`flow_type`), and which of its
/// fields count: addresses for the IP types, ports for TCP and UDP, the
/// user-defined data for all.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FlowType {
    /// TCP over IPv4 (`tcp4`, `TCP_V4_FLOW`).
    Tcp4,
    /// UDP over IPv4 (`udp4`, `UDP_V4_FLOW`).
    Udp4,
    /// TCP over IPv6 (`tcp6`, `TCP_V6_FLOW`).
    Tcp6,
    /// UDP over IPv6 (`udp6`, `UDP_V6_FLOW`).
    Udp6,
    /// Any IPv4 (`ip4`, `IPV4_USER_FLOW` with no layer 4 field).
    Ip4,
    /// Any IPv6 (`ip6`, `IPV6_USER_FLOW` with no layer 4 field).
    Ip6,
    /// Any frame (`ether`, `ETHER_FLOW` with no header field): only the
    /// user-defined data is matched.
    Ether,
}

/// What becomes of a frame a [`FlowRule`] matches (`ring_cookie`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FlowAction {
    /// It goes to this receive queue (`action N`).
    Queue(u32),
    /// It is dropped (`action -1`, `RX_CLS_FLOW_DISC`).
    Drop,
}

/// A receive flow rule.
///
/// A mask's set bits are those that must match (`m_u` of
/// `struct ethtool_rx_flow_spec`; `ethtool -N` shows and takes the
/// inverse, the bits to ignore). A value has no bit set outside its mask.
/// Fields the flow type does not match on (see [`FlowType`]; IPv4
/// addresses take the first four bytes) are 0 with a mask of 0.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FlowRule {
    /// Where the rule is in the table; a frame that matches several
    /// rules takes the lowest one's action.
    pub location: u32,
    pub flow: FlowType,
    /// Source address, bytes as on the wire (an IPv4 address in the first
    /// four).
    pub src: [u8; 16],
    pub src_mask: [u8; 16],
    /// Destination address, as [`Self::src`].
    pub dst: [u8; 16],
    pub dst_mask: [u8; 16],
    /// Source port.
    pub sport: u16,
    pub sport_mask: u16,
    /// Destination port.
    pub dport: u16,
    pub dport_mask: u16,
    /// The driver-defined data of `user-def`, as the 64-bit number
    /// `ethtool -N` takes (`FLOW_EXT`'s `data`, big endian there).
    pub user_def: u64,
    pub user_def_mask: u64,
    pub action: FlowAction,
}

/// `ETHTOOL_RX_FLOW_SPEC_RING_VF`: the virtual function of a ring cookie.
const RING_VF: u64 = bindings::ETHTOOL_RX_FLOW_SPEC_RING_VF;
/// `RX_CLS_FLOW_DISC` and `RX_CLS_FLOW_WAKE` as ring cookies.
const FLOW_DISC: u64 = bindings::RX_CLS_FLOW_DISC as u64;
const FLOW_WAKE: u64 = bindings::RX_CLS_FLOW_WAKE as u64;

/// The wire bytes of an IPv4 address in network byte order, with room
/// for an IPv6 one.
fn ip4_bytes(a: bindings::__be32) -> [u8; 16] {
    let mut b = [0; 16];
    b[..4].copy_from_slice(&a.to_ne_bytes());
    b
}

/// The wire bytes of an IPv6 address in network byte order.
fn ip6_bytes(a: [bindings::__be32; 4]) -> [u8; 16] {
    let mut b = [0; 16];
    for (chunk, word) in b.chunks_exact_mut(4).zip(a) {
        chunk.copy_from_slice(&word.to_ne_bytes());
    }
    b
}

/// An IPv4 address in network byte order from its wire bytes.
fn ip4_of(b: &[u8; 16]) -> bindings::__be32 {
    bindings::__be32::from_ne_bytes([b[0], b[1], b[2], b[3]])
}

/// An IPv6 address in network byte order from its wire bytes.
fn ip6_of(b: &[u8; 16]) -> [bindings::__be32; 4] {
    core::array::from_fn(|i| {
        bindings::__be32::from_ne_bytes([b[4 * i], b[4 * i + 1], b[4 * i + 2], b[4 * i + 3]])
    })
}

/// `v` with only the bits of `m`, byte by byte.
fn masked(v: [u8; 16], m: [u8; 16]) -> [u8; 16] {
    core::array::from_fn(|i| v[i] & m[i])
}

impl FlowRule {
    /// A rule at `location` of type `flow` with no field to match yet.
    fn empty(location: u32, flow: FlowType, action: FlowAction) -> Self {
        Self {
            location,
            flow,
            src: [0; 16],
            src_mask: [0; 16],
            dst: [0; 16],
            dst_mask: [0; 16],
            sport: 0,
            sport_mask: 0,
            dport: 0,
            dport_mask: 0,
            user_def: 0,
            user_def_mask: 0,
            action,
        }
    }

    /// Sets the addresses from their wire bytes, each value under its mask.
    fn set_addrs(&mut self, src: [[u8; 16]; 2], dst: [[u8; 16]; 2]) {
        self.src = masked(src[0], src[1]);
        self.src_mask = src[1];
        self.dst = masked(dst[0], dst[1]);
        self.dst_mask = dst[1];
    }

    /// Sets the ports from network byte order, each value under its mask.
    fn set_ports(&mut self, src: [bindings::__be16; 2], dst: [bindings::__be16; 2]) {
        let [sport, sport_mask] = src.map(u16::from_be);
        let [dport, dport_mask] = dst.map(u16::from_be);
        self.sport = sport & sport_mask;
        self.sport_mask = sport_mask;
        self.dport = dport & dport_mask;
        self.dport_mask = dport_mask;
    }

    /// The action of ring cookie `cookie`.
    fn action_of(cookie: u64) -> Result<FlowAction> {
        match cookie {
            FLOW_DISC => Ok(FlowAction::Drop),
            FLOW_WAKE => Err(EOPNOTSUPP),
            c if c & RING_VF != 0 => Err(EOPNOTSUPP),
            c => u32::try_from(c).map(FlowAction::Queue).map_err(|_| EINVAL),
        }
    }

    /// The rule `fs` asks for, refused if any part of it is beyond a
    /// [`FlowRule`]: a rule that would match more frames than asked is
    /// never made. `fs` is the core's, initialised whole (its unions are
    /// read as the flow type says).
    fn from_spec(fs: &bindings::ethtool_rx_flow_spec) -> Result<Self> {
        // Special locations are the driver's to pick, which none is asked
        // to do: `ETHTOOL_GRXCLSRLCNT` does not offer them, and ethtool
        // then picks a free location itself.
        if fs.location & bindings::RX_CLS_LOC_SPECIAL != 0 {
            return Err(EINVAL);
        }
        if fs.flow_type & (bindings::FLOW_MAC_EXT | bindings::FLOW_RSS) != 0 {
            return Err(EOPNOTSUPP);
        }
        let action = Self::action_of(fs.ring_cookie)?;
        let location = fs.location;
        let ext = fs.flow_type & bindings::FLOW_EXT != 0;
        let rule = match fs.flow_type & !bindings::FLOW_EXT {
            t @ (bindings::TCP_V4_FLOW | bindings::UDP_V4_FLOW) => {
                // SAFETY: every variant of the unions is integers, valid
                // for any initialised bytes, and `fs` is initialised whole
                // (the core copied it from user space, the one caller's
                // source); these are the variants of `t`.
                let (h, m) = unsafe { (fs.h_u.tcp_ip4_spec, fs.m_u.tcp_ip4_spec) };
                if m.tos != 0 {
                    return Err(EINVAL);
                }
                let flow = if t == bindings::TCP_V4_FLOW {
                    FlowType::Tcp4
                } else {
                    FlowType::Udp4
                };
                let mut r = Self::empty(location, flow, action);
                r.set_addrs(
                    [ip4_bytes(h.ip4src), ip4_bytes(m.ip4src)],
                    [ip4_bytes(h.ip4dst), ip4_bytes(m.ip4dst)],
                );
                r.set_ports([h.psrc, m.psrc], [h.pdst, m.pdst]);
                r
            }
            bindings::IPV4_USER_FLOW => {
                // SAFETY: as above, for `IPV4_USER_FLOW`'s variant.
                let (h, m) = unsafe { (fs.h_u.usr_ip4_spec, fs.m_u.usr_ip4_spec) };
                if h.ip_ver != bindings::ETH_RX_NFC_IP4 as u8
                    || m.ip_ver != 0
                    || m.l4_4_bytes != 0
                    || m.tos != 0
                    || m.proto != 0
                {
                    return Err(EINVAL);
                }
                let mut r = Self::empty(location, FlowType::Ip4, action);
                r.set_addrs(
                    [ip4_bytes(h.ip4src), ip4_bytes(m.ip4src)],
                    [ip4_bytes(h.ip4dst), ip4_bytes(m.ip4dst)],
                );
                r
            }
            t @ (bindings::TCP_V6_FLOW | bindings::UDP_V6_FLOW) => {
                // SAFETY: as above, for the variants of `t`.
                let (h, m) = unsafe { (fs.h_u.tcp_ip6_spec, fs.m_u.tcp_ip6_spec) };
                if m.tclass != 0 {
                    return Err(EINVAL);
                }
                let flow = if t == bindings::TCP_V6_FLOW {
                    FlowType::Tcp6
                } else {
                    FlowType::Udp6
                };
                let mut r = Self::empty(location, flow, action);
                r.set_addrs(
                    [ip6_bytes(h.ip6src), ip6_bytes(m.ip6src)],
                    [ip6_bytes(h.ip6dst), ip6_bytes(m.ip6dst)],
                );
                r.set_ports([h.psrc, m.psrc], [h.pdst, m.pdst]);
                r
            }
            bindings::IPV6_USER_FLOW => {
                // SAFETY: as above, for `IPV6_USER_FLOW`'s variant.
                let (h, m) = unsafe { (fs.h_u.usr_ip6_spec, fs.m_u.usr_ip6_spec) };
                if m.l4_4_bytes != 0 || m.tclass != 0 || m.l4_proto != 0 {
                    return Err(EINVAL);
                }
                let mut r = Self::empty(location, FlowType::Ip6, action);
                r.set_addrs(
                    [ip6_bytes(h.ip6src), ip6_bytes(m.ip6src)],
                    [ip6_bytes(h.ip6dst), ip6_bytes(m.ip6dst)],
                );
                r
            }
            bindings::ETHER_FLOW => {
                // SAFETY: as above, for `ETHER_FLOW`'s variant.
                let m = unsafe { fs.m_u.ether_spec };
                let proto = m.h_proto;
                if m.h_dest != [0; 6] || m.h_source != [0; 6] || proto != 0 {
                    return Err(EINVAL);
                }
                Self::empty(location, FlowType::Ether, action)
            }
            _ => return Err(EOPNOTSUPP),
        };
        if ext {
            Self::with_ext(rule, &fs.h_ext, &fs.m_ext)
        } else {
            Ok(rule)
        }
    }

    /// `rule` with the user-defined data of `FLOW_EXT`'s fields; a VLAN
    /// to match is refused.
    fn with_ext(
        mut rule: Self,
        h: &bindings::ethtool_flow_ext,
        m: &bindings::ethtool_flow_ext,
    ) -> Result<Self> {
        if m.vlan_etype != 0 || m.vlan_tci != 0 {
            return Err(EINVAL);
        }
        let be64 = |d: [bindings::__be32; 2]| {
            (u64::from(u32::from_be(d[0])) << 32) | u64::from(u32::from_be(d[1]))
        };
        rule.user_def_mask = be64(m.data);
        rule.user_def = be64(h.data) & rule.user_def_mask;
        Ok(rule)
    }

    /// The flow fields of `struct ethtool_rx_flow_spec`: the rule's values
    /// (`h_u`), or with `mask` its masks (`m_u`).
    fn flow_union(&self, mask: bool) -> bindings::ethtool_flow_union {
        let (src, dst, sport, dport) = if mask {
            (
                &self.src_mask,
                &self.dst_mask,
                self.sport_mask,
                self.dport_mask,
            )
        } else {
            (&self.src, &self.dst, self.sport, self.dport)
        };
        match self.flow {
            FlowType::Tcp4 | FlowType::Udp4 => bindings::ethtool_flow_union {
                tcp_ip4_spec: bindings::ethtool_tcpip4_spec {
                    ip4src: ip4_of(src),
                    ip4dst: ip4_of(dst),
                    psrc: sport.to_be(),
                    pdst: dport.to_be(),
                    tos: 0,
                },
            },
            FlowType::Tcp6 | FlowType::Udp6 => bindings::ethtool_flow_union {
                tcp_ip6_spec: bindings::ethtool_tcpip6_spec {
                    ip6src: ip6_of(src),
                    ip6dst: ip6_of(dst),
                    psrc: sport.to_be(),
                    pdst: dport.to_be(),
                    tclass: 0,
                },
            },
            FlowType::Ip4 => bindings::ethtool_flow_union {
                usr_ip4_spec: bindings::ethtool_usrip4_spec {
                    ip4src: ip4_of(src),
                    ip4dst: ip4_of(dst),
                    // The value says IPv4; its mask is 0.
                    ip_ver: if mask {
                        0
                    } else {
                        bindings::ETH_RX_NFC_IP4 as u8
                    },
                    ..Default::default()
                },
            },
            FlowType::Ip6 => bindings::ethtool_flow_union {
                usr_ip6_spec: bindings::ethtool_usrip6_spec {
                    ip6src: ip6_of(src),
                    ip6dst: ip6_of(dst),
                    ..Default::default()
                },
            },
            FlowType::Ether => Default::default(),
        }
    }

    /// Writes the rule into `fs` as `ethtool -n` reads it.
    fn write_spec(&self, fs: &mut bindings::ethtool_rx_flow_spec) {
        *fs = bindings::ethtool_rx_flow_spec::default();
        fs.h_u = self.flow_union(false);
        fs.m_u = self.flow_union(true);
        fs.flow_type = match self.flow {
            FlowType::Tcp4 => bindings::TCP_V4_FLOW,
            FlowType::Udp4 => bindings::UDP_V4_FLOW,
            FlowType::Tcp6 => bindings::TCP_V6_FLOW,
            FlowType::Udp6 => bindings::UDP_V6_FLOW,
            FlowType::Ip4 => bindings::IPV4_USER_FLOW,
            FlowType::Ip6 => bindings::IPV6_USER_FLOW,
            FlowType::Ether => bindings::ETHER_FLOW,
        };
        if self.user_def_mask != 0 {
            let be32 = |v: u64| [((v >> 32) as u32).to_be(), (v as u32).to_be()];
            fs.flow_type |= bindings::FLOW_EXT;
            fs.h_ext.data = be32(self.user_def);
            fs.m_ext.data = be32(self.user_def_mask);
        }
        fs.ring_cookie = match self.action {
            FlowAction::Queue(q) => q.into(),
            FlowAction::Drop => FLOW_DISC,
        };
        fs.location = self.location;
    }
}

impl<T: EthtoolOps> EthtoolTable<T> {
    /// # Safety
    ///
    /// `dev` registered for `T`; `info` valid and writable; `rule_locs`,
    /// for `ETHTOOL_GRXCLSRLALL`, valid and writable for `info.rule_cnt`
    /// entries (or NULL with none).
    pub(super) unsafe extern "C" fn get_rxnfc(
        dev: *mut bindings::net_device,
        info: *mut bindings::ethtool_rxnfc,
        rule_locs: *mut u32,
    ) -> c_int {
        // SAFETY: the ethtool core calls this op (installed only on
        // devices registered for `T`) with such a device and a valid,
        // writable request.
        let (dev, info) = unsafe { (Device::<T>::from_raw_ptr(dev), &mut *info) };
        from_result(|| {
            match info.cmd {
                bindings::ETHTOOL_GRXCLSRLCNT => {
                    let mut count = 0u32;
                    T::flow_rule_locations(dev, &mut |_| count += 1)?;
                    // The table's size, without `RX_CLS_LOC_SPECIAL`: the
                    // driver picks no location.
                    info.data = T::flow_rule_table_size(dev)?.into();
                    info.__bindgen_anon_1.rule_cnt = count;
                }
                bindings::ETHTOOL_GRXCLSRULE => {
                    T::flow_rule(dev, info.fs.location)?.write_spec(&mut info.fs);
                }
                bindings::ETHTOOL_GRXCLSRLALL => {
                    // SAFETY: both members of the union are a `u32`, which
                    // the core set: for this command, to the room at
                    // `rule_locs`.
                    let room = unsafe { info.__bindgen_anon_1.rule_cnt } as usize;
                    let locs: &mut [u32] = if rule_locs.is_null() {
                        &mut []
                    } else {
                        // SAFETY: the core allocated `rule_cnt` entries at
                        // `rule_locs` for this call, and nothing else
                        // uses them meanwhile.
                        unsafe { core::slice::from_raw_parts_mut(rule_locs, room) }
                    };
                    let (mut n, mut fits) = (0, true);
                    T::flow_rule_locations(dev, &mut |loc| match locs.get_mut(n) {
                        Some(slot) => {
                            *slot = loc;
                            n += 1;
                        }
                        None => fits = false,
                    })?;
                    if !fits {
                        return Err(EMSGSIZE);
                    }
                    info.data = T::flow_rule_table_size(dev)?.into();
                    info.__bindgen_anon_1.rule_cnt = n as u32;
                }
                _ => return Err(EOPNOTSUPP),
            }
            Ok(0)
        })
    }

    /// # Safety
    ///
    /// `dev` registered for `T`; `info` valid.
    pub(super) unsafe extern "C" fn set_rxnfc(
        dev: *mut bindings::net_device,
        info: *mut bindings::ethtool_rxnfc,
    ) -> c_int {
        // SAFETY: the ethtool core calls this op with a registered device
        // and a valid request, under RTNL.
        let (dev, info, rtnl) =
            unsafe { (Device::<T>::from_raw_ptr(dev), &*info, Rtnl::assume_held()) };
        from_result(|| {
            match info.cmd {
                bindings::ETHTOOL_SRXCLSRLINS => {
                    T::insert_flow_rule(dev, &rtnl, &FlowRule::from_spec(&info.fs)?)?
                }
                bindings::ETHTOOL_SRXCLSRLDEL => T::delete_flow_rule(dev, &rtnl, info.fs.location)?,
                _ => return Err(EOPNOTSUPP),
            }
            Ok(0)
        })
    }
}
