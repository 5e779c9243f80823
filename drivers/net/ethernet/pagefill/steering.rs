// SPDX-License-Identifier: GPL-2.0

//! Receive flow steering: the RSS key, indirection table and hash fields
//! (`ethtool -x/-X`, `rx-flow-hash`) and the flow filters of `ethtool -N`
//! rules, kept per device and written into the device's steering
//! registers, which it takes at any time, enabled or not.
//!
//! A rule's `user-def` names a stream: its group in bits 23:8, its source
//! node in bits 7:0, the bits above 0. `ethtool -N DEV flow-type ether
//! user-def 0x000700 action 2` steers the stream of group 7 from node 0 to
//! queue pair 2; `user-def` may come with the fields of the other flow
//! types, and a mask of the bits to ignore (`udp4 dst-port 4791 user-def
//! 0x000700 m 0xff` is that group's UDP to port 4791 from any node).

use kernel::{io::Io, prelude::*};

use crate::abi;
use crate::hw::Bar0;
use crate::net::ethtool::{FlowAction, FlowRule, FlowType, HashFields, HashFlow};

/// Bits of a rule's user-defined data that name a stream: a stream's
/// data has no bit above them, so a mask there narrows nothing.
const USER_DEF_STREAM: u64 = 0xff_ffff;

/// What the hash of every IP flow covers.
const ADDRS: HashFields = HashFields::IP_SRC.with(HashFields::IP_DST);
/// What the hash of TCP and UDP covers where its [`abi::rss_fields`] bit
/// is set.
const ADDRS_PORTS: HashFields = ADDRS.with(HashFields::L4_B_0_1).with(HashFields::L4_B_2_3);

/// An indirection table: a queue pair for each hash modulo its size.
type Indir = [u8; abi::RSS_INDIR_SIZE];

/// The steering of one device, changed under RTNL (by ethtool and the
/// interface's operations).
///
/// Table entries and rules' queues are below the queue pairs in use when
/// set. The core refuses a count (`ethtool -L`) below them, but for a
/// table the user did not set, which then follows the count; the device
/// takes both modulo the queue pairs it has. A rule sits at the index of
/// its location.
pub(crate) struct Steering {
    key: [u8; abi::RSS_KEY_BYTES],
    indir: Indir,
    /// [`abi::rss_fields`] bits.
    fields: u32,
    rules: [Option<FlowRule>; abi::MAX_FILTERS],
}

/// The default indirection table for `queues` queue pairs: entry `i` is
/// `i % queues` (`ethtool_rxfh_indir_default()`).
fn spread(queues: u32) -> Indir {
    let n = queues.clamp(1, abi::MAX_QUEUES as u32) as usize;
    core::array::from_fn(|i| (i % n) as u8)
}

/// The register holding bytes `4 * i .. 4 * i + 4` of a packed field:
/// byte `4 * i + j` in bits `8 * j + 7 .. 8 * j`.
fn le_word(bytes: &[u8]) -> u32 {
    bytes.iter().rev().fold(0, |w, &b| (w << 8) | u32::from(b))
}

/// Writes `bytes` packed four to a register from register `base` on.
fn write_packed(bar: &Bar0<'_>, base: usize, bytes: &[u8]) -> Result {
    for (i, word) in bytes.chunks(4).enumerate() {
        bar.try_write32(le_word(word), base + 4 * i)?;
    }
    Ok(())
}

/// A filter's [`abi::filter::STREAM`] (or its mask) from a rule's
/// user-defined data (or its mask).
fn stream(user_def: u64) -> u32 {
    let group = ((user_def >> 8) & 0xffff) as u32;
    let node = (user_def & 0xff) as u32;
    group | (node << 16)
}

/// A filter's [`abi::filter::PORTS`] (or its mask).
fn ports(src: u16, dst: u16) -> u32 {
    u32::from(src) | (u32::from(dst) << 16)
}

/// A filter's [`abi::filter::CTRL`] for `rule`.
fn filter_ctrl(rule: &FlowRule) -> u32 {
    let flow = match rule.flow {
        FlowType::Ether => abi::filter::FLOW_ANY,
        FlowType::Tcp4 => abi::filter::FLOW_TCP4,
        FlowType::Udp4 => abi::filter::FLOW_UDP4,
        FlowType::Tcp6 => abi::filter::FLOW_TCP6,
        FlowType::Udp6 => abi::filter::FLOW_UDP6,
        FlowType::Ip4 => abi::filter::FLOW_IP4,
        FlowType::Ip6 => abi::filter::FLOW_IP6,
    };
    let action = match rule.action {
        FlowAction::Queue(q) => q << abi::filter::QUEUE_SHIFT,
        FlowAction::Drop => abi::filter::DROP,
    };
    abi::filter::VALID | (flow << abi::filter::FLOW_SHIFT) | action
}

/// Writes filter `f`: `rule`'s match and action, or none. The device
/// reads a valid filter's match when its `CTRL` is written: `CTRL` goes
/// to 0 first and is written last.
fn write_filter(bar: &Bar0<'_>, f: usize, rule: Option<&FlowRule>) -> Result {
    let reg = |r| abi::reg::filter(f, r);
    bar.try_write32(0, reg(abi::filter::CTRL))?;
    let Some(rule) = rule else {
        return Ok(());
    };
    let w = |v, r| bar.try_write32(v, reg(r));
    w(stream(rule.user_def), abi::filter::STREAM)?;
    w(stream(rule.user_def_mask), abi::filter::STREAM_MASK)?;
    w(ports(rule.sport, rule.dport), abi::filter::PORTS)?;
    w(
        ports(rule.sport_mask, rule.dport_mask),
        abi::filter::PORTS_MASK,
    )?;
    write_packed(bar, reg(abi::filter::SRC), &rule.src)?;
    write_packed(bar, reg(abi::filter::SRC_MASK), &rule.src_mask)?;
    write_packed(bar, reg(abi::filter::DST), &rule.dst)?;
    write_packed(bar, reg(abi::filter::DST_MASK), &rule.dst_mask)?;
    w(filter_ctrl(rule), abi::filter::CTRL)
}

/// The [`abi::rss_fields`] bit of a flow type whose hash may cover its
/// ports.
fn ports_bit(flow: HashFlow) -> Option<u32> {
    match flow {
        HashFlow::Tcp4 => Some(abi::rss_fields::TCP4_PORTS),
        HashFlow::Udp4 => Some(abi::rss_fields::UDP4_PORTS),
        HashFlow::Tcp6 => Some(abi::rss_fields::TCP6_PORTS),
        HashFlow::Udp6 => Some(abi::rss_fields::UDP6_PORTS),
        _ => None,
    }
}

impl Steering {
    /// What a reset of the device holds, but for the indirection table,
    /// spread over `queues` queue pairs: Microsoft's key, every port
    /// hashed, no rule.
    pub(crate) fn new(queues: u32) -> impl Init<Self> {
        init!(Self {
            key: abi::RSS_KEY,
            indir: spread(queues),
            fields: abi::rss_fields::ALL,
            rules: [None; abi::MAX_FILTERS],
        })
    }

    /// Writes every steering register: for a device just reset, before
    /// it is enabled.
    pub(crate) fn program(&self, bar: &Bar0<'_>) -> Result {
        self.write_rss(bar)?;
        for (f, rule) in self.rules.iter().enumerate() {
            write_filter(bar, f, rule.as_ref())?;
        }
        Ok(())
    }

    /// Writes the key, the indirection table and the hash fields.
    fn write_rss(&self, bar: &Bar0<'_>) -> Result {
        write_packed(bar, abi::reg::RSS_KEY, &self.key)?;
        write_packed(bar, abi::reg::RSS_INDIR, &self.indir)?;
        bar.write32(self.fields, abi::reg::RSS_FIELDS);
        Ok(())
    }

    /// Sets the key and the table, in the device too if `bar`; on an
    /// error both stay as they were.
    fn set_rss(
        &mut self,
        bar: Option<&Bar0<'_>>,
        key: [u8; abi::RSS_KEY_BYTES],
        indir: Indir,
    ) -> Result {
        let old_key = core::mem::replace(&mut self.key, key);
        let old_indir = core::mem::replace(&mut self.indir, indir);
        let Some(bar) = bar else {
            return Ok(());
        };
        self.write_rss(bar).inspect_err(|_| {
            self.key = old_key;
            self.indir = old_indir;
            let _ = self.write_rss(bar);
        })
    }

    /// The key and the indirection table, into `key` and `indir` where
    /// given; the hash is Toeplitz.
    pub(crate) fn read_rxfh(&self, key: Option<&mut [u8]>, indir: Option<&mut [u32]>) {
        for (d, s) in key.into_iter().flatten().zip(&self.key) {
            *d = *s;
        }
        for (d, s) in indir.into_iter().flatten().zip(&self.indir) {
            *d = u32::from(*s);
        }
    }

    /// Sets the key and the indirection table where given, each entry
    /// below `queues`, in the device too if `bar`.
    pub(crate) fn set_rxfh(
        &mut self,
        bar: Option<&Bar0<'_>>,
        key: Option<&[u8]>,
        indir: Option<&[u32]>,
        queues: u32,
    ) -> Result {
        let key = match key {
            Some(k) => k.try_into().map_err(|_| EINVAL)?,
            None => self.key,
        };
        let indir = match indir {
            Some(t) if t.len() == abi::RSS_INDIR_SIZE => {
                let mut new = [0; abi::RSS_INDIR_SIZE];
                for (d, &q) in new.iter_mut().zip(t) {
                    *d = u8::try_from(q)
                        .ok()
                        .filter(|&q| u32::from(q) < queues)
                        .ok_or(EINVAL)?;
                }
                new
            }
            Some(_) => return Err(EINVAL),
            None => self.indir,
        };
        self.set_rss(bar, key, indir)
    }

    /// Spreads the indirection table over `queues` queue pairs, the
    /// default, in the device too if `bar`: for a table the user did not
    /// set, when the queue pairs in use change.
    pub(crate) fn spread(&mut self, bar: Option<&Bar0<'_>>, queues: u32) -> Result {
        self.set_rss(bar, self.key, spread(queues))
    }

    /// The header fields the hash of `flow` covers.
    pub(crate) fn hash_fields(&self, flow: HashFlow) -> Result<HashFields> {
        match (flow, ports_bit(flow)) {
            // A frame that is not IP is hashed by its stream, which no
            // `RXH_*` field names.
            (HashFlow::Ether, _) => Err(EOPNOTSUPP),
            (_, Some(bit)) if self.fields & bit != 0 => Ok(ADDRS_PORTS),
            _ => Ok(ADDRS),
        }
    }

    /// Sets the header fields the hash of `flow` covers, in the device too
    /// if `bar`: the addresses always, and for TCP and UDP the ports or
    /// not.
    pub(crate) fn set_hash_fields(
        &mut self,
        bar: Option<&Bar0<'_>>,
        flow: HashFlow,
        fields: HashFields,
    ) -> Result {
        let new = match ports_bit(flow) {
            _ if flow == HashFlow::Ether => return Err(EOPNOTSUPP),
            Some(bit) if fields == ADDRS_PORTS => self.fields | bit,
            Some(bit) if fields == ADDRS => self.fields & !bit,
            None if fields == ADDRS => self.fields,
            _ => return Err(EINVAL),
        };
        self.fields = new;
        if let Some(bar) = bar {
            bar.write32(new, abi::reg::RSS_FIELDS);
        }
        Ok(())
    }

    /// The index of rule location `location`.
    fn index(location: u32) -> Result<usize> {
        usize::try_from(location)
            .ok()
            .filter(|&i| i < abi::MAX_FILTERS)
            .ok_or(EINVAL)
    }

    /// The rule at `location`.
    pub(crate) fn rule(&self, location: u32) -> Result<FlowRule> {
        self.rules
            .get(Self::index(location)?)
            .copied()
            .flatten()
            .ok_or(ENOENT)
    }

    /// Calls `f` with the location of each rule, lowest first.
    pub(crate) fn locations(&self, f: &mut dyn FnMut(u32)) {
        for (i, rule) in self.rules.iter().enumerate() {
            if rule.is_some() {
                f(i as u32);
            }
        }
    }

    /// Replaces the rule at index `i` with `new`, in the device too if
    /// `bar`; on an error it stays as it was.
    fn replace_rule(&mut self, bar: Option<&Bar0<'_>>, i: usize, new: Option<FlowRule>) -> Result {
        let slot = self.rules.get_mut(i).ok_or(EINVAL)?;
        let old = core::mem::replace(slot, new);
        let Some(bar) = bar else {
            return Ok(());
        };
        write_filter(bar, i, new.as_ref()).inspect_err(|_| {
            if let Some(slot) = self.rules.get_mut(i) {
                *slot = old;
            }
            let _ = write_filter(bar, i, old.as_ref());
        })
    }

    /// Puts `rule` at its location, in place of the rule there, in the
    /// device too if `bar`. A queue must be below `queues`, and the
    /// user-defined data a stream's (a rule that could match no stream is
    /// refused, not kept).
    pub(crate) fn insert(
        &mut self,
        bar: Option<&Bar0<'_>>,
        rule: &FlowRule,
        queues: u32,
    ) -> Result {
        let i = Self::index(rule.location)?;
        if rule.user_def & !USER_DEF_STREAM != 0 {
            return Err(EINVAL);
        }
        if let FlowAction::Queue(q) = rule.action {
            if q >= queues {
                return Err(EINVAL);
            }
        }
        self.replace_rule(bar, i, Some(*rule))
    }

    /// Deletes the rule at `location`, in the device too if `bar`.
    pub(crate) fn delete(&mut self, bar: Option<&Bar0<'_>>, location: u32) -> Result {
        self.rule(location)?;
        self.replace_rule(bar, Self::index(location)?, None)
    }

    /// Deletes every rule, in the device too if `bar`.
    pub(crate) fn clear_rules(&mut self, bar: Option<&Bar0<'_>>) -> Result {
        for i in 0..abi::MAX_FILTERS {
            if self.rules.get(i).is_some_and(Option::is_some) {
                self.replace_rule(bar, i, None)?;
            }
        }
        Ok(())
    }
}
