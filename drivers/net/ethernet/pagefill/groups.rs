// SPDX-License-Identifier: GPL-2.0

//! Which fabric groups the interface joins, and which group a frame goes
//! to: configured with the multicast address list (`ip maddr`), the
//! standard interface for "receive this group's traffic".
//!
//! Group 0 is the interface's LAN: always joined, and where every frame goes
//! unless it is addressed to another group. Group `g` (1..4095) has the
//! multicast MAC address `01:50:46:4c:0g:gg`: adding that address joins the
//! group, removing it leaves it, and a frame sent to that address goes to
//! group `g` only.
//!
//! Which node table each joined group has is here too. The joins and
//! leaves that keep the joined groups equal to the wanted ones, told to the
//! queues' NAPI instances through their mailboxes, are the interface's
//! (`sync_groups` in `iface.rs`), which owns the tables and the queues.

use crate::abi;
use crate::rings::MAX_JOINED;

/// The group a freshly loaded NIC joins and transmits to.
pub(crate) const DEFAULT_GROUP: u16 = 0;

/// The first four bytes of a group's multicast MAC address.
const GROUP_MAC_PREFIX: [u8; 4] = [0x01, 0x50, 0x46, 0x4c];

/// The group whose multicast address `mac` is, if it is one.
pub(crate) fn group_of_mac(mac: &[u8]) -> Option<u16> {
    let (prefix, rest) = mac.split_at_checked(4)?;
    if prefix != GROUP_MAC_PREFIX {
        return None;
    }
    let g = u16::from_be_bytes([*rest.first()?, *rest.get(1)?]);
    (usize::from(g) < abi::MAX_GROUPS).then_some(g)
}

/// The group a frame with destination address `dst` goes to.
pub(crate) fn tx_group(dst: &[u8]) -> u16 {
    group_of_mac(dst).unwrap_or(DEFAULT_GROUP)
}

/// A set of groups.
#[derive(Clone, Copy)]
pub(crate) struct GroupSet([u64; abi::MAX_GROUPS / 64]);

impl GroupSet {
    /// Just the default group.
    pub(crate) const fn default_only() -> Self {
        let mut s = Self([0; abi::MAX_GROUPS / 64]);
        s.0[DEFAULT_GROUP as usize / 64] |= 1 << (DEFAULT_GROUP % 64);
        s
    }

    pub(crate) fn insert(&mut self, g: u16) {
        if let Some(w) = self.0.get_mut(usize::from(g) / 64) {
            *w |= 1 << (g % 64);
        }
    }

    pub(crate) fn contains(&self, g: u16) -> bool {
        self.0
            .get(usize::from(g) / 64)
            .is_some_and(|w| w & (1 << (g % 64)) != 0)
    }

    /// The groups in the set, in order.
    pub(crate) fn iter(&self) -> impl Iterator<Item = u16> + '_ {
        (0..abi::MAX_GROUPS as u16).filter(|g| self.contains(*g))
    }
}

/// Who holds which node table.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Table {
    Free,
    /// Joined by this group.
    Joined(u16),
    /// This group was left; queues still wait for buffers the device held.
    Leaving(u16),
}

/// The node tables of the joined groups, across the queues.
pub(crate) struct Tables {
    /// The interface is up: the queues' receive state is installed and
    /// reads its mail.
    pub(crate) up: bool,
    pub(crate) state: [Table; MAX_JOINED],
    /// Queues still holding each table.
    pub(crate) holders: [u8; MAX_JOINED],
}

impl Tables {
    pub(crate) const fn new() -> Self {
        Self {
            up: false,
            state: [Table::Free; MAX_JOINED],
            holders: [0; MAX_JOINED],
        }
    }

    pub(crate) fn joined(&self) -> impl Iterator<Item = (usize, u16)> + '_ {
        self.state.iter().enumerate().filter_map(|(t, s)| match s {
            Table::Joined(g) => Some((t, *g)),
            _ => None,
        })
    }

    /// Whether `g` holds a table, joined or leaving.
    pub(crate) fn holds(&self, g: u16) -> bool {
        self.state
            .iter()
            .any(|s| *s == Table::Joined(g) || *s == Table::Leaving(g))
    }

    /// Queues let go of the tables in `mask`; returns whether a table
    /// became free.
    pub(crate) fn release(&mut self, mask: u64) -> bool {
        let mut freed = false;
        for t in 0..MAX_JOINED {
            if mask & (1 << t) == 0 {
                continue;
            }
            self.holders[t] = self.holders[t].saturating_sub(1);
            if self.holders[t] == 0 {
                if let Table::Leaving(_) = self.state[t] {
                    self.state[t] = Table::Free;
                    freed = true;
                }
            }
        }
        freed
    }
}
