// SPDX-License-Identifier: GPL-2.0

//! The NIC's register file (BAR0).
//!
//! Accesses are checked here, not trusted: the host may only make naturally
//! aligned 32-bit accesses to registers that exist. Anything else is a driver
//! bug, which the model reports loudly and counts, reading as all ones like a
//! master abort would.

use log::error;
use pagefill_abi::{self as abi, reg};

/// Why a BAR0 access was refused.
#[derive(Debug, PartialEq, Eq)]
pub enum AccessError {
    /// Not a naturally aligned 4-byte access.
    Width { offset: u64, len: usize },
    /// No register at that offset.
    NoRegister { offset: u64 },
}

/// The pagefill NIC as its registers show it.
#[derive(Default)]
pub struct Nic {
    /// Refused register accesses since creation: a driver bug if non-zero.
    pub bad_accesses: u64,
}

impl Nic {
    /// A NIC fresh from power-on.
    pub fn new() -> Self {
        Self::default()
    }

    fn check(offset: u64, len: usize) -> Result<usize, AccessError> {
        if len != 4 || offset % 4 != 0 {
            return Err(AccessError::Width { offset, len });
        }
        usize::try_from(offset)
            .ok()
            .filter(|&o| o < abi::MSIX_TABLE_OFFSET as usize)
            .ok_or(AccessError::NoRegister { offset })
    }

    /// Value of the 32-bit register at `offset`.
    pub fn read_reg(&self, offset: usize) -> Result<u32, AccessError> {
        match offset {
            reg::ID => Ok(abi::ID_MAGIC),
            reg::VERSION => Ok(abi::version(abi::VERSION_MAJOR, abi::VERSION_MINOR)),
            _ => Err(AccessError::NoRegister {
                offset: offset as u64,
            }),
        }
    }

    /// Writes the 32-bit register at `offset`.
    pub fn write_reg(&mut self, offset: usize, _value: u32) -> Result<(), AccessError> {
        // The identity registers are read-only; nothing else exists yet.
        Err(AccessError::NoRegister {
            offset: offset as u64,
        })
    }

    /// A BAR0 read as it arrives from the host.
    pub fn bar0_read(&mut self, offset: u64, data: &mut [u8]) {
        let value = Self::check(offset, data.len()).and_then(|o| self.read_reg(o));
        match value {
            Ok(v) => data.copy_from_slice(&v.to_le_bytes()),
            Err(e) => {
                self.bad_accesses += 1;
                error!("driver bug: BAR0 read refused: {e:?}");
                data.fill(0xff);
            }
        }
    }

    /// A BAR0 write as it arrives from the host.
    pub fn bar0_write(&mut self, offset: u64, data: &[u8]) {
        let res = Self::check(offset, data.len()).and_then(|o| {
            let mut v = [0u8; 4];
            v.copy_from_slice(data);
            self.write_reg(o, u32::from_le_bytes(v))
        });
        if let Err(e) = res {
            self.bad_accesses += 1;
            error!("driver bug: BAR0 write refused: {e:?}");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(nic: &mut Nic, offset: u64) -> u32 {
        let mut b = [0u8; 4];
        nic.bar0_read(offset, &mut b);
        u32::from_le_bytes(b)
    }

    #[test]
    fn identity_registers() {
        let mut nic = Nic::new();
        assert_eq!(read(&mut nic, reg::ID as u64), abi::ID_MAGIC);
        let v = read(&mut nic, reg::VERSION as u64);
        assert_eq!(abi::version_major(v), abi::VERSION_MAJOR);
        assert_eq!(abi::version_minor(v), abi::VERSION_MINOR);
        assert_eq!(nic.bad_accesses, 0);
    }

    #[test]
    fn misaligned_or_narrow_access_is_refused_and_counted() {
        let mut nic = Nic::new();
        let mut b = [0u8; 2];
        nic.bar0_read(reg::ID as u64, &mut b);
        assert_eq!(b, [0xff, 0xff]);
        let mut b = [0u8; 4];
        nic.bar0_read(reg::ID as u64 + 1, &mut b);
        assert_eq!(b, [0xff; 4]);
        assert_eq!(nic.bad_accesses, 2);
    }

    #[test]
    fn identity_is_read_only() {
        let mut nic = Nic::new();
        nic.bar0_write(reg::ID as u64, &[0; 4]);
        assert_eq!(nic.bad_accesses, 1);
        assert_eq!(read(&mut nic, reg::ID as u64), abi::ID_MAGIC);
    }

    #[test]
    fn accesses_past_the_registers_are_refused() {
        let mut nic = Nic::new();
        assert_eq!(read(&mut nic, abi::MSIX_TABLE_OFFSET as u64), u32::MAX);
        assert_eq!(read(&mut nic, u64::MAX - 3), u32::MAX);
        assert_eq!(nic.bad_accesses, 2);
    }
}
