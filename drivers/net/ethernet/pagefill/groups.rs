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

use crate::abi;

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
