// SPDX-License-Identifier: GPL-2.0

//! The NIC's PCI configuration space: identity, one 32-bit memory BAR and an
//! MSI-X capability whose table and PBA sit in that BAR.
//!
//! QEMU's vfio-user client emulates the BAR address registers and the MSI-X
//! table itself; it reads the BAR type bits and the capability from here, and
//! forwards writes, which this model keeps so reads stay consistent.

use pagefill_abi as abi;

/// Size of the conventional configuration space.
pub const CONFIG_SPACE_SIZE: usize = 256;

const COMMAND: usize = 0x04;
const STATUS: usize = 0x06;
const REVISION: usize = 0x08;
const CLASS_PROG_IF: usize = 0x09;
const BAR0: usize = 0x10;
const SUBSYSTEM_VENDOR: usize = 0x2c;
const CAP_PTR: usize = 0x34;
const INTERRUPT_PIN: usize = 0x3d;

/// Offset of the MSI-X capability.
pub const MSIX_CAP: usize = 0x40;
const MSIX_CAP_ID: u8 = 0x11;
const STATUS_CAP_LIST: u16 = 1 << 4;
const MSIX_CTRL_ENABLE: u16 = 1 << 15;
const MSIX_CTRL_FUNCTION_MASK: u16 = 1 << 14;

/// Network controller, subclass "other".
const CLASS_NETWORK_OTHER: [u8; 3] = [0x00, 0x80, 0x02];

/// The configuration space registers.
pub struct ConfigSpace {
    bytes: [u8; CONFIG_SPACE_SIZE],
}

impl Default for ConfigSpace {
    fn default() -> Self {
        Self::new()
    }
}

impl ConfigSpace {
    /// The configuration space as the NIC comes out of reset.
    pub fn new() -> Self {
        let mut c = Self {
            bytes: [0; CONFIG_SPACE_SIZE],
        };
        c.put16(0x00, abi::PCI_VENDOR_ID);
        c.put16(0x02, abi::PCI_DEVICE_ID);
        c.put16(STATUS, STATUS_CAP_LIST);
        c.bytes[REVISION] = abi::PCI_REVISION;
        c.bytes[CLASS_PROG_IF..CLASS_PROG_IF + 3].copy_from_slice(&CLASS_NETWORK_OTHER);
        // BAR0: 32-bit, non-prefetchable memory (type bits all zero).
        c.put32(BAR0, 0);
        c.put16(SUBSYSTEM_VENDOR, abi::PCI_VENDOR_ID);
        c.put16(SUBSYSTEM_VENDOR + 2, abi::PCI_DEVICE_ID);
        c.bytes[CAP_PTR] = MSIX_CAP as u8;
        // No INTx: the NIC signals by MSI-X only.
        c.bytes[INTERRUPT_PIN] = 0;
        c.bytes[MSIX_CAP] = MSIX_CAP_ID;
        c.bytes[MSIX_CAP + 1] = 0;
        c.put16(MSIX_CAP + 2, abi::MSIX_VECTORS - 1);
        // Table and PBA offsets with BIR 0 (BAR0) in the low three bits.
        c.put32(MSIX_CAP + 4, abi::MSIX_TABLE_OFFSET);
        c.put32(MSIX_CAP + 8, abi::MSIX_PBA_OFFSET);
        c
    }

    fn put16(&mut self, off: usize, v: u16) {
        self.bytes[off..off + 2].copy_from_slice(&v.to_le_bytes());
    }

    fn put32(&mut self, off: usize, v: u32) {
        self.bytes[off..off + 4].copy_from_slice(&v.to_le_bytes());
    }

    fn get16(&self, off: usize) -> u16 {
        u16::from_le_bytes([self.bytes[off], self.bytes[off + 1]])
    }

    /// Reads `data.len()` bytes at `offset`; reads past the end return ones,
    /// as a PCI read of a missing register does.
    pub fn read(&self, offset: u64, data: &mut [u8]) {
        for (i, b) in data.iter_mut().enumerate() {
            *b = usize::try_from(offset)
                .ok()
                .and_then(|o| o.checked_add(i))
                .and_then(|o| self.bytes.get(o).copied())
                .unwrap_or(0xff);
        }
    }

    /// Writes `data` at `offset`, honouring only the writable bits: the
    /// command register, the BAR address bits and the MSI-X control bits.
    pub fn write(&mut self, offset: u64, data: &[u8]) {
        for (i, &b) in data.iter().enumerate() {
            let Some(off) = usize::try_from(offset).ok().and_then(|o| o.checked_add(i)) else {
                return;
            };
            let mask: u8 = match off {
                o if o == COMMAND => 0x06,     // memory space, bus master
                o if o == COMMAND + 1 => 0x04, // INTx disable
                o if (BAR0..BAR0 + 4).contains(&o) => {
                    // Size the BAR by its alignment: address bits above it.
                    let size_mask = !(abi::BAR0_SIZE as u32 - 1);
                    size_mask.to_le_bytes()[o - BAR0]
                }
                o if o == MSIX_CAP + 3 => ((MSIX_CTRL_ENABLE | MSIX_CTRL_FUNCTION_MASK) >> 8) as u8,
                _ => 0,
            };
            if let Some(cur) = self.bytes.get_mut(off) {
                *cur = (*cur & !mask) | (b & mask);
            }
        }
    }

    /// Whether the host enabled bus mastering: until it does, the NIC must
    /// not touch host memory.
    pub fn bus_master(&self) -> bool {
        self.get16(COMMAND) & 0x4 != 0
    }

    /// Whether MSI-X is enabled and not masked as a whole.
    pub fn msix_enabled(&self) -> bool {
        let ctrl = self.get16(MSIX_CAP + 2);
        ctrl & MSIX_CTRL_ENABLE != 0 && ctrl & MSIX_CTRL_FUNCTION_MASK == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read32(c: &ConfigSpace, off: u64) -> u32 {
        let mut b = [0u8; 4];
        c.read(off, &mut b);
        u32::from_le_bytes(b)
    }

    #[test]
    fn identity_and_class() {
        let c = ConfigSpace::new();
        assert_eq!(
            read32(&c, 0),
            u32::from(abi::PCI_DEVICE_ID) << 16 | u32::from(abi::PCI_VENDOR_ID)
        );
        assert_eq!(read32(&c, 8), 0x0280_0000 | u32::from(abi::PCI_REVISION));
    }

    #[test]
    fn msix_capability_points_into_bar0() {
        let c = ConfigSpace::new();
        assert_eq!(read32(&c, 0x04) >> 16 & 0x10, 0x10, "capability list bit");
        assert_eq!(read32(&c, CAP_PTR as u64) & 0xff, MSIX_CAP as u32);
        let hdr = read32(&c, MSIX_CAP as u64);
        assert_eq!(hdr & 0xff, 0x11);
        assert_eq!((hdr >> 16) & 0x7ff, u32::from(abi::MSIX_VECTORS) - 1);
        let table = read32(&c, MSIX_CAP as u64 + 4);
        let pba = read32(&c, MSIX_CAP as u64 + 8);
        assert_eq!(table & 7, 0, "table BIR is BAR0");
        assert_eq!(pba & 7, 0, "PBA BIR is BAR0");
        // Both structures fit in BAR0, after the registers.
        let table_end = table + 16 * u32::from(abi::MSIX_VECTORS);
        assert!(table_end <= pba & !7);
        assert!(((pba & !7) as usize) < abi::BAR0_SIZE);
    }

    #[test]
    fn bar_sizing_reports_bar0_size() {
        let mut c = ConfigSpace::new();
        c.write(BAR0 as u64, &u32::MAX.to_le_bytes());
        let v = read32(&c, BAR0 as u64);
        assert_eq!(!(v & !0xf) + 1, abi::BAR0_SIZE as u32);
    }

    #[test]
    fn read_only_fields_ignore_writes() {
        let mut c = ConfigSpace::new();
        c.write(0, &[0; 4]);
        assert_eq!(read32(&c, 0) & 0xffff, u32::from(abi::PCI_VENDOR_ID));
        c.write(COMMAND as u64, &[0xff, 0xff]);
        assert!(c.bus_master());
        assert_eq!(read32(&c, COMMAND as u64) & 0xffff, 0x0406);
    }

    #[test]
    fn msix_enable_and_function_mask() {
        let mut c = ConfigSpace::new();
        assert!(!c.msix_enabled());
        c.write(MSIX_CAP as u64 + 3, &[0x80]);
        assert!(c.msix_enabled());
        c.write(MSIX_CAP as u64 + 3, &[0xc0]);
        assert!(!c.msix_enabled());
        // The table size is read-only.
        c.write(MSIX_CAP as u64 + 2, &[0]);
        assert_eq!(
            read32(&c, MSIX_CAP as u64) >> 16 & 0x7ff,
            u32::from(abi::MSIX_VECTORS) - 1
        );
    }

    #[test]
    fn reads_past_the_end_are_all_ones() {
        let c = ConfigSpace::new();
        let mut b = [0u8; 4];
        c.read(CONFIG_SPACE_SIZE as u64 - 2, &mut b);
        assert_eq!(&b[2..], &[0xff, 0xff]);
    }
}
